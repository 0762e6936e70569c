"""Benchmark: cycle structure of the whole Ünee space, and the whole `solver verify` report.

Run: python benchmarks/bench_unee_cycles.py
Targets (the project's goals): cycle structure of the whole space under 5 s; `solver verify` with cached
tables under 30 s. The reference is networkx's strongly_connected_components on the absolute
graph of a smaller variant (2 x 3 holes, up to 18 balls), timed in the same run.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> None:
    import networkx as nx

    from gamesolver.games import unee
    from gamesolver.games.unee.cycles import cycle_summary
    from gamesolver.games.unee.graph import build_graph
    from gamesolver.solver.retrograde import _graph

    small = build_graph(unee.UneeOptions(holes_per_row=3, balls_per_hole=3))
    t = time.perf_counter()
    G = nx.DiGraph()
    G.add_nodes_from(range(2 * small.n_states))
    for x in range(small.n_states):
        for _, y, _ in small.moves(x):
            G.add_edge(2 * x, 2 * y + 1)
            G.add_edge(2 * x + 1, 2 * y)
    ref_comps = sum(1 for _ in nx.strongly_connected_components(G))
    ref = time.perf_counter() - t
    t = time.perf_counter()
    comp = _graph.scc_alternating(small.indptr, small.succ)
    cy = time.perf_counter() - t
    print(f"SCC of {2 * small.n_states:,} positions (18 balls): networkx {ref:.2f} s (graph build included), "
          f"cython {cy * 1000:.1f} ms, ratio {ref / cy:,.0f}x; components {ref_comps:,} = {comp.max() + 1:,}")

    t0 = time.perf_counter()
    g = build_graph(unee.DEFAULT)
    t1 = time.perf_counter()
    comp = _graph.scc_alternating(g.indptr, g.succ)
    t2 = time.perf_counter()
    summary = cycle_summary(g)
    t3 = time.perf_counter()
    print(f"whole space: graph {t1 - t0:.2f} s, SCC of {2 * g.n_states:,} positions {t2 - t1:.2f} s, "
          f"per-layer summary {t3 - t2:.2f} s; total {t3 - t0:.2f} s (target < 5 s); "
          f"{summary['total']['all']['on_cycle']:,} positions on cycles")

    subprocess.run([sys.executable, "-m", "solver", "verify"], check=True, capture_output=True)  # warm the cache
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "solver", "verify"], check=True, capture_output=True)
    print(f"`solver verify`, tables cached: {time.perf_counter() - t:.2f} s wall (target < 30 s)")


if __name__ == "__main__":
    main()
