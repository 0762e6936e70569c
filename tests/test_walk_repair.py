"""The walk's repair of a false solution that the local repairs do not mend: the walk again from its
first stage, every discounted stage run to tolerance / 10, instead of plain sweeps through the
discounts. On the swapped test board, one thread (where a walk's course is fixed), the early aims
(3e-2, then 1e-3) leave the walk on a false solution that two local repairs do not mend, where the
undiscounted stage only polishes (``walk.WALK_TAIL_FULL_ABOVE`` 0: with its rounds sweeping their
policy fully while far from their aim, the default, two local repairs do mend it, so these tests of
the walk again keep the polishing stage)."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from gamesolver.games.ur.family import status_reply
from gamesolver.games.ur.solve import solve
from gamesolver.solver.errors import Interrupted
from gamesolver.solver.stochastic import checkpoint, iteration, schedule, walk
from tests.test_ur_reference import mini_options

TOL = 1e-6
AIMS = (3e-2, 1e-3)


@pytest.fixture
def swapped(tmp_path, monkeypatch):
    monkeypatch.setattr(schedule, "WALK_EARLY_AIM", AIMS)
    monkeypatch.setattr(walk, "WALK_TAIL_FULL_ABOVE", 0.0)
    # the rounds' repairs of the flagged states mend it without the walk again regenerating
    # (tests/test_hold_repaired.py): these tests of the walk again leave them out
    monkeypatch.setattr(iteration, "HOLD_REPAIRED", False)
    # and so do the hot sets' greedy sweeps where the walk regenerates (one local repair and 26 full
    # sweeps against the walk again and 67)
    monkeypatch.setattr(walk, "WALK_HOT_GREEDY", 0)
    return mini_options(tmp_path, 4, swapped=True)


def _solve(o, root, **kw):
    said: list[str] = []
    table = solve(o, root, tolerance=TOL, threads=1, log=said.append, **kw)
    return np.asarray(table["value"], dtype=np.float64).copy(), table.meta, said


def _stopped(o, root, at: int, **kw) -> dict:
    """Run the solve into a stop in its full sweep number ``at`` (counted over this run), a
    checkpoint after every round; the checkpoint's record."""
    real, count = walk.progress_sweep, [0]

    def sweep(K, values, *args, **kws):
        count[0] += 1
        if count[0] == at:
            raise KeyboardInterrupt
        return real(K, values, *args, **kws)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(walk, "progress_sweep", sweep)
        mp.setattr(checkpoint, "CHECKPOINT_SHARE", 1e9)  # a checkpoint after every round
        with pytest.raises(Interrupted):
            solve(o, root, tolerance=TOL, threads=1, **kw)
    return json.loads((root / checkpoint.CHECKPOINT_INFO).read_text())


def test_the_repair_walks_again_where_the_local_repairs_fail_and_ends_where_the_descent_does(
        swapped, tmp_path, monkeypatch) -> None:
    """Two local repairs, then the walk again: some 60 full sweeps in all where the plain sweeps'
    descent took some 690, both passing the check on values within 1e-5 of each other and of a
    walk whose every stage ran to tolerance / 10 (no repair needed there)."""
    values, meta, said = _solve(swapped, tmp_path / "rewalk")
    assert meta["endless_repairs"] == 3 and meta["endless_check"]["flagged"] == 0
    assert sum("on those states alone" in s for s in said) == 2
    again = [i for i, s in enumerate(said) if "walking the discount up again from here" in s]
    assert len(again) == 1 and "every stage to 1e-07" in said[again[0]]
    # the walk after it ran its stages from the first, the first one to tolerance / 10 this time
    after = [s for s in said[again[0]:] if s.startswith("sweep ")]
    assert " (1 - discount 0.01): " in after[0]
    first_stage = [s for s in after if "(1 - discount 0.01)" in s]
    assert float(first_stage[-1].split("largest change ")[1].split(" ")[0]) < 1e-3  # not at the early aim
    assert meta["sweeps"] < 150
    monkeypatch.setattr(iteration, "WALK_REWALK", False)
    descent, dmeta, dsaid = _solve(swapped, tmp_path / "descent")
    assert dmeta["endless_repairs"] == 3 and dmeta["endless_check"]["flagged"] == 0
    assert any(s.startswith("discount 1 - 0.01: ") for s in dsaid)  # the plain sweeps' descent ran
    assert dmeta["sweeps"] > 4 * meta["sweeps"]
    monkeypatch.setattr(schedule, "WALK_EARLY_AIM", 0)
    tight, tmeta, _ = _solve(swapped, tmp_path / "tight")
    assert tmeta["endless_repairs"] == 0
    assert np.abs(values - descent).max() < 1e-5 and np.abs(values - tight).max() < 1e-5
    assert np.abs(tight).max() > 0.1  # a game someone wins


