"""Planning a solve before it runs: the memory its method needs (``extra_bytes``, ``choose_method``,
``place_policy``), the disk its files need (``check_disk``) and the time it would take: one sweep
rate measured here (``seconds_per_state``) times the rounds such solves took (``estimate``, the
line a solve prints first; ``Projection``, the missing-table message and docs/design/backends.md).
These are projections: one measured rate times measured sweep counts, nothing more.
"""
from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gamesolver.solver.stochastic._engine import StochasticGame
from gamesolver.solver.errors import InputError
from gamesolver.solver.limits import duration
from gamesolver.solver.stochastic.outcomes import estimate_bytes, memory_bytes
from gamesolver.solver.stochastic.skip import BYTES_PER_STATE as SKIP_BYTES
from gamesolver.solver.tables.table import existing_ancestor
from gamesolver.solver.stochastic import checkpoint, schedule, walk


POLICY_PLACES = ("auto", "memory", "disk")  # where the walk keeps its policy (place_policy)
POLICY_BYTES_PER_ROLL = 4  # the walk's policy: an int32 outcome code a state and roll


def default_threads() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


# full sweeps (each with its policy sweeps) the walk takes on the fort rules: the walk 72-87 on
# K = 4, the walk before its longer hot sets 150 on K = 5 and 247 on its first, partly older, run
TYPICAL_SWEEPS = (100, 250)
# The walk's policy sweeps between two full sweeps (its hot sets included), in thread-seconds a
# state: they read only the policy and the values, so they cost the same whether full sweeps
# regenerate or read a stored graph, and they wait on memory, not on the move generator. Measured
# from the solve's round log (docs/design/backends.md, "Six and seven pieces"), two threads, a state and
# thread a round: K = 4, stored graph, 68-81 s over 69-72 rounds (about 250 ns); K = 5, stored
# graph, 2,510 s over 122 rounds (about 660 ns, on a slower machine and
# partly beside test runs); K = 6's first stage, regenerating, 12-14 s a round (about 100 ns).
# Before that this was a quarter of a regenerating full sweep, which fits K = 4 but priced
# the K = 6 run's rounds' policy sweeps at five times what they took.
POLICY_ROUND_SECONDS = 4.5e-7
# A full sweep over the stored graph against a regenerating one, two threads, K = 4 on this
# project's 2-core machine (docs/design/walk.md: 0.43-0.48 s against 3.78-4.81 s, ten runs)
STORED_SWEEP_SPEEDUP = 9.0
# The walk's regenerating full sweeps with skipping (WALK_SKIP) against without, over a whole walk:
# four pieces, two threads, 292 s against 393 s (benchmarks/bench_walk_skip.py; the later rounds
# of a stage generate a tenth of the states, its first ones all of them)
SKIP_SWEEP_SPEEDUP = 1.35
_SAMPLE_RUNS = 48
_SAMPLE_RUN = 1024
# a sample that had less than this share of a core was timed on a busy machine, and says so
BUSY_SHARE = 0.8


@dataclass(frozen=True)
class SweepRate:
    """One thread's sweep of a state, timed on a sample: ``seconds`` of CPU time a state, and
    ``core_share``, the CPU time over the wall-clock time the sample took (below 1 where other work
    shared the core: a rate timed by the clock would then overstate what the solve takes on free
    cores, which is what a projection prices)."""

    seconds: float
    core_share: float

    def busy_note(self) -> str:
        """A clause for a projection timed while the machine was busy (``core_share`` under
        BUSY_SHARE), else ""."""
        if self.core_share >= BUSY_SHARE:
            return ""
        return (f" (timed while other work shared the cores: the sample had {self.core_share:.0%} of one; "
                "these times are for free cores, and a busy machine takes longer)")


