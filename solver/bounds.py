"""Certified bounds on a solved game's values: every state's value lies in [lower, upper].

A small Bellman residual does not bound the error of a game that mixes slowly (on Ur's fort
rules with four pieces, values that move less than 1e-5 a sweep were 7e-5 off). ``certify``
turns solved values into proven bounds:

1. **A strategy** for the side to move: for each roll, among the actions within the tolerance of
   the best by the values, one that brings the game nearest its end. Ranking passes
   (``_stochastic.rank_pass``) number every (position, side to move) by when play can be made to
   leave the positions where it could last for ever; the strategy
   (``_stochastic.attractor_policy``) takes a near-best action towards a smaller rank where the
   roll offers one. (The greedy strategy, best by the bounds alone, can cycle on near-ties where
   it is ahead, and then nothing proves it ever cashes its lead.)
2. **A consistent pair.** Start from L = V - d and U = V + d and loosen them (L to what the
   strategy guarantees from L and U, U to the optimistic backup, where those are looser) until a
   sweep moves nothing; then tighten them while sweeps still move them. A consistent pair stays
   consistent when tightened.
3. **Why that bounds the value.** Let the side to move keep to the strategy. Whatever the
   opponent does, L at the current position is at most the expected L (or the result, once the
   game has ended) one move later, and so after any number of moves. Play either ends or
   settles for ever in an end component (a set the opponent and the dice can keep it in while
   the strategy is kept): there the game is worth 0 while L claims at most m, the largest L
   over such places. So the value is at least L - max(0, m), and by the same argument for the
   opponent at most U + max(0, m). The ranking passes run again with the strategy fixed: what
   they never remove holds every end component.
4. **Rounding.** Each backup is summed with its exact rounding errors (``_stochastic.bounds_sweep``)
   and rounded outward only when a step was inexact, so float32 storage never moves a bound
   across the value. The roll probabilities are the game's float32 ones (exact for dice in
   sixteenths, as Ur's).

What it cannot do is make bad values look good: the bound it reports is the largest distance
from the given values to the ends of their proven intervals.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from gamesolver.solver import _stochastic as kernels
from gamesolver.solver.progress import progress

_LOOSEN_SWEEPS = 300  # K = 4 on the 8-tile board needs about 150
_TIGHTEN_SWEEPS = 200
# After each full sweep, the states it moved (the hot set) are swept alone, up to _HOT_SWEEPS
# times and _HOT_BUDGET full sweeps' worth, until a sweep moves none of them: the slow part of
# the loosening lives on few states. A hot set of more than 1/_HOT_MOST of the states is skipped.
_HOT_SWEEPS = 2000
_HOT_BUDGET = 10.0
_HOT_MOST = 8


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

    def summary(self) -> dict[str, Any]:
        return {"bound": self.bound, "gap": self.gap, "endless_margin": self.endless_margin,
                "endless_nodes": self.trapped, "loosen_sweeps": self.loosen_sweeps,
                "tighten_sweeps": self.tighten_sweeps, "hot_states": self.hot_states,
                "trap_passes": self.trap_passes, "seconds": round(self.seconds, 3)}


def _hot(sweep: Callable[..., tuple[float, float]], L: np.ndarray, U: np.ndarray, mark: np.ndarray,
         still: float, **kw: Any) -> int:
    """Sweep the states the last full sweep moved (``mark``) alone until a sweep moves none of
    them by more than ``still``; returns the states swept. Each update is one the full sweep
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
        if sweep(L, U, subset=hot_set, **kw)[1] <= still:
            break
    return swept


def _outward(values: np.ndarray, d: float) -> tuple[np.ndarray, np.ndarray]:
    dt = values.dtype
    lower = np.maximum(np.nextafter((values - dt.type(d)).astype(dt), dt.type(-np.inf)), dt.type(-1))
    upper = np.minimum(np.nextafter((values + dt.type(d)).astype(dt), dt.type(np.inf)), dt.type(1))
    return np.ascontiguousarray(lower), np.ascontiguousarray(upper)


def _ranks(game: Any, values: np.ndarray, eps: float, threads: int, policy: np.ndarray | None,
           show_progress: bool | None, label: str, stored: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, int]:
    """The rank at which each node (state, side) leaves the set where play can last for ever
    (``_stochastic.rank_pass``), 0 for the nodes that never do; and the passes it took."""
    n = game.state_count
    RP = np.zeros(n, dtype=np.int32)
    RQ = np.zeros(n, dtype=np.int32)
    counter = np.zeros(1, dtype=np.int32)
    passes = 0
    with progress(2 * n, label, enabled=show_progress) as bar:
        while True:
            passes += 1
            removed = kernels.rank_pass(game, values, eps, RP, RQ, counter, threads=threads, policy=policy,
                                        backwards=passes % 2 == 0, **stored)
            bar.update(removed)
            if not removed:
                return RP, RQ, passes


