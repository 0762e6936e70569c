"""The fort rules' move generator against an earlier commit's, in one process.

A regenerating sweep spends its time in the generator, so this times the regenerating sweep with
this tree's ``games/ur/_fort.pyx`` against the same sweep with ``--against``'s (the engine is this
tree's for both), so that a solve or anything else running beside it slows both alike:

1. it unpacks the committed tree (``git archive HEAD``) into a scratch folder;
2. it adds ``--against``'s ``_fort.pyx`` there as the modules ``_fort_ref`` and ``_fort_ref_bmi2``
   (the second compiled like ``_fort_bmi2``) and builds the copy in place (a minute or two on 2
   cores);
3. a child process makes both generators for ``--pieces`` (the second takes the first's mirror
   index, so it is built once), checks that they write the same codes in the same groups on
   random states, and times the sweep of each: runs of ``--chunk`` consecutive ranks at
   ``--chunks`` places drawn at random over the whole state space, on random values, nothing
   written, the two alternating ``--repeats`` times; medians of ns a state and of ns a code
   written (codes a state counted on the same runs), and old / new. Each side is the build its own
   "auto" picks on this CPU: this tree's ``_fort_bmi2`` where PEXT runs in hardware, else
   ``_fort_popcnt`` (where PEXT is microcode, as on AMD before Zen 3), else ``_fort``; the
   reference's ``_fort_ref_bmi2`` where PEXT runs in hardware, else ``_fort_ref`` (portable). The
   rows name both.

    python benchmarks/bench_generator.py --pieces 4 7 --threads 1 2
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import REPO, scratch_build
FORT = "games/ur/_fort.pyx"
FLAGS = "extra_args = {"  # setup.py's table of each extra build's compiler flags

CHILD = r"""
import json, statistics, sys, time
import numpy as np
import importlib
from gamesolver.games.ur.generator import _new_game, fort_module
from gamesolver.games.ur.rules import UrOptions

pieces, chunks, chunk, repeats = (int(a) for a in sys.argv[1:5])
threads = [int(t) for t in sys.argv[5].split(",")]
mod = fort_module(None)
fast = mod.uses_bmi2()
build = mod.__name__.rsplit(".", 1)[-1]  # this tree's build as "auto" picks it here (_fort, _fort_popcnt, _fort_bmi2)
# the reference compiled as the default build is: BMI2 only where this CPU runs it well
ref_module = importlib.import_module("gamesolver.games.ur._fort_ref" + ("_bmi2" if fast else ""))
t0 = time.perf_counter()
new = _new_game(UrOptions(pieces=pieces), mod)
n = new.state_count
old = _new_game(UrOptions(pieces=pieces), ref_module)
if new.mirrored:
    old.use_index(*new.index_arrays(), n)
built = time.perf_counter() - t0
chunk = min(chunk, n)
V = (np.random.default_rng(1).random(n) * 2 - 1).astype(np.float32)
starts = np.sort(np.random.default_rng(2).integers(0, n - chunk + 1, size=chunks)).tolist()
probe = np.random.default_rng(3).integers(0, n, size=2000).tolist()
same_codes = all(old.outcome_groups(r) == new.outcome_groups(r) for r in probe)
# codes a state over the timed runs (every 7th rank of each, the same for both generators)
codes = [sum(len(g) for g in new.outcome_groups(r)) for a in starts for r in range(a, a + chunk, 7)]
per_state = sum(codes) / len(codes)
for game in (old, new):
    game.sweep(V, threads=1, start=0, stop=1, write=False)
rows = []
for nt in threads:
    times = {"old": [], "new": []}
    top = {}
    for _ in range(repeats):
        for name, game in (("old", old), ("new", new)):
            t = time.perf_counter()
            best = 0.0
            for a in starts:
                best = max(best, game.sweep(V, threads=nt, start=a, stop=a + chunk, write=False))
            times[name].append((time.perf_counter() - t) / (chunks * chunk) * 1e9)
            top[name] = best
    med = {k: statistics.median(v) for k, v in times.items()}
    rows.append({"pieces": pieces, "states": n, "threads": nt, "build": build, "reference_build": ref_module.__name__.rsplit(".", 1)[-1],
                 "built_s": round(built, 1), "codes_a_state": round(per_state, 1),
                 "old_ns_a_state": round(med["old"], 1), "new_ns_a_state": round(med["new"], 1),
                 "old_ns_a_code": round(med["old"] / per_state, 2), "new_ns_a_code": round(med["new"] / per_state, 2),
                 "speedup": round(med["old"] / med["new"], 3),
                 "old_runs": [round(x) for x in times["old"]], "new_runs": [round(x) for x in times["new"]],
                 "same_codes": same_codes, "same_change": top["old"] == top["new"]})
print(json.dumps(rows))
"""


def build(scratch: Path, rev: str) -> Path:
    done = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:{FORT}"], capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"--against {rev}: no {FORT} there ({done.stderr.strip()})")

    def patch(src: Path) -> None:
        (src / "games/ur/_fort_ref.pyx").write_text(done.stdout)
        (src / "games/ur/_fort_ref_bmi2.pyx").write_text('include "_fort_ref.pyx"\n')
        setup = (src / "setup.py").read_text()
        if FLAGS not in setup:
            sys.exit("setup.py no longer names the BMI2 build's flags as this benchmark expects")
        setup = setup.replace(FLAGS, FLAGS + 'os.path.join("games", "ur", "_fort_ref_bmi2.pyx"): '
                                     '["-mpopcnt", "-mbmi2"], ', 1)
        (src / "setup.py").write_text(setup)
    return scratch_build(scratch, patch)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", default="8f63ba4", help="the commit whose generator is the reference")
    ap.add_argument("--pieces", type=int, nargs="+", default=[4])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--chunks", type=int, default=20)
    ap.add_argument("--chunk", type=int, default=20000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-generator-") as tmp:
        path = build(Path(tmp), a.against)
        env = {**os.environ, "PYTHONPATH": str(path)}
        for pieces in a.pieces:
            out = subprocess.run([sys.executable, "-c", CHILD, str(pieces), str(a.chunks), str(a.chunk),
                                  str(a.repeats), ",".join(map(str, a.threads))],
                                 env=env, check=True, capture_output=True, text=True, cwd=tmp).stdout
            for row in json.loads(out):
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
