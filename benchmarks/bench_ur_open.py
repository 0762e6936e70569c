"""Ur (fort rules): opening a table and answering best-move / analyze, the current path against the
stored mirror index and the checksum checked once.

Run with ``nice -n 19 python benchmarks/bench_ur_open.py --pieces 4 [--pieces 7]``. For each K it
writes a SYNTHETIC table (random float32 values, the real state count, written by the real table
writer with the generator's mirror index beside the values) into a temporary folder, measures, and
deletes it: a benchmark of opening and answering, not a solved game. K = 7 needs about 2.9 GiB of
disk and as much memory, and its index build takes minutes once. Every measurement runs in a fresh
Python process, after the table's pages are dropped from the page cache (posix_fadvise; "cold-ish":
the program's own files stay cached):
- old: ``open_table`` recomputing every checksum, then the mirror index built by the generator on the
  first rank (what an open cost before the index was stored), then the answers;
- new, first open: the checksums are recomputed once and the verified marker written;
- new: later opens (marker matches), the index mapped from the table (16 spot checks), the maps
  advised for scattered reads as best-move and analyze open them, the answers.
Answers: best-move (one roll's ranked actions) and analyze (the value and every roll's best) for two
positions; the first answer after the open is reported, then the median of five more.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

POSITIONS = {4: ["start", "X:A1,B4,C7 O:B1,A7 O"], 7: ["start", "X:A1,B4,C7,A3,B6 O:B1,A7,C2,B5 O"]}
ROLL = "gold+gold"


def drop_cache(folder: Path) -> None:
    for file in folder.iterdir():
        with open(file, "rb") as f:
            os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


def child(mode: str, table: str, pieces: int) -> dict:
    """One measurement in this (fresh) process; prints JSON."""
    from gamesolver.games.ur import kernel
    from gamesolver.games.ur.answers import analyze_answer
    from gamesolver.games.ur.notation import parse
    from gamesolver.games.ur.rules import UrOptions
    from gamesolver.games.ur.solve import ENCODING, ENCODING_VERSION, GAME, RULE, choices, load_table
    from gamesolver.solver.tables.table import open_table

    options = UrOptions(pieces=pieces)
    out: dict = {"mode": mode}
    t0 = time.perf_counter()
    if mode == "old":
        expect = {"game": GAME, "rule": RULE, "encoding": ENCODING, "encoding_version": ENCODING_VERSION,
                  "options": options.header()}
        t = open_table(table, expect=expect, verify=True)
        out["open_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        kernel(options).rank([0], [0])  # the first rank builds the index
        out["index_s"] = time.perf_counter() - t1
    else:
        t = load_table(options, table, build=False, scattered=True)  # as best-move and analyze open it
        out["open_s"] = time.perf_counter() - t0
        out["index_s"] = 0.0
    rows = {}
    for text in POSITIONS[pieces]:
        pos = parse(text, options)
        roll = options.dice.index(ROLL)
        a = time.perf_counter()
        choices(options, t, pos, roll)
        first_best = time.perf_counter() - a
        a = time.perf_counter()
        analyze_answer(options, t, pos)
        first_analyze = time.perf_counter() - a
        again_b, again_a = [], []
        for _ in range(5):
            a = time.perf_counter()
            choices(options, t, pos, roll)
            again_b.append(time.perf_counter() - a)
            a = time.perf_counter()
            analyze_answer(options, t, pos)
            again_a.append(time.perf_counter() - a)
        rows[text] = {"best_move_first_s": first_best, "analyze_first_s": first_analyze,
                      "best_move_s": statistics.median(again_b), "analyze_s": statistics.median(again_a)}
    out["answers"] = rows
    out["total_s"] = time.perf_counter() - t0
    with open("/proc/self/status") as f:
        out["peak_rss_mib"] = next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024
    return out


def run_child(mode: str, table: Path, pieces: int, env: dict) -> dict:
    drop_cache(table)
    r = subprocess.run([sys.executable, __file__, "--child", mode, "--table", str(table), "--pieces", str(pieces)],
                       capture_output=True, text=True, env=env, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def bench(pieces: int, base: Path) -> None:
    from gamesolver.games.ur import kernel
    from gamesolver.games.ur.rules import UrOptions
    from gamesolver.games.ur.solve import ENCODING, ENCODING_VERSION, GAME, RULE, index_arrays, stored_state_count
    from gamesolver.solver.tables.table import write_table

    options = UrOptions(pieces=pieces)
    n = stored_state_count(options)
    need = n * 4 + kernel(options).full_state_count // 4 + n // 8 + (256 << 20)
    free = shutil.disk_usage(base).free
    if free < 2 * need:
        raise SystemExit(f"K = {pieces}: needs about {need / 2**30:.1f} GiB of disk (twice that free), "
                         f"{free / 2**30:.1f} GiB free at {base}")
    print(f"K = {pieces}: SYNTHETIC table ({n:,} stored states, random float32 values) -- a benchmark of "
          f"opening and answering, not a solved game", flush=True)
    t0 = time.perf_counter()
    index = index_arrays(options)
    build = time.perf_counter() - t0
    print(f"  mirror index built in {build:.1f} s ({kernel(options).full_state_count:,} placements, "
          f"{sum(a.nbytes for a in index.values()) / 2**20:.1f} MiB)", flush=True)
    values = np.random.default_rng(pieces).random(n, dtype=np.float32)
    values *= 2
    values -= 1
    folder = base / f"k{pieces}"
    t0 = time.perf_counter()
    write_table(folder, game=GAME, rule=RULE, encoding=ENCODING, encoding_version=ENCODING_VERSION,
                state_count=n, arrays={"value": values, "tier_offsets": kernel(options).tier_offsets(), **index},
                options=options.header(), meta={"tolerance": 1e-5, "synthetic": True})
    del values
    size = sum(f.stat().st_size for f in folder.iterdir())
    print(f"  written in {time.perf_counter() - t0:.1f} s: {size / 2**30:.2f} GiB", flush=True)
    env = {**os.environ, "SOLVER_CACHE_DIR": str(base / "cache"), "OMP_NUM_THREADS": os.environ.get(
        "OMP_NUM_THREADS", "")}
    if not env["OMP_NUM_THREADS"]:
        del env["OMP_NUM_THREADS"]
    old = run_child("old", folder, pieces, env)
    first = run_child("new", folder, pieces, env)
    later = [run_child("new", folder, pieces, env) for _ in range(3)]
    shutil.rmtree(folder)

    def show(label: str, r: dict) -> None:
        ans = r["answers"]
        worst_first = max(max(a["best_move_first_s"], a["analyze_first_s"]) for a in ans.values())
        worst = max(max(a["best_move_s"], a["analyze_s"]) for a in ans.values())
        print(f"  {label:<34} open {r['open_s']:8.3f} s  index {r['index_s']:8.2f} s  first answer "
              f"<= {worst_first:.3f} s  later answers <= {worst:.4f} s  open+index+answers {r['total_s']:8.2f} s  "
              f"peak RSS {r['peak_rss_mib']:.0f} MiB", flush=True)

    show("old (checksums + index built)", old)
    show("new, first open (checksums once)", first)
    for i, r in enumerate(later):
        show(f"new, open {i + 2} (index mapped)", r)
    med_open = statistics.median(r["open_s"] for r in later)
    med_total = statistics.median(r["total_s"] for r in later)
    print(f"  ratio old / new: open+index {(old['open_s'] + old['index_s']) / med_open:,.0f}x, "
          f"open+index+answers {old['total_s'] / med_total:,.0f}x", flush=True)
    print(json.dumps({"pieces": pieces, "states": n, "bytes": size, "index_build_s": build, "old": old,
                      "first": first, "later": later}), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pieces", type=int, action="append")
    ap.add_argument("--child")
    ap.add_argument("--table")
    ap.add_argument("--dir", default=None, help="where the synthetic tables go (default: a temporary folder)")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.table, args.pieces[0])))
        return
    base = Path(tempfile.mkdtemp(prefix="bench-ur-open-", dir=args.dir))
    try:
        for k in args.pieces or [4]:
            bench(k, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
