"""One solve a folder (solver/tables/lock.py): a solve started on a folder that another running
solve holds is refused in one line and touches nothing there; the lock goes with its holder,
however that ends; it is re-entrant within a process; and a folder holding only the lock file
counts as empty to the table writers."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gamesolver.games.ur.solve import solve
from gamesolver.solver.cli import cli
from gamesolver.solver.errors import FolderBusyError
from gamesolver.solver.stochastic import checkpoint
from gamesolver.solver.tables import lock
from gamesolver.solver.tables.lock import LOCK_FILE, folder_lock
from gamesolver.solver.tables.table import prepare_table_dir, write_table
from tests.test_ur_reference import MINI_BOARD, mini_options


class Holder:
    """Another process holding ``folder``'s lock until stopped."""

    def __init__(self, folder: Path) -> None:
        code = textwrap.dedent(f"""
            import sys, time
            from gamesolver.solver.tables.lock import folder_lock
            with folder_lock({str(folder)!r}):
                print("held", flush=True)
                time.sleep(120)
        """)
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "held"

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != LOCK_FILE}


def test_a_second_solve_on_a_held_folder_is_refused_and_changes_nothing(tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    root = tmp_path / "t"
    with pytest.raises(RuntimeError, match="no convergence"):  # a stopped run's checkpoint to resume
        solve(o, root, tolerance=1e-6, threads=1, method="sweeps", graph="regenerate", max_sweeps=2)
    before = snapshot(root)
    holder = Holder(root)
    try:
        with pytest.raises(FolderBusyError, match=rf"another solve is writing .*t \(pid {holder.proc.pid} since "):
            solve(o, root, tolerance=1e-6, threads=1, method="sweeps", graph="regenerate")
        assert snapshot(root) == before  # its checkpoint untouched
    finally:
        holder.kill()
    # killed without a word: the system dropped its lock, and the same command resumes
    said: list[str] = []
    table = solve(o, root, tolerance=1e-6, threads=1, method="sweeps", graph="regenerate", log=said.append)
    assert any("resuming from the checkpoint after sweep 2" in s for s in said)
    assert np.abs(np.asarray(table["value"])).max() > 0.1


def test_the_cli_says_so_in_one_line_with_exit_1(tmp_path) -> None:
    board = tmp_path / "mini.json"
    board.write_text(json.dumps(MINI_BOARD))
    out = tmp_path / "t"
    out.mkdir()
    holder = Holder(out)
    try:
        r = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "3", "--board", str(board), "--out", str(out),
                                     "--no-proof"])
    finally:
        holder.kill()
    assert r.exit_code == 1, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: another solve is writing") and "resume" in lines[0]
    assert [p.name for p in out.iterdir()] == [LOCK_FILE]  # nothing written beside the holder's file


def test_a_resume_holds_its_folder_before_building_the_generator(tmp_path, monkeypatch) -> None:
    """The generator and the table's spec take some 25 s to build at seven pieces: a resume holds
    its folder's lock through that build (so ``--status`` and a second solve see it at once), and
    one started on a held folder is refused before building anything."""
    import gamesolver.games.ur.solve as ur_solve

    o = mini_options(tmp_path, 4)
    root = tmp_path / "t"
    with pytest.raises(RuntimeError, match="no convergence"):
        solve(o, root, tolerance=1e-6, threads=1, method="sweeps", graph="regenerate", max_sweeps=2)
    real = ur_solve.kernel
    held_at_build: list[bool] = []

    def watched(options):
        held_at_build.append(str(root.resolve()) in lock._held)
        return real(options)

    monkeypatch.setattr(ur_solve, "kernel", watched)
    solve(o, root, tolerance=1e-6, threads=1, method="sweeps", graph="regenerate")
    assert held_at_build and held_at_build[0]

    def refused(options):
        raise AssertionError("the generator was built for a solve on a held folder")

    other = tmp_path / "other"  # another stopped solve, held by another process
    monkeypatch.setattr(ur_solve, "kernel", real)
    with pytest.raises(RuntimeError, match="no convergence"):
        solve(o, other, tolerance=1e-6, threads=1, method="sweeps", graph="regenerate", max_sweeps=2)
    monkeypatch.setattr(ur_solve, "kernel", refused)
    holder = Holder(other)
    try:
        with pytest.raises(FolderBusyError, match="another solve is writing"):
            solve(o, other, tolerance=1e-6, threads=1, method="sweeps", graph="regenerate")
    finally:
        holder.kill()


def test_the_lock_is_reentrant_in_a_process_and_released_after(tmp_path) -> None:
    with folder_lock(tmp_path):
        with folder_lock(tmp_path):  # the table writer around the solve
            pass
        assert str(tmp_path.resolve()) in lock._held  # the outer hold remains
        probe = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
            from gamesolver.solver.tables.lock import folder_lock
            try:
                with folder_lock({str(tmp_path)!r}):
                    print("got it")
            except Exception as exc:
                print(type(exc).__name__)
        """)], capture_output=True, text=True, timeout=60)
        assert probe.stdout.strip() == "FolderBusyError"
    assert not lock._held
    with folder_lock(tmp_path):  # free again
        pass


def test_a_lock_file_that_moved_is_not_trusted(tmp_path, monkeypatch) -> None:
    """Between the open and the lock the folder's file was replaced (a table swapped in): the lock
    must end on the file now at the path, so that a newcomer there is kept out."""
    real = lock.fcntl.flock
    calls = []

    def swap_first(fd: int, op: int) -> None:
        if not calls:
            os.rename(tmp_path / LOCK_FILE, tmp_path / "old.lock")
            (tmp_path / LOCK_FILE).write_text("")
        calls.append(op)
        real(fd, op)

    monkeypatch.setattr(lock.fcntl, "flock", swap_first)
    with folder_lock(tmp_path):
        assert len(calls) == 2  # the first lock, on the moved file, was let go and taken again
        monkeypatch.setattr(lock.fcntl, "flock", real)
        probe = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
            import fcntl, os
            fd = os.open({str(tmp_path / LOCK_FILE)!r}, os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                print("free")
            except BlockingIOError:
                print("held")
        """)], capture_output=True, text=True, timeout=60)
        assert probe.stdout.strip() == "held"


def test_a_folder_with_only_the_lock_file_counts_as_empty(tmp_path) -> None:
    root = tmp_path / "t"
    root.mkdir()
    (root / LOCK_FILE).write_text("pid 1 since then\n")  # left by a run killed before its first checkpoint
    prepare_table_dir(root)
    write_table(root, game="g", rule="r", encoding="e", encoding_version=1, state_count=2,
                arrays={"value": np.zeros(2, dtype=np.float32)})
    assert (root / "value.npy").exists() and not (root / LOCK_FILE).exists()
    other = tmp_path / "o"
    other.mkdir()
    (other / LOCK_FILE).write_text("")
    (other / "notes.txt").write_text("mine")
    with pytest.raises(Exception, match="holds other files"):
        prepare_table_dir(other)
    assert checkpoint.CHECKPOINT not in os.listdir(other)
