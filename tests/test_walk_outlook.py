"""The round log's outlook (``Outlook`` in solver/stochastic/walk.py): how many rounds a stage's
aim lies away at the fall of its last rounds, held to a round-by-round extrapolation on random
histories, to hand-worked cases, and seen in a real walk's log."""
from __future__ import annotations

import math
import re

import pytest
from hypothesis import assume, given, settings, strategies as st

from gamesolver.games.ur.solve import solve
from gamesolver.solver.stochastic import walk
from gamesolver.solver.stochastic.walk import Outlook
from tests.test_ur_reference import mini_options

ROUNDS = re.compile(r"\(([0-9.e+-]+) a round\) this stage's aim ([0-9.e+-]+) lies some (\d+) rounds? \(([^)]*)\) away")


def feed(aim: float, changes: list[float], seconds: float = 10.0, rounds: int = 4) -> str:
    o = Outlook(aim, rounds)
    said = ""
    for c in changes:
        said = o(c, seconds)
    return said


def rounds_by_stepping(changes: list[float], aim: float, n: int) -> int:
    """The slow reference: go on multiplying the last change by the last n rounds' mean fall, one
    round at a time, until it is at or below the aim."""
    fall = (changes[-1] / changes[-1 - n]) ** (1 / n)
    c, k = changes[-1], 0
    while c > aim:
        c *= fall
        k += 1
    return k


def test_hand_worked_halving() -> None:
    # 1, 1/2, ..., 1/16: half a round; 1/16 to 1e-3 takes 6 more halvings (1/1024 < 1e-3 < 1/512)
    said = feed(1e-3, [1, 0.5, 0.25, 0.125, 0.0625])
    assert said == "; at the last 4 rounds' fall (0.5 a round) this stage's aim 0.001 lies some 6 rounds (60 s) away"


def test_too_little_history_says_nothing_and_a_flat_change_says_so() -> None:
    assert feed(1e-4, [1, 0.5, 0.25, 0.125]) == ""  # four rounds: no four-round fall yet
    assert feed(1e-4, [0.3, 0.2, 0.3, 0.3, 0.3]) == "; its change did not fall over the last 4 rounds (aim 0.0001)"
    assert feed(1e-4, [1, 0.5, 0.25, 0.125, 5e-5]) == ""  # below the aim: the stage ends, nothing to say


def test_time_is_the_mean_of_the_last_rounds() -> None:
    o = Outlook(1e-3, 2)
    for c, t in [(1.0, 1000.0), (0.1, 40.0), (0.01, 80.0)]:
        said = o(c, t)
    # fall 0.1 a round, 1e-2 to 1e-3 is one round, at the last two rounds' mean (60 s)
    assert said.endswith("lies some 1 round (60 s) away")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(1e-6, 10.0), min_size=5, max_size=12), st.floats(1e-7, 1e-2), st.integers(1, 4))
def test_rounds_match_stepping_round_by_round(changes: list[float], aim: float, n: int) -> None:
    said = feed(aim, changes, rounds=n)
    fall = (changes[-1] / changes[-1 - n]) ** (1 / n)
    if changes[-1] <= aim:
        assert said == ""
    elif fall >= 1:
        assert "did not fall" in said
    else:
        m = ROUNDS.search(said)
        assert m, said
        # (a fall within 1e-6 of 1 would take the stepping reference millions of steps and more)
        assume(fall < 1 - 1e-6)
        want = rounds_by_stepping(changes, aim, n)
        got = int(m.group(3))
        # the closed form and the stepping agree but where the aim falls within rounding of a round's end
        assert got == want or abs(math.log(changes[-1] / aim) / math.log(1 / fall) - round(math.log(changes[-1] / aim) / math.log(1 / fall))) < 1e-9


def test_a_walk_logs_its_outlook(tmp_path) -> None:
    said: list[str] = []
    solve(mini_options(tmp_path, 4), tmp_path / "t", tolerance=1e-6, threads=1, graph="store", log=said.append)
    rounds = [s for s in said if s.startswith("sweep ")]
    seen = [ROUNDS.search(s) for s in rounds]
    assert any(seen), rounds[:8]
    # every outlook reads the four rounds before it, from the same log
    changes = [float(re.search(r"largest change ([0-9.e+-]+)", s).group(1)) for s in rounds]
    for i, m in enumerate(seen):
        if m and i >= walk.OUTLOOK_ROUNDS:
            fall = (changes[i] / changes[i - walk.OUTLOOK_ROUNDS]) ** (1 / walk.OUTLOOK_ROUNDS)
            assert abs(float(m.group(1)) - fall) < 0.01 * fall + 2e-3


def test_hand_worked_stall_horizon(monkeypatch) -> None:
    monkeypatch.setattr(walk, "_STALL_SWEEPS", 30)
    o = Outlook(1e-6, stall=True)
    for c in [0.5, 0.6, 0.7, 0.5, 0.6]:
        o(c, 10.0)
    # the first smallest change, 0.5, is round 1: the stall rule ends the stage by round 31, 26 rounds
    # after the fifth, unless a change below WALK_PROGRESS * 0.5 comes first
    assert o.stall_horizon() == (26, walk.WALK_PROGRESS * 0.5)
    assert o.reading() == (
        f"; its change did not fall over the last 4 rounds (aim 1e-06); the stall rule ends it within 26 more rounds "
        f"unless a change falls below {walk.WALK_PROGRESS * 0.5:.3g} first")
    # a new smallest change (0.3, round 6) that is not below half the one before leaves round 1's bound
    # standing: the nearer of the two (as in the seven-piece solve's last discounted stage)
    o(0.3, 10.0)
    assert o.stall_horizon() == (25, walk.WALK_PROGRESS * 0.5)
    # one below half of round 1's (0.2, round 7) ends that bound; round 6's stands (0.2 is not below
    # half of 0.3): 29 rounds from here
    o(0.2, 10.0)
    assert o.stall_horizon() == (29, walk.WALK_PROGRESS * 0.3)
    # and one below half of every smallest change before it: the newest bounds it, 30 rounds on
    o(0.05, 10.0)
    assert o.stall_horizon() == (30, walk.WALK_PROGRESS * 0.05)
    # the undiscounted stage has no stall rule; a stage whose extrapolation ends it sooner says only that
    assert Outlook(1e-6).stall_horizon() is None
    assert "stall" not in feed(1e-3, [1, 0.5, 0.25, 0.125, 0.0625])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(1e-6, 10.0), min_size=1, max_size=40), st.floats(1.0, 100.0), st.integers(2, 8))
def test_the_stall_horizon_bounds_when_the_stall_rule_ends_a_stage(changes: list[float], above: float,
                                                                   window: int) -> None:
    """Held to ``Stall`` itself: for a stage whose rounds so far have not stalled, every later run of
    changes at or above the threshold stalls it within the horizon's rounds."""
    import pytest

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(walk, "_STALL_SWEEPS", window)
        stall, o = walk.Stall(walk.WALK_PROGRESS), Outlook(1e-7, stall=True)
        for c in changes:
            if stall(c):
                return  # the stage would have ended here: no outlook for it
            o(c, 1.0)
        left, below = o.stall_horizon()
        assert left >= 1
        more = next(k for k in range(1, left + 1) if stall(below * above))  # (StopIteration: past the horizon)
        assert more <= left
