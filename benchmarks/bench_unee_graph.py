"""Benchmark: build the whole Ünee state graph (Cython) vs a plain Python builder of the reachable part.

Run: python benchmarks/bench_unee_graph.py [--python-limit N]
Prints times, rates (absolute positions per second), the ratio of the rates, and peak memory.
Target (the project's goals): whole default graph under 2 s on one core, under 1 GiB peak.
"""
from __future__ import annotations

import argparse
import resource
import time
from collections import deque


def python_reachable_graph(start, limit=None):
    """Plain Python: BFS over absolute positions, ball-by-ball sowing, a dict for ids."""
    n = len(start) // 2
    ids = {(tuple(start), 0): 0}
    edges = []
    queue = deque([(tuple(start), 0)])
    while queue and (limit is None or len(edges) < limit):
        board, side = queue.popleft()
        out = []
        for hole in range(n):
            balls = board[hole]
            if not balls:
                continue
            c = list(board)
            c[hole] = 0
            pos = hole
            while balls:
                pos = (pos + 1) % (2 * n)
                c[pos] += 1
                balls -= 1
            cap = 0
            if pos < n and c[pos] == 4:
                cap, c[pos] = 4, 0
            key = (tuple(c[n:] + c[:n]), 1 - side)
            if key not in ids:
                ids[key] = len(ids)
                queue.append(key)
            out.append((hole, ids[key], cap))
        edges.append(out)
    return len(edges), sum(len(e) for e in edges)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python-limit", type=int, default=None, help="stop the Python builder after N positions")
    args = ap.parse_args()

    from gamesolver.games.unee import DEFAULT, start_position
    from gamesolver.solver.encoding import _boards
    from gamesolver.solver.retrograde import _graph
    from gamesolver.games.unee import _sow

    t0 = time.perf_counter()
    indptr, succ, hole, captured = _sow.build_sowing_graph(3, 36, False, False, 4)
    t1 = time.perf_counter()
    _graph.reverse_csr(indptr, succ)
    t2 = time.perf_counter()
    start = int(_boards.rank_boards([start_position(DEFAULT).relative()], 36)[0])
    mask = _graph.reachable_alternating(indptr, succ, start, 0)
    t3 = time.perf_counter()
    n_abs = 2 * (len(indptr) - 1)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"cython  whole graph: {n_abs:,} absolute positions, {2 * len(succ):,} moves")
    print(f"        successors {t1 - t0:.3f} s, predecessors {t2 - t1:.3f} s, reachable part {t3 - t2:.3f} s, "
          f"total {t3 - t0:.3f} s")
    reach = int((mask & 1).sum() + (mask >> 1 & 1).sum())
    print(f"        reachable from the start: {reach:,} absolute positions")

    p0 = time.perf_counter()
    done, moves = python_reachable_graph(start_position(DEFAULT).relative(), args.python_limit)
    p1 = time.perf_counter()
    print(f"python  reachable graph: {done:,} absolute positions, {moves:,} moves in {p1 - p0:.3f} s")
    cy_rate = n_abs / (t3 - t0)
    py_rate = done / (p1 - p0)
    print(f"rates   cython {cy_rate:,.0f} positions/s, python {py_rate:,.0f} positions/s, ratio {cy_rate / py_rate:,.0f}x")
    print(f"peak memory (whole process): {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
