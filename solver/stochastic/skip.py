"""Full sweeps that generate only what can change: the walk's action elimination.

A full sweep generates every action of every state to find each roll's best one, yet late in a
stage the values move so little that for most states the best action cannot have changed. The
classic test of value iteration (MacQueen's; Puterman, "Markov Decision Processes", section 6.7),
here for both players: a full backup records, a byte a state, a lower bound on its smallest lead
(each roll's best outcome over the best other one). If every value has moved by at most D since
then, each outcome's value moved by at most D, so a lead above 2 D (with room for float32
rounding) keeps the same action best on every roll, and the recorded policy row gives the full
backup's value to the bit. Such a state is backed up from its row, at a policy sweep's cost.

The bound D. Let W_j be the values when the walk's full sweep j starts and F_j(x) the value
full sweep j wrote at x; during that sweep a state reads each successor either before its
update (W_j) or after it (F_j). So a state backed up fully in sweep j and looked at again in
sweep k read values within

    D = |F_j - W_j|max + sum_{i=j}^{k-1} |W_{i+1} - W_i|max + |g_k - g_j| + (sweep k's changes so far)

of those it reads now (the third term where the walk's discount g changed in between: an
outcome's value is g V, and |V| <= 1). The first two are measured here, the second from a copy
of the values kept at each full sweep's start (the net movement of a round: a hot set's 800
sweeps move a state by what they move it, not by the sum of 800 largest changes); they are
``bounds[stamp]``. The last is the largest change of the running sweep up to the moment, which
the kernel reads from every thread after reading the row's values (``_engine.sg_moved``). Every
decision is proven, and one thread gives the same values as a walk that never skips, bit for
bit (``tests/test_walk_skip.py``).

The stamp of a state's last full backup is a byte (the round, modulo 255): a state is generated
again at least every ``AGE_MAX`` rounds so that no stamp is ever read as a later round.
Memory: two bytes a state and a copy of the values (seven pieces: 1.19 + 2.38 GiB); where the walk
maps its policy from a file, the copy is mapped from a file beside it too (``path``), read and
written once a round, so that the system can page it out for the policy's sake.

A stopped walk takes the skip up again (``record``, ``restore``): where the walk maps its policy
from a file, each round's checkpoint keeps the round's record (its own movement measured then,
and the last AGE_MAX + 1 rounds' changes, movements and discounts) with the lead and stamp bytes
beside it, and a stop keeps that policy file. A run resumed from it goes on as the stopped run
would have: its first full sweep generates only what can have changed instead of every state
(seven pieces, late in a stage: about 5 of the 6.5 minutes of that sweep).

``BlockSkip`` bounds each state by the movement of the blocks its successors can lie in (the
game names the blocks) instead of one D for the game, carrying each state's lead from round to
round; the walk uses it where ``walk.WALK_SKIP_BLOCKS`` asks (docs/design/walk.md says what it
measured).
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from gamesolver.solver.progress import progress
from gamesolver.solver.tables.atomic import replace_synced
from gamesolver.solver.stochastic import _engine as kernels

LEAD_TOP = kernels.LEAD_TOP
STAMP_NEVER = kernels.STAMP_NEVER
# the bound is D times this: 2 (the best action's value can fall by D while another's rises by D);
# tests set a smaller one to show that an unsound bound changes the values
SLACK = 2.0
ONE_BOUND, BY_BLOCKS = "one", "blocks"  # a checkpoint's record says which skip wrote it ("kind")
AGE_MAX = 200  # a state is generated again at least every this many rounds (stamps are a byte)
_CHUNK = 1 << 22
BYTES_PER_STATE = 2  # lead and stamp, besides the copy of the values


class _Copied:
    """What both skips keep: the copy of the values at the last full sweep's start (mapped from
    ``path`` where one is given), the states and codes the full sweeps generated, and a row a
    full sweep for the log."""

    def __init__(self, n: int, dtype: np.dtype, path: Path | None = None) -> None:
        self.path = path
        self.copy = (np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=(n,)) if path is not None
                     else np.empty(n, dtype=dtype))
        self.work = np.zeros(2, dtype=np.int64)  # states generated, codes written
        self.log: list[dict[str, float]] = []  # a row a full sweep: round, share generated, change
        self.round = -1  # the full sweep now running (or last run)

    def logged(self, values: np.ndarray, change: float, generated: int) -> None:
        """The log's row for the full sweep that just ended."""
        self.log.append({"round": self.round, "generated": generated / values.shape[0], "change": change})

    def close(self) -> None:
        """Drop the copy (and its file, where it has one)."""
        self.copy = np.empty(0, dtype=self.copy.dtype)
        if self.path is not None:
            self.path.unlink(missing_ok=True)


