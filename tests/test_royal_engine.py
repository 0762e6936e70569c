"""RoyalUr rule sets on the dice-game engine: the Cython game against games/ur/royal.py (itself
checked against the ``royalur`` package), and the engine's tiered float64 values against the
slow float64 reference solver (tests/royal_ref.py)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ur import royal, royal_encoding
from gamesolver.games.ur.royal_table import royal_game, royal_solve, tier_ranges
from gamesolver.solver.stochastic._engine import WIN
from gamesolver.solver.errors import InputError
from gamesolver.solver.stochastic.iteration import solve_values
from tests.royal_ref import solve as reference_solve

FULL = {name: royal.load_ruleset(name) for name in ("finkel", "blitz", "masters")}


def mask(indices: frozenset[int]) -> int:
    return sum(1 << i for i in indices)


def expected_codes(enc: royal_encoding.Encoding, state: royal.State, roll: int) -> list[int]:
    """The engine's outcome codes for one roll, read off royal.moves."""
    ms = royal.moves(state, roll, enc.rules)
    if not ms:
        return [-enc.rank(state.swapped()) - 1]
    return sorted(WIN if m.win else enc.rank(m.after) if m.extra_roll else -enc.rank(m.after) - 1 for m in ms)


@pytest.mark.parametrize("name", sorted(FULL))
@settings(max_examples=300, deadline=None)
@given(u=st.floats(min_value=0.0, max_value=1.0, exclude_max=True))
def test_cython_ranks_and_moves_equal_royal_py(name: str, u: float) -> None:
    rules = FULL[name]
    enc = royal_encoding.encoding(rules)
    game = royal_game(rules)
    rank = int(u * enc.size)
    state = enc.unrank(rank)
    mine, sm, theirs, so = game.unrank(rank)
    assert (mine, sm, theirs, so) == (mask(state.mine.path), state.mine.scored, mask(state.theirs.path),
                                      state.theirs.scored)
    assert game.rank(mine, sm, theirs, so) == rank
    for index, (roll, _p) in enumerate(rules.roll_probabilities):
        want = expected_codes(enc, state, roll)
        assert game.successors(rank, roll) == want
        # the engine's view: the roll's groups as generate() writes them, else the pass
        assert game.roll_outcomes(rank, index) == set(want)


@pytest.mark.parametrize("name,pieces", [("finkel", 2), ("blitz", 2), ("masters", 1)])
def test_every_state_of_small_games(name: str, pieces: int) -> None:
    rules = royal.load_ruleset(name, pieces)
    enc = royal_encoding.encoding(rules)
    game = royal_game(rules)
    assert game.state_count == enc.size
    ms, ss, os_, ts = game.unrank_many(np.arange(enc.size))
    for rank in range(0, enc.size, 7):
        state = enc.unrank(rank)
        assert (int(ms[rank]), int(ss[rank]), int(os_[rank]), int(ts[rank])) == (
            mask(state.mine.path), state.mine.scored, mask(state.theirs.path), state.theirs.scored)
        for roll, _p in rules.roll_probabilities:
            assert game.successors(rank, roll) == expected_codes(enc, state, roll)


def test_roll_probabilities_and_groups() -> None:
    game = royal_game(FULL["masters"])
    assert game.roll_steps == [1, 2, 3, 4]
    assert game.roll_probabilities == [3 / 8, 3 / 8, 1 / 8, 1 / 8]
    finkel = royal_game(FULL["finkel"])
    assert finkel.roll_steps == [0, 1, 2, 3, 4]
    assert finkel.roll_group_list(0) == []  # a 0 only ever passes


@pytest.mark.parametrize("name", ["finkel", "blitz"])
def test_engine_values_equal_the_reference(tmp_path, name: str) -> None:
    rules = royal.load_ruleset(name, 2)
    ref = reference_solve(rules)
    table = royal_solve(rules, tmp_path / "t", threads=2, graph="regenerate")
    values = np.asarray(table["value"])
    assert values.dtype == np.float64
    assert np.max(np.abs((1.0 + values) / 2.0 - ref.values)) < 1e-9
    assert table.header["meta"]["endless_check"]["flagged"] == 0
    assert table.header["meta"]["tiers"] == len(ref.encoding.tier_groups_last_first())


