"""The per-state sweep rate behind every CPU projection of the fort rules (docs/design/backends.md's
table, the README's rows and the missing-table message), timed here for the plain generator and
the mirrored one (the one a solve runs: it stores each pair of mirror images once, and each
successor is brought to its canonical twin and numbered from the mirror's index), so that the
ratio between them can be checked against ``MIRROR_SWEEP_COST``, the factor the message applies
where it times the plain generator only (above ``MIRROR_TIMED_MAX`` placements).

Run with ``python benchmarks/bench_sweep_rate.py [--pieces 4 5 6 7] [--seeds 3] [--cores 2]``.
Each rate is ``solver.stochastic.planning.sweep_rate`` (one thread, regenerating, 48 runs of 1,024
consecutive ranks at random places, in the thread's CPU time), once a seed. For each K it prints
the plain and mirrored rates (range over the seeds), the mirrored over the plain (range of the
seeds' ratios), one full sweep of the stored states on one core, and the whole solve on
``--cores`` threads as ``Projection.solve_seconds`` prices it (skipping, 100-250 rounds), from the
mirrored rates. Building seven pieces' mirror index takes about 30 s and some 5 GiB.
"""
from __future__ import annotations

import argparse
import json

from gamesolver.games.ur.answers import MIRROR_SWEEP_COST
from gamesolver.games.ur.generator import fresh_kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.stochastic.planning import Projection, span, sweep_rate


def rates(pieces: int, mirror: bool, seeds: int) -> tuple[int, int, list[float], float]:
    """The game's stored states, roll count, one sampled rate a seed (seconds a state), and the
    least core share the samples had."""
    game = fresh_kernel(UrOptions(pieces=pieces, mirror=mirror))
    got = [sweep_rate(game, seed=s) for s in range(seeds)]
    return int(game.state_count), int(game.roll_count), [r.seconds for r in got], min(r.core_share for r in got)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pieces", type=int, nargs="+", default=[4, 5, 6, 7])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.seeds < 1 or args.cores < 1 or any(not 1 <= k <= 7 for k in args.pieces):
        ap.error("--seeds and --cores must be at least 1, and --pieces each 1-7")
    for k in args.pieces:
        _, _, plain, share_p = rates(k, False, args.seeds)
        n, rolls, mirrored, share_m = rates(k, True, args.seeds)
        ratio = [m / p for m, p in zip(mirrored, plain)]
        lo, hi = Projection(n, min(mirrored), rolls), Projection(n, max(mirrored), rolls)
        sweep = (lo.sweep_seconds(1), hi.sweep_seconds(1))
        solve = (lo.solve_seconds(args.cores, skipping=True)[0], hi.solve_seconds(args.cores, skipping=True)[1])
        row = {"pieces": k, "stored_states": n, "plain_us": [round(x * 1e6, 3) for x in plain],
               "mirrored_us": [round(x * 1e6, 3) for x in mirrored],
               "mirrored_over_plain": [round(x, 3) for x in ratio], "mirror_sweep_cost": MIRROR_SWEEP_COST,
               "sweep_one_core_s": [round(x, 1) for x in sweep], "cores": args.cores,
               "solve_s": [round(x) for x in solve], "least_core_share": round(min(share_p, share_m), 3)}
        if args.json:
            print(json.dumps(row), flush=True)
            continue
        busy = "" if row["least_core_share"] >= 0.8 else f" (busy: a sample had {row['least_core_share']:.0%} of a core)"
        print(f"K={k}: plain {min(plain) * 1e6:.2f}-{max(plain) * 1e6:.2f} us, mirrored "
              f"{min(mirrored) * 1e6:.2f}-{max(mirrored) * 1e6:.2f} us a state (one thread), mirrored/plain "
              f"{min(ratio):.2f}-{max(ratio):.2f}x (MIRROR_SWEEP_COST {MIRROR_SWEEP_COST}); {n:,} stored states: "
              f"one sweep on one core {span(sweep)}, the solve on {args.cores} cores {span(solve)}{busy}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
