"""Every OS fault and every abuse ends in one line and the right exit code, and leaves nothing
behind: read-only and full disks (simulated by monkeypatching, so the tests run as root too),
impossible output places, degenerate dice, runaway sizes, Ctrl-C, options that would be ignored,
and a damaged installation."""
from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gamesolver import data
from gamesolver.solver.cli import cli

SMALL_UNEE = ["unee", "--holes", "2", "--balls", "2"]


def run(args: list[str], **kwargs):
    return CliRunner().invoke(cli, args, **kwargs)


def one_line(result, code: int, *words: str) -> str:
    """The run ended with ``code`` and said one line naming ``words``; no traceback."""
    text = result.output.strip()
    assert result.exit_code == code, text
    assert "Traceback" not in text and result.exception is None or isinstance(result.exception, SystemExit), text
    last = text.splitlines()[-1]
    assert last.startswith("Error:"), text
    assert sum(line.startswith("Error:") for line in text.splitlines()) == 1, text
    for word in words:
        assert word in last, (word, last)
    return last


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# ---------------------------------------------------------------- read-only places


@pytest.fixture
def read_only(monkeypatch):
    """Make the given folders read-only for os.access and for creating files in them, as a
    chmod would for a user other than root."""
    blocked: list[Path] = []

    real_access = os.access
    real_mkdir = Path.mkdir
    real_mkdtemp = __import__("tempfile").mkdtemp
    real_mkstemp = __import__("tempfile").mkstemp

    def inside(path) -> bool:
        p = Path(path).absolute()
        return any(p == b or b in p.parents for b in blocked)

    def access(path, mode, *a, **k):
        if mode & os.W_OK and inside(path):
            return False
        return real_access(path, mode, *a, **k)

    def mkdir(self, *a, **k):
        if inside(self):
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real_mkdir(self, *a, **k)

    def mkdtemp(*a, dir=None, **k):
        if dir is not None and inside(dir):
            raise PermissionError(errno.EACCES, "Permission denied", str(dir))
        return real_mkdtemp(*a, dir=dir, **k)

    def mkstemp(*a, dir=None, **k):
        if dir is not None and inside(dir):
            raise PermissionError(errno.EACCES, "Permission denied", str(dir))
        return real_mkstemp(*a, dir=dir, **k)

    monkeypatch.setattr(os, "access", access)
    monkeypatch.setattr(Path, "mkdir", mkdir)
    monkeypatch.setattr("tempfile.mkdtemp", mkdtemp)
    monkeypatch.setattr("tempfile.mkstemp", mkstemp)
    return blocked


def test_unee_solve_out_read_only(tmp_path, read_only):
    read_only.append(tmp_path)
    one_line(run(SMALL_UNEE + ["solve", "--out", str(tmp_path / "t")]), 2, str(tmp_path / "t"), "writable")
    assert leftovers(tmp_path) == []


def test_unee_first_query_with_read_only_cache(tmp_path, read_only):
    read_only.append(tmp_path)
    one_line(run(SMALL_UNEE + ["best-move", "start", "--cache", str(tmp_path)]), 2, "writable")
    assert leftovers(tmp_path) == []


def test_ur_solve_out_read_only(tmp_path, read_only):
    read_only.append(tmp_path)
    one_line(run(["ur", "solve", "--pieces", "1", "--out", str(tmp_path / "t")]), 2, "writable")
    assert leftovers(tmp_path) == []


def test_ur_first_query_with_read_only_cache(tmp_path, read_only):
    read_only.append(tmp_path)
    one_line(run(["ur", "best-move", "start", "--roll", "gold+gold", "--pieces", "1", "--cache", str(tmp_path)]),
             2, "writable")
    assert leftovers(tmp_path) == []


def test_ulus_race_read_only_cache(tmp_path, read_only):
    read_only.append(tmp_path)
    one_line(run(["ulus", "race", "--players", "2", "--cache", str(tmp_path)]), 2, "writable")
    assert leftovers(tmp_path) == []


def test_unee_export_into_read_only_folder(tmp_path, read_only):
    cache = tmp_path / "cache"
    assert run(SMALL_UNEE + ["solve", "--cache", str(cache)]).exit_code == 0
    out = tmp_path / "ro"
    out.mkdir()
    read_only.append(out)
    one_line(run(SMALL_UNEE + ["export", "--cache", str(cache), "--out", str(out / "x.csv")]), 2, "writable")
    assert leftovers(out) == []


