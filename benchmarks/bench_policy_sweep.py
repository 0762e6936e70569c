"""A policy sweep of every state (``evaluate``) at several prefetch distances: the fort rules'
generator records a greedy policy in one full sweep of random values, then each distance in
``--ahead`` sweeps that policy on a copy of the values, alternating ``--repeats`` times; medians
of ns a state. Policy sweeps wait on scattered value reads, so this says how far ahead the
prefetch pays on this machine, and (run with --threads 1 2) whether the sweep scales with the
cores or with the memory.

    python benchmarks/bench_policy_sweep.py --pieces 5 --threads 1 2 --ahead 0 16 32 64 128
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from gamesolver.games.ur.generator import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.stochastic import _engine


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pieces", type=int, default=5)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--ahead", type=int, nargs="+", default=[0, 16, 32, 64, 128])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    game = kernel(UrOptions(pieces=args.pieces))
    n = game.state_count
    values = (np.random.default_rng(1).random(n) * 2 - 1).astype(np.float32)
    policy = np.zeros((n, game.nrolls), dtype=np.int32)
    t = time.perf_counter()
    game.sweep(values, threads=max(args.threads), policy=policy)
    print(f"K = {args.pieces}: {n:,} states; the greedy policy recorded in one full sweep, {time.perf_counter() - t:.1f} s")
    for threads in args.threads:
        times: dict[int, list[float]] = {a: [] for a in args.ahead}
        for _ in range(args.repeats):
            for a in args.ahead:
                W = values.copy()
                t = time.perf_counter()
                _engine.evaluate(game, policy, W, threads=threads, ahead=a)
                times[a].append((time.perf_counter() - t) / n * 1e9)
        shown = ", ".join(f"{a} ahead {statistics.median(ts):.1f}" for a, ts in times.items())
        print(f"{threads} thread{'s' if threads > 1 else ''}: {shown} ns a state (medians of {args.repeats})", flush=True)


if __name__ == "__main__":
    main()
