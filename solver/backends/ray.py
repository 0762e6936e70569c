"""Sweeps split by rank ranges across Ray actors: the engine ``solve_values`` drives when a run
outgrows one machine (``solve_values(..., engine=RayEngine(...))``; the optional extra
``pip install "gamesolver[ray]"``). Ray is imported only here, and only when an engine starts.

Each actor builds its own game once (from a small picklable factory: the game's C state does not
pickle) and owns one rank range. A sweep puts the values in Ray's object store once; every actor
copies them into its private array, sweeps its range there (Gauss-Seidel inside the range, with
its OpenMP threads) and returns its slice, which the driver writes back. Between ranges a sweep is
therefore Jacobi: a range sees the other ranges' values of the sweep before. The fixed point is
the same; the sweeps to reach it can be a few more. The walk's greedy policy stays in the actors
(each records its range's rows, in an array whose other rows are never touched, so they cost no
memory), so the driver holds only the values. The endless check runs pass by pass the same way,
each range marking its own states from the marks of the pass before.

The driver writes the checkpoints, as in a single-process run. An actor that dies is replaced and
its range redone from the same inputs, so a lost worker costs its part of one sweep, not the run;
a replacement that needs the policy first records it from the current values.
"""
from __future__ import annotations

import mmap
import socket
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from gamesolver.solver.stochastic.engine import Log
from gamesolver.solver.stochastic import _engine as kernels
from gamesolver.solver.errors import InputError

RAY_EXTRA = 'pip install "gamesolver[ray]"'
RETRIES = 3  # replacements of one range's actor within one call before the run gives up
_COST_SAMPLE = 4096  # states sampled to balance the ranges by their outcome counts


class WorkerLostError(RuntimeError):
    """A range's actor died again after every replacement (a node that keeps failing, or a range
    that does not fit in its worker's memory)."""


def import_ray() -> Any:
    """The ``ray`` module, or one InputError naming the extra to install."""
    try:
        import ray
    except ImportError:
        raise InputError(f"the ray backend needs Ray, which is not installed; install the extra: {RAY_EXTRA}") \
            from None
    return ray


def reachable(address: str | None, timeout: float = 5.0) -> None:
    """An InputError unless a cluster's ``host:port`` accepts a connection: for an address where
    no cluster runs, ``ray.init`` retries for minutes before it fails."""
    if address is None or address == "auto" or "://" in address or ":" not in address:
        return
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except ValueError:
        raise InputError(f"Ray cluster address {address!r} is not HOST:PORT") from None
    except OSError as exc:
        raise InputError(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}; start it with "
                         "'ray start --head' there, or give its HOST:PORT") from None


def start_ray(ray: Any, address: str | None, init_options: dict[str, Any] | None = None) -> bool:
    """Join the cluster at ``address`` (or start a local Ray) unless this process is in one
    already; True when it started or joined one here (the caller shuts it down)."""
    if ray.is_initialized():
        return False
    reachable(address)
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, **(init_options or {}))
    except ConnectionError as exc:
        raise InputError(f"cannot reach the Ray cluster at {address!r}: {exc}") from None
    return True


def split_ranges(game: kernels.StochasticGame, workers: int, sample: int = _COST_SAMPLE) -> list[tuple[int, int]]:
    """``workers`` rank ranges covering the state space in order, balanced by the distinct
    outcomes of evenly spaced sample states (a sweep's cost grows with them: the tiers with many
    pieces cost several times the tiers with few)."""
    n = game.state_count
    workers = max(1, min(workers, n))
    ranks = np.unique(np.linspace(0, n - 1, num=min(n, sample)).astype(np.int64))
    cost = np.array([kernels.graph_codes(game, int(r)) + 1 for r in ranks], dtype=np.float64)
    # each sampled state stands for the ranks up to the next sample
    width = np.diff(np.append(ranks, n)).astype(np.float64)
    cumulative = np.cumsum(cost * width)
    cuts = [0]
    for w in range(1, workers):
        i = int(np.searchsorted(cumulative, cumulative[-1] * w / workers))
        cuts.append(max(cuts[-1], int(ranks[min(i + 1, ranks.size - 1)])))
    cuts.append(n)
    return [(a, b) for a, b in zip(cuts, cuts[1:])]


def _sparse(shape: tuple[int, int], dtype: Any) -> np.ndarray:
    """A zeroed array of ``shape`` whose pages take memory only once written (an anonymous map
    without swap reservation): an actor's full-shape policy of which it writes one range."""
    count = int(shape[0]) * int(shape[1])
    size = max(1, count * np.dtype(dtype).itemsize)
    flags = mmap.MAP_PRIVATE | getattr(mmap, "MAP_ANONYMOUS", 0x20) | getattr(mmap, "MAP_NORESERVE", 0)
    buf = mmap.mmap(-1, size, flags=flags)
    return np.frombuffer(buf, dtype=dtype, count=count).reshape(shape)


