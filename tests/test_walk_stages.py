"""The walk's stages: the discounted stages before the last end at their WALK_EARLY_AIM, the last one and
the undiscounted stage at the tolerance's own aims (solver/stochastic/iteration.py, ``_walk``)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from gamesolver.games.ur import kernel
from gamesolver.games.ur.solve import gpu_engine
from gamesolver.solver.stochastic import schedule, walk
from gamesolver.solver.stochastic.iteration import solve_values
from tests.test_ur_reference import mini_options

LINE = re.compile(r"sweep \d+(?: \(1 - discount ([^)]+)\))?(?: damped)?: largest change (\S+)")


def stages(lines: list[str]) -> dict[str, list[float]]:
    """Each stage's largest changes, round by round, from the walk's log (key: 1 - discount)."""
    got: dict[str, list[float]] = {}
    for line in lines:
        m = LINE.match(line)
        if m:
            got.setdefault(m.group(1) or "0", []).append(float(m.group(2)))
    return got


@pytest.mark.parametrize("engine", ["cpu", "gpu-logic"])
def test_early_stages_end_at_the_early_aim_and_the_last_at_a_tenth_of_the_tolerance(tmp_path, monkeypatch,
                                                                                     engine) -> None:
    """On the CPU engine and on the GPU engine's logic (numba's CPU target, which finds its own hot
    sets); an earlier version had the early aim applied only to the second."""
    o = mini_options(tmp_path, 4)
    game = kernel(o)
    first, second = schedule.early_aim(0), schedule.early_aim(1)
    # the defaults (the GPU's five pieces: 105 full sweeps against 169 without; stages to 3e-2 and
    # 1e-3: four pieces regenerating, 0.81x the full sweeps' generation of both to 1e-4)
    assert first >= 1e-3 and second >= 1e-4

    def walk(name: str) -> tuple[object, dict[str, list[float]]]:
        said: list[str] = []
        res = solve_values(game, tmp_path / name, o.header(), tolerance=1e-5, threads=1, log=said.append,
                           engine=None if engine == "cpu" else gpu_engine(o, target="cpu"))
        return res, stages(said)

    new, new_stages = walk("default")
    monkeypatch.setattr(schedule, "WALK_EARLY_AIM", 0.0)  # every discounted stage to tolerance / 10
    old, old_stages = walk("without")
    # without an early aim the first stage runs on below a tenth of the tolerance; with one it stops
    # at the first round that changed nothing by 1e-4, well above that
    assert old_stages["0.01"][-1] < 1e-6
    assert 1e-6 < new_stages["0.01"][-1] < first and min(new_stages["0.01"][:-1]) >= first
    assert len(new_stages["0.01"]) < len(old_stages["0.01"])
    # the middle stage likewise; the last discounted stage still ends below tolerance / 10, as before
    assert new_stages["0.0001"][-1] < second and min(new_stages["0.0001"][:-1]) >= second
    assert new_stages["1e-06"][-1] < 1e-6 and old_stages["1e-06"][-1] < 1e-6
    assert new.meta["sweeps"] < old.meta["sweeps"]
    # the same game's values, both checked against endless play
    assert new.meta["endless_check"]["flagged"] == old.meta["endless_check"]["flagged"] == 0
    assert np.abs(new.values - old.values).max() < 1e-5 and np.abs(old.values).max() > 0.1


def test_early_aim_per_stage(monkeypatch) -> None:
    """A tuple gives each early stage its own aim, its last entry for any later one."""
    monkeypatch.setattr(schedule, "WALK_EARLY_AIM", 1e-4)
    assert [schedule.early_aim(s) for s in range(3)] == [1e-4, 1e-4, 1e-4]
    monkeypatch.setattr(schedule, "WALK_EARLY_AIM", (1e-2, 1e-3))
    assert [schedule.early_aim(s) for s in range(3)] == [1e-2, 1e-3, 1e-3]


def test_each_early_stage_ends_at_its_own_aim(tmp_path, monkeypatch) -> None:
    """With one aim a stage, the first stage stops at the first round below its own (coarser) aim
    and the second at its own, and the walk reaches the same game's values."""
    o = mini_options(tmp_path, 4)
    game = kernel(o)
    first, second = 3e-3, 1e-4
    monkeypatch.setattr(schedule, "WALK_EARLY_AIM", (first, second))
    said: list[str] = []
    res = solve_values(game, tmp_path / "each", o.header(), tolerance=1e-5, threads=1, log=said.append)
    got = stages(said)
    assert got["0.01"][-1] < first <= min(got["0.01"][:-1])
    assert got["0.0001"][-1] < second <= min(got["0.0001"][:-1])
    assert got["1e-06"][-1] < 1e-6
    monkeypatch.setattr(schedule, "WALK_EARLY_AIM", 0.0)
    ref = solve_values(game, tmp_path / "ref", o.header(), tolerance=1e-5, threads=1)
    assert res.meta["endless_check"]["flagged"] == 0
    assert np.abs(res.values - ref.values).max() < 1e-5 and np.abs(ref.values).max() > 0.1


def test_stage_ends_and_where_a_resumed_walk_goes_on(monkeypatch) -> None:
    """``stage_end`` is what the walk stops each stage at, and the resume line names it."""
    from gamesolver.solver.stochastic.iteration import where_in_walk

    monkeypatch.setattr(schedule, "WALK_EARLY_AIM", (1e-2, 1e-3))
    monkeypatch.setattr(schedule, "WALK_DISCOUNTS", (1e-2, 1e-4, 1e-6))
    assert [schedule.stage_end(s, 1e-5) for s in range(4)] == pytest.approx([1e-2, 1e-3, 1e-6, 1e-5])
    assert schedule.stage_end(1, 1e-1) == 1e-2  # an aim is never below tolerance / 10
    assert where_in_walk(1, 1e-5) == ", in stage 2 of 4 (1 - discount 0.0001, ends at a change below 0.001)"
    assert where_in_walk(3, 1e-5) == ", in stage 4 of 4 (undiscounted, ends at a residual below 1e-05)"


