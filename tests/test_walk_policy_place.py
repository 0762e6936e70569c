"""The walk's policy mapped from a file (``--walk-policy disk``, or ``auto`` where it does not fit
in half the memory): the same values bit for bit as the policy in memory, no file left behind
when the run ends or stops, and a disk without room refused before anything is written."""
from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from gamesolver.games.ur import kernel
from gamesolver.games.ur.solve import solve
from gamesolver.solver.stochastic import iteration
from gamesolver.solver.stochastic import checkpoint
from gamesolver.solver.stochastic import planning
from gamesolver.solver.cli import cli
from gamesolver.solver.errors import InputError
from tests.test_ur_reference import mini_options


def _solve(o, root, place, said=None, threads=2, **kw):
    return solve(o, root, tolerance=1e-6, threads=threads, graph="regenerate", policy_place=place,
                 log=None if said is None else said.append, **kw)


def test_a_mapped_policy_gives_the_same_values_bit_for_bit(tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    said: list[str] = []
    # one thread: two threads' sweeps read each other's fresh values in no fixed order
    held = _solve(o, tmp_path / "memory", "memory", threads=1)
    mapped = _solve(o, tmp_path / "disk", "disk", said, threads=1)
    assert any("policy" in s and "is mapped from" in s and checkpoint.POLICY_FILE in s for s in said)
    assert any("of policy (mapped from disk)" in s for s in said if s.startswith("estimate:"))
    assert np.abs(np.asarray(held["value"])).max() > 0.1  # a game someone wins, not all zeros
    assert np.array_equal(np.asarray(held["value"]), np.asarray(mapped["value"]))
    for key in ("sweeps", "policy_sweeps", "hot_set_states"):
        assert held.meta[key] == mapped.meta[key]
    assert mapped.meta["bytes_per_state"]["policy"] == 4 * 6
    assert (held.meta["policy_place"], mapped.meta["policy_place"]) == ("memory", "disk")
    assert not (tmp_path / "disk" / checkpoint.POLICY_FILE).exists()
    assert not (tmp_path / "disk" / checkpoint.COPY_FILE).exists()  # the skipping walk's copy, mapped beside it


def test_auto_maps_the_policy_where_it_does_not_fit_in_half_the_memory(tmp_path, monkeypatch) -> None:
    o = mini_options(tmp_path, 3)
    n = kernel(o).state_count
    # room for the walk's marks (2 bytes a state) in half the memory, not for its policy (24)
    monkeypatch.setattr(planning, "memory_bytes", lambda: 2 * 10 * n)
    said: list[str] = []
    table = _solve(o, tmp_path / "t", "auto", said)
    assert any("is mapped from" in s for s in said) and table.meta["method"] == "walk"
    with pytest.raises(InputError, match="more than half of this machine's memory; use --walk-policy disk or"):
        _solve(o, tmp_path / "refused", "memory")
    assert not (tmp_path / "refused").exists()


def test_a_stopped_walk_leaves_no_policy_file_and_resumes(tmp_path, monkeypatch) -> None:
    o = mini_options(tmp_path, 4)
    root = tmp_path / "t"
    real = checkpoint.write_checkpoint
    written = []

    def stop_after_two(where, values, info):
        real(where, values, info)
        written.append(info["sweeps"])
        assert (where / checkpoint.POLICY_FILE).exists()  # mapped while the walk runs
        assert (where / checkpoint.COPY_FILE).exists()  # ... with the skipping walk's copy of the values
        if len(written) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint, "write_checkpoint", stop_after_two)
    with pytest.raises(KeyboardInterrupt):
        _solve(o, root, "disk")
    assert not (root / checkpoint.POLICY_FILE).exists() and (root / checkpoint.CHECKPOINT).exists()
    assert not (root / checkpoint.COPY_FILE).exists()
    monkeypatch.setattr(checkpoint, "write_checkpoint", real)
    said: list[str] = []
    resumed = _solve(o, root, "disk", said)
    assert resumed.meta["resumed_at_sweep"] == written[-1] > 0
    fresh = _solve(o, tmp_path / "fresh", "memory")
    assert np.abs(np.asarray(resumed["value"]) - np.asarray(fresh["value"])).max() < 1e-4
    assert not (root / checkpoint.POLICY_FILE).exists()


def test_a_stop_while_the_policy_file_is_mapped_stops_cleanly(tmp_path, monkeypatch) -> None:
    # a stop (Ctrl-C, a scheduler's SIGTERM) can land while the policy file is still being made:
    # the run stops as interrupted, not with an error of its own, and leaves no policy file
    o = mini_options(tmp_path, 3)
    root = tmp_path / "t"
    real = np.lib.format.open_memmap

    def stopped(path, *args, **kw):
        real(path, *args, **kw)  # the file exists, as a stop half way through would leave it
        raise KeyboardInterrupt

    monkeypatch.setattr(np.lib.format, "open_memmap", stopped)
    with pytest.raises(KeyboardInterrupt):
        _solve(o, root, "disk")
    assert not (root / checkpoint.POLICY_FILE).exists()


