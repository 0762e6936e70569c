"""The walk's undiscounted stage where the last discounted one ended far from its aim
(walk.WALK_TAIL_FULL_ABOVE): its rounds sweep their policy as the discounted stages' do while the
change is above that many tolerances, then polish, and the walk reaches the same values."""
from __future__ import annotations

import re

import numpy as np

from gamesolver.games.ur import kernel
from gamesolver.solver.stochastic import schedule, walk
from gamesolver.solver.stochastic.iteration import solve_values
from tests.test_ur_reference import mini_options

LINE = re.compile(r"sweep (\d+) \(1 - discount ([^)]+)\): largest change (\S+) .*policy sweeps [\d.]+ s \((\d+) of every "
                  r"state, the last changing (\S+)\)")
TOLERANCE = 3e-7


def _walk(tmp_path, name: str, monkeypatch, tail: float):
    # the last discounted stage ends at ten times the tolerance instead of a tenth of it, as a stall
    # rule that cuts the stage short leaves it: the undiscounted stage starts far from its aim
    monkeypatch.setattr(schedule, "WALK_STAGE_FACTOR", 0.1)
    monkeypatch.setattr(walk, "WALK_TAIL_FULL_ABOVE", tail)
    o = mini_options(tmp_path, 4)
    said: list[str] = []
    res = solve_values(kernel(o), tmp_path / name, o.header(), tolerance=TOLERANCE, threads=1, log=said.append,
                       graph="regenerate")
    # the undiscounted stage's rounds that swept their policy: (largest change, policy sweeps)
    tail_rounds = [(float(m.group(3)), int(m.group(4))) for line in said for m in [LINE.match(line)]
                   if m and float(m.group(2)) == 0]
    return res, tail_rounds


def test_the_undiscounted_stage_evaluates_while_far_from_its_aim(tmp_path, monkeypatch) -> None:
    polish, polish_rounds = _walk(tmp_path, "polish", monkeypatch, 0.0)
    full, full_rounds = _walk(tmp_path, "full", monkeypatch, 1.0)
    assert polish_rounds and full_rounds
    # polishing: never more than WALK_POLISH_SWEEPS a round
    assert max(n for _, n in polish_rounds) <= walk.WALK_POLISH_SWEEPS
    # evaluating: a round whose full sweep changed a value by more than the tolerance sweeps its
    # policy past the polish (the hot round and the top-up), unless a sweep got below the floor first
    far = [n for change, n in full_rounds if change > TOLERANCE]
    assert far and max(far) > walk.WALK_POLISH_SWEEPS
    assert all(n <= walk.WALK_POLISH_SWEEPS for change, n in full_rounds if change <= TOLERANCE)
    # the same game's values, each table passing the endless check
    for res in (polish, full):
        assert res.meta["endless_check"]["flagged"] == 0 and res.meta["residual"] < TOLERANCE
    assert np.abs(full.values - polish.values).max() < 1e-5 and np.abs(polish.values).max() > 0.1


def test_the_swapped_board_needs_no_more_repairs_with_it(tmp_path, monkeypatch) -> None:
    """The swapped test board's walk (one thread, the early aims) ends on a false solution: with the
    undiscounted stage polishing, two local repairs do not mend it and the walk goes again (three
    repairs); evaluating while far from the aim, it needs no more, and the values are the same."""
    monkeypatch.setattr(schedule, "WALK_EARLY_AIM", (3e-2, 1e-3))
    o = mini_options(tmp_path, 4, swapped=True)
    runs = {}
    for tail in (0.0, 1.0):
        monkeypatch.setattr(walk, "WALK_TAIL_FULL_ABOVE", tail)
        runs[tail] = solve_values(kernel(o), tmp_path / f"t{tail:g}", o.header(), tolerance=1e-6, threads=1)
    assert runs[0.0].meta["endless_repairs"] == 3
    assert runs[1.0].meta["endless_repairs"] <= runs[0.0].meta["endless_repairs"]
    for res in runs.values():
        assert res.meta["endless_check"]["flagged"] == 0
    assert np.abs(runs[1.0].values - runs[0.0].values).max() < 1e-5
