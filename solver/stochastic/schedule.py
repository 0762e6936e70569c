"""The discount schedules of the dice-game solves, in one place: the walk's stages (``WALK_DISCOUNTS``)
and where each ends, the plain sweeps' and the repairs' stages (``DISCOUNTS``), the stages of
checkpoints written before checkpoints named theirs, and the methods, value types and tolerances
a solve accepts. ``walk_stage`` maps a checkpoint's stage into the current schedule.
"""
from __future__ import annotations

import os
from typing import Any

from gamesolver.solver.errors import InputError


DEFAULT_TOLERANCE = 1e-6
MIN_TOLERANCE = 2.5e-7  # two float32 ulps at 1: two threads can flip a value by that much for ever
DTYPES = ("float32", "float64")
METHODS = ("walk", "sweeps")
WALK_STAGE_FACTOR = 10  # a discounted stage of the walk ends at a change of tolerance / this
# ... except the stages before the last discounted one, which end at a change of their entry here
# (when larger; 0: every stage to tolerance / 10; a single number: the same for each): the next
# stage's first sweeps move values by 0.03-0.2 (after the first) and 1e-3 to 6e-3 (after the
# second) anyway. The first stage ends at 3e-2 and the second at 1e-3 (the environment's
# SOLVER_WALK_AIMS sets them for a run: ``early_aims``): on K = 4, regenerating,
# 34.7 full-sweep equivalents generated against 36.6 ending the first at 1e-2 (three runs against
# seven) and 42.6 ending both at 1e-4, the tables as near the proof; ending the first at 1e-1
# generated 33.2 but left the test board's values 4.5 times farther from a tight solve (9.7e-5
# against 2.1e-5, with an undiscounted stage that only polished: 6.0e-6 since it evaluates while
# far from its aim, walk.WALK_TAIL_FULL_ABOVE); docs/design/walk.md, "Coarser early stages". Seven pieces' first stage falls by
# about 0.9 a dear round, so its aim's every factor of three is some ten of them. (Once tried only
# on engines that find their own hot sets, a GPU's: a CPU solve to 3e-7 with an early aim had hung
# in its undiscounted stage, on a value flipping sign, damped since: Flip.)
WALK_EARLY_AIM: float | tuple[float, ...] = (3e-2, 1e-3)
DISCOUNTS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6)  # 1 - discount, stage by stage
# the walk's discounted stages (a checkpoint names them): on K = 4 of the fort rules, 1e-2, 1e-4,
# 1e-6 took 111-117 full sweeps against 205 for every power of ten, to the same values within
# 2.2e-4; ending at 1e-5 instead left values up to 4.4e-3 away (docs/design/walk.md, "Three discount stages")
WALK_DISCOUNTS = (1e-2, 1e-4, 1e-6)
FIRST_WALK_DISCOUNTS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6)  # the walk's stages before checkpoints named them


AIMS_ENV = "SOLVER_WALK_AIMS"  # the early stages' aims for one run: "3e-2,1e-2" (``early_aims``)


def early_aims() -> tuple[float, ...]:
    """The walk's early stages' aims for this run: the environment's SOLVER_WALK_AIMS where set (one
    number, or one a stage separated by commas, each from 0 to 1), else WALK_EARLY_AIM. A long solve
    whose rounds cost half an hour can end its second stage at 1e-2 (docs/design/walk.md, "Coarser
    early stages"), resumed with the same command. Any other value is an ``InputError``."""
    given = os.environ.get(AIMS_ENV, "").strip()
    if not given:
        return WALK_EARLY_AIM if isinstance(WALK_EARLY_AIM, tuple) else (WALK_EARLY_AIM,)
    try:
        aims = tuple(float(part) for part in given.split(","))
    except ValueError:
        aims = ()
    if not aims or not all(0 <= a < 1 for a in aims):
        raise InputError(f"{AIMS_ENV} must be the early stages' aims, numbers from 0 to below 1 separated by "
                         f"commas (e.g. 3e-2,1e-2); got {given!r}")
    return aims


def early_aim(stage: int, aims: tuple[float, ...] | None = None) -> float:
    """Where the walk's discounted stage ``stage`` ends when it is not the last discounted one: its
    entry in ``aims`` (default ``early_aims()``; its last entry past its end)."""
    aims = early_aims() if aims is None else aims
    return float(aims[min(stage, len(aims) - 1)])


def stage_end(stage: int, tolerance: float, early: bool = True, aims: tuple[float, ...] | None = None) -> float:
    """The largest change at which the walk's stage ``stage`` ends (WALK_DISCOUNTS, then the
    undiscounted stage, which ends at a residual below ``tolerance``): the early stages at their
    aim (``early_aim``, from ``aims``), the last discounted one at tolerance / WALK_STAGE_FACTOR; with
    ``early`` False (a repair's walk, which must reach each discounted game's value) every
    discounted stage there."""
    aim = tolerance / WALK_STAGE_FACTOR
    if early and stage < len(WALK_DISCOUNTS) - 1:
        return max(aim, early_aim(stage, aims))
    return aim if stage < len(WALK_DISCOUNTS) else tolerance


def stage_words(gap: float, ends: float | None = None) -> str:
    """A walk stage in words, for its log and a solve's status: its 1 - discount (``gap``; 0: the
    undiscounted stage) and, where given, where it ends (``stage_end``)."""
    if not gap:
        return "undiscounted" + ("" if ends is None else f", ends at a residual below {ends:g}")
    return f"1 - discount {gap:g}" + ("" if ends is None else f", ends at a change below {ends:g}")


def walk_stage(info: dict[str, Any]) -> int:
    """A walk checkpoint's stage in the current schedule (WALK_DISCOUNTS): where the schedule it was
    written under differs, the first of the current stages that discounts no more than its stage did,
    so a resumed walk never goes back to a stronger discount."""
    stage = int(info.get("stage", 0))
    then = tuple(float(d) for d in info.get("discounts", FIRST_WALK_DISCOUNTS))
    if then == tuple(WALK_DISCOUNTS):
        return stage
    d = then[stage] if stage < len(then) else 0.0
    return next((i for i, e in enumerate(WALK_DISCOUNTS) if e <= d), len(WALK_DISCOUNTS))
