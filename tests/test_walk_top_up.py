"""The walk's top-up of policy sweeps (walk.evaluate_policy, WALK_EVAL_MOST): where every full sweep regenerates
the outcomes, a discounted round's policy sweeps go on to WALK_EVAL_MOST of every state, and the
walk still reaches the game's values, deciding alike in every run."""
from __future__ import annotations

import re

import numpy as np

from gamesolver.games.ur import kernel
from gamesolver.solver.stochastic import walk
from gamesolver.solver.stochastic.iteration import solve_values
from tests.test_ur_reference import mini_options


class Halving:
    """An engine whose policy sweeps each halve the largest change."""

    def __init__(self, change: float = 1.0) -> None:
        self.change = change
        self.calls: list[float] = []

    def evaluate(self, policy, values, threads=1, discount=1.0) -> float:
        self.calls.append(discount)
        self.change /= 2
        return self.change


def _top_up(K: Halving, change: float, most: int, floor: float = 1e-9):
    return walk.evaluate_policy(K, np.zeros((1, 1), np.int32), np.zeros(1, np.float32), 1, 0.99, floor, change, most)


def test_top_up_stops_at_most_and_at_the_floor() -> None:
    K = Halving()
    assert _top_up(K, 1.0, 4) == (4, 1 / 16) and K.calls == [0.99] * 4  # the round's discount
    assert _top_up(Halving(), 1.0, 100, floor=0.1) == (4, 1 / 16)  # 1/16 is the first below 0.1
    assert _top_up(Halving(), 0.05, 100, floor=0.1) == (0, 0.05)  # already below the floor
    assert _top_up(Halving(), 1.0, 0) == (0, 1.0)
    assert _top_up(Halving(), 1.0, -3) == (0, 1.0)  # (a round that swept past MOST already)


LINE = re.compile(r"sweep (\d+) \(1 - discount ([^)]+)\): .*policy sweeps [\d.]+ s \((\d+) of every state, the last "
                  r"changing (\S+)\)")


def _walk(tmp_path, name: str, monkeypatch, most: int, graph: str = "regenerate"):
    monkeypatch.setattr(walk, "WALK_EVAL_MOST", most)
    # the top-up's rounds alone: the hot sets' greedy sweeps change the walk's course
    # (tests/test_walk_greedy.py holds them)
    monkeypatch.setattr(walk, "WALK_HOT_GREEDY", 0)
    o = mini_options(tmp_path, 4)
    said: list[str] = []
    res = solve_values(kernel(o), tmp_path / name, o.header(), tolerance=3e-7, threads=1, log=said.append,
                       graph=graph)
    # the discounted rounds (the undiscounted stage's polish is not topped up)
    return res, [(int(a), int(b), float(c)) for line in said for m in [LINE.match(line)] if m
                 for a, d, b, c in [m.groups()] if float(d) > 0]


def test_a_regenerating_walk_sweeps_its_policy_most_times_a_round_and_reaches_the_same_values(tmp_path,
                                                                                              monkeypatch) -> None:
    """Each discounted round sweeps its policy WALK_EVAL_MOST times (fewer where a sweep got below
    the floor first, more where a hot set too big took the round to WALK_POLICY_SWEEPS), its log
    says how many and what the last changed, and the table is the game's, as without the top-up."""
    plain, plain_rounds = _walk(tmp_path, "plain", monkeypatch, 0)
    more, more_rounds = _walk(tmp_path, "more", monkeypatch, 20)
    assert plain_rounds and more_rounds
    # without the top-up a hot round sweeps every state 6 times (WALK_HOT_FULL, then one more)
    # or, with a hot set too big, up to WALK_POLICY_SWEEPS times
    assert max(n for _, n, _ in plain_rounds) <= walk.WALK_POLICY_SWEEPS
    assert sum(n >= 20 for _, n, _ in more_rounds) > sum(n >= 20 for _, n, _ in plain_rounds)
    # a round that swept fewer than MOST times stopped at the floor, tolerance / 10 (the log rounds
    # it to two digits)
    assert all(n >= 20 or last < 3.05e-8 for _, n, last in more_rounds)
    assert more.meta["policy_sweeps"] > plain.meta["policy_sweeps"]
    assert more.meta["endless_check"]["flagged"] == plain.meta["endless_check"]["flagged"] == 0
    assert np.abs(more.values - plain.values).max() < 1e-5 and np.abs(plain.values).max() > 0.1
    # one thread decides alike in every run: the same rounds and values bit for bit
    again, again_rounds = _walk(tmp_path, "again", monkeypatch, 20)
    assert again_rounds == more_rounds and np.array_equal(again.values, more.values)


def test_a_stored_graph_gets_no_top_up(tmp_path, monkeypatch) -> None:
    """Over a stored graph a full sweep costs a few policy sweeps: the rounds sweep as before."""
    plain, plain_rounds = _walk(tmp_path, "plain", monkeypatch, 0, graph="store")
    more, more_rounds = _walk(tmp_path, "more", monkeypatch, 20, graph="store")
    assert plain.meta["graph"] == "stored"
    assert more_rounds == plain_rounds and more.meta["policy_sweeps"] == plain.meta["policy_sweeps"]
    assert np.array_equal(more.values, plain.values)


def test_a_round_row_keeps_its_policy_sweeps_and_their_last_change() -> None:
    row = walk.round_row(3, 0, 0.5, 10.0, 12.0, None, 30.0, 20, 1e-3)
    assert row["policy_sweeps"] == 20 and row["evaluated"] == 1e-3
    assert walk.round_row(3, 0, 0.5, 10.0, 12.0, None, 30.0, 0, None)["evaluated"] is None
    assert "policy_sweeps" not in walk.round_row(3, 0, 0.5, 10.0, 12.0, None, 30.0)  # (as older checkpoints' rows)