def certify(game: Any, values: np.ndarray, tolerance: float, threads: int = 1,
            show_progress: bool | None = False, log: Callable[[str], None] | None = None,
            tighten_sweeps: int = _TIGHTEN_SWEEPS, graph: Any = None,
            loosen_sweeps: int = _LOOSEN_SWEEPS) -> Certificate:
    """Proven bounds around ``values`` (float32 or float64, one per state of ``game``, a
    ``StochasticGame``). Tightening stops when the widest interval is below ``tolerance``, when
    a sweep moves no bound by more than a thousandth of it, or after ``tighten_sweeps``.
    ``graph``: a ``StoredGraph`` of the game, to sweep from memory instead of generating.
    ``loosen_sweeps``: how long to look for a consistent pair near the values before starting
    from -1 and +1 (sound, but loose)."""
    t0 = time.perf_counter()
    stored = ({"offsets": graph.offsets, "counts": graph.counts, "codes": graph.codes}
              if graph is not None and graph.stored else {})

    def sweep(L: np.ndarray, U: np.ndarray, **kw: Any) -> tuple[float, float]:
        if stored:
            return kernels.graph_bounds_sweep(game, stored["offsets"], stored["counts"], stored["codes"], L, U,
                                              threads=threads, **kw)
        return kernels.bounds_sweep(game, L, U, threads=threads, **kw)

    n = game.state_count
    if values.shape != (n,):
        raise ValueError(f"values must have one entry per state ({n})")
    # The strategy whose guarantee is proven: near-best actions by the values, and among them
    # the one that brings the game nearest its end, where a roll offers one.
    R = game.roll_count
    policy = np.empty((n, R), dtype=np.int32)
    ranks = _ranks(game, values, tolerance, threads, None, show_progress, "bounds: the strategy", stored)
    kernels.attractor_policy(game, values, tolerance, ranks[0], ranks[1], policy, threads=threads, **stored)
    del ranks
    L, U = _outward(values, tolerance / 2)
    mark = np.zeros(n, dtype=np.uint8)
    loose = hot = 0
    with progress(loosen_sweeps, "bounds: consistent pair", enabled=show_progress) as bar:
        while True:
            loose += 1
            mark[:] = 0
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
                break
            hot += _hot(sweep, L, U, mark, 0.0, loosen=True, policy=policy)
    if log:
        log(f"bounds: consistent after {loose} loosening sweeps and {hot / n:.1f} sweeps' worth over the "
            f"hot sets (widest interval {gap:.3g})")
    tight = 0
    with progress(tighten_sweeps, "bounds: tightening", enabled=show_progress) as bar:
        while gap > tolerance and tight < tighten_sweeps:
            tight += 1
            mark[:] = 0
            gap, moved = sweep(L, U, backwards=bool(tight % 2), policy=policy, mark=mark)
            bar.update(1)
            bar.note(f"bounds: widest interval {gap:.3g}")
            if moved < tolerance / 1000:
                break
            hot += _hot(sweep, L, U, mark, tolerance / 1000, policy=policy)
    RP, RQ, passes = _ranks(game, values, tolerance, threads, policy, show_progress,
                            "bounds: where play can last for ever", stored)
    ZP, ZQ = RP == 0, RQ == 0
    trapped = int(ZP.sum(dtype=np.int64) + ZQ.sum(dtype=np.int64))
    m = 0.0
    if ZP.any():
        m = max(m, float(L[ZP].max()))
    if ZQ.any():
        m = max(m, float(-U[ZQ].min()))
    lower = L.astype(np.float64) - m
    upper = U.astype(np.float64) + m
    v = values.astype(np.float64)
    bound = float(max((v - lower).max(), (upper - v).max()))
    cert = Certificate(lower, upper, bound, float((upper - lower).max()), m, trapped, loose, tight, passes,
                       time.perf_counter() - t0, hot)
    if log:
        log(f"bounds: every value within {bound:.3g} of the proven interval's ends ({tight} tightening sweeps, "
            f"{passes} passes over {trapped:,} positions where play can last for ever, margin {m:.3g})")
    return cert
