"""benchmarks/bench_endless_passes.py on a running solve's values (``--values``): what the endless
check flags there, and what the solve's local repair makes of them (``--repair``)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gamesolver.games.ur.generator import kernel
from gamesolver.games.ur.rules import UrOptions

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_endless_passes.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=300)


def figures(out: subprocess.CompletedProcess) -> dict:
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_a_claimed_advantage_nobody_can_win_is_flagged_and_repaired_to_zero(tmp_path: Path) -> None:
    # two pieces a side cannot hold four forts: every game is endless, worth 0, so values of 0.3
    # claim an advantage only endless play keeps, at every state; the repair's discounts bring them to 0
    n = kernel(UrOptions(pieces=2)).state_count
    np.save(tmp_path / "v.npy", np.full(n, 0.3, dtype=np.float32))
    got = figures(run("--pieces", "2", "--values", str(tmp_path / "v.npy"), "--repair", "--json",
                      "--flagged-out", str(tmp_path / "flagged.npy")))
    assert got["flagged"] == n and got["passes"] >= 1
    assert np.array_equal(np.load(tmp_path / "flagged.npy"), np.arange(n))  # every state, by rank
    fixed = got["repair"]
    assert fixed["moved_max"] == pytest.approx(0.3, abs=1e-6) and fixed["residual_after"] < 1e-6
    assert fixed["backups"] >= 5 * n  # each of the five discounts sweeps every flagged state at least once


def test_the_game_values_pass_the_check(tmp_path: Path) -> None:
    n = kernel(UrOptions(pieces=2)).state_count
    np.save(tmp_path / "v.npy", np.zeros(n, dtype=np.float32))
    got = figures(run("--pieces", "2", "--values", str(tmp_path / "v.npy"), "--repair", "--no-sweep", "--json"))
    assert got["flagged"] == 0 and "repair" not in got and "residual_sweep_seconds" not in got


def test_values_of_another_size_are_one_line_errors(tmp_path: Path) -> None:
    np.save(tmp_path / "short.npy", np.zeros(10, dtype=np.float32))
    out = run("--pieces", "2", "--values", str(tmp_path / "short.npy"))
    assert out.returncode == 2 and "holds 10 values" in out.stderr and "Traceback" not in out.stderr
    out = run("--pieces", "2", "--values", str(tmp_path / "short.npy"), "--table", str(tmp_path))
    assert out.returncode == 2 and "not both" in out.stderr
