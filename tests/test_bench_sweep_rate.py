"""benchmarks/bench_sweep_rate.py, the source of the projections' per-state rates in the docs,
runs and reports consistent figures (never its times as such: tests do not assert on time)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import stored_state_count

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_sweep_rate.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=300)


def test_rows_count_the_stored_states_and_price_the_mirrored_rate() -> None:
    out = run("--pieces", "2", "3", "--seeds", "2", "--json")
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["pieces"] for r in rows] == [2, 3]
    for r in rows:
        assert r["stored_states"] == stored_state_count(UrOptions(pieces=r["pieces"]))
        assert len(r["plain_us"]) == len(r["mirrored_us"]) == len(r["mirrored_over_plain"]) == 2
        for m, p, q in zip(r["mirrored_us"], r["plain_us"], r["mirrored_over_plain"]):
            assert q == pytest.approx(m / p, rel=2e-2)
        # one core's sweep is the stored states at the sampled mirrored rates
        lo, hi = r["sweep_one_core_s"]
        assert lo <= hi
        assert lo == pytest.approx(min(r["mirrored_us"]) * 1e-6 * r["stored_states"], rel=2e-2, abs=0.06)


def test_bad_arguments_get_one_line_and_exit_2() -> None:
    out = run("--pieces", "8")
    assert out.returncode == 2
    assert "--pieces each 1-7" in out.stderr and "Traceback" not in out.stderr
