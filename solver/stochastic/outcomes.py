"""Where a sweep gets a state's outcomes: generated again every time, or a stored graph.

``Regenerated`` asks the game for every state's outcomes in every sweep (4 bytes a state for the
values, nothing more). ``StoredGraph`` keeps every state's distinct outcome codes, grouped as the
game writes them (see ``_engine.graph_build``), and sweeps over them with the same arithmetic
in the same order, so both give the same values sweep for sweep; the stored graph costs 4 bytes
per distinct outcome plus 8 + (groups) bytes a state (Ur, four pieces: 3.3 GiB) and makes a sweep
an order of magnitude cheaper. Both offer the same methods, which the solver calls.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gamesolver.solver.stochastic import _engine as kernels
from gamesolver.solver.errors import InputError
from gamesolver.solver.progress import progress
from gamesolver.solver.tables.atomic import sync_dir, sync_folder

GRAPH_CHOICES = ("auto", "store", "regenerate")
_CHUNK = 1 << 18
_SAMPLE = 2000  # states sampled to estimate the graph's size before building it


class Regenerated:
    """Sweeps that generate every state's outcomes again (no memory beyond the values)."""

    stored = False
    nbytes = 0

    def __init__(self, game: kernels.StochasticGame) -> None:
        self.game = game

    skips = True  # ``sweep`` can back up a state from its recorded choice where that is proven (solver.stochastic.skip)

    def sweep(self, V: np.ndarray, threads: int = 1, start: int = 0, stop: int = -1, write: bool = True,
              policy: np.ndarray | None = None, discount: float = 1.0, subset: np.ndarray | None = None,
              **skip: Any) -> float:
        return float(kernels.sweep(self.game, V, threads=threads, start=start, stop=stop, write=write,
                                   policy=policy, discount=discount, subset=subset, **skip))

    subset_sweeps = True  # ``sweep`` can back up a list of states alone (the endless check's local repair)
    subset_rows = True  # ... and record their rows in an array of their own (``subset_rows``: a row each, in order)
    hot_sets = True  # ``evaluate`` can sweep a subset of the states and mark the ones it changed

    def evaluate(self, policy: np.ndarray, V: np.ndarray, threads: int = 1, discount: float = 1.0,
                 subset: np.ndarray | None = None, mark: np.ndarray | None = None, above: float = 0.0) -> float:
        return float(kernels.evaluate(self.game, policy, V, threads=threads, discount=discount, subset=subset,
                                      mark=mark, above=above))

    def policy_apply(self, policy: np.ndarray, x: np.ndarray, out: np.ndarray, **kw: Any) -> None:
        kernels.policy_apply(self.game, policy, x, out, **kw)

    def endless_pass(self, V: np.ndarray, good: np.ndarray, eps: float, threads: int = 1,
                     first: bool = False) -> int:
        return int(kernels.endless_pass(self.game, V, good, eps, threads=threads, first=first))

    def roll_codes(self, rank: int, roll: int) -> set[int]:
        """The codes roll ``roll`` offers in the state (its pass when it has none)."""
        return set(self.game.roll_outcomes(rank, roll))