# five pieces' first stage with the top-up (two threads): the pair settled into a cycle of four rounds
FIVE_PIECES = [1.0, 1.58, 1.06, 0.701, 0.497, 0.438, 0.45, 0.418, 0.3, 0.35, 0.25, 0.216, 0.308, 0.168, 0.227,
               0.123, 0.308, 0.143, 0.227, 0.123, 0.308, 0.144, 0.227, 0.124]


def test_chasing_is_four_rounds_without_a_new_smallest_change() -> None:
    assert walk.WALK_CHASE_ROUNDS == 4
    # the cycle: from the 20th round on no four rounds brought a change below 0.123
    seen = [walk.chasing(FIVE_PIECES[:n]) for n in range(1, len(FIVE_PIECES) + 1)]
    assert seen.index(True) == 19 and all(seen[19:])
    assert not any(seen[:19])
    # a falling stage, or one that sets a new smallest change within the last four rounds, is not
    assert not walk.chasing([1.0, 0.5, 0.25, 0.125, 0.0625, 0.03])
    assert not walk.chasing([0.3, 0.2, 0.25, 0.25, 0.25, 0.199])
    assert walk.chasing([0.3, 0.2, 0.25, 0.25, 0.25, 0.2])  # (equal to the smallest is no progress)
    assert not walk.chasing([0.3, 0.2, 0.25, 0.25])  # too few rounds to tell
    assert not walk.chasing(FIVE_PIECES, rounds=0)  # 0: the top-up always
    assert walk.chasing([0.3, 0.2, 0.25], rounds=1)
    assert not walk.chasing([0.3, 0.25], rounds=1)  # (the stage's first round alone is no baseline)
    # a stage after a discount change: its first round moves values settled under the old discount,
    # so a falling stage that has not yet come back below it is no chase (seven pieces' second stage)
    second = [0.0388, 0.277, 0.205, 0.112, 0.0602, 0.0389]
    assert not any(walk.chasing(second[:n]) for n in range(1, len(second) + 1))
    assert walk.chasing(second + [0.2, 0.1, 0.15, 0.2])  # (four rounds above 0.0389: a chase)
    # a change hovering below WALK_CHASE_ABOVE (a plateau near a stage's end) is not
    assert walk.WALK_CHASE_ABOVE == 1e-2
    assert not walk.chasing([0.03, 0.008, 0.012, 0.009, 0.011, 0.01])
    assert walk.chasing([0.03, 0.01, 0.012, 0.011, 0.011, 0.01])


def test_a_chasing_pair_gets_no_top_up_and_a_resumed_stage_decides_alike(tmp_path, monkeypatch) -> None:
    """While ``chasing`` the round stops at the hot round's sweeps: a walk chasing in every round is
    the walk without the top-up, bit for bit, and one chasing never is the walk with it. The rule
    reads the stage's changes, so a stage resumed from its checkpoint's rows decides as the run
    that was not stopped (here with a one-round rule, which fires often on the test board)."""
    from gamesolver.games.ur.solve import solve
    from tests.test_walk_history import _stopped

    plain, plain_rounds = _walk(tmp_path, "plain", monkeypatch, 0)
    monkeypatch.setattr(walk, "chasing", lambda changes: True)
    always, always_rounds = _walk(tmp_path, "always", monkeypatch, 20)
    assert always_rounds == plain_rounds and np.array_equal(always.values, plain.values)
    monkeypatch.undo()
    monkeypatch.setattr(walk, "WALK_CHASE_ROUNDS", 0)
    never, never_rounds = _walk(tmp_path, "never", monkeypatch, 20)
    assert never_rounds != plain_rounds and sum(n >= 20 for _, n, _ in never_rounds) > 0

    monkeypatch.setattr(walk, "WALK_CHASE_ROUNDS", 1)
    monkeypatch.setattr(walk, "WALK_HOT_GREEDY", 0)
    o = mini_options(tmp_path, 4)
    said: list[str] = []
    whole = solve(o, tmp_path / "whole", tolerance=1e-6, threads=1, graph="regenerate", log=said.append)
    counts = [(int(m.group(1)), int(m.group(3))) for line in said for m in [LINE.match(line)] if m]
    assert 0 < sum(n >= 20 for _, n in counts) < len(counts)  # the rule both fired and let be
    # stop where the rule held back the top-up after the stage's first round (a resumed stage that
    # forgot its rounds before the stop would top up there)
    rounds = [(int(m.group(1)), m.group(2), int(m.group(3))) for line in said for m in [LINE.match(line)] if m]
    held = [s for (r, gap, _), (s, same, n) in zip(rounds, rounds[1:]) if n < 20 and r == s - 1 and gap == same]
    assert len(held) >= 2
    for at in held[:2]:
        (tmp_path / f"at{at}").mkdir()
        _, root, _ = _stopped(tmp_path / f"at{at}", monkeypatch, at)
        rsaid: list[str] = []
        resumed = solve(o, root, tolerance=1e-6, threads=1, graph="regenerate", log=rsaid.append)
        rcounts = [(int(m.group(1)), int(m.group(3))) for line in rsaid for m in [LINE.match(line)] if m]
        assert rcounts == [c for c in counts if c[0] >= at]  # (the stopped round is swept again)
        assert resumed.meta["sweeps"] == whole.meta["sweeps"]
        assert np.array_equal(np.asarray(resumed["value"]), np.asarray(whole["value"]))
