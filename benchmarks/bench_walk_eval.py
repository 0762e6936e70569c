"""How the walk's top-up of policy sweeps (``walk.WALK_EVAL_MOST``, ``evaluate_policy``) changes its rounds:
the fort rules solved from empty folders, regenerating on the CPU engine as seven pieces solve (two
threads, the skip on), once for each value of WALK_EVAL_MOST given, one after another. A value is
how many policy sweeps of every state a discounted round makes in all at least (0: none beyond
the hot round's own five or six: the walk before the top-up).

The work is priced as a seven-piece solve pays it: the full-sweep equivalents the full sweeps
generated, plus every policy sweep of every state (the hot sets' states and the states the skip
backed up from their policy rows counted at the same rate) at ``--price`` of a full sweep (1/95
by default, the seven-piece solve's log: a regenerating full sweep 370-450 s, a policy sweep of
every state about 4.5 s, two threads).

    python benchmarks/bench_walk_eval.py --pieces 4 --most 0 20
    python benchmarks/bench_walk_eval.py --pieces 4 --most 0 20 30 50 --json
    python benchmarks/bench_walk_eval.py --pieces 4 --most 20 --chase 0 4

``--chase R ...``: each value of WALK_EVAL_MOST is solved once for each ``walk.WALK_CHASE_ROUNDS``
given (0: the top-up in every round; R: none while the last R rounds set no new smallest change,
``walk.chasing``), and the line says in how many discounted rounds the rule held the top-up back.

``--greedy G ...``: each of those solved once for each ``walk.WALK_HOT_GREEDY`` given (0: no greedy
sweeps of the hot set; G: up to G a round), and the line says how many the walk made in all (their
generated states count in the full-sweep equivalents generated).

    python benchmarks/bench_walk_eval.py --pieces 4 --most 20 --greedy 0 100

``--greedy-above X ...``: each of those solved once for each ``walk.WALK_GREEDY_ABOVE`` given (the
smallest largest change of a round's full sweep whose round gets greedy sweeps).

``--greedy-budget B ...``: each of those solved once for each ``walk.WALK_GREEDY_BUDGET`` given (the
full sweeps' worth of generation a round's greedy sweeps may make; ``inf``: no budget).

    python benchmarks/bench_walk_eval.py --pieces 4 --most 20 --greedy-above 1e-4 1e-2

One line per solve: full sweeps by discounted stage, policy sweeps of every state, the full-sweep
equivalents generated, the priced work and its ratio to the first value's, seconds and their
ratio, the start's value and the largest and mean distance to the shipped opening file's proven
intervals (four and five pieces).
"""
from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
from bench_walk_skip import proof_distance
from bench_walk_stages import ROUND, round_stage
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import solve
from gamesolver.solver.stochastic import schedule, walk

_ROUND = re.compile(r"sweep \d+ \(1 - discount ([^)]+)\)")
_GREEDY = re.compile(r", with (\d+) greedy sweeps of the hot set")


def held_rounds(lines: list[str], rule: int) -> int:
    """The discounted rounds in which ``walk.chasing`` held the top-up back, from the rounds' largest
    changes stage by stage (a round's own change included, as the walk reads them)."""
    held, stage, changes = 0, -1, []  # type: ignore[var-annotated]
    for line in lines:
        now = round_stage(line)
        if now < 0:
            continue
        if now != stage:
            stage, changes = now, []
        changes.append(float(ROUND.match(line).group("change")))  # type: ignore[union-attr]
        held += stage < len(schedule.WALK_DISCOUNTS) and walk.chasing(changes, rule)
    return held


