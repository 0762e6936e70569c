"""Certified bounds on a solved game's values: every state's value lies in [lower, upper].

A small Bellman residual does not bound the error of a game that mixes slowly (on Ur's fort
rules with four pieces, values that move less than 1e-5 a sweep were 7e-5 off). ``certify``
turns solved values into proven bounds:

1. **A strategy** for the side to move: the best action by the values, except where play must be
   made to move on. Ranking passes (``_engine.rank_pass``) number every (position, side to
   move) by when play can be made to leave the positions where it could last for ever, using
   actions within the tolerance of the best; the strategy (``_engine.attractor_policy``)
   makes sure each ranked node leads to a smaller rank on at least one roll: for free where a
   roll's best action does, else on the roll where a near-best leading action gives up least.
   (The greedy strategy, best by the values alone, can cycle on near-ties where it is ahead, and
   then nothing proves it ever cashes its lead. Leading on with every roll that can, as this
   did before, gave up up to the tolerance a move all through play.) Where the pair of step 2
   then never ends play at states where the strategy's side is ahead by 10 times the tolerance
   or more (endless play's 0 is far below their worth), those states are ranked again with 10
   times the slack and the pair goes on, in whichever round such rows appeared, with the
   strategy that now leads on there (``_WIDER``, ``_far``).
2. **A consistent pair**: L at most the strategy's backup of (L, U) and U at least the best
   backup, at every state. ``strategy_pair`` (the default) takes L as what the strategy
   guarantees against the opponent's best answer and U as what that answer gets: policy
   iteration on the opponent's side alone (one side fixed leaves a one-player problem, which
   converges in a few rounds), each fixed pair's equations solved by BiCGSTAB in float64, with
   a slack of 2^-30 a move on both sides so that the solves' rounding cannot break the
   inequalities. Where the opponent can keep play going for ever against the strategy, a set
   of rows the pair never leaves is worth 0. A few loosening sweeps (below) then settle what
   rounding left, with the bounds kept on a grid of 2^-40 where every backup is exact. The
   older way, still there (``method="loosening"``, and the fallback): start from L = V - d and
   U = V + d and loosen them until a sweep moves nothing, then tighten them while sweeps still
   move them; that runs at value iteration's pace, hundreds of sweeps or more.
3. **Why that bounds the value.** Let the side to move keep to the strategy. Whatever the
   opponent does, L at the current position is at most the expected L (or the result, once the
   game has ended) one move later, and so after any number of moves. Play either ends or
   settles for ever in an end component (a set the opponent and the dice can keep it in while
   the strategy is kept): there the game is worth 0 while L claims at most m, the largest L
   over such places. So the value is at least L - max(0, m), and by the same argument for the
   opponent at most U + max(0, m). What the ranking never removed holds every end component:
   in a set that play under the strategy never leaves, its node of smallest rank would lead
   out of it (the strategy's node on the roll chosen in step 1, the opponent's on a roll where
   every action leads to a smaller rank, which is how such a node was ranked). m is taken over
   fewer nodes still: the ranking goes on from its ranks with the strategy's own action in
   place of the near-best ones (a strategy node leaves when its chosen outcome on some roll
   does, an opponent node when every action on some roll does), and only what that never
   removes can lie in an end component, by the same smallest-rank argument. Where the strategy
   was widened (step 1), a kept node can lead on anyway: on five pieces, pass 2's margin over
   every kept node was 0.361, from one node worth +0.36 whose strategy leaves the cycle it was
   kept for.
4. **Rounding.** Each backup is summed with its exact rounding errors (``_engine.bounds_sweep``)
   and rounded outward only when a step was inexact, so float32 storage never moves a bound
   across the value. The roll probabilities are the game's float32 ones (exact for dice in
   sixteenths, as Ur's).

5. **Refining.** A strategy chosen by rough values gives some of their error away. Where the
   widest interval stays above the tolerance, ``certify`` tries again from the middles of the
   intervals (``refine`` passes at most) and keeps the intersection of what every pass proved.
   A pass whose pair is still wider than the tolerance (and narrower than half the last one's)
   is not proven at all: its middles only choose the next strategy, so it skips the loosening
   and tightening sweeps (about a fifth of a pass on four pieces).
6. **The same proof every time.** A table and a thread count give the same intervals run after
   run: each thread ranks its own block of states in order, loosening ends only where a whole
   sweep moves nothing (and that pair does not depend on the order of the updates), and the
   tightening sweeps read the bounds as each sweep found them (Jacobi) instead of whatever the
   other threads have written so far.

What it cannot do is make bad values look good: the bound it reports is the largest distance
from the given values to the ends of their proven intervals.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from gamesolver.solver.stochastic.engine import Log
from gamesolver.solver.stochastic import _engine as kernels
from gamesolver.solver.stochastic.krylov import bicgstab
from gamesolver.solver.errors import InputError
from gamesolver.solver.stochastic.outcomes import available_bytes, memory_bytes
from gamesolver.solver.progress import progress

_LOOSEN_SWEEPS = 300  # K = 4 on the 8-tile board needs about 150
# The strategy's pair (``strategy_pair``): the slack each move takes from L and adds to U, a power
# of two so that the rows pinned at it sum exactly; rounds of best answers before giving up.
_SLACK = 2.0 ** -30
# Its bounds are stored as multiples of 1 / _GRID: a value in [-1, 1] then has at most 41
# significant bits, its product by a roll's probability (Ur's are sixteenths) at most 45, and a
# backup's sum over the rolls stays exact in float64. Exact backups let a cycle that play never
# leaves (where consistency means equality) settle; rounded ones would creep outward for ever.
_GRID = 2.0 ** 40
_ROUNDS = 60
_KRYLOV_STEPS = 20_000
# ... and gives up when this many iterations (two products each) have not halved its residual: a
# solve stagnates where the pair's play almost never ends (on four pieces, from middles of a pair
# solved only to 1e-7, one did for minutes). A healthy one gains a decade every 100 or so.
_KRYLOV_STALL = 1000
# Vectors of the pair's length that ``bicgstab`` allocates for a solve (x, r, r0, p, v, s, t).
_KRYLOV_VECTORS = 7
# Rows where the opponent can keep play going for ever (but the pair's play still ends) take a
# smaller slack, slack * _SMALL: a full slack would add up over their long play. Larger is
# sturdier against the solves' rounding, which the loosening sweeps must otherwise settle: on
# four pieces 2^-2 (with the solves to slack / 16) needed 17 loosening sweeps where 2^-14 (with
# slack / 4) needed 287, and the intervals came out the same to 1e-9.
_SMALL = 2.0 ** -2
# Each BiCGSTAB solve runs to a residual of slack * _KRYLOV_TOL (max norm). Below the slack an
# ordinary row stays consistent whatever the residual; only the trapped rows' smaller slack can be
# overrun, and the loosening sweeps settle those. Measured on four pieces (a tolerance-1e-6 table,
# proven below 1e-5 in two passes, products by pair_apply, same intervals to 1e-9 at every
# setting): 1/16 took 1,583 products and 404 s, 1/4 1,044 and 314 s, 1/2 1,042 and 303 s, 1 774
# and 257 s, 2 710 and 368 s, 4 757 and 385 s (from 2 on ordinary rows are overrun too and
# loosening took 56 sweeps' worth over hot sets instead of 4). 1/2 keeps twice the distance from
# that edge.
_KRYLOV_TOL = 1 / 2
_TIGHTEN_SWEEPS = 200
# After each full sweep, the states it moved (the hot set) are swept alone, up to _HOT_SWEEPS
# times and _HOT_BUDGET full sweeps' worth, until a sweep moves none of them: the slow part of
# the loosening lives on few states. A hot set of more than 1/_HOT_MOST of the states is skipped.
_HOT_SWEEPS = 2000
_HOT_BUDGET = 10.0
_HOT_MOST = 8
_NO_BOUNDS = np.empty(0)
# Where the strategy's pair never leaves some rows and the strategy's side is ahead there by this
# many times the tolerance or more (the endless check's slack; ``_far``), the ranking goes on at
# those states with actions within this many times the tolerance. On five pieces the side ahead
# in the entry-recapture cycles leaves them only by an action 2e-5 below its best by the table:
# within the tolerance the strategy stayed, play there could last for ever against it, and those
# rows were pinned at 0 (intervals [-0.067, 0]). Widening everywhere instead cost the test board
# (four pieces on eight tiles) its proof: 3.7e-7 wide became 7.4e-5, leading on where nothing was
# pinned.
_WIDER = 10.0


@dataclass
class Certificate:
    """Proven bounds ``lower <= value <= upper`` for every state, and how they were found."""

    lower: np.ndarray = field(repr=False)
    upper: np.ndarray = field(repr=False)
    bound: float  # the largest distance from the given values to either end of their interval
    gap: float  # the widest interval
    endless_margin: float  # what endless play could still be worth to a side (step 3's m)
    trapped: int  # nodes (state, side) where play can last for ever
    loosen_sweeps: int
    tighten_sweeps: int
    trap_passes: int
    seconds: float
    hot_states: int = 0  # states swept by the hot-set sweeps between the full ones, all together
    # how the consistent pair was found: "strategy", "loosening", or "trivial" (-1 and +1, where
    # loosening found none in its sweeps)
    method: str = "loosening"
    rounds: int = 0  # "strategy": rounds of the opponent's best answer
    matvecs: int = 0  # "strategy": products by the pair's matrix (each about a policy sweep of 2N rows)
    passes: int = 1  # strategies tried (``certify``'s ``refine``); the proven ones' intervals intersected
    why: str = ""  # why the strategy's pair or the loosening came to nothing, where one did
    proven: bool = True  # false: an intermediate pass's pair, left unproven (``certify``'s ``refine``)
    # states ranked with the wider slack (``_WIDER``), which the next pass widens from its start
    widened: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64), repr=False)
    # of the trapped nodes, those where play can stay for ever with the strategy kept (step 3):
    # the endless margin is taken over these
    staying: int = 0

    def centred(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """Float32 values at the middle of the intervals, the intervals rounded outward to
        float32, and the largest distance from such a value to its interval's ends: the table
        a solve writes when the intervals are narrower than its values' own error."""
        mid = ((self.lower + self.upper) / 2).astype(np.float32)
        lower = self.lower.astype(np.float32)
        lower = np.where(lower > self.lower, np.nextafter(lower, np.float32(-np.inf)), lower)
        upper = self.upper.astype(np.float32)
        upper = np.where(upper < self.upper, np.nextafter(upper, np.float32(np.inf)), upper)
        bound = _bound(mid.astype(np.float64), self.lower, self.upper)
        return mid, lower.astype(np.float32), upper.astype(np.float32), bound

    def summary(self) -> dict[str, Any]:
        return {"bound": self.bound, "gap": self.gap, "endless_margin": self.endless_margin,
                "endless_nodes": self.trapped, "staying_nodes": self.staying, "method": self.method,
                "rounds": self.rounds, "matvecs": self.matvecs, "loosen_sweeps": self.loosen_sweeps,
                "tighten_sweeps": self.tighten_sweeps, "hot_states": self.hot_states,
                "trap_passes": self.trap_passes, "passes": self.passes, "seconds": round(self.seconds, 3),
                **({"why": self.why} if self.why else {})}


