"""The generator's hint against none: a regenerating sweep where the move generator asks the cache
for each outcome's value as it writes the outcome's code (``sweep(..., hint=True)``, the default)
against the same sweep without (``hint=False``). Without the hint every value is first asked for
by the backup, after the whole state is generated, and the backup waits on the reads; with it the
reads overlap the rest of the generation.

Timed as ``seconds_per_state`` in ``solver/stochastic/planning.py`` times a sweep: runs of
``--chunk`` consecutive ranks at ``--chunks`` places drawn at random over the whole state space
(a contiguous block would understate what scattered value reads cost), on random values, nothing
written. The two alternate ``--repeats`` times in this run; medians, and none over hint. The
largest change of both is printed too: the same, as the hint changes no value.

    python benchmarks/bench_value_hint.py --pieces 6 7 --threads 1 2
    python benchmarks/bench_value_hint.py --rules finkel --threads 1
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np


def fort(pieces: int):
    from gamesolver.games.ur import fresh_kernel
    from gamesolver.games.ur.rules import UrOptions

    return fresh_kernel(UrOptions(pieces=pieces)), np.float32


def royal(rules: str):
    from gamesolver.games.ur import royal
    from gamesolver.games.ur.royal_table import royal_game

    return royal_game(royal.load_ruleset(rules)), np.float64


def measure(variants: dict, dtype, threads: int, repeats: int, chunks: int, chunk: int) -> dict:
    """``variants``: name -> (generator, hint), all of one game; ns a state of each, alternating."""
    n = next(iter(variants.values()))[0].state_count
    chunk = min(chunk, n)
    V = (np.random.default_rng(1).random(n) * 2 - 1).astype(dtype)
    starts = np.sort(np.random.default_rng(2).integers(0, n - chunk + 1, size=chunks)).tolist()
    for game, _ in variants.values():
        game.sweep(V, threads=1, start=0, stop=1, write=False)  # lazy indexes, not timed
    times: dict[str, list[float]] = {name: [] for name in variants}
    change: dict[str, float] = {}
    for _ in range(repeats):
        for name, (game, hint) in variants.items():
            t = time.perf_counter()
            top = 0.0
            for a in starts:
                top = max(top, game.sweep(V, threads=threads, start=a, stop=a + chunk, write=False, hint=hint))
            times[name].append((time.perf_counter() - t) / (chunks * chunk) * 1e9)
            change[name] = top
    med = {name: statistics.median(ts) for name, ts in times.items()}
    row = {"states": n, "threads": threads, **{f"{name}_ns": round(m, 1) for name, m in med.items()},
           "speedup": round(med["none"] / med["hint"], 3), "same_change": len(set(change.values())) == 1,
           **{f"{name}_runs": [round(t) for t in ts] for name, ts in times.items()}}
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pieces", type=int, nargs="*", default=[], help="fort rules with these piece counts")
    ap.add_argument("--rules", nargs="*", default=[], help="RoyalUr rule sets (finkel, blitz, masters)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--chunks", type=int, default=20)
    ap.add_argument("--chunk", type=int, default=20000)
    ap.add_argument("--json", action="store_true", help="one JSON line a game and thread count")
    args = ap.parse_args()
    games = [(f"fort rules, {k} pieces", k, None) for k in args.pieces or ([] if args.rules else [6])]
    games += [(f"RoyalUr {r}", None, r) for r in args.rules]
    for name, pieces, rules in games:
        t = time.perf_counter()
        game, dtype = fort(pieces) if rules is None else royal(rules)
        _ = game.state_count
        built = time.perf_counter() - t
        variants = {"none": (game, False), "hint": (game, True)}
        for threads in args.threads:
            row = {"game": name, "built_s": round(built, 1),
                   **measure(variants, dtype, threads, args.repeats, args.chunks, args.chunk)}
            if args.json:
                print(json.dumps(row), flush=True)
                continue
            print(f"{name}, {threads} thread{'s' if threads > 1 else ''}, {row['states']:,} states: "
                  f"{row['none_ns']:.0f} ns a state without the hint, {row['hint_ns']:.0f} with it "
                  f"(medians of {args.repeats}): {row['speedup']:.2f}x; same largest change: "
                  f"{row['same_change']}", flush=True)


if __name__ == "__main__":
    main()
