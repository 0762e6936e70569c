"""Benchmark: exact Ünee solutions of the whole default state space, and a cached best-move query.

Run: python benchmarks/bench_unee_solve.py [--reference-balls N]
Targets (the project's goals): uncounted + draw together under 5 s on one core; split bounds under 60 s;
`solver unee best-move` with a cached table under 0.3 s wall including interpreter start-up.
The reference is the slow Python threshold solver from the tests, run on the layers with at most
N balls of the same variant, so the ratio compares states per second on the same graph.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference-balls", type=int, default=8)
    args = ap.parse_args()

    from gamesolver.games.unee import DEFAULT
    from gamesolver.games.unee.graph import build_graph
    from gamesolver.games.unee.solution import solve_arrays

    t0 = time.perf_counter()
    g = build_graph(DEFAULT)
    g.reverse()
    t1 = time.perf_counter()
    print(f"graph + predecessors: {t1 - t0:.2f} s for {g.n_states:,} boards ({2 * g.n_states:,} positions)")
    times = {}
    for rule in ("uncounted", "draw", "split"):
        t = time.perf_counter()
        solve_arrays(g, rule)
        times[rule] = time.perf_counter() - t
        print(f"solve {rule:<9} {times[rule]:6.2f} s  ({g.n_states / times[rule]:,.0f} boards/s)")
    print(f"uncounted + draw: {times['uncounted'] + times['draw']:.2f} s (target < 5 s); split: {times['split']:.2f} s (target < 60 s)")
    print(f"peak memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB")

    from tests.unee_solve_ref import plain_graph, uncounted_values

    small = build_graph(type(DEFAULT)(holes_per_row=3, balls_per_hole=1))  # same rules, up to 6 balls
    t = time.perf_counter()
    pg = plain_graph(3, 6)
    uncounted_values(pg)
    ref = time.perf_counter() - t
    t = time.perf_counter()
    for _ in range(20):
        solve_arrays(small, "uncounted")
    cy = (time.perf_counter() - t) / 20
    print(f"reference (slow Python) on the {small.n_states:,} boards with <= 6 balls: {ref:.3f} s; "
          f"cython {cy * 1000:.2f} ms; ratio {ref / cy:,.0f}x")

    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, SOLVER_CACHE_DIR=cache)
        subprocess.run([sys.executable, "-m", "solver", "unee", "solve"], env=env, check=True, capture_output=True)
        walls = []
        for _ in range(5):
            t = time.perf_counter()
            subprocess.run(["solver", "unee", "best-move", "3 0 1 / 2 0 6 S"], env=env, check=True, capture_output=True)
            walls.append(time.perf_counter() - t)
        print(f"`solver unee best-move` with a cached table: best {min(walls):.3f} s, median {sorted(walls)[2]:.3f} s "
              f"wall including start-up (target < 0.3 s)")


if __name__ == "__main__":
    main()
