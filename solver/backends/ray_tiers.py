"""Tiers solved as Ray tasks: the retrograde solve by tiers (``solver.retrograde.layers``) on a
cluster (``pip install "gamesolver[ray]"``).

Every tier is one task; the results of the tiers it depends on are its arguments, so Ray starts a
tier as soon as those are done, on whichever worker is free, and moves the (small) lower results
to it through the object store. Tiers that do not depend on each other run at the same time:
Ünee's layers form four independent chains (balls mod 4), so four workers are busy from the
start. Each task builds its tier's graph itself from the picklable game, so nothing the size of a
graph crosses the network, only values. A task whose worker dies is run again (Ray's retries:
tasks have no side effects). The driver writes each tier's results where the caller wants them
as they arrive, in any order.
"""
from __future__ import annotations

import os
import time
from typing import Any, Callable

import numpy as np

from gamesolver.solver.stochastic.engine import Log
from gamesolver.solver.backends.ray import import_ray, start_ray
from gamesolver.solver.errors import InputError
from gamesolver.solver.retrograde.layers import TierGame, solve_tier

RETRIES = 3


def _tier_task(game: TierGame, tier: int, mode: str, below: list[int], *lower: dict[str, np.ndarray]) \
        -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    t0 = time.perf_counter()
    stats: dict[str, Any] = {"tier": tier, "pid": os.getpid()}
    arrays = solve_tier(game, tier, mode, dict(zip(below, lower)), stats)
    stats["seconds"] = time.perf_counter() - t0
    return arrays, stats


class TierEngine:
    """A Ray cluster to solve tier games on: joins ``address`` (or starts a local Ray with
    ``init_options``, e.g. ``num_cpus``), runs at most ``workers`` tiers at once (default: one a
    CPU). Close it (or use ``with``) to leave the cluster."""

    name = "ray"

    def __init__(self, *, address: str | None = None, workers: int | None = None,
                 log: Log | None = None, init_options: dict[str, Any] | None = None) -> None:
        ray = import_ray()
        if workers is not None and workers < 1:
            raise InputError("workers must be at least 1")
        self.ray = ray
        self.log = log
        self.started_ray = start_ray(ray, address, init_options)
        cpus = int(ray.cluster_resources().get("CPU", 0)) or 1
        if workers is not None and workers > cpus:
            self.close()
            raise InputError(f"{workers} workers do not fit the Ray cluster's {cpus} CPUs; use fewer --workers")
        self.workers = workers or cpus
        self.cpus_per_task = max(1.0, cpus / self.workers)
        self.stats: list[dict[str, Any]] = []
        self._task = ray.remote(_tier_task).options(num_returns=2, num_cpus=self.cpus_per_task,
                                                     max_retries=RETRIES)
        if log:
            log(f"ray: {self.workers} workers ({cpus} CPUs in the cluster)")

    def solve(self, game: TierGame, mode: str, done: Callable[[int, dict[str, np.ndarray]], None],
              known: dict[int, dict[str, np.ndarray]] | None = None) -> None:
        """Solve every tier of ``game`` but the ``known`` ones (solved before: put in the object
        store where a tier needs them); ``done(tier, arrays)`` as each arrives, in any order."""
        known = known or {}
        refs: dict[int, Any] = {}
        waiting: dict[Any, tuple[int, Any]] = {}
        for t in game.tiers():
            if t in known:
                refs[t] = self.ray.put(known[t])
                continue
            below = list(game.depends(t))
            arrays, stats = self._task.remote(game, t, mode, below, *[refs[u] for u in below])
            refs[t] = arrays
            waiting[arrays] = (t, stats)
        del refs  # each tier's results stay in the object store while a tier that needs them waits
        self.stats = []
        while waiting:
            ready, _ = self.ray.wait(list(waiting), num_returns=1)
            t, stats = waiting.pop(ready[0])
            done(t, self.ray.get(ready[0]))
            self.stats.append(self.ray.get(stats))
            if self.log:
                s = self.stats[-1]
                self.log(f"ray: tier {t}: {s['states']:,} states, {s['moves']:,} moves in {s['seconds']:.2f} s")

    def rate(self) -> float:
        """Moves solved a second by one worker, over the tiers of the last solve."""
        seconds = sum(s["seconds"] for s in self.stats)
        return sum(s["moves"] for s in self.stats) / seconds if seconds > 0 else float("nan")

    def close(self) -> None:
        if self.started_ray:
            self.ray.shutdown()
            self.started_ray = False

    def __enter__(self) -> "TierEngine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