@pytest.mark.parametrize("how", [{}, {"graph": "regenerate", "policy_place": "disk"}], ids=["stored", "regenerated"])
def test_a_repair_walk_stopped_resumes_as_one(swapped, tmp_path, how) -> None:
    """A stop in the repair's walk keeps a checkpoint that says so; the run resumed from it goes on
    with every stage to tolerance / 10 (its resume line and ``--status`` say it is the repair's
    walk) and ends on the values of the run that was not stopped. Over a stored graph, and as
    seven pieces solve: regenerating, the policy mapped from its file."""
    whole, meta, said = _solve(swapped, tmp_path / "whole", **how)
    again = next(i for i, s in enumerate(said) if "walking the discount up again from here" in s)
    first = next(s for s in said[again:] if s.startswith("sweep "))
    at = int(first.split()[1]) + 3  # the repair walk's fourth full sweep, in its first stage
    root = tmp_path / "stopped"
    info = _stopped(swapped, root, at, **how)
    assert info["early_aims"] is False and info["stage"] == 0 and info["sweeps"] == at - 1
    status = "\n".join(status_reply(checkpoint.report(root, info["options"])).lines)
    assert "of the walk that repairs a false solution (1 - discount 0.01, ends at a change below 1e-07)" in status
    # the history keeps the repair's rounds apart from the first walk's rounds of the same stage
    rows = checkpoint.round_rows(info)
    assert [r["sweep"] for r in rows if r.get("repair")] == list(range(at - 3, at))
    assert any(r["stage"] == 0 and not r.get("repair") for r in rows)
    assert "; stage 1 of the repair: 3 (largest change" in status and "stage 1: " in status
    from gamesolver.solver.stochastic.rounds_plot import plot_rounds

    assert plot_rounds(rows, list(schedule.WALK_DISCOUNTS), TOL, tmp_path / "rounds.png", "test").stat().st_size > 0
    if how:
        # the skip's record is kept only where the next full sweep reads it (a last change below WALK_RECORD_BELOW)
        assert info["change"] >= walk.WALK_RECORD_BELOW and info.get("skip") is None
    values, rmeta, rsaid = _solve(swapped, root, **how)
    line = next(s for s in rsaid if s.startswith("resuming from the checkpoint"))
    assert line.endswith("in stage 1 of 4 of the repair's walk (1 - discount 0.01, ends at a change below 1e-07)")
    assert rmeta["endless_check"]["flagged"] == 0 and rmeta["sweeps"] == meta["sweeps"]
    assert np.abs(values - whole).max() < 1e-6


def test_a_solve_stopped_between_repairs_counts_on_from_its_checkpoint(swapped, tmp_path) -> None:
    """The checkpoints after a repair keep the count, so a solve stopped between its second local
    repair and the walk again resumes with two made: its next repair is the walk again, as without
    the stop, and it ends on the same values and count."""
    whole, meta, said = _solve(swapped, tmp_path / "whole")
    second = [i for i, s in enumerate(said) if "on those states alone" in s][1]
    sweeps = [int(s.split()[1]) for s in said[second:] if s.startswith("sweep ")]
    at = sweeps[1] + 1  # stopped in the full sweep after the second round that followed the repair
    root = tmp_path / "stopped"
    info = _stopped(swapped, root, at)
    assert info["repairs"] == 2 and "early_aims" not in info
    values, rmeta, rsaid = _solve(swapped, root)
    assert not any("on those states alone" in s for s in rsaid)  # no third local repair
    assert sum("walking the discount up again" in s for s in rsaid) == 1
    assert rmeta["endless_repairs"] == meta["endless_repairs"] == 3
    assert np.array_equal(values, whole)


