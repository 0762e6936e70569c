"""The fort rules' two builds against each other: the portable ``_fort`` and ``_fort_bmi2``
(POPCNT and BMI2: bit counts inline, the squeeze of a tile set one PEXT), which ``games.ur.kernel``
picks where the CPU runs it well. One regenerating sweep of every state (or of the first
``--states`` of them), the two builds alternating ``--repeats`` times in this run on the same
random values; medians, and the portable build's time over the BMI2 build's.

    python benchmarks/bench_fort_builds.py --pieces 3 4 --threads 1 2
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from gamesolver.games.ur import _fort, kernel
from gamesolver.games.ur.rules import UrOptions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pieces", type=int, nargs="+", default=[4])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--states", type=int, default=0, help="sweep only the first this many states (0: all)")
    ap.add_argument("--json", action="store_true", help="one JSON line a (pieces, threads)")
    args = ap.parse_args()
    if not _fort.fast_bmi2():
        raise SystemExit("this CPU does not run the BMI2 build (no BMI2, or a microcoded PEXT): nothing to compare")
    for k in args.pieces:
        o = UrOptions(pieces=k)
        builds = {"portable": kernel(o, "portable"), "bmi2": kernel(o, "auto")}
        n = builds["portable"].state_count
        stop = min(n, args.states) if args.states else n
        V0 = np.random.default_rng(k).random(n, dtype=np.float32) * 2 - 1
        for threads in args.threads:
            times: dict[str, list[float]] = {name: [] for name in builds}
            for _ in range(args.repeats):
                for name, K in builds.items():
                    V = V0.copy()
                    t = time.perf_counter()
                    K.sweep(V, threads=threads, start=0, stop=stop)
                    times[name].append(time.perf_counter() - t)
            med = {name: statistics.median(ts) for name, ts in times.items()}
            row = {"pieces": k, "threads": threads, "states": stop, "portable_s": round(med["portable"], 3),
                   "bmi2_s": round(med["bmi2"], 3), "ratio": round(med["portable"] / med["bmi2"], 3),
                   "portable_runs": [round(t, 3) for t in times["portable"]],
                   "bmi2_runs": [round(t, 3) for t in times["bmi2"]]}
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"K = {k}, {threads} thread{'s' if threads > 1 else ''}, {stop:,} states: portable "
                      f"{row['portable_s']:.3f} s, BMI2 {row['bmi2_s']:.3f} s (medians of {args.repeats}): "
                      f"{row['ratio']:.2f}x", flush=True)


if __name__ == "__main__":
    main()