def test_the_early_aims_leave_the_values_as_near_a_tight_solve(tmp_path, monkeypatch) -> None:
    """The first stage's aim trades rounds against where the walk ends within what the tolerance
    allows: on the test board (one thread, tolerance 1e-5) the default aims end as near a solve to
    3e-7 as aims of 1e-2 and 1e-3 do (2.1e-5); a first stage that ends at 1e-1 ended 9.7e-5 away
    while the undiscounted stage only polished, and ends 6.0e-6 away now that its rounds sweep their
    policy as the discounted stages' do until the change is below the tolerance."""
    o = mini_options(tmp_path, 4)
    game = kernel(o)

    def values(name: str, aim, tolerance: float = 1e-5) -> np.ndarray:
        monkeypatch.setattr(schedule, "WALK_EARLY_AIM", aim)
        return solve_values(game, tmp_path / name, o.header(), tolerance=tolerance, threads=1).values.astype(float)

    aims = schedule.WALK_EARLY_AIM
    tight = values("tight", 0.0, 3e-7)
    default = np.abs(values("default", aims) - tight).max()
    finer = np.abs(values("finer", (1e-2, 1e-3)) - tight).max()
    coarse = np.abs(values("coarse", (1e-1, 1e-3)) - tight).max()
    assert default <= 1.01 * finer < 5e-5 and coarse < 5e-5
    monkeypatch.setattr(walk, "WALK_TAIL_FULL_ABOVE", 0.0)  # the undiscounted stage polishing only
    assert np.abs(values("coarse-polished", (1e-1, 1e-3)) - tight).max() > 5e-5


def test_the_environment_sets_a_runs_early_aims_and_its_checkpoints_keep_them(tmp_path, monkeypatch) -> None:
    """SOLVER_WALK_AIMS sets the early stages' aims for one run (a long solve whose rounds cost half
    an hour ends its second stage at 1e-2, resumed with the same command); a bad value is an
    InputError; a checkpoint keeps the aims its run ended the stages at, so a status read where the
    environment does not say them still names where the stage ends."""
    from gamesolver.solver.errors import InputError
    from gamesolver.solver.stochastic import checkpoint

    monkeypatch.delenv(schedule.AIMS_ENV, raising=False)
    assert schedule.early_aims() == schedule.WALK_EARLY_AIM == (3e-2, 1e-3)
    monkeypatch.setenv(schedule.AIMS_ENV, " 3e-2, 1e-2 ")
    assert schedule.early_aims() == (3e-2, 1e-2)
    assert [schedule.stage_end(s, 1e-5) for s in range(3)] == pytest.approx([3e-2, 1e-2, 1e-6])
    monkeypatch.setenv(schedule.AIMS_ENV, "1e-4")
    assert [schedule.early_aim(s) for s in range(3)] == [1e-4] * 3
    for bad in ("abc", "1", "-1e-2", "3e-2,,1e-2", "nan", "inf"):
        monkeypatch.setenv(schedule.AIMS_ENV, bad)
        with pytest.raises(InputError, match=f"SOLVER_WALK_AIMS must be .* got {re.escape(repr(bad))}"):
            schedule.early_aims()

    o = mini_options(tmp_path, 4)
    game = kernel(o)

    def second_stage(name: str) -> list[float]:
        said: list[str] = []
        solve_values(game, tmp_path / name, o.header(), tolerance=1e-5, threads=1, log=said.append)
        return stages(said)["0.0001"]

    monkeypatch.setenv(schedule.AIMS_ENV, "3e-2,1e-2")
    coarse = second_stage("coarse")
    monkeypatch.delenv(schedule.AIMS_ENV)
    fine = second_stage("fine")
    # each ends at the first round below its own aim: the coarser one rounds earlier
    assert coarse[-1] < 1e-2 <= min(coarse[:-1] or [1.0]) and fine[-1] < 1e-3 <= min(fine[:-1])
    assert len(coarse) < len(fine)

    # the checkpoint keeps the run's aims; a status without the environment reads them from it
    monkeypatch.setenv(schedule.AIMS_ENV, "3e-2,1e-2")
    info = walk.walk_info(o.header(), 1e-5, 12, 40, 0, 1, 0.05)
    assert info["aims"] == [3e-2, 1e-2]
    root = tmp_path / "ck"
    root.mkdir()
    checkpoint.write_checkpoint(root, np.zeros(16, dtype=np.float32), info)
    monkeypatch.delenv(schedule.AIMS_ENV)
    assert checkpoint.report(root, o.header())["checkpoint"]["ends_at"] == pytest.approx(1e-2)
    del info["aims"]  # one written before checkpoints kept them: this run's aims
    checkpoint.write_checkpoint(root, np.zeros(16, dtype=np.float32), info)
    assert checkpoint.report(root, o.header())["checkpoint"]["ends_at"] == pytest.approx(1e-3)
    assert "aims" not in walk.walk_info(o.header(), 1e-5, 12, 40, 0, 1, 0.05, early=False)  # a repair's walk


def test_a_bad_aims_variable_stops_the_solve_before_it_writes(tmp_path, monkeypatch) -> None:
    from click.testing import CliRunner

    from gamesolver.solver.cli import cli

    monkeypatch.setenv(schedule.AIMS_ENV, "1e-2;1e-3")
    out = tmp_path / "t"
    r = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "2", "--out", str(out)])
    assert r.exit_code == 2 and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1
    assert "SOLVER_WALK_AIMS must be" in r.output and not out.exists()