class Skip(_Copied):
    """The lead and stamp bytes of every state, the copy of the values at the last full sweep's
    start, and each round's movement; hands a full sweep its ``bounds`` (``kwargs``)."""

    def __init__(self, n: int, dtype: np.dtype, path: Path | None = None) -> None:
        super().__init__(n, dtype, path)
        self.lead = np.zeros(n, dtype=np.uint8)
        self.stamp = np.full(n, STAMP_NEVER, dtype=np.uint8)
        self.bounds = np.full(256, np.inf)
        self.full: dict[int, float] = {}  # full sweep j's largest change
        self.moved: dict[int, float] = {}  # round j's largest net movement, W_{j+1} - W_j
        self.discount: dict[int, float] = {}  # the discount of full sweep j

    def begin(self, values: np.ndarray, discount: float) -> None:
        """A full sweep with this discount starts: measure the last round's movement, copy the
        values, and set each stamp's bound. (Where ``record`` or ``restore`` already measured that
        movement and took the copy, the values have not changed since.)"""
        if self.round >= 0 and self.round not in self.moved:
            self.moved[self.round] = _moved_and_copy(self.copy, values)
        elif self.round < 0:
            self.copy[:] = values
        self.round += 1
        k = self.round
        self.discount[k] = discount
        self.bounds[:] = np.inf
        now = k % STAMP_NEVER
        moved_since = 0.0  # the rounds' movements from round j to k - 1
        for age in range(1, min(AGE_MAX, k) + 1):
            j = k - age
            if j not in self.moved or j not in self.full:
                break
            moved_since += self.moved[j]
            self.bounds[(now - age) % STAMP_NEVER] = self.full[j] + moved_since + abs(discount - self.discount[j])

    def forget(self) -> None:
        """No state's lead is read again until it is recorded anew: a full sweep that records
        none (a plain one, where the values still move too much for a skip to pay) leaves the
        policy rows and the leads apart, so the next full sweep generates every state."""
        self.stamp[:] = STAMP_NEVER

    def forget_states(self, ranks: np.ndarray) -> None:
        """These states' leads are not read again until recorded anew: something other than a
        full sweep (the walk's greedy sweeps of a hot set) wrote their policy rows, so a lead
        recorded for the old row no longer says which action the row holds."""
        self.stamp[ranks] = STAMP_NEVER

    def kwargs(self) -> dict:
        return {"lead": self.lead, "stamp": self.stamp, "bounds": self.bounds, "slack": SLACK,
                "now": self.round % STAMP_NEVER, "work": self.work}

    def end(self, values: np.ndarray, change: float, generated: int, damped: bool = False) -> None:
        """The sweep ended with largest change ``change`` (a damped sweep's own, before averaging,
        so it covers what a state read), having generated ``generated`` states."""
        self.full[self.round] = change
        self.logged(values, change, generated)

    def record(self, values: np.ndarray) -> dict[str, Any] | None:
        """What a checkpoint keeps of the skip at a round's end, so that a resumed walk skips from
        its first full sweep on (``restore``; the lead and stamp bytes go beside it): the round,
        and each of the last AGE_MAX + 1 rounds' largest change, movement and discount. The
        round's own movement (``values`` less the copy taken at its full sweep's start) is measured
        here and the copy taken, as the next ``begin`` would: ``values`` must not change before
        it. None before the first full sweep."""
        k = self.round
        if k < 0 or k not in self.full:
            return None
        if k not in self.moved:
            self.moved[k] = _moved_and_copy(self.copy, values)
        kept = range(max(0, k - AGE_MAX), k + 1)
        return {"round": k, "full": {str(j): self.full[j] for j in kept if j in self.full},
                "moved": {str(j): self.moved[j] for j in kept if j in self.moved},
                "discount": {str(j): self.discount[j] for j in kept if j in self.discount}}

    def arrays(self) -> dict[str, np.ndarray]:
        """What a checkpoint writes beside the record (``checkpoint.write_skip_file``): the lead
        and stamp bytes."""
        return {"lead": self.lead, "stamp": self.stamp}

    def restore(self, record: dict[str, Any], arrays: dict[str, np.ndarray], values: np.ndarray) -> None:
        """Go on from a checkpoint's ``record`` with the lead and stamp bytes written beside it
        (``arrays``) and the values it holds: as if the run that wrote it had gone on, so that the
        next full sweep skips what cannot have changed since. The walk's policy rows must be the
        ones that run recorded (a policy mapped from its file). A record that does not fit (one a
        bound per block wrote, a byte array of another size, a round without its movement) raises
        ValueError."""
        n = self.lead.shape[0]
        if record.get("kind", ONE_BOUND) != ONE_BOUND:
            raise ValueError(f"a record of the skip by {record.get('kind')}, not by one bound")
        lead, stamp = arrays["lead"], arrays["stamp"]
        if lead.shape != (n,) or stamp.shape != (n,) or lead.dtype != np.uint8 or stamp.dtype != np.uint8:
            raise ValueError(f"lead and stamp bytes of {lead.shape}/{stamp.shape}, not ({n},) each")
        k = int(record["round"])
        full = {int(j): float(x) for j, x in record["full"].items()}
        moved = {int(j): float(x) for j, x in record["moved"].items()}
        discount = {int(j): float(x) for j, x in record["discount"].items()}
        if k < 0 or k not in full or k not in moved or k not in discount:
            raise ValueError(f"the record of round {k} lacks that round's change, movement or discount")
        self.lead, self.stamp = lead, stamp
        self.round, self.full, self.moved, self.discount = k, full, moved, discount
        self.copy[:] = values