class StoredGraph(Regenerated):
    """The outcome codes of every state, ranked once; the same sweeps read them."""

    stored = True
    # The kernel can skip over a stored graph too (a proven state backed up from its policy row, not
    # its stored codes), but the walk does not ask: for four pieces it read 1.59x fewer codes and
    # its full sweeps took 1.38x longer (recording leads, the skip's copy of the values and its
    # bounds cost more than the codes saved; docs/design/walk.md)
    skips = False

    def __init__(self, game: kernels.StochasticGame, offsets: np.ndarray, counts: np.ndarray, codes: np.ndarray) -> None:
        super().__init__(game)
        self.offsets = offsets
        self.counts = counts
        self.codes = codes

    @property
    def nbytes(self) -> int:  # type: ignore[override]
        return int(self.offsets.nbytes + self.counts.nbytes + self.codes.nbytes)

    def groups(self, rank: int) -> list[list[int]]:
        """The stored codes of one state, group by group."""
        start = int(self.offsets[rank])
        out = []
        for c in self.counts[rank].tolist():
            out.append(self.codes[start:start + c].tolist())
            start += c
        return out

    def roll_codes(self, rank: int, roll: int) -> set[int]:
        """The codes of the outcomes roll ``roll`` offers in the state (its pass when it has none):
        a slow, plain reading of the layout that the sweep kernels read fast."""
        g = self.groups(rank)
        out: set[int] = set()
        for k in self.game.roll_group_list(roll):
            out |= set(g[k])
        return out or set(g[-1])

    def sweep(self, V: np.ndarray, threads: int = 1, start: int = 0, stop: int = -1, write: bool = True,
              policy: np.ndarray | None = None, discount: float = 1.0, subset: np.ndarray | None = None,
              **skip: Any) -> float:
        return float(kernels.sweep(self.game, V, threads=threads, start=start, stop=stop, write=write,
                                   policy=policy, discount=discount, subset=subset, offsets=self.offsets,
                                   counts=self.counts, codes=self.codes, **skip))

    def endless_pass(self, V: np.ndarray, good: np.ndarray, eps: float, threads: int = 1,
                     first: bool = False) -> int:
        return int(kernels.graph_endless_pass(self.game, self.offsets, self.counts, self.codes, V, good, eps,
                                              threads=threads, first=first))


_STORE_SHARE = 0.85  # --graph store: graph, values and policy in at most this part of the memory
GRAPH_DIR = "graph"  # beside a checkpoint: the stored graph a stopped run built
_GRAPH_ARRAYS = ("offsets", "counts", "codes")


def build_mapped_graph(K: kernels.StochasticGame, root: Path, key: dict[str, Any], threads: int = 1,
                       show_progress: bool | None = False) -> StoredGraph:
    """``build_graph`` writing the codes straight into a file beside a run's checkpoint (under a
    temporary name, then renamed, with ``key``: what it was built for), then mapped: the page
    cache holds them, so a graph that fills most of the memory (K = 5 of the fort rules: 15 GiB)
    is never a private allocation, a resumed run maps the same file, and under pressure its pages
    go back to disk instead of the process being killed. A disk that cannot take it falls back to
    the graph in memory: the graph is not needed to resume."""
    tmp = root / (GRAPH_DIR + ".tmp")
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        g = build_graph(K, threads, show_progress, folder=tmp)
        for name in ("offsets", "counts"):
            np.save(tmp / f"{name}.npy", getattr(g, name), allow_pickle=False)
        (tmp / "key.json").write_text(json.dumps(key))
        sync_folder(tmp)  # (on the disk before the folder takes its name: a resumed run trusts it)
        folder = root / GRAPH_DIR
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(tmp, folder)
        sync_dir(root)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        return build_graph(K, threads, show_progress)
    except BaseException:  # a state too large to store, or a stop: no half-written folder stays
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    mapped = load_graph(K, root, key)  # offsets and counts mapped too, not held
    return g if mapped is None else mapped


@contextlib.contextmanager
def scratch_graph(K: kernels.StochasticGame, near: Path, threads: int = 1, show_progress: bool | None = False) -> Iterator[StoredGraph]:
    """``build_mapped_graph`` in a scratch folder beside ``near`` (a table's folder), removed when
    the block ends however it ends: for work on a finished table (``solver ur check``), whose
    solve's graph went when the table was written. Mapped, so a proof that needs most of the
    memory beside it (five pieces) is not killed for it. Where no folder can be made there (a
    read-only place), the graph is held in memory instead."""
    try:
        root = Path(tempfile.mkdtemp(prefix=f".{near.name}.graph-", dir=near.parent))
    except OSError:
        yield build_graph(K, threads, show_progress)
        return
    try:
        yield build_mapped_graph(K, root, {"scratch": True}, threads, show_progress)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def load_graph(game: kernels.StochasticGame, root: Path, key: dict[str, Any]) -> StoredGraph | None:
    """The stored graph a stopped run kept for the same ``key``, memory-mapped; None if there is
    none, it was built for something else, or it does not fit the game's state space."""
    folder = root / GRAPH_DIR
    try:
        if json.loads((folder / "key.json").read_text()) != key:
            return None
        arrays = [np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False) for name in _GRAPH_ARRAYS]
    except (OSError, ValueError):
        return None
    offsets, counts, codes = arrays
    n = game.state_count
    if offsets.shape != (n + 1,) or counts.shape != (n, game.ngroups) or codes.shape[0] < int(offsets[-1]) \
            or offsets.dtype != np.int64 or counts.dtype != np.uint8 or codes.dtype != np.int32:
        return None
    return StoredGraph(game, offsets, counts, codes)


