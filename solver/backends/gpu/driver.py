"""Sweeps on a CUDA GPU through numba-cuda: the engine ``solve_values`` drives with
``engine=GpuEngine(...)`` (the optional extra ``pip install "gamesolver[gpu]"``). numba is
imported only when an engine or its kernels are built.

A game brings its move generator as plain numba-compatible Python (``spec.build(jit)`` returns a
``generate(tables, rank, codes, counts, scratch)`` that writes a state's outcome codes in the
engine's group layout: the int32 codes, groups and rolls of ``_engine.pxd``) and its tables as
numpy arrays. The kernels here wrap it with the engine's arithmetic (the Bellman backup group by
group, the policy sweep, a pass of the endless check) and are built from the same source for
three targets: the device (``cuda.jit``), numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``: the
device kernels run as Python, so tests without a GPU run them) and numba's CPU JIT (``target="cpu"``:
one thread, in rank order, so its sweep is the Cython engine's one-thread sweep bit for bit).

On the device every state is one thread and the values are float32, updated in place: a thread may
read a successor's value of this sweep or of the last one, whichever its neighbour has written by
then (asynchronous, Gauss-Seidel-like; the fixed point is the same). The values and the walk's
greedy policy live in device memory between calls; the host array the driver holds is refreshed
after every full sweep and before the endless check. Policy sweeps change only the device's values,
so a checkpoint written after a round holds the values of its full sweep (a valid point to resume
from, a round's policy sweeps behind).

Where device memory allows (``graph="auto"``), the engine first generates every state's outcomes
twice, once to count each state's distinct codes and once to write them at their offsets, and
keeps them as a stored graph in the CPU engine's layout (int64 offsets, a byte a group for the
group sizes, the int32 codes); full sweeps and the endless check then read a state's codes instead
of generating them. A regenerating sweep spends most of its time in the generator; the stored one
reads about 300 bytes a state (six pieces: 73 GiB in all).
"""
from __future__ import annotations

import time
import warnings
import weakref
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

from gamesolver.solver.stochastic.engine import Log
from gamesolver.solver.backends.gpu.arithmetic import _F0, graph_functions, state_functions
from gamesolver.solver.errors import InputError
from gamesolver.solver.stochastic.outcomes import GRAPH_CHOICES, available_bytes

GPU_EXTRA = 'pip install "gamesolver[gpu]"'
NO_GPU = ("no CUDA GPU was found (numba.cuda.is_available() is False); on this machine use --backend cpu "
          "(its threads) or --backend ray (a Ray cluster)")
THREADS_PER_BLOCK = 128
LAUNCH_STATES = 1 << 21  # ranks per kernel launch: launches run in order, so later ranges see earlier ones
# A subset (the walk's hot set, the repair's states) fits one launch, whose threads update it all
# at once (a Jacobi step) where the CPU goes state after state (Gauss-Seidel). Swept instead in at
# least this many launches in rank order, each seeing the ones before: the four-piece walk with
# its hot sets swept the Jacobi way took 109 full sweeps, in 8 pieces 85, state after state 76-87
# (a CPU stand-in of the device's step; docs/design/backends.md, "Six and seven pieces")
SUBSET_PIECES = 8
HOT_CHUNK = 1024  # ranks a thread scans when the hot set is gathered on the device (``GpuEngine.hot_set``)
# Where the whole stored graph does not fit (seven pieces: about 204 GiB), ``graph="auto"`` stores it
# for the longest prefix of ranks that fits (whole launches), when that is at least this share of the
# states; the other states regenerate their outcomes in every sweep
PARTIAL_GRAPH_MIN = 0.125
# ... leaving this share of the free memory unused beside it (numba frees device arrays in batches,
# and each round's hot set is a new array of up to an eighth of the states, 8 bytes each)
PARTIAL_GRAPH_HEADROOM = 1 / 16
# ... and the graph of the ranks after that prefix in the host's page-locked memory, up to this share
# of the memory available there (``host_graph``), copied to the device a launch at a time as a sweep
# reaches it (seven pieces: some 90 GiB at tens of GB/s, against regenerating them); the ranks after
# that regenerate
HOST_GRAPH_SHARE = 0.5
DEVICE, HOST, GENERATE = 0, 1, 2  # where a launch's states get their outcomes (``_parts``)


def _numpy_for_numba() -> None:
    """numba-cuda 0.30 registers an overload of ``np.row_stack`` when its CUDA target is imported,
    and NumPy 2.5 removed that alias of ``np.vstack``: give it back before the import, or it fails."""
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack


def import_cuda() -> Any:
    """``numba.cuda``, or one InputError naming the extra to install."""
    _numpy_for_numba()
    try:
        import numba_cuda  # noqa: F401  (the package the extra installs; numba alone has no CUDA target)
        from numba import cuda
    except ImportError:
        raise InputError(f"the gpu backend needs numba-cuda, which is not installed; install the extra: "
                         f"{GPU_EXTRA}") from None
    return cuda


# numba warns at every launch of fewer than 128 blocks; the engine launches small grids on purpose
# (a hot set, a subset, the endless repair's few states), so in a solve's log the warning says nothing
# (a filter's pattern must match from the message's start, and numba prefixes a terminal highlight)
SMALL_GRID_WARNING = r".*Grid size \d+ will likely result in GPU under-utilization"


def quiet_small_grids() -> None:
    """Silence numba's low-occupancy warning (only that one) for this process's launches."""
    warnings.filterwarnings("ignore", message=SMALL_GRID_WARNING)


def gpu_available() -> bool:
    """Whether numba-cuda is installed and sees a CUDA GPU (or runs its simulator)."""
    try:
        return bool(import_cuda().is_available())
    except InputError:
        return False


_CACHE: dict[tuple[Any, ...], Any] = {}


def kernels(spec: Any, target: str = "cuda", threads_per_block: int = THREADS_PER_BLOCK) -> Any:
    """The engine's kernels for the game ``spec`` (see ``GpuEngine``), built once per target:
    ``cuda`` (the device, or the simulator when NUMBA_ENABLE_CUDASIM=1) or ``cpu`` (numba.njit)."""
    key = (spec.build, spec.ngroups, spec.nrolls, target) + (
        (spec.max_outcomes, spec.scratch_size, threads_per_block) if target == "cuda" else ())
    if key not in _CACHE:
        if target == "cuda":
            import_cuda()
            from gamesolver.solver.backends.gpu.cuda_kernels import cuda_kernels as build  # numba.cuda: optional
        else:
            build = _cpu_kernels
        _CACHE[key] = build(spec, threads_per_block)
    return _CACHE[key]


