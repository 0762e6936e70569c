"""A walk stopped long after its last round ended keeps the values it reached (``Pacer.stop``,
``checkpoint.keeps_record``): where the stopped round has run STOP_KEEPS_AFTER seconds or more and
longer than the skip's record would save the next run (``walk.record_worth``), the checkpoint
holds the values as they were at the stop, with the last round's counts and the stopped round's
seconds added, and no skip record; a resumed walk ends from them. Otherwise the last round's
checkpoint and its record stay, and in the first round after a resume the same rule holds as in
any other (the break: a run that forgets the checkpoint it resumed from keeps nothing)."""
from __future__ import annotations

import json
import time

import numpy as np
import pytest

from gamesolver.games.ur.solve import solve
from gamesolver.solver.errors import Interrupted
from gamesolver.solver.stochastic import checkpoint, walk
from tests.test_ur_reference import mini_options
from tests.test_walk_skip_resume import STOP_AT, TOL, _resumed, _stop_in_full_sweep, _stopped


def test_the_rule_weighs_the_stopped_rounds_seconds_against_the_records_worth() -> None:
    least = checkpoint.STOP_KEEPS_AFTER
    assert checkpoint.keeps_record(least - 1, 0.0)  # a short cut: the record stays
    assert not checkpoint.keeps_record(least, 0.0)
    assert checkpoint.keeps_record(least * 3, least * 3)  # the record saves as much: it stays
    assert not checkpoint.keeps_record(least * 3, least * 2)


def test_a_records_worth_is_what_its_skipped_states_cost_to_generate() -> None:
    assert walk.record_worth([]) == 0.0
    assert walk.record_worth([{"full_s": 100.0, "generated": None}]) == 0.0  # a sweep that does not skip
    assert walk.record_worth([{"full_s": 1500.0, "generated": 1.0}]) == 0.0
    # a tenth generated in 100 s: generating the other nine tenths would take 900 s more
    assert walk.record_worth([{"full_s": 50.0, "generated": 0.5}, {"full_s": 100.0, "generated": 0.1}]) \
        == pytest.approx(900.0)
    assert walk.record_worth([{"full_s": 10.0, "generated": 0.0}]) == pytest.approx(990.0)  # (capped at 1%)


def _info(root) -> dict:
    return json.loads((root / checkpoint.CHECKPOINT_INFO).read_text())


@pytest.fixture
def pays(monkeypatch):
    """Every stop's round is worth more than the record (the seconds' floor at 0, the record at 0 s)."""
    monkeypatch.setattr(checkpoint, "STOP_KEEPS_AFTER", 0.0)
    monkeypatch.setattr(walk, "record_worth", lambda rows: 0.0)


def test_a_long_stopped_round_keeps_the_values_it_reached(tmp_path, pays) -> None:
    o = mini_options(tmp_path, 4)
    root, kept = tmp_path / "progress", tmp_path / "record"
    message = _stopped(o, root, STOP_AT)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(checkpoint, "STOP_KEEPS_AFTER", 1e9)  # the same stop, keeping the record
        _stopped(o, kept, STOP_AT)
    info, round_info = _info(root), _info(kept)
    assert info["sweeps"] == round_info["sweeps"] == STOP_AT - 1
    assert "skip" not in info and "skip" in round_info
    assert not (root / checkpoint.SKIP_FILE).exists() and not (root / checkpoint.POLICY_FILE).exists()
    values, at_round = np.load(root / checkpoint.CHECKPOINT), np.load(kept / checkpoint.CHECKPOINT)
    assert not np.array_equal(values, at_round)  # three chunks of the stopped full sweep backed up
    assert np.count_nonzero(values != at_round) <= 3000
    assert info["seconds"] > round_info["seconds"] - 0.5  # (the two runs' clocks differ a little)
    timed = ("seconds", "skip", "rounds")  # (two runs: their clocks differ)
    assert {k: v for k, v in info.items() if k not in timed} == {k: v for k, v in round_info.items() if k not in timed}
    assert [(r["sweep"], r["change"]) for r in info["rounds"]] == [(r["sweep"], r["change"]) for r in round_info["rounds"]]
    assert f"resume from its checkpoint after sweep {STOP_AT - 1}" in message
    finished, meta, said = _resumed(o, root)
    reference, _, _ = _resumed(o, kept)
    assert not any("the skip goes on" in s for s in said)
    assert np.abs(finished - reference).max() < 20 * TOL  # two walks to the tolerance from nearby values


def test_a_stop_keeps_the_record_where_it_saves_more(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(checkpoint, "STOP_KEEPS_AFTER", 0.0)
    monkeypatch.setattr(walk, "record_worth", lambda rows: 1e9)
    o = mini_options(tmp_path, 4)
    root = tmp_path / "t"
    _stopped(o, root, STOP_AT)
    assert checkpoint.keeps_skip(root) and (root / checkpoint.POLICY_FILE).is_file()
    info = _info(root)
    assert info["skip"]["crc"] == checkpoint.values_crc(np.load(root / checkpoint.CHECKPOINT))


def test_a_stop_in_the_first_round_after_a_resume_keeps_its_progress(tmp_path, monkeypatch) -> None:
    o = mini_options(tmp_path, 4)
    root = tmp_path / "t"
    _stopped(o, root, STOP_AT)  # the round's checkpoint, with its record (the floor at its default)
    before, before_values = _info(root), np.load(root / checkpoint.CHECKPOINT)
    assert "skip" in before
    monkeypatch.setattr(checkpoint, "STOP_KEEPS_AFTER", 0.0)
    monkeypatch.setattr(walk, "record_worth", lambda rows: 0.0)
    with pytest.MonkeyPatch.context() as mp:
        _stop_in_full_sweep(mp, 1)  # the resumed run's first full sweep, three chunks in ...
        cut = walk.progress_sweep

        def slow(*args, **kw):
            time.sleep(0.3)  # ... after 0.3 s, which the checkpoint's seconds count
            return cut(*args, **kw)
        mp.setattr(walk, "progress_sweep", slow)
        with pytest.raises(Interrupted):
            solve(o, root, tolerance=TOL, threads=1, graph="regenerate", policy_place="disk")
    after = _info(root)
    assert "skip" not in after and not (root / checkpoint.POLICY_FILE).exists()
    assert {k: v for k, v in after.items() if k != "seconds"} == \
        {k: v for k, v in before.items() if k not in ("seconds", "skip")}
    assert after["seconds"] >= before["seconds"] + 0.3
    values = np.load(root / checkpoint.CHECKPOINT)
    assert not np.array_equal(values, before_values)
    _resumed(o, root)  # and it ends from there