def _moved_and_copy(copy: np.ndarray, values: np.ndarray) -> float:
    """The largest |values - copy| (in float64: exact), then ``copy`` := ``values``: the movement
    of one block holding every state."""
    return float(_block_max(values, copy, _ONE_RUN, _ONE_RUN, 1, update=True)[0])


_ONE_RUN = np.zeros(1, dtype=np.int64)  # one run from rank 0, of block 0


# ---- a bound per block ---------------------------------------------------------------------------

CARRY_NEVER = kernels.CARRY_NEVER


class BlockSkip(_Copied):
    """The skip with a bound per block of states instead of one for the whole game.

    The game names blocks (``StochasticGame.block_keys``): each state has its own block and an
    other key. Every state's outcomes are generated once (``block_adjacency``) to find, for
    each own block, the blocks that the successors keeping the turn lie in, and for each other
    key, those that the successors passing it lie in. Each round measures each block's largest
    movement (``_block_max`` over the runs of ranks sharing an own block) and, for each key, the
    largest over the blocks it reaches (``kbounds``): a state's successors moved by at most the
    larger of its two keys' bounds. As ``Skip`` does for one bound, a lead is safe while it
    exceeds twice that movement; but the movement is a state's own, so it is not kept per round:
    each state carries what is left of its lead in two bytes (``carry``), which every full sweep
    that skips it lowers by twice its blocks' movement in the round before (and, where the lead
    was measured in the last full sweep, that sweep's own movement of those blocks, which the
    state may have read before or after each update), rounded down (``_engine.carry_level``).
    A state backed up from its outcomes records its lead afresh. Every decision is proven, so one
    thread gives the values of a walk that never skips, bit for bit.

    Memory: two bytes a state, the copy of the values (as ``Skip``), and the adjacency (a few
    int32 a block)."""

    def __init__(self, K, dtype: np.dtype, path: Path | None = None, threads: int = 1,
                 blocks_file: Path | None = None, game_id: str = "") -> None:
        n = K.state_count
        super().__init__(n, dtype, path)
        self.nb = K.block_count
        self.carry = np.full(n, CARRY_NEVER, dtype=np.uint16)
        kept = read_blocks(blocks_file, n, self.nb, game_id) if blocks_file is not None else None
        self.loaded = kept is not None  # the blocks were read from ``blocks_file``, not found again
        if kept is not None:
            (self.starts, self.keys), self.adjacency = kept[:2], kept[2:]
        else:
            self.starts, self.keys = block_runs(K)
            self.adjacency = block_adjacency(K, threads, (self.starts, self.keys))
            if blocks_file is not None:
                write_blocks(blocks_file, n, self.nb, game_id, (self.starts, self.keys, *self.adjacency))
        self.kb = np.zeros((4, self.nb))
        self.full_blocks = np.zeros(self.nb)  # the last full sweep's movement of each block
        self.g: float | None = None
        self.dg = 0.0
        # each block's movement already measured since the last full sweep's start (``record``,
        # which takes the copy anew): the next ``begin`` adds it to what it measures
        self.pending: np.ndarray | None = None

    @property
    def block_bytes(self) -> int:
        """Memory the blocks take beside the two bytes a state: the runs, the adjacency and the
        per-block movements (seven pieces: about 0.4 GB, which the solve's estimate does not count)."""
        arrays = (self.starts, self.keys, *self.adjacency, self.kb, self.full_blocks)
        return sum(int(a.nbytes) for a in arrays)

    def begin(self, values: np.ndarray, discount: float) -> None:
        """A full sweep with this discount starts: each block's movement since the last one's
        start, the copy of the values taken, and each key's bounds."""
        if self.round >= 0:
            moved = _block_max(values, self.copy, self.starts, self.keys, self.nb, update=True)
            if self.pending is not None:  # (|x - a| <= |x - b| + |b - a|: the sum bounds the round's movement)
                moved += self.pending
                self.pending = None
        else:
            self.copy[:] = values
            moved = np.zeros(self.nb)
        self.round += 1
        self.dg = abs(discount - self.g) if self.g is not None else 0.0
        self.g = discount
        keep_ptr, keep, pass_ptr, passing = self.adjacency
        fresh = moved + self.full_blocks
        self.kb[0] = _reach_max(keep_ptr, keep, moved)
        self.kb[1] = _reach_max(keep_ptr, keep, fresh)
        self.kb[2] = _reach_max(pass_ptr, passing, moved)
        self.kb[3] = _reach_max(pass_ptr, passing, fresh)

    def forget(self) -> None:
        """No state carries a lead until one is measured anew: a full sweep that records none (a
        plain one; see ``Skip.forget``) leaves the policy rows and the leads apart, so the next
        full sweep generates every state. The blocks' movements go on being measured."""
        self.carry[:] = CARRY_NEVER

    def forget_states(self, ranks: np.ndarray) -> None:
        """These states carry no lead until one is measured anew (see ``Skip.forget_states``)."""
        self.carry[ranks] = CARRY_NEVER

    def record(self, values: np.ndarray) -> dict[str, Any] | None:
        """What a checkpoint keeps of the skip at a round's end, so that a resumed walk skips from
        its first full sweep on (``restore``): the round and its discount, and beside them
        (``arrays``) each state's carried lead, each block's movement in the last full sweep, and
        each block's movement since that sweep's start, measured here as the next ``begin`` would
        measure it (the copy is taken anew). None before the first full sweep."""
        if self.round < 0 or self.g is None:
            return None
        moved = _block_max(values, self.copy, self.starts, self.keys, self.nb, update=True)
        self.pending = moved if self.pending is None else self.pending + moved
        return {"kind": BY_BLOCKS, "round": self.round, "discount": self.g}

    def arrays(self) -> dict[str, np.ndarray]:
        """What a checkpoint writes beside the record: carried leads and the blocks' movements."""
        return {"carry": self.carry, "full_blocks": self.full_blocks,
                "moved": self.pending if self.pending is not None else np.zeros(self.nb)}

    def restore(self, record: dict[str, Any], arrays: dict[str, np.ndarray], values: np.ndarray) -> None:
        """Go on from a checkpoint's ``record`` (``record`` above), with the arrays written beside it
        and the values it holds, as the run that wrote it would have gone on. A record that does
        not fit (one bound's, arrays of other sizes) raises ValueError."""
        if record.get("kind") != BY_BLOCKS:
            raise ValueError(f"a record of the skip by {record.get('kind', ONE_BOUND)} bound, not by blocks")
        carry, full, moved = arrays["carry"], arrays["full_blocks"], arrays["moved"]
        n, nb = self.carry.shape[0], self.nb
        if carry.shape != (n,) or carry.dtype != np.uint16:
            raise ValueError(f"carried leads of {carry.shape} {carry.dtype}, not ({n},) uint16")
        if full.shape != (nb,) or moved.shape != (nb,):
            raise ValueError(f"block movements of {full.shape}/{moved.shape}, not ({nb},) each")
        k = int(record["round"])
        if k < 0:
            raise ValueError(f"a record of round {k}")
        self.carry = np.ascontiguousarray(carry)
        self.full_blocks = np.asarray(full, dtype=np.float64).copy()
        self.pending = np.asarray(moved, dtype=np.float64).copy()
        self.round, self.g = k, float(record["discount"])
        self.copy[:] = values

    def kwargs(self) -> dict:
        return {"carry": self.carry, "kbounds": self.kb, "dg": self.dg, "slack": SLACK, "work": self.work}

    def end(self, values: np.ndarray, change: float, generated: int, damped: bool = False) -> None:
        """The sweep ended: each block's movement in it (a damped sweep's values are halfway back,
        and a state may have read the undamped ones: twice that)."""
        self.full_blocks = _block_max(values, self.copy, self.starts, self.keys, self.nb, update=False)
        if damped:
            self.full_blocks *= 2.0
        self.logged(values, change, generated)