def test_package_api_solves_a_rule_set(tmp_path) -> None:
    from gamesolver.games import ur

    table = ur.royal_solve("finkel", 1, tmp_path / "t", threads=1)
    assert table.state_count == 217 and table.header["rule"] == "finkel"
    # the float64 reference solver's start value for one Finkel piece
    assert (1 + float(table["value"][ur.royal_table.state_rank(royal.load_ruleset("finkel", 1),
                                                               royal.start(royal.load_ruleset("finkel", 1)).state())])) \
        / 2 == pytest.approx(0.5300498395, abs=1e-10)
    assert callable(ur.royal_solve)  # importing games.ur.royal_table did not rebind the name


def test_tiers_resume_after_the_last_finished_range(tmp_path) -> None:
    rules = royal.load_ruleset("finkel", 2)
    game = royal_game(rules)
    tiers = tier_ranges(rules)
    header = {"rules": "finkel", "pieces": 2}
    whole = solve_values(game, tmp_path / "a", header, tolerance=1e-12, threads=1, method="sweeps",
                         graph="regenerate", dtype="float64", tiers=tiers, show_progress=False)
    # a run stopped by its sweep limit in the second tier (the first takes 93) leaves the first checkpointed
    first = tiers[0][1] - tiers[0][0]
    with pytest.raises(RuntimeError):
        solve_values(game, tmp_path / "b", header, tolerance=1e-12, threads=1, method="sweeps",
                     graph="regenerate", dtype="float64", tiers=tiers, max_sweeps=120, show_progress=False)
    again = solve_values(game, tmp_path / "b", header, tolerance=1e-12, threads=1, method="sweeps",
                         graph="regenerate", dtype="float64", tiers=tiers, show_progress=False)
    assert again.meta["resumed_at_sweep"] > 0 and first > 0
    assert again.meta["solve_seconds"] > again.meta["solve_seconds_this_run"]  # the first tier's run counted
    assert np.max(np.abs(again.values - whole.values)) < 1e-11


def test_float64_and_stored_graph_agree_with_regenerated(tmp_path) -> None:
    rules = royal.load_ruleset("blitz", 1)
    game = royal_game(rules)
    kw = dict(tolerance=1e-13, threads=2, method="sweeps", dtype="float64", tiers=tier_ranges(rules),
              show_progress=False)
    a = solve_values(game, tmp_path / "a", {}, graph="regenerate", **kw)
    b = solve_values(game, tmp_path / "b", {}, graph="store", **kw)
    assert np.max(np.abs(a.values - b.values)) < 1e-12


@pytest.mark.parametrize("tiers,why", [
    ([(0, 5)], "missed"),
    ([(0, 10), (5, 20)], "two ranges"),
    ([(0, 10**9)], "outside"),
])
def test_bad_tiers_are_refused(tmp_path, tiers, why) -> None:
    game = royal_game(royal.load_ruleset("finkel", 1))
    with pytest.raises(InputError, match=why):
        solve_values(game, tmp_path / "t", {}, method="sweeps", dtype="float64", tolerance=1e-12, tiers=tiers)


def test_tiers_need_plain_sweeps_and_a_known_dtype(tmp_path) -> None:
    game = royal_game(royal.load_ruleset("finkel", 1))
    ranges = tier_ranges(royal.load_ruleset("finkel", 1))
    with pytest.raises(InputError, match="method 'sweeps'"):
        solve_values(game, tmp_path / "t", {}, method="walk", tiers=ranges)
    with pytest.raises(InputError, match="value type"):
        solve_values(game, tmp_path / "t", {}, dtype="float16")
    with pytest.raises(InputError, match="at least 2.5e-07"):
        solve_values(game, tmp_path / "t", {}, tolerance=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["finkel", "blitz"])
def test_three_piece_values_equal_the_reference(tmp_path, name: str) -> None:
    rules = royal.load_ruleset(name, 3)
    ref = reference_solve(rules)
    table = royal_solve(rules, tmp_path / "t", threads=2)
    assert np.max(np.abs((1.0 + np.asarray(table["value"])) / 2.0 - ref.values)) < 1e-9
