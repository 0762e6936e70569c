"""The line a solve prints before it starts: the walk's rounds are priced with their policy
sweeps, plain sweeps by their full sweeps alone, from one timed sample of the game's sweep."""
from __future__ import annotations

import re
import time

import pytest

from gamesolver.solver.stochastic import planning
from gamesolver.solver.stochastic import walk


class TimedGame:
    """A game whose sweep takes 1 us a state, so one full sweep of its 10^6 states takes 1 s."""

    state_count = 10**6
    roll_count = 6

    def sweep(self, V, threads=1, start=0, stop=None, write=True):
        time.sleep((stop - start) * 1e-6)
        return 0.0


def _seconds(line: str, what: str) -> float:
    return float(re.search(what + r" about ([0-9.,]+) s", line).group(1).replace(",", ""))


def test_the_walk_s_rounds_are_priced_with_their_policy_sweeps() -> None:
    line = planning.estimate(TimedGame(), "walk", False, 1)
    sweep = _seconds(line, "one full sweep")
    assert sweep == pytest.approx(1.0, rel=0.5)  # a sleep of 20 ms, give or take the scheduler
    rnd = _seconds(line, r"a round of the walk \(a full sweep and its policy sweeps\)")
    policy = planning.POLICY_ROUND_SECONDS * TimedGame.state_count  # one thread
    assert rnd == pytest.approx(sweep + policy, abs=0.12)  # both printed to 0.1 s
    lo, hi = planning.TYPICAL_SWEEPS
    assert f"{lo}-{hi} rounds would take" in line and "MiB of policy" in line and "(mapped from disk)" not in line
    # a regenerating walk's full sweeps skip what cannot change: its rounds are priced at their mean
    line = planning.estimate(TimedGame(), "walk", False, 1, skipping=True)
    sweep = _seconds(line, "one full sweep")
    rnd = _seconds(line, r"a round of the walk \(a full sweep, skipping what cannot change, and its policy sweeps\)")
    assert rnd == pytest.approx(sweep / planning.SKIP_SWEEP_SPEEDUP + policy, abs=0.12)


def test_plain_sweeps_are_priced_without_policy_sweeps_and_a_mapped_policy_is_said() -> None:
    line = planning.estimate(TimedGame(), "sweeps", False, 1)
    assert "round of the walk" not in line and "of policy" not in line
    assert "full sweeps (the walk's count; plain sweeps need several times as many) would take" in line
    mapped = planning.estimate(TimedGame(), "walk", False, 1, policy_on_disk=True)
    assert "MiB of policy (mapped from disk)" in mapped


def test_a_sweep_goes_to_the_engine_in_progress_chunks_not_sample_runs() -> None:
    # each call is one parallel region: runs of a thousand states left one of two threads idle
    # (a sampler's constant once shadowed the progress chunk and halved every sweep's speed)
    import numpy as np

    calls: list[tuple[int, int]] = []

    class Recorder:
        def sweep(self, V, threads=1, start=0, stop=None, policy=None, discount=1.0):
            calls.append((start, stop))
            return 0.0

    n = 3 * walk._CHUNK + 5
    walk.progress_sweep(Recorder(), np.zeros(n, dtype=np.float32), 2, "x", False)
    assert walk._CHUNK >= 1 << 16
    assert calls == [(a, min(n, a + walk._CHUNK)) for a in range(0, n, walk._CHUNK)]
