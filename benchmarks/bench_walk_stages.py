"""How the walk's early stages' aim changes its rounds: the fort rules solved from empty folders
with ``schedule.WALK_EARLY_AIM`` set to each value given (0: every discounted stage runs down to
tolerance / 10, the walk before it had an early aim), one solve each, one after another, on the GPU
(``--backend gpu``, its stored graph where it fits; ``--target cpu``: its logic on numba's CPU JIT)
or the CPU engine (two threads; a stored graph, or ``--graph regenerate``: full sweeps that
regenerate every state's outcomes except those the skip proves unchanged, as seven pieces solve).
The early aim applies on every engine (for a while it applied only on the GPU's, until a value
flipping sign in the undiscounted stage was found and damped: docs/design/walk.md, "A value that
flips sign every sweep"). An aim ``A,B`` ends the first stage at A and the second at B.

    python benchmarks/bench_walk_stages.py --pieces 4 --aims 0 1e-4
    python benchmarks/bench_walk_stages.py --pieces 4 --graph regenerate --aims 1e-4 1e-2,1e-4
    python benchmarks/bench_walk_stages.py --pieces 5 --aims 0/host 1e-4/device --backend gpu --json
    python benchmarks/bench_walk_stages.py --pieces 5 --aims 1e-4 --flip-rounds 3 0 --backend gpu

``--flip-rounds``: each aim is solved once for each value of ``walk.WALK_FLIP_ROUNDS`` given (0:
no damped sweeps; see ``Flip`` in solver/stochastic/walk.py and docs/design/walk.md, "A value that flips sign
every sweep").

``--last-factor F ...`` and ``--tail T ...``: each solve is run again for every value of
``schedule.WALK_STAGE_FACTOR`` (the last discounted stage ends at a change of tolerance / F; 0.1
ends it at ten times the tolerance, as a stall rule that cuts the stage short leaves it) and of
``walk.WALK_TAIL_FULL_ABOVE`` (0: the undiscounted stage's rounds polish; T: they evaluate as the
discounted stages' do while their change is above T times the tolerance).

    python benchmarks/bench_walk_stages.py --pieces 4 --graph regenerate --aims 3e-2,1e-3 --last-factor 10 0.1 --tail 0 10

``--until-stage N`` stops each walk at the first round of stage N (numbered from 0) and reports the
rounds before it, the full-sweep equivalents they generated and their seconds, and how far stage
N's first round moved the values: the early stages of a large board without its long last ones
(``bench_first_aim.py`` compares first-stage aims on one shared start).

    python benchmarks/bench_walk_stages.py --pieces 4 --graph regenerate --aims 3e-2,1e-3 1e-1,1e-3 --until-stage 2

On the GPU an aim may name where the walk's hot sets are found: ``/device`` (``GpuEngine.hot_set``,
the default) or ``/host`` (the marks copied to the host and scanned there, as before it).

One line per solve: full sweeps in each stage (by its 1 - discount) and, regenerating, the
full-sweep equivalents they generated, policy sweeps, the hot sets'
states, seconds, the start's value, the largest difference from the first solve's values, the
largest and mean distance to the shipped opening file's proven intervals (where a proven file is
shipped: four and five pieces), and the ratio of full sweeps and of seconds to the first solve's.
The largest change's tail in a GPU's first stage fell by 0.932 a round (0.99 ** 7: a full sweep
and six policy sweeps, the discount's own rate) for 40 rounds after the CPU would have stopped
(docs/design/walk.md, "Fewer rounds on the GPU: the early aim").
"""
from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_walk_skip import proof_distance
from gamesolver.games.ur import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import gpu_engine
from gamesolver.solver.backends.gpu import driver as gpu
from gamesolver.solver.stochastic import schedule
from gamesolver.solver.stochastic import walk
from gamesolver.solver.stochastic.iteration import solve_values


