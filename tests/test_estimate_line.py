"""The line a solve prints before it starts: the walk's rounds are priced with their policy
sweeps, plain sweeps by their full sweeps alone, from one timed sample of the game's sweep."""
from __future__ import annotations

import re
import time

import pytest

from gamesolver.solver.stochastic import planning
from gamesolver.solver.stochastic import walk


def _spin(seconds: float) -> None:
    """Keep this thread on its core for ``seconds`` of its own CPU time."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


class TimedGame:
    """A game whose sweep takes 1 us of CPU a state, so one full sweep of its 10^6 states takes 1 s."""

    state_count = 10**6
    roll_count = 6

    def sweep(self, V, threads=1, start=0, stop=None, write=True):
        _spin((stop - start) * 1e-6)
        return 0.0


class SharedCoreGame(TimedGame):
    """The same sweep on a core that other work holds for as long again: each run of states waits
    off the core (a sleep) as long as it computes."""

    def sweep(self, V, threads=1, start=0, stop=None, write=True):
        _spin((stop - start) * 1e-6)
        time.sleep((stop - start) * 1e-6)
        return 0.0


def _seconds(line: str, what: str) -> float:
    return float(re.search(what + r" about ([0-9.,]+) s", line).group(1).replace(",", ""))


def test_the_walk_s_rounds_are_priced_with_their_policy_sweeps() -> None:
    line = planning.estimate(TimedGame(), "walk", False, 1)
    sweep = _seconds(line, "one full sweep")
    assert sweep == pytest.approx(1.0, rel=0.5)  # 50 ms of spinning, give or take the clock's grain
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


def test_a_sample_timed_on_a_busy_core_prices_free_cores_and_says_the_machine_was_busy() -> None:
    free, shared = planning.sweep_rate(TimedGame()), planning.sweep_rate(SharedCoreGame())
    # the time off the core is not the sweep's: both price 1 us a state
    assert free.seconds == pytest.approx(1e-6, rel=0.5) and shared.seconds == pytest.approx(1e-6, rel=0.5)
    # (the free sample's own share is not asserted: a test run beside other work may well see it low)
    assert planning.SweepRate(1e-6, planning.BUSY_SHARE).busy_note() == ""
    assert shared.core_share < 0.7  # about a half
    line = planning.estimate(SharedCoreGame(), "walk", False, 1)
    assert _seconds(line, "one full sweep") == pytest.approx(1.0, rel=0.5)
    note = re.search(r" \(timed while other work shared the cores: the sample had (\d+)% of one; these times "
                     r"are for free cores, and a busy machine takes longer\)$", line)
    assert note and int(note.group(1)) < 70
