"""Ur (fort rules) on the Ray backend: states/s per worker against one thread of a single process.

Run with ``nice -n 19 python benchmarks/bench_ur_ray.py [--pieces 3] [--workers 2] [--repeats 3]``
(needs the extra: ``pip install "gamesolver[ray]"``). In the same run, from the same values: full
sweeps (writing, Gauss-Seidel) by one thread of this process, then the same sweeps split across
``--workers`` Ray actors of one thread each on a local Ray instance. Per-worker rate = states /
(wall time x workers); the ratio to the single thread is what a worker keeps after the copies of
the values to and from it (``solver.stochastic.planning.RAY_WORKER_EFFICIENCY`` records it). Also: a
policy sweep (the walk's cheap sweeps, where the copies weigh most) both ways. On a machine with
no more cores than workers, other load lowers the ratio; take the median of several runs.
"""
from __future__ import annotations

import argparse

import numpy as np

from gamesolver.games.ur import kernel
from timing import timed
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import ray_engine




def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pieces", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    o = UrOptions(pieces=args.pieces)
    game = kernel(o)
    n, R = game.state_count, game.roll_count
    V0 = np.random.default_rng(0).uniform(-0.5, 0.5, n).astype(np.float32)
    g = float(np.float32(0.999))
    policy = np.zeros((n, R), dtype=np.int32)

    V = V0.copy()
    game.sweep(V, threads=1, policy=policy, discount=g)  # warm: indexes, page faults
    one = timed(lambda: game.sweep(V0.copy(), threads=1, discount=g), args.repeats)
    one_eval = timed(lambda: game.evaluate(policy, V, threads=1, discount=g), args.repeats)

    import ray

    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
    try:
        with ray_engine(o, workers=args.workers, threads=1) as engine:
            W = V0.copy()
            engine.sweep(W, policy=policy, discount=g)  # warm, and records the actors' policies
            spread = timed(lambda: engine.sweep(V0.copy(), discount=g), args.repeats)
            spread_eval = timed(lambda: engine.evaluate(policy, W, discount=g), args.repeats)
    finally:
        ray.shutdown()
    w = args.workers
    print(f"Ur fort rules, K = {args.pieces}: {n:,} stored states; median of {args.repeats}")
    print(f"  full sweep, single process, 1 thread: {one:.3f} s = {n / one:,.0f} states/s")
    print(f"  full sweep, ray, {w} workers x 1 thread: {spread:.3f} s wall = {n / spread:,.0f} states/s, "
          f"{n / (spread * w):,.0f} states/s per worker")
    print(f"  per-worker / single-thread ratio: {one / (spread * w):.2f}  "
          f"(speed-up over one thread {one / spread:.2f}x)")
    print(f"  policy sweep: single 1 thread {one_eval:.3f} s; ray {spread_eval:.3f} s wall; per-worker ratio "
          f"{one_eval / (spread_eval * w):.2f}")


if __name__ == "__main__":
    main()