def run(pieces: int, aim: float | tuple[float, ...], hot: str, tolerance: float, threads: int, backend: str,
        target: str = "cuda", flip: int = walk.WALK_FLIP_ROUNDS, graph: str = "store",
        factor: float = schedule.WALK_STAGE_FACTOR, tail: float = walk.WALK_TAIL_FULL_ABOVE,
        until: int | None = None) -> tuple[dict, np.ndarray | None]:
    options = UrOptions(pieces=pieces)
    game = kernel(options)
    schedule.WALK_EARLY_AIM = aim
    schedule.WALK_STAGE_FACTOR = factor
    walk.WALK_FLIP_ROUNDS = flip
    walk.WALK_TAIL_FULL_ABOVE = tail
    gpu.GpuEngine.device_hot_sets = hot == "device"
    lines: list[str] = []

    def take(line: str) -> None:
        lines.append(line)
        if until is not None and round_stage(line) >= until:
            raise StagesDone

    engine = gpu_engine(options, target=target) if backend == "gpu" else None
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        try:
            res = solve_values(game, Path(d) / "t", options.header(), tolerance=tolerance, threads=threads,
                               graph=graph, log=take, engine=engine)
        except StagesDone:
            return (stages_row(pieces, graph, aim, until, lines, time.perf_counter() - t0), None)
    seconds = time.perf_counter() - t0
    stages: dict[str, int] = {}
    for line in lines:
        if line.startswith("sweep") and "largest change" in line:
            d = line.split("(1 - discount ")[1].split(")")[0] if "(1 - discount" in line else "0"
            stages[d] = stages.get(d, 0) + 1
    generated = res.meta.get("full_sweeps_generated", {}).get("generated_states") if graph == "regenerate" else None
    return ({"pieces": pieces, "backend": backend, "graph": graph, "early_aim": aim, "hot_sets": hot if backend == "gpu" else "host",
             "flip_rounds": flip, "damped_sweeps": sum(" damped:" in line for line in lines),
             "last_factor": factor, "tail": tail, "endless_repairs": res.meta.get("endless_repairs", 0),
             "subset_pieces": gpu.SUBSET_PIECES, "seconds": round(seconds, 1),
             "full_sweeps": res.meta["sweeps"], "stages": stages,
             "generated": None if generated is None else round(generated / game.total, 1), "policy_sweeps": res.meta["policy_sweeps"],
             "hot_set_states": res.meta["hot_set_states"], "start": float(res.values[0]),
             "proof": proof_distance(options, res.values)},
            np.asarray(res.values, dtype=np.float64))


class StagesDone(Exception):
    """Raised from the walk's log at the first round of the stage ``--until-stage`` names."""


ROUND = re.compile(r"^sweep \d+ \((?:1 - discount (?P<gap>[0-9.e+-]+)|undiscounted)\)(?: damped)?: largest change (?P<change>[0-9.e+-]+) "
                   r"\(full sweep (?P<full>[0-9.]+) s(?:, (?P<share>[0-9.]+)% generated)?(?:, policy sweeps (?P<policy>[0-9.]+) s)?")


def round_stage(line: str) -> int:
    """The walk stage (an index into schedule.WALK_DISCOUNTS; their count: the undiscounted stage)
    of a round's log line, -1 for any other line."""
    m = ROUND.match(line)
    if m is None:
        return -1
    gap = m.group("gap")
    return len(schedule.WALK_DISCOUNTS) if gap is None or float(gap) == 0 else min(
        range(len(schedule.WALK_DISCOUNTS)), key=lambda i: abs(schedule.WALK_DISCOUNTS[i] - float(gap)))


def rounds_summary(lines: list[str], until: int, graph: str) -> dict:
    """The rounds of a walk stopped at the first round of stage ``until`` (its log lines): the rounds
    before it by stage, the full-sweep equivalents they generated (regenerating), their full and
    policy sweeps' seconds, and the largest change of stage ``until``'s first round (how far the
    next stage starts)."""
    rounds = [(stage, ROUND.match(line)) for line in lines for stage in [round_stage(line)] if stage >= 0]
    before = [m for stage, m in rounds if stage < until]
    by_stage: dict[str, int] = {}
    for stage, _ in rounds[:-1]:
        key = f"{schedule.WALK_DISCOUNTS[stage]:g}"
        by_stage[key] = by_stage.get(key, 0) + 1
    return {"full_sweeps": len(before), "stages": by_stage,
            "generated": round(sum(float(m.group("share") or 100) for m in before) / 100, 1) if graph == "regenerate" else None,
            "full_seconds": round(sum(float(m.group("full")) for m in before), 1),
            "policy_seconds": round(sum(float(m.group("policy") or 0) for m in before), 1),
            "next_stage_first_change": float(rounds[-1][1].group("change"))}  # type: ignore[union-attr]


