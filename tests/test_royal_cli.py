"""``solver ur ... --rules finkel|blitz|masters`` and ``solver ur export --format rgu``: the RoyalUr
rule sets through the CLI, RoyalUr's .rgu files in and out, and one-line errors."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from gamesolver.games.ur import rgu, royal, royal_encoding
from gamesolver.games.ur.royal_table import royal_solve
from gamesolver.solver.cli import cli

FINKEL2 = royal.load_ruleset("finkel", 2)


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def finkel2_table(tmp_path_factory):
    root = tmp_path_factory.mktemp("finkel2") / "table"
    royal_solve(FINKEL2, root, threads=2)
    return root


def one_line_error(result, code: int) -> str:
    assert result.exit_code == code, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


def test_solve_writes_the_table_and_prints_the_start(tmp_path) -> None:
    r = run("ur", "solve", "--rules", "finkel", "--pieces", "1", "--out", str(tmp_path / "t"), "--threads", "1")
    assert r.exit_code == 0, r.output
    assert "light's chance of winning from the start: 53.00498395" in r.output  # the reference solver's figure
    assert "endless check (eps 1e-06): passed" in r.output
    j = CliRunner().invoke(cli, ["ur", "solve", "--rules", "blitz", "--pieces", "1", "--out", str(tmp_path / "b"),
                                 "--json"])
    got = json.loads(j.stdout)
    assert got["rules"] == "blitz" and got["states"] == 277 and got["endless_check"]["flagged"] == 0
    assert got["start_win_probability"] == pytest.approx(0.5092376484, abs=1e-10)  # the reference solver's
    bad = one_line_error(run("ur", "solve", "--rules", "blitz", "--pieces", "1", "--method", "walk"), 2)
    assert "--method applies to the fort rules" in bad


def test_analyze_and_best_move_read_our_table_and_an_rgu_file_alike(finkel2_table, tmp_path) -> None:
    out = tmp_path / "f2.rgu"
    r = run("ur", "export", "--format", "rgu", "--rules", "finkel", "--pieces", "2", "--table", str(finkel2_table),
            "--out", str(out), "--value-type", "f64")
    assert r.exit_code == 0, r.output
    t = rgu.read_rgu(out)
    assert t.entry_count == 12_990  # RoyalUr's finkel2p.rgu has exactly this many
    pos = "L:1/A2/0 D:1/B4/0 L"
    ours = json.loads(run("ur", "analyze", pos, "--rules", "finkel", "--pieces", "2", "--table",
                          str(finkel2_table), "--json").output)
    theirs = json.loads(run("ur", "analyze", pos, "--rules", "finkel", "--pieces", "2", "--table", str(out),
                            "--json").output)
    assert ours["win_probability"] == pytest.approx(theirs["win_probability"], abs=1e-12)
    assert [row["best"] for row in ours["rolls"]] == [row["best"] for row in theirs["rolls"]]
    assert 0.0 < ours["win_probability"] < 1.0
    bm = json.loads(run("ur", "best-move", pos, "--roll", "2", "--rules", "finkel", "--pieces", "2", "--table",
                        str(out), "--json").output)
    probs = [m["win_probability"] for m in bm["actions"]]
    assert probs == sorted(probs, reverse=True) and len(probs) >= 2
    assert bm["best"] == bm["actions"][0]["action"] and bm["win_probability"] == probs[0]
    assert bm["source"]["kind"] == "rgu-file" and bm["source"]["path"] == str(out)
    assert bm["source"]["rounded_as"] in ("percent16", "f32", "f64") and bm["source"]["proven"] is False
    text = run("ur", "best-move", pos, "--roll", "2", "--rules", "finkel", "--pieces", "2", "--table",
               str(finkel2_table)).output
    assert text.startswith("light to move, roll 2: ")


def test_export_solves_a_small_table_on_first_use_and_asks_for_a_large_one(tmp_path, monkeypatch) -> None:
    """With an empty cache, as a new user has it: the README's example works (two pieces solve in
    under a second, as a query would solve them), and a large rule set names the command instead."""
    monkeypatch.setenv("SOLVER_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "f2.rgu"
    r = CliRunner().invoke(cli, ["ur", "export", "--format", "rgu", "--rules", "finkel", "--pieces", "2", "--out",
                                 str(out)], catch_exceptions=False)
    assert r.exit_code == 0 and out.is_file(), r.output
    assert "wrote 12,869 positions to" in r.output
    line = one_line_error(run("ur", "export", "--format", "rgu", "--rules", "finkel", "--pieces", "5", "--out",
                              str(tmp_path / "f5.rgu")), 1)
    assert "solver ur solve --rules finkel --pieces 5" in line and not (tmp_path / "f5.rgu").exists()


def test_export_percent16_values_match_the_solution(finkel2_table, tmp_path) -> None:
    out = tmp_path / "f2.rgu"
    assert run("ur", "export", "--format", "rgu", "--rules", "finkel", "--pieces", "2", "--table",
               str(finkel2_table), "--out", str(out)).exit_code == 0
    t = rgu.read_rgu(out)
    assert t.value_type == "percent16"
    values = np.load(finkel2_table / "value.npy")
    ours = rgu.values_from_table(t, FINKEL2, range(0, 12_869, 97))
    assert np.max(np.abs(ours - (1 + values[0:12_869:97]) / 2)) <= 0.5 / 65535 + 1e-12


def test_show_and_graph(tmp_path) -> None:
    r = run("ur", "show", "start", "--rules", "blitz")
    assert r.exit_code == 0 and "light: 5 in hand" in r.output
    g = json.loads(run("ur", "graph", "--rules", "finkel", "--json").output)
    assert g["royalur_count"] == 137_892_016 and g["states"] == 137_870_097
    assert len(g["tier_groups"]) == 28


def test_unknown_rule_set_is_one_line() -> None:
    line = one_line_error(run("ur", "show", "start", "--rules", "finkle"), 2)
    assert "unknown rule set 'finkle'" in line and "finkel" in line
    assert "expected fort or one of RoyalUr's: finkel, blitz, masters" in line  # fort is a rule set too


def test_rgu_for_other_settings_is_one_line(finkel2_table, tmp_path) -> None:
    out = tmp_path / "f2.rgu"
    run("ur", "export", "--format", "rgu", "--rules", "finkel", "--pieces", "2", "--table", str(finkel2_table),
        "--out", str(out))
    line = one_line_error(run("ur", "analyze", "start", "--rules", "finkel", "--pieces", "3", "--table", str(out)), 1)
    assert "2 pieces" in line and "expected" in line


def test_truncated_rgu_is_one_line(finkel2_table, tmp_path) -> None:
    out = tmp_path / "f2.rgu"
    run("ur", "export", "--format", "rgu", "--rules", "finkel", "--pieces", "2", "--table", str(finkel2_table),
        "--out", str(out))
    cut = tmp_path / "cut.rgu"
    cut.write_bytes(out.read_bytes()[:-100])
    line = one_line_error(run("ur", "analyze", "start", "--rules", "finkel", "--pieces", "2", "--table", str(cut)), 1)
    assert "not a usable .rgu table" in line


@pytest.mark.parametrize(("content", "kind"), [(b"pieces,value\n1,0.5\n", "a text file"), (b"", "an empty file"),
                                             (bytes(range(200, 256)) * 4, "a binary file of another kind")])
def test_a_file_of_another_kind_as_table_says_what_it_is(tmp_path, content: bytes, kind: str) -> None:
    """A CSV (or any file that is not an .rgu) given as --table is the user's mistake, exit 2,
    named as what it is, with the two things a table can be and the commands that make them."""
    given = tmp_path / "unee4.csv"
    given.write_bytes(content)
    line = one_line_error(run("ur", "analyze", "start", "--rules", "finkel", "--pieces", "2", "--table", str(given)), 2)
    assert f"--table {given} is {kind}, not a table" in line
    assert "solver ur solve --rules finkel --pieces 2 --out FOLDER" in line and "--format rgu" in line
    assert given.read_bytes() == content and sorted(tmp_path.iterdir()) == [given]


def test_bad_roll_and_missing_table_are_one_line(tmp_path) -> None:
    line = one_line_error(run("ur", "best-move", "start", "--roll", "0", "--rules", "masters", "--pieces", "1",
                              "--table", str(tmp_path / "none")), 2)
    assert "not a roll of masters's dice" in line
    line = one_line_error(run("ur", "analyze", "start", "--rules", "finkel", "--pieces", "7", "--table",
                              str(tmp_path / "none")), 1)
    assert "states takes about" in line and "solver ur solve --rules finkel --pieces 7" in line
    line = one_line_error(run("ur", "export", "--format", "csv", "--rules", "finkel", "--pieces", "2", "--out",
                              str(tmp_path / "x")), 2)
    assert "unknown export format" in line


def test_export_has_royalurs_keys_and_their_file_answers_queries(finkel2_table, tmp_path) -> None:
    from pathlib import Path

    theirs = Path(__file__).parent / "data" / "finkel2p.rgu"  # RoyalUr-Java's own table (MIT)
    out = tmp_path / "ours.rgu"
    run("ur", "export", "--format", "rgu", "--rules", "finkel", "--pieces", "2", "--table", str(finkel2_table),
        "--out", str(out))
    a, b = rgu.read_rgu(out), rgu.read_rgu(theirs)
    assert np.array_equal(a.all_keys(), b.all_keys())
    # their table was trained in float32 and stored in percent16: within two steps of ours
    assert np.max(np.abs(a.all_percent() - b.all_percent())) <= 2 * 100 / 65535
    pos = "L:1/A2/0 D:1/B4/0 L"
    ours = json.loads(run("ur", "analyze", pos, "--rules", "finkel", "--pieces", "2", "--table",
                          str(finkel2_table), "--json").output)
    them = json.loads(run("ur", "analyze", pos, "--rules", "finkel", "--pieces", "2", "--table", str(theirs),
                          "--json").output)
    assert them["win_probability"] == pytest.approx(ours["win_probability"], abs=2 / 65535)


@pytest.mark.parametrize(("value_type", "within"), [("percent16", 0.5 / 65535), ("f32", 2.0**-18 / 100)])
def test_a_value_read_from_an_rgu_file_says_it_is_rounded(finkel2_table, tmp_path, value_type: str,
                                                          within: float) -> None:
    """An .rgu file rounds its values to its value type: answers read from one say so and by how
    much, and the answer is within that of the table's own (the bound is no looser than needed)."""
    out = tmp_path / "f2.rgu"
    r = run("ur", "export", "--format", "rgu", "--rules", "finkel", "--pieces", "2", "--table", str(finkel2_table),
            "--out", str(out), "--value-type", value_type)
    assert r.exit_code == 0, r.output
    args = ["ur", "analyze", "start", "--rules", "finkel", "--pieces", "2"]
    r = run(*args, "--table", str(out))
    assert f"the file stores {value_type} values, each read within {within:.2g} of the one written" in r.output
    doc = json.loads(run(*args, "--table", str(out), "--json").stdout)
    assert doc["proven"] is False and doc["rounded_as"] == value_type and doc["rounded_within"] == within
    exact = json.loads(run(*args, "--table", str(finkel2_table), "--json").stdout)
    assert "rounded_as" not in exact
    for a, b in zip([doc, *doc["rolls"]], [exact, *exact["rolls"]]):
        assert abs(a["win_probability"] - b["win_probability"]) <= within * (1 + 1e-9)