BLOCK_ARRAYS = ("starts", "keys", "keep_ptr", "keep", "pass_ptr", "passing")


def write_blocks(file: Path, n: int, nb: int, game_id: str, arrays: tuple[np.ndarray, ...]) -> None:
    """``BlockSkip``'s runs and adjacency, kept beside a solve's checkpoint so that a resumed walk
    reads them instead of generating every state again (seven pieces: some 25 minutes on two
    threads), with the state and block counts and ``game_id`` (the solve's options) they belong
    to; written under a temporary name and renamed into place. A file that cannot be written is
    left out: the next run finds the blocks again."""
    tmp = file.with_name(file.name + ".tmp")
    try:
        with open(tmp, "wb") as f:
            starts, keys, keep_ptr, keep, pass_ptr, passing = arrays  # (BLOCK_ARRAYS)
            np.savez(f, n=np.int64(n), nb=np.int64(nb), game=np.array(game_id), starts=starts, keys=keys,
                     keep_ptr=keep_ptr, keep=keep, pass_ptr=pass_ptr, passing=passing)
        replace_synced(tmp, file)
    except OSError:
        tmp.unlink(missing_ok=True)


_UNREADABLE = (OSError, ValueError, KeyError, zipfile.BadZipFile)  # a blocks file missing or broken