def test_unee_export_when_the_temporary_file_cannot_be_made(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    assert run(SMALL_UNEE + ["solve", "--cache", str(cache)]).exit_code == 0

    def refuse(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr("tempfile.mkstemp", refuse)
    # the folder refuses the file: the user's path to change (2), said with the system's reason
    one_line(run(SMALL_UNEE + ["export", "--cache", str(cache), "--out", str(tmp_path / "x.csv")]), 2,
             "Permission denied", "x.csv", "give another path")
    assert not (tmp_path / "x.csv").exists()
    monkeypatch.setattr("tempfile.mkstemp", _full_disk)  # the system's fault: 1
    one_line(run(SMALL_UNEE + ["export", "--cache", str(cache), "--out", str(tmp_path / "x.csv")]), 1,
             "No space left", "x.csv")


# ---------------------------------------------------------------- a full disk


def _full_disk(*a, **k):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_unee_solve_on_a_full_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(np, "save", _full_disk)
    one_line(run(SMALL_UNEE + ["solve", "--out", str(tmp_path / "t")]), 1, "No space left on device")
    assert leftovers(tmp_path) == []


def test_unee_query_on_a_full_cache_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(np, "save", _full_disk)
    one_line(run(SMALL_UNEE + ["analyze", "start", "--cache", str(tmp_path)]), 1, "No space left on device")
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_ur_solve_on_a_full_disk(tmp_path, monkeypatch):
    # the table's arrays are written last; a fault there leaves no table and no temporary folder
    from gamesolver.solver.tables import table as table_mod

    monkeypatch.setattr(table_mod.np, "save", _full_disk)
    one_line(run(["ur", "solve", "--pieces", "1", "--out", str(tmp_path / "t")]), 1, "No space left on device")
    assert not (tmp_path / "t" / "header.json").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("fmt", ["csv", "npy"])
def test_unee_export_on_a_full_disk(tmp_path, monkeypatch, fmt):
    cache = tmp_path / "cache"
    assert run(SMALL_UNEE + ["solve", "--cache", str(cache)]).exit_code == 0
    out = tmp_path / "out"
    out.mkdir()
    if fmt == "npy":
        monkeypatch.setattr(np, "save", _full_disk)
    else:
        from gamesolver.games.unee import export as export_mod

        def full_after_header(f, *a, **k):
            f.write("position,side\n")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(export_mod, "write_csv", full_after_header)
        monkeypatch.setattr("gamesolver.games.unee.export.write_csv", full_after_header)
    one_line(run(SMALL_UNEE + ["export", "--format", fmt, "--cache", str(cache), "--out", str(out / f"x.{fmt}")]),
             1, "No space left on device", f"x.{fmt}")
    assert leftovers(out) == []


def test_an_unforeseen_os_fault_is_one_line(tmp_path, monkeypatch):
    from gamesolver.games.ulus import race as race_mod

    def broken(*a, **k):
        raise OSError(errno.EIO, os.strerror(errno.EIO), "/dev/sdz")

    monkeypatch.setattr(race_mod, "solve_race", broken)
    one_line(run(["ulus", "race", "--players", "2", "--no-save"]), 1, "Input/output error", "/dev/sdz")


# ---------------------------------------------------------------- impossible output places


def test_unee_solve_out_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    one_line(run(SMALL_UNEE + ["solve", "--out", "."]), 2, "current folder")
    (tmp_path / "precious.txt").write_text("thesis")
    one_line(run(SMALL_UNEE + ["solve", "--out", "."]), 2)
    assert leftovers(tmp_path) == ["precious.txt"]


def test_unee_solve_out_in_proc():
    result = run(SMALL_UNEE + ["solve", "--out", "/proc/x"])
    # refused up front (2) where os.access already says no, by the OS while writing (1) for root
    assert result.exit_code in (1, 2)
    one_line(result, result.exit_code, "/proc/x")
    assert not Path("/proc/x").exists()


def test_unee_export_out_in_proc_and_to_a_folder(tmp_path):
    cache = tmp_path / "cache"
    assert run(SMALL_UNEE + ["solve", "--cache", str(cache)]).exit_code == 0
    result = run(SMALL_UNEE + ["export", "--cache", str(cache), "--out", "/proc/x.csv"])
    # a place that takes no file is the user's path to change: exit 2, as for a missing folder
    one_line(result, 2, "/proc/x.csv")
    one_line(run(SMALL_UNEE + ["export", "--cache", str(cache), "--out", str(tmp_path / "none" / "x.csv")]), 2)
    # click refuses an existing folder for a file option: still one line, exit 2
    one_line(run(SMALL_UNEE + ["export", "--cache", str(cache), "--out", str(tmp_path)]), 2)


# ---------------------------------------------------------------- dice that never move


@pytest.mark.parametrize("command", [["ghosts", "race", "--distance", "5"], ["ghosts", "move"]])
def test_ghosts_probs_that_never_move(command):
    one_line(run(command + ["--probs", "1,0,0,0,0"]), 2, "--probs", "P(0) < 1")
    one_line(run(command + ["--probs", "0,0,1,0,0"]), 2, "--probs", "P(2) < 1")


def test_ghosts_probs_of_only_zeros_and_twos_still_finish():
    result = run(["ghosts", "race", "--distance", "5", "--probs", "1/2,0,1/2,0,0", "--json"])
    assert result.exit_code == 0, result.output


# ---------------------------------------------------------------- runaway sizes


@pytest.mark.parametrize("command, option", [
    (["ghosts", "clear", "--kish", "1000"], "--kish"),
    (["ghosts", "clear", "--kish", "2", "--steps", "100000"], "--steps"),
    (["ghosts", "race", "--distance", "100000"], "--distance"),
])
def test_runaway_sizes_ask_for_force(command, option):
    line = one_line(run(command), 2, option, "--force")
    assert any(unit in line for unit in ("hours", "days", "years")), line


@pytest.mark.parametrize("command, option", [
    (["ghosts", "nanna", "--attempts", "100000"], "--attempts"),
    (["uluk", "process", "--max-n", "100000000"], "--max-n"),
])
def test_runaway_sizes_are_bounded(command, option):
    one_line(run(command), 2, option, "at most")


def test_force_runs_beyond_the_quick_size(monkeypatch):
    from gamesolver.games.ghosts import cli as ghosts_cli

    monkeypatch.setattr(ghosts_cli, "RACE_QUICK_DISTANCE", 3)
    monkeypatch.setattr(ghosts_cli, "CLEAR_QUICK_KISH", 1)
    one_line(run(["ghosts", "race", "--distance", "4"]), 2, "--force")
    one_line(run(["ghosts", "clear", "--kish", "2"]), 2, "--force")
    forced = run(["ghosts", "race", "--distance", "4", "--force", "--json"])
    assert forced.exit_code == 0, forced.output
    assert run(["ghosts", "clear", "--kish", "2", "--force"]).exit_code == 0


def test_limits_estimate_and_wording():
    from gamesolver.solver.limits import check_cost, duration_text, estimate_seconds

    assert estimate_seconds(200, 100, 3.0, 3) == pytest.approx(24.0)
    assert duration_text(40) == "about 40 s" and duration_text(7200) == "about 2.0 hours"
    assert duration_text(1e12) == "more than ten years"
    check_cost("--n", 5, 10, 1e9, False)  # within the quick size: no question asked
    check_cost("--n", 50, 10, 1e9, True)  # forced
    with pytest.raises(ValueError, match="--force"):
        check_cost("--n", 50, 10, 1e9, False)


# ---------------------------------------------------------------- Ctrl-C


def test_ctrl_c_exits_130_and_leaves_no_temporary_table(tmp_path, monkeypatch):
    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "save", interrupted)
    result = run(SMALL_UNEE + ["solve", "--out", str(tmp_path / "t")])
    assert result.exit_code == 130, result.output
    assert "interrupted" in result.output and "Traceback" not in result.output
    assert leftovers(tmp_path) == []


def test_ctrl_c_during_a_calculation_exits_130(monkeypatch):
    from gamesolver.games.ghosts import combat

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(combat, "nanna", interrupted)
    assert run(["ghosts", "nanna"]).exit_code == 130


# ---------------------------------------------------------------- options that would be ignored


def test_feast_without_final():
    one_line(run(["uluk", "feed", "--tribers", "2", "--feast", "/nonexistent"]), 2, "--feast", "--final")


@pytest.mark.parametrize("extra", [["--turn", "2"], ["--ability-used", "--alun-gua", "1"]])
def test_race_state_without_from(extra):
    one_line(run(["ulus", "race", "--players", "2", "--no-save"] + extra), 2, "--from")


@pytest.mark.parametrize("command", [["ulus", "shagai"], ["ulus", "fight", "--strength", "3", "--multiplier", "1",
                                                         "--players", "2"], ["ghosts", "nanna"]])
def test_json_and_csv_together(command):
    one_line(run(command + ["--json", "--csv"]), 2, "--json", "--csv")


# ---------------------------------------------------------------- a damaged installation


@pytest.mark.parametrize("file, command, module", [
    ("ghosts_rules.json", ["ghosts", "nanna"], "gamesolver.games.ghosts.rules"),
    ("ulus_presets.json", ["ulus", "shagai"], "gamesolver.games.ulus.shagai"),
    ("uluk_rules.json", ["uluk", "process"], "gamesolver.games.uluk.rules"),
])
def test_missing_shipped_data_file(tmp_path, monkeypatch, file, command, module):
    import importlib

    real = data.path

    def path(*parts):
        return tmp_path / "gone" if parts == (file,) else real(*parts)

    monkeypatch.setattr(data, "path", path)
    rules = importlib.import_module(module).rules
    rules.cache_clear()
    try:
        one_line(run(command), 1, "shipped data file", "reinstall")
    finally:
        rules.cache_clear()


def test_missing_ur_board_file(tmp_path, monkeypatch):
    from gamesolver.games.ur import rules as ur_rules

    monkeypatch.setattr(ur_rules, "DEFAULT_BOARD", tmp_path / "ur_board.json")
    ur_rules.load_board.cache_clear() if hasattr(ur_rules.load_board, "cache_clear") else None
    one_line(run(["ur", "show", "start"]), 1, "shipped data file", "ur_board.json")
    # a user's own board file that is missing stays a bad input
    one_line(run(["ur", "show", "start", "--board", str(tmp_path / "mine.json")]), 2, "mine.json")


# ---------------------------------------------------------------- damaged tables


def test_a_truncated_array_file_is_named(tmp_path):
    table = tmp_path / "t"
    assert run(SMALL_UNEE + ["solve", "--out", str(table)]).exit_code == 0
    data_file = table / "remoteness.npy"
    data_file.write_bytes(data_file.read_bytes()[:100])
    before = sorted(p.name for p in table.iterdir())
    one_line(run(SMALL_UNEE + ["best-move", "start", "--table", str(table)]), 1, "remoteness.npy", "truncated")
    assert sorted(p.name for p in table.iterdir()) == before


def test_long_work_reports_progress():
    from gamesolver.games.ghosts import combat, movement

    seen: list[float] = []
    rows, tail = movement.race(12, on_turn=seen.append)
    assert len(seen) == len(rows) and seen == sorted(seen) and seen[-1] == pytest.approx(1 - float(tail))
    ticks: list[int] = []
    combat.clear_tile(3, 10, max_steps=7, on_step=lambda: ticks.append(1))
    assert len(ticks) == 7


def test_cycle_out_is_checked_before_the_work_and_never_silently_dropped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    one_line(run(SMALL_UNEE + ["cycle", "start", "--shortest", "--out", "x.txt"]), 2, "--out", ".png")
    quiet = run(SMALL_UNEE + ["cycle", "start", "--shortest", "--out", "x.png"])
    assert quiet.exit_code == 0 and "nothing written to x.png" in quiet.output
    assert leftovers(tmp_path) == []


def test_a_closed_pipe_ends_quietly(monkeypatch):
    from gamesolver.games.ghosts import cli as ghosts_cli

    def closed(*a, **k):
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    monkeypatch.setattr(ghosts_cli, "emit", closed)
    result = run(["ghosts", "ambush"])
    assert result.exit_code == 141 and "Error" not in result.output and "Traceback" not in result.output


def test_durations_keep_a_decimal_below_ten_days() -> None:
    from gamesolver.solver.limits import duration

    assert duration(59.5 * 3600) == "2.5 days" and duration(47 * 3600) == "47.0 hours"
    assert duration(12 * 86400) == "12 days" and duration(100) == "2 minutes"
