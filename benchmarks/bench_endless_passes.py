"""What the endless check costs where the outcomes are regenerated (the seven-piece solve's case),
pass by pass, on a solved fort-rules table.

    nice -n 19 python benchmarks/bench_endless_passes.py --pieces 4 [--table DIR] [--threads 2] [--descending]

Without ``--table`` the table is solved first into a temporary folder (four pieces: about two
minutes on two cores, stored graph, tolerance 1e-5, no proof). Each pass of the check
(``solver.stochastic.iteration.endless_check``'s ``endless_pass``, regenerating every unmarked
state's outcomes) prints the share of states still unmarked before it, the states it marked and
its seconds; the last lines give the passes, the state-sweeps' worth of states they examined, their
time, and one residual sweep's time (a full sweep that writes nothing) to price the check in full
sweeps. ``--descending`` also runs the passes in descending rank order (blocks of 16,384 ranks,
each block ascending inside), to see whether the order the passes visit the states in matters.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from gamesolver.games.ur.generator import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import solve
from gamesolver.solver.stochastic.iteration import check_eps
from gamesolver.solver.stochastic.outcomes import Regenerated

_BLOCK = 1 << 14


def passes(K, values: np.ndarray, eps: float, threads: int, descending: bool) -> tuple[int, float, float]:
    """The check's passes from nothing marked: (passes, state-sweeps examined, seconds); a line each."""
    n = values.shape[0]
    good = np.zeros(n, np.uint8)
    engine = Regenerated(K)
    count, examined, seconds, added = 0, 0.0, 0.0, 1
    while added:
        unmarked = n - int(np.count_nonzero(good))
        t0 = time.perf_counter()
        if descending:
            added = sum(K.endless_pass(values, good, eps, threads=threads, first=count == 0, start=max(0, b - _BLOCK),
                                       stop=b) for b in range(n, 0, -_BLOCK))
        else:
            added = engine.endless_pass(values, good, eps, threads=threads, first=count == 0)
        took = time.perf_counter() - t0
        count += 1
        examined += unmarked / n
        seconds += took
        print(f"  pass {count}: {unmarked / n:.2%} unmarked before it, {added:,} marked, {took:.2f} s", flush=True)
    left = n - int(np.count_nonzero(good))
    print(f"  {count} passes, {examined:.2f} state-sweeps examined, {seconds:.1f} s; {left:,} states left unmarked")
    return count, examined, seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pieces", type=int, default=4)
    ap.add_argument("--table", type=Path, help="a solved table's folder (default: solve one first)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--descending", action="store_true", help="also run the passes in descending rank order")
    a = ap.parse_args()
    o = UrOptions(pieces=a.pieces)
    K = kernel(o)
    with tempfile.TemporaryDirectory() as tmp:
        where = a.table or Path(tmp) / "t"
        if a.table is None:
            print(f"solving {a.pieces} pieces into {where} first", flush=True)
            solve(o, where, tolerance=1e-5, threads=a.threads, graph="store")
        values = np.ascontiguousarray(np.load(where / "value.npy"), dtype=np.float32)
        tolerance = 1e-5
        eps = check_eps(tolerance)
        t0 = time.perf_counter()
        Regenerated(K).sweep(values.copy(), threads=a.threads, write=False)
        sweep = time.perf_counter() - t0
        print(f"k={a.pieces}, {a.threads} threads, eps {eps:g}: one residual sweep {sweep:.2f} s")
        for descending in (False, True) if a.descending else (False,):
            print("descending rank order" if descending else "ascending rank order (the check's)")
            _, examined, seconds = passes(K, values, eps, a.threads, descending)
            print(f"  the check costs {seconds / sweep:.1f} residual sweeps")


if __name__ == "__main__":
    main()