def blocks_id(header: dict[str, Any]) -> str:
    """The ``game_id`` a solve's blocks are kept for: its options (``header``) as sorted JSON."""
    return json.dumps(header, sort_keys=True)


def read_blocks(file: Path, n: int, nb: int, game_id: str) -> tuple[np.ndarray, ...] | None:
    """The arrays ``write_blocks`` kept (``BLOCK_ARRAYS``' order) where the file holds them for
    these counts and this game; else (missing, unreadable, another game's) None."""
    try:
        with np.load(file, allow_pickle=False) as f:
            if int(f["n"]) != n or int(f["nb"]) != nb or str(f["game"]) != game_id:
                return None
            return tuple(np.asarray(f[name]) for name in BLOCK_ARRAYS)
    except _UNREADABLE:
        return None


def blocks_game(file: Path) -> str | None:
    """The ``game_id`` a kept blocks file belongs to, read without its arrays (a solve's status);
    None where it cannot be read."""
    try:
        with np.load(file, allow_pickle=False) as f:
            return str(f["game"])
    except _UNREADABLE:
        return None


def block_runs(K) -> tuple[np.ndarray, np.ndarray]:
    """The runs of consecutive ranks that share an own block: their first ranks and their blocks."""
    n = K.state_count
    starts, keys = [], []
    last = -1  # (no key is negative: the first rank starts a run)
    for a in range(0, n, _CHUNK):
        own, _ = K.keys_of(a, min(n, a + _CHUNK))
        at = np.flatnonzero(np.diff(own, prepend=np.int32(last)) != 0)
        starts.append(at + a)
        keys.append(own[at])
        last = int(own[-1])
    return np.concatenate(starts).astype(np.int64), np.concatenate(keys).astype(np.int64)


