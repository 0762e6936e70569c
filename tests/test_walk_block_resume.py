"""A stopped walk that skips by blocks takes its skip up again (solver/stochastic/skip.py,
``BlockSkip.record``/``restore``, the checkpoint's SKIP_FILE): the restored skip hands the next
full sweep the bounds of a skip that went on; a walk stopped in a full sweep resumes with the same
values, bit for bit on one thread, generating only what can have changed in its first full sweep;
a record of the other skip is not taken up; SOLVER_WALK_SKIP picks the skip, and a bad value is a
one-line error. Deliberate breaks (the round's movement lost on the way) make the checks fail."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from gamesolver.solver.cli import cli
from gamesolver.solver.stochastic import checkpoint, skip, walk
from gamesolver.solver.stochastic import _engine as E
from tests.test_ur_reference import mini_options
from tests.test_walk_skip import mini4  # noqa: F401 (the same generator, as a fixture)
from tests.test_walk_skip_resume import STOP_AT, _first_share, _resumed, _stopped, after_rounds, next_sweeps_agree


def _restored_against_going_on(K, break_it: bool = False) -> tuple[bool, bool]:
    """A skip by blocks recorded after several rounds (its record through JSON, its arrays
    copied, as a checkpoint keeps them) and restored into a new one, against the skip that went
    on: (the next full sweep's bounds are the same, that sweep's values, policy rows and states
    generated are the same)."""
    going, values, policy, rng = after_rounds(K, skip.BlockSkip(K, np.float32), 5)
    values += (rng.uniform(-1, 1, K.state_count) * 1e-5).astype(np.float32)  # the round's policy sweeps after its full sweep
    record = json.loads(json.dumps(going.record(values)))
    arrays = {name: a.copy() for name, a in going.arrays().items()}
    if break_it:  # the deliberate break: the movement since the last full sweep's start lost on the way
        arrays["moved"][:] = 0.0
    restored = skip.BlockSkip(K, np.float32)
    restored.restore(record, arrays, values.copy())
    return next_sweeps_agree(K, going, restored, values, policy, lambda sk: (sk.kb.copy(), np.float64(sk.dg)))


def test_a_restored_block_skip_goes_on_as_the_skip_that_was_not_stopped(mini4) -> None:
    assert _restored_against_going_on(mini4) == (True, True)


def test_a_restore_that_loses_the_rounds_movement_hands_out_other_bounds(mini4) -> None:
    assert not _restored_against_going_on(mini4, break_it=True)[0]


def test_records_of_the_other_skip_and_arrays_of_other_sizes_are_refused(mini4) -> None:
    K = mini4
    n, values = K.state_count, np.zeros(K.state_count, np.float32)
    blocks = skip.BlockSkip(K, np.float32)
    assert blocks.record(values) is None  # nothing to keep before the first full sweep
    blocks.begin(values, 0.99)
    blocks.end(values, 0.5, n)
    record, arrays = blocks.record(values), blocks.arrays()
    assert record == {"kind": skip.BY_BLOCKS, "round": 0, "discount": 0.99}
    one = skip.Skip(n, np.float32)
    with pytest.raises(ValueError, match="by blocks, not by one bound"):
        one.restore(record, {"lead": np.zeros(n, np.uint8), "stamp": np.zeros(n, np.uint8)}, values)
    other = skip.BlockSkip(K, np.float32)
    with pytest.raises(ValueError, match="by one bound, not by blocks"):
        other.restore({"round": 0, "full": {}, "moved": {}, "discount": {}}, arrays, values)
    with pytest.raises(ValueError, match="carried leads of"):
        other.restore(record, {**arrays, "carry": arrays["carry"][:-1]}, values)
    with pytest.raises(ValueError, match="block movements of"):
        other.restore(record, {**arrays, "moved": arrays["moved"][:-1]}, values)


def test_which_full_sweeps_record_is_said_once_for_both_skips(mini4) -> None:
    """``walk.records_after``: either skip records only after a sweep that moved the values by
    less than WALK_RECORD_BELOW (or where that is not known); a plain full sweep of a skip by
    blocks generates every state, forgets every carried lead (so the next full sweep generates
    every state again and records afresh) and gives the values of a recording one."""
    K = mini4
    n, R = K.state_count, K.roll_count
    blocks, one = skip.BlockSkip(K, np.float32), skip.Skip(n, np.float32)
    large = 10 * walk.WALK_RECORD_BELOW
    for sk in (blocks, one):
        assert [walk.records_after(sk, c) for c in (None, 0.0, large)] == [True, True, False]
    rng = np.random.default_rng(3)
    start = rng.uniform(-0.5, 0.5, n).astype(np.float32)
    runs = {}
    for record in (True, False):
        sk = skip.BlockSkip(K, np.float32)
        values, policy = start.copy(), np.zeros((n, R), np.int32)
        walk.full_sweep(K, values, 1, "t", False, policy, 0.99, False, sk, sk.work, record=True)
        before = int(sk.work[0])
        walk.full_sweep(K, values, 1, "t", False, policy, 0.99, False, sk, sk.work, record=record)
        runs[record] = (values, policy, sk, int(sk.work[0]) - before)
    (v_rec, p_rec, recorded, _), (v_plain, p_plain, plain, generated) = runs[True], runs[False]
    assert np.array_equal(v_plain, v_rec) and np.array_equal(p_plain, p_rec)  # one thread: the same values
    assert generated == n  # a plain sweep skips nothing ...
    assert (plain.carry == E.CARRY_NEVER).all()  # ... and leaves no lead to read
    assert not (recorded.carry == E.CARRY_NEVER).all()


def test_a_stopped_walk_by_blocks_resumes_its_skip_with_the_same_values(tmp_path, monkeypatch) -> None:
    """The test board's walk by blocks (one thread, its policy mapped from its file), stopped in
    a late full sweep: resumed from its checkpoint's record it generates a few states in its first
    full sweep where a resume without the record generates them all, and both end on the same
    values, bit for bit."""
    monkeypatch.setenv(walk.SKIP_ENV, "blocks")
    o = mini_options(tmp_path, 4)
    root, plain = tmp_path / "kept", tmp_path / "regenerated"
    _stopped(o, root, STOP_AT)
    _stopped(o, plain, STOP_AT)
    info = json.loads((root / checkpoint.CHECKPOINT_INFO).read_text())
    assert info["skip"]["kind"] == skip.BY_BLOCKS and info["skip"]["round"] == STOP_AT - 2
    with np.load(root / checkpoint.SKIP_FILE) as f:
        assert set(f.files) == {"carry", "full_blocks", "moved", "round", "crc"}
    checkpoint.drop_skip_record(plain)
    values, meta, said = _resumed(o, root)
    plain_values, plain_meta, plain_said = _resumed(o, plain)
    assert any("the skip goes on from the checkpoint's leads" in s for s in said)
    assert any(s.startswith("the skip's blocks were read from ") for s in said)
    assert np.array_equal(values, plain_values) and meta["sweeps"] == plain_meta["sweeps"]
    assert _first_share(said, STOP_AT) < 0.5 and _first_share(plain_said, STOP_AT) > 0.99


def test_a_walk_moved_onto_the_other_skip_leaves_the_record_and_ends_on_the_same_values(tmp_path,
                                                                                        monkeypatch) -> None:
    """A walk stopped with one bound for the game and resumed by blocks (the same command, the
    environment changed) cannot take the record up: it says so, its first full sweep generates
    every state, and its values are those of a resume with one bound that did not take it up."""
    o = mini_options(tmp_path, 4)
    root, plain = tmp_path / "moved", tmp_path / "regenerated"
    _stopped(o, root, STOP_AT)
    _stopped(o, plain, STOP_AT)
    checkpoint.drop_skip_record(plain)
    plain_values, _, _ = _resumed(o, plain)
    monkeypatch.setenv(walk.SKIP_ENV, "blocks")
    values, _, said = _resumed(o, root)
    assert any("the skip's record is not taken up (a record of the skip by one bound" in s for s in said)
    assert _first_share(said, STOP_AT) > 0.99
    # on one thread both skips decide every state as the walk that never skips: the same values
    assert np.array_equal(values, plain_values)


def test_the_environment_picks_the_skip_and_a_bad_value_is_one_line(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv(walk.SKIP_ENV, raising=False)
    assert walk.skips_by_blocks() is walk.WALK_SKIP_BLOCKS
    monkeypatch.setenv(walk.SKIP_ENV, "blocks")
    assert walk.skips_by_blocks() is True
    monkeypatch.setenv(walk.SKIP_ENV, "one")
    assert walk.skips_by_blocks() is False
    monkeypatch.setenv(walk.SKIP_ENV, "blokcs")
    res = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "2", "--out", str(tmp_path / "t")])
    assert res.exit_code == 2 and "Traceback" not in res.output and not (tmp_path / "t").exists()
    last = res.output.strip().splitlines()[-1]
    assert last.endswith("SOLVER_WALK_SKIP must be one (one bound for the game) or blocks (a bound per block of "
                         "states); got 'blokcs'")