def sweep_rate(game: StochasticGame, chunks: int = _SAMPLE_RUNS, chunk: int = _SAMPLE_RUN, seed: int = 0) -> SweepRate:
    """One thread's time to sweep a state (regenerating its outcomes), timed on ``chunks``
    runs of ``chunk`` consecutive ranks spread at random over the whole space (the tiers differ
    several times in cost, so the top states alone would overstate it, and a contiguous block
    understates what scattered value reads cost once the values outgrow the cache: the fort rules'
    top 20,000 states said 174-210 s for a K = 6 sweep that takes 280 s). Timed in the thread's
    CPU time, so that a machine shared with other work (a niced solve, a test run) still prices
    free cores; the share of the wall clock it got says how busy the machine was."""
    n = game.state_count
    chunk = max(1, min(chunk, n))
    V = np.zeros(n, dtype=np.float32)  # untouched pages cost nothing: reads see zeros
    starts = np.sort(np.random.default_rng(seed).integers(0, n - chunk + 1, size=chunks))
    game.sweep(V, threads=1, start=0, stop=1, write=False)  # the game's lazy indexes, not timed
    c0, t0 = time.thread_time(), time.perf_counter()
    for a in starts.tolist():
        game.sweep(V, threads=1, start=a, stop=a + chunk, write=False)
    cpu, wall = time.thread_time() - c0, time.perf_counter() - t0
    return SweepRate(cpu / (chunks * chunk), min(1.0, cpu / wall) if wall > 0 else 1.0)


def seconds_per_state(game: StochasticGame, chunks: int = _SAMPLE_RUNS, chunk: int = _SAMPLE_RUN, seed: int = 0) -> float:
    """``sweep_rate``'s CPU seconds a state."""
    return sweep_rate(game, chunks, chunk, seed).seconds


def estimate(game: StochasticGame, method: str, stored: bool, threads: int, dtype: str = "float32",
             tiers: list[tuple[int, int]] | None = None, policy_on_disk: bool = False, skipping: bool = False) -> str:
    """One line before a solve: memory by part (``policy_on_disk``: the walk maps its policy from a
    file), and the time of one full sweep on this machine, timed on a sample of states
    (``seconds_per_state``, regenerating, one thread, times the threads; a stored graph's sweep
    STORED_SWEEP_SPEEDUP times faster), with the walk's rounds priced at a full sweep plus its
    policy sweeps (``round_seconds``).
    With tiers the stored graph holds one tier's codes at a time: the largest tier's are counted."""
    n, nrolls = game.state_count, game.roll_count
    policy = n * nrolls * POLICY_BYTES_PER_ROLL if method != "sweeps" else 0
    history = extra_bytes(n, nrolls, method, policy_on_disk=policy_on_disk) - (0 if policy_on_disk else policy) \
        if method == "walk" else 0
    graph = estimate_bytes(game) if stored else 0
    if graph and tiers:
        index = n * (8 + game.ngroups)
        graph = index + int((graph - index) * max(b - a for a, b in tiers) / max(1, n))
    rate = sweep_rate(game)
    regenerating = rate.seconds * n / max(1, threads)  # threads scale about linearly
    sweep = regenerating / (STORED_SWEEP_SPEEDUP if stored else 1)
    # ``skipping``: the walk's regenerating full sweeps skip what cannot change; a round is priced at their mean
    skipping = skipping and walk.WALK_SKIP and not stored and method == "walk"
    walk_sweep = sweep / SKIP_SWEEP_SPEEDUP if skipping else sweep
    lo, hi = TYPICAL_SWEEPS
    if method == "walk":
        round_ = round_seconds(walk_sweep, n, threads)
        what = "a full sweep, skipping what cannot change, and its policy sweeps" if skipping else \
            "a full sweep and its policy sweeps"
        time_line = (f"; a round of the walk ({what}) about {round_:,.1f} s; "
                     f"{lo}-{hi} rounds would take {span_of(lo * round_, hi * round_)}")
    else:
        time_line = (f"; {lo}-{hi} full sweeps (the walk's count; plain sweeps need several times as many) would "
                     f"take {span_of(lo * sweep, hi * sweep)}")
    return (f"estimate: {n:,} states; memory {np.dtype(dtype).itemsize * n / 2**20:,.0f} MiB of values"
            + (f", {policy / 2**20:,.0f} MiB of policy" + (" (mapped from disk)" if policy_on_disk else "")
               if policy else "")
            + (f", {history / 2**20:,.0f} MiB of hot-set marks"
               + (" and skip bytes" if walk.WALK_SKIP and not stored else "") if history else "")
            + (f", {graph / 2**30:,.2f} GiB of stored graph" if graph else "")
            + f"; one full sweep about {sweep:,.1f} s here ({'stored graph' if stored else 'regenerating'}, "
            f"{threads} threads)" + time_line + rate.busy_note())


