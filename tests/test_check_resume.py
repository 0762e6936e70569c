"""A solve stopped after its walk has ended goes on with the endless check, not with another round:
the walk's last checkpoint says it ended (its residual, and the CRC-32 of its values), and the check
keeps its marks after its passes (``checkpoint.write_marks``), from which a resumed run goes on.
On the swapped test board, one thread (where a solve's course is fixed), the walk fails the check
three times before it passes (two local repairs, then the walk again; its undiscounted stage
polishing, as ``tests/test_walk_repair.py``'s fixture has it), so a stop can fall in any of four
checks."""
from __future__ import annotations

import json

import numpy as np
import pytest

from gamesolver.games.ur import kernel
from gamesolver.games.ur.family import status_reply
from gamesolver.games.ur.solve import solve
from gamesolver.solver.errors import Interrupted
from gamesolver.solver.stochastic import checkpoint, schedule
from gamesolver.solver.stochastic.iteration import endless_check
from tests.test_walk_repair import TOL, _solve, swapped  # noqa: F401  (swapped: the fixture)

PASSES = 8  # each check of the swapped board's solve: 8 passes, the last adding nothing (7 writes)


def _stopped_in_check(o, root, call: int, before: bool, **kw) -> dict:
    """Run the solve into a stop at the ``call``-th write of the check's marks (counted over the
    run, one after every pass that marked something): right after it, or (``before``) in its
    place, as a kill in the next pass or in this one leaves the folder. The checkpoint's record."""
    real, count = checkpoint.write_marks, [0]

    def write(*args, **kws):
        count[0] += 1
        if count[0] == call and before:
            raise KeyboardInterrupt
        real(*args, **kws)
        if count[0] == call:
            raise KeyboardInterrupt

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(checkpoint, "write_marks", write)
        mp.setattr(checkpoint, "CHECKPOINT_SHARE", 1e9)  # a checkpoint after every round, marks after every pass
        with pytest.raises(Interrupted):
            solve(o, root, tolerance=TOL, threads=1, **kw)
    return json.loads((root / checkpoint.CHECKPOINT_INFO).read_text())


@pytest.mark.parametrize("how", [{}, {"graph": "regenerate", "policy_place": "disk"}], ids=["stored", "regenerated"])
@pytest.mark.parametrize("call,before", [(1, True), (3, False), (7, False), (10, False), (26, False)],
                         ids=["first-pass", "check1-pass3", "check1-last", "check2-pass3", "check4-pass5"])
def test_a_solve_stopped_in_its_check_goes_on_with_it(swapped, tmp_path, how, call, before) -> None:
    """Stopped anywhere in a check, the resumed solve makes no full sweep before it (the same count
    of full sweeps in all as the run that was not stopped), goes on from the marks kept for the
    checkpoint's values where there are any, and ends on the same values bit for bit, with the same
    checks and repairs. Over a stored graph, and as seven pieces solve (regenerating, the policy
    mapped from its file, the skip's record kept)."""
    whole, meta, said = _solve(swapped, tmp_path / "whole", **how)
    assert meta["endless_repairs"] == 3 and sum(s.startswith("endless check at eps") for s in said) == 4
    assert all(f": {PASSES} passes," in s for s in said if s.startswith("endless check at eps"))
    root = tmp_path / "stopped"
    info = _stopped_in_check(swapped, root, call, before, **how)
    # the walk's last checkpoint, which says so, with the CRC of the values it holds
    assert info["walked"] < TOL and info["stage"] == len(schedule.WALK_DISCOUNTS)
    assert info["walked_crc"] == checkpoint.values_crc(np.load(root / checkpoint.CHECKPOINT))
    kept = None if before else (call - 1) % (PASSES - 1) + 1  # the pass of its check whose marks were kept
    status = "\n".join(status_reply(checkpoint.report(root, info["options"])).lines)
    came = f"the walk has ended there (residual {info['walked']:.3g}): the endless check comes next"
    assert came + (f", from the marks it kept after pass {kept}" if kept else "") + "\n" in status + "\n"
    values, rmeta, rsaid = _solve(swapped, root, **how)
    assert any(s.startswith("resuming from the checkpoint after sweep ") for s in rsaid)
    check = next(i for i, s in enumerate(rsaid) if s.startswith("endless check at eps"))
    assert not [s for s in rsaid[:check] if s.startswith("sweep ")]  # no round before the check
    assert f"the walk had ended there (residual {info['walked']:.3g}): going on with its endless check" in rsaid
    going_on = [s for s in rsaid[:check] if "going on from the marks kept after pass" in s]
    assert going_on == ([f"endless check: going on from the marks kept after pass {kept} "
                         f"({going_on[0].split('(')[1]}"] if kept else [])
    assert rmeta["sweeps"] == meta["sweeps"] and rmeta["endless_repairs"] == meta["endless_repairs"]
    assert rmeta["endless_check"] == meta["endless_check"]
    assert np.array_equal(values, whole)
    assert not (root / checkpoint.MARKS_FILE).exists()  # the table replaced the folder's files


