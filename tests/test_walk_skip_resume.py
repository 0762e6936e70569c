"""A stopped walk takes its skip up again (solver/stochastic/skip.py ``record``/``restore``, the
checkpoint's SKIP_FILE and kept policy file): the restored skip hands the next full sweep the
bounds, leads and stamps of a skip that went on; a walk stopped in the middle of a full sweep
resumes from its last round's checkpoint, generates only what can have changed in its first full
sweep, and gives the same values, bit for bit on one thread, as a resume that generates every
state; a record that does not belong to the checkpoint's values, bytes of another round or a
policy kept in memory are not taken up; and deliberate breaks (a forgotten movement, policy rows
not kept) make the checks fail."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from gamesolver.games.ur import kernel
from gamesolver.games.ur.family import status_reply
from gamesolver.games.ur.solve import solve
from gamesolver.solver.errors import Interrupted
from gamesolver.solver.stochastic import _engine as E
from gamesolver.solver.stochastic import checkpoint, skip, walk
from tests.test_ur_reference import mini_options

TOL = 1e-5


@pytest.fixture(scope="module")
def mini4(tmp_path_factory):
    return kernel(mini_options(tmp_path_factory.mktemp("mini"), 4))


# ---- the skip's record and its restore ----------------------------------------------------------

def _rounds(K, sk: skip.Skip | skip.BlockSkip, values: np.ndarray, policy: np.ndarray, rng, discounts) -> None:
    """Full sweeps that skip (one a discount), each followed by a small random movement of the
    values, as the policy sweeps of a round would move them."""
    for g in discounts:
        sk.begin(values, g)
        before = int(sk.work[0])
        change = E.sweep(K, values, policy=policy, discount=g, **sk.kwargs())
        sk.end(values, change, int(sk.work[0]) - before)
        values += (rng.uniform(-1, 1, values.shape[0]) * 1e-5).astype(np.float32)


def after_rounds(K, sk, seed: int):
    """``sk`` after 30 rounds at 1 - discount 1e-2 and 6 at 1e-4 from values 0 (``_rounds``):
    (sk, the values, the policy rows, the random generator)."""
    rng = np.random.default_rng(seed)
    values = np.zeros(K.state_count, np.float32)
    policy = np.zeros((K.state_count, K.roll_count), np.int32)
    _rounds(K, sk, values, policy, rng, [0.99] * 30 + [0.9999] * 6)
    return sk, values, policy, rng


def _restored_against_going_on(K, forget_moved: bool = False) -> tuple[bool, bool]:
    """A skip recorded after several rounds (its record through JSON, as a checkpoint keeps it)
    and restored into a new one, against the skip that went on: (the next full sweep's bounds are
    the same, that sweep's values, policy rows and states generated are the same)."""
    n = K.state_count
    going, values, policy, _ = after_rounds(K, skip.Skip(n, np.float32), 11)
    record = json.loads(json.dumps(going.record(values)))
    restored = skip.Skip(n, np.float32)
    restored.restore(record, {"lead": going.lead.copy(), "stamp": going.stamp.copy()}, values.copy())
    if forget_moved:  # the deliberate break: the round's own movement lost on the way
        del restored.moved[restored.round]
    return next_sweeps_agree(K, going, restored, values, policy,
                             lambda sk: sk.bounds.copy())


def next_sweeps_agree(K, going, restored, values: np.ndarray, policy: np.ndarray, bounds) -> tuple[bool, bool]:
    """The next full sweep (1 - discount 1e-4) of a skip that went on and of one restored from its
    record, each from its own copy of ``values`` and ``policy``: (the bounds they hand out, read by
    ``bounds``, are the same; the sweep's values, policy rows and states generated are the same)."""
    n = K.state_count
    v1, v2, p2 = values.copy(), values.copy(), policy.copy()
    going.work[:] = 0  # (states and codes generated: counted by the next sweep alone)
    going.begin(v1, 0.9999)
    restored.begin(v2, 0.9999)
    same_bounds = all(np.array_equal(a, b) for a, b in zip(bounds(going), bounds(restored)))
    E.sweep(K, v1, policy=policy, discount=0.9999, **going.kwargs())
    E.sweep(K, v2, policy=p2, discount=0.9999, **restored.kwargs())
    same_sweep = (np.array_equal(v1, v2) and np.array_equal(policy, p2)
                  and np.array_equal(going.work, restored.work) and 0 < going.work[0] < n)
    return same_bounds, same_sweep


def test_a_restored_skip_goes_on_as_the_skip_that_was_not_stopped(mini4) -> None:
    assert _restored_against_going_on(mini4) == (True, True)


def test_a_restore_that_forgets_the_rounds_movement_hands_out_other_bounds(mini4) -> None:
    assert not _restored_against_going_on(mini4, forget_moved=True)[0]


def test_a_skip_has_no_record_before_its_first_full_sweep_and_a_short_record_is_refused() -> None:
    sk = skip.Skip(4, np.float32)
    values = np.zeros(4, np.float32)
    assert sk.record(values) is None
    sk.begin(values, 0.99)
    sk.end(values, 0.5, 4)
    record = sk.record(values)
    assert record is not None and record["round"] == 0 and record["moved"] == {"0": 0.0}
    other = skip.Skip(4, np.float32)
    with pytest.raises(ValueError, match="lacks that round's"):
        other.restore({**record, "moved": {}}, {"lead": np.zeros(4, np.uint8), "stamp": np.zeros(4, np.uint8)}, values)
    with pytest.raises(ValueError, match="not \\(4,\\)"):
        other.restore(record, {"lead": np.zeros(3, np.uint8), "stamp": np.zeros(4, np.uint8)}, values)


def test_the_record_keeps_only_the_rounds_a_bound_can_reach() -> None:
    sk = skip.Skip(4, np.float32)
    values = np.zeros(4, np.float32)
    for _ in range(skip.AGE_MAX + 20):
        sk.begin(values, 1.0)
        sk.end(values, 0.0, 0)
    record = sk.record(values)
    assert len(record["full"]) == len(record["moved"]) == skip.AGE_MAX + 1


# ---- a walk stopped and resumed -----------------------------------------------------------------

class Cut:
    """A solve's engine whose sweep raises KeyboardInterrupt after ``left`` more calls (a stop in
    the middle of a full sweep, once the walk sweeps in chunks)."""

    def __init__(self, K, left: int) -> None:
        self._K, self._left = K, left

    def __getattr__(self, name: str):
        return getattr(self._K, name)

    def sweep(self, *args, **kw):
        if self._left == 0:
            raise KeyboardInterrupt
        self._left -= 1
        return self._K.sweep(*args, **kw)


def _stop_in_full_sweep(monkeypatch, at: int) -> None:
    """The walk's full sweep number ``at`` (counted over this run) is stopped after three of its
    chunks of 1,000 states; every round is checkpointed."""
    real, count = walk.progress_sweep, [0]

    def sweep(K, *args, **kw):
        count[0] += 1
        return real(Cut(K, 3) if count[0] == at else K, *args, **kw)

    monkeypatch.setattr(walk, "progress_sweep", sweep)
    monkeypatch.setattr(walk, "_CHUNK", 1000)
    monkeypatch.setattr(checkpoint, "CHECKPOINT_SHARE", 1e9)  # a checkpoint after every round


def _stopped(o, root, at: int) -> str:
    """Run the walk (one thread, regenerating, its policy mapped from its file) into a stop in
    full sweep ``at``; the stop's message."""
    with pytest.MonkeyPatch.context() as mp:
        _stop_in_full_sweep(mp, at)
        with pytest.raises(Interrupted) as stop:
            solve(o, root, tolerance=TOL, threads=1, graph="regenerate", policy_place="disk")
    return str(stop.value)


def _resumed(o, root, **kw):
    said: list[str] = []
    table = solve(o, root, tolerance=TOL, threads=1, graph="regenerate", policy_place="disk", log=said.append, **kw)
    return np.asarray(table["value"]).copy(), table.header["meta"], said


def _first_share(said: list[str], at: int) -> float:
    """The share of the states that the resumed run's first full sweep (sweep ``at``) generated."""
    line = next(s for s in said if s.startswith(f"sweep {at} "))
    return float(re.search(r"([\d.]+)% generated", line).group(1)) / 100


STOP_AT = 19  # late in the last discounted stage of the test board's walk, where most states are skipped


def test_a_stopped_walk_resumes_its_skip_with_the_same_values(tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    n = kernel(o).state_count
    root, plain = tmp_path / "kept", tmp_path / "regenerated"
    message = _stopped(o, root, STOP_AT)
    _stopped(o, plain, STOP_AT)
    # the stop kept the checkpoint of the last round, with its record, bytes and policy rows
    info = json.loads((root / checkpoint.CHECKPOINT_INFO).read_text())
    assert info["sweeps"] == STOP_AT - 1 and info["skip"]["round"] == STOP_AT - 2
    saved = np.load(root / checkpoint.CHECKPOINT)
    assert info["skip"]["crc"] == checkpoint.values_crc(saved)
    assert (root / checkpoint.SKIP_FILE).is_file() and (root / checkpoint.POLICY_FILE).is_file()
    assert f"resume from its checkpoint after sweep {STOP_AT - 1}" in message
    said = status_reply(checkpoint.report(root, json.loads((root / checkpoint.CHECKPOINT_INFO).read_text())["options"]))
    assert any("resumes from it (its first full sweep generating only what can have changed" in s for s in said.lines)
    checkpoint.drop_skip_record(plain)  # the other resume generates every state in its first sweep
    assert not (plain / checkpoint.SKIP_FILE).exists()
    values, meta, said = _resumed(o, root)
    plain_values, plain_meta, plain_said = _resumed(o, plain)
    assert any("the skip goes on from the checkpoint's leads" in s for s in said)
    assert any("with the stopped run's rows" in s for s in said)
    assert np.array_equal(values, plain_values)
    assert meta["sweeps"] == plain_meta["sweeps"]
    assert _first_share(said, STOP_AT) < 0.2 and _first_share(plain_said, STOP_AT) > 0.99
    made, plain_made = meta["full_sweeps_generated"], plain_meta["full_sweeps_generated"]
    assert made["generated_states"] < plain_made["generated_states"] - 0.5 * n
    # the finished table's folder keeps none of the walk's files
    assert not any((root / name).exists() for name in (checkpoint.SKIP_FILE, checkpoint.POLICY_FILE,
                                                       checkpoint.CHECKPOINT))


def _rounds_after_resume(o, root, at: int, extra: int) -> np.ndarray:
    """Resume a walk stopped in full sweep ``at`` and stop it (no convergence) after ``extra``
    more full sweeps: the checkpoint's values."""
    with pytest.raises(RuntimeError, match="no convergence"):
        solve(o, root, tolerance=TOL, threads=1, graph="regenerate", policy_place="disk", max_sweeps=at - 1 + extra)
    return np.load(root / checkpoint.CHECKPOINT)


@pytest.mark.parametrize("at", [16, 17])
def test_policy_rows_not_kept_would_change_the_values(tmp_path, monkeypatch, at) -> None:
    """A few rounds after a resume from the second stage's last round and in the last discounted
    stage (rounds that record leads: before them the values moved too much), the same values
    as a resume that generates every state; the deliberate break: a resume that takes the record
    up over a new policy file (its rows not the stopped run's) backs skipped states up by the
    wrong actions, and its values part from those."""
    o = mini_options(tmp_path, 4)
    monkeypatch.setattr(checkpoint, "CHECKPOINT_SHARE", 1e9)
    roots = {name: tmp_path / name for name in ("kept", "regenerated", "broken")}
    for root in roots.values():
        _stopped(o, root, at)
    checkpoint.drop_skip_record(roots["regenerated"])
    reference = _rounds_after_resume(o, roots["regenerated"], at, 3)
    assert np.array_equal(_rounds_after_resume(o, roots["kept"], at, 3), reference)
    monkeypatch.setattr(checkpoint, "kept_policy", lambda root, n, rolls: np.lib.format.open_memmap(
        root / checkpoint.POLICY_FILE, mode="w+", dtype=np.int32, shape=(n, rolls)))
    assert not np.array_equal(_rounds_after_resume(o, roots["broken"], at, 3), reference)


def test_a_record_of_other_values_is_not_taken_up(tmp_path) -> None:
    """Values that are not the record's (a stop between writing the values and the record) are
    said so, and the first full sweep generates every state."""
    o = mini_options(tmp_path, 4)
    root = tmp_path / "t"
    _stopped(o, root, STOP_AT)
    values = np.load(root / checkpoint.CHECKPOINT)
    values[7] += np.float32(1e-3)
    np.save(root / checkpoint.CHECKPOINT, values)
    _, _, said = _resumed(o, root)
    assert any("skip record belongs to other values" in s for s in said)
    assert not any("the skip goes on" in s for s in said)
    assert _first_share(said, STOP_AT) > 0.99


def test_bytes_of_another_round_are_not_taken_up_and_the_record_is_dropped(tmp_path, monkeypatch) -> None:
    o = mini_options(tmp_path, 4)
    root = tmp_path / "t"
    _stopped(o, root, STOP_AT)
    with np.load(root / checkpoint.SKIP_FILE) as f:
        lead, stamp, crc = f["lead"], f["stamp"], int(f["crc"])
    checkpoint.write_skip_file(root, {"lead": lead, "stamp": stamp}, 3, crc)  # the round does not match the record's
    dropped: list[bool] = []
    real_drop = checkpoint.drop_skip_record

    def drop(root):
        real_drop(root)
        dropped.append(checkpoint.keeps_skip(root) or (root / checkpoint.SKIP_FILE).exists())

    monkeypatch.setattr(checkpoint, "drop_skip_record", drop)
    _, _, said = _resumed(o, root)
    assert any("the skip's record is not taken up" in s and checkpoint.SKIP_FILE in s for s in said)
    assert dropped == [False]  # the record and its bytes were gone before the walk swept
    assert _first_share(said, STOP_AT) > 0.99


def _status_lines(root) -> list[str]:
    info = json.loads((root / checkpoint.CHECKPOINT_INFO).read_text())
    return status_reply(checkpoint.report(root, info["options"])).lines


def test_a_round_that_moved_the_values_much_keeps_no_record(tmp_path) -> None:
    """Stopped early in the first stage, where the last round moved the values by more than
    WALK_RECORD_BELOW: the next full sweep would be a plain one, so the round's checkpoint keeps no
    skip record (1.3 GB at seven pieces, written and synced every round for nothing), the stop
    writes the values it reached, and neither the resumed run nor the status speaks of a record."""
    o = mini_options(tmp_path, 4)
    root = tmp_path / "t"
    _stopped(o, root, 4)
    info = json.loads((root / checkpoint.CHECKPOINT_INFO).read_text())
    assert info["change"] >= walk.WALK_RECORD_BELOW
    assert not checkpoint.keeps_skip(root) and not (root / checkpoint.SKIP_FILE).exists()
    assert not any("only what can have changed" in s or "generating every state" in s for s in _status_lines(root))
    _, _, said = _resumed(o, root)
    assert not any("the skip goes on" in s or "not taken up" in s or "left unused" in s for s in said)


def _changes(o, root) -> list[float]:
    """The largest change of every full sweep of a whole walk (one thread, policy on disk)."""
    _, _, said = _resumed(o, root)
    found = [re.match(r"sweep (\d+) .*?largest change ([\d.e+-]+)", s) for s in said]
    return [float(m.group(2)) for m in found if m]


def test_a_plain_round_keeps_no_record_the_next_recording_one_does(tmp_path) -> None:
    """The first round to fall below WALK_RECORD_BELOW had a plain full sweep (the round before it
    moved the values more), which recorded no lead: its checkpoint keeps no record, while the
    next round's, whose full sweep recorded, does. (Keeping the plain round's record made
    ``--status`` promise a first full sweep that skips, which then generated every state.)"""
    o = mini_options(tmp_path, 4)
    low = [c < walk.WALK_RECORD_BELOW for c in _changes(o, tmp_path / "whole")]
    # (sweeps count from 1: sweep i + 1 is low[i]; the test board's changes fall unevenly)
    k = next(i for i in range(1, len(low)) if low[i] and not low[i - 1]) + 1  # a plain sweep, below after it
    j = next(i for i in range(1, len(low)) if low[i] and low[i - 1]) + 1  # a recording one, below after it
    plain, recording = tmp_path / "plain", tmp_path / "recording"
    _stopped(o, plain, k + 1)
    info = json.loads((plain / checkpoint.CHECKPOINT_INFO).read_text())
    assert info["sweeps"] == k and info["change"] < walk.WALK_RECORD_BELOW
    assert not checkpoint.keeps_skip(plain)
    assert not any("only what can have changed" in s for s in _status_lines(plain))
    _stopped(o, recording, j + 1)
    info = json.loads((recording / checkpoint.CHECKPOINT_INFO).read_text())
    assert info["sweeps"] == j and info["change"] < walk.WALK_RECORD_BELOW
    assert checkpoint.keeps_skip(recording) and info["skip"]["round"] == j - 1
    assert any("resumes from it (its first full sweep generating only what can have changed" in s
               for s in _status_lines(recording))


def test_an_older_builds_record_after_a_large_change_is_left_unused(tmp_path, monkeypatch) -> None:
    """A checkpoint of an older build kept the record after every round: where its last round moved
    the values by WALK_RECORD_BELOW or more, the status says the first full sweep generates every
    state, and the resumed run drops the record unread (its bytes need not be loaded), saying why."""
    o = mini_options(tmp_path, 4)
    root = tmp_path / "t"
    with monkeypatch.context() as mp:
        mp.setattr(walk, "record_read", lambda recorded, change: True)  # the older build's checkpoints
        _stopped(o, root, 4)
    info = json.loads((root / checkpoint.CHECKPOINT_INFO).read_text())
    assert info["change"] >= walk.WALK_RECORD_BELOW and checkpoint.keeps_skip(root)
    lines = _status_lines(root)
    assert any(f"its first full sweep generating every state: the last round moved the values by {info['change']:.3g}"
               in s for s in lines)
    assert not any("only what can have changed" in s for s in lines)
    _, _, said = _resumed(o, root)
    assert any(s.startswith("the checkpoint's skip record is left unused: its last round changed the values by "
                            f"{info['change']:.3g}") for s in said)
    assert not any("the skip goes on" in s or "not taken up" in s for s in said)


def test_a_resume_with_the_policy_in_memory_drops_the_record(tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    root = tmp_path / "t"
    _stopped(o, root, STOP_AT)
    with pytest.MonkeyPatch.context() as mp:
        _stop_in_full_sweep(mp, 1)  # stopped at once: what is left of the checkpoint is seen
        with pytest.raises(Interrupted):
            solve(o, root, tolerance=TOL, threads=1, graph="regenerate", policy_place="memory")
    assert not checkpoint.keeps_skip(root)
    assert not (root / checkpoint.SKIP_FILE).exists() and not (root / checkpoint.POLICY_FILE).exists()
    assert json.loads((root / checkpoint.CHECKPOINT_INFO).read_text())["sweeps"] == STOP_AT - 1


def test_a_policy_held_in_memory_writes_no_record(tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    root = tmp_path / "t"
    with pytest.MonkeyPatch.context() as mp:
        _stop_in_full_sweep(mp, 6)
        with pytest.raises(Interrupted):
            solve(o, root, tolerance=TOL, threads=1, graph="regenerate", policy_place="memory")
    assert not checkpoint.keeps_skip(root) and not (root / checkpoint.SKIP_FILE).exists()
    # the stop wrote the values as they were, in the middle of the sixth full sweep
    assert json.loads((root / checkpoint.CHECKPOINT_INFO).read_text())["sweeps"] == 5
