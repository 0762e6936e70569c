"""What the walk's repair of a false solution costs: the test board of the tests (8 tiles, four
pieces) with its entry, Ishtar, royal tile and Marduk tile laid out in each of their 24 orders,
each solved from an empty folder (CPU engine, stored graph) once for each repair named:

- ``rewalk`` (the default, ``iteration.WALK_REWALK``): where the endless check fails and the local
  repairs have not mended it, or the flagged states are too many for one, the walk starts again
  from its first stage with the values it has, every discounted stage run to tolerance / 10;
- ``descent``: plain sweeps of every state through the discounts 1e-2, 1e-3, ..., 1e-6
  (``discounted_descent``, as the sweeps method repairs).

Before them each board is solved once to 3e-7 with every walk stage run to tolerance / 10
(``WALK_EARLY_AIM`` = 0), which needed no repair on any of the 24: the reference the values are
measured against. One thread by default, so that each walk takes the same course every time (on
two, a sweep's updates land in the order the threads' timing gives).

    python benchmarks/bench_walk_repairs.py
    python benchmarks/bench_walk_repairs.py --repairs rewalk descent --aims 3e-2,1e-3 1e-3

``--from-stage``: the stages of ``WALK_DISCOUNTS`` the repair's walk starts from, one run each
(``iteration.WALK_REWALK_FROM``; 0, the first, by default).

``--aims``: each repair is run under each early aim given (``schedule.WALK_EARLY_AIM``; ``A,B``
ends the first stage at A and the second at B; 0: every stage to tolerance / 10). One line per
board and setting (repairs, full sweeps, policy sweeps, seconds, the largest difference from the
reference), then each setting's totals and their ratio to the first setting's.

``--last-factor``: each setting is also run for each value of ``schedule.WALK_STAGE_FACTOR`` given
(the last discounted stage ends at a change of tolerance / F; 1: at the tolerance itself).

    python benchmarks/bench_walk_repairs.py --repairs rewalk --last-factor 10 1
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import solve
from gamesolver.solver.stochastic import iteration
from gamesolver.solver.stochastic import schedule

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' test board
from tests.test_ur_reference import MINI_BOARD  # noqa: E402

TILES = ("B1", "B2", "C2", "B3")  # the four tiles whose roles are laid out in every order
ROLES = ("entry", "ishtar", "royal", "marduk")


def board_file(folder: Path, order: tuple[str, ...]) -> Path:
    board = json.loads(json.dumps(MINI_BOARD))
    for tile in board["tiles"]:
        if tile["name"] in TILES:
            tile["roles"] = [order[TILES.index(tile["name"])]]
    path = folder / ("board-" + "-".join(order) + ".json")
    path.write_text(json.dumps(board))
    return path


def parse_aim(text: str) -> float | tuple[float, ...]:
    each = tuple(float(x) for x in text.split(","))
    if min(each) < 0:
        raise ValueError(text)
    return each[0] if len(each) == 1 else each


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repairs", nargs="+", choices=("rewalk", "descent"), default=["descent", "rewalk"])
    ap.add_argument("--aims", nargs="+", default=None,
                    help="early aims (schedule.WALK_EARLY_AIM) to run each repair under: A or A,B "
                         "(default: the current one)")
    ap.add_argument("--from-stage", nargs="+", type=int, default=[iteration.WALK_REWALK_FROM],
                    help="the stage the repair's walk starts from (iteration.WALK_REWALK_FROM), one run each")
    ap.add_argument("--tolerance", type=float, default=1e-6)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--pieces", type=int, default=4)
    ap.add_argument("--last-factor", nargs="+", type=float, default=[schedule.WALK_STAGE_FACTOR],
                    help="values of schedule.WALK_STAGE_FACTOR to run each setting with (default: the walk's)")
    a = ap.parse_args()
    try:
        aims = [parse_aim(t) for t in a.aims] if a.aims else [schedule.WALK_EARLY_AIM]
    except ValueError as exc:
        ap.error(f"--aims: {exc} is not an aim; expected A or A,B with numbers 0 or more")
    if not all(0 <= f < len(schedule.WALK_DISCOUNTS) for f in a.from_stage):
        ap.error(f"--from-stage: each must be 0 to {len(schedule.WALK_DISCOUNTS) - 1}, a stage of WALK_DISCOUNTS")
    if min(a.last_factor) <= 0:
        ap.error("--last-factor: each must be above 0")
    settings = [(aim, repair, f, factor) for aim in aims for repair in a.repairs
                for f in (a.from_stage if repair == "rewalk" else [0]) for factor in a.last_factor]
    keep = schedule.WALK_EARLY_AIM, iteration.WALK_REWALK, iteration.WALK_REWALK_FROM, schedule.WALK_STAGE_FACTOR
    totals = {s: np.zeros(5) for s in range(len(settings))}
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        for order in itertools.permutations(ROLES):
            options = UrOptions(pieces=a.pieces, board_file=str(board_file(folder, order)))
            name = "-".join(order)
            schedule.WALK_EARLY_AIM, iteration.WALK_REWALK, iteration.WALK_REWALK_FROM = 0, True, 0
            schedule.WALK_STAGE_FACTOR = keep[3]
            ref = np.asarray(solve(options, folder / f"{name}-ref", tolerance=3e-7, threads=a.threads,
                                   show_progress=False)["value"], dtype=np.float64)
            for s, (aim, repair, f, factor) in enumerate(settings):
                schedule.WALK_EARLY_AIM, iteration.WALK_REWALK = aim, repair == "rewalk"
                iteration.WALK_REWALK_FROM, schedule.WALK_STAGE_FACTOR = f, factor
                t0 = time.perf_counter()
                table = solve(options, folder / f"{name}-{s}", tolerance=a.tolerance, threads=a.threads,
                              show_progress=False)
                seconds = time.perf_counter() - t0
                m = table.meta
                diff = float(np.abs(np.asarray(table["value"], dtype=np.float64) - ref).max())
                totals[s] += (m["sweeps"], m["policy_sweeps"], seconds, m["endless_repairs"] > 0,
                              m["endless_check"]["flagged"] > 0)
                aim_text = ",".join(f"{x:g}" for x in aim) if isinstance(aim, tuple) else f"{aim:g}"
                what = (f"{repair} {f}" if repair == "rewalk" else repair) + f" /{factor:g}"
                print(f"{name:28s} aim {aim_text:10s} {what:12s}: {m['endless_repairs']} repairs, "
                      f"{m['sweeps']:4d} full sweeps, {m['policy_sweeps']:5d} policy sweeps, {seconds:5.2f} s, "
                      f"{m['endless_check']['flagged']} flagged at the end, within {diff:.2g} of the reference",
                      flush=True)
    schedule.WALK_EARLY_AIM, iteration.WALK_REWALK, iteration.WALK_REWALK_FROM, schedule.WALK_STAGE_FACTOR = keep
    base = totals[0]
    for s, (aim, repair, f, factor) in enumerate(settings):
        t = totals[s]
        what = (f"rewalk from stage {f}" if repair == "rewalk" else repair) + f", last stage to tolerance / {factor:g}"
        print(f"aim {aim} {what}: {int(t[3])} of 24 boards repaired, {int(t[4])} still flagged; "
              f"{int(t[0])} full sweeps (x{t[0] / base[0]:.3f}), "
              f"{int(t[1])} policy sweeps (x{t[1] / base[1]:.3f}), {t[2]:.1f} s (x{t[2] / base[2]:.3f})")


if __name__ == "__main__":
    main()