def _cpu_kernels(spec: Any, tpb: int) -> Any:
    import numba

    jit = numba.njit(cache=False)
    generate = spec.build(jit)
    _, _, _, backup, joins, settle, policy_backup = state_functions(jit, spec.ngroups, spec.nrolls)
    G = spec.ngroups  # the buffers' sizes are arguments: one compilation serves every size

    @jit
    def sweep(T, V, dst, start, stop, g, RP, RG, policy, record, write, S, indexed, codes, scratch):
        counts = np.zeros(G, np.int64)
        bestv = np.zeros(G, np.float32)
        bestc = np.zeros(G, np.int64)
        worst = _F0
        for i in range(start, stop):
            s = S[i] if indexed else i
            if generate(T, s, codes, counts, scratch) < 0:
                return np.float32(-1.0)
            d = settle(backup(codes, counts, V, g, RP, RG, bestv, bestc, policy, s, record), V, dst, s, write)
            if d > worst:
                worst = d
        return worst

    @jit
    def evaluate(policy, V, start, stop, g, RP, S, indexed, mark, marking, above):
        worst = _F0
        for i in range(start, stop):
            s = S[i] if indexed else i
            acc = policy_backup(policy, V, s, g, RP)
            d = acc - V[s]
            if d < 0:
                d = -d
            if d > worst:
                worst = d
            if marking and d > above:
                mark[s] = 1
            V[s] = acc
        return worst

    @jit
    def endless(T, V, good, eps, first, start, stop, RG, codes, scratch):
        counts = np.zeros(G, np.int64)
        starts = np.zeros(G, np.int64)
        added = 0
        for s in range(start, stop):
            if good[s] != 0:
                continue
            if generate(T, s, codes, counts, scratch) < 0:
                return -1
            if joins(codes, counts, V, V[s], good, eps, first, RG, starts):
                good[s] = 1
                added += 1
        return added

    distinct = graph_functions(jit, G)

    @jit
    def graph_rows(T, start, stop, fill, sizes, OFF, CNT, CODES, base, codes, scratch):
        counts = np.zeros(G, np.int64)
        for s in range(start, stop):
            if generate(T, s, codes, counts, scratch) < 0:
                return -1
            m = distinct(codes, counts)
            if not fill:
                sizes[s] = m
                continue
            r = s - base
            if OFF[r] + m != OFF[r + 1]:
                return -2
            at = OFF[r] - OFF[0]
            for i in range(m):
                CODES[at + i] = codes[i]
            for k in range(G):
                CNT[r, k] = counts[k]
        return 0

    @jit
    def sweep_stored(OFF, CNT, CODES, V, dst, start, stop, g, RP, RG, policy, record, write, S, indexed, base):
        bestv = np.zeros(G, np.float32)
        bestc = np.zeros(G, np.int64)
        worst = _F0
        for i in range(start, stop):
            s = S[i] if indexed else i
            r = s - base
            d = settle(backup(CODES[OFF[r] - OFF[0]:OFF[r + 1] - OFF[0]], CNT[r], V, g, RP, RG, bestv, bestc, policy,
                              s, record), V, dst, s, write)
            if d > worst:
                worst = d
        return worst

    @jit
    def endless_stored(OFF, CNT, CODES, V, good, eps, first, start, stop, RG, base):
        starts = np.zeros(G, np.int64)
        added = 0
        for s in range(start, stop):
            if good[s] != 0:
                continue
            r = s - base
            if joins(CODES[OFF[r] - OFF[0]:OFF[r + 1] - OFF[0]], CNT[r], V, V[s], good, eps, first, RG, starts):
                good[s] = 1
                added += 1
        return added

    return {"sweep": sweep, "evaluate": evaluate, "endless": endless, "generate": generate,
            "graph_rows": graph_rows, "sweep_stored": sweep_stored,
            "endless_stored": endless_stored}


