import json

import pytest
from click.testing import CliRunner

from gamesolver.games import unee
from gamesolver.solver.cli import cli
from gamesolver.solver.errors import InputError


def run(*args):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize(
    "text", ["6 6 6 / 6 6 6 S", "666/666 S", "6 6 6/6 6 6 south", " 6 6 6 /  6 6 6   s", "start"]
)
def test_parse_accepts_the_players_forms(text):
    assert unee.parse(text) == unee.start_position()


def test_parse_and_format_round_trip():
    pos = unee.parse("3 0 1 / 2 0 6 N")
    assert (pos.north, pos.south, pos.side) == ((3, 0, 1), (2, 0, 6), "N")
    assert unee.parse(str(pos)) == pos
    assert unee.Position.from_relative(pos.relative(), "N") == pos
    assert pos.relative() == [3, 0, 1, 6, 0, 2]
    assert unee.parse("3 0 1 / 2 0 6 S").relative() == [6, 0, 2, 3, 0, 1]


def test_two_digit_counts():
    pos = unee.parse("12 0 1 / 2 0 21 N")
    assert pos.north == (12, 0, 1) and pos.south == (2, 0, 21)


@pytest.mark.parametrize(
    "text,words",
    [
        ("6 6 / 6 6 6 S", "North's row has 2 holes; expected 3"),
        ("6 6 6 / 6 6 6 6 S", "South's row has 4 holes; expected 3"),
        ("6 6 6 / 6 -2 6 S", "negative ball count"),
        ("6 x 6 / 6 6 6 S", "not a ball count"),
        ("6 6 6 / 6 6 30 S", "37"[:0] + "balls on the board; this variant has only 36"),
        ("6 6 6 / 6 6 6 W", "unknown side"),
        ("6 6 6 / 6 6 6", "side to move is missing"),
        ("6 6 6 6 6 6 S", "missing '/'"),
    ],
)
def test_bad_positions_name_the_problem(text, words):
    with pytest.raises(InputError, match=words):
        unee.parse(text)


def test_moves_by_the_players_names():
    pos = unee.parse("1 2 3 / 4 0 6 S")
    assert unee.parse_move("S-left", pos) == 2
    assert unee.parse_move("s-right", pos) == 0
    assert unee.parse_move("S-1", pos) == 2
    with pytest.raises(InputError, match="empty"):
        unee.parse_move("S-middle", pos)
    with pytest.raises(InputError, match="South is to move"):
        unee.parse_move("N-left", pos)
    with pytest.raises(InputError, match="unknown hole"):
        unee.parse_move("S-top", pos)


def test_show_lists_moves_and_captures():
    out = run("unee", "show", "1 0 0 / 3 1 0 S")
    assert out.exit_code == 0, out.output
    assert "S-middle" in out.output and "captures 4" in out.output
    assert "S-left" in out.output and "S-right" not in out.output


def test_show_json():
    out = run("unee", "show", "--json", "6 6 6 / 6 6 6 S")
    data = json.loads(out.output)
    assert data["balls"] == 36 and not data["game_over"]
    assert [m["move"] for m in data["moves"]] == ["S-right", "S-middle", "S-left"]
    assert data["moves"][0]["position"] == "7 7 7 / 7 7 1 N"


def test_show_game_over():
    out = run("unee", "show", "0 0 0 / 1 0 2 N")
    assert out.exit_code == 0
    assert "Game over" in out.output and "3 balls" in out.output and "South" in out.output


@pytest.mark.parametrize(
    "args",
    [
        ("unee", "show", "6 6 / 6 6 6 S"),
        ("unee", "show", "6 6 6 / 6 -1 6 S"),
        ("unee", "show", "6 6 6 / 6 a 6 S"),
        ("unee", "show", "6 6 6 / 6 6 60 S"),
        ("unee", "show", "6 6 6 / 6 6 6 X"),
        ("unee", "--holes", "0", "graph"),
    ],
)
def test_bad_input_is_one_line_exit_2(args):
    out = run(*args)
    assert out.exit_code == 2
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error:"), out.output
    assert "Traceback" not in out.output


def test_graph_json_small_variant():
    out = run("unee", "--holes", "2", "--balls", "3", "graph", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    from math import comb

    assert data["boards"] == comb(12 + 4, 4)
    assert data["total"]["states"] == 2 * data["boards"]
    assert sum(layer["states"] for layer in data["layers"]) == data["total"]["states"]
    # from the start only multiples of four balls can be on the board
    assert all(layer["reachable_states"] == 0 for layer in data["layers"] if layer["balls"] % 4)
    assert data["layers"][12]["reachable_states"] >= 1


def test_graph_default_counts():
    out = run("unee", "graph", "--json")
    data = json.loads(out.output)
    assert data["boards"] == 5_245_786
    assert data["total"]["states"] == 10_491_572


def test_one_ball_is_a_ball():
    out = run("unee", "show", "0 1 4 / 3 1 0 S").output
    assert "( 1 ball)  ->" in out and "1 balls" not in out and "( 3 balls) ->" in out


def test_draw_thresholds_that_never_apply_are_said_in_words():
    """On 2 x 4 the start is a draw under the draw rule whatever was captured: no threshold."""
    from gamesolver.games.unee.answers import thresholds

    assert thresholds(None, None) == "no captured difference wins or loses"
    assert thresholds(-12, -12) == "wins iff captured difference > 12, loses iff < -12"
    assert "never" not in thresholds(None, -4) and "never" not in thresholds(4, None)
    out = run("unee", "--holes", "2", "--balls", "4", "best-move", "start", "--rule", "draw").output
    assert "never" not in out and "no captured difference wins or loses" in out
