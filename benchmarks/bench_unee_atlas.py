"""Benchmark and figures: the Ünee atlas of docs/variants.md, solved and written again.

Run: python benchmarks/bench_unee_atlas.py [--out build/unee-atlas] [--jobs 2] [--check]

Solves every variant with 2 to 4 holes a row and 1 to 8 balls a hole, both sowing options, under
the three repetition rules (``solver unee atlas``; 4 x 5 and larger are left out by the default
--max-boards of 80,000,000), resuming from the result files already in --out, then writes
docs/img/variants.png and the tables of docs/variants.md between its marker lines. It prints the
wall time of this run, the variants' own seconds and CPU seconds summed, and the largest peak
memory of a variant (each is solved in a process of its own, which measures its own peak).
``--check`` writes nothing and fails if the document's tables differ from what the results give.
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "variants.md"
PICTURE = ROOT / "docs" / "img" / "variants.png"
BEGIN, END = "<!-- atlas tables: written by benchmarks/bench_unee_atlas.py -->", "<!-- end of the atlas tables -->"
HOLES, MAX_BALLS = (2, 3, 4), 8


def tables(results: list[dict]) -> str:
    """One Markdown table a sowing rule, each under its own heading."""
    from gamesolver.games.unee import atlas as A

    parts = []
    for (skip, rows), title in A.SOWING_TITLES.items():
        group = [r for r in results if (r["options"]["skip_origin"], r["options"]["capture_rows"]) == (skip, rows)]
        if group:
            parts.append(f"### {title[0].upper() + title[1:]}\n\n" + A.markdown_table(group, sowing=False))
    return "\n".join(parts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "build" / "unee-atlas"), help="the atlas's result folder")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--max-boards", type=int, default=80_000_000)
    ap.add_argument("--check", action="store_true", help="compare the document with the results; write nothing")
    args = ap.parse_args()

    from gamesolver.games.unee import atlas as A

    if not args.check:
        out = A.prepare_out(args.out)
        plan = A.make_plan(A.variants(HOLES, range(1, MAX_BALLS + 1)), out,
                           A.Budget(max_boards=args.max_boards, jobs=args.jobs))
        print(f"{len(plan.items)} variants: {len(plan.done)} done already, {len(plan.todo)} to solve, "
              f"{len(plan.left_out)} left out; estimate {plan.seconds / 60:.1f} minutes, "
              f"{plan.peak_memory / 2**30:.1f} GiB at the peak", flush=True)
        t0 = time.perf_counter()
        A.run_plan(plan, on_done=lambda it, r: print(
            f"  {A.label(it.options):<27} {r['seconds']['total']:8.1f} s (estimate {it.seconds:7.1f})"
            f" {r['peak_mib']:9,.0f} MiB (estimate {it.memory / 2**20:7,.0f})", flush=True))
        wall = time.perf_counter() - t0
        A.write_summary(out)
        print(f"this run: {wall:.1f} s wall; peak of any variant solved in it "
              f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20:.2f} GiB")
    results = [r for r in A.all_results(args.out)
               if r["options"]["holes_per_row"] in HOLES and r["options"]["balls_per_hole"] <= MAX_BALLS]
    if not results:
        print(f"no results in {args.out}", file=sys.stderr)
        return 1
    print(f"{len(results)} variants in the atlas: {sum(r['seconds']['total'] for r in results) / 60:.1f} minutes "
          f"of their own wall time, {sum(r['cpu_seconds'] for r in results) / 60:.1f} CPU minutes; largest peak "
          f"{max(r['peak_mib'] for r in results) / 1024:.2f} GiB ({max(results, key=lambda r: r['peak_mib'])['variant']})")
    text = DOC.read_text(encoding="utf-8")
    m = re.search(re.escape(BEGIN) + r"\n(.*?)" + re.escape(END), text, re.DOTALL)
    if m is None:
        print(f"{DOC}: the marker lines are missing", file=sys.stderr)
        return 1
    new = text[: m.start(1)] + "\n" + tables(results) + "\n" + text[m.end(1):]
    if args.check:
        if new != text:
            print(f"{DOC.relative_to(ROOT)}: the tables differ from the results in {args.out}", file=sys.stderr)
            return 1
        print("the document's tables match the results")
        return 0
    DOC.write_text(new, encoding="utf-8")
    A.plot(results, PICTURE)
    print(f"wrote {DOC.relative_to(ROOT)} and {PICTURE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
