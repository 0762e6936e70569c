"""benchmarks/round_movers.py: the movement histogram and top movers of one round, and the closure
of best play from a state (does it ever end?), on hand-made values."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gamesolver.games.ur import notation
from gamesolver.games.ur.generator import kernel
from gamesolver.games.ur.rules import UrOptions

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "round_movers.py"


def load_script():
    spec = importlib.util.spec_from_file_location("round_movers", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


def rank_of(options: UrOptions, text: str) -> int:
    pos = notation.parse(text, options)
    mine, theirs = pos.mover_relative()
    b = options.board
    return int(kernel(options).rank([b.mask(mine)], [b.mask(theirs)])[0])


def test_movers_are_counted_by_decade_and_ranked_by_size(tmp_path: Path) -> None:
    # three pieces: nobody can hold the four forts, so no play from any state ever ends
    n = kernel(UrOptions(pieces=3)).state_count
    before, after = np.zeros(n, dtype=np.float32), np.zeros(n, dtype=np.float32)
    moved = {n // 2: -0.02, 7: 0.5, n - 1: 3e-4}
    for r, d in moved.items():
        after[r] = d
    np.save(tmp_path / "a.npy", before)
    np.save(tmp_path / "b.npy", after)
    out = run(str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), "--pieces", "3", "--top", "3", "--most", "500",
              "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    decades = got["decades"]
    assert sum(decades) == n
    assert decades[0] == decades[1] == decades[3] == 1 and decades[-1] == n - 3
    assert [row["rank"] for row in got["top"]] == [7, n // 2, n - 1]
    assert [row["moved"] for row in got["top"]] == pytest.approx([0.5, -0.02, 3e-4], rel=1e-6)
    assert all(not row["ends"] and row["wins"] == row["losses"] == 0 for row in got["top"])
    assert all(row["states"] > 1 for row in got["top"])


def test_a_closure_reaches_the_win_its_best_action_takes() -> None:
    movers = load_script()
    options = UrOptions(pieces=4)
    K = kernel(options)
    V = np.zeros(K.state_count, dtype=np.float32)
    # X holds three forts and stands next to the fourth: the one-step rolls win at once, and with
    # every other value 0 the win is the best action there, so best play from here ends
    start = rank_of(options, "X:A1,C1,A7,B7 O:- X")
    found = movers.closure(K, V, start, 1e-6, 10_000)
    assert found["ends"] and found["wins"] >= 1 and found["losses"] == 0
    # every action allowed from the start: a closure cut at its limit says so
    everything = movers.closure(K, V, rank_of(options, "start"), 2.0, 1_000)
    assert everything["cut"] and everything["states"] > 1_000


def test_value_files_of_another_size_are_one_line_errors(tmp_path: Path) -> None:
    np.save(tmp_path / "short.npy", np.zeros(10, dtype=np.float32))
    out = run(str(tmp_path / "short.npy"), str(tmp_path / "short.npy"), "--pieces", "3")
    assert out.returncode == 2 and "must hold" in out.stderr and "Traceback" not in out.stderr
    out = run(str(tmp_path / "missing.npy"), str(tmp_path / "short.npy"), "--pieces", "3")
    assert out.returncode == 2 and "cannot read" in out.stderr and "Traceback" not in out.stderr