def round_seconds(sweep: float, states: int, threads: float) -> float:
    """One round of the walk: a full sweep taking ``sweep`` seconds, and its policy sweeps over
    ``states`` states on ``threads`` threads (POLICY_ROUND_SECONDS a state and thread)."""
    return sweep + POLICY_ROUND_SECONDS * states / max(1.0, threads)


def span_of(lo: float, hi: float) -> str:
    """A range of durations as a reader wants it: "5.8 hours to 15 hours", or one figure."""
    a, b = duration(lo), duration(hi)
    return a if a == b else f"{a} to {b}"


def extra_bytes(n: int, nrolls: int, method: str, policy_on_disk: bool = False) -> int:
    """Memory a method needs beyond the values and a stored graph: the walk's greedy policy (not
    when it maps the policy from disk), hot-set marks and skip bytes; none for plain sweeps."""
    if method == "sweeps":
        return 0
    need = 0 if policy_on_disk else n * nrolls * POLICY_BYTES_PER_ROLL
    if method == "walk":
        need += 2 * n if walk.WALK_HOT_SWEEPS else 0  # the hot rounds' mark and hot set (see hot_round)
        # lead and stamp bytes, and a copy of the values (mapped from a file beside a policy on disk)
        need += (SKIP_BYTES + (0 if policy_on_disk else 4)) * n if walk.WALK_SKIP else 0
    return need


def choose_method(method: str, n: int, nrolls: int, policy_here: bool = True, place: str = "auto") -> str:
    """``method``, checked; ``walk`` only when its arrays fit in half the machine's
    memory, the walk's policy counted only where ``place`` keeps it in memory (``policy_here``
    False: a distributed engine keeps the policy in its workers)."""
    if method not in schedule.METHODS:
        raise InputError(f"unknown method {method!r}; expected one of {', '.join(schedule.METHODS)}")
    if place not in POLICY_PLACES:
        raise InputError(f"unknown policy place {place!r}; expected one of {', '.join(POLICY_PLACES)}")
    memory = memory_bytes()
    if policy_here and method == "walk":
        need = extra_bytes(n, nrolls, method, policy_on_disk=method == "walk" and place != "memory")
        if need > memory / 2:
            other = "--walk-policy disk or " if method == "walk" and place == "memory" else ""
            raise InputError(f"the {method} method needs about {need / 2**30:.1f} GiB, more than half of this "
                             f"machine's memory; use {other}--method sweeps")
    return method


def place_policy(place: str, n: int, nrolls: int) -> str:
    """Where the walk keeps its policy (an int32 a state and roll): ``memory`` when it fits in half
    the machine's memory beside the rest of the walk's arrays (or is asked for), else ``disk``: a
    file beside the checkpoint (POLICY_FILE), mapped, so the system pages it like a stored graph.
    The walk reads it in rank order, a sweep at a time (``check_disk`` makes sure it fits)."""
    if place == "memory" or (place == "auto" and extra_bytes(n, nrolls, "walk") <= memory_bytes() / 2):
        return "memory"
    return "disk"


