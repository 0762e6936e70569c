"""The Ur Python API: one import, positions and rolls as players write them, actions by tiles,
errors that speak of the API and not of command-line options."""
from __future__ import annotations

import pytest

from gamesolver.games import ur
from gamesolver.solver.errors import InputError, MissingTableError, PositionNotCoveredError, TableMismatchError


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    return ur.solve_table(pieces=2, cache=tmp_path_factory.mktemp("cache"))


def test_actions_are_named_by_tiles(table):
    acts = table.actions("X:A1,B4 O:C7 X", "gold+gold")
    assert acts and all(isinstance(t, str) for a in acts for p in a.paths for t in p)
    kinds = {a.kind for a in acts}
    assert kinds <= {"spawn", "move", "pass"}
    moves = [a for a in acts if a.kind == "move"]
    assert any(a.paths[0][0] in ("A1", "B4") for a in moves)
    # the text says the same as the tiles
    for a in moves:
        assert a.text.startswith("move " + "-".join(a.paths[0]))
    assert table.best_action("X:A1,B4 O:C7 X", "gold+gold") == acts[0]
    assert acts == sorted(acts, key=lambda a: -a.value)


def test_values_agree_with_the_cli_table(table, tmp_path):
    from gamesolver.games.ur.solve import state_value

    assert table.value("start") == state_value(table.options, table.table, frozenset(), frozenset())
    assert table.actions("start", "blank+blank")[0].text == "spawn on B1"


def test_open_table_finds_the_solved_one_and_never_solves(table, tmp_path):
    again = ur.open_table(table.path, pieces=2)
    assert again.value("start") == table.value("start")
    with pytest.raises(MissingTableError) as err:
        ur.open_table(pieces=2, cache=tmp_path)
    assert "ur.solve_table(pieces=2)" in str(err.value) and "--" not in str(err.value)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(TableMismatchError):
        ur.open_table(table.path, pieces=1)


@pytest.mark.parametrize("call", [
    lambda t: t.best_action("start", "gold+blue"),
    lambda t: t.value("X:Z9 O:- X"),
    lambda t: ur.parse("start", pieces=9),
    lambda t: ur.open_table(pieces=2, options=ur.UrOptions(pieces=3)),
])
def test_errors_name_no_cli_option(table, call):
    with pytest.raises(InputError) as err:
        call(table)
    assert "--" not in str(err.value)


def test_solve_table_stays_callable_after_the_solve_module_is_imported(table, tmp_path):
    import gamesolver.games.ur.solve  # noqa: F401  (the submodule binds its name on the package)

    again = ur.solve_table(pieces=2, out=table.path)  # solved again, replacing its own table
    assert callable(ur.solve_table) and again.value("start") == table.value("start")


def test_royalur_rule_sets_answer_through_the_same_api(tmp_path) -> None:
    """``rules=`` gives RoyalUr's rule sets the same calls: solve_table, open_table (a folder or an
    .rgu file), open_opening (the shipped file), parse; the answers are the CLI's, and each says it
    is unproven with its residual."""
    import json

    from click.testing import CliRunner

    from gamesolver.solver.cli import cli

    solved = ur.solve_table(rules="finkel", pieces=2, out=tmp_path / "f2", show_progress=False)
    again = ur.open_table(tmp_path / "f2", rules="finkel", pieces=2)
    cli_json = lambda *a: json.loads(CliRunner().invoke(cli, ["ur", *a, "--rules", "finkel", "--pieces", "2",
                                                              "--table", str(tmp_path / "f2"), "--json"]).stdout)
    analysis = cli_json("analyze", "start")
    for t in (solved, again):
        assert t.win_probability("start") == analysis["win_probability"] and t.value("start") == analysis["value"]
        v = t.evaluate("start")
        assert v.proven is False and v.residual == analysis["residual"]
    for roll in range(5):
        best = cli_json("best-move", "start", "--roll", str(roll))
        got = solved.actions("start", roll)
        assert [a.value for a in got] == [a["value"] for a in best["actions"]]
        assert [a.extra_turn for a in got] == [a["extra_roll"] for a in best["actions"]]
        assert (solved.best_action("start", roll) is None) == (best["best"] is None)
    pos = ur.parse("start", rules="finkel", pieces=2)
    assert solved.value(pos) == solved.value("start")
    rgu = tmp_path / "f2.rgu"
    assert CliRunner().invoke(cli, ["ur", "export", "--format", "rgu", "--rules", "finkel", "--pieces", "2",
                                    "--table", str(tmp_path / "f2"), "--out", str(rgu)]).exit_code == 0
    from_file = ur.open_table(rgu, rules="finkel", pieces=2)
    assert abs(from_file.win_probability("start") - analysis["win_probability"]) <= from_file.provenance.rounded_within
    book = ur.open_opening(rules="finkel")
    assert book.rules.pieces == 7 and 0.5 < book.win_probability("start") < 0.52
    assert book.get_win_probability("start") == book.probe_win_probability("start") == book.win_probability("start")
    far = "L:1/B5,B6,A8/3 D:2/C8,B7/3 L"  # far from the start: beyond the shipped opening
    with pytest.raises(PositionNotCoveredError):
        book.probe_value(far)
    assert book.get_value(far) is None and book.get_win_probability(far, 0.5) == 0.5
    assert solved.get_value("start") == solved.value("start")
    with pytest.raises(MissingTableError, match=r"ur.solve_table\(rules='finkel', pieces=3\)"):
        ur.open_table(tmp_path / "none", rules="finkel", pieces=3)
    with pytest.raises(InputError, match="rules="):
        ur.open_table(tmp_path / "f2", rules="finkel", options=ur.UrOptions(pieces=2))


def test_a_won_game_has_its_value_by_the_rules_and_no_action_to_choose():
    book = ur.open_opening(pieces=6)  # beyond its opening, yet the rules answer a finished game
    won = "X:A1,C1,A7,C7,B2 O:B1,B4 O"
    assert book.value(won) == -1.0 and book.evaluate(won).value == -1.0
    with pytest.raises(InputError) as err:
        book.best_action(won, "gold+gold")
    assert "the game is over (X holds all four forts and has won)" in str(err.value) and "--" not in str(err.value)
    with pytest.raises(PositionNotCoveredError):  # a game still on, beyond the opening: not answered
        book.best_action("X:A1,C1,A7,B2 O:B1,B4 O", "gold+gold")
