"""benchmarks/bench_chase.py, the source of docs/design/walk.md's "A pair that chases itself": every
setting resumes a copy of the same round's checkpoint and goes on from the next round (never its
times as such: tests do not assert on time)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.test_ur_reference import mini_options

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_chase.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=300)


def test_each_setting_goes_on_from_the_same_round(tmp_path) -> None:
    board = mini_options(tmp_path, 4).board_file
    out = run("--pieces", "4", "--board", str(board), "--fork-at", "5", "--rounds", "4", "--threads", "1", "--json")
    assert out.returncode == 0, out.stderr
    rows = {r["setting"]: r for r in map(json.loads, out.stdout.splitlines())}
    assert set(rows) == {"top-up", "hot-only", "chase", "greedy"}
    for r in rows.values():
        assert r["rounds"] == [6, 7, 8, 9] and r["stage"] == 0 and len(r["changes"]) == 4
        smallest, new = r["smallest_before"], 0
        for stage, change in zip(r["stages"], r["changes"]):
            if stage == r["stage"] and change < smallest:
                smallest, new = change, new + 1
        assert r["new_smallest"] == new
    # one thread: where the chase rule does not fire the walk is the top-up's, round for round; the
    # walk without the top-up sweeps its policy less and moves otherwise
    assert rows["chase"]["changes"] == rows["top-up"]["changes"]
    assert rows["hot-only"]["changes"] != rows["top-up"]["changes"]
    # the greedy sweeps of the hot set move the walk otherwise too
    assert rows["greedy"]["changes"] != rows["chase"]["changes"]


def test_bad_arguments_get_one_line_and_exit_2(tmp_path) -> None:
    for args in (("--fork-at", "0"), ("--rounds", "0"), ("--settings", "fast"), ("--board", str(tmp_path / "no"))):
        out = run(*args)
        assert out.returncode == 2, args
        assert out.stderr.strip().splitlines()[-1].startswith("bench_chase.py: error:"), args
