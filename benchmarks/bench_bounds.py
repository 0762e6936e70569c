"""Certified bounds (``solver.stochastic.bounds.certify``): the strategy against its best answer (the
default) against loosening from the values (the way before it), in the same run on the same table.

Run with ``nice -n 19 python benchmarks/bench_bounds.py`` (the 8-tile test board, four pieces,
seconds) or ``--real K`` for the real board with K pieces (K = 4: the solve takes about 5 minutes
and each proof 15 or more on two cores; loosening stops after ``--loosen-sweeps`` sweeps and then
falls back to -1 and +1, which it reports). Prints, for each method: seconds, rounds and products
(strategy), loosening and tightening sweeps, the widest interval, the largest distance from the
values to an interval's end, the start's interval; and the time ratio.

``--krylov K``: BiCGSTAB on the pair's equations for the real board with K pieces (the strategy
pair's product over 2N rows, the greedy pair of random values, a random right-hand side), its
vector steps fused (``solver/stochastic/_krylov.pyx``) against plain NumPy, alternating in one run: seconds
an iteration, the products' share, and the ratio.

``--prefetch K``: the proof's kernels that read scattered entries (the product by the pair's
matrix, the bounds sweep, the best answers and the ranking pass over the stored graph, and the
endless check's pass) for the real board with K pieces, with their prefetch off (``ahead=0``)
against the default, alternating in one run: best seconds of ``--repeats`` and the ratio.
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
    ap.add_argument("--krylov", type=int, default=0, metavar="K",
                    help="time BiCGSTAB's vector steps, fused against NumPy, on the real board's pair")
    ap.add_argument("--prefetch", type=int, default=0, metavar="K",
                    help="time the proof's scattered reads with and without prefetch on the real board's pair")
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    if args.krylov:
        krylov_speed(args.krylov, args.threads, args.iterations, args.repeats)
        return
    if args.prefetch:
        prefetch_speed(args.prefetch, args.threads, args.repeats)
        return

    from gamesolver.games.ur import kernel
    from gamesolver.games.ur.rules import UrOptions
    from gamesolver.solver.stochastic.bounds import certify
    from gamesolver.solver.stochastic.iteration import solve_values

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


def greedy_pair(k: int, threads: int):
    """The real board with ``k`` pieces, random values and their greedy strategy (seeded)."""
    from gamesolver.games.ur import kernel
    from gamesolver.games.ur.rules import UrOptions

    game = kernel(UrOptions(pieces=k))
    n = game.state_count
    rng = np.random.default_rng(1)
    values = (rng.random(n, dtype=np.float32) - 0.5).astype(np.float32)
    policy = np.empty((n, game.roll_count), dtype=np.int32)
    game.sweep(values, threads=threads, policy=policy)  # the greedy pair of these values
    return game, n, rng, values, policy


def krylov_speed(k: int, threads: int, iterations: int, repeats: int) -> None:
    from gamesolver.solver.stochastic import _engine as kernels
    from gamesolver.solver.stochastic.krylov import bicgstab

    game, n, rng, values, policy = greedy_pair(k, threads)
    tau = policy.copy()
    pinned = np.zeros(2 * n, dtype=np.uint8)
    b = rng.random(2 * n) - 0.5
    x0 = np.zeros(2 * n)
    products = [0, 0.0]

    def matvec(x: np.ndarray, out: np.ndarray) -> None:
        t0 = time.perf_counter()
        kernels.pair_apply(game, policy, tau, pinned, x, out, minus=True, threads=threads)
        products[0] += 1
        products[1] += time.perf_counter() - t0

    print(f"real board, {k} pieces: {n:,} states, pair of {2 * n:,} rows; {iterations} BiCGSTAB iterations, "
          f"{threads} threads, best of {repeats} alternating runs", flush=True)
    best = {}
    share = {}
    for _ in range(repeats):
        for ops in ("numpy", "fused"):
            products[:] = [0, 0.0]
            t0 = time.perf_counter()
            res = bicgstab(matvec, b, x0, tol=0.0, maxiter=iterations, threads=threads, ops=ops)
            dt = time.perf_counter() - t0
            if dt < best.get(ops, np.inf):
                best[ops] = dt
                share[ops] = products[1] / dt
            its = (res.matvecs - 2) / 2
    for ops in ("numpy", "fused"):
        print(f"  {ops:5s}: {best[ops] / its:.3f} s an iteration, products {share[ops]:.0%} of it")
    print(f"  fused / numpy: {best['fused'] / best['numpy']:.3f} ({best['numpy'] / best['fused']:.2f}x faster)")


def prefetch_speed(k: int, threads: int, repeats: int) -> None:
    from gamesolver.solver.stochastic import _engine as kernels
    from gamesolver.solver.stochastic.bounds import pair_matrix
    from gamesolver.solver.stochastic.outcomes import build_graph

    game, n, rng, values, policy = greedy_pair(k, threads)
    matrix, why = pair_matrix(game, policy, policy.copy(), np.zeros(2 * n, dtype=np.uint8), threads)
    if matrix is None:
        raise SystemExit(f"no pair matrix: {why}")
    g = build_graph(game, threads)
    graph = dict(offsets=g.offsets, counts=g.counts, codes=g.codes)
    x = rng.random(2 * n) - 0.5
    out = np.empty(2 * n)
    L, U = values - np.float32(0.01), values + np.float32(0.01)
    runs = {
        "product by the pair's matrix": lambda **a: kernels.sparse_apply(*matrix, x, out, minus=True,
                                                                          threads=threads, **a),
        "bounds sweep (Jacobi)": lambda **a: kernels.graph_bounds_sweep(game, g.offsets, g.counts, g.codes, L.copy(),
                                                                        U.copy(), threads=threads, L_from=L,
                                                                        U_from=U, **a),
        "best answers": lambda **a: kernels.best_response(game, x, policy.copy(), threads=threads, **graph, **a),
        "ranking pass (from none ranked)": lambda **a: kernels.rank_pass(
            game, values, 1e-3, np.zeros(n, np.int32), np.zeros(n, np.int32), np.zeros(1, np.int32),
            threads=threads, **graph, **a),
        "endless check's first pass": lambda **a: kernels.graph_endless_pass(
            game, g.offsets, g.counts, g.codes, values, np.zeros(n, np.uint8), 1e-3, threads=threads, first=True, **a),
    }
    print(f"real board, {k} pieces: {n:,} states, {g.codes.shape[0]:,} stored outcomes, pair matrix {why}; "
          f"{threads} threads, best of {repeats} alternating runs", flush=True)
    for name, run in runs.items():
        best = {"off": np.inf, "on": np.inf}
        for _ in range(repeats):
            for how, kw in (("off", {"ahead": 0}), ("on", {})):
                t0 = time.perf_counter()
                run(**kw)
                best[how] = min(best[how], time.perf_counter() - t0)
        print(f"  {name}: {best['off']:.3f} s without prefetch, {best['on']:.3f} s with "
              f"({best['off'] / best['on']:.2f}x faster)", flush=True)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
