"""Certified bounds (``solver.bounds.certify``): the strategy against its best answer (today's
default) against loosening from the values (the way before it), in the same run on the same table.

Run with ``nice -n 19 python benchmarks/bench_bounds.py`` (the 8-tile test board, four pieces,
seconds) or ``--real K`` for the real board with K pieces (K = 4: the solve takes about 5 minutes
and each proof 15 or more on two cores; loosening stops after ``--loosen-sweeps`` sweeps and then
falls back to -1 and +1, which it reports). Prints, for each method: seconds, rounds and products
(strategy), loosening and tightening sweeps, the widest interval, the largest distance from the
values to an interval's end, the start's interval; and the time ratio.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' 8-tile board


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--real", type=int, default=0, metavar="K", help="the real board with K pieces")
    ap.add_argument("--tolerance", type=float, default=1e-6)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--loosen-sweeps", type=int, default=300)
    args = ap.parse_args()

    from gamesolver.games.ur import kernel
    from gamesolver.games.ur.rules import UrOptions
    from gamesolver.solver.bounds import certify
    from gamesolver.solver.stochastic import solve_values

    with tempfile.TemporaryDirectory() as tmp:
        if args.real:
            options = UrOptions(pieces=args.real)
            name = f"real board, {args.real} pieces"
        else:
            from tests.test_ur_reference import mini_options

            options = mini_options(Path(tmp), 4)
            name = "8-tile test board, 4 pieces"
        game = kernel(options)
        t0 = time.perf_counter()
        values = solve_values(game, Path(tmp) / "t", options.header(), tolerance=args.tolerance,
                              threads=args.threads).values
        print(f"{name}: {game.state_count:,} states, solved to tolerance {args.tolerance:g} in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
        start = int(game.rank([0], [0])[0])
        seconds = {}
        for method in ("loosening", "strategy"):
            t0 = time.perf_counter()
            cert = certify(game, values, args.tolerance, threads=args.threads, method=method,
                           loosen_sweeps=args.loosen_sweeps)
            seconds[method] = time.perf_counter() - t0
            s = cert.summary()
            print(f"  {method:9s}: {seconds[method]:8.1f} s  used {s['method']}, passes {s['passes']}, rounds {s['rounds']}, products "
                  f"{s['matvecs']:,}, sweeps {s['loosen_sweeps']} + {s['tighten_sweeps']}, gap {s['gap']:.3g}, "
                  f"bound {s['bound']:.3g}, margin {s['endless_margin']:.3g}, start in "
                  f"[{cert.lower[start]:+.7f}, {cert.upper[start]:+.7f}] (value {values[start]:+.7f})", flush=True)
        print(f"  strategy / loosening time: {seconds['strategy'] / seconds['loosening']:.3f} "
              f"({seconds['loosening'] / seconds['strategy']:.1f}x faster)")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