def estimate_bytes(K: kernels.StochasticGame, sample: int = _SAMPLE, seed: int = 0) -> int:
    """The stored graph's size, estimated from the outcomes of ``sample`` random states (exact
    when the space has no more states than that)."""
    n = K.state_count
    ranks = range(n) if n <= sample else np.random.default_rng(seed).integers(0, n, size=sample).tolist()
    per_state = sum(kernels.graph_codes(K, int(r)) for r in ranks) / len(ranks)
    return int(n * (8 + K.ngroups) + per_state * n * 4)


def memory_bytes() -> int:
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 0


def available_bytes() -> int:
    """Memory that new allocations can take now without swapping: the kernel's MemAvailable
    (free memory plus the page cache it can drop, such as a mapped stored graph's pages), or,
    where there is no /proc/meminfo, an eighth of the memory."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return memory_bytes() // 8


def want_graph(K: kernels.StochasticGame, choice: str, other_bytes: int = 0, share: float = 1.0) -> bool:
    """Whether to store the graph: ``store`` always (an error when it cannot fit in this
    machine's memory), ``regenerate`` never, ``auto`` when it and ``other_bytes`` fit in half of
    the memory. A solve maps the graph from a file (``build_mapped_graph``), so ``store`` may
    fill most of the memory: the page cache holds it. ``share``: the part of the states whose
    codes are held at once (one tier's); the per-state offsets and counts are held for every
    state."""
    if choice not in GRAPH_CHOICES:
        raise InputError(f"unknown graph choice {choice!r}; expected one of {', '.join(GRAPH_CHOICES)}")
    if choice == "regenerate":
        return False
    whole = estimate_bytes(K)
    index = K.state_count * (8 + K.ngroups)
    need = index + int(max(0, whole - index) * share) + other_bytes
    memory = memory_bytes()
    if choice == "store" and need > memory * _STORE_SHARE:
        raise InputError(f"the stored graph needs about {need / 2**30:.1f} GiB with the rest of the solve, more "
                         f"than {_STORE_SHARE:.0%} of this machine's {memory / 2**30:.1f} GiB; use graph="
                         "'regenerate' (the CLI's --graph regenerate)")
    return choice == "store" or auto_stores(need)


def auto_stores(need: int) -> bool:
    """``auto``'s rule: store the graph when it and the rest of the solve (``need`` bytes in all)
    fit in half of this machine's memory."""
    return need <= memory_bytes() / 2


def build_graph(K: kernels.StochasticGame, threads: int = 1, show_progress: bool | None = False,
                folder: Path | None = None, start: int = 0, stop: int | None = None) -> StoredGraph:
    """Generate and rank every state's outcomes once. In memory: two passes (count, then fill
    an array of the right size), so the codes are never held twice. With ``folder``: one pass,
    the codes appended to ``folder/codes.npy`` as each chunk of states is generated, then mapped
    (half the generation; the chunk's buffer is the only extra memory). ``start``, ``stop``: in
    memory, the graph of those ranks only (a tier's); the other states hold no codes."""
    n = K.state_count
    stop = n if stop is None else stop
    if folder is not None:
        if (start, stop) != (0, n):
            raise ValueError("a graph built into a folder holds every state")
        return _build_into(K, folder, threads, show_progress)
    counts = np.zeros((n, K.ngroups), dtype=np.uint8)
    offsets = np.zeros(n + 1, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int32)
    largest = 0
    chunks = [(a, min(stop, a + _CHUNK)) for a in range(start, stop, _CHUNK)]
    with progress(stop - start, "graph: counting outcomes", enabled=show_progress) as bar:
        for a, b in chunks:
            largest = max(largest, kernels.graph_build(K, offsets, counts, empty, threads=threads, start=a, stop=b))
            bar.update(b - a)
    check_largest(largest)
    np.cumsum(counts[start:stop].sum(axis=1, dtype=np.int64), out=offsets[start + 1:stop + 1])
    offsets[stop + 1:] = offsets[stop]
    codes = np.empty(max(1, int(offsets[-1])), dtype=np.int32)
    with progress(stop - start, "graph: ranking outcomes", enabled=show_progress) as bar:
        for a, b in chunks:
            kernels.graph_build(K, offsets, counts, codes, threads=threads, start=a, stop=b)
            bar.update(b - a)
    return StoredGraph(K, offsets, counts, codes)


def check_largest(largest: int) -> None:
    """Refuse a graph with a group of more than 255 outcomes (its count is a byte)."""
    if largest > 255:
        raise InputError(f"a state has {largest} outcomes in one group, more than the stored graph "
                         "holds (255); use graph='regenerate' (the CLI's --graph regenerate)")


def _npy_header(size: int) -> bytes:
    """The .npy header of a one-dimensional int32 array of ``size`` entries."""
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": np.dtype(np.int32).str, "fortran_order": False,
                                               "shape": (size,)})
    return out.getvalue()


