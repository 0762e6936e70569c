"""The kernels written once over an outcome source against the engine that wrote each twice.

The sweep, the endless check's pass and the sweep of bounds each run one loop, fused over where a
state's outcomes come from (generated again, or read from a stored graph). Before, each was written
twice: once generating (``sweep``, ``endless_pass``, ``bounds_sweep``) and once over the stored
graph (``graph_sweep``, ``graph_endless_pass``, ``graph_bounds_sweep``). This benchmark times both
in one process, so that a solve or anything else running beside it slows both alike:

1. it unpacks the committed tree (``git archive HEAD``) into a scratch folder;
2. it appends the six two-copy kernels of ``--against`` (a commit that still had them) to that
   copy's ``_engine.pyx``, renamed ``*_old``, and builds the copy in place (about a minute on 2
   cores);
3. a child process imports that copy and times old against new on the same random values, the
   two alternating ``--repeats`` times; the minimum and the median of each, and new / old.

Each pair must also give the same largest change (or count, or gap) on one thread, which is
printed (on more, an endless pass's count depends on the threads' timing).

    python benchmarks/bench_outcome_source.py --pieces 4 --threads 2 --repeats 5
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import REPO, scratch_build
ENGINE = "solver/stochastic/_engine.pyx"
OLD = ("sweep", "endless_pass", "bounds_sweep", "graph_sweep", "graph_endless_pass", "graph_bounds_sweep")

CHILD = r"""
import json, statistics, sys, time
import numpy as np
from gamesolver.games.ur import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.stochastic import _engine as ks
from gamesolver.solver.stochastic.outcomes import build_graph

pieces, threads, repeats = (int(a) for a in sys.argv[1:4])
K = kernel(UrOptions(pieces=pieces))
n = K.state_count
g = build_graph(K, threads)
G = dict(offsets=g.offsets, counts=g.counts, codes=g.codes)
V0 = (np.random.default_rng(1).random(n, dtype=np.float32) * 2 - 1).astype(np.float32)
good = np.zeros(n, np.uint8)
L0, U0 = np.full(n, -1.0, np.float32), np.full(n, 1.0, np.float32)
d = 0.999
pairs = {
    "graph sweep": (lambda t: ks.graph_sweep_old(K, g.offsets, g.counts, g.codes, V0.copy(), threads=t, discount=d),
                    lambda t: ks.graph_sweep(K, g.offsets, g.counts, g.codes, V0.copy(), threads=t, discount=d)),
    "graph endless pass": (
        lambda t: ks.graph_endless_pass_old(K, g.offsets, g.counts, g.codes, V0, good.copy(), 1e-4, threads=t,
                                            first=True),
        lambda t: ks.endless_pass(K, V0, good.copy(), 1e-4, threads=t, first=True, **G)),
    "graph bounds sweep": (
        lambda t: ks.graph_bounds_sweep_old(K, g.offsets, g.counts, g.codes, L0.copy(), U0.copy(), threads=t),
        lambda t: ks.bounds_sweep(K, L0.copy(), U0.copy(), threads=t, **G)),
    "regenerating sweep": (lambda t: ks.sweep_old(K, V0.copy(), threads=t, discount=d),
                           lambda t: ks.sweep(K, V0.copy(), threads=t, discount=d)),
    "regenerating endless pass": (
        lambda t: ks.endless_pass_old(K, V0, good.copy(), 1e-4, threads=t, first=True),
        lambda t: ks.endless_pass(K, V0, good.copy(), 1e-4, threads=t, first=True)),
}
# the same result, on one thread: on more, an endless pass marks in an order the threads' timing
# decides, so its count may differ from run to run
same = {name: old(1) == new(1) for name, (old, new) in pairs.items()}
times = {k: {"old": [], "new": []} for k in pairs}
for _ in range(repeats):
    for name, (old, new) in pairs.items():
        for tag, f in (("old", old), ("new", new)):
            t0 = time.perf_counter()
            f(threads)
            times[name][tag].append(time.perf_counter() - t0)
rows = []
for name, tt in times.items():
    rows.append({"kernel": name, "states": n, "threads": threads,
                 "old_min_s": round(min(tt["old"]), 4), "new_min_s": round(min(tt["new"]), 4),
                 "new_over_old_min": round(min(tt["new"]) / min(tt["old"]), 3),
                 "new_over_old_median": round(statistics.median(tt["new"]) / statistics.median(tt["old"]), 3),
                 "same_result": same[name]})
print(json.dumps(rows))
"""


def old_kernels(rev: str) -> str:
    """The two-copy kernels of ``rev``'s engine, each renamed ``*_old``."""
    text = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:{ENGINE}"], check=True, capture_output=True,
                          text=True).stdout
    out = []
    for name in OLD:
        m = re.search(rf"^def {name}\(.*?(?=^\S)", text, flags=re.S | re.M)
        if m is None:
            sys.exit(f"{rev}'s {ENGINE} has no kernel {name}(); give --against a commit that wrote each kernel twice")
        out.append(m.group(0).replace(f"def {name}(", f"def {name}_old(", 1))
    return "\n\n".join(out)


def build(scratch: Path, rev: str) -> Path:
    def patch(src: Path) -> None:
        with open(src / ENGINE, "a") as f:
            f.write("\n\n# ---- the two-copy kernels, for this benchmark only ----\n\n" + old_kernels(rev) + "\n")
    return scratch_build(scratch, patch)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", default="3f03e9b", help="a commit whose engine wrote each kernel twice")
    ap.add_argument("--pieces", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-source-") as tmp:
        path = build(Path(tmp), a.against)
        env = {**os.environ, "PYTHONPATH": str(path)}
        out = subprocess.run([sys.executable, "-c", CHILD, str(a.pieces), str(a.threads), str(a.repeats)],
                             env=env, check=True, capture_output=True, text=True, cwd=tmp).stdout
    for row in json.loads(out):
        print(json.dumps(row))


if __name__ == "__main__":
    main()