class RangeWorker:
    """One Ray actor's state: the game, its range, a private copy of the values, its policy rows.
    Methods take the shared arrays (read-only views of the object store) and return their range's
    part of the result."""

    def __init__(self, factory: Callable[[], Any], start: int, stop: int, threads: int) -> None:
        self.game = factory()
        self.start, self.stop, self.threads = int(start), int(stop), max(1, int(threads))
        self.values: np.ndarray | None = None
        self.policy: np.ndarray | None = None
        self.marks: np.ndarray | None = None

    def _local(self, shared: np.ndarray) -> np.ndarray:
        if self.values is None or self.values.dtype != shared.dtype:
            self.values = np.empty_like(shared)
        np.copyto(self.values, shared)
        return self.values

    def _policy(self) -> np.ndarray:
        if self.policy is None:
            self.policy = _sparse((self.game.state_count, self.game.roll_count), np.int32)
        return self.policy

    def sweep(self, shared: np.ndarray, start: int, stop: int, write: bool, policy: bool,
              discount: float) -> tuple[float, np.ndarray | None]:
        V = self._local(shared)
        change = kernels.sweep(self.game, V, threads=self.threads, start=start, stop=stop, write=write,
                               policy=self._policy() if policy else None, discount=discount)
        return float(change), (V[start:stop] if write else None)

    def evaluate(self, shared: np.ndarray, discount: float) -> tuple[float, np.ndarray, bool]:
        """One sweep of this range's recorded policy; a fresh actor (a replacement) records the
        greedy policy of the current values first (returned flag True)."""
        V = self._local(shared)
        fresh = self.policy is None
        if fresh:
            kernels.sweep(self.game, V, threads=self.threads, start=self.start, stop=self.stop, write=False,
                          policy=self._policy(), discount=discount)
        change = kernels.evaluate(self.game, self._policy(), V, threads=self.threads, discount=discount,
                                  start=self.start, stop=self.stop)
        return float(change), V[self.start:self.stop], fresh

    def endless_pass(self, shared: np.ndarray, marks: np.ndarray, eps: float, first: bool) -> tuple[int, np.ndarray]:
        if self.marks is None or self.marks.shape != marks.shape:
            self.marks = np.empty_like(marks)
        np.copyto(self.marks, marks)
        added = kernels.endless_pass(self.game, shared, self.marks, eps, threads=self.threads, first=first,
                                     start=self.start, stop=self.stop)
        return int(added), self.marks[self.start:self.stop]

    def ping(self) -> tuple[int, int]:
        return self.start, self.stop