def add_pairs(K, table: np.ndarray, held: int, start: int, stop: int,
              runs: tuple[np.ndarray, np.ndarray, np.ndarray, int], threads: int = 1) -> tuple[np.ndarray, int]:
    """The (key, block) pairs of ranks start..stop added to ``table`` (``_engine.block_pairs``, a
    successor's block read from ``runs``: starts, keys, first, shift), which grows fourfold
    whenever it fills; returns the table and how many words it holds."""
    starts, keys, first, shift = runs
    while True:
        new = kernels.block_pairs(K, table, table.size // 2 - held, starts, keys, first, shift, threads=threads,
                                  start=start, stop=stop)
        if new >= 0:
            return table, held + new
        words = table[table != kernels.PAIR_EMPTY]
        table = np.full(4 * table.size, kernels.PAIR_EMPTY, dtype=np.uint64)
        held = kernels.pair_rehash(table, words)


def block_adjacency(K, threads: int = 1, runs: tuple[np.ndarray, np.ndarray] | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Which blocks each key's states reach: (keep_ptr, keep, pass_ptr, passing), two lists in
    CSR form over the ``K.block_count`` keys: own block k's states keep the turn only into the
    blocks keep[keep_ptr[k]:keep_ptr[k + 1]], and other key k's states pass it only into
    passing[pass_ptr[k]:pass_ptr[k + 1]]. Found from every state's generated outcomes, a chunk
    of ranks at a time, in a set of words that grows as it fills (``_engine.block_pairs``), each
    successor's block read from the runs of ranks sharing one (``runs``, else ``block_runs``)."""
    n, nb = K.state_count, K.block_count
    starts, keys = runs if runs is not None else block_runs(K)
    first, shift = kernels.run_index(starts, n)
    index = (starts, keys, first, shift)
    table = np.full(1 << 16, kernels.PAIR_EMPTY, dtype=np.uint64)
    held = 0
    with progress(n, "skip: the blocks each key reaches", enabled=None) as bar:
        for a in range(0, n, _CHUNK):
            b = min(n, a + _CHUNK)
            table, held = add_pairs(K, table, held, a, b, index, threads)
            bar.update(b - a)
    words = np.sort(table[table != kernels.PAIR_EMPTY])
    kind = words >> np.uint64(62)
    key = ((words >> np.uint64(31)) & np.uint64((1 << 31) - 1)).astype(np.int64)
    block = (words & np.uint64((1 << 31) - 1)).astype(np.int64)
    out: list[np.ndarray] = []
    for k in (0, 1):
        here = kind == k
        out += _csr(key[here], block[here], nb)
    return out[0], out[1], out[2], out[3]


def _csr(key: np.ndarray, block: np.ndarray, nb: int) -> list[np.ndarray]:
    """Pairs sorted by key as CSR over ``nb`` keys: [ptr, blocks]."""
    ptr = np.zeros(nb + 1, dtype=np.int64)
    np.cumsum(np.bincount(key, minlength=nb), out=ptr[1:])
    return [ptr, block]


def _reach_max(ptr: np.ndarray, blocks: np.ndarray, per_block: np.ndarray) -> np.ndarray:
    """For each key, the largest of ``per_block`` over the blocks it reaches (0 for none)."""
    out = np.zeros(ptr.shape[0] - 1)
    some = np.flatnonzero(np.diff(ptr) > 0)
    if some.size:
        out[some] = np.maximum.reduceat(per_block[blocks], ptr[some])
    return out


def _block_max(values: np.ndarray, copy: np.ndarray, starts: np.ndarray, keys: np.ndarray, nb: int,
               update: bool) -> np.ndarray:
    """Each block's largest |values - copy| (float64: exact) over its runs of ranks; with
    ``update``, ``copy`` := ``values`` on the way."""
    out = np.zeros(nb)
    n = values.shape[0]
    for a in range(0, n, _CHUNK):
        b = min(n, a + _CHUNK)
        here = values[a:b]
        d = np.abs(here.astype(np.float64) - copy[a:b])
        if update:
            copy[a:b] = here
        i0 = int(np.searchsorted(starts, a, side="right")) - 1
        i1 = int(np.searchsorted(starts, b, side="left"))
        local = np.maximum(starts[i0:i1] - a, 0)
        np.maximum.at(out, keys[i0:i1], np.maximum.reduceat(d, local))
    return out