@dataclass
class StrategyPair:
    """``strategy_pair``'s result: L, U (float64) and how they were found."""

    lower: np.ndarray = field(repr=False)
    upper: np.ndarray = field(repr=False)
    rounds: int
    matvecs: int
    settled: bool  # the opponent's answers stopped changing: the pair is consistent
    why: str = ""


def _targets(policy: np.ndarray, tau: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """For rows of X = [L; U], the row each roll's chosen outcome leads to (-1: the game ends)."""
    up = rows >= n
    s = np.where(up, rows - n, rows)
    codes = np.where(up[:, None], tau[s], policy[s]).astype(np.int64)
    same = codes >= 0
    t = np.where(same, codes, -codes - 1)
    row = np.where(same, np.where(up[:, None], n + t, t), np.where(up[:, None], t, n + t))
    return np.where(codes <= kernels.NOCODE, -1, row)


def _closed(policy: np.ndarray, tau: np.ndarray, trapped_rows: np.ndarray, n: int) -> np.ndarray:
    """The trapped rows from which play under (policy, tau) never ends: no chosen outcome chain
    leads out of them (outside the trapped set, play can always be made to end; see the module
    text). There the pair's equations say nothing, and endless play's 0 is the value."""
    if not trapped_rows.size:
        return trapped_rows
    to = _targets(policy, tau, trapped_rows, n)
    leaves = np.ones(2 * n, dtype=bool)
    leaves[trapped_rows] = False
    while True:
        new = ~leaves[trapped_rows] & np.any((to < 0) | leaves[np.maximum(to, 0)], axis=1)
        if not new.any():
            return trapped_rows[~leaves[trapped_rows]]
        leaves[trapped_rows[new]] = True


def strategy_pair(game: kernels.StochasticGame, values: np.ndarray, policy: np.ndarray, trapped: np.ndarray, threads: int = 1,
                  graph: dict[str, Any] | None = None, show_progress: bool | None = False,
                  rounds: int = _ROUNDS, slack: float = _SLACK,
                  log: Log | None = None,
                  start: tuple[np.ndarray, np.ndarray] | None = None,
                  lead_on: Callable[[np.ndarray], bool] | None = None) -> StrategyPair:
    """A pair near consistency from the strategy ``policy`` and the opponent's best answer to it.

    L is what the strategy guarantees and U what the opponent's best answer to it gets (in
    each state, for the side to move), found by policy iteration on the opponent's side alone:
    solve the linear equations of the fixed pair (BiCGSTAB, float64), let the opponent switch
    to any better answer, repeat until no answer improves. One side fixed makes it a one-player
    problem, where this converges in few rounds. Each move takes ``slack`` from L and adds it
    to U, and answers switch only when better by half of it, so neither the solves' rounding
    nor a near-tie leaves the pair inconsistent; the bounds move out by slack times the
    expected length of play.

    ``trapped`` (2N, L rows then U rows): the nodes where the opponent can keep play going for
    ever against the strategy. They take a smaller slack (``_SMALL``: a full one would add up
    over their long play), and answers there switch on a smaller gain; where the pair's play never ends the rows
    are 0, endless play's value. What rounding leaves inconsistent there, ``certify``'s
    loosening sweeps settle.

    ``start`` (L, U): where the first solve starts instead of the values (the opponent's first
    answers still come from the values): a pair proven for a nearby strategy, which has less of
    the slow error that play carries round its long cycles than the values have.

    ``lead_on``: given the states whose strategy rows play never leaves under the pair (before the
    first solve and after each round), it may change ``policy`` and ``trapped`` in place to a
    strategy that leads on there, and say so (true); the rounds go on with those. Such cycles can
    appear in any round, not only once the answers settle: on five pieces, pass 2's first round
    closed the entry-recapture cycle at B1 (the side ahead by 0.365 leaves it only by an action
    1.1e-5 below its best), and its second round spread the 0 pinned there until the pair was
    0.325 wide."""
    n = game.state_count
    stored = graph or {}
    X = np.concatenate([values, values]).astype(np.float64)

    def from_trapped() -> tuple[np.ndarray, np.ndarray]:
        # the trapped rows, and where tau answers in the U rows take the smaller tie
        return np.flatnonzero(trapped), np.ascontiguousarray(trapped[n:]).astype(np.uint8)

    trapped_rows, strict = from_trapped()
    tau = np.ascontiguousarray(policy.copy())
    small = slack * _SMALL
    tie, strict_tie = slack / 2, small / 2

    def pins() -> np.ndarray:
        p = trapped.astype(np.uint8) * 2
        p[_closed(policy, tau, trapped_rows, n)] = 1
        return p

    def led(p: np.ndarray) -> tuple[np.ndarray, bool]:
        """The pins ``p``, found again where ``lead_on`` changed the strategy at its pinned rows;
        and whether it did."""
        nonlocal trapped_rows, strict
        if lead_on is None or not lead_on(np.flatnonzero(p[:n] == 1)):
            return p, False
        trapped_rows, strict = from_trapped()
        return pins(), True

    def respond(x: np.ndarray, closed_before: np.ndarray) -> int:
        """Better answers, except where they would close a new cycle that play never leaves: its
        rows would drop to 0 whatever x promised, so the step need not improve anything (policy
        iteration improves only among answers under which play goes on ending)."""
        before = tau.copy()
        kernels.best_response(game, x, tau, tie=tie, threads=threads, strict=strict, strict_tie=strict_tie,
                              **stored)
        while True:
            now = pins() == 1
            new = np.flatnonzero(now[n:] & ~closed_before[n:])  # tau acts in the U rows
            undo = new[np.any(tau[new] != before[new], axis=1)]
            if not undo.size:
                break
            tau[undo] = before[undo]
        return int(np.count_nonzero(tau != before))

    # The first answers too: from near-exact values, best answers at the level of rounding can
    # close cycles that the strategy against itself does not (on four pieces, from a certified
    # table's middles, that started the pair 0.19 off).
    respond(X, pins() == 1)
    if start is not None:
        X = np.concatenate([start[0], start[1]]).astype(np.float64)
    pinned, _ = led(pins())
    X[pinned == 1] = 0.0
    c = np.empty(2 * n)
    zero = np.zeros(2 * n)
    matvecs = 0
    matrix: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    by_matrix: bool | None = None  # the way the last round's products went, logged when it changes

    def matvec(x: np.ndarray, out: np.ndarray) -> None:
        if matrix is not None:
            kernels.sparse_apply(*matrix, x, out, minus=True, threads=threads)
        else:
            kernels.pair_apply(game, policy, tau, pinned, x, out, minus=True, threads=threads)

    with progress(rounds, "bounds: best answers to the strategy", enabled=show_progress) as bar:
        for r in range(1, rounds + 1):
            kernels.pair_apply(game, policy, tau, pinned, zero, c, constants=True, slack=slack, small=small,
                               threads=threads)
            matrix = None  # the last round's, freed before this one's is built
            matrix, why = pair_matrix(game, policy, tau, pinned, threads)
            if log and (matrix is not None) != by_matrix:
                log(f"bounds: {why}")
            by_matrix = matrix is not None
            res = bicgstab(matvec, c, X, tol=slack * _KRYLOV_TOL, maxiter=_KRYLOV_STEPS, threads=threads,
                           stall=_KRYLOV_STALL)
            matvecs += res.matvecs
            if not res.converged:
                return StrategyPair(X[:n], X[n:], r, matvecs, False,
                                    f"the pair's equations did not solve (residual {res.residual:.3g})")
            X = res.x
            changed = respond(X, pinned == 1)
            before = pinned
            pinned, new = led(pins())
            changed += new  # a new strategy: not settled
            moved = int(np.count_nonzero(pinned != before))
            bar.update(1)
            bar.note(f"bounds: {changed:,} answers and {moved:,} endless rows changed")
            if log:
                width = X[n:] - X[:n]
                log(f"bounds: round {r}: {res.matvecs:,} products, {changed:,} answers and {moved:,} endless rows "
                    f"changed, U - L from {float(width.min()):.3g} to {float(width.max()):.3g}")
            if not changed and not moved:
                return StrategyPair(X[:n].copy(), X[n:].copy(), r, matvecs, True)
    return StrategyPair(X[:n].copy(), X[n:].copy(), rounds, matvecs, False,
                        f"the opponent's answers still changed after {rounds} rounds")


def certify_bytes(n: int, rolls: int) -> int:
    """The memory ``certify`` needs at its peak for ``n`` states of ``rolls`` rolls, without the
    pair's optional matrix: per state the strategy, the opponent's answers and their copy (4 bytes
    a roll each), BiCGSTAB's seven vectors and the pair, its constants and the start (16 bytes
    each, one entry per side), the intersection so far and the middles (24), ranks and marks (12)."""
    return n * (3 * 4 * rolls + (_KRYLOV_VECTORS + 3) * 16 + 24 + 12)


def matrix_bytes_estimate(n: int) -> int:
    """About what the pair's optional matrix takes (``pair_matrix`` counts it exactly before it
    builds it): two rows a state (one a side), an int64 row start and about three entries of
    12 bytes a row, as measured on the fort rules with five pieces (2.99 entries a row, 5.05 GiB
    for 61.9M states)."""
    return 2 * n * (8 + 3 * 12)


def check_certify_fits(n: int, rolls: int) -> int:
    """``certify_bytes``, or an InputError (before anything is solved or written) where the proof
    cannot fit in this machine's memory: better refused at once than stopped by the system's
    out-of-memory killer after a long solve."""
    need, memory = certify_bytes(n, rolls), memory_bytes()
    if memory and need > memory:
        raise InputError(f"the proof of {n:,} states needs about {need / 2**30:.1f} GiB, more than this "
                         f"machine's {memory / 2**30:.1f} GiB; solve with --no-proof here, and prove the table on a "
                         "machine with more memory (solver ur check --bounds --record)")
    return need


def _matrix_fits(nbytes: int, vectors: int, available: int) -> bool:
    """Whether the pair's matrix (``nbytes``, counted exactly) and BiCGSTAB's ``vectors`` bytes
    still to come fit in nine tenths of the memory ``available`` now (the page cache of a mapped
    stored graph counts as available: sweeps read it back from the file). Otherwise each product
    reads the strategies' codes instead, half as fast; on five pieces with a 24 GiB machine the
    matrix takes about 5 GiB and fits, where the old test (its worst case, six entries a row,
    in an eighth of the memory) sent every product to the codes."""
    return nbytes + vectors <= 0.9 * available


def pair_matrix(game: kernels.StochasticGame, policy: np.ndarray, tau: np.ndarray, pinned: np.ndarray, threads: int,
                ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray] | None, str]:
    """``kernels.pair_apply``'s matrix without its constants, as (indptr, indices, data) in
    compressed rows: the outcomes of a row that name the same entry are one coefficient (a state's
    six rolls name about three distinct successors), so a product reads half as much and took
    half the time on four pieces (``kernels.sparse_apply``: 0.084 s against 0.177 s, two threads).
    Its entries are counted first; where they and BiCGSTAB's vectors would not fit in the memory
    available (``_matrix_fits``), or its columns in int32, it is not built: None, and the
    products read the codes. The string says which, for the log."""
    n2 = pinned.shape[0]
    if n2 >= 2**31:
        return None, "products read the strategies' codes (the pair's matrix numbers columns in int32)"
    indptr = np.zeros(n2 + 1, dtype=np.int64)
    kernels.pair_matrix(game, policy, tau, pinned, indptr, threads=threads)
    np.cumsum(indptr, out=indptr)
    entries = int(indptr[-1])
    nbytes = indptr.nbytes + entries * (4 + 8)
    size = f"{entries / max(1, n2):.2f} entries a row, {nbytes / 2**30:.2f} GiB"
    available = available_bytes()
    if not _matrix_fits(nbytes, _KRYLOV_VECTORS * n2 * 8, available):
        return None, (f"products read the strategies' codes (the pair's matrix, {size}, and BiCGSTAB's vectors "
                      f"would not fit in the {available / 2**30:.1f} GiB available)")
    indices = np.empty(entries, dtype=np.int32)
    data = np.empty(entries)
    kernels.pair_matrix(game, policy, tau, pinned, indptr, indices, data, threads=threads)
    return (indptr, indices, data), f"products by the pair's matrix in memory ({size})"