class GpuEngine:
    """The solver's engine interface (``sweep``, ``evaluate``, ``endless_pass``) on a CUDA GPU.

    ``spec``: the game's device twin, with ``build(jit)`` (its numba-compilable generator, see the
    module's docstring), ``tables`` (a tuple of numpy arrays, copied to the device once), ``total``,
    ``nrolls``, ``ngroups``, ``roll_p`` (float32), ``roll_groups`` (int64 masks, bit g: group g),
    ``max_outcomes`` (a bound on one state's codes) and ``scratch_size``. ``policy``: room for the
    walk's greedy policy (4 bytes a state and roll) is counted before anything starts, and a run
    that cannot fit in the device's free memory is refused. ``target``: ``cuda`` (the GPU, or numba's
    simulator) or ``cpu`` (numba's CPU JIT: the same kernels' logic, one thread, for tests).
    ``graph``: ``auto`` (the default) keeps every state's distinct outcome codes in device memory,
    generated once, where they fit beside the rest; the full sweeps and the endless check then read
    them instead of generating (on six pieces about 73 GiB, which an H200 holds; seven need some 200,
    so there it keeps them for the ranks below an edge: ``_store_graph``). ``store`` refuses to run
    without all of it, ``regenerate`` never builds it. The values are the same,
    bit for bit (``graph_functions``). ``pin_host``: page-lock the host's values array (``_pin``).
    """

    stored = False  # no host graph for the proof's kernels (``graph_kind`` says where the outcomes come from)
    name = "gpu"
    chunk = 1 << 62  # the driver's progress chunks would each copy the values: sweep whole

    def __init__(self, spec: Any, *, policy: bool = True, target: str = "cuda",
                 threads_per_block: int = THREADS_PER_BLOCK, launch_states: int = LAUNCH_STATES,
                 log: Log | None = None, graph: str = "auto", pin_host: bool = True,
                 host_graph: int | None = None) -> None:
        if target not in ("cuda", "cpu"):
            raise InputError(f"unknown target {target!r}; expected cuda or cpu")
        if graph not in GRAPH_CHOICES:
            raise InputError(f"unknown graph choice {graph!r}; expected one of {', '.join(GRAPH_CHOICES)}")
        self.spec = spec
        self.target = target
        self.n = int(spec.total)
        self.R = int(spec.nrolls)
        self.tpb = int(threads_per_block)
        self.launch = max(1, int(launch_states))
        self.log = log
        if target == "cuda":
            self.cuda = import_cuda()
            if not self.cuda.is_available():
                raise InputError(NO_GPU)
            quiet_small_grids()
        else:
            import_numba()
            self.cuda = None
        need = self.bytes_needed(policy)
        free = self.free_bytes()
        if free is not None and need > free:
            raise InputError(f"the gpu backend needs about {need / 2**30:.1f} GiB of device memory for "
                             f"{self.n:,} states ({'values, the walk policy' if policy else 'values'}, marks, "
                             f"tables), more than the {free / 2**30:.1f} GiB free on the GPU; use --method sweeps "
                             "(no policy) or --backend ray")
        self.k = kernels(spec, target, self.tpb)
        self.T = tuple(self._to_device(np.ascontiguousarray(a)) for a in spec.tables)
        self.RP = self._to_device(np.ascontiguousarray(spec.roll_p, dtype=np.float32))
        self.RG = self._to_device(np.ascontiguousarray(spec.roll_groups, dtype=np.int64))
        self.V: Any = None  # the device's values
        self.good: Any = None
        self.policy: Any = None  # the walk's greedy policy, recorded by sweeps with a policy
        self.nopolicy = self._to_device(np.zeros((1, self.R), dtype=np.int32))
        self.noindex = self._to_device(np.zeros(1, dtype=np.int64))  # placeholders for "no subset", "no marks"
        self.nomark = self._to_device(np.zeros(1, dtype=np.uint8))
        self.hot: Any = None  # the walk's hot-set marks
        self._subset: tuple[np.ndarray, Any] | None = None  # the last subset swept and its device copy
        self._host: tuple[int, tuple[int, ...]] | None = None  # the host array the device mirrors ...
        self._host_alive: Callable[[], Any] = lambda: None  # ... and a weak reference to it (``_mirrors``)
        self.pin_host = pin_host
        self._pinned: Any = None  # its page-locked registration (``_pin``)
        self._ahead = False  # policy sweeps have changed the device's values since the host's copy
        if log:
            log(f"gpu: {self.device_name()}; {self.n:,} states, about {need / 2**30:.2f} GiB of device memory")
        # the stored graph on the device: every state's distinct outcome codes, generated once
        self.OFF: Any = None  # int64, n + 1: where each state's codes start
        self.CNT: Any = None  # uint8, (n, groups): its groups' sizes
        self.CODES: Any = None  # int32: the codes, state after state, group after group
        self.stored_states = 0  # the graph holds ranks 0..stored_states-1 (all of them, or a prefix)
        self.host_states = 0  # ... and the host's memory ranks stored_states..host_states-1 (``_store_host``)
        self.host_graph = host_graph
        self.H: tuple[Any, Any, Any] | None = None  # the host's part: offsets, group sizes, codes
        self.stage: tuple[Any, Any, Any] | None = None  # one launch's worth of it on the device
        self.stage2: tuple[Any, Any, Any] | None = None  # ... and a second on a GPU (``_launches``)
        self._streams: tuple[Any, Any] | None = None  # kernels' and copies' streams (``_launches``)
        self.host_nbytes = 0
        self.nbytes = 0
        self.graph_kind = "regenerated"
        self.graph_seconds = 0.0  # the device graph's build (the solve's meta counts it)
        if graph != "regenerate":
            self._store_graph(need, required=graph == "store")

    # ---- memory ---------------------------------------------------------------------------

    def resident_threads(self) -> int:
        if self.target != "cuda":
            return 1
        try:
            dev = self.cuda.get_current_device()
            return int(dev.MULTIPROCESSOR_COUNT) * int(getattr(dev, "MAX_THREADS_PER_MULTIPROCESSOR", 2048))
        except Exception:  # noqa: BLE001  (the simulator has no such figures)
            return 1

    def bytes_needed(self, policy: bool = True) -> int:
        """Values, the walk's policy, the check's marks, the tables, and every resident thread's
        local arrays (outcome codes and scratch)."""
        s = self.spec
        tables = sum(int(np.asarray(a).nbytes) for a in s.tables)
        local = 4 * s.max_outcomes + 8 * (3 * s.ngroups + s.scratch_size)
        # values, the check's marks; with the walk's policy its hot-set marks and a hot set (at most
        # an eighth of the states, 8 bytes each)
        return int(self.n * (4 + 1 + (4 * self.R + 2 if policy else 0)) + tables + local * self.resident_threads())

    def free_bytes(self) -> int | None:
        if self.target != "cuda":
            return None
        try:
            free, _ = self.cuda.current_context().get_memory_info()
            return int(free)
        except Exception:  # noqa: BLE001  (the simulator reports no memory)
            return None

    def device_name(self) -> str:
        if self.target != "cuda":
            return "numba CPU JIT"
        try:
            name = self.cuda.get_current_device().name
            return name.decode() if isinstance(name, bytes) else str(name)
        except Exception:  # noqa: BLE001
            return "CUDA device"

    def _store_graph(self, need: int, required: bool) -> None:
        """Generate every state's outcomes twice (once to count them, once to write them) into
        the stored graph, where it fits beside ``need`` bytes (the values, the policy and the
        rest) in the device's free memory. Where the whole graph does not fit: ``required``
        refuses; otherwise the graph is stored for the longest prefix of ranks that fits, in
        whole launches, when that is at least PARTIAL_GRAPH_MIN of the states (the others
        regenerate their outcomes in every sweep), else for none."""
        t0 = time.perf_counter()
        n, G = self.n, int(self.spec.ngroups)
        sizes = self._empty((n,), np.int32)
        self._rows(False, sizes, self.noindex, self._empty((1, G), np.uint8), self._empty((1,), np.int32), n)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(sizes.copy_to_host() if self.target == "cuda" else sizes, out=offsets[1:])
        del sizes
        total = int(offsets[-1])
        size = graph_bytes(offsets, G, n)
        free = self.free_bytes()
        m = n
        if free is not None and size + need > free:
            why = (f"the stored graph needs {size / 2**30:.1f} GiB ({total:,} outcomes) beside the "
                   f"{need / 2**30:.1f} GiB of the rest, more than the {free / 2**30:.1f} GiB free on the GPU")
            if required:
                raise InputError(f"{why}; use --graph regenerate (or graph='regenerate')")
            m = graph_prefix(offsets, G, self.launch, free - need - int(free * PARTIAL_GRAPH_HEADROOM))
            if m < PARTIAL_GRAPH_MIN * n:
                if self.log:
                    self.log(f"gpu: {why}: every sweep regenerates the outcomes")
                return
            if self.log:
                self.log(f"gpu: {why}: stored for ranks below {m:,} ({m / n:.0%} of the states), "
                         "the others regenerate their outcomes in every sweep")
        part, nbytes = int(offsets[m]), graph_bytes(offsets, G, m)
        self.stored_states = m
        if m < n:
            self._store_host(offsets, m)
        self.OFF = self._to_device(offsets[:m + 1])
        del offsets
        self.CNT = self._empty((m, G), np.uint8)
        self.CODES = self._empty((max(1, part),), np.int32)
        self._rows(True, self._empty((1,), np.int32), self.OFF, self.CNT, self.CODES, m)
        self.stored_states = m
        self.nbytes = nbytes
        self.graph_kind = "stored on the device" if m == n else f"stored on the device for {m / n:.0%} of the states"
        if self.host_states > m:
            self.graph_kind += f", in the host's memory for {(self.host_states - m) / n:.0%}"
        self.graph_seconds = time.perf_counter() - t0
        if self.log:
            self.log(f"gpu: stored graph of {part:,} outcomes"
                     + (f" (ranks below {m:,})" if m < n else "")
                     + f", {self.nbytes / 2**30:.2f} GiB on the device (built in {self.graph_seconds:.1f} s)")

    def _store_host(self, offsets: np.ndarray, m: int) -> None:
        """The graph of the ranks from ``m`` on, as many whole launches as fit in ``host_graph``
        bytes (None: HOST_GRAPH_SHARE of the host's available memory), in the host's page-locked
        memory: generated on the device a launch at a time and copied over. Sweeps copy it back a
        launch at a time (``_staged``). Where the memory cannot be page-locked, those ranks
        regenerate instead."""
        n, G, L = self.n, int(self.spec.ngroups), self.launch
        budget = int(HOST_GRAPH_SHARE * available_bytes()) if self.host_graph is None else int(self.host_graph)
        rel = offsets[m:] - offsets[m]
        h = m + graph_prefix(rel, G, L, budget)
        if h <= m:
            return
        edges = list(range(m, h, L)) + [h]
        widest = max(int(offsets[b] - offsets[a]) for a, b in zip(edges[:-1], edges[1:]))
        try:
            H = (self._host_array(h - m + 1, np.int64), self._host_array((h - m, G), np.uint8),
                 self._host_array(max(1, int(rel[h - m])), np.int32))
        except Exception as exc:  # noqa: BLE001  (no page-locked memory: those ranks regenerate)
            if self.log:
                self.log(f"gpu: no page-locked host memory for the rest of the graph ({exc}); "
                         f"ranks from {m:,} regenerate")
            return
        H[0][:] = offsets[m:h + 1]
        def staging() -> tuple[Any, Any, Any]:  # one launch's offsets, group sizes and codes
            return (self._empty((L + 1,), np.int64), self._empty((L, G), np.uint8),
                    self._empty((max(1, widest),), np.int32))
        self.stage = staging()
        if self.target == "cuda":  # a second set: one piece copies in while a kernel reads the other
            try:
                self.stage2 = staging()
            except Exception:  # noqa: BLE001  (no room: the pieces are copied and swept in turn)
                self.stage2 = None
        self.H = H
        self.host_states = h
        for a, b in zip(edges[:-1], edges[1:]):  # generated on the device, a launch at a time
            OFF, CNT, CODES = self._staged(a, b, fill=True)
            self._rows(True, self.noindex, OFF, CNT, CODES, b, start=a, base=a)
            c0, c1 = int(offsets[a] - offsets[m]), int(offsets[b] - offsets[m])
            self._copy_out(CNT[:b - a], H[1][a - m:b - m])
            if c1 > c0:
                self._copy_out(CODES[:c1 - c0], H[2][c0:c1])
        self.host_nbytes = graph_bytes(rel, G, h - m)
        if self.log:
            self.log(f"gpu: graph of ranks {m:,} to {h:,} ({(h - m) / n:.0%} of the states) in the host's page-locked "
                     f"memory, {self.host_nbytes / 2**30:.2f} GiB, copied to the device a launch at a time")

    def _host_array(self, shape: Any, dtype: Any) -> Any:
        return self.cuda.pinned_array(shape, dtype=dtype) if self.target == "cuda" else np.zeros(shape, dtype=dtype)

    def _copy_in(self, dev: Any, host: np.ndarray) -> None:
        if self.target == "cuda":
            dev.copy_to_device(host)
        else:
            dev[...] = host

    def _copy_in_async(self, dev: Any, host: np.ndarray, stream: Any) -> None:
        """A copy from page-locked host memory queued on ``stream`` (it returns at once)."""
        dev.copy_to_device(host, stream=stream)

    def _copy_out(self, dev: Any, host: np.ndarray) -> None:
        if self.target == "cuda":
            dev.copy_to_host(host)
        else:
            host[...] = dev

    def _staged(self, a: int, b: int, fill: bool = False, stage: Any = None, stream: Any = None) -> tuple[Any, Any, Any]:
        """The graph of ranks a..b-1 (inside one launch of the host's part) on the device: its
        offsets, and unless ``fill`` (the build writes them) its group sizes and codes, copied
        from the host's memory into the staging arrays (``stage``, default the first set; with
        ``stream``, copies queued on that stream, which return at once). Kernels read it with
        ``base`` a."""
        m = self.stored_states
        stage = self.stage if stage is None else stage
        assert stage is not None and self.H is not None, "the host's part of the graph is not stored"
        OFF, CNT, CODES = stage
        Hoff, Hcnt, Hcodes = self.H
        copy = self._copy_in if stream is None else (lambda dev, host: self._copy_in_async(dev, host, stream))
        copy(OFF[:b - a + 1], Hoff[a - m:b - m + 1])
        if not fill:
            c0, c1 = int(Hoff[a - m] - Hoff[0]), int(Hoff[b - m] - Hoff[0])
            copy(CNT[:b - a], Hcnt[a - m:b - m])
            if c1 > c0:
                copy(CODES[:c1 - c0], Hcodes[c0:c1])
        return OFF, CNT, CODES

    def _launches(self, parts: list[tuple[int, int, int]]) -> Iterator[tuple[int, int, int, Any, Any]]:
        """For each piece (a, b, kind) of ``parts``, in order: (a, b, kind, graph, stream), graph
        the (OFF, CNT, CODES, base) its kernel reads (None where it generates) and the stream to
        launch that kernel on; the caller launches it before asking for the next. On a GPU with
        both staging sets, the host part's pieces are copied in on a second stream, each while
        the kernel before it runs (a copy of a launch's codes takes about as long as sweeping
        them); events keep a copy from overwriting a set that a kernel still reads, and a kernel
        from reading one still arriving. The kernels keep their order on one stream, so the
        values are the ones the pieces swept in turn would give. Elsewhere: in turn."""
        if self.target != "cuda" or self.stage2 is None or not any(kind == HOST for _, _, kind in parts):
            for a, b, kind in parts:
                yield a, b, kind, (self._graph(a, b, kind) if kind != GENERATE else None), 0
            return
        if self._streams is None:
            self._streams = (self.cuda.stream(), self.cuda.stream())
        ks, cs = self._streams
        assert self.stage is not None, "a host piece needs both staging sets"
        sets = (self.stage, self.stage2)
        hosts = [i for i, (_, _, kind) in enumerate(parts) if kind == HOST]
        arriving: dict[int, tuple[int, Any]] = {}  # piece -> (its staging set, the event of its copy)
        read: list[Any] = [None, None]  # per set: the event after the last kernel that reads it
        issued = 0

        def fetch(i: int) -> None:
            nonlocal issued
            k = issued % 2
            issued += 1
            if read[k] is not None:
                read[k].wait(cs)  # the kernel that reads this set before must be done with it
            self._staged(parts[i][0], parts[i][1], stage=sets[k], stream=cs)
            arrived = self.cuda.event()
            arrived.record(cs)
            arriving[i] = (k, arrived)

        fetch(hosts[0])
        ahead = 1
        for i, (a, b, kind) in enumerate(parts):
            if kind == HOST:
                k, arrived = arriving.pop(i)
                arrived.wait(ks)
                if ahead < len(hosts):  # the next piece's copy, into the other set, beside this kernel
                    fetch(hosts[ahead])
                    ahead += 1
                yield a, b, kind, (*sets[k], a), ks
                done = self.cuda.event()
                done.record(ks)
                read[k] = done
            else:
                yield a, b, kind, (self._graph(a, b, kind) if kind != GENERATE else None), ks
        ks.synchronize()

    def _rows(self, fill: bool, sizes: Any, OFF: Any, CNT: Any, CODES: Any, stop: int, start: int = 0,
              base: int = 0) -> None:
        """The kernel ``graph_rows`` over ranks start..stop-1: count each state's distinct codes into
        ``sizes``, or with ``fill`` write them into (OFF, CNT, CODES), whose rows hold ranks from
        ``base`` on (a launch of the host's part: ``_store_host``)."""
        if self.target == "cuda":
            _, err = self._scalars()
            for a, b in self._pieces(start, stop):
                self.k["graph_rows"][(b - a + self.tpb - 1) // self.tpb, self.tpb](self.T, a, b, fill, sizes, OFF, CNT,
                                                                                   CODES, err, base)
            self._check(err)
        else:
            got = int(self.k["graph_rows"](self.T, start, stop, fill, sizes, OFF, CNT, CODES, base,
                                           *self._buffers()))
            self._check(-got)  # 1: the generator's bound, 2: a row of another length than counted

    def stored_groups(self, rank: int) -> list[list[int]]:
        """The stored graph's codes of one state, group by group (copied from the device)."""
        if self.CODES is None or not 0 <= rank < self.stored_states:
            raise RuntimeError(f"no stored graph on the device for rank {rank}")
        if self.target == "cuda":
            a, b = (int(x) for x in self.OFF[rank:rank + 2].copy_to_host())
            counts = self.CNT[rank].copy_to_host().tolist()
            codes = self.CODES[a:b].copy_to_host().tolist() if b > a else []
        else:
            a, b = int(self.OFF[rank]), int(self.OFF[rank + 1])
            counts, codes = self.CNT[rank].tolist(), self.CODES[a:b].tolist()
        return _grouped(codes, counts)

    # ---- device arrays --------------------------------------------------------------------

    def _to_device(self, a: np.ndarray) -> Any:
        return self.cuda.to_device(a) if self.target == "cuda" else a.copy()

    def _empty(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """An uninitialised device array (no host array of that size is made)."""
        if self.target == "cuda":
            return self.cuda.device_array(shape, dtype=dtype)
        return np.zeros(shape, dtype=dtype)

    def _put(self, dev: Any, host: np.ndarray) -> None:
        if self.target == "cuda":
            dev.copy_to_device(host)
        else:
            np.copyto(dev, host)

    def _get(self, dev: Any, a: int, b: int, host: np.ndarray) -> None:
        if self.target == "cuda":
            dev[a:b].copy_to_host(host[a:b])  # straight into the host's array: no temporary of its size
        else:
            host[a:b] = dev[a:b]

    def _values(self, V: np.ndarray, upload: bool) -> None:
        """Make the device's values current: the host's copied over, unless policy sweeps have
        left the device ahead of this same host array (then the device's are the newer)."""
        if V.dtype != np.float32 or V.shape != (self.n,) or not V.flags.c_contiguous:
            raise InputError(f"the gpu backend sweeps float32 values of {self.n:,} states; "
                             f"got {V.dtype}{list(V.shape)}")
        same = self._mirrors(V)
        if not same:
            self._pin(V)
        if self.V is None:
            self.V = self._to_device(V)
        elif same and self._ahead:
            return
        elif upload or not same:
            self._put(self.V, V)
        self._host = (V.ctypes.data, V.shape)
        root = V
        while isinstance(root.base, np.ndarray):  # a view lives as long as the array it views
            root = root.base
        self._host_alive = weakref.ref(root)
        self._ahead = False

    def _pin(self, V: np.ndarray) -> None:
        """Page-lock the host array the device mirrors (``pin_host``), so that the two copies a
        full sweep makes (six pieces: 1 GB each way) go by DMA straight from and to it instead of
        through the driver's staging buffer. Only an optimisation: where the driver refuses (a
        simulator, a mapped file), the copies go the ordinary way."""
        self._pinned = None  # the last array's registration ends with its reference
        if not self.pin_host or self.target != "cuda" or V.nbytes < 1 << 24:
            return
        try:
            self._pinned = self.cuda.current_context().mempin(V, V.ctypes.data, V.nbytes)
        except Exception:  # noqa: BLE001  (not pinned: slower copies, the same values)
            self._pinned = None

    def sync(self, V: np.ndarray) -> None:
        """Bring the host's values up to the device's: policy sweeps leave the device ahead, and
        the walk's Anderson step reads the host's."""
        self._sync_host(V)

    def _mirrors(self, V: np.ndarray) -> bool:
        """Whether ``V`` is the host array the device's values mirror: at the same address, while
        the array recorded there still lives (the same array or a view of it). Once that array is
        freed a new one can be given its address, and must not count as the same."""
        return self._host == (V.ctypes.data, V.shape) and self._host_alive() is not None

    def _sync_host(self, V: np.ndarray) -> None:
        if self._ahead and self._mirrors(V):
            self._get(self.V, 0, self.n, V)
            self._ahead = False

    def _scalars(self) -> tuple[Any, Any]:
        worst = self._to_device(np.zeros(1, dtype=np.float32))
        err = self._to_device(np.zeros(1, dtype=np.int32))
        return worst, err

    def _check(self, err: Any) -> None:
        bad = int(err.copy_to_host()[0]) if self.target == "cuda" else int(err)
        if bad == 2:
            raise RuntimeError("building the stored graph: a state's distinct outcome codes were not as many "
                               "the second time it was generated; the device generator is not deterministic")
        if bad:
            raise RuntimeError("a state wrote more outcome codes than the game's max_outcomes; the device "
                               "generator's bound is wrong")

    def _buffers(self) -> tuple[np.ndarray, np.ndarray]:
        """The CPU target's outcome codes and scratch (the device's are per-thread local arrays)."""
        return (np.empty(self.spec.max_outcomes, dtype=np.int32), np.zeros(self.spec.scratch_size, dtype=np.int64))

    def _pieces(self, start: int, stop: int, indexed: bool = False) -> list[tuple[int, int]]:
        """The launches of a sweep over start..stop-1, in order: LAUNCH_STATES ranks each; a
        subset's positions (``indexed``) in at least SUBSET_PIECES launches of nearly equal size."""
        if indexed and stop > start:
            k = max(SUBSET_PIECES, -(-(stop - start) // self.launch))
            edges = sorted({start + (stop - start) * i // k for i in range(k + 1)})
            return list(zip(edges[:-1], edges[1:]))
        return [(a, min(stop, a + self.launch)) for a in range(start, stop, self.launch)]

    def _parts(self, start: int, stop: int, indexed: bool = False, below: int = 0) -> list[tuple[int, int, int]]:
        """``_pieces``, each with where its states get their outcomes: DEVICE (ranks below
        ``stored_states``: the stored graph in device memory), HOST (up to ``host_states``: the
        graph in the host's memory, copied in a launch at a time, so those pieces are also cut at
        whole launches) or GENERATE. A piece that straddles an edge is cut there. For a subset
        (``indexed``) the pieces are its positions, ``below`` of them (its first) in the device's
        graph, the others generating (a subset is a few scattered states)."""
        cut = below if indexed else self.stored_states
        host = cut if indexed else max(cut, self.host_states)
        parts: list[tuple[int, int, int]] = []
        for a, b in self._pieces(start, stop, indexed):
            for lo, hi, kind in ((a, min(b, cut), DEVICE), (max(a, cut), min(b, host), HOST),
                                 (max(a, host), b, GENERATE)):
                if kind == HOST:  # whole launches: the staging arrays hold one
                    edges = [lo] + list(range((lo // self.launch + 1) * self.launch, hi, self.launch)) + [hi]
                    parts += [(x, y, HOST) for x, y in zip(edges[:-1], edges[1:]) if y > x]
                elif hi > lo:
                    parts.append((lo, hi, kind))
        return parts

    def _graph(self, a: int, b: int, kind: int) -> tuple[Any, Any, Any, int]:
        """The graph a DEVICE or HOST piece a..b-1 reads, and the rank its rows start at."""
        if kind == DEVICE:
            return self.OFF, self.CNT, self.CODES, 0
        return (*self._staged(a, b), a)

    # ---- the engine's interface -----------------------------------------------------------

    device_hot_sets = True  # ``hot_set``: the walk's hot sets found in device memory (False: by the host)
    subset_sweeps = True  # ``sweep`` backs up a list of states alone (the endless check's local repair)
    hot_sets = True  # ``evaluate`` sweeps a list of states and marks the ones it changed (the walk's hot rounds)

    def _index(self, subset: Any) -> tuple[Any, bool, int]:
        """The device's copy of the ranks ``subset`` (increasing, inside the state space), whether
        there is one, and its length. The walk sweeps one hot set many times: the same array is
        copied over once. A ``DeviceSubset`` (``hot_set``) is on the device already."""
        if subset is None:
            return self.noindex, False, 0
        if isinstance(subset, DeviceSubset):
            return subset.ranks, True, subset.size
        if self._subset is not None and self._subset[0] is subset:
            return self._subset[1], True, int(subset.shape[0])
        sub = np.ascontiguousarray(subset, dtype=np.int64)
        m = int(sub.shape[0])
        if m and (sub[0] < 0 or sub[-1] >= self.n or np.any(np.diff(sub) <= 0)):
            raise ValueError(f"subset must be increasing ranks in 0..{self.n - 1}")
        dev = self._to_device(sub) if m else self.noindex
        self._subset = (subset, dev)  # the caller's array is held, so its identity means its ranks
        return dev, True, m

    def _below(self, subset: Any) -> int:
        """How many of the ranks ``subset`` (increasing) lie inside the stored graph."""
        if subset is None:
            return 0
        if isinstance(subset, DeviceSubset):
            return subset.below
        return int(np.searchsorted(subset, self.stored_states))

    def _marks(self, mark: np.ndarray | None) -> tuple[Any, bool]:
        """The device's copy of the host's marks (a byte a state), or a placeholder."""
        if mark is None:
            return self.nomark, False
        if mark.shape != (self.n,) or mark.dtype != np.uint8:
            raise ValueError(f"mark array has {mark.shape} entries of {mark.dtype}; expected one byte a state ({self.n})")
        if self.hot is None:
            self.hot = self._to_device(mark)
        else:
            self._put(self.hot, mark)
        return self.hot, True

    def _gather(self, S: Any, m: int, V: np.ndarray, subset: Any) -> None:
        """The host's values of the states ``subset`` made the device's (only those changed)."""
        if isinstance(subset, DeviceSubset):
            subset = subset.host()
        if self.target == "cuda":
            got = self._empty((m,), np.float32)
            self.k["gather"][(m + self.tpb - 1) // self.tpb, self.tpb](self.V, S, got)
            V[subset] = got.copy_to_host()
        else:
            V[subset] = self.V[subset]

    def sweep(self, V: np.ndarray, threads: int = 1, start: int = 0, stop: int = -1, write: bool = True,
              policy: np.ndarray | None = None, discount: float = 1.0, out: np.ndarray | None = None,
              subset: np.ndarray | None = None) -> float:
        """One sweep over ranks start..stop-1 in place on the device; returns the largest change
        (``write=False``: the Bellman residual, nothing written). With ``policy`` (any array: the
        policy itself stays on the device) the greedy codes are recorded there. ``out``: a Jacobi
        sweep instead, every new value computed from the old ones and written to ``out`` (host),
        the values left as they were. ``subset``: back up only these ranks (increasing) instead
        of start..stop-1 (the endless check's local repair)."""
        stop = self.n if stop < 0 else int(stop)
        if not 0 <= start <= stop <= self.n:
            raise ValueError(f"ranks {start}..{stop} outside the state space (0..{self.n})")
        if not 0.0 < discount <= 1.0:
            raise ValueError("discount must be in (0, 1]")
        if subset is not None and out is not None:
            raise ValueError("a Jacobi sweep (out) covers ranks, not a subset")
        S, indexed, m = self._index(subset)
        if indexed:
            start, stop = 0, m
        g = np.float32(discount)
        self._values(V, upload=True)
        record = policy is not None
        if record and self.policy is None:  # every row is written before a policy sweep reads it
            self.policy = self._empty((self.n, self.R), np.int32)
        P = self.policy if record else self.nopolicy
        dst = self.V if out is None else self._empty((self.n,), np.float32)
        write = write or out is not None
        worst = 0.0
        parts = self._parts(start, stop, indexed, self._below(subset))
        if self.target == "cuda":
            w, err = self._scalars()
            for a, b, kind, graph, stream in self._launches(parts):
                blocks = (b - a + self.tpb - 1) // self.tpb
                if graph is not None:
                    OFF, CNT, CODES, base = graph
                    self.k["sweep_stored"][blocks, self.tpb, stream](OFF, CNT, CODES, self.V, dst, a, b, g, self.RP,
                                                                     self.RG, P, record, write, S, indexed, w, base)
                else:
                    self.k["sweep"][blocks, self.tpb, stream](self.T, self.V, dst, a, b, g, self.RP, self.RG, P,
                                                              record, write, S, indexed, w, err)
            self._check(err)
            worst = float(w.copy_to_host()[0])
        else:
            for a, b, kind in parts:
                if kind != GENERATE:
                    OFF, CNT, CODES, base = self._graph(a, b, kind)
                    got = float(self.k["sweep_stored"](OFF, CNT, CODES, self.V, dst, a, b, g, self.RP, self.RG, P,
                                                       record, write, S, indexed, base))
                else:
                    got = float(self.k["sweep"](self.T, self.V, dst, a, b, g, self.RP, self.RG, P, record, write,
                                                S, indexed, *self._buffers()))
                self._check(got < 0)
                worst = max(worst, got)
        if out is not None:
            self._get(dst, start, stop, out)
        elif write and self._ahead:  # the device was ahead outside the range too
            self._get(self.V, 0, self.n, V)
            self._ahead = False
        elif write and indexed:
            if m:
                self._gather(S, m, V, subset)
        elif write:
            self._get(self.V, start, stop, V)
        return worst

    def evaluate(self, policy: np.ndarray, V: np.ndarray, threads: int = 1, discount: float = 1.0,
                 start: int = 0, stop: int = -1, subset: np.ndarray | None = None,
                 mark: np.ndarray | None = None, above: float = 0.0) -> float:
        """One sweep of the greedy policy recorded by the last sweep with a policy, over ranks
        start..stop-1 (or the increasing ranks ``subset``, a hot set), in place on the device (the
        host's copy catches up at the next full sweep or check). ``mark``: a byte a state, set to
        1 where this sweep changed the value by more than ``above`` (left alone elsewhere)."""
        if self.policy is None:
            raise RuntimeError("no policy recorded yet: sweep with a policy first")
        stop = self.n if stop < 0 else int(stop)
        if not 0 <= start <= stop <= self.n:
            raise ValueError(f"ranks {start}..{stop} outside the state space (0..{self.n})")
        S, indexed, m = self._index(subset)
        if indexed:
            start, stop = 0, m
        M, marking = self._marks(mark)
        self._values(V, upload=False)
        g = np.float32(discount)
        hot = np.float32(above)
        worst = 0.0
        if self.target == "cuda":
            w, _ = self._scalars()
            for a, b in self._pieces(start, stop, indexed):
                blocks = (b - a + self.tpb - 1) // self.tpb
                self.k["evaluate"][blocks, self.tpb](self.policy, self.V, a, b, g, self.RP, S, indexed, M, marking,
                                                     hot, w)
            worst = float(w.copy_to_host()[0])
        else:
            worst = float(self.k["evaluate"](self.policy, self.V, start, stop, g, self.RP, S, indexed, M, marking,
                                             hot))
        if marking:
            assert mark is not None
            self._get(M, 0, self.n, mark)
        self._ahead = True
        return worst

    def hot_set(self, policy: np.ndarray, V: np.ndarray, threads: int = 1, discount: float = 1.0,
                above: float = 0.0, most: int | None = None) -> tuple[float, "DeviceSubset | None", int]:
        """A policy sweep of every state (``evaluate``) that marks, in device memory, the states it
        changed by more than ``above``, then gathers their ranks there in increasing order: returns
        (its largest change, the hot set, how many states it holds). The hot set is a handle that
        ``evaluate`` and ``sweep`` take as ``subset``; None where it would hold more than ``most``
        states (then it is not gathered). Only a count and the chunks' counts cross to the host:
        with the host's marks (``evaluate(mark=...)``) a byte a state crossed both ways, then was
        scanned on the host, every round (six pieces: 255 MB each way)."""
        if self.policy is None:
            raise RuntimeError("no policy recorded yet: sweep with a policy first")
        if self.target != "cuda":  # numba's CPU JIT: the host's marks are the device's
            mark = np.zeros(self.n, dtype=np.uint8)
            change = self.evaluate(policy, V, threads=threads, discount=discount, mark=mark, above=above)
            size = int(np.count_nonzero(mark))
            if most is not None and size > most:
                return change, None, size
            ranks = np.flatnonzero(mark).astype(np.int64)
            return change, DeviceSubset(ranks, size, self._below(ranks)), size
        if self.hot is None:
            self.hot = self._empty((self.n,), np.uint8)
        self.k["clear"][(self.n + self.tpb - 1) // self.tpb, self.tpb](self.hot)
        self._values(V, upload=False)
        g, hot = np.float32(discount), np.float32(above)
        w, _ = self._scalars()
        for a, b in self._pieces(0, self.n):
            self.k["evaluate"][(b - a + self.tpb - 1) // self.tpb, self.tpb](
                self.policy, self.V, a, b, g, self.RP, self.noindex, False, self.hot, True, hot, w)
        self._ahead = True
        change = float(w.copy_to_host()[0])
        chunks = (self.n + HOT_CHUNK - 1) // HOT_CHUNK
        counts = self._empty((chunks,), np.int64)
        grid = ((chunks + self.tpb - 1) // self.tpb, self.tpb)
        self.k["count_marks"][grid](self.hot, HOT_CHUNK, counts)
        starts = np.zeros(chunks + 1, dtype=np.int64)
        np.cumsum(counts.copy_to_host(), out=starts[1:])
        size = int(starts[-1])
        if most is not None and size > most:
            return change, None, size
        ranks = self._empty((max(1, size),), np.int64)
        self.k["write_marks"][grid](self.hot, HOT_CHUNK, self._to_device(starts[:-1]), ranks)
        # the marks below the stored graph's edge: the whole chunks' counts, then the rest of its chunk
        c, rest = divmod(self.stored_states, HOT_CHUNK)
        below = size if self.stored_states >= self.n else int(starts[c])
        if rest and self.stored_states < self.n:
            below += int(np.count_nonzero(self.hot[c * HOT_CHUNK:self.stored_states].copy_to_host()))
        return change, DeviceSubset(ranks, size, below), size

    def endless_pass(self, V: np.ndarray, good: np.ndarray, eps: float, threads: int = 1,
                     first: bool = False, start: int = 0, stop: int = -1) -> int:
        """One pass of the endless check over ranks start..stop-1 (marks in place: a state may
        see marks of this pass); returns the states it marked."""
        if good.shape != (self.n,) or good.dtype != np.uint8:
            raise ValueError("mark array does not fit the state space")
        stop = self.n if stop < 0 else int(stop)
        if not 0 <= start <= stop <= self.n:
            raise ValueError(f"ranks {start}..{stop} outside the state space (0..{self.n})")
        if first:  # the values stay fixed for the whole check: bring the host's copy up to date, then use it
            self._sync_host(V)
            self._values(V, upload=True)
        if self.good is None:
            self.good = self._to_device(good)
        else:
            self._put(self.good, good)
        e = np.float32(eps)
        added = 0
        if self.target == "cuda":
            total = self._to_device(np.zeros(1, dtype=np.int64))
            _, err = self._scalars()
            for a, b, kind, graph, stream in self._launches(self._parts(start, stop)):
                blocks = (b - a + self.tpb - 1) // self.tpb
                if graph is not None:
                    OFF, CNT, CODES, base = graph
                    self.k["endless_stored"][blocks, self.tpb, stream](OFF, CNT, CODES, self.V, self.good, e, first,
                                                                       a, b, self.RG, total, base)
                else:
                    self.k["endless"][blocks, self.tpb, stream](self.T, self.V, self.good, e, first, a, b, self.RG,
                                                                total, err)
            self._check(err)
            added = int(total.copy_to_host()[0])
        else:
            for a, b, kind in self._parts(start, stop):
                if kind != GENERATE:
                    OFF, CNT, CODES, base = self._graph(a, b, kind)
                    got = int(self.k["endless_stored"](OFF, CNT, CODES, self.V, self.good, e, first, a, b, self.RG,
                                                       base))
                else:
                    got = int(self.k["endless"](self.T, self.V, self.good, e, first, a, b, self.RG, *self._buffers()))
                    self._check(got < 0)
                added += got
        self._get(self.good, start, stop, good)
        return added

    def outcomes(self, ranks: np.ndarray) -> list[list[list[int]]]:
        """The outcome codes of the states ``ranks``, group by group, as the device's generator
        writes them (on the GPU; in order with numba's CPU JIT)."""
        ranks = np.ascontiguousarray(ranks, dtype=np.int64)
        m, G = ranks.shape[0], int(self.spec.ngroups)
        codes = np.zeros((m, self.spec.max_outcomes), dtype=np.int32)
        counts = np.zeros((m, G), dtype=np.int64)
        written = np.zeros(m, dtype=np.int64)
        if self.target == "cuda" and m:
            d = [self._to_device(a) for a in (ranks, codes, counts, written)]
            self.k["outcomes"][(m + self.tpb - 1) // self.tpb, self.tpb](self.T, *d)
            codes, counts, written = (x.copy_to_host() for x in d[1:])
        else:
            scratch = np.zeros(self.spec.scratch_size, dtype=np.int64)
            for i in range(m):
                written[i] = self.k["generate"](self.T, int(ranks[i]), codes[i], counts[i], scratch)
        if np.any(written < 0):
            raise RuntimeError("a state wrote more outcome codes than the game's max_outcomes")
        return [_grouped(codes[i].tolist(), counts[i].tolist()) for i in range(m)]

    def policy_apply(self, policy: np.ndarray, x: np.ndarray, out: np.ndarray, **kw: Any) -> None:
        raise InputError("the gpu backend runs the walk and plain sweeps; the policy method is not on the GPU")

    def close(self) -> None:
        """Let the device arrays go (numba frees them with their last reference)."""
        self.V = self.good = self.policy = self.hot = None
        self.OFF = self.CNT = self.CODES = None
        self.H = self.stage = self.stage2 = None  # the host's page-locked part of the graph and its staging arrays
        self._subset = None
        self.T = ()
        self._host = None
        self._pinned = None

    def __enter__(self) -> "GpuEngine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def graph_bytes(offsets: np.ndarray, groups: int, m: int) -> int:
    """The stored graph's bytes for ranks 0..m-1 (``offsets``: where each state's codes start, n + 1
    of them): offsets (8 bytes a state), group sizes (a byte a group) and codes (4 bytes each)."""
    return int(8 * (m + 1) + groups * m + 4 * int(offsets[m]))


def graph_prefix(offsets: np.ndarray, groups: int, step: int, budget: int) -> int:
    """The most ranks, a multiple of ``step`` (or all of them), whose stored graph fits in
    ``budget`` bytes (0 where none does)."""
    n = offsets.shape[0] - 1
    ends = np.append(np.arange(step, n, step, dtype=np.int64), n)
    need = 8 * (ends + 1) + groups * ends + 4 * offsets[ends]
    fits = np.flatnonzero(need <= budget)
    return int(ends[fits[-1]]) if fits.size else 0


class DeviceSubset:
    """A hot set that ``GpuEngine.hot_set`` gathered: ``size`` increasing ranks in the device array
    ``ranks`` (a host array on numba's CPU target), ``below`` of them ranks the stored graph holds."""

    __slots__ = ("below", "ranks", "size")

    def __init__(self, ranks: Any, size: int, below: int) -> None:
        self.ranks = ranks
        self.size = size
        self.below = below  # how many of them lie inside the stored graph (its first)

    def host(self) -> np.ndarray:
        """The ranks in the host's memory."""
        got = self.ranks if isinstance(self.ranks, np.ndarray) else self.ranks.copy_to_host()
        return np.asarray(got[:self.size], dtype=np.int64)


def _grouped(codes: list[int], counts: list[int]) -> list[list[int]]:
    """A state's codes split into its groups by the groups' sizes."""
    out, at = [], 0
    for c in counts:
        out.append(codes[at:at + c])
        at += c
    return out


def import_numba() -> Any:
    _numpy_for_numba()
    try:
        import numba
    except ImportError:
        raise InputError(f"the gpu backend needs numba, which is not installed; install the extra: {GPU_EXTRA}") \
            from None
    return numba


if TYPE_CHECKING:  # mypy holds the GPU engine to the solve's interface
    from gamesolver.solver.stochastic.engine import DeviceHotSets, Engine, SubsetSweeps

    _gpu: type[Engine] = GpuEngine
    _gpu_extras: tuple[type[SubsetSweeps], type[DeviceHotSets]] = (GpuEngine, GpuEngine)