class RayEngine:
    """The solver's engine interface (``sweep``, ``evaluate``, ``endless_pass``), each call split
    across Ray actors by rank range.

    ``factory``: a picklable callable with no arguments that returns the game (e.g.
    ``functools.partial(kernel, options)``); every actor calls it once. ``game``: the driver's own
    copy, used to balance the ranges. ``workers`` actors with ``threads`` OpenMP threads each
    (``num_cpus=threads`` in Ray's accounting; by default as many threads as the smallest node
    has CPUs, and as many workers as the cluster's CPUs hold: one a node, since every worker
    keeps a whole copy of the values). ``address``: the cluster to join (``ray.init``'s
    address; None starts a local one on this machine unless this process has joined one already).
    """

    stored = False
    nbytes = 0
    name = "ray"
    chunk = 1 << 62  # the solver's progress chunks would cost one round trip each: sweep whole

    def __init__(self, factory: Callable[[], Any], game: kernels.StochasticGame, *, workers: int | None = None, threads: int | None = None,
                 address: str | None = None, log: Log | None = None,
                 init_options: dict[str, Any] | None = None) -> None:
        ray = import_ray()
        if threads is not None and threads < 1:
            raise InputError("threads per worker must be at least 1")
        if workers is not None and workers < 1:
            raise InputError("workers must be at least 1")
        self.ray = ray
        self.log = log
        self.factory = factory
        self.started_ray = start_ray(ray, address, init_options)
        cpus = [int(node["Resources"].get("CPU", 0)) for node in ray.nodes() if node.get("Alive")]
        cpus = [c for c in cpus if c > 0] or [1]
        if threads is None:  # one worker a node by default: each holds a whole copy of the values
            threads = min(cpus)
        self.threads = threads
        if workers is None:
            workers = max(1, sum(c // threads for c in cpus))
        # actors that no node can place would wait for ever: refuse them here instead
        if threads > max(cpus) or workers > sum(c // threads for c in cpus):
            self._stop_ray()
            raise InputError(f"{workers} workers of {threads} threads do not fit the Ray cluster's CPUs "
                             f"({', '.join(map(str, cpus))} a node); use fewer --workers or --threads")
        self.ranges = split_ranges(game, workers)
        self.game = game
        self._remote = ray.remote(RangeWorker)
        self.actors = [self._spawn(a, b) for a, b in self.ranges]
        self.replaced = 0
        self._shared_values: Any = None  # the endless check's values, put once per check
        ray.get([actor.ping.remote() for actor in self.actors])  # fail here, not in the first sweep
        if log:
            log(f"ray: {len(self.actors)} workers x {threads} threads; ranges "
                + ", ".join(f"{a:,}-{b:,}" for a, b in self.ranges))

    def _spawn(self, start: int, stop: int) -> Any:
        return self._remote.options(num_cpus=self.threads).remote(self.factory, start, stop, self.threads)

    def _replace(self, i: int, exc: BaseException) -> None:
        a, b = self.ranges[i]
        try:
            self.ray.kill(self.actors[i], no_restart=True)
        except Exception:  # noqa: BLE001  (it is dead already; nothing to clean up)
            pass
        self.actors[i] = self._spawn(a, b)
        self.replaced += 1
        if self.log:
            self.log(f"ray: worker for ranks {a:,}-{b:,} lost ({type(exc).__name__}); replaced, its range redone")

    def _round(self, submit: Callable[[Any, int], Any], which: list[int]) -> dict[int, Any]:
        """Submit one call per range in ``which``, collect the results; a dead actor is replaced
        and its call submitted again (at most RETRIES times per range)."""
        lost = (self.ray.exceptions.RayActorError, self.ray.exceptions.WorkerCrashedError)
        pending = {i: submit(self.actors[i], i) for i in which}
        out: dict[int, Any] = {}
        for i in which:
            for attempt in range(RETRIES + 1):
                try:
                    out[i] = self.ray.get(pending[i])
                    break
                except lost as exc:
                    if attempt == RETRIES:
                        a, b = self.ranges[i]
                        raise WorkerLostError(f"the worker for ranks {a:,}-{b:,} died {RETRIES + 1} times in "
                                              f"one call; last: {exc}") from None
                    self._replace(i, exc)
                    pending[i] = submit(self.actors[i], i)
        return out

    def _parts(self, start: int, stop: int) -> dict[int, tuple[int, int]]:
        """The parts of ranks start..stop-1 that each range holds."""
        parts = {}
        for i, (a, b) in enumerate(self.ranges):
            lo, hi = max(a, start), min(b, stop)
            if lo < hi:
                parts[i] = (lo, hi)
        return parts

    def sweep(self, V: np.ndarray, threads: int = 1, start: int = 0, stop: int = -1, write: bool = True,
              policy: np.ndarray | None = None, discount: float = 1.0) -> float:
        """A sweep over ranks start..stop-1 (Jacobi between ranges); with ``policy`` (any array: the
        policy itself stays in the actors) each actor records its rows."""
        stop = V.shape[0] if stop < 0 else stop
        parts = self._parts(start, stop)
        self._shared_values = None  # values change from here on: the check's copy is stale
        ref = self.ray.put(V)
        record = policy is not None
        out = self._round(lambda actor, i: actor.sweep.remote(ref, *parts[i], write, record, float(discount)),
                          list(parts))
        for i, (change, part) in out.items():
            if write:
                a, b = parts[i]
                V[a:b] = part
        return max((change for change, _ in out.values()), default=0.0)

    def evaluate(self, policy: np.ndarray, V: np.ndarray, threads: int = 1, discount: float = 1.0) -> float:
        """One sweep of the recorded policy (Jacobi between ranges)."""
        ref = self.ray.put(V)
        out = self._round(lambda actor, i: actor.evaluate.remote(ref, float(discount)), list(range(len(self.actors))))
        for i, (_, part, fresh) in out.items():
            a, b = self.ranges[i]
            V[a:b] = part
            if fresh and self.log:
                self.log(f"ray: the worker for ranks {a:,}-{b:,} recorded its policy again from the current values")
        return max(change for change, _, _ in out.values())

    def endless_pass(self, V: np.ndarray, good: np.ndarray, eps: float, threads: int = 1,
                     first: bool = False) -> int:
        """One pass of the endless check, each range marking its states from the last pass's marks."""
        if first or self._shared_values is None:
            self._shared_values = self.ray.put(V)  # the values stay fixed for the whole check
        shared = self._shared_values
        marks = self.ray.put(good)
        out = self._round(lambda actor, i: actor.endless_pass.remote(shared, marks, float(eps), first),
                          list(range(len(self.actors))))
        for i, (_, part) in out.items():
            a, b = self.ranges[i]
            good[a:b] = part
        return sum(added for added, _ in out.values())

    def policy_apply(self, policy: np.ndarray, x: np.ndarray, out: np.ndarray, **kw: Any) -> None:
        raise InputError("the ray backend runs the walk and plain sweeps; the policy method is not distributed")

    def close(self) -> None:
        """End the actors (and the local Ray instance, when this engine started it)."""
        for actor in self.actors:
            try:
                self.ray.kill(actor, no_restart=True)
            except Exception:  # noqa: BLE001  (already gone)
                pass
        self.actors = []
        self._shared_values = None
        self._stop_ray()

    def _stop_ray(self) -> None:
        if self.started_ray:
            self.ray.shutdown()
            self.started_ray = False

    def __enter__(self) -> "RayEngine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


if TYPE_CHECKING:  # mypy holds the Ray engine to the solve's interface
    from gamesolver.solver.stochastic.engine import Engine

    _ray: type[Engine] = RayEngine
