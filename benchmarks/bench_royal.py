"""RoyalUr's three rule sets solved whole, one after another, each in a fresh process: wall time,
core-seconds (user + system CPU of the solve's process) and peak memory (its largest resident set),
the start value against RoyalUr's published figure, and the core-seconds against RoyalUr's
published solve times where they exist (Finkel: 200.5 s on 16 cores with their Rust re-solver,
3,208 core-seconds; Blitz: 31.5 s on 16 cores, 504 core-seconds).

    python benchmarks/bench_royal.py --out tables/royal [--rules blitz finkel masters] [--ship] [--graph store]

``--ship`` also writes each rule set's opening file (8 moves) into data/ur_opening/, the files the
package ships. The machine's load average before and after each solve is printed, so a figure taken
beside other work says so.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

PUBLISHED_START = {"finkel": 0.515404732509, "blitz": 0.504052555093, "masters": 0.504809002027}
PUBLISHED_CORE_SECONDS = {"finkel": 200.5 * 16, "blitz": 31.5 * 16}
ROOT = Path(__file__).resolve().parent.parent


def timed(cmd: list[str]) -> tuple[int, float, float, float, str]:
    """Run ``cmd``: (exit code, wall seconds, core-seconds, peak resident GiB, stdout)."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    return os.waitstatus_to_exitcode(status), wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 2**20, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for the tables (one sub-folder each)")
    ap.add_argument("--rules", nargs="+", default=["blitz", "finkel", "masters"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--pieces", type=int, default=None, help="a smaller game than the rule set's own (a trial run)")
    ap.add_argument("--graph", default="auto", help="the solve's --graph (store: Masters' tier groups kept even where "
                                                    "auto would regenerate them)")
    ap.add_argument("--ship", action="store_true", help="write the opening files into data/ur_opening/")
    args = ap.parse_args()
    rows = []
    for name in args.rules:
        where = args.out / name
        before = os.getloadavg()[0]
        code, wall, cpu, peak, out = timed([sys.executable, "-m", "gamesolver.solver", "ur", "solve", "--rules", name,
                                            "--threads", str(args.threads), "--out", str(where), "--json", "--graph", args.graph,
                                            *(["--pieces", str(args.pieces)] if args.pieces else [])])
        after = os.getloadavg()[0]
        if code != 0:
            print(f"{name}: the solve failed (exit {code})", flush=True)
            continue
        doc = json.loads(out.strip().splitlines()[-1])
        row = {"rules": name, "states": doc["states"], "wall_s": round(wall, 1), "core_s": round(cpu, 1),
               "peak_gib": round(peak, 2), "start": doc["start_win_probability"],
               "load_before": round(before, 2), "load_after": round(after, 2), **doc}
        rows.append(row)
        pub = PUBLISHED_CORE_SECONDS.get(name)
        ratio = f", {pub / cpu:.2f}x RoyalUr's core-seconds ({pub:,.0f})" if pub else ", RoyalUr's time not published"
        print(f"{name}: {doc['states']:,} states, wall {wall:,.1f} s, {cpu:,.1f} core-s, peak {peak:.2f} GiB{ratio}; "
              f"load {before:.2f} before, {after:.2f} after", flush=True)
        if args.ship and not args.pieces:
            from gamesolver.games.ur import royal, royal_opening

            rules = royal.load_ruleset(name)
            file = ROOT / "data" / "ur_opening" / royal_opening.shipped_name(rules)
            subprocess.run([sys.executable, "-m", "gamesolver.solver", "ur", "opening", "build", "--rules", name,
                            "--turns", "8", "--table", str(where), "--out", str(file)], check=True)
            book = royal_opening.load(file, rules)
            start = book.win_probability(royal.start(rules).state())
            print(f"  shipped {file.name} ({file.stat().st_size:,} bytes); light wins {100 * start:.10f} % from the "
                  f"start, RoyalUr {100 * PUBLISHED_START[name]:.10f} % ({abs(start - PUBLISHED_START[name]):.1e} apart)",
                  flush=True)
    (args.out / "bench_royal.json").write_text(json.dumps(rows, indent=1, default=str))


if __name__ == "__main__":
    main()
