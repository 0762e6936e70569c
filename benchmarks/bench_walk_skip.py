"""The walk's full sweeps that skip what cannot change (solver/stochastic/skip.py) against the walk as
it was, which backs every state up from its outcomes in every full sweep: both solved in one run,
regenerating (or, with ``--graph store``, over the stored graph, where a skipped state is backed up
from its policy row instead of its stored codes: the walk does not skip there, and this benchmark
turns it on for its skipping walk, ``StoredGraph.skips``).

    nice -n 19 python benchmarks/bench_walk_skip.py --pieces 4 [--threads 2] [--graph store] [--markdown] [--blocks]
    nice -n 19 python benchmarks/bench_walk_skip.py --kernel 7      # the sweep kernels alone
    python benchmarks/bench_walk_skip.py --pieces 5 --skipping-first --echo walks.log   # hours: watch the log

For each walk: full sweeps, the states and outcome codes the full sweeps generated, the time of
the full sweeps and of the whole solve, and (where a proven opening file is shipped for the piece
count) the largest and mean distance of each table's values to the proof's intervals over the
file's positions; then the two tables' largest difference, and the skipping walk's share of states
generated in each round. ``--kernel K`` times one thread's sweep of 48 runs of 4,096 consecutive
ranks at random places over values set everywhere: the plain sweep, the sweep that records
leads (everything generated), the sweep that backs every state up from its row (its lead byte
set to "no choice", so that whatever the values do, nothing is generated), and the same with a
bound per block (each state's block keys read and its carried lead lowered and written back).
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from gamesolver.games.ur import kernel
from gamesolver.games.ur import opening
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.stochastic import _engine as E
from gamesolver.solver.stochastic import iteration
from gamesolver.solver.stochastic import outcomes
from gamesolver.solver.stochastic import walk


def kernel_costs(pieces: int, runs: int = 48, run: int = 4096, seed: int = 0) -> dict[str, float]:
    """Nanoseconds a state on one thread: plain sweep, recording sweep (one bound's leads, and a
    skip by blocks' carried leads), sweep from the rows (the policy array is zero-filled and
    untouched outside the runs, so it costs no memory there)."""
    K = kernel(UrOptions(pieces=pieces))
    n, R = K.state_count, K.roll_count
    rng = np.random.default_rng(seed)
    starts = np.sort(rng.choice(n // run, size=runs, replace=False)) * run
    # every value set (a value never written reads the one shared zero page, always in the cache)
    V = rng.uniform(-0.5, 0.5, n).astype(np.float32)
    pol = np.zeros((n, R), dtype=np.int32)
    lead = np.zeros(n, dtype=np.uint8)
    stamp = np.full(n, E.STAMP_NEVER, dtype=np.uint8)
    never = np.full(256, np.inf)
    alone = np.full(n, E.LEAD_ALONE, dtype=np.uint8)  # every state read from its row, whatever moves
    out: dict[str, float] = {}
    work = np.zeros(2, dtype=np.int64)
    K.sweep(V, threads=1, start=0, stop=1, write=False)  # lazy indexes, not timed

    def timed(**kw) -> float:
        t0 = time.perf_counter()
        for a in starts.tolist():
            E.sweep(K, V, threads=1, start=a, stop=a + run, **kw)
        return (time.perf_counter() - t0) / (runs * run) * 1e9

    timed(policy=pol, lead=lead, stamp=stamp, bounds=never, now=0)  # every policy row written once
    # carried leads (BlockSkip): each state's keys read and its lead lowered, then its row backed up
    kb = np.zeros((4, K.block_count))
    carried = np.full(n, E.CARRY_TOP, dtype=np.uint16)
    for rep in range(5):  # alternating, the best of five
        plain = timed(policy=pol, work=work)
        recording = timed(policy=pol, lead=lead, stamp=stamp, bounds=never, now=0)
        rows = timed(policy=pol, lead=alone, stamp=stamp, bounds=never, now=1)
        carried[:] = E.CARRY_TOP
        by_keys = timed(policy=pol, carry=carried, kbounds=kb)
        carried[:] = E.CARRY_NEVER  # every state generated, its carried lead recorded (a skip by blocks' sweep)
        recording_blocks = timed(policy=pol, carry=carried, kbounds=kb)
        for name, x in (("plain", plain), ("recording", recording), ("rows", rows), ("keys", by_keys),
                        ("recording_blocks", recording_blocks)):
            out[name] = min(out.get(name, x), x)
    out["codes_a_state"] = work[1] / work[0]
    return out


def proof_distance(options: UrOptions, values: np.ndarray) -> tuple[float, float] | None:
    """Largest and mean distance of the table's values to the shipped opening file's proven
    intervals, over the file's positions (None where no proven file is shipped)."""
    book = opening.shipped(options)
    if book is None or book.intervals is None:
        return None
    K = kernel(options)
    mine = (book.keys >> np.uint64(32)).astype(np.uint32)
    theirs = (book.keys & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    v = values[K.rank(mine, theirs)].astype(np.float64)
    lo, hi = book.intervals
    d = np.maximum(0.0, np.maximum(lo - v, v - hi))
    return float(d.max()), float(d.mean())


def walks(pieces: int, threads: int, tolerance: float, graph: str = "regenerate", skipping_first: bool = False,
          echo: Path | None = None, blocks: bool = False) -> dict:
    """Both walks, one after the other (the skipping one first with ``skipping_first``: on five pieces
    each takes most of an hour); with ``blocks`` a third, skipping with a bound per block
    (``skip.BlockSkip``); ``echo``: a file that gets every log line as it comes."""
    o = UrOptions(pieces=pieces)
    K = kernel(o)
    out: dict = {"states": K.state_count}
    saved, stored_skips, saved_blocks = walk.WALK_SKIP, outcomes.StoredGraph.skips, walk.WALK_SKIP_BLOCKS
    tables = {}
    with tempfile.TemporaryDirectory() as tmp:
        order = [("as it was", False, False), ("skipping", True, False)] + ([("by blocks", True, True)] if blocks else [])
        for name, on, by_blocks in (order[::-1] if skipping_first else order):
            walk.WALK_SKIP = on
            walk.WALK_SKIP_BLOCKS = by_blocks
            outcomes.StoredGraph.skips = on
            lines: list[str] = []

            def said(line: str, name: str = name) -> None:
                lines.append(line)
                if echo is not None:
                    with open(echo, "a", encoding="utf-8") as f:
                        f.write(f"{name}: {line}\n")
            try:
                t0 = time.perf_counter()
                solved = iteration.solve_values(K, Path(tmp) / name.replace(" ", "-"), o.header(),
                                                tolerance=tolerance, threads=threads, graph=graph,
                                                show_progress=False, log=said)
                seconds = time.perf_counter() - t0
            finally:
                walk.WALK_SKIP = saved
                walk.WALK_SKIP_BLOCKS = saved_blocks
                outcomes.StoredGraph.skips = stored_skips
            full = sum(float(x.split("(full sweep ")[1].split(" s")[0]) for x in lines if "(full sweep " in x)
            m = solved.meta
            tables[name] = solved.values.copy()
            out[name] = {"seconds": seconds, "full_seconds": full, "sweeps": m["sweeps"],
                         "states": m["full_sweeps_generated"]["generated_states"],
                         "codes": m["full_sweeps_generated"]["generated_codes"],
                         "proof": proof_distance(o, solved.values), "rounds": solved.rounds,
                         "start": float(solved.values[int(K.rank([0], [0])[0])])}
    for name in tables:
        out[name]["difference"] = float(np.abs(tables["as it was"].astype(np.float64) - tables[name]).max())
    out["difference"] = out["skipping"]["difference"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pieces", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tolerance", type=float, default=1e-5)
    ap.add_argument("--graph", choices=("regenerate", "store"), default="regenerate",
                    help="the full sweeps generate (default) or read the stored graph")
    ap.add_argument("--kernel", type=int, metavar="K", default=0, help="only the sweep kernels' costs for K pieces")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--skipping-first", action="store_true", help="solve the skipping walk first")
    ap.add_argument("--echo", type=Path, metavar="FILE", help="append every log line to FILE as it comes")
    ap.add_argument("--blocks", action="store_true", help="a third walk, skipping with a bound per block")
    args = ap.parse_args()
    if args.kernel:
        c = kernel_costs(args.kernel)
        print(f"k={args.kernel}, one thread, {c['codes_a_state']:.1f} codes a state: plain sweep {c['plain']:.0f} ns a "
              f"state; recording leads {c['recording']:.0f} ns ({c['recording'] / c['plain']:.2f}x), by blocks "
              f"{c['recording_blocks']:.0f} ns ({c['recording_blocks'] / c['plain']:.2f}x); from the rows "
              f"{c['rows']:.0f} ns ({c['plain'] / c['rows']:.1f}x faster than plain); from the rows by blocks' "
              f"keys and carried leads {c['keys']:.0f} ns ({c['plain'] / c['keys']:.1f}x faster than plain)")
        return
    w = walks(args.pieces, args.threads, args.tolerance, args.graph, args.skipping_first, args.echo, args.blocks)
    a, b = w["as it was"], w["skipping"]
    rows = []
    names = ("as it was", "skipping") + (("by blocks",) if args.blocks else ())
    for name, r in ((x, w[x]) for x in names):
        p = r["proof"]
        rows.append((name, r["sweeps"], r["states"] / w["states"], r["codes"], r["full_seconds"], r["seconds"],
                     f"{p[0]:.2g} ({p[1]:.2g})" if p else "-", r["start"]))
    head = ("walk", "full sweeps", "full-sweep equivalents generated", "codes generated", "full sweeps (s)",
            "solve (s)", "distance to the proof, largest (mean)", "start")
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print(f"| {r[0]} | {r[1]} | {r[2]:.1f} | {r[3]:,} | {r[4]:.0f} | {r[5]:.0f} | {r[6]} | {r[7]:+.7f} |")
    else:
        for r in rows:
            print(f"{r[0]:>10}: {r[1]} full sweeps, {r[2]:.1f} sweeps' worth of states generated, {r[3]:,} codes, "
                  f"full sweeps {r[4]:.0f} s, solve {r[5]:.0f} s, distance to the proof {r[6]}, start {r[7]:+.7f}")
    print(f"k={args.pieces}, {args.threads} threads, --graph {args.graph}, tolerance {args.tolerance:g}: codes "
          f"read {a['codes'] / b['codes']:.2f}x fewer, full sweeps {a['full_seconds'] / b['full_seconds']:.2f}x faster, "
          f"solve {a['seconds'] / b['seconds']:.2f}x faster; the two tables differ by at most {w['difference']:.2g}")
    print("share generated, round by round (skipping walk): "
          + ", ".join(f"{x['generated']:.0%}" for x in b["rounds"]))
    if args.blocks:
        c = w["by blocks"]
        print(f"by blocks: codes {a['codes'] / c['codes']:.2f}x fewer than as it was, {b['codes'] / c['codes']:.2f}x "
              f"fewer than skipping; full sweeps {a['full_seconds'] / c['full_seconds']:.2f}x and "
              f"{b['full_seconds'] / c['full_seconds']:.2f}x faster; solve {a['seconds'] / c['seconds']:.2f}x and "
              f"{b['seconds'] / c['seconds']:.2f}x faster; its table differs from the first by at most "
              f"{c['difference']:.2g}")
        print("share generated, round by round (by blocks): "
              + ", ".join(f"{x['generated']:.0%}" for x in c["rounds"]))


if __name__ == "__main__":
    main()
