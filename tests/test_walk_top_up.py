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
