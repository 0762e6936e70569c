"""Whether the walk's greedy pair chases itself, and what damps it, from one shared checkpoint: the
fort rules walked from an empty folder with the top-up in every round (``walk.WALK_CHASE_ROUNDS``
= 0, as before the chase rule) up to round ``--fork-at``; then a copy of that round's checkpoint
resumed for ``--rounds`` more rounds under each setting named:

- ``top-up``: the top-up in every round (WALK_CHASE_ROUNDS = 0);
- ``hot-only``: no top-up at all (WALK_EVAL_MOST = 0: the hot round's own sweeps);
- ``chase``: no top-up while ``walk.chasing``;
- ``greedy``: the walk as it is: the chase rule, and greedy sweeps of the hot set
  (``walk.WALK_HOT_GREEDY``), which the three settings above leave out.

    python benchmarks/bench_chase.py --pieces 5 --fork-at 24 --rounds 8 --settings top-up hot-only chase
    python benchmarks/bench_chase.py --pieces 5 --fork-at 24 --rounds 8 --settings chase greedy

One line a setting: the largest change of each round after the fork, and how many of them set a
new smallest change for the stage. At five pieces (two threads, regenerating) the first stage
with the top-up settled by its 16th round into a cycle of four rounds (docs/design/walk.md, "A
pair that chases itself").
"""
from __future__ import annotations

import argparse
import json
import math
import shutil
import tempfile
from pathlib import Path

from bench_walk_stages import ROUND, round_stage
from gamesolver.games.ur import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.stochastic import checkpoint, walk
from gamesolver.solver.stochastic.iteration import solve_values

SETTINGS = {"top-up": {"WALK_CHASE_ROUNDS": 0, "WALK_HOT_GREEDY": 0}, "hot-only": {"WALK_EVAL_MOST": 0, "WALK_HOT_GREEDY": 0},
            "chase": {"WALK_HOT_GREEDY": 0}, "greedy": {}}


class Enough(Exception):
    """Raised from the walk's log once a run has made its rounds."""


def walk_rounds(options: UrOptions, root: Path, rounds: int, setting: str, threads: int, tolerance: float,
                echo: bool) -> list[tuple[int, int, float]]:
    """Walk (or resume) in ``root`` under ``setting`` for ``rounds`` rounds; (round, stage, largest
    change) of each."""
    saved = {name: getattr(walk, name) for name in ("WALK_CHASE_ROUNDS", "WALK_EVAL_MOST", "WALK_HOT_GREEDY")}
    saved_share = checkpoint.CHECKPOINT_SHARE
    for name, value in SETTINGS[setting].items():
        setattr(walk, name, value)
    checkpoint.CHECKPOINT_SHARE = math.inf  # a checkpoint every round, however cheap, to fork from
    out: list[tuple[int, int, float]] = []

    def take(line: str) -> None:
        stage = round_stage(line)
        if stage < 0:
            return
        if echo:
            print(f"[{setting}] {line}", flush=True)
        out.append((int(line.split()[1]), stage, float(ROUND.match(line).group("change"))))  # type: ignore[union-attr]
        if len(out) >= rounds:
            raise Enough

    try:
        solve_values(kernel(options), root, options.header(), tolerance=tolerance, threads=threads,
                     graph="regenerate", log=take)
    except Enough:
        pass
    finally:
        for name, value in saved.items():
            setattr(walk, name, value)
        checkpoint.CHECKPOINT_SHARE = saved_share
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pieces", type=int, default=4)
    ap.add_argument("--board", type=Path, help="a board file (default: the real board)")
    ap.add_argument("--fork-at", type=int, default=10, metavar="N", help="the round after which the copies start")
    ap.add_argument("--rounds", type=int, default=6, help="rounds each setting runs after the fork")
    ap.add_argument("--settings", nargs="+", choices=tuple(SETTINGS), default=list(SETTINGS))
    ap.add_argument("--tolerance", type=float, default=1e-5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--verbose", action="store_true", help="print the rounds as they go")
    ap.add_argument("--json", action="store_true", help="one JSON line a setting")
    a = ap.parse_args()
    if a.fork_at < 1 or a.rounds < 1:
        ap.error("--fork-at and --rounds must be 1 or more")
    if a.board is not None and not a.board.is_file():
        ap.error(f"--board: {a.board} is not a file")
    options = UrOptions(pieces=a.pieces, board_file=None if a.board is None else str(a.board))
    with tempfile.TemporaryDirectory() as d:
        first = walk_rounds(options, Path(d) / "first", a.fork_at, "top-up", a.threads, a.tolerance, a.verbose)
        if len(first) < a.fork_at:
            ap.exit(1, f"the walk ended after {len(first)} rounds, before round {a.fork_at}\n")
        fork_stage = first[-1][1]
        before = [c for _, s, c in first if s == fork_stage]
        for setting in a.settings:
            root = Path(d) / setting
            shutil.copytree(Path(d) / "first", root)
            (root / ".solving.lock").unlink(missing_ok=True)
            got = walk_rounds(options, root, a.rounds, setting, a.threads, a.tolerance, a.verbose)
            smallest, new = min(before), 0
            for _, stage, change in got:
                if stage == fork_stage and change < smallest:
                    smallest, new = change, new + 1
            row = {"pieces": a.pieces, "setting": setting, "fork_at": a.fork_at, "stage": fork_stage,
                   "smallest_before": min(before), "rounds": [r for r, _, _ in got],
                   "stages": [s for _, s, _ in got], "changes": [c for _, _, c in got], "new_smallest": new}
            if a.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"K={a.pieces} {setting} after round {a.fork_at} (stage {fork_stage}, smallest change before "
                      f"{min(before):.3g}): " + ", ".join(f"{c:.3g}" for c in row["changes"])
                      + f"; {new} new smallest", flush=True)


if __name__ == "__main__":
    main()
