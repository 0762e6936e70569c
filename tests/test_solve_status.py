"""``solver ur solve --status``: what a solve's folder holds, read without disturbing a solve that
runs there (solver.stochastic.checkpoint.report, solver.tables.lock.holder): whether one runs, the
checkpoint's stage, round, largest change and time, whether it belongs to the command's options,
and how to go on."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from gamesolver.games.ur.solve import solve
from gamesolver.solver.cli import cli
from gamesolver.solver.stochastic import checkpoint, schedule
from gamesolver.solver.tables.lock import LOCK_FILE, folder_lock, holder
from tests.test_folder_lock import Holder
from tests.test_stochastic_resume import StoppedSweeps
from tests.test_ur_reference import MINI_BOARD, mini_options


def status(board, out, *extra: str, pieces: int = 4) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["ur", "solve", "--pieces", str(pieces), "--board", str(board), "--out", str(out),
                                 "--status", *extra])
    return r.exit_code, r.output


def test_the_probe_names_the_holder_and_leaves_the_folder_as_it_was(tmp_path) -> None:
    assert holder(tmp_path) is None and not (tmp_path / LOCK_FILE).exists()  # asking creates nothing
    h = Holder(tmp_path)
    try:
        assert holder(tmp_path).startswith(f"pid {h.proc.pid} since ")
        assert holder(tmp_path).startswith(f"pid {h.proc.pid} ")  # asked twice: the probe took nothing from it
    finally:
        h.kill()
    assert holder(tmp_path) is None  # gone with its holder; the file stays
    with folder_lock(tmp_path):  # this process's own hold is no other solve
        assert holder(tmp_path) is None


def test_a_stopped_solve_says_its_stage_round_and_time_and_how_to_go_on(tmp_path, monkeypatch) -> None:
    o = mini_options(tmp_path, 4)
    board = o.board_file
    root = tmp_path / "t"
    code, text = status(board, root)
    assert code == 0 and "no solve is running there" in text and "no such folder yet" in text
    sweeps = StoppedSweeps(monkeypatch, (4,), each=40.0)  # 40 s a full sweep; the fourth is stopped
    with pytest.raises(KeyboardInterrupt):
        solve(o, root, tolerance=1e-6, threads=1, graph="regenerate")
    sweeps.restore()
    info = json.loads((root / checkpoint.CHECKPOINT_INFO).read_text())
    code, text = status(board, root)
    lines = text.strip().splitlines()
    assert code == 0 and lines[0] == f"{root}: no solve is running there", text
    assert lines[1] == (f"checkpoint after sweep 3: the walk's stage 1 of 4 (1 - discount 0.01, ends at a change "
                        f"below {schedule.stage_end(0, 1e-6):g}), largest change "
                        f"{info['change']:.3g}; 2 minutes of solving in the rounds it keeps")
    # the rounds the checkpoint keeps (three, each 40 s by the fake clock; too few for an outlook)
    assert lines[2].startswith("rounds kept: stage 1: 3 (largest change ") and "the last took 40 s (full sweep 40.0 s" in lines[2]
    assert lines[3] == "the same command without --status resumes from it" and lines[4].startswith("files: ")
    code, text = status(board, root, "--json")
    fields = json.loads(text)
    assert fields["checkpoint"]["sweeps"] == 3 and fields["checkpoint"]["seconds"] == 120.0
    assert fields["running"] is None and fields["checkpoint"]["same_options"] is True
    # another piece count would not resume from it
    code, text = status(board, root, pieces=3)
    assert "belongs to other options: this command would ignore it and start over" in text
    # while a solve holds the folder: who, and no "resumes" (the same command would be refused)
    h = Holder(root)
    try:
        code, text = status(board, root)
    finally:
        h.kill()
    assert f"a solve is running there (pid {h.proc.pid} since " in text and "resumes" not in text
    assert "checkpoint after sweep 3" in text
    # the solve goes on to its table, which the folder then holds
    solve(o, root, tolerance=1e-6, threads=1, graph="regenerate")
    code, text = status(board, root)
    assert "it holds a finished table: queries read it with --table" in text and "checkpoint" not in text


def test_an_unreadable_checkpoint_and_an_older_one_are_said_so(tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    root = tmp_path / "t"
    root.mkdir()
    (root / checkpoint.CHECKPOINT_INFO).write_text("{not json")
    code, text = status(o.board_file, root)
    assert code == 0 and "its checkpoint cannot be read (JSONDecodeError" in text and "start over" in text
    (root / checkpoint.CHECKPOINT_INFO).write_text(json.dumps({
        "sweeps": 12, "stage": 3, "discounts": [0.01, 0.0001, 1e-06], "change": 2e-5, "method": "walk",
        "options": o.header()}))
    code, text = status(o.board_file, root)
    assert ("checkpoint after sweep 12: the walk's stage 4 of 4 (undiscounted), largest change 2e-05; its time is "
            "not recorded (a checkpoint of an older build)") in text
    # with its tolerance recorded, where this build ends the stage (the undiscounted one: a residual)
    (root / checkpoint.CHECKPOINT_INFO).write_text(json.dumps({
        "sweeps": 12, "stage": 3, "discounts": list(schedule.WALK_DISCOUNTS), "change": 2e-5, "method": "walk",
        "options": o.header(), "tolerance": 1e-5}))
    code, text = status(o.board_file, root)
    assert "the walk's stage 4 of 4 (undiscounted, ends at a residual below 1e-05), largest change 2e-05" in text
    for odd in ({"stage": 9}, {"stage": "two"}, {"discounts": "many"}, {"tier": None}):  # said, never a traceback
        info = {"sweeps": 12, "stage": 1, "discounts": [0.01, 0.0001, 1e-06], "method": "walk", **odd}
        (root / checkpoint.CHECKPOINT_INFO).write_text(json.dumps(info))
        code, text = status(o.board_file, root)
        assert code == 0 and "its checkpoint cannot be read" in text and "Traceback" not in text, (odd, text)


def test_files_that_vanish_while_counted_count_nothing(tmp_path, monkeypatch) -> None:
    """A running solve renames its checkpoint's temporaries while --status counts the folder."""
    (tmp_path / "checkpoint.npy.tmp").write_bytes(b"x" * 10)
    (tmp_path / "kept").write_bytes(b"x" * 7)
    real = type(tmp_path).stat
    asked: dict[str, int] = {}

    def gone(self, *a, **kw):  # there when first looked at, renamed by the second look
        asked[self.name] = asked.get(self.name, 0) + 1
        if self.name.endswith(".tmp") and asked[self.name] > 1:
            raise FileNotFoundError(self)
        return real(self, *a, **kw)

    monkeypatch.setattr(type(tmp_path), "stat", gone)
    assert checkpoint.report(tmp_path, {})["bytes"] == 7


def test_status_refuses_what_solve_refuses(tmp_path) -> None:
    board = tmp_path / "mini.json"
    board.write_text(json.dumps(MINI_BOARD))
    r = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "4", "--board", str(board), "--out", str(tmp_path / "a"),
                                 "--cache", str(tmp_path / "c"), "--status"])
    assert r.exit_code != 0 and "--out and --cache both" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(cli, ["ur", "solve", "--rules", "finkel", "--pieces", "2", "--cache", str(tmp_path),
                                 "--status"])
    assert r.exit_code != 0 and "applies to the fort rules only" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(cli, ["ur", "solve", "--rules", "finkel", "--pieces", "2", "--out", str(tmp_path / "f"),
                                 "--status"])
    assert r.exit_code == 0 and "no solve is running there" in r.output
