"""Benchmark: how far memory of the first plies narrows the split rule's start bounds.

Run: python benchmarks/bench_split_memory.py [--cases 2x3:3,2x4:20,...] [--max-solves N]
                                            [--below-balls B] [--markdown]

For each variant (traditional sowing) and depth it solves the split rule's positional bounds
(the reference, timed), then ``split.memory_bounds`` from the start: every position below the
start's layer that the start can reach is narrowed first, bottom-up, then the start itself
(``--below-balls B`` narrows only the layers of at most B balls below, for boards where all of
them would take hours; the standard board: ``--cases 3x6:8 --below-balls 16``). It prints the
start's positional bounds, the bounds with memory, the residual layer solves, the positions
below narrowed, the seconds and their ratio to the positional solve. ``--markdown`` prints the
table that docs/variants.md shows.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from gamesolver.games.unee import split  # noqa: E402
from gamesolver.games.unee.graph import build_graph  # noqa: E402
from gamesolver.games.unee.notation import start_position  # noqa: E402
from gamesolver.games.unee.rules import UneeOptions  # noqa: E402
from gamesolver.games.unee.solution import solve_arrays  # noqa: E402

CASES = "2x3:3,3x1:4,2x4:20,2x5:16,3x2:12,3x3:8,2x7:13,2x6:20"


def parse_cases(text: str) -> list[tuple[int, int, int]]:
    out = []
    for item in text.split(","):
        board, depth = item.split(":")
        h, b = board.split("x")
        out.append((int(h), int(b), int(depth)))
    return out


def interval(lo: int, hi: int) -> str:
    return f"{lo:+d}" if lo == hi else f"{lo:+d}..{hi:+d}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=CASES, help="holes x balls : depth, comma separated")
    ap.add_argument("--max-solves", type=int, default=3_000_000)
    ap.add_argument("--below-balls", type=int, default=None,
                    help="narrow only the layers below with at most this many balls")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    rows = []
    for h, b, depth in parse_cases(args.cases):
        options = UneeOptions(h, b)
        g = build_graph(options)
        t0 = time.perf_counter()
        arr = solve_arrays(g, "split")
        positional = time.perf_counter() - t0
        start = g.rank(start_position(options))
        t0 = time.perf_counter()
        below = split.states_below(g, arr["lower"], arr["upper"], start)
        if args.below_balls is not None:
            below = below[g.layer_of(below) <= args.below_balls]
        r, counts = split.memory_bounds(g, arr["lower"], arr["upper"], start, depth, args.max_solves, below)
        memory = time.perf_counter() - t0
        rows.append({
            "variant": f"{h} x {b}", "positional": interval(int(arr["lower"][start]), int(arr["upper"][start])),
            "depth": depth, "memory": interval(r.lower, r.upper), "complete": r.complete and not counts["stopped"],
            "solves": r.solves + counts["solves"], "below": f"{counts['narrowed']:,} of {counts['states']:,}",
            "seconds": memory, "ratio": memory / positional,
        })
        row = rows[-1]
        print(f"{row['variant']}: positional {row['positional']}, memory {depth} plies {row['memory']}"
              f"{'' if row['complete'] else ' (stopped by the solve limit)'}; {row['solves']:,} layer solves, "
              f"{row['below']} positions below narrowed; {memory:.2f} s = {row['ratio']:.0f}x the positional "
              f"solve ({positional:.3f} s)", flush=True)
    if args.markdown:
        print()
        print("| holes x balls | positional bounds | memory (plies) | with memory | layer solves | positions below narrowed | seconds (x positional) |")
        print("|---|---|---|---|---|---|---|")
        for row in rows:
            print(f"| {row['variant']} | {row['positional']} | {row['depth']} | {row['memory']} | {row['solves']:,} | "
                  f"{row['below']} | {row['seconds']:.1f} ({row['ratio']:.0f}x) |")


if __name__ == "__main__":
    main()
