"""Greedy sweeps of a hot set with their rows written into the policy (in place) against kept apart
and copied once (``walk.greedy_sweeps``, ``WALK_GREEDY_ROWS_MOST``): the fort rules' generator
records a greedy policy in one full sweep of random values, into a policy mapped from a file (as
seven pieces keep it) or held in memory, then a random hot set of ``--share`` of the states gets
``--sweeps`` greedy sweeps each way, alternating ``--repeats`` times. Per way: the medians of the
seconds, of the pages made dirty and of the pages written back (the machine's, from /proc/vmstat:
run it where nothing else writes much; a page of a mapped file counts each time a write makes it
dirty again after the kernel wrote it back).

    python benchmarks/bench_greedy_rows.py --pieces 4 --share 0.01 --sweeps 30 --policy disk
    python benchmarks/bench_greedy_rows.py --pieces 5 --share 0.005 --sweeps 20 --policy memory

Where the dirtied pages of a sweep fit under the kernel's dirty limit (here about a fifth of the
free memory and page cache), both ways run at the generator's speed; where they do not (seven
pieces: a hot set of a million states touches 4 GB of a 15 GB policy), the writes in place wait
on the disk (docs/design/walk.md, "Greedy rows kept apart").
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from gamesolver.games.ur.generator import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.stochastic import walk
from gamesolver.solver.stochastic.outcomes import Regenerated


def pages() -> np.ndarray:
    """The machine's pages made dirty and written back so far (/proc/vmstat)."""
    seen = dict(line.split() for line in Path("/proc/vmstat").read_text().splitlines())
    return np.array([int(seen.get("nr_dirtied", 0)), int(seen.get("nr_written", 0))])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pieces", type=int, default=4)
    ap.add_argument("--share", type=float, default=0.01, help="the hot set's share of the states")
    ap.add_argument("--sweeps", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--policy", choices=("disk", "memory"), default="disk")
    args = ap.parse_args()
    K = Regenerated(kernel(UrOptions(pieces=args.pieces)))
    n = K.game.state_count
    rng = np.random.default_rng(1)
    values = (rng.random(n) * 2 - 1).astype(np.float32)
    with tempfile.TemporaryDirectory(dir=Path.home()) as tmp:
        if args.policy == "disk":
            policy = np.lib.format.open_memmap(Path(tmp) / "policy.npy", mode="w+", dtype=np.int32,
                                               shape=(n, K.game.roll_count))
        else:
            policy = np.zeros((n, K.game.roll_count), np.int32)
        t = time.perf_counter()
        K.sweep(values.copy(), threads=args.threads, policy=policy)
        print(f"K = {args.pieces}: {n:,} states, policy {policy.nbytes / 2**20:,.0f} MiB ({args.policy}); "
              f"greedy policy recorded in {time.perf_counter() - t:.1f} s", flush=True)
        subset = np.sort(rng.choice(n, max(1, int(args.share * n)), replace=False)).astype(np.int64)
        touched = np.unique(subset * policy.shape[1] * 4 // 4096).size
        print(f"hot set {subset.size:,} states on {touched:,} pages ({touched * 4096 / 2**20:,.0f} MiB); "
              f"{args.sweeps} greedy sweeps a run, {args.threads} threads", flush=True)
        ways = {"in place": 10**15, "apart": walk.WALK_GREEDY_ROWS_MOST}
        seconds: dict[str, list[float]] = {w: [] for w in ways}
        written: dict[str, list[np.ndarray]] = {w: [] for w in ways}
        ends: dict[str, np.ndarray] = {}
        for _ in range(args.repeats):
            for way, most in ways.items():
                walk.WALK_GREEDY_ROWS_MOST = most
                V = values.copy()
                b, t = pages(), time.perf_counter()
                walk.greedy_sweeps(K, policy, V, args.threads, 1.0, 0.0, subset, args.sweeps)
                seconds[way].append(time.perf_counter() - t)
                written[way].append(pages() - b)
                ends[way] = np.asarray(policy[subset]).copy()
        base = statistics.median(seconds["in place"])
        for way in ways:
            s = statistics.median(seconds[way])
            d, w = (statistics.median(int(x[i]) for x in written[way]) * 4096 / 2**20 for i in (0, 1))
            print(f"{way:>8}: {s:.2f} s ({base / s:.2f}x), {d:,.0f} MiB made dirty, {w:,.0f} MiB written back "
                  f"(medians of {args.repeats}; the machine's)", flush=True)
        same = all(np.array_equal(ends["apart"], e) for e in ends.values())
        print(f"last rows alike both ways: {same} (two threads: a state's row may differ with the order)")


if __name__ == "__main__":
    main()
