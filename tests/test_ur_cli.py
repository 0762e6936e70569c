"""The ``solver ur`` commands: output formats and one-line errors for bad input."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from gamesolver.games.ur.rules import DEFAULT_BOARD
from gamesolver.solver.cli import cli
from tests.test_ur_reference import MINI_BOARD


def run(*args: str):
    return CliRunner().invoke(cli, ["ur", *args])


def assert_one_line_error(result) -> None:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error:")
    assert "Traceback" not in result.output


def test_graph_json_counts() -> None:
    r = run("graph", "--pieces", "3", "--json")
    assert r.exit_code == 0
    doc = json.loads(r.output)
    assert doc["states"] == 1_163_031
    assert sum(t["states"] for t in doc["tiers"]) == doc["states"]


def test_graph_counts_the_stored_states_as_the_generator_does() -> None:
    # the command counts them from the board's mirror (no mirror index built); the generator, which
    # numbers them, must agree
    from gamesolver.games.ur.generator import kernel
    from gamesolver.games.ur.rules import UrOptions

    for k in (2, 4):
        doc = json.loads(run("graph", "--pieces", str(k), "--json").output)
        assert doc["stored_states"] == kernel(UrOptions(pieces=k)).state_count < doc["states"]


def test_show_start_draws_the_board() -> None:
    r = run("show", "start")
    assert r.exit_code == 0
    assert "pools: X 7, O 7;  X to move" in r.output and r.output.count("\n") == 10


def test_show_places_pieces() -> None:
    r = run("show", "X:A1,b4 O:C7 O", "--pieces", "2")
    assert r.exit_code == 0
    row1 = next(line for line in r.output.splitlines() if line.startswith(" 1"))
    row7 = next(line for line in r.output.splitlines() if line.startswith(" 7"))
    assert "[X]" in row1 and "[O]" in row7 and "O to move" in r.output
    assert "game is over" not in r.output and json.loads(run("show", "start", "--json").output)["game_over"] is False


def test_show_says_when_the_game_is_over() -> None:
    r = run("show", "X:A1,C1,A7,C7 O:B1 O")
    assert r.exit_code == 0 and r.output.splitlines()[-1] == "the game is over (X holds all four forts and has won)"
    assert json.loads(run("show", "X:A1,C1,A7,C7 O:B1 O", "--json").output)["game_over"] is True


@pytest.mark.parametrize("written", ["X:A1, b4 O:C7 O", "X: A1,B4 O: C7 O", "x : a1 , b4  o:c7 o", "O:C7 X:A1,B4 O"])
def test_positions_are_read_with_the_spaces_people_type(written: str) -> None:
    r = run("show", written, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["position"] == "X:A1,B4 O:C7 O"


@pytest.mark.parametrize("written, read", [("X: O:C7 X", "X:- O:C7 X"), ("X:A1 O: X", "X:A1 O:- X"),
                                           ("X:A1 O: O", "X:A1 O:- O")])
def test_a_side_with_no_tiles_may_be_left_blank(written: str, read: str) -> None:
    # a space after a colon with no tile following leaves that side empty: the X or O after it is
    # the side to move, not a tile
    r = run("show", written, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["position"] == read


def test_solve_then_best_move_and_analyze(tmp_path) -> None:
    board = tmp_path / "mini.json"
    board.write_text(json.dumps(MINI_BOARD))
    out = tmp_path / "table"
    r = run("solve", "--pieces", "4", "--board", str(board), "--out", str(out))
    assert r.exit_code == 0, r.output
    assert "value of start for the first player" in r.output
    r = run("best-move", "X:A1,A3,C3,C2 O:B2 X", "--roll", "gold+blank", "--pieces", "4", "--board", str(board),
            "--table", str(out), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["value"] == 1.0 and "wins" in doc["best"]
    r = run("analyze", "start", "--pieces", "4", "--board", str(board), "--table", str(out), "--json")
    doc = json.loads(r.output)
    assert len(doc["rolls"]) == 6
    assert abs(doc["value"] - sum(x["probability"] * x["value"] for x in doc["rolls"])) < 1e-5


def test_queries_build_a_missing_table() -> None:
    r = run("best-move", "start", "--roll", "blank+gold", "--pieces", "1", "--json")
    assert r.exit_code == 0
    assert json.loads(r.stdout)["value"] == 0.0  # one piece cannot hold four forts


@pytest.mark.parametrize(
    "args",
    [
        ("show", "start", "--pieces", "8"),
        ("show", "X:A1,Z9 O:- X"),
        ("show", "X:A5 O:- X"),
        ("show", "X:A1 O:A1 X"),
        ("show", "X:A1,A1 O:- X"),
        ("show", "X:A1,A2,A3 O:- X", "--pieces", "2"),
        ("show", "X:A1 O:B2"),
        ("show", "hello"),
        ("show", "X:A1;B4 O:- X"),
        ("show", "X:A1 O:C7 X : B4"),
        ("best-move", "start", "--roll", "gold+copper", "--pieces", "1"),
        ("analyze", "start", "--pieces", "0"),
    ],
)
def test_bad_input_is_a_one_line_error(args) -> None:
    assert_one_line_error(run(*args))


def test_broken_board_files_are_one_line_errors(tmp_path) -> None:
    doc = json.loads(DEFAULT_BOARD.read_text())
    doc["tiles"][0]["neighbours"].append("C8")  # A1 -> C8 but not C8 -> A1
    bad = tmp_path / "asym.json"
    bad.write_text(json.dumps(doc))
    r = run("graph", "--pieces", "2", "--board", str(bad))
    assert_one_line_error(r)
    assert "broken adjacency" in r.output
    doc["tiles"][0]["neighbours"][-1] = "Q9"
    bad.write_text(json.dumps(doc))
    assert_one_line_error(run("show", "start", "--board", str(bad)))
    bad.write_text("{not json")
    assert_one_line_error(run("show", "start", "--board", str(bad)))
    assert_one_line_error(run("show", "start", "--board", str(tmp_path / "missing.json")))


@pytest.mark.parametrize("position, to_move_value", [("X:A1,C1,A7,C7 O:B1 O", -1.0), ("X:B1 O:A1,C1,A7,C7 O", 1.0),
                                                      ("X:A1,C1,A7,C7,B4 O:B1,A3 X", 1.0)])
def test_a_won_game_is_answered_by_the_rules_without_a_table(position: str, to_move_value: float, tmp_path) -> None:
    # seven pieces: no table in this empty cache, and these positions lie beyond the shipped
    # opening file, so any answer must come from the rules (a finished game needs no solve)
    r = run("analyze", position, "--pieces", "7", "--cache", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["game_over"] is True and doc["value"] == doc["lower"] == doc["upper"] == to_move_value
    assert doc["proven"] is True and doc["rolls"] == [] and doc["source"] == {"kind": "rules"}
    winner = doc["to_move"] if to_move_value > 0 else {"X": "O", "O": "X"}[doc["to_move"]]
    assert doc["winner"] == winner and f"{winner} holds all four forts" in doc["why"]
    text = run("analyze", position, "--pieces", "7", "--cache", str(tmp_path))
    assert text.exit_code == 0 and text.output.count("\n") == 1
    assert f"value for {doc['to_move']} {to_move_value:+g}, exact: the game is over" in text.output
    # no action to choose in a won game: a one-line error, no table opened
    best = run("best-move", position, "--roll", "gold+gold", "--pieces", "7", "--cache", str(tmp_path))
    assert_one_line_error(best)
    assert "the game is over" in best.output and "no action to choose" in best.output
    assert not any(tmp_path.iterdir())


def test_a_game_still_on_is_not_called_over(tmp_path) -> None:
    # three forts and the entry: not over, so the query still needs the table (refused here)
    r = run("analyze", "X:A1,C1,A7,B1 O:C7 X", "--pieces", "7", "--cache", str(tmp_path), "--json")
    assert r.exit_code == 1 and "game_over" not in r.output
