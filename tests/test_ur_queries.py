"""The real game's queries without a table: the missing table's message (what building it takes,
here and on a cluster, and the commands), and games nobody can win (fewer pieces than forts)."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import kernel, stored_state_count
from gamesolver.solver.cli import cli


def run(*args: str):
    return CliRunner().invoke(cli, ["ur", *args])


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_stored_state_count_needs_no_mirror_index(k: int) -> None:
    assert stored_state_count(UrOptions(pieces=k)) == kernel(UrOptions(pieces=k)).state_count
    assert stored_state_count(UrOptions(pieces=k, mirror=False)) == kernel(UrOptions(pieces=k)).full_state_count


def test_missing_table_says_what_building_it_takes(tmp_path) -> None:
    r = run("best-move", "start", "--roll", "gold+gold", "--pieces", "5", "--cache", str(tmp_path))
    assert r.exit_code == 1 and "Traceback" not in r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: no solved table for pieces=5")
    assert "61,877,337 states" in lines[0] and "on this machine" in lines[0] and "Ray cluster" in lines[0]
    assert "'solver ur solve --pieces 5'" in lines[0] and "--backend ray --address" in lines[0]
    assert not any(tmp_path.iterdir())  # a query never starts the solve


def test_missing_table_as_json(tmp_path) -> None:
    where = tmp_path / "none"
    r = run("analyze", "start", "--table", str(where), "--json")  # the real game: seven pieces
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["missing_table"] == str(where) and doc["pieces"] == 7
    assert doc["commands"][0] == f"solver ur solve --pieces 7 --out {where}"
    p = doc["projection"]
    assert p["states"] == 639_358_121 and p["value_bytes"] == 4 * 639_358_121
    here, cluster = p["solve_seconds_here"], p["solve_seconds_on_cluster"]
    assert 0 < here[0] < here[1] and 0 < cluster[0] < here[0]
    assert not where.exists()


@pytest.mark.parametrize("k", [1, 2, 3])
def test_too_few_pieces_to_win_is_said_plainly(tmp_path, k: int) -> None:
    r = run("best-move", "X:A1 O:C7 X", "--roll", "gold+gold", "--pieces", str(k), "--cache", str(tmp_path))
    assert r.exit_code == 0 and "nobody can win" in r.output and "+0.000000" not in r.output
    r = run("best-move", "start", "--roll", "gold+gold", "--pieces", str(k), "--json", "--cache", str(tmp_path))
    doc = json.loads(r.stdout)
    assert doc["winnable"] is False and doc["value"] == 0.0 and doc["best"] is None
    assert len(doc["actions"]) > 1 and all(a["value"] == 0.0 for a in doc["actions"])
    r = run("analyze", "start", "--pieces", str(k), "--json", "--cache", str(tmp_path))
    doc = json.loads(r.stdout)
    assert doc["winnable"] is False and "nobody can win" in doc["note"] and len(doc["rolls"]) == 6
    assert doc["value"] == 0.0 and all(r["value"] == 0.0 and r["best"] is None for r in doc["rolls"])


def test_four_pieces_can_win_so_the_table_answers(tmp_path) -> None:
    r = run("analyze", "start", "--pieces", "4", "--table", str(tmp_path / "none"), "--json")
    assert r.exit_code == 1 and "winnable" not in r.stdout