_BLOCKS_A_THREAD = 8  # a chunk's blocks for each thread (dynamic: the threads finish together)
_CODES_GUESS = 64  # codes a state the chunk's buffer starts with room for (Ur, five pieces: 61)


def _build_into(K: kernels.StochasticGame, folder: Path, threads: int, show_progress: bool | None) -> StoredGraph:
    """``build_graph`` in one pass into ``folder/codes.npy``: each chunk of states is generated
    once into a buffer (``graph_build_blocks``: blocks in rank order, each compact), its offsets
    follow from its counts, and its codes are appended to the file; the header, whose length
    does not depend on the size (NumPy pads it so that the shape can grow), is written last."""
    n = K.state_count
    counts = np.zeros((n, K.ngroups), dtype=np.uint8)
    offsets = np.zeros(n + 1, dtype=np.int64)
    blocks = _BLOCKS_A_THREAD * max(1, threads)
    used = np.zeros(blocks, dtype=np.int64)
    buf = np.empty(blocks * (-(-min(n, _CHUNK) // blocks) * _CODES_GUESS + 1), dtype=np.int32)
    head = len(_npy_header(0))
    path = folder / "codes.npy"
    with open(path, "wb") as f, progress(n, "graph: ranking outcomes", enabled=show_progress) as bar:
        f.write(b"\0" * head)
        for start in range(0, n, _CHUNK):
            stop = min(n, start + _CHUNK)
            while True:
                largest = kernels.graph_build_blocks(K, counts, buf, used, threads=threads, start=start, stop=stop)
                if used.min() >= 0:
                    break
                buf = np.empty(2 * buf.size, dtype=np.int32)  # a block overflowed: again, with room
            check_largest(largest)
            np.cumsum(counts[start:stop].sum(axis=1, dtype=np.int64), out=offsets[start + 1:stop + 1])
            offsets[start + 1:stop + 1] += offsets[start]
            cap = buf.size // blocks
            for b in range(blocks):
                f.write(buf[b * cap:b * cap + int(used[b])].data)
            bar.update(stop - start)
        size = int(offsets[-1])
        if size == 0:  # as in memory: at least one code, so the array is never empty
            f.write(np.zeros(1, dtype=np.int32).data)
        header = _npy_header(max(1, size))
        if len(header) != head:
            raise OSError(f"the .npy header of {size} codes is {len(header)} bytes, not the {head} set aside")
        f.seek(0)
        f.write(header)
    codes = np.load(path, mmap_mode="r", allow_pickle=False)
    if codes.shape != (max(1, size),):
        raise OSError(f"{path} holds {codes.shape[0]} codes; expected {max(1, size)}")
    return StoredGraph(K, offsets, counts, codes)


if TYPE_CHECKING:  # mypy holds both in-process engines to the solve's interface
    from gamesolver.solver.stochastic.engine import Engine, HotSets, SubsetSweeps

    _regenerated: type[Engine] = Regenerated
    _stored: type[Engine] = StoredGraph
    _subsets: tuple[type[SubsetSweeps], ...] = (Regenerated, StoredGraph)
    _hot: tuple[type[HotSets], ...] = (Regenerated, StoredGraph)