def test_where_the_walk_again_fails_the_check_the_descent_follows(tmp_path, monkeypatch) -> None:
    """The walk's repairs of every state: the walk again, and where the check still fails after it,
    the plain sweeps' descent as the last (here the check is made to fail until then)."""
    from gamesolver.games.ur import kernel

    o = mini_options(tmp_path, 4)
    n = kernel(o).state_count
    real, verdicts = iteration.endless_check, []

    def failing(K, values, eps, threads=1, show_progress=False, **kw):
        got = real(K, values, eps, threads, show_progress, **kw)
        if len(verdicts) < 2:  # flag every state twice: too many for a local repair
            got = dataclasses.replace(got, flagged=n, states=np.arange(n, dtype=np.int64))
        verdicts.append(got.flagged)
        return got

    monkeypatch.setattr(iteration, "endless_check", failing)
    values, meta, said = _solve(o, tmp_path / "t")
    assert verdicts[:2] == [n, n] and verdicts[2] == 0 and meta["endless_repairs"] == 2
    assert sum("walking the discount up again" in s for s in said) == 1
    assert any(s.startswith("discount 1 - 0.01: ") for s in said)  # then the descent
    order = [i for i, s in enumerate(said) if "walking the discount up again" in s or s.startswith("discount 1 - 0.01: ")]
    assert "walking" in said[order[0]]
    assert meta["endless_check"]["flagged"] == 0


def test_a_first_walk_checkpoint_says_nothing_of_a_repair(tmp_path) -> None:
    """Checkpoints of the first walk carry no ``early_aims`` key (so older builds read them as ever)
    and resume with the early aims; ``stage_end`` without them ends every discounted stage at
    tolerance / 10."""
    info = walk.walk_info({}, 1e-5, 3, 0, 0, 1, 0.5)
    assert "early_aims" not in info
    assert walk.walk_info({}, 1e-5, 3, 0, 0, 1, 0.5, early=False)["early_aims"] is False
    assert schedule.stage_end(0, 1e-5, early=False) == schedule.stage_end(2, 1e-5) == pytest.approx(1e-6)
    assert schedule.stage_end(3, 1e-5, early=False) == 1e-5
    assert iteration.where_in_walk(0, 1e-5, early=False) == (
        ", in stage 1 of 4 of the repair's walk (1 - discount 0.01, ends at a change below 1e-06)")


def test_the_solve_command_says_how_many_repairs_it_took(swapped, tmp_path) -> None:
    from click.testing import CliRunner

    from gamesolver.solver.cli import cli

    out = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "4", "--board", swapped.board_file, "--out",
                                   str(tmp_path / "t"), "--threads", "1", "--no-proof"])
    assert out.exit_code == 0, out.output
    assert "endless check (eps 1e-05): passed after 3 discounted repairs" in out.output
    assert "walking the discount up again from here" in out.output


@pytest.mark.parametrize("local", [0, 3])
def test_local_repairs_sets_how_many_local_repairs_come_before_the_walk_again(swapped, tmp_path, local) -> None:
    """``local_repairs`` (``solve --local-repairs``): that many repairs of the flagged states alone,
    then the walk again; on this board none mends it (its checks flag 6, 8, 8, 6, ... states), so
    the count of local repairs made is the setting's, and every run ends passing the check."""
    values, meta, said = _solve(swapped, tmp_path / "t", local_repairs=local)
    assert sum("on those states alone" in s for s in said) == local
    assert sum("walking the discount up again" in s for s in said) == 1
    assert meta["endless_repairs"] == local + 1 and meta["endless_check"]["flagged"] == 0


def test_local_repairs_is_checked_and_refused_where_it_does_not_apply(tmp_path) -> None:
    from click.testing import CliRunner

    from gamesolver.solver.cli import cli

    out = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "2", "--local-repairs", "-1", "--out", str(tmp_path / "a")])
    assert out.exit_code == 2 and "--local-repairs must be 0 or more; got -1" in out.output
    out = CliRunner().invoke(cli, ["ur", "solve", "--rules", "finkel", "--local-repairs", "3", "--out", str(tmp_path / "b")])
    assert out.exit_code == 2 and "--local-repairs applies to the fort rules" in out.output
    assert "Traceback" not in out.output and not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