def run(pieces: int, most: int, tolerance: float, threads: int, price: float, chase: int = walk.WALK_CHASE_ROUNDS,
        greedy: int = walk.WALK_HOT_GREEDY, above: float = walk.WALK_GREEDY_ABOVE,
        budget: float = walk.WALK_GREEDY_BUDGET) -> dict:
    saved = walk.WALK_EVAL_MOST, walk.WALK_CHASE_ROUNDS, walk.WALK_HOT_GREEDY, walk.WALK_GREEDY_ABOVE, walk.WALK_GREEDY_BUDGET
    (walk.WALK_EVAL_MOST, walk.WALK_CHASE_ROUNDS, walk.WALK_HOT_GREEDY, walk.WALK_GREEDY_ABOVE,
     walk.WALK_GREEDY_BUDGET) = most, chase, greedy, above, budget
    options = UrOptions(pieces=pieces)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            lines: list[str] = []
            t0 = time.perf_counter()
            table = solve(options, Path(tmp) / "t", tolerance=tolerance, threads=threads, graph="regenerate",
                          log=lines.append, show_progress=False)
            seconds = time.perf_counter() - t0
            meta = table.header["meta"]
            values = np.array(table.arrays["value"])
    finally:
        (walk.WALK_EVAL_MOST, walk.WALK_CHASE_ROUNDS, walk.WALK_HOT_GREEDY, walk.WALK_GREEDY_ABOVE,
         walk.WALK_GREEDY_BUDGET) = saved
    stages = Counter(m.group(1) for line in lines for m in [_ROUND.match(line)] if m)
    full, cheap, hot = int(meta["sweeps"]), int(meta["policy_sweeps"]), int(meta["hot_set_states"])
    n = values.shape[0]
    # a full sweep generates only the states the skip does not prove unchanged, and backs the
    # others up from their policy rows, at a policy sweep's cost
    # (with the hot sets' greedy sweeps' states, which a seven-piece solve pays as it pays a full sweep's)
    made = meta["full_sweeps_generated"]
    generated = (made["generated_states"] + made.get("greedy_states", 0)) / n
    work = generated + price * (cheap + hot / n + full - generated)
    far = proof_distance(options, values)
    greedy_made = sum(int(m.group(1)) for line in lines for m in [_GREEDY.search(line)] if m)
    return {"most": most, "chase": chase, "held": held_rounds(lines, chase), "greedy": greedy, "above": above,
            "budget": budget, "greedy_states": made.get("greedy_states", 0) / n,
            "greedy_sweeps": greedy_made, "stages": dict(stages), "full_sweeps": full, "policy_sweeps": cheap,
            "hot_states": hot, "generated": generated, "work": work, "seconds": seconds, "start": float(values[0]),
            "proof_largest": None if far is None else far[0], "proof_mean": None if far is None else far[1]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pieces", type=int, default=4)
    ap.add_argument("--most", nargs="+", type=int, default=[0, walk.WALK_EVAL_MOST],
                    help="WALK_EVAL_MOST a solve (0: no top-up)")
    ap.add_argument("--tolerance", type=float, default=1e-5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--chase", nargs="+", type=int, default=[walk.WALK_CHASE_ROUNDS],
                    help="walk.WALK_CHASE_ROUNDS a solve, for each --most (0: the top-up in every round)")
    ap.add_argument("--greedy", nargs="+", type=int, default=[walk.WALK_HOT_GREEDY],
                    help="walk.WALK_HOT_GREEDY a solve, for each of the above (0: no greedy sweeps of the hot set)")
    ap.add_argument("--greedy-above", nargs="+", type=float, default=[walk.WALK_GREEDY_ABOVE],
                    help="walk.WALK_GREEDY_ABOVE a solve, for each of the above (the smallest full sweep's change "
                         "whose round gets greedy sweeps)")
    ap.add_argument("--greedy-budget", nargs="+", type=float, default=[walk.WALK_GREEDY_BUDGET],
                    help="walk.WALK_GREEDY_BUDGET a solve, for each of the above (full sweeps' worth of greedy "
                         "sweeps a round at most; inf: no budget)")
    ap.add_argument("--price", type=float, default=1 / 95, help="a policy sweep of every state, in full sweeps")
    ap.add_argument("--json", action="store_true", help="one JSON line a solve")
    a = ap.parse_args()
    if min(a.chase) < 0 or min(a.most) < 0 or min(a.greedy) < 0 or min(a.greedy_above) < 0 or min(a.greedy_budget) < 0:
        ap.error("--most, --chase, --greedy, --greedy-above and --greedy-budget must be 0 or more")
    first = None
    for most, chase, greedy, above, budget in [(m, c, g, x, b) for m in a.most for c in a.chase for g in a.greedy
                                               for x in a.greedy_above for b in a.greedy_budget]:
        r = run(a.pieces, most, a.tolerance, a.threads, a.price, chase, greedy, above, budget)
        first = first or r
        if a.json:
            print(json.dumps(r), flush=True)
            continue
        stages = ", ".join(f"{n}" for n in r["stages"].values())
        far = "" if r["proof_largest"] is None else \
            f"; to the proof {r['proof_largest']:.2g} (mean {r['proof_mean']:.2g})"
        print(f"most {r['most']}, chase rule {r['chase']} ({r['held']} rounds held back), greedy {r['greedy']} "
              f"above {r['above']:g}, budget {r['budget']:g} "
              f"({r['greedy_sweeps']} made, {r['greedy_states']:.1f} full sweeps' worth): {r['full_sweeps']} full sweeps ({stages}), {r['policy_sweeps']} policy sweeps, "
              f"{r['generated']:.1f} generated, priced work {r['work']:.1f} ({r['work'] / first['work']:.2f}x), "
              f"{r['seconds']:.1f} s ({r['seconds'] / first['seconds']:.2f}x), start {r['start']:+.7f}{far}",
              flush=True)


if __name__ == "__main__":
    main()
