"""benchmarks/bench_first_aim.py, the source of the first stage's aim in docs/design/walk.md: the coarser
aim's walk is the finer one's rounds up to the first of its first stage below that aim, then a walk
of its own from that round's checkpoint, resumed in the second stage (never its times as such: tests
do not assert on time)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.test_ur_reference import mini_options

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_first_aim.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=300)


def rounds(stderr: str, aim: str) -> list[tuple[str, float]]:
    """(1 - discount, largest change) of each round the walk with first aim ``aim`` logged, and
    the rounds' numbers."""
    out, numbers = [], []
    for line in stderr.splitlines():
        if line.startswith(f"[aim {aim}] sweep"):
            gap = line.split("(1 - discount ")[1].split(")")[0]
            out.append((gap, float(line.split("largest change ")[1].split(" ")[0])))
            numbers.append(int(line.split()[3]))
    return out, numbers


def test_the_coarser_aim_forks_at_its_stage_end_and_resumes_in_the_second_stage(tmp_path) -> None:
    board = mini_options(tmp_path, 4).board_file
    out = run("--pieces", "4", "--board", str(board), "--aims", "1e-3", "3e-2", "--until-stage", "2",
              "--threads", "1", "--json")
    assert out.returncode == 0, out.stderr
    fine, coarse = (json.loads(line) for line in out.stdout.splitlines())
    assert (fine["first_aim"], coarse["first_aim"]) == (1e-3, 3e-2)
    main, main_numbers = rounds(out.stderr, "0.001")
    fork, fork_numbers = rounds(out.stderr, "0.03")
    first_stage = [c for g, c in main if g == "0.01"]
    # the fork shares the main walk's rounds up to the first below its aim, then goes on in the second stage
    ends = next(i for i, c in enumerate(first_stage) if c < 3e-2)
    assert ends + 1 < len(first_stage), "the finer aim must run the first stage on past the coarser one's end"
    assert coarse["stages"]["0.01"] == ends + 1 and fine["stages"]["0.01"] == len(first_stage)
    assert fork and fork[0][0] == "0.0001" and all(g in ("0.0001", "1e-06") for g, _ in fork)
    # ... from the checkpoint of that very round (each round writes one here, however cheap)
    assert fork_numbers == list(range(ends + 2, ends + 2 + len(fork)))
    assert main_numbers == list(range(1, len(main) + 1))
    assert coarse["stages"]["0.0001"] == sum(g == "0.0001" for g, _ in fork)
    assert fine["stages"]["0.0001"] == sum(g == "0.0001" for g, _ in main)
    # each walk's report stops at the first round of stage 2 and counts every round before it
    for row, lines in ((fine, main), (coarse, fork)):
        assert lines[-1][0] == "1e-06"
        assert row["next_stage_first_change"] == lines[-1][1]
        assert row["full_sweeps"] == sum(row["stages"].values())
        assert 0 < row["generated"] <= row["full_sweeps"]
    assert fine["work_ratio"] == 1.0
    assert coarse["work_ratio"] == round(coarse["generated"] / fine["generated"], 3)


def test_bad_arguments_get_one_line_and_exit_2(tmp_path) -> None:
    for args in (("--aims", "0", "1e-1"), ("--aims", "1e-1", "1e-1"), ("--until-stage", "0"),
                 ("--board", str(tmp_path / "nowhere.json"))):
        out = run(*args)
        assert out.returncode == 2, args
        assert out.stderr.strip().splitlines()[-1].startswith("bench_first_aim.py: error:"), args
