"""What a stopped walk saves by taking its skip up again (the checkpoint's skip record, its lead and
stamp bytes and the kept policy file: solver/stochastic/skip.py, ``Skip.record``/``restore``).

    nice -n 19 python benchmarks/bench_walk_resume.py --pieces 4 --stop-at 40 [--threads 2] [--cut 0.5]

One walk (regenerating, its policy mapped from its file, as seven pieces solve) is stopped in the
middle of its full sweep ``--stop-at`` (after ``--cut`` of its chunks, as a killed run would be
cut), so that it keeps the checkpoint of the round before. Its folder is copied and the copy's
record dropped; then both are resumed to the end, the kept one first. For each: the first resumed
full sweep's share of states generated and its seconds, the resumed run's full sweeps, full-sweep
equivalents generated and seconds; then the ratios, and the two tables' largest difference (0 on
one thread; on two the racing order of the threads parts them by float32 roundings).
"""
from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from gamesolver.games.ur import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import solve
from gamesolver.solver.errors import Interrupted
from gamesolver.solver.stochastic import checkpoint, walk

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' engine that stops a sweep
from tests.test_walk_skip_resume import Cut  # noqa: E402


def stop_in_sweep(o: UrOptions, root: Path, at: int, cut: float, threads: int, tolerance: float) -> float:
    """Solve into a stop after ``cut`` of full sweep ``at``'s chunks; the seconds it ran."""
    real, count = walk.progress_sweep, [0]
    chunks = max(1, int(cut * -(-kernel(o).state_count // walk._CHUNK)))

    def sweep(K, *args, **kw):
        count[0] += 1
        return real(Cut(K, chunks) if count[0] == at else K, *args, **kw)

    walk.progress_sweep = sweep
    share, checkpoint.CHECKPOINT_SHARE = checkpoint.CHECKPOINT_SHARE, 1e9  # every round checkpointed, as seven pieces' are
    t0 = time.perf_counter()
    try:
        solve(o, root, tolerance=tolerance, threads=threads, graph="regenerate", policy_place="disk")
    except Interrupted:
        pass
    finally:
        walk.progress_sweep, checkpoint.CHECKPOINT_SHARE = real, share
    return time.perf_counter() - t0


def resumed(o: UrOptions, root: Path, at: int, threads: int, tolerance: float) -> dict:
    said: list[str] = []
    t0 = time.perf_counter()
    table = solve(o, root, tolerance=tolerance, threads=threads, graph="regenerate", policy_place="disk",
                  log=said.append)
    seconds = time.perf_counter() - t0
    first = next(s for s in said if s.startswith(f"sweep {at} "))
    meta = table.header["meta"]
    n = table.state_count
    return {"values": np.asarray(table["value"]).copy(), "seconds": seconds,
            "first_share": float(re.search(r"([\d.]+)% generated", first).group(1)) / 100,
            "first_seconds": float(re.search(r"full sweep ([\d.]+) s", first).group(1)),
            "sweeps": meta["sweeps"] - meta["resumed_at_sweep"],
            "generated": meta["full_sweeps_generated"]["generated_states"] / n,
            "took_up": any("the skip goes on" in s for s in said)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pieces", type=int, default=4)
    ap.add_argument("--stop-at", type=int, default=40, help="the full sweep the first run is stopped in")
    ap.add_argument("--cut", type=float, default=0.5, help="the share of that sweep's chunks done before the stop")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tolerance", type=float, default=1e-5)
    a = ap.parse_args()
    o = UrOptions(pieces=a.pieces)
    with tempfile.TemporaryDirectory(prefix="bench-resume-") as tmp:
        kept, plain = Path(tmp) / "kept", Path(tmp) / "regenerated"
        ran = stop_in_sweep(o, kept, a.stop_at, a.cut, a.threads, a.tolerance)
        if not checkpoint.keeps_skip(kept):
            raise SystemExit(f"the stopped walk kept no skip record (did it end before sweep {a.stop_at}?)")
        shutil.copytree(kept, plain)
        checkpoint.drop_skip_record(plain)
        print(f"{a.pieces} pieces, {a.threads} threads: stopped in full sweep {a.stop_at} after {ran:.1f} s")
        k = resumed(o, kept, a.stop_at, a.threads, a.tolerance)
        p = resumed(o, plain, a.stop_at, a.threads, a.tolerance)
    assert k["took_up"] and not p["took_up"]
    print("| resumed | first full sweep: generated, s | full sweeps | full-sweep equivalents generated | s |")
    print("|---|---|---:|---:|---:|")
    for name, r in (("with the skip's record", k), ("generating every state first", p)):
        print(f"| {name} | {r['first_share']:.1%}, {r['first_seconds']:.1f} | {r['sweeps']} | {r['generated']:.2f} | "
              f"{r['seconds']:.1f} |")
    print(f"ratios (with the record / without): first full sweep {k['first_seconds'] / p['first_seconds']:.2f}x, "
          f"generated {k['generated'] / p['generated']:.2f}x, resume {k['seconds'] / p['seconds']:.2f}x; "
          f"largest difference of the tables {float(np.abs(k['values'] - p['values']).max()):.2g}")


if __name__ == "__main__":
    main()