def stages_row(pieces: int, graph: str, aim: float | tuple[float, ...], until: int, lines: list[str],
               seconds: float) -> dict:
    """What a walk stopped at the first round of stage ``until`` did before it (``rounds_summary``)."""
    return {"pieces": pieces, "graph": graph, "early_aim": aim, "until_stage": until,
            **rounds_summary(lines, until, graph), "seconds": round(seconds, 1)}


def aim_text(aim: float | tuple[float, ...]) -> str:
    return ",".join(f"{x:g}" for x in aim) if isinstance(aim, tuple) else f"{aim:g}"


def warm_up(pieces: int, target: str) -> None:
    """Compile the GPU engine's kernels for this K before the first timed solve (numba compiles a
    kernel at its first launch: some 20-40 s, which would fall to whichever solve ran first)."""
    options = UrOptions(pieces=pieces)
    with gpu_engine(options, target=target, graph="store") as eng:
        V = np.zeros(eng.n, dtype=np.float32)
        eng.sweep(V, policy=V, discount=0.99)
        eng.evaluate(None, V, discount=0.99)
        eng.hot_set(None, V, discount=0.99, above=0.0, most=eng.n)
        eng.evaluate(None, V, discount=0.99, mark=np.zeros(eng.n, dtype=np.uint8), subset=np.arange(3))
        eng.endless_pass(V, np.zeros(eng.n, dtype=np.uint8), 1e-4, first=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pieces", type=int, default=3)
    ap.add_argument("--aims", nargs="+", default=["0", "1e-4"],
                    help="AIM or AIM/host or AIM/device (GPU); AIM may be one aim a stage, A,B: the first "
                         "stage ends at A, the second at B (schedule.WALK_EARLY_AIM as a tuple)")
    ap.add_argument("--graph", choices=("store", "regenerate"), default="store",
                    help="the CPU engine's outcomes: a stored graph, or regenerated by every full sweep "
                         "(which then skips what cannot change, and the line gives the full-sweep "
                         "equivalents it generated)")
    ap.add_argument("--tolerance", type=float, default=1e-5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--backend", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--subset-pieces", type=int, default=gpu.SUBSET_PIECES,
                    help="the GPU's launches a subset sweep at least (solver.backends.gpu.driver.SUBSET_PIECES)")
    ap.add_argument("--target", choices=("cuda", "cpu"), default="cuda",
                    help="the GPU engine's kernels on the device, or on numba's CPU JIT (to try this script)")
    ap.add_argument("--flip-rounds", nargs="+", type=int, default=[walk.WALK_FLIP_ROUNDS],
                    help="walk.WALK_FLIP_ROUNDS for each aim in turn (0: no damped sweeps; "
                         f"default {walk.WALK_FLIP_ROUNDS})")
    ap.add_argument("--last-factor", nargs="+", type=float, default=[schedule.WALK_STAGE_FACTOR],
                    help="values of schedule.WALK_STAGE_FACTOR to solve with (default: the walk's)")
    ap.add_argument("--tail", nargs="+", type=float, default=[walk.WALK_TAIL_FULL_ABOVE],
                    help="values of walk.WALK_TAIL_FULL_ABOVE to solve with (default: the walk's)")
    ap.add_argument("--until-stage", type=int, metavar="N",
                    help="stop each walk at the first round of stage N (1: the second discounted stage; "
                         "the stages are numbered from 0) and report what the stages before it did: their "
                         "rounds, full-sweep equivalents generated and seconds, and how far stage N's first "
                         "round moved the values")
    ap.add_argument("--keep", type=Path, help="a folder to keep each solve's values in (AIM-HOT-FLIP.npy)")
    ap.add_argument("--json", action="store_true", help="one JSON line a solve")
    a = ap.parse_args()
    if a.subset_pieces < 1:
        ap.error("--subset-pieces must be 1 or more")
    gpu.SUBSET_PIECES = a.subset_pieces
    runs = []
    for text in a.aims:
        aim, _, hot = text.partition("/")
        try:
            each = tuple(float(x) for x in aim.split(","))
        except ValueError:
            ap.error(f"--aims: {text!r} is no number; expected AIM, AIM/host or AIM/device (AIM: A or A,B,...)")
        value: float | tuple[float, ...] = each[0] if len(each) == 1 else each
        if min(each) < 0 or hot not in ("", "host", "device"):
            ap.error(f"--aims: {text!r}; expected AIM >= 0, optionally /host or /device")
        runs.extend((value, hot or "device", flip, factor, tail) for flip in a.flip_rounds
                    for factor in a.last_factor for tail in a.tail)
    if a.until_stage is not None and not 1 <= a.until_stage <= len(schedule.WALK_DISCOUNTS):
        ap.error(f"--until-stage must be 1 to {len(schedule.WALK_DISCOUNTS)} (the stages are numbered from 0)")
    if min(a.flip_rounds) < 0:
        ap.error("--flip-rounds must be 0 or more")
    if min(a.last_factor) <= 0 or min(a.tail) < 0:
        ap.error("--last-factor must be above 0 and --tail 0 or more")
    if a.backend == "gpu":
        warm_up(a.pieces, a.target)
    first: tuple[dict, np.ndarray] | None = None
    for aim, hot, flip, factor, tail in runs:
        row, values = run(a.pieces, aim, hot, a.tolerance, a.threads, a.backend, a.target, flip, a.graph, factor, tail,
                          a.until_stage)
        if values is None:
            print(json.dumps(row) if a.json else
                  f"K={a.pieces} {a.backend} ({a.graph}) early aim {aim_text(aim)}, stopped at stage {a.until_stage}'s "
                  f"first round: {row['full_sweeps']} full sweeps before it {row['stages']}"
                  + ("" if row["generated"] is None else f" ({row['generated']} generated)")
                  + f", full sweeps {row['full_seconds']} s, policy sweeps {row['policy_seconds']} s; stage "
                  f"{a.until_stage}'s first round changed {row['next_stage_first_change']:.3g}; {row['seconds']} s",
                  flush=True)
            continue
        name = aim_text(aim)
        if a.keep is not None:
            a.keep.mkdir(parents=True, exist_ok=True)
            np.save(a.keep / f"{name}-{row['hot_sets']}-{flip}-{factor:g}-{tail:g}.npy", values.astype(np.float32))
        if first is None:
            first = (row, values)
        base = first[0]
        row["max_diff_from_first"] = float(np.abs(values - first[1]).max())
        row["full_sweeps_ratio"] = round(row["full_sweeps"] / base["full_sweeps"], 3)
        row["seconds_ratio"] = round(row["seconds"] / base["seconds"], 3)
        if a.json:
            print(json.dumps(row), flush=True)
        else:
            print(f"K={a.pieces} {a.backend} ({a.graph}) early aim {name} ({row['hot_sets']} hot sets, flip rounds {flip}, "
                  f"{row['damped_sweeps']} damped; last stage to tolerance / {factor:g}, tail {tail:g}, "
                  f"{row['endless_repairs']} repairs): "
                  f"{row['full_sweeps']} full sweeps {row['stages']}"
                  + ("" if row["generated"] is None else f" ({row['generated']} generated)")
                  + f", {row['policy_sweeps']} policy sweeps, {row['hot_set_states']:,} hot-set states, {row['seconds']} s, "
                  f"start {row['start']:+.7f}; x{row['full_sweeps_ratio']} sweeps, x{row['seconds_ratio']} time, "
                  f"values within {row['max_diff_from_first']:.2g} of the first"
                  + ("" if row["proof"] is None else
                     f", distance to the proof {row['proof'][0]:.2g} (mean {row['proof'][1]:.2g})"), flush=True)


if __name__ == "__main__":
    main()