@pytest.mark.parametrize("place", ["disk", "memory"])
def test_a_disk_without_room_is_refused_before_anything_is_written(tmp_path, monkeypatch, place) -> None:
    o = mini_options(tmp_path, 4)
    n = kernel(o).state_count

    class Usage:  # room for the checkpoint twice, not for a mapped policy besides
        free = 2 * 4 * n + 100

    monkeypatch.setattr(planning.shutil, "disk_usage", lambda path: Usage())
    if place == "memory":
        _solve(o, tmp_path / "fits", place)  # the checkpoint twice fits
        Usage.free = 4 * n
        with pytest.raises(InputError, match=r"the solve needs about .* GiB on the disk at .* \(its checkpoint, "
                                             r".* GiB, twice while it is replaced\) and .* GiB are free; free some "
                                             r"disk space or give another --out$"):
            _solve(o, tmp_path / "new" / "t", place)
    else:
        with pytest.raises(InputError, match=r"; the walk's policy, .* GiB, which does not fit in half of this "
                                             r"machine's memory; the skip's leads and stamps, .* GiB, twice while "
                                             r"they are replaced\) and .* GiB are free; .* or use --method sweeps$"):
            _solve(o, tmp_path / "new" / "t", place)
    assert not (tmp_path / "new").exists()


def test_a_stopped_run_s_files_count_as_free_space(tmp_path, monkeypatch) -> None:
    root = tmp_path / "t"
    root.mkdir()
    (root / checkpoint.CHECKPOINT).write_bytes(b"x" * 4000)
    (root / checkpoint.POLICY_FILE).write_bytes(b"x" * 24000)

    class Usage:
        free = 4000

    monkeypatch.setattr(planning.shutil, "disk_usage", lambda path: Usage())
    planning.check_disk(root, 4000, 24000)  # 32,000 needed: 4,000 free plus the 28,000 it rewrites
    with pytest.raises(InputError, match="the solve needs about"):
        planning.check_disk(root, 4000, 24001)


def test_the_skip_file_counts_twice_and_a_stopped_run_s_as_free(tmp_path, monkeypatch) -> None:
    # a walk whose policy is on disk writes the skip's two bytes a state at each round's checkpoint,
    # under a temporary name beside the last one
    root = tmp_path / "t"
    root.mkdir()

    class Usage:
        free = 2 * 4000 + 24000 + 2 * 2000

    monkeypatch.setattr(planning.shutil, "disk_usage", lambda path: Usage())
    planning.check_disk(root, 4000, 24000, skip_bytes=2000)
    with pytest.raises(InputError, match=r"the skip's leads and stamps, .* GiB, twice while they are replaced\)"):
        planning.check_disk(root, 4000, 24000, skip_bytes=2001)
    (root / checkpoint.SKIP_FILE).write_bytes(b"x" * 2)  # a stopped run's, rewritten by the run that resumes
    planning.check_disk(root, 4000, 24000, skip_bytes=2001)


@pytest.mark.parametrize("args, says", [
    (["--walk-policy", "disk", "--method", "sweeps"], "--walk-policy applies to the walk"),
    (["--walk-policy", "memory", "--backend", "ray"], "--walk-policy applies to the walk"),
    (["--walk-policy", "sideways"], "Invalid value for '--walk-policy'"),
    (["--walk-policy", "disk", "--rules", "finkel"], "--walk-policy applies to the fort rules"),
])
def test_the_cli_says_where_walk_policy_does_not_apply(tmp_path, args, says) -> None:
    result = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "2", "--out", str(tmp_path / "t"), *args])
    assert result.exit_code in (1, 2) and says in result.output and "Traceback" not in result.output
    assert not (tmp_path / "t").exists()


def test_sigterm_stops_a_solve_as_ctrl_c_does(tmp_path) -> None:
    # a scheduler's stop: the mapped policy removed, the interrupted exit code, one line
    import os
    import signal
    import subprocess
    import sys
    import time

    root = tmp_path / "t"
    cmd = [sys.executable, "-m", "gamesolver.solver", "ur", "solve", "--pieces", "4", "--walk-policy", "disk",
           "--graph", "regenerate", "--threads", "2", "--tolerance", "1e-5", "--out", str(root)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while not (root / checkpoint.POLICY_FILE).exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, proc.communicate()
        os.kill(proc.pid, signal.SIGTERM)  # during the first full sweep (seconds): stops when it returns
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    said = f"exit {proc.returncode}; stderr:\n{err[-4000:]}"  # what the run said, if this fails
    assert proc.returncode == 130, said
    last = err.strip().splitlines()[-1]  # stopped before its first checkpoint: nothing to resume yet
    assert last.startswith("interrupted: nothing to resume yet") and "Traceback" not in err, said
    assert not (root / checkpoint.POLICY_FILE).exists()