def check_disk(root: Path, value_bytes: int, policy_bytes: int = 0, skip_bytes: int = 0) -> None:
    """Refuse, before anything is written, a solve whose files do not fit on the disk under
    ``root``: its checkpoint twice (a new one is written beside the last before it replaces it, and
    the finished table beside the last checkpoint), where the walk maps it, its policy, and where
    its checkpoints keep the skip (``skip_bytes``: the lead and stamp bytes), that file twice too.
    Files a stopped run left there count as free; a disk whose free space cannot be read is not
    checked. (A stored graph is not counted: where the disk cannot take it, it is kept in memory.
    Nor are the endless check's kept marks, a byte a state, a quarter of a float32 checkpoint:
    where the walk maps its policy, that file, many times larger, is removed before the table is
    written.)"""
    probe = existing_ancestor(Path(root))
    try:
        free = shutil.disk_usage(probe).free
    except OSError:
        return
    for name in (checkpoint.CHECKPOINT, checkpoint.POLICY_FILE, checkpoint.COPY_FILE, checkpoint.SKIP_FILE):
        kept = Path(root) / name
        if kept.is_file():  # rewritten in place by the run that takes it up
            free += kept.stat().st_size
    need = 2 * value_bytes + policy_bytes + 2 * skip_bytes
    if need <= free:
        return
    parts = [f"its checkpoint, {value_bytes / 2**30:.2f} GiB, twice while it is replaced"]
    if policy_bytes:
        parts.append(f"the walk's policy, {policy_bytes / 2**30:.2f} GiB, which does not fit in half of this "
                     f"machine's memory")
    if skip_bytes:
        parts.append(f"the skip's leads and stamps, {skip_bytes / 2**30:.2f} GiB, twice while they are replaced")
    hint = "free some disk space or give another --out" + (", or use --method sweeps" if policy_bytes else "")
    raise InputError(f"the solve needs about {need / 2**30:.2f} GiB on the disk at {probe} ({'; '.join(parts)}) "
                     f"and {free / 2**30:.2f} GiB are free; {hint}")


# A Ray worker's states/s over one thread's in the same run (benchmarks/bench_ur_ray.py, K = 4,
# two one-thread workers on this shared 2-core machine: 0.84; K = 3, where a sweep is short beside
# the copies of the values to and from the workers, 0.56). K = 6, 7 sweep longer per copied value.
RAY_WORKER_EFFICIENCY = 0.84
@dataclass(frozen=True)
class Projection:
    """A solve's cost from one measured rate: ``states`` stored states, ``per_state`` seconds a
    state and thread, ``rolls`` (the walk's policy holds one int32 a state and roll)."""

    states: int
    per_state: float
    rolls: int

    @property
    def value_bytes(self) -> int:
        return 4 * self.states

    @property
    def policy_bytes(self) -> int:
        return 4 * self.states * self.rolls

    def sweep_seconds(self, cores: int, efficiency: float = 1.0) -> float:
        """One full sweep on ``cores`` threads (or Ray worker cores, at ``efficiency``)."""
        return self.per_state * self.states / (max(1, cores) * efficiency)

    def solve_seconds(self, cores: int, efficiency: float = 1.0, stored: float = 1.0,
                      skipping: bool = False) -> tuple[float, float]:
        """The walk's full sweeps (TYPICAL_SWEEPS) and its policy sweeps: (fewest, most). With
        ``stored``, the full sweeps read a stored graph that many times faster; the policy
        sweeps, which never generate, take as long as before (``round_seconds``). ``skipping``:
        regenerating full sweeps on this machine's threads skip what cannot change
        (SKIP_SWEEP_SPEEDUP on average over a walk)."""
        full = self.sweep_seconds(cores, efficiency) / stored
        if skipping and stored == 1.0 and walk.WALK_SKIP:  # read when asked: a caller may switch it off
            full /= SKIP_SWEEP_SPEEDUP
        one = round_seconds(full, self.states, max(1, cores) * efficiency)
        return TYPICAL_SWEEPS[0] * one, TYPICAL_SWEEPS[1] * one

    def as_dict(self, cores: int, cluster_cores: int) -> dict[str, Any]:
        return {"states": self.states, "seconds_per_state_and_thread": self.per_state, "cores_here": cores,
                "sweep_seconds_here": self.sweep_seconds(cores),
                "solve_seconds_here": list(self.solve_seconds(cores, skipping=True)),
                "cluster_worker_cores": cluster_cores,
                "solve_seconds_on_cluster": list(self.solve_seconds(cluster_cores, RAY_WORKER_EFFICIENCY)),
                "value_bytes": self.value_bytes, "policy_bytes": self.policy_bytes,
                "typical_sweeps": list(TYPICAL_SWEEPS)}


def span(pair: tuple[float, float]) -> str:
    """``span_of`` for a (fewest, most) pair."""
    return span_of(*pair)
