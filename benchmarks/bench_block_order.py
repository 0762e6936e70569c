"""A regenerating sweep in rank order against one that sweeps the states of one block of the other
side's tiles at a time, seven pieces by default.

Every turn-passing successor of a state (M, O) without a capture is a state (O, M') of the block
of O's tiles, so sweeping all the states of one O together keeps that block's values (some 100
KB) in the cache. This times, on one process's values (random), ``--groups`` such blocks (every
state with the other side on O, O drawn at random with 4 or more pieces; each block's states swept
as a subset, in rank order) against as many states in ``--groups`` runs of consecutive ranks at
random places, the two alternating ``--repeats`` times; medians of ns a state (wall time).

    python benchmarks/bench_block_order.py --pieces 7 --threads 1 2
"""
from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time

import numpy as np

from gamesolver.games.ur import kernel
from gamesolver.games.ur.rules import UrOptions


def blocks(game, options: UrOptions, count: int, rng: np.random.Generator) -> list[np.ndarray]:
    """The stored states of ``count`` random blocks: every mover's set with the other side on O."""
    k, n = options.pieces, options.board.size
    out = []
    for _ in range(count):
        O = rng.choice(n, int(rng.integers(min(4, k), k + 1)), replace=False)
        om = sum(1 << int(t) for t in O)
        free = [t for t in range(n) if not om >> t & 1]
        ms = np.array([sum(1 << t for t in c) for a in range(k + 1) for c in itertools.combinations(free, a)],
                      dtype=np.uint32)
        out.append(np.unique(game.rank(ms, np.full(len(ms), om, dtype=np.uint32))).astype(np.int64))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pieces", type=int, default=7)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--groups", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    options = UrOptions(pieces=a.pieces)
    game = kernel(options)
    n = game.state_count
    rng = np.random.default_rng(7)
    V = (rng.random(n) * 2 - 1).astype(np.float32)
    subsets = blocks(game, options, a.groups, rng)
    total = sum(len(s) for s in subsets)
    chunk = min(n, total // a.groups)
    starts = np.sort(rng.integers(0, n - chunk + 1, a.groups)).tolist()
    game.sweep(V, threads=1, start=0, stop=1, write=False)  # the mirror index, not timed
    for nt in a.threads:
        times: dict[str, list[float]] = {"rank order": [], "block by block": []}
        for _ in range(a.repeats):
            t = time.perf_counter()
            for s in starts:
                game.sweep(V, threads=nt, start=s, stop=s + chunk, write=False)
            times["rank order"].append((time.perf_counter() - t) / (a.groups * chunk) * 1e9)
            t = time.perf_counter()
            for sub in subsets:
                game.sweep(V, threads=nt, subset=sub, write=False)
            times["block by block"].append((time.perf_counter() - t) / total * 1e9)
        med = {key: statistics.median(v) for key, v in times.items()}
        print(json.dumps({"pieces": a.pieces, "threads": nt, "states": total,
                          "rank_order_ns_a_state": round(med["rank order"]),
                          "blocks_ns_a_state": round(med["block by block"]),
                          "blocks_speedup": round(med["rank order"] / med["block by block"], 3),
                          "runs": {key: [round(x) for x in v] for key, v in times.items()}}), flush=True)


if __name__ == "__main__":
    main()