def _false_solution(o):
    """The swapped board's kernel and values from plain sweeps from zero: they solve the
    equations and fail the check (8 states flagged, in 8 passes)."""
    K = kernel(o)
    values = np.zeros(K.state_count, dtype=np.float32)
    while K.sweep(values, threads=1) >= 1e-7:
        pass
    return K, values


def test_a_check_goes_on_from_any_pass_to_the_same_flags(swapped, tmp_path) -> None:
    K, values = _false_solution(swapped)
    whole = endless_check(K, values, 1e-5)
    assert whole.flagged == 8 and whole.passes == PASSES
    crc = checkpoint.values_crc(values)
    for stop in range(1, PASSES):
        root = tmp_path / f"at{stop}"
        root.mkdir()
        calls = [0]
        real = K.endless_pass

        class Stopping:
            def endless_pass(self, *args, **kw):
                calls[0] += 1
                if calls[0] > stop:
                    raise KeyboardInterrupt
                return real(*args, **kw)

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(checkpoint, "CHECKPOINT_SHARE", 1e9)
            with pytest.raises(KeyboardInterrupt):
                endless_check(Stopping(), values, 1e-5, keep=root)
        good, passes = checkpoint.read_marks(root, K.state_count, 1e-5, crc)
        assert passes == stop and 0 < np.count_nonzero(good) < K.state_count
        said: list[str] = []
        again = endless_check(K, values, 1e-5, keep=root, log=said.append)
        assert said == [f"endless check: going on from the marks kept after pass {stop} "
                        f"({np.count_nonzero(good):,} states marked)"]
        assert np.array_equal(again.states, whole.states) and again.passes == whole.passes
    # marks of other values or another eps, or of another state count, are not taken up
    assert checkpoint.read_marks(root, K.state_count, 1e-5, crc ^ 1) is None
    assert checkpoint.read_marks(root, K.state_count, 2e-5, crc) is None
    assert checkpoint.read_marks(root, K.state_count + 1, 1e-5, crc) is None
    assert checkpoint.marks_passes(root, crc) == PASSES - 1 and checkpoint.marks_passes(root, crc ^ 1) is None
    (root / checkpoint.MARKS_FILE).write_bytes(b"not a zip")
    assert checkpoint.read_marks(root, K.state_count, 1e-5, crc) is None and checkpoint.marks_passes(root, crc) is None


def test_a_check_from_marks_of_other_values_starts_over(swapped, tmp_path, monkeypatch) -> None:
    """The marks are tied to the values: after a repair (other values) the check starts from
    none, and ends where a check without kept marks does."""
    monkeypatch.setattr(checkpoint, "CHECKPOINT_SHARE", 1e9)  # marks after every pass
    K, values = _false_solution(swapped)
    endless_check(K, values, 1e-5, keep=tmp_path)
    assert checkpoint.marks_passes(tmp_path, checkpoint.values_crc(values)) == PASSES - 1
    other = values.copy()
    other[np.argmax(np.abs(other))] *= 0.5
    said: list[str] = []
    got = endless_check(K, other, 1e-5, keep=tmp_path, log=said.append)
    assert not said
    fresh = endless_check(K, other, 1e-5)
    assert np.array_equal(got.states, fresh.states) and got.passes == fresh.passes
