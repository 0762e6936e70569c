"""Finding the skip's blocks: each successor's block read from the runs of ranks against read from
its tiles.

The skip by blocks generates every state's outcomes once to learn which blocks each key's states
reach (``skip.block_adjacency``, ``_engine.block_pairs``). A successor's own block can be read by
unranking it (``block_keys``, the slow way) or from the runs of consecutive ranks that share one
(``skip.block_runs``, indexed by ``_engine.run_index``). This times ``block_pairs`` both ways over
``--chunks`` runs of ``--chunk`` consecutive ranks at random places, the two alternating
``--repeats`` times in one process on the same game, and checks that they find the same words;
medians of us a state, and slow / fast. The runs themselves cost one ``block_keys`` a state, once
(timed and printed; ``--blocks`` reads them from a solve's kept ``walk-blocks.npz`` instead).

    python benchmarks/bench_block_pairs.py --pieces 4 7 --threads 1 2
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from gamesolver.games.ur import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.stochastic import _engine as E
from gamesolver.solver.stochastic import skip


def runs_for(K, blocks: Path | None) -> tuple[np.ndarray, np.ndarray, float | None]:
    """The runs (starts, keys), from ``blocks`` where it holds this game's count of states, else
    found (and how long that took)."""
    if blocks is not None:
        with np.load(blocks, allow_pickle=False) as f:
            if int(f["n"]) == K.state_count and int(f["nb"]) == K.block_count:
                return np.asarray(f["starts"]), np.asarray(f["keys"]), None
    t = time.perf_counter()
    starts, keys = skip.block_runs(K)
    return starts, keys, time.perf_counter() - t


def pairs(K, runs: tuple, threads: int, ranges: list[int], chunk: int) -> tuple[float, np.ndarray]:
    """Seconds for ``block_pairs`` over the ranges, and the words found."""
    table = np.full(1 << 22, E.PAIR_EMPTY, dtype=np.uint64)
    held = 0
    t = time.perf_counter()
    for a in ranges:
        got = E.block_pairs(K, table, table.size // 2 - held, *runs, threads=threads, start=a, stop=a + chunk)
        if got < 0:
            raise SystemExit("the pair table filled: give fewer or shorter --chunks")
        held += got
    took = time.perf_counter() - t
    return took, np.sort(table[table != E.PAIR_EMPTY])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pieces", type=int, nargs="+", default=[4])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--chunks", type=int, default=10)
    ap.add_argument("--chunk", type=int, default=20000)
    ap.add_argument("--blocks", type=Path, help="a solve's walk-blocks.npz to read the runs from")
    args = ap.parse_args()
    for k in args.pieces:
        K = kernel(UrOptions(pieces=k))
        n = K.state_count
        starts, keys, found_s = runs_for(K, args.blocks)
        first, shift = E.run_index(starts, n)
        fast = (starts, keys, first, shift)
        chunk = min(args.chunk, n)
        ranges = sorted(np.random.default_rng(2).integers(0, n - chunk + 1, size=args.chunks).tolist())
        states = len(ranges) * chunk
        for nt in args.threads:
            times: dict[str, list[float]] = {"slow": [], "fast": []}
            words: dict[str, np.ndarray] = {}
            for _ in range(args.repeats):
                for name, runs in (("slow", ()), ("fast", fast)):
                    took, words[name] = pairs(K, runs, nt, ranges, chunk)
                    times[name].append(took / states * 1e6)
            med = {name: statistics.median(v) for name, v in times.items()}
            print(json.dumps({
                "pieces": k, "states": n, "threads": nt, "runs": len(starts), "shift": shift,
                "runs_found_s": None if found_s is None else round(found_s, 1),
                "slow_us_a_state": round(med["slow"], 3), "fast_us_a_state": round(med["fast"], 3),
                "speedup": round(med["slow"] / med["fast"], 2),
                "slow_runs": [round(x, 3) for x in times["slow"]], "fast_runs": [round(x, 3) for x in times["fast"]],
                "same_words": bool(np.array_equal(words["slow"], words["fast"])), "words": int(words["fast"].size),
            }), flush=True)


if __name__ == "__main__":
    main()
