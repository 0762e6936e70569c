"""Every Ur value shown is proven (with its interval) or says plainly that it is not (with the
residual of its solve): the CLI's text and JSON, the Python API, the shipped opening files, the
solve's default, and the claims that the shipped files settle."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from gamesolver.games import ur
from gamesolver.games.ur import opening
from gamesolver.games.ur.claims import first_player_favoured
from gamesolver.games.ur.provenance import Provenance
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.cli import cli
from tests.test_ur_reference import mini_options


def run(*args: str):
    return CliRunner().invoke(cli, ["ur", *args])


def test_provenance_reads_proofs_residuals_and_old_targets() -> None:
    assert Provenance.of_meta({"certified": {"bound": 2e-6}, "residual": 1e-7}, False) == Provenance(True, bound=2e-6)
    assert Provenance.of_meta({"residual": 3e-7, "tolerance": 1e-6}, False) == Provenance(False, residual=3e-7)
    assert Provenance.of_meta({"tolerance": 1e-5}, False) == Provenance(False, residual_below=1e-5)
    assert Provenance(True, bound=0.5).fields(0.25) == {"proven": True, "lower": -0.25, "upper": 0.75}
    assert Provenance(True).fields(0.1, (0.0, 0.2)) == {"proven": True, "lower": 0.0, "upper": 0.2}
    assert Provenance(False, residual=3e-7).fields(0.1) == {"proven": False, "residual": 3e-7}
    assert Provenance(False, residual=3e-7).text() == "unproven (residual 3e-07)"
    assert Provenance(False, residual_below=1e-5).text() == "unproven (residual below 1e-05)"


@pytest.mark.parametrize("pieces", [4, 5, 6])
def test_every_shipped_value_lies_in_its_interval_or_is_labelled_unproven(pieces: int) -> None:
    book = opening.shipped(UrOptions(pieces=pieces))
    assert book is not None
    if book.intervals is not None:
        lo, hi = book.intervals
        assert np.all(lo <= book.values) and np.all(book.values <= hi)
        assert book.provenance.proven and float(np.max(hi - lo)) < 1e-5
    else:
        assert not book.provenance.proven and "unproven (residual" in book.provenance.text()


def test_the_cli_labels_a_proven_and_an_unproven_answer(tmp_path) -> None:
    doc = json.loads(run("analyze", "start", "--pieces", "4", "--json", "--cache", str(tmp_path)).stdout)
    assert doc["proven"] is True and doc["lower"] <= doc["value"] <= doc["upper"] and "tolerance" not in json.dumps(doc)
    assert doc["source"]["proven"] is True and all(r["lower"] <= r["value"] <= r["upper"] for r in doc["rolls"])
    doc = json.loads(run("analyze", "start", "--pieces", "6", "--json", "--cache", str(tmp_path)).stdout)
    assert doc["proven"] is False and doc["residual_below"] == 1e-5 and "lower" not in doc
    assert "tolerance" not in json.dumps(doc)
    text = run("analyze", "start", "--pieces", "6", "--cache", str(tmp_path)).output
    assert text.count("unproven (residual below 1e-05)") == 1 and "tolerance" not in text and "proven between" not in text
    text = run("best-move", "start", "--roll", "gold+gold", "--pieces", "4", "--cache", str(tmp_path)).output
    assert "(proven between" in text and "unproven" not in text
    doc = json.loads(run("best-move", "start", "--roll", "gold+gold", "--pieces", "6", "--json",
                         "--cache", str(tmp_path)).stdout)
    assert doc["proven"] is False and doc["source"]["proven"] is False


def test_the_api_carries_the_interval_or_the_residual() -> None:
    proven = ur.open_opening(pieces=4).evaluate("start")
    assert proven.proven and proven.lower <= proven.value <= proven.upper and proven.upper - proven.lower < 1e-5
    unproven = ur.open_opening(pieces=6).evaluate("start")
    assert not unproven.proven and unproven.lower is None and unproven.residual == 1e-5
    assert unproven.as_dict() == {"value": unproven.value, "proven": False, "residual": 1e-5}


def test_solve_proves_by_default_and_no_proof_says_unproven(tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    common = ["--pieces", "4", "--board", o.board_file]
    r = run("solve", *common, "--out", str(tmp_path / "p"), "--json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["proven"] is True and doc["certified"]["aimed_at"] == 1e-5
    assert doc["start"]["lower"] <= doc["start_value"] <= doc["start"]["upper"]
    r = run("solve", *common, "--out", str(tmp_path / "u"), "--no-proof", "--json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["proven"] is False and doc["start"] == {"proven": False, "residual": doc["residual"]}
    text = run("analyze", "start", *common, "--table", str(tmp_path / "u")).output
    assert text.count("unproven (residual ") == 1 and f"from the table at {tmp_path / 'u'}" in text
    text = run("analyze", "start", *common, "--table", str(tmp_path / "p")).output
    assert "(proven between" in text and "unproven" not in text
    r = run("solve", *common, "--out", str(tmp_path / "x"), "--no-proof", "--width", "1e-4")
    assert r.exit_code == 2 and "--width is the proof's aim" in r.output


def test_verify_settles_the_first_players_advantage_from_the_shipped_proven_file(tmp_path) -> None:
    result = first_player_favoured(cache=str(tmp_path))
    assert result.status == "verified" and "proven worth" in result.summary and "K = 4" in result.summary
    assert result.figures["4"]["source"] == "shipped opening file" and result.figures["4"]["proven"] is True
    assert result.figures["5"]["proven"] is True  # the five-piece file is proven too, from its own proof
    assert result.figures["6"]["proven"] is False  # the six-piece file is not
    assert not any(tmp_path.iterdir())  # nothing solved


def test_royalur_answers_say_they_are_unproven_with_their_residual() -> None:
    doc = json.loads(run("analyze", "start", "--rules", "finkel", "--pieces", "2", "--json").stdout)
    assert doc["proven"] is False and 0 <= doc["residual"] < 1e-11 and "lower" not in doc
    doc = json.loads(run("best-move", "start", "--rules", "finkel", "--pieces", "2", "--roll", "2", "--json").stdout)
    assert doc["proven"] is False and "residual" in doc
    text = run("analyze", "start", "--rules", "finkel", "--pieces", "2").output
    assert text.count("unproven (residual ") == 1
