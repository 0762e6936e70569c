"""Where the walk's first stage should end, measured on one shared start: the fort rules solved from
an empty folder with the first stage's aim set to the finest of ``--aims``; at the first round
of the first stage whose largest change falls below a coarser aim, the checkpoint is copied and
marked as the end of that stage (what a walk with that aim writes there), and once the main walk
reaches the first round of stage ``--until-stage`` each copy is resumed with its own aim up to
the same point. So every aim shares the rounds before its first stage ends, and what differs is
only the rounds that aim saves in the first stage against those it costs later: two threads'
racing order makes two whole walks differ by a few rounds, more than the difference sought.

    python benchmarks/bench_first_aim.py --pieces 5 --aims 3e-2 1e-1 --until-stage 2

One line an aim: its rounds by stage before stage ``--until-stage``, the full-sweep equivalents
they generated (regenerating, the default, as seven pieces solve), the full and policy sweeps'
seconds, and how far that stage's first round moved the values; then the ratios of the coarser
aims' generated equivalents and seconds to the finest's. The second stage's aim is the walk's
(``schedule.WALK_EARLY_AIM``) for every run.
"""
from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench_walk_stages import ROUND, StagesDone, round_stage, rounds_summary
from gamesolver.games.ur import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.stochastic import checkpoint, schedule
from gamesolver.solver.stochastic.iteration import solve_values


def aims_with(first: float) -> tuple[float, ...]:
    """The walk's early aims with the first stage's set to ``first``."""
    aims = schedule.WALK_EARLY_AIM if isinstance(schedule.WALK_EARLY_AIM, tuple) else (schedule.WALK_EARLY_AIM,)
    return (first, *aims[1:]) if len(aims) > 1 else (first, aims[0])


def walk_until(options: UrOptions, root: Path, first: float, until: int, threads: int, graph: str,
               forks: dict[float, Path], tolerance: float) -> list[str]:
    """Solve in ``root`` with the first stage ending at ``first`` until the first round of stage
    ``until``; the round lines before it. Where ``forks`` names coarser aims, copy the checkpoint
    to each one's folder at the first round of stage 0 below that aim, marked as that stage's end."""
    schedule.WALK_EARLY_AIM = aims_with(first)
    checkpoint.CHECKPOINT_SHARE = math.inf  # a checkpoint every round, however cheap the round, to fork from
    lines: list[str] = []
    pending = dict(sorted(forks.items(), reverse=True))

    def take(line: str) -> None:
        stage = round_stage(line)
        if stage < 0:
            return
        lines.append(line)
        print(f"[aim {first:g}] {line}", file=sys.stderr, flush=True)  # the rounds as they go, for a long run
        if stage >= until:
            raise StagesDone
        change = float(ROUND.match(line).group("change"))  # type: ignore[union-attr]
        for aim in [a for a in pending if stage == 0 and change < a]:
            dest = pending.pop(aim)
            shutil.copytree(root, dest)
            info_file = dest / checkpoint.CHECKPOINT_INFO
            info = json.loads(info_file.read_text())
            if info.get("sweeps") != int(line.split()[1]):  # the pacer may skip a dear round's checkpoint
                raise RuntimeError(f"no checkpoint of this round to fork the aim {aim:g} from: {line[:40]}")
            info["stage"] = 1  # the first stage ended here, as a walk aiming at ``aim`` ends it
            info_file.write_text(json.dumps(info))

    try:
        solve_values(kernel(options), root, options.header(), tolerance=tolerance, threads=threads, graph=graph,
                     log=take)
    except StagesDone:
        return lines
    raise RuntimeError(f"the walk ended before stage {until}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pieces", type=int, default=4)
    ap.add_argument("--aims", nargs="+", type=float, default=[3e-2, 1e-1],
                    help="first-stage aims; the finest is walked from the start, the others forked from it")
    ap.add_argument("--until-stage", type=int, default=2, metavar="N",
                    help="stop every walk at the first round of stage N (numbered from 0; default 2)")
    ap.add_argument("--graph", choices=("store", "regenerate"), default="regenerate")
    ap.add_argument("--tolerance", type=float, default=1e-5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--board", type=Path, help="a board file (default: the real board)")
    ap.add_argument("--json", action="store_true", help="one JSON line an aim")
    a = ap.parse_args()
    if min(a.aims) <= 0 or len(set(a.aims)) != len(a.aims):
        ap.error("--aims: distinct aims above 0 expected")
    if not 1 <= a.until_stage <= len(schedule.WALK_DISCOUNTS):
        ap.error(f"--until-stage must be 1 to {len(schedule.WALK_DISCOUNTS)}")
    if a.board is not None and not a.board.is_file():
        ap.error(f"--board: {a.board} is not a file")
    options = UrOptions(pieces=a.pieces, board_file=None if a.board is None else str(a.board))
    finest, *coarser = sorted(a.aims)
    with tempfile.TemporaryDirectory() as d:
        forks = {aim: Path(d) / f"fork-{aim:g}" for aim in coarser}
        t0 = time.perf_counter()
        main_lines = walk_until(options, Path(d) / "main", finest, a.until_stage, a.threads, a.graph, forks,
                                a.tolerance)
        results = {finest: (main_lines, time.perf_counter() - t0)}
        for aim in coarser:
            if not forks[aim].exists():
                raise RuntimeError(f"the first stage never fell below {aim:g}")
            n = next(i for i, line in enumerate(main_lines)
                     if round_stage(line) == 0 and float(ROUND.match(line).group("change")) < aim)  # type: ignore[union-attr]
            shared = main_lines[:n + 1]  # the rounds up to and including the one that ended the stage
            t1 = time.perf_counter()
            rest = walk_until(options, forks[aim], aim, a.until_stage, a.threads, a.graph, {}, a.tolerance)
            results[aim] = (shared + rest, time.perf_counter() - t1)
    base = rounds_summary(results[finest][0], a.until_stage, a.graph)
    for aim in sorted(results):
        row = {"pieces": a.pieces, "graph": a.graph, "threads": a.threads, "first_aim": aim,
               "until_stage": a.until_stage, **rounds_summary(results[aim][0], a.until_stage, a.graph)}
        ratio = (row["generated"] or row["full_sweeps"]) / (base["generated"] or base["full_sweeps"])
        seconds = row["full_seconds"] + row["policy_seconds"]
        row["work_ratio"] = round(ratio, 3)
        base_seconds = base["full_seconds"] + base["policy_seconds"]
        row["seconds_ratio"] = round(seconds / base_seconds, 3) if base_seconds else None  # (tiny boards: 0.0 s)
        if a.json:
            print(json.dumps(row), flush=True)
        else:
            print(f"K={a.pieces} ({a.graph}, {a.threads} threads) first stage to {aim:g}: {row['full_sweeps']} full "
                  f"sweeps before stage {a.until_stage} {row['stages']}"
                  + ("" if row["generated"] is None else f", {row['generated']} full-sweep equivalents generated")
                  + f", full sweeps {row['full_seconds']} s, policy sweeps {row['policy_seconds']} s; stage "
                  f"{a.until_stage}'s first round changed {row['next_stage_first_change']:.3g}; x{row['work_ratio']} "
                  f"generated, x{row['seconds_ratio']} time", flush=True)


if __name__ == "__main__":
    main()
