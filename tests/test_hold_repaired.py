"""The states a failed endless check flagged stay repaired: after a local repair, every round of the
walk's undiscounted stage ends with a local repair of every state the solve's checks have flagged
(``iteration.HOLD_REPAIRED``). On a cycle kept up only by endless play the undiscounted backup is a
ratchet: where the cycle's exit falls below it, staying in the cycle is best and its value stays
put, so the next check flags it again. On the swapped test board, solved as seven pieces are
(regenerating, the policy mapped from its file, one thread so that the course is fixed, the early
aims, a polishing undiscounted stage and no greedy sweeps of the hot sets as in
tests/test_walk_repair.py), the repair after each
check alone needs the walk again after two local repairs; held repaired, the third check passes."""
from __future__ import annotations

import numpy as np
import pytest

from gamesolver.games.ur.solve import solve
from gamesolver.solver.stochastic import checkpoint, iteration, schedule, walk
from tests.test_ur_reference import mini_options
from tests.test_walk_repair import _stopped

TOL = 1e-6
HOW = {"graph": "regenerate", "policy_place": "disk"}


@pytest.fixture
def swapped(tmp_path, monkeypatch):
    monkeypatch.setattr(schedule, "WALK_EARLY_AIM", (3e-2, 1e-3))
    monkeypatch.setattr(walk, "WALK_TAIL_FULL_ABOVE", 0.0)
    # (the hot sets' greedy sweeps leave this board one local repair: tests/test_walk_repair.py)
    monkeypatch.setattr(walk, "WALK_HOT_GREEDY", 0)
    return mini_options(tmp_path, 4, swapped=True)


def _solve(o, root, **kw):
    said: list[str] = []
    table = solve(o, root, tolerance=TOL, threads=1, log=said.append, **HOW, **kw)
    return np.asarray(table["value"], dtype=np.float64).copy(), table.meta, said


def test_held_repaired_the_third_check_passes_without_the_walk_again(swapped, tmp_path, monkeypatch) -> None:
    values, meta, said = _solve(swapped, tmp_path / "held")
    assert meta["endless_check"]["flagged"] == 0 and meta["endless_repairs"] == 2
    assert not any("walking the discount up again" in s for s in said)
    local = [s for s in said if "on those states alone" in s]
    assert len(local) == 2 and all("every undiscounted round from here ends with their repair" in s for s in local)
    assert "and on the " in local[1] and "more that earlier checks flagged" in local[1]
    # each undiscounted round after the first repair says its repair of the flagged states
    rounds = [s for s in said[said.index(local[0]):] if s.startswith("sweep ") and "policy sweeps" in s]
    assert rounds and all("the flagged states' repair " in s for s in rounds)
    assert not any("the flagged states' repair" in s for s in said[:said.index(local[0])])
    # the rounds' repairs are counted with the repairs after the checks
    flagged = [int(s.split(": ")[1].split(" states")[0]) for s in local]
    assert meta["repair_backups"] > 5 * sum(flagged) * len(schedule.DISCOUNTS)
    # the repair after each check alone: two local repairs do not mend it, the walk again does
    monkeypatch.setattr(iteration, "HOLD_REPAIRED", False)
    alone, ameta, asaid = _solve(swapped, tmp_path / "alone")
    assert ameta["endless_repairs"] == 3 and ameta["endless_check"]["flagged"] == 0
    assert sum("walking the discount up again" in s for s in asaid) == 1
    assert meta["sweeps"] < ameta["sweeps"]
    # both the game's values: within the tolerance's reach of a walk that needed no repair
    monkeypatch.setattr(schedule, "WALK_EARLY_AIM", 0)
    tight, tmeta, _ = _solve(swapped, tmp_path / "tight")
    assert tmeta["endless_repairs"] == 0
    assert np.abs(values - tight).max() < 1e-5 and np.abs(alone - tight).max() < 1e-5
    assert np.abs(tight).max() > 0.1


def test_a_resumed_solve_holds_the_states_its_checkpoint_folder_keeps(swapped, tmp_path) -> None:
    """Stopped in a round after the first local repair, the solve keeps the flagged states beside
    its checkpoint; resumed, it holds them repaired again and ends as the run that was not stopped."""
    whole, meta, said = _solve(swapped, tmp_path / "whole")
    first = next(i for i, s in enumerate(said) if "on those states alone" in s)
    n_flagged = int(said[first].split(": ")[1].split(" states")[0])
    after = [int(s.split()[1]) for s in said[first:] if s.startswith("sweep ")]
    at = after[1] + 1  # the full sweep after the second round that followed the repair
    root = tmp_path / "stopped"
    _stopped(swapped, root, at, **HOW)
    held = checkpoint.read_held(root, int(np.load(root / checkpoint.CHECKPOINT, mmap_mode="r").shape[0]))
    assert held.size == n_flagged and np.all(np.diff(held) > 0)
    values, rmeta, rsaid = _solve(swapped, root)
    assert any(s.startswith(f"every undiscounted round ends with a repair of the {n_flagged:,} states") for s in rsaid)
    assert rmeta["endless_check"]["flagged"] == 0 and rmeta["endless_repairs"] == meta["endless_repairs"]
    assert np.array_equal(values, whole)
    assert not (root / checkpoint.HELD_FILE).exists()  # the table replaced the folder's solve files


def test_a_held_file_that_does_not_fit_is_not_read(tmp_path) -> None:
    checkpoint.write_held(tmp_path, np.array([2, 5, 9], dtype=np.int64))
    assert checkpoint.read_held(tmp_path, 10).tolist() == [2, 5, 9]
    assert checkpoint.read_held(tmp_path, 9).size == 0  # a rank beyond the game
    for bad in (np.array([5, 2]), np.array([2, 2]), np.array([1.0, 2.0]), np.array([-1, 3])):
        np.save(tmp_path / checkpoint.HELD_FILE, bad)
        assert checkpoint.read_held(tmp_path, 10).size == 0
    (tmp_path / checkpoint.HELD_FILE).write_bytes(b"not an array")
    assert checkpoint.read_held(tmp_path, 10).size == 0
    assert checkpoint.read_held(tmp_path / "nowhere", 10).size == 0