def _bound(values: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> float:
    """The largest distance from ``values`` to either end of their intervals."""
    return float(max((values - lower).max(), (upper - values).max()))


def _hot(sweep: Callable[..., tuple[float, float]], L: np.ndarray, U: np.ndarray, mark: np.ndarray,
         still: float, **kw: Any) -> int:
    """Sweep the marked states (``mark``: those the last full sweep moved, or, loosening, every
    one moved so far) alone until a sweep moves none of them by more than ``still``; returns
    the states swept. Each update is one the full sweep
    would make, so loosening still ends on a consistent pair (a full sweep moving nothing) and
    tightening keeps one consistent."""
    n = mark.shape[0]
    count = int(np.count_nonzero(mark))
    if not count or count * _HOT_MOST > n:
        return 0
    hot_set = np.flatnonzero(mark)
    swept = 0
    for i in range(min(_HOT_SWEEPS, int(_HOT_BUDGET * n / count))):
        swept += count
        moved = sweep(L, U, subset=hot_set, **kw)[1]
        if "L_from" in kw:  # Jacobi sweeps: what the next one reads
            kw["L_from"][hot_set] = L[hot_set]
            kw["U_from"][hot_set] = U[hot_set]
        if moved <= still:
            break
    return swept


def _outward(values: np.ndarray, d: float) -> tuple[np.ndarray, np.ndarray]:
    dt = values.dtype
    lower = np.maximum(np.nextafter((values - dt.type(d)).astype(dt), dt.type(-np.inf)), dt.type(-1))
    upper = np.minimum(np.nextafter((values + dt.type(d)).astype(dt), dt.type(np.inf)), dt.type(1))
    return np.ascontiguousarray(lower), np.ascontiguousarray(upper)


def _ranks(game: kernels.StochasticGame, values: np.ndarray, eps: float, threads: int, policy: np.ndarray | None,
           show_progress: bool | None, label: str, stored: dict[str, Any],
           ranks: tuple[np.ndarray, np.ndarray] | None = None,
           allow: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """The rank at which each node (state, side) leaves the set where play can last for ever
    (``_engine.rank_pass``), 0 for the nodes that never do; and the passes it took.
    ``ranks`` (RP, RQ): go on from these, in place, every new rank above the ones given.
    ``allow`` (a byte a state): only there may the certified side's nodes leave."""
    n = game.state_count
    if ranks is None:
        RP = np.zeros(n, dtype=np.int32)
        RQ = np.zeros(n, dtype=np.int32)
    else:
        RP, RQ = ranks
    counter = np.array([max(int(RP.max(initial=0)), int(RQ.max(initial=0)))], dtype=np.int32)
    passes = 0
    with progress(2 * n, label, enabled=show_progress) as bar:
        while True:
            passes += 1
            removed = kernels.rank_pass(game, values, eps, RP, RQ, counter, threads=threads, policy=policy,
                                        backwards=passes % 2 == 0, allow=allow, **stored)
            bar.update(removed)
            if not removed:
                return RP, RQ, passes


def _far(values: np.ndarray, closed: np.ndarray, tolerance: float) -> np.ndarray:
    """Of the states ``closed`` (where the pair's play never leaves the strategy's rows), those to
    rank with the wider slack: where the strategy's side is ahead by ``_WIDER`` times the
    tolerance or more, so that endless play's 0 pinned there is far below what it is worth.
    Where it is behind, 0 is more than it is worth; the opponent, ahead, leads on there (its
    answers are free), and widening the strategy there would only give the difference away: on
    five pieces, widening both sides of the entry-recapture cycle on B1 left those states 2.2e-5
    wide, twice the 1.1e-5 that the side ahead gives up by leading on."""
    return closed[values[closed] >= _WIDER * tolerance]


def _widen(game: kernels.StochasticGame, values: np.ndarray, tolerance: float, RP: np.ndarray, RQ: np.ndarray, states: np.ndarray,
           threads: int, show_progress: bool | None, stored: dict[str, Any]) -> tuple[int, int]:
    """Go on ranking, in place, with actions within ``_WIDER`` times the tolerance, the certified
    side's nodes leaving only at ``states``; returns the passes and how many more nodes left."""
    before = int(np.count_nonzero(RP == 0) + np.count_nonzero(RQ == 0))
    allow = np.zeros(game.state_count, dtype=np.uint8)
    allow[states] = 1
    _, _, passes = _ranks(game, values, _WIDER * tolerance, threads, None, show_progress,
                          "bounds: leading on where play was kept", stored, ranks=(RP, RQ), allow=allow)
    return passes, before - int(np.count_nonzero(RP == 0) + np.count_nonzero(RQ == 0))


def _endless_margin(game: kernels.StochasticGame, values: np.ndarray, policy: np.ndarray, RP: np.ndarray, RQ: np.ndarray,
                    L: np.ndarray, U: np.ndarray, threads: int, stored: dict[str, Any]) -> tuple[float, int, int]:
    """Step 3's m for the strategy ``policy`` and the consistent pair (L, U): the largest claim,
    L for the strategy's nodes and -U for the opponent's, over the nodes where play can stay for
    ever with the strategy kept (0 where there are none); with how many such nodes there are and
    the ranking passes it took to find them.

    They are found by ranking on, in place from the ranks ``RP`` and ``RQ``, with the strategy's
    outcome as its side's only action: what is never removed is the largest set where, on every
    roll, the strategy's outcome and some action of the opponent's stay inside it. Starting from
    the ranks given is sound because every node they removed leads on under the strategy
    (``attractor_policy``'s promise), so ranking from nothing would remove them too. (``values``
    are read only for their shape: with a strategy, the ranking needs none.)"""
    passes = 0
    ZP, ZQ = RP == 0, RQ == 0
    if ZP.any() or ZQ.any():
        _, _, passes = _ranks(game, values, 0.0, threads, policy, False, "", stored, ranks=(RP, RQ))
        ZP, ZQ = RP == 0, RQ == 0
    m = 0.0
    if ZP.any():
        m = max(m, float(L[ZP].max()))
    if ZQ.any():
        m = max(m, float(-U[ZQ].min()))
    return m, int(ZP.sum(dtype=np.int64) + ZQ.sum(dtype=np.int64)), passes


def certify(game: kernels.StochasticGame, values: np.ndarray, tolerance: float, threads: int = 1,
            show_progress: bool | None = False, log: Log | None = None,
            tighten_sweeps: int = _TIGHTEN_SWEEPS, graph: Any = None,
            loosen_sweeps: int = _LOOSEN_SWEEPS, method: str = "strategy",
            rounds: int = _ROUNDS, refine: int = 2, fits_checked: bool = False) -> Certificate:
    """Proven bounds around ``values`` (float32 or float64, one per state of ``game``, a
    ``kernels.StochasticGame``). ``method``: where the consistent pair comes from: ``strategy`` (the
    default: the strategy against its best answer, ``strategy_pair``, in at most ``rounds``
    rounds; if that does not settle, loosening as below) or ``loosening`` (from the values, by
    loosening sweeps). Tightening stops when the widest interval is below ``tolerance``, when
    a sweep moves no bound by more than a thousandth of it, or after ``tighten_sweeps``.
    ``graph``: a ``StoredGraph`` of the game, to sweep from memory instead of generating.
    ``loosen_sweeps``: how long loosening looks for a consistent pair before starting from -1
    and +1 (sound, but loose).

    ``refine``: while the strategy's widest interval is above ``tolerance``, up to this many
    more certificates from the middles of the last one's intervals (a strategy chosen by better
    values loses less), each intersected with the ones before (every one is proven, so their
    intersection is). It stops early when a pass does not halve the widest interval. A pass
    that is not the last possible one and whose pair is still wider than ``tolerance`` (and half
    the last one's width at most) is left unproven: it only chooses the next strategy. The
    last pass is always proven. The bound is still measured from the given ``values``.

    ``fits_checked``: the caller has checked already that the proof fits this machine's memory
    (``solve.solve_table`` does, once, before the solve); otherwise it is checked here."""
    if method not in ("strategy", "loosening"):
        raise ValueError(f"method must be 'strategy' or 'loosening'; got {method!r}")
    if refine < 0:
        raise ValueError(f"refine must be at least 0; got {refine}")
    if not fits_checked:
        check_certify_fits(game.state_count, game.roll_count)
    kw = dict(threads=threads, show_progress=show_progress, log=log, tighten_sweeps=tighten_sweeps, graph=graph,
              loosen_sweeps=loosen_sweeps, method=method, rounds=rounds)
    proven: Certificate | None = None  # the intersection of the passes proven so far
    runs: list[Certificate] = []  # every pass's figures, without its intervals (five pieces: 1 GiB a pass)
    given, start, before = values, None, np.inf
    widen = np.empty(0, dtype=np.int64)
    for p in range(refine + 1):

        def skip(width: float, last: float = before) -> bool:
            # An intermediate pass whose pair is still wider than the tolerance, and has halved the
            # one before, only serves to choose the next pass's strategy: its pair is not proven.
            return width > tolerance and width <= last / 2

        cert = _certify_once(game, given, tolerance, start=start, skip=skip if p < refine else None, widen=widen,
                             **kw)
        widen = cert.widened
        runs.append(dataclasses.replace(cert, lower=_NO_BOUNDS, upper=_NO_BOUNDS))
        if cert.proven:
            if proven is not None:
                lower = np.maximum(proven.lower, cert.lower)
                upper = np.minimum(proven.upper, cert.upper)
                cert = dataclasses.replace(cert, lower=lower, upper=upper, gap=float((upper - lower).max()),
                                           endless_margin=max(proven.endless_margin, cert.endless_margin))
            proven = cert
        elif log:
            log(f"bounds: pass {p + 1}: the pair is {cert.gap:.3g} wide at most, above {tolerance:g}; "
                f"not proven, its middles choose the next strategy")
        if cert.proven and log and p and proven is not None:
            log(f"bounds: pass {p + 1}: widest interval {proven.gap:.3g}, every value within "
                f"{_bound(values, proven.lower, proven.upper):.3g}")
        if (cert.proven and (cert.method != "strategy" or cert.gap <= tolerance or cert.gap > before / 2)) \
                or p == refine:
            break
        if log and cert.proven:
            log(f"bounds: widest interval {cert.gap:.3g} above {tolerance:g}; certifying again from the middles")
        before = cert.gap
        given = ((cert.lower + cert.upper) / 2).astype(values.dtype)
        start = (cert.lower, cert.upper)
    assert proven is not None  # the last pass is always proven
    return dataclasses.replace(
        proven, bound=_bound(values, proven.lower, proven.upper),
        loosen_sweeps=sum(c.loosen_sweeps for c in runs), tighten_sweeps=sum(c.tighten_sweeps for c in runs),
        trap_passes=sum(c.trap_passes for c in runs), seconds=sum(c.seconds for c in runs),
        hot_states=sum(c.hot_states for c in runs), rounds=sum(c.rounds for c in runs),
        matvecs=sum(c.matvecs for c in runs), passes=len(runs), why="; ".join(c.why for c in runs if c.why))


def _certify_once(game: kernels.StochasticGame, values: np.ndarray, tolerance: float, threads: int, show_progress: bool | None,
                  log: Log | None, tighten_sweeps: int, graph: Any, loosen_sweeps: int,
                  method: str, rounds: int,
                  start: tuple[np.ndarray, np.ndarray] | None = None,
                  skip: Callable[[float], bool] | None = None,
                  widen: np.ndarray | None = None) -> Certificate:
    """One certificate around ``values`` (``certify`` without ``refine``); ``start``: the pair
    of the pass before, where the strategy's pair starts its first solve. ``skip`` (None: this
    pass must be proven): given the widest interval of the strategy's pair, whether to return
    that pair unproven (``proven`` false) instead of settling and proving it. ``widen``: states
    the pass before ranked with the wider slack, ranked so from the start (its pair need not
    close play there first to find them again)."""
    t0 = time.perf_counter()
    stored = ({"offsets": graph.offsets, "counts": graph.counts, "codes": graph.codes}
              if graph is not None and graph.stored else {})

    grid = 0.0  # float64 bounds from the strategy's pair: kept on a grid where every backup is exact

    def sweep(L: np.ndarray, U: np.ndarray, **kw: Any) -> tuple[float, float]:
        if stored:
            return kernels.graph_bounds_sweep(game, stored["offsets"], stored["counts"], stored["codes"], L, U,
                                              threads=threads, grid=grid, **kw)
        return kernels.bounds_sweep(game, L, U, threads=threads, grid=grid, **kw)

    n = game.state_count
    if values.shape != (n,):
        raise ValueError(f"values must have one entry per state ({n})")
    # The strategy whose guarantee is proven: the best actions by the values, except that each
    # node where play can be made to move on does so on some roll (``attractor_policy``).
    R = game.roll_count
    policy = np.empty((n, R), dtype=np.int32)
    RP, RQ, passes = _ranks(game, values, tolerance, threads, None, show_progress, "bounds: the strategy", stored)
    slack = tolerance
    widened = np.empty(0, dtype=np.int64) if widen is None or method != "strategy" else widen
    if widened.size:
        more, led = _widen(game, values, tolerance, RP, RQ, widened, threads, show_progress, stored)
        passes += more
        if led:
            slack = _WIDER * tolerance
    kernels.attractor_policy(game, values, slack, RP, RQ, policy, threads=threads, **stored)
    # Where play can last for ever against the strategy: the nodes the ranking never removed (step
    # 3 of the module text). A second ranking with the strategy fixed removes the same nodes: it
    # removes every ranked node in rank order, and none other, as a node the first left alone has
    # no near-best action (the strategy's is the best) into the ranked ones. (Once the slack is
    # widened at some states, below, it may remove more: the set kept is then larger than it need
    # be, which the proof allows; it must only hold every end component. The endless margin ranks
    # on with the strategy fixed, ``_endless_margin``, and counts only what that keeps.)
    ZP, ZQ = RP == 0, RQ == 0
    trapped = int(ZP.sum(dtype=np.int64) + ZQ.sum(dtype=np.int64))
    if log:
        log(f"bounds: the strategy chosen; play can last for ever against it from {trapped:,} positions "
            f"({passes} ranking passes)")
    pair = None
    why: list[str] = []
    if method == "strategy":
        trapped_rows = np.concatenate([ZP, ZQ])
        every = False  # the fallback's strategy below, which leads on with every roll that can

        def lead_on(closed: np.ndarray) -> bool:
            # Where the pair's play never ends yet the values are far from 0 (the side ahead in a
            # cycle that, by the values, leaves it only by an action a little below its best), the
            # rows are pinned at endless play's 0: rank those states' nodes with a wider slack, and
            # the pair goes on with the strategy that now leads them on.
            nonlocal widened, passes, ZP, ZQ, slack, trapped
            far = np.setdiff1d(_far(values, closed, tolerance), widened)
            if not far.size:
                return False
            widened = np.union1d(widened, far)
            more, led = _widen(game, values, tolerance, RP, RQ, far, threads, show_progress, stored)
            passes += more
            if not led:
                return False
            ZP, ZQ = RP == 0, RQ == 0
            slack = _WIDER * tolerance
            kernels.attractor_policy(game, values, slack, RP, RQ, policy, threads=threads, every=every, **stored)
            trapped -= led
            trapped_rows[:n], trapped_rows[n:] = ZP, ZQ
            if log:
                log(f"bounds: {far.size:,} states where the pair's play never ends are worth "
                    f"{_WIDER * tolerance:g} or more by the values; with a slack of {slack:g} there, "
                    f"{led:,} more positions lead on ({trapped:,} left)")
            return True

        pair = strategy_pair(game, values, policy, trapped_rows, threads, stored, show_progress,
                             rounds, log=log, start=start, lead_on=lead_on)
        if not pair.settled:
            # The strategy leads on with one roll at a node; where that leaves play that almost never
            # ends, the pair's equations may not solve. Leading on with every roll that can costs
            # more, but play ends sooner: try once more with that strategy.
            if log:
                log(f"bounds: no pair ({pair.why}); again with a strategy that leads on with every roll that can")
            spent = pair.rounds, pair.matvecs
            every = True
            kernels.attractor_policy(game, values, slack, RP, RQ, policy, threads=threads, every=every, **stored)
            pair = strategy_pair(game, values, policy, trapped_rows, threads, stored, show_progress,
                                 rounds, log=log, start=start, lead_on=lead_on)
            pair = dataclasses.replace(pair, rounds=pair.rounds + spent[0], matvecs=pair.matvecs + spent[1])
        if log:
            log(f"bounds: the strategy against its best answer, {pair.rounds} rounds, {pair.matvecs:,} products"
                + ("" if pair.settled else f"; no pair ({pair.why}), loosening from the values instead"))
        if not pair.settled:
            why.append(f"the strategy's pair: {pair.why}")
        elif skip is not None and skip(width := float((pair.upper - pair.lower).max())):
            return Certificate(pair.lower, pair.upper, np.nan, width, 0.0, trapped, 0, 0, passes,
                               time.perf_counter() - t0, 0, "strategy", pair.rounds, pair.matvecs, proven=False,
                               widened=widened)
    if pair is not None and pair.settled:
        grid = _GRID
        L = np.maximum(np.floor(pair.lower * grid) / grid, -1.0)
        U = np.minimum(np.ceil(pair.upper * grid) / grid, 1.0)
    else:
        L, U = _outward(values, tolerance / 2)
    mark = np.zeros(n, dtype=np.uint8)
    loose = hot = 0
    trivial = False
    # The hot set of loosening is every state moved so far, not just by the last full sweep: what
    # is left to settle lives on a few loops that play nearly never leaves (on four pieces, U rows
    # where an answer that would close a cycle was refused), and a loop must be swept whole for a
    # rise to go round it. From a pair certified once before, that took 6 full sweeps where the
    # last sweep's hot set alone took hundreds, each one a small step round the loops.
    with progress(loosen_sweeps, "bounds: consistent pair", enabled=show_progress) as bar:
        while True:
            loose += 1
            gap, moved = sweep(L, U, loosen=True, policy=policy, mark=mark)
            bar.update(1)
            bar.note(f"bounds: consistent pair, largest move {moved:.2g}")
            if moved == 0:
                break
            if loose >= loosen_sweeps:
                # Where play never ends, an error can spread for ever without dying out; -1 and +1
                # are always a consistent pair, and tightening starts from them instead.
                if log:
                    log(f"bounds: no consistent pair near the values after {loose} sweeps (largest move "
                        f"{moved:.3g}); starting from -1 and +1")
                L[:] = -1
                U[:] = 1
                gap = 2.0
                trivial = True
                why.append(f"no consistent pair after {loose} loosening sweeps (largest move {moved:.3g})")
                break
            hot += _hot(sweep, L, U, mark, 0.0, loosen=True, policy=policy)
    if log:
        log(f"bounds: consistent after {loose} loosening sweeps and {hot / n:.1f} sweeps' worth over the "
            f"hot sets (widest interval {gap:.3g})")
    # Tightening sweeps are Jacobi sweeps: each reads the bounds as they were when it started
    # (L0, U0). In place on several threads, a sweep read whatever the other threads had
    # written by then, so the intervals, and the next pass's strategy chosen from them, changed
    # a little from run to run. Loosening needs no copy: it ends only where a whole sweep moves
    # nothing, and that pair is the same in any order (the backups are monotone in (L, -U), so
    # it is the largest consistent pair below the start).
    tight = 0
    L0, U0 = L.copy(), U.copy()
    with progress(tighten_sweeps, "bounds: tightening", enabled=show_progress) as bar:
        while gap > tolerance and tight < tighten_sweeps:
            tight += 1
            mark[:] = 0
            gap, moved = sweep(L, U, policy=policy, mark=mark, L_from=L0, U_from=U0)
            np.copyto(L0, L)
            np.copyto(U0, U)
            bar.update(1)
            bar.note(f"bounds: widest interval {gap:.3g}")
            if moved < tolerance / 1000:
                break
            hot += _hot(sweep, L, U, mark, tolerance / 1000, policy=policy, L_from=L0, U_from=U0)
    m, stay, more = _endless_margin(game, values, policy, RP, RQ, L, U, threads, stored)
    passes += more
    lower = L.astype(np.float64) - m
    upper = U.astype(np.float64) + m
    bound = _bound(values, lower, upper)
    settled = pair is not None and pair.settled
    cert = Certificate(lower, upper, bound, float((upper - lower).max()), m, trapped, loose, tight, passes,
                       time.perf_counter() - t0, hot, "trivial" if trivial else "strategy" if settled else "loosening",
                       pair.rounds if pair else 0, pair.matvecs if pair else 0, why="; ".join(why), widened=widened,
                       staying=stay)
    if log:
        log(f"bounds: every value within {bound:.3g} of the proven interval's ends ({tight} tightening sweeps, "
            f"{passes} passes over {trapped:,} positions where play can last for ever, {stay:,} of them where "
            f"it can stay for ever with the strategy kept, margin {m:.3g})")
    return cert
