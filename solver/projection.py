"""How long a solve would take, and its memory, projected from a sweep rate measured here: for
the message a query gives when its table is missing, and for docs/ur.md. These are projections:
one measured rate times the sweep counts that the solves we ran needed, nothing more.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from gamesolver.solver.limits import duration_text
from gamesolver.solver.stochastic import TYPICAL_SWEEPS

# The walk's cheap policy sweeps between its full sweeps cost about a quarter of the full sweeps'
# time on K = 4 regenerating (6,927 policy sweeps at 0.11 s beside 261 full sweeps of 12.6 s).
POLICY_SWEEP_SHARE = 0.25
# A Ray worker's states/s over one thread's in the same run (benchmarks/bench_ur_ray.py, K = 4,
# two one-thread workers on this shared 2-core machine: 0.84; K = 3, where a sweep is short beside
# the copies of the values to and from the workers, 0.56). K = 6, 7 sweep longer per copied value.
RAY_WORKER_EFFICIENCY = 0.84
_CHUNKS = 48
_CHUNK = 1024


def seconds_per_state(game: Any, chunks: int = _CHUNKS, chunk: int = _CHUNK, seed: int = 0) -> float:
    """Seconds one thread takes to sweep a state (regenerating its outcomes), timed on ``chunks``
    runs of ``chunk`` consecutive ranks spread at random over the whole space (the tiers differ
    several times in cost, so the top states alone would overstate it)."""
    n = game.state_count
    chunk = max(1, min(chunk, n))
    V = np.zeros(n, dtype=np.float32)  # untouched pages cost nothing: reads see zeros
    starts = np.sort(np.random.default_rng(seed).integers(0, n - chunk + 1, size=chunks))
    game.sweep(V, threads=1, start=0, stop=1, write=False)  # the game's lazy indexes, not timed
    t0 = time.perf_counter()
    for a in starts.tolist():
        game.sweep(V, threads=1, start=a, stop=a + chunk, write=False)
    return (time.perf_counter() - t0) / (chunks * chunk)


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

    def solve_seconds(self, cores: int, efficiency: float = 1.0, stored: float = 1.0) -> tuple[float, float]:
        """The walk's full sweeps (TYPICAL_SWEEPS) and its policy sweeps: (fewest, most). With
        ``stored``, the full sweeps read a stored graph that many times faster; the policy
        sweeps, which never generate, take as long as before."""
        sweep = self.sweep_seconds(cores, efficiency) * (1 / stored + POLICY_SWEEP_SHARE)
        return TYPICAL_SWEEPS[0] * sweep, TYPICAL_SWEEPS[1] * sweep

    def as_dict(self, cores: int, cluster_cores: int) -> dict[str, Any]:
        return {"states": self.states, "seconds_per_state_and_thread": self.per_state, "cores_here": cores,
                "sweep_seconds_here": self.sweep_seconds(cores),
                "solve_seconds_here": list(self.solve_seconds(cores)),
                "cluster_worker_cores": cluster_cores,
                "solve_seconds_on_cluster": list(self.solve_seconds(cluster_cores, RAY_WORKER_EFFICIENCY)),
                "value_bytes": self.value_bytes, "policy_bytes": self.policy_bytes,
                "typical_sweeps": list(TYPICAL_SWEEPS)}


def duration(seconds: float) -> str:
    """A length of time as a reader wants it (``limits.duration_text`` without its "about")."""
    return duration_text(seconds).removeprefix("about ")


def span(pair: tuple[float, float]) -> str:
    lo, hi = duration(pair[0]), duration(pair[1])
    return lo if lo == hi else f"{lo} to {hi}"
