"""How tight could the skipping walk's bound be in one round of a large solve? Sampled from two
checkpoints' values, for games too large for bench_skip_bounds.py's whole-walk replay.

    nice -n 19 python benchmarks/bench_skip_round.py --pieces 7 BEFORE.npy AFTER.npy [--sample 1000]

BEFORE and AFTER are the values of two checkpoints of the same fort-rules solve (a checkpoint's
``checkpoint.npy``, copied aside between two rounds). For a random sample of states, each roll's
lead (its best action's value over the second best, at BEFORE's values) is held against how far
the state's successors moved from BEFORE to AFTER, bounded three ways:

- one bound for the whole game, the largest movement of any state (the walk's ``skip.Skip``);
- the largest movement over the blocks that the state's successors lie in (each state's own
  block: the mover's tiles with the other side's count, ``StochasticGame.block_keys``), about
  what ``skip.BlockSkip`` can do (its keys take the union over a key's states);
- the largest over the state's own successors, the best any bound of this kind can do.

A state whose every lead exceeds twice its bound keeps its best actions, so a skipping full sweep
would back it up from its policy row instead of generating it. The running sweep's own changes,
which the walk adds, are left out for all three alike, so the shares are what each bound allows
at best. ``--adjacency`` also times ``skip.add_pairs`` (what ``BlockSkip`` generates every state
for before its first sweep) on four ranges of 2,000,000 ranks.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from gamesolver.games.ur.generator import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.stochastic import _engine as E, skip
from round_movers import outcome_value

CHUNK = 1 << 24


def successors(codes) -> list[int]:
    out = []
    for c in codes:
        if c >= 0:
            out.append(int(c))
        elif c not in (E.WIN, E.LOSS, E.NOCODE):
            out.append(int(-c - 1))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--pieces", type=int, default=7)
    ap.add_argument("--sample", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--adjacency", action="store_true")
    args = ap.parse_args()
    K = kernel(UrOptions(pieces=args.pieces))
    a = np.load(args.before, mmap_mode="r")
    b = np.load(args.after, mmap_mode="r")
    n = K.state_count
    if a.shape != (n,) or b.shape != (n,):
        raise SystemExit(f"both value files must hold {n:,} values ({args.pieces} pieces)")
    moved = np.zeros(K.block_count)  # each own block's largest movement
    largest = 0.0
    for s in range(0, n, CHUNK):
        e = min(n, s + CHUNK)
        mv = np.abs(b[s:e].astype(np.float64) - a[s:e])
        largest = max(largest, float(mv.max()))
        np.maximum.at(moved, K.keys_of(s, e)[0], mv)
    ranks = np.sort(np.random.default_rng(args.seed).choice(n, args.sample, replace=False))
    leads, own, blocks = np.full(ranks.size, np.inf), np.zeros(ranks.size), np.zeros(ranks.size)
    for i, r in enumerate(ranks.tolist()):
        for roll in range(K.roll_count):
            codes = K.roll_outcomes(r, roll)
            if len(codes) > 1:
                vs = sorted({outcome_value(c, a) for c in codes}, reverse=True)
                leads[i] = min(leads[i], vs[0] - vs[1] if len(vs) > 1 else 0.0)
            for t in successors(codes):
                own[i] = max(own[i], abs(float(b[t]) - float(a[t])))
                blocks[i] = max(blocks[i], float(moved[K.keys_of(t, t + 1)[0][0]]))
    q = (0.5, 0.9, 0.99)
    print(f"{args.pieces} pieces, {n:,} states, {K.block_count:,} blocks; {ranks.size:,} sampled")
    print(f"movement from {args.before} to {args.after}: largest {largest:.3g}; blocks' largest at "
          + ", ".join(f"{int(p * 100)}% {v:.3g}" for p, v in zip(q, np.quantile(moved, q))))
    print("bound on a sampled state's successors' movement, median (90th percentile): successors' blocks "
          f"{np.median(blocks):.3g} ({np.quantile(blocks, 0.9):.3g}), own successors {np.median(own):.3g} "
          f"({np.quantile(own, 0.9):.3g})")
    print(f"sampled states with a choice: {np.isfinite(leads).mean():.1%}")
    print("share that keeps its best actions (lead above twice the bound): "
          f"one bound {np.mean(leads > 2 * largest):.1%}, successors' blocks {np.mean(leads > 2 * blocks):.1%}, "
          f"own successors {np.mean(leads > 2 * own):.1%}")
    if args.adjacency:
        table = np.full(1 << 22, E.PAIR_EMPTY, dtype=np.uint64)
        held, done, t0 = 0, 0, time.perf_counter()
        for start in (0, n // 3, 2 * n // 3, n - 2_000_000):
            table, held = skip.add_pairs(K, table, held, start, start + 2_000_000, threads=2)
            done += 2_000_000
        each = (time.perf_counter() - t0) / done
        print(f"block adjacency (two threads): {each * 1e6:.2f} us a state, about {each * n / 60:.0f} minutes "
              "for every state")


if __name__ == "__main__":
    main()
