import json
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

from gamesolver.games import unee
from gamesolver.games.unee.solution import build_table, open_table, table_path
from gamesolver.solver.cli import cli
from gamesolver.solver.errors import CorruptTableError, PositionNotCoveredError, TableMismatchError

SMALL = unee.UneeOptions(holes_per_row=2, balls_per_hole=3)
SMALL_ARGS = ["unee", "--holes", "2", "--balls", "3"]


def run(*args):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def small_tables(tmp_path_factory):
    root = tmp_path_factory.mktemp("tables")
    return {rule: build_table(SMALL, rule, out=root / rule) for rule in ("uncounted", "draw", "split")}


def test_table_header_and_probes(small_tables):
    t = open_table(small_tables["uncounted"], SMALL, "uncounted")
    head = t.table.header
    assert head["game"] == "unee" and head["rule"] == "uncounted" and head["encoding_version"] == 1
    assert head["options"] == SMALL.as_dict() and head["state_count"] == 1820
    assert all("crc32" in a for a in head["arrays"].values())
    pos = unee.parse("3 3 / 3 3 S", SMALL)
    assert t.probe_value(pos) == t.get_value(pos)
    assert isinstance(t.table["value"], np.memmap)
    with pytest.raises(PositionNotCoveredError, match="not covered"):
        t.probe_value(unee.Position((9, 9), (9, 9), "S"))
    assert t.get_value(unee.Position((9, 9), (9, 9), "S"), default="x") == "x"
    with pytest.raises(PositionNotCoveredError):
        t.probe_value(unee.parse("6 6 6 / 6 6 6 S"))


def test_mismatched_tables_are_refused(small_tables):
    with pytest.raises(TableMismatchError, match="rule"):
        open_table(small_tables["uncounted"], SMALL, "draw")
    with pytest.raises(TableMismatchError, match="holes_per_row|state_count"):
        open_table(small_tables["uncounted"], unee.DEFAULT, "uncounted")
    other = unee.UneeOptions(holes_per_row=2, balls_per_hole=3, skip_origin=True)
    with pytest.raises(TableMismatchError, match="skip_origin"):
        open_table(small_tables["uncounted"], other, "uncounted")


def test_corrupt_and_truncated_tables_are_refused(small_tables, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(small_tables["uncounted"], bad)
    arr = np.load(bad / "value.npy")
    arr[5] += 1
    np.save(bad / "value.npy", arr)
    with pytest.raises(CorruptTableError, match="checksum"):
        open_table(bad, SMALL, "uncounted")
    cut = tmp_path / "cut"
    shutil.copytree(small_tables["uncounted"], cut)
    data = (cut / "remoteness.npy").read_bytes()
    (cut / "remoteness.npy").write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptTableError):
        open_table(cut, SMALL, "uncounted")
    junk = tmp_path / "junk"
    shutil.copytree(small_tables["uncounted"], junk)
    (junk / "header.json").write_text("{not json")
    with pytest.raises(CorruptTableError, match="header"):
        open_table(junk, SMALL, "uncounted")


