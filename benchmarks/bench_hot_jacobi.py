"""How the walk's hot-set sweeps' order changes its rounds: the fort rules' walk over the stored
graph with its hot-set policy sweeps done three ways, one solve each (full sweeps by stage, policy
sweeps, hot-set states, the start's value), for the GPU's case.

On a GPU a hot set fits one kernel launch, whose threads update all its states from the same old
values (a Jacobi step); the CPU engine goes state after state (Gauss-Seidel). Here a NumPy stand-in
of the Jacobi step (each hot state's new value from the policy's codes and the old values) replaces
the engine's hot-set sweep:

    python benchmarks/bench_hot_jacobi.py gs jacobi chunk8 --pieces 4

``gs``: the engine's own sweep; ``jacobi``: one Jacobi step over the whole hot set; ``chunkN``: the
hot set cut into N pieces in rank order, a Jacobi step each, each seeing the pieces before it (what
the GPU engine does since, with N = SUBSET_PIECES). Four pieces: about 10-20 minutes a mode on two
cores. Measured (docs/design/backends.md, "Six and seven pieces"): 76, 109 and 85 full sweeps.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from gamesolver.games.ur import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.backends.gpu.arithmetic import SG_LOSS, SG_NOCODE, SG_WIN
from gamesolver.solver.stochastic.outcomes import StoredGraph
from gamesolver.solver.stochastic.iteration import solve_values

ENGINE_EVALUATE = StoredGraph.evaluate


def jacobi_step(policy, V, discount, subset, mark, above, probabilities) -> float:
    """One Jacobi policy sweep of the states ``subset``: every new value from the old ones."""
    rows = policy[subset]
    g = np.float64(np.float32(discount))
    val = np.zeros(rows.shape, np.float64)
    win, loss, none = rows == SG_WIN, rows == SG_LOSS, rows == SG_NOCODE
    same = rows >= 0
    passes = (rows < 0) & ~win & ~loss & ~none
    val[same] = g * V[rows[same]]
    val[passes] = -(g * V[-rows[passes].astype(np.int64) - 1])
    val[win], val[loss] = 1.0, -1.0
    new = (val @ probabilities).astype(np.float32)
    change = np.abs(new - V[subset])
    V[subset] = new
    if mark is not None:
        mark[subset[change > above]] = 1
    return float(change.max()) if change.size else 0.0


def patched(mode: str, probabilities: np.ndarray):
    """StoredGraph.evaluate with its subset sweeps done the ``mode`` way."""
    pieces = 1 if mode == "jacobi" else int(mode[5:])

    def evaluate(self, policy, V, threads=1, discount=1.0, subset=None, mark=None, above=0.0):
        if subset is None:
            return ENGINE_EVALUATE(self, policy, V, threads=threads, discount=discount, mark=mark, above=above)
        return max((jacobi_step(policy, V, discount, part, mark, above, probabilities)
                    for part in np.array_split(subset, pieces)), default=0.0)
    return evaluate


def run(mode: str, pieces: int, tolerance: float, threads: int) -> dict:
    options = UrOptions(pieces=pieces)
    game = kernel(options)
    StoredGraph.evaluate = ENGINE_EVALUATE if mode == "gs" else patched(
        mode, np.asarray(game.roll_probabilities, dtype=np.float64))
    lines: list[str] = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        res = solve_values(game, Path(d) / "t", options.header(), tolerance=tolerance, threads=threads,
                           graph="store", log=lines.append)
    StoredGraph.evaluate = ENGINE_EVALUATE
    stages: dict[str, int] = {}
    for line in lines:
        if line.startswith("sweep") and "(1 - discount" in line:
            d = line.split("(1 - discount ")[1].split(")")[0]
            stages[d] = stages.get(d, 0) + 1
    return {"mode": mode, "pieces": pieces, "seconds": round(time.perf_counter() - t0, 1),
            "full_sweeps": res.meta["sweeps"], "stages": stages, "policy_sweeps": res.meta["policy_sweeps"],
            "hot_set_states": res.meta["hot_set_states"], "start": float(res.values[0])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modes", nargs="+", help="gs, jacobi or chunkN")
    ap.add_argument("--pieces", type=int, default=4)
    ap.add_argument("--tolerance", type=float, default=1e-5)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    for mode in a.modes:
        if mode not in ("gs", "jacobi") and not (mode.startswith("chunk") and mode[5:].isdigit() and int(mode[5:]) > 0):
            ap.error(f"unknown mode {mode!r}; expected gs, jacobi or chunkN (N >= 1)")
    for mode in a.modes:
        print(json.dumps(run(mode, a.pieces, a.tolerance, a.threads)), flush=True)


if __name__ == "__main__":
    main()
