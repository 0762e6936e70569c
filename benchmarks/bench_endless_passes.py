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

    nice -n 19 python benchmarks/bench_endless_passes.py --pieces 7 --values CHECKPOINT.npy --no-sweep --repair

``--values`` checks a running solve's values instead (a checkpoint's ``checkpoint.npy``, copied
aside), at the eps a table solved to 1e-5 is checked at: how many states the check would flag now.
``--repair`` then runs the solve's local repair (``iteration.local_repair``) on a copy of the values
over the flagged states, and says how far it moved them and the undiscounted residual left on them.
``--no-sweep`` leaves out the residual sweep that prices the check (at seven pieces it is as dear as
the check's first pass). ``--flagged-out FILE`` saves the flagged states' ranks, to compare the
checks of two checkpoints' values. ``--json`` ends with one line of JSON holding the figures.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from gamesolver.games.ur.generator import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import solve
from gamesolver.solver.stochastic.iteration import check_eps, local_repair
from gamesolver.solver.stochastic.outcomes import Regenerated

_BLOCK = 1 << 14


def passes(K, values: np.ndarray, eps: float, threads: int, descending: bool) -> tuple[int, float, float, np.ndarray]:
    """The check's passes from nothing marked: (passes, state-sweeps examined, seconds, the marks);
    a line each."""
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
    return count, examined, seconds, good


def repair(K, values: np.ndarray, flagged: np.ndarray, threads: int) -> dict:
    """The solve's local repair of the flagged states on a copy of the values: its backups and
    seconds, how far it moved them, and the undiscounted residual left on them."""
    fixed = values.copy()
    t0 = time.perf_counter()
    backups = local_repair(Regenerated(K), fixed, flagged, threads, log=lambda line: print("  " + line, flush=True))
    took = time.perf_counter() - t0
    moved = np.abs(fixed[flagged].astype(np.float64) - values[flagged])
    residual = float(K.sweep(fixed, threads=threads, subset=flagged, write=False))
    print(f"  local repair: {backups:,} backups, {took:.1f} s; the flagged states moved by a median {np.median(moved):.3g}, "
          f"at most {moved.max():.3g}; undiscounted residual on them after it {residual:.3g}")
    return {"backups": int(backups), "seconds": took, "moved_median": float(np.median(moved)),
            "moved_max": float(moved.max()), "residual_after": residual}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pieces", type=int, default=4)
    ap.add_argument("--table", type=Path, help="a solved table's folder (default: solve one first)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--descending", action="store_true", help="also run the passes in descending rank order")
    ap.add_argument("--values", type=Path, help="a solve's values to check (a checkpoint.npy) instead of a table")
    ap.add_argument("--repair", action="store_true", help="then repair the flagged states on a copy, as the solve would")
    ap.add_argument("--flagged-out", type=Path, metavar="FILE",
                    help="save the flagged states' ranks (int64, .npy) to compare the checks of two values")
    ap.add_argument("--no-sweep", action="store_true", help="leave out the residual sweep that prices the check")
    ap.add_argument("--json", action="store_true", help="end with one line of JSON holding the figures")
    a = ap.parse_args()
    if a.values is not None and a.table is not None:
        ap.error("give --table or --values, not both")
    if a.threads < 1 or not 1 <= a.pieces <= 7:
        ap.error("--threads must be at least 1 and --pieces 1-7")
    o = UrOptions(pieces=a.pieces)
    K = kernel(o)
    with tempfile.TemporaryDirectory() as tmp:
        if a.values is not None:
            try:
                values = np.ascontiguousarray(np.load(a.values, mmap_mode="r"), dtype=np.float32)
            except (OSError, ValueError) as exc:
                ap.error(f"cannot read {a.values}: {exc}")
            if values.shape != (K.state_count,):
                ap.error(f"{a.values} holds {values.size:,} values; {a.pieces} pieces store {K.state_count:,}")
        else:
            where = a.table or Path(tmp) / "t"
            if a.table is None:
                print(f"solving {a.pieces} pieces into {where} first", flush=True)
                solve(o, where, tolerance=1e-5, threads=a.threads, graph="store")
            values = np.ascontiguousarray(np.load(where / "value.npy"), dtype=np.float32)
        tolerance = 1e-5
        eps = check_eps(tolerance)
        figures: dict = {"pieces": a.pieces, "threads": a.threads, "eps": eps}
        sweep = None
        if not a.no_sweep:
            t0 = time.perf_counter()
            Regenerated(K).sweep(values.copy(), threads=a.threads, write=False)
            sweep = figures["residual_sweep_seconds"] = time.perf_counter() - t0
        print(f"k={a.pieces}, {a.threads} threads, eps {eps:g}" + ("" if sweep is None else f": one residual sweep {sweep:.2f} s"))
        for descending in (False, True) if a.descending else (False,):
            print("descending rank order" if descending else "ascending rank order (the check's)")
            count, examined, seconds, good = passes(K, values, eps, a.threads, descending)
            if sweep is not None:
                print(f"  the check costs {seconds / sweep:.1f} residual sweeps")
            if descending:
                continue
            flagged = np.flatnonzero((good == 0) & (np.abs(values) > eps))
            print(f"  {flagged.size:,} states flagged (unmarked, and claiming more than eps)")
            figures.update({"passes": count, "examined": examined, "check_seconds": seconds, "flagged": int(flagged.size)})
            if a.flagged_out is not None:
                np.save(a.flagged_out, flagged.astype(np.int64))
                print(f"  their ranks saved to {a.flagged_out}")
            if a.repair and flagged.size:
                figures["repair"] = repair(K, values, flagged, a.threads)
        if a.json:
            print(json.dumps(figures))


if __name__ == "__main__":
    main()
