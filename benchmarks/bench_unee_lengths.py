"""Benchmark: Ünee game-length sampling from the standard start, and the 150-move claim check.

Run: python benchmarks/bench_unee_lengths.py [--games N] [--reference-games M]
Prints games and plies per second of the Cython player for each scenario, the same for a plain
Python player (Python set for repetitions, dict lookups for the successors) on the same graph,
and the wall time of ``games_take_more_than_150_moves`` with the uncounted table cached.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def python_games(graph, start: int, games: int, seed: int) -> int:
    """Uniformly random games with a Python set; returns the plies played."""
    rng = random.Random(seed)
    indptr, succ = graph.indptr, graph.succ
    total = 0
    for _ in range(games):
        x, side = start, 0
        seen = {(x, side)}
        while True:
            lo, hi = int(indptr[x]), int(indptr[x + 1])
            if lo == hi:
                break
            x, side = int(succ[rng.randrange(lo, hi)]), 1 - side
            total += 1
            if (x, side) in seen:
                break
            seen.add((x, side))
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=20000)
    ap.add_argument("--reference-games", type=int, default=500)
    args = ap.parse_args()

    from gamesolver.games.unee import DEFAULT, solve, start_position
    from gamesolver.games.unee import lengths as L
    from gamesolver.games.unee.graph import build_graph

    t0 = time.perf_counter()
    g = build_graph(DEFAULT)
    solve("uncounted", DEFAULT)
    mask = L.optimal_mask(g)
    print(f"graph + cached table + optimal-move mask: {time.perf_counter() - t0:.2f} s")
    for name in L.SCENARIOS:
        s = L.length_statistics(DEFAULT, name, args.games, L.DEFAULT_SEED, mask=mask)
        plies = int(s.plies.sum())
        print(f"{name:>13}: {s.games_per_second:>9,.0f} games/s, {plies / s.seconds:>12,.0f} plies/s; {s.line().split(': ', 1)[1]}")
    t = time.perf_counter()
    plies = python_games(g, g.rank(start_position(DEFAULT)), args.reference_games, 1)
    dt = time.perf_counter() - t
    print(f"python random: {args.reference_games / dt:>9,.0f} games/s, {plies / dt:>12,.0f} plies/s (plain Python player)")
    t = time.perf_counter()
    r = L.games_take_more_than_150_moves()
    print(f"claim check: {time.perf_counter() - t:.2f} s -> {r.status}: {r.summary}")


if __name__ == "__main__":
    main()
