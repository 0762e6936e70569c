"""The ``solver ghosts`` commands: output formats and one-line errors for bad input."""
from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from gamesolver.solver.cli import cli


def run(*args: str):
    return CliRunner().invoke(cli, ["ghosts", *args])


@pytest.mark.parametrize("args", [
    ["combat", "--attacker-bonus", "15", "--defender", "ghost", "--equipment", "10,5"],
    ["combat", "--table"],
    ["clear", "--kish", "3", "--emmer", "--bonus", "15", "--steps", "4"],
    ["ambush", "--bonus", "15", "--anglean", "--reroll", "die"],
    ["nanna", "--bonus", "30"],
    ["move", "--tolerance", "1e-4"],
    ["race", "--distance", "8", "--count", "rolls"],
    ["race", "--distance", "8", "--ambush-variant", "--bonus", "20"],
    ["move", "--ambush-variant", "--tolerance", "1e-4"],
    ["defend", "--attacker-bonus", "20", "--defender-bonus", "10", "--emmer"],
])
def test_every_command_in_every_format(args):
    text = run(*args)
    assert text.exit_code == 0, text.output
    as_json = run(*args, "--json")
    assert as_json.exit_code == 0
    body = json.loads(as_json.output)
    as_csv = run(*args, "--csv")
    assert as_csv.exit_code == 0
    table = list(csv.reader(io.StringIO(as_csv.output)))
    if "rows" in body:
        assert len(table) == len(body["rows"]) + 1
        assert table[0] == body["columns"]


def test_nanna_json_lists_plain_fractions_of_one():
    out = run("nanna", "--bonus", "30", "--attempts", "3", "--json")
    body = json.loads(out.output)
    assert len(body["probabilities"]) == 3
    assert all(isinstance(p, float) and 0 <= p <= 1 for p in body["probabilities"])
    assert body["probabilities"][0] == pytest.approx(0.357)  # 30 - 45: attacker needs x - 15 > y
    assert body["probabilities"] == sorted(body["probabilities"])


def test_custom_probabilities_equal_to_the_fair_dice_give_the_same_table():
    fair = json.loads(run("race", "--distance", "6", "--json").output)
    same = json.loads(run("race", "--distance", "6", "--probs", "0.0625,0.25,0.375,0.25,0.0625", "--json").output)
    assert fair == same
    slow = json.loads(run("move", "--probs", "0.5,0.5,0,0,0", "--json").output)
    assert slow["expected_squares"] == 0.5 and [r["p"] for r in slow["rows"]] == [0.5, 0.5]


def test_combat_table_json_covers_every_net():
    body = json.loads(run("combat", "--table", "--json").output)
    nets = [r["net"] for r in body["rows"]]
    assert nets == list(range(-99, 101))
    assert body["rows"][0]["p_attacker"] == 0.0 and body["rows"][-1]["p_attacker"] == 1.0


@pytest.mark.parametrize("args", [
    ["combat", "--defender", "dragon"],
    ["combat", "--attacker-bonus", "-5"],
    ["combat", "--equipment", "10,-5"],
    ["combat", "--equipment", "ten"],
    ["combat", "--json", "--csv"],
    ["clear", "--kish", "-1"],
    ["clear", "--kish", "2", "--steps", "0"],
    ["ambush", "--anglean", "--reroll", "zeros"],
    ["nanna", "--bonus", "-1"],
    ["nanna", "--attempts", "0"],
    ["move", "--tolerance", "2"],
    ["race", "--distance", "-3"],
    ["race", "--distance", "3", "--count", "days"],
    ["move", "--probs", "0.2,0.2,0.2,0.2,0.3"],
    ["move", "--probs", "0.5,0.5,0,0"],
    ["move", "--probs", "-0.1,0.3,0.4,0.3,0.1"],
    ["move", "--probs", "0,0,1,0,0"],
    ["race", "--distance", "4", "--probs", "a,b,c,d,e"],
    ["move", "--probs", "1/16,1/4,3/8,1/4,1/16", "--anglean", "--reroll", "die"],
    ["defend", "--at-stake", "-2"],
    ["move", "--ambush-variant", "--bonus", "-4"],
    ["race", "--distance", "5", "--ambush-variant", "--count", "rolls"],
])
def test_bad_input_is_one_line_exit_2(args):
    out = run(*args)
    assert out.exit_code == 2, out.output
    assert "Traceback" not in out.output
    assert len(out.output.strip().splitlines()) == 1
    assert out.output.startswith("Error:")