def test_cli_refuses_a_corrupt_table_without_traceback_or_overwrite(small_tables, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(small_tables["uncounted"], bad)
    (bad / "value.npy").write_bytes(b"garbage")
    before = (bad / "value.npy").read_bytes()
    out = run(*SMALL_ARGS, "best-move", "3 3 / 3 3 S", "--table", str(bad))
    assert out.exit_code == 1
    assert out.output.strip().startswith("Error:") and len(out.output.strip().splitlines()) == 1
    assert "Traceback" not in out.output
    assert (bad / "value.npy").read_bytes() == before
    out = run(*SMALL_ARGS, "best-move", "3 3 / 3 3 S", "--table", str(small_tables["draw"]))
    assert out.exit_code == 1 and "rule" in out.output


def test_write_is_atomic_and_replaces(small_tables, tmp_path):
    target = tmp_path / "t"
    build_table(SMALL, "draw", out=target)
    build_table(SMALL, "draw", out=target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]


def test_tables_build_on_first_query_then_come_from_the_cache(tmp_path):
    out = run(*SMALL_ARGS, "best-move", "3 3 / 3 3 S", "--cache", str(tmp_path))
    assert out.exit_code == 0, out.output
    assert table_path(SMALL, "uncounted", tmp_path).is_dir()
    again = run(*SMALL_ARGS, "best-move", "3 3 / 3 3 S", "--cache", str(tmp_path), "--json")
    assert "solving" not in again.output
    data = json.loads(again.output)
    assert data["best_moves"][0]["move"] in ("S-left", "S-right")


def test_analyze_json_value_and_best_moves_consistent(small_tables):
    out = run(*SMALL_ARGS, "analyze", "2 1 / 3 2 N", "--json", "--table", str(small_tables["uncounted"]))
    data = json.loads(out.output)
    assert data["value"] == max(m["value"] for m in data["moves"])
    assert all(m["best"] == (m["value"] == data["value"]) for m in data["moves"])


def test_best_move_meaning_with_captures(small_tables):
    out = run(*SMALL_ARGS, "best-move", "3 3 / 3 3 S", "--captured", "0-0", "--table", str(small_tables["uncounted"]))
    assert out.exit_code == 0 and "best move:" in out.output
    out = run(*SMALL_ARGS, "best-move", "0 1 / 1 0 S", "--rule", "draw", "--captured", "8-0",
              "--table", str(small_tables["draw"]), "--json")
    data = json.loads(out.output)
    assert data["captured_difference"] == 8 and data["outcome"] in (-1, 0, 1)


@pytest.mark.parametrize("captured, named", [("13-8", "South 13"), ("12-6", "North 6"), ("1-3", "South 1 and North 3")])
def test_captures_that_no_game_reaches_are_refused(small_tables, captured: str, named: str):
    """Captures take four balls at a time: a count that is no multiple of four never occurs."""
    out = run(*SMALL_ARGS, "best-move", "0 1 / 1 0 S", "--captured", captured, "--table", str(small_tables["uncounted"]))
    assert out.exit_code == 2 and "Traceback" not in out.output
    line = out.output.strip()
    assert len(line.splitlines()) == 1 and named in line and "multiple of 4" in line


def test_pv_ends_at_repetition_or_game_end(small_tables):
    out = run(*SMALL_ARGS, "pv", "3 3 / 3 3 S", "--json", "--table", str(small_tables["uncounted"]))
    data = json.loads(out.output)
    t = open_table(small_tables["uncounted"], SMALL, "uncounted")
    rem, cyc = t.probe_remoteness(unee.parse("3 3 / 3 3 S", SMALL))
    assert data["plies"] == rem
    assert data["end"] == ("repetition" if cyc else "no-move")
    assert data["final_difference"] == t.probe_value(unee.parse("3 3 / 3 3 S", SMALL))
    out = run(*SMALL_ARGS, "pv", "3 3 / 3 3 S", "--diagrams", "--table", str(small_tables["uncounted"]))
    assert out.exit_code == 0 and "North" in out.output and "end:" in out.output


def test_split_analyze_exact(small_tables):
    out = run(*SMALL_ARGS, "analyze", "3 3 / 3 3 S", "--rule", "split", "--exact", "--json",
              "--table", str(small_tables["split"]))
    data = json.loads(out.output)
    assert data["lower"] <= data["value"] <= data["upper"]
    out = run(*SMALL_ARGS, "analyze", "3 3 / 3 3 S", "--rule", "split", "--exact", "--effort", "1",
              "--table", str(small_tables["split"]))
    assert out.exit_code == 2 and "stopped after 1 positions" in out.output


def test_export_csv_and_npy(small_tables, tmp_path):
    out = run(*SMALL_ARGS, "export", "--on-board", "4", "--table", str(small_tables["uncounted"]))
    lines = out.output.strip().splitlines()
    assert lines[0] == "position,side,balls,value,remoteness,cycling,best_moves"
    from math import comb

    assert len(lines) - 1 == 2 * comb(4 + 3, 3)
    t = open_table(small_tables["uncounted"], SMALL, "uncounted")
    for line in lines[1:]:
        pos_text, side, balls, value, *_ = line.split(",")
        pos = unee.parse(pos_text, SMALL)
        assert int(value) == t.probe_value(pos) and int(balls) == pos.balls == 4
        best = line.split(",")[-1].split()
        assert sorted(best) == sorted(m.move for m in t.best_moves(pos))
    target = tmp_path / "e.npy"
    out = run(*SMALL_ARGS, "export", "--rule", "split", "--format", "npy", "--reachable", "--out", str(target),
              "--table", str(small_tables["split"]))
    assert out.exit_code == 0, out.output
    arr = np.load(target)
    assert len(arr) > 0 and set(arr.dtype.names) >= {"north", "south", "side", "lower", "upper", "best_moves"}


@pytest.mark.parametrize(
    "args,words",
    [
        (("best-move", "3 3 / 3 3 S", "--rule", "fifty"), "Invalid value"),
        (("best-move", "3 3 / 3 3 S", "--captured", "a-b"), "expected South's and North's"),
        (("best-move", "3 3 / 3 3 S", "--captured", "20-20"), "more than the 12 balls"),
        (("analyze", "3 3 / 3 3 S", "--exact"), "--exact is for --rule split"),
        (("export", "--format", "npy"), "needs --out"),
        (("export", "--out", "/nonexistent/dir/x.csv"), "not a writable directory"),
        (("export", "--on-board", "99"), "expected 0..12"),
    ],
)
def test_bad_query_input(args, words):
    out = run(*SMALL_ARGS, *args)
    assert out.exit_code == 2, out.output
    assert words in out.output and "Traceback" not in out.output
    assert len(out.output.strip().splitlines()) == 1, out.output


@pytest.mark.parametrize("rule", ["uncounted", "split"])
@pytest.mark.parametrize("position", ["3 3 / 3 3 S", "1 5 / 2 4 N", "0 6 / 3 3 S", "6 0 / 0 6 N", "2 1 / 0 9 S"])
def test_pv_says_where_every_ball_went(small_tables, rule: str, position: str) -> None:
    """The line's end accounts for every ball: captures along the line, the balls left (to the side
    that moved last, or by the repetition rule), each side's total; the verdict's margin is the
    difference of the totals, and the totals add up to the balls in play."""
    import re

    out = run(*SMALL_ARGS, "pv", position, "--rule", rule, "--table", str(small_tables[rule]))
    assert out.exit_code == 0, out.output
    end = out.output.strip().splitlines()[-1]
    south, north = map(int, re.search(r"South (\d+), North (\d+) in all", end).groups())
    mover = "South" if position.endswith("S") else "North"
    mine, theirs = (south, north) if mover == "South" else (north, south)
    margin = re.search(rf"with best play {mover} (wins by (\d+)|loses by (\d+)|draws)", end)
    assert margin, end
    want = int(margin.group(2)) if margin.group(2) else -int(margin.group(3)) if margin.group(3) else 0
    assert mine - theirs == want, end
    balls = sum(int(x) for x in position[:-1].replace("/", " ").split())
    left = re.search(r"the (\d+) balls? left count for nobody", end)
    assert south + north == balls - (int(left.group(1)) if left else 0), end
