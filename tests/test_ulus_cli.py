"""``solver ulus`` commands: outputs parse, bad input is one line with exit code 2; the claim."""
from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from gamesolver.games.claims import load_claims
from gamesolver.games.ulus.claims import camel_race_faster
from gamesolver.games.ulus.shagai import face_probabilities, preset_names
from gamesolver.solver.cli import cli


def run(*args: str):
    return CliRunner().invoke(cli, ["ulus", *args])


def test_shagai_json_and_csv() -> None:
    res = run("shagai", "--preset", "uniform", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert sum(r["probability"] for r in doc["patterns"]) == pytest.approx(1.0)
    assert doc["patterns"][0] == {**doc["patterns"][0], "pattern": "four-different", "fraction": "3/32"}
    res = run("shagai", "--faces", "0.1,0.2,0.3,0.4", "--csv")
    rows = list(csv.DictReader(io.StringIO(res.output)))
    assert len(rows) == 10 and rows[-1]["pattern"] == "three-or-more-goats"


def test_race_json_csv_text(tmp_path) -> None:
    res = run("race", "--players", "3", "--chinggis", "1", "--alun-gua", "3", "--json", "--cache", str(tmp_path))
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert sum(r["win"] for r in doc["win"]) == pytest.approx(1.0)
    assert doc["win"][2]["win_alun_gua_sings"] > doc["win"][2]["win"]
    res = run("race", "--players", "2", "--camel", "--csv", "--rounds", "--no-save", "--cache", str(tmp_path))
    rows = list(csv.DictReader(io.StringIO(res.output)))
    assert sum(float(r["probability"]) for r in rows) == pytest.approx(1.0)
    res = run("race", "--players", "3", "--from", "8,0,0", "--turn", "1", "--cache", str(tmp_path))
    assert res.exit_code == 0 and "player 1 to roll" in res.output


def test_fight_json() -> None:
    res = run("fight", "--strength", "14", "--multiplier", "3", "--players", "3", "--json")
    doc = json.loads(res.output)
    assert doc["power"] == 9
    assert doc["better"]["by_points"] == "fight"


@pytest.mark.parametrize(
    "args",
    [
        ("shagai", "--faces", "0.5,0.5,0.5,0.5"),
        ("shagai", "--faces", "0.5,0.6,-0.1,0"),
        ("shagai", "--faces", "0.5,0.5"),
        ("race", "--players", "7"),
        ("race", "--players", "3", "--chinggis", "2", "--alun-gua", "2"),
        ("race", "--players", "3", "--from", "1,2"),
        ("race", "--players", "2", "--faces", "0,0.5,0.25,0.25"),
        ("fight", "--strength", "-3", "--multiplier", "2", "--players", "3"),
        ("fight", "--strength", "3", "--multiplier", "2", "--players", "3", "--season", "monsoon"),
    ],
)
def test_bad_input_is_one_line(args) -> None:
    res = run(*args, "--no-save") if args[0] == "race" else run(*args)
    assert res.exit_code == 2
    assert "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert res.output.startswith("Error:")


def test_camel_claim_follows_the_faces() -> None:
    """Camel is faster exactly where the camel face is likelier than the horse face."""
    result = camel_race_faster()
    for name in preset_names():
        h, c = face_probabilities(name)[:2]
        fig = result.figures[name]
        if c > h:
            assert fig["camel_expected_rounds"] < fig["horse_expected_rounds"]
        elif c < h:
            assert fig["camel_expected_rounds"] > fig["horse_expected_rounds"]
        else:
            assert fig["camel_expected_rounds"] == pytest.approx(fig["horse_expected_rounds"])
    h, c = face_probabilities()[:2]
    if c < h:  # the measured default bones: camel faces rarer than horse faces
        assert result.status == "refuted"


def test_claim_is_registered() -> None:
    names = [c.name for c in load_claims() if c.game == "ulus"]
    assert "ulus-camel-race-faster" in names
    claim = next(c for c in load_claims() if c.name == "ulus-camel-race-faster")
    assert claim.checker()().status in ("verified", "refuted", "undetermined")