def test_a_missing_table_says_how_long_it_takes(tmp_path) -> None:
    """A RoyalUr table too large to solve on a query gets what the fort rules' does: the states,
    about how long they take here (from the measured whole-solve rates) and the command."""
    from gamesolver.games.ur.royal_answers import solve_seconds
    from gamesolver.solver.stochastic.planning import default_threads
    from gamesolver.solver.stochastic.planning import span

    rules = royal.load_ruleset("finkel", 4)
    line = one_line_error(run("ur", "analyze", "start", "--rules", "finkel", "--pieces", "4", "--table",
                              str(tmp_path / "t")), 1)
    assert f"solving its {royal_encoding.encoding(rules).size:,} states takes about " \
           f"{span(solve_seconds(rules, default_threads()))} on" in line
    assert f"'solver ur solve --rules finkel --pieces 4 --out {tmp_path / 't'}'" in line
    low, high = solve_seconds(royal.load_ruleset("finkel"), 2)
    assert low < 810 < high * 1.2  # the seven-piece Finkel solve measured 810 s on 2 cores


def test_show_takes_json_as_every_command_does() -> None:
    """``ur show --json`` under RoyalUr's rules: the fort rules' fields (position, side to move, the
    tiles each side holds), with the pieces in hand and borne off; it reads back as the same position."""
    rules = royal.load_ruleset("finkel", 3)
    r = run("ur", "show", "L:1/A3,B2/0 D:1/B6/1 D", "--rules", "finkel", "--pieces", "3", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["to_move"] == "D" and doc["L"] == ["A3", "B2"] and doc["D"] == ["B6"]
    assert doc["off_board"] == {"L": {"hand": 1, "borne_off": 0}, "D": {"hand": 1, "borne_off": 1}}
    assert royal.format_position(royal.parse(doc["position"], rules), rules) == doc["position"]


def test_check_takes_the_rules_too(finkel2_table, tmp_path) -> None:
    """``ur check --rules``: a solved RoyalUr table passes (checksums, residual, endless play); the
    same table with one value moved fails with exit 1; the fort rules' proof options are refused."""
    import numpy as np

    from gamesolver.games.ur.royal_table import ENCODING, ENCODING_VERSION, GAME, header, load_royal_table
    from gamesolver.solver.tables.table import write_table

    rules = royal.load_ruleset("finkel", 2)
    r = run("ur", "check", "--rules", "finkel", "--pieces", "2", "--table", str(finkel2_table), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["passed"] is True and doc["residual"] < doc["stop_residual"] and doc["flagged"] == 0
    solved = load_royal_table(rules, finkel2_table, build=False)
    values = np.array(solved["value"], dtype=np.float64)
    values[values.shape[0] // 2] += 1e-3
    bad = write_table(tmp_path / "bad", game=GAME, rule=rules.name, encoding=ENCODING,
                      encoding_version=ENCODING_VERSION, state_count=values.shape[0], arrays={"value": values},
                      options=header(rules), meta=dict(solved.meta))
    r = run("ur", "check", "--rules", "finkel", "--pieces", "2", "--table", str(bad))
    assert r.exit_code == 1 and "NOT below" in r.output and "FAILED" in r.output, r.output
    line = one_line_error(run("ur", "check", "--rules", "finkel", "--pieces", "2", "--table", str(finkel2_table),
                              "--bounds"), 2)
    assert "--bounds applies to the fort rules only" in line


def test_the_ur_group_help_names_every_rule_set() -> None:
    """A new user reading ``solver ur --help`` learns that --rules picks RoyalUr's rule sets too."""
    out = CliRunner().invoke(cli, ["ur", "--help"]).output
    assert "--rules" in out and "fort" in out
    for name in royal.ruleset_names():
        assert name in out, name
    top = CliRunner().invoke(cli, ["--help"]).output
    assert "RoyalUr" in top
