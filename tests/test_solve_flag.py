"""``--solve`` on analyze, best-move and export: a missing table of any size is solved first
(where --table points, or in the cache), then the command answers as it would from that table;
without it the missing table's one line says --solve would build it, and nothing is written."""
from __future__ import annotations

import json

from click.testing import CliRunner

from gamesolver.solver.cli import cli
from tests.test_ur_reference import mini_options


def run(*args: str):
    return CliRunner().invoke(cli, ["ur", *args])


def test_fort_rules_solve_a_missing_table_first(tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    common = ["--pieces", "4", "--board", o.board_file]
    where = tmp_path / "t"
    r = run("analyze", "start", *common, "--table", str(where))
    assert r.exit_code == 1 and "or add --solve to this command to solve it first" in r.output
    assert "Traceback" not in r.output and not where.exists()
    r = run("analyze", "start", *common, "--table", str(where), "--solve", "--json")
    assert r.exit_code == 0, r.output
    solved = json.loads(r.stdout)
    assert (where / "header.json").is_file() and solved["source"]["kind"] == "table"
    again = json.loads(run("analyze", "start", *common, "--table", str(where), "--json").stdout)
    assert again == solved  # the same table, now read without solving
    r = run("best-move", "start", "--roll", "gold+gold", *common, "--table", str(where), "--solve")
    assert r.exit_code == 0 and "value for X" in r.output
    out = tmp_path / "all.csv"
    r = run("export", *common, "--table", str(tmp_path / "u"), "--solve", "--out", str(out))
    assert r.exit_code == 0 and out.read_text().count("\n") > 1000 and (tmp_path / "u" / "header.json").is_file()
    r = run("analyze", "start", *common, "--solve", "--opening", str(tmp_path / "x.npz"))
    assert r.exit_code == 2 and "give --solve or --opening, not both" in r.output


def test_royalur_rules_solve_a_missing_table_first(tmp_path) -> None:
    where = tmp_path / "f3"
    common = ["--rules", "finkel", "--pieces", "3", "--table", str(where)]
    r = run("analyze", "start", *common)
    assert r.exit_code == 1 and len(r.output.strip().splitlines()) == 1
    assert "solver ur solve --rules finkel --pieces 3" in r.output and "or add --solve" in r.output
    assert not where.exists()
    r = run("analyze", "start", *common, "--solve")
    assert r.exit_code == 0 and "%" in r.output, r.output
    assert (where / "header.json").is_file()
    r = run("best-move", "start", "--roll", "2", *common, "--solve", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)
    out = tmp_path / "f3.rgu"
    r = run("export", "--format", "rgu", "--rules", "finkel", "--pieces", "3", "--table", str(tmp_path / "g"),
            "--solve", "--out", str(out))
    assert r.exit_code == 0 and out.read_bytes()[:3] == b"RGU" and (tmp_path / "g" / "header.json").is_file()
