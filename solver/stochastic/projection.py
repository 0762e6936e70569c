"""How long a solve would take, and its memory, projected from a sweep rate measured here: for
the message a query gives when its table is missing, and for docs/design/backends.md. These are projections:
one measured rate times the sweep counts that the solves we ran needed, nothing more.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


from gamesolver.solver.limits import duration  # noqa: F401  (re-exported for the CLI)
from gamesolver.solver.stochastic import iteration
from gamesolver.solver.stochastic.iteration import (  # noqa: F401  (seconds_per_state: re-exported)
    SKIP_SWEEP_SPEEDUP, TYPICAL_SWEEPS, round_seconds, seconds_per_state, span as _span,
)
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
        if skipping and stored == 1.0 and iteration.WALK_SKIP:  # read when asked: a caller may switch it off
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
    return _span(*pair)
