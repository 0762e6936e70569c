"""The fort rules' builds against each other: the portable ``_fort``, ``_fort_popcnt`` (POPCNT:
bit counts inline, from-scratch ranks counted by them) and ``_fort_bmi2`` (POPCNT and BMI2: the
squeeze of a tile set one PEXT), each wherever this CPU has its instructions, fast or not (a
microcoded PEXT is slow: the run shows how slow). ``games.ur.generator`` picks one (``auto``).

Regenerating sweeps on the same random values, nothing written: of every state (or of the first
``--states``), or with ``--chunks N`` of N runs of ``--chunk`` consecutive ranks at random places
over the whole state space (for six and seven pieces); the builds alternate ``--repeats`` times in
this run and share one mirror index (numpy's, on the same pages for all). Medians of ns a state,
and the portable build's time over each build's; the same largest change checked.

    python benchmarks/bench_fort_builds.py --pieces 3 4 --threads 1 2
    python benchmarks/bench_fort_builds.py --pieces 7 --threads 1 2 --chunks 20 --repeats 7
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from gamesolver.games.ur import _fort
from gamesolver.games.ur.generator import _new_game, fort_module
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.errors import InputError


def builds_here() -> dict[str, object]:
    """Every build's module that this CPU runs, by name."""
    found: dict[str, object] = {}
    for name in ("portable", "popcnt", "bmi2"):
        try:
            found[name] = fort_module(name)
        except InputError:
            pass
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pieces", type=int, nargs="+", default=[4])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--states", type=int, default=0, help="sweep only the first this many states (0: all)")
    ap.add_argument("--chunks", type=int, default=0, help="time this many runs of --chunk ranks at random places instead")
    ap.add_argument("--chunk", type=int, default=20000)
    ap.add_argument("--json", action="store_true", help="one JSON line a (pieces, threads)")
    args = ap.parse_args()
    modules = builds_here()
    auto = fort_module("auto").build_name()
    if len(modules) < 2:
        raise SystemExit("this CPU runs only the portable build: nothing to compare")
    for k in args.pieces:
        o = UrOptions(pieces=k)
        games = {name: _new_game(o, m) for name, m in modules.items()}
        first = games["portable"]
        n = first.state_count
        if first.mirrored:
            arrays = first.index_arrays()
            for g in games.values():
                g.use_index(*arrays, n)
        if args.chunks:
            chunk = min(args.chunk, n)
            starts = np.sort(np.random.default_rng(2).integers(0, n - chunk + 1, size=args.chunks)).tolist()
            runs = [(a, a + chunk) for a in starts]
        else:
            runs = [(0, min(n, args.states) if args.states else n)]
        states = sum(b - a for a, b in runs)
        V0 = np.random.default_rng(k).random(n, dtype=np.float32) * 2 - 1
        for threads in args.threads:
            times: dict[str, list[float]] = {name: [] for name in games}
            top: dict[str, float] = {}
            for _ in range(args.repeats):
                for name, g in games.items():
                    V = V0 if args.chunks else V0.copy()
                    t = time.perf_counter()
                    top[name] = max(g.sweep(V, threads=threads, start=a, stop=b, write=not args.chunks) for a, b in runs)
                    times[name].append((time.perf_counter() - t) / states * 1e9)
            med = {name: statistics.median(ts) for name, ts in times.items()}
            row = {"pieces": k, "threads": threads, "states": states, "auto": auto,
                   "ns_a_state": {name: round(v, 1) for name, v in med.items()},
                   "portable_over": {name: round(med["portable"] / v, 3) for name, v in med.items() if name != "portable"},
                   "same_change": len(set(top.values())) == 1,
                   "runs": {name: [round(x) for x in ts] for name, ts in times.items()}}
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                shown = ", ".join(f"{name} {v:,.0f} ns" for name, v in med.items())
                ratios = ", ".join(f"{name} {r:.2f}x" for name, r in row["portable_over"].items())
                print(f"K = {k}, {threads} thread{'s' if threads > 1 else ''}, {states:,} states a run (auto picks "
                      f"{auto}): {shown} a state (medians of {args.repeats}); portable over {ratios}"
                      f"{'' if row['same_change'] else '; THE LARGEST CHANGES DIFFER'}", flush=True)


if __name__ == "__main__":
    main()
