"""The engine's checkpoints: a stopped run resumes (mapping the stored graph it kept), a damaged
checkpoint is said so and ignored, and a full disk ends the run with one line and no leftovers."""
from __future__ import annotations

import errno
import json
import re

import numpy as np
import pytest

from gamesolver.games.ur.solve import solve
from gamesolver.solver.stochastic import iteration
from gamesolver.solver.stochastic import checkpoint
from gamesolver.solver.stochastic import schedule
from gamesolver.solver.stochastic import walk
from gamesolver.solver.errors import TableWriteError
from tests.test_ur_reference import mini_options


def _stop_early(o, root, sweeps: int = 3) -> None:
    with pytest.raises(RuntimeError, match="no convergence"):
        solve(o, root, tolerance=1e-6, threads=2, method="sweeps", graph="store", max_sweeps=sweeps)
    assert (root / checkpoint.CHECKPOINT).exists() and (root / "graph" / "codes.npy").exists()


class StoppedSweeps:
    """The walk's full sweeps (``walk.progress_sweep``) counted, stopped by a KeyboardInterrupt at
    the counts in ``stop_at``, each of the others advancing a fake clock by ``each`` seconds (with
    ``each``, ``time.perf_counter`` reads that clock: ``clock[0]``); ``restore`` puts the real
    sweep back."""

    def __init__(self, monkeypatch, stop_at: tuple[int, ...], each: float | None = None) -> None:
        self.count = 0
        self.clock = [0.0]
        self.real = walk.progress_sweep
        self.monkeypatch = monkeypatch
        if each is not None:
            monkeypatch.setattr(iteration.time, "perf_counter", lambda: self.clock[0])

        def sweep(*args, **kw):
            self.count += 1
            if self.count in stop_at:
                raise KeyboardInterrupt
            self.clock[0] += each or 0.0
            return self.real(*args, **kw)

        monkeypatch.setattr(walk, "progress_sweep", sweep)

    def restore(self) -> None:
        self.monkeypatch.setattr(walk, "progress_sweep", self.real)


def test_a_stopped_run_resumes_and_maps_its_graph(tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    _stop_early(o, tmp_path / "t")
    assert json.loads((tmp_path / "t" / checkpoint.CHECKPOINT_INFO).read_text())["seconds"] > 0
    said: list[str] = []
    resumed = solve(o, tmp_path / "t", tolerance=1e-6, threads=2, method="sweeps", graph="store", log=said.append)
    assert any("resuming from the checkpoint after sweep 3" in s for s in said)
    assert any("mapped from the stopped run" in s for s in said)
    assert resumed.meta["resumed_at_sweep"] == 3
    assert resumed.meta["solve_seconds"] > resumed.meta["solve_seconds_this_run"] > 0  # the stopped run's counted
    fresh = solve(o, tmp_path / "fresh", tolerance=1e-6, threads=2, method="sweeps", graph="store")
    assert np.abs(np.asarray(resumed["value"]) - np.asarray(fresh["value"])).max() < 1e-5
    assert not (tmp_path / "t" / "graph").exists() and not (tmp_path / "t" / checkpoint.CHECKPOINT).exists()


def test_a_run_stopped_while_its_graph_is_built_is_taken_up_again(tmp_path, monkeypatch) -> None:
    o = mini_options(tmp_path, 4)
    root = tmp_path / "t"
    real = iteration.build_mapped_graph

    def built_then_stopped(game, where, key, *args, **kw):
        real(game, where, key, *args, **kw)  # the graph is finished and kept, then the run stops
        raise KeyboardInterrupt

    monkeypatch.setattr(iteration, "build_mapped_graph", built_then_stopped)
    with pytest.raises(KeyboardInterrupt):
        solve(o, root, tolerance=1e-6, threads=2, graph="store")
    assert (root / checkpoint.CHECKPOINT_INFO).exists()  # the folder is recognisably a stopped solve
    monkeypatch.setattr(iteration, "build_mapped_graph", real)
    said: list[str] = []
    table = solve(o, root, tolerance=1e-6, threads=2, graph="store", log=said.append)
    assert any("mapped from the stopped run" in s for s in said)
    assert table.meta["graph"] == "stored" and np.abs(np.asarray(table["value"])).max() > 0.1


def test_a_truncated_checkpoint_is_said_and_ignored(tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    _stop_early(o, tmp_path / "t")
    ck = tmp_path / "t" / checkpoint.CHECKPOINT
    ck.write_bytes(ck.read_bytes()[:100])
    said: list[str] = []
    table = solve(o, tmp_path / "t", tolerance=1e-6, threads=2, method="sweeps", log=said.append)
    warning = [s for s in said if s.startswith("warning: ignoring the checkpoint")]
    assert warning and "cannot be read" in warning[0] and "starting from sweep 0" in warning[0]
    assert table.meta["resumed_at_sweep"] == 0


def test_a_checkpoint_of_an_older_build_resumes_where_it_stopped(tmp_path) -> None:
    """Older builds wrote a ``products`` count (always 0) into every checkpoint, as the seven-piece
    solve's does; such a checkpoint resumes with all its counts, the count ignored."""
    header = {"pieces": 1, "mirror": True}
    values = np.linspace(-1, 1, 5, dtype=np.float32)
    checkpoint.write_checkpoint(tmp_path, values, {
        "sweeps": 7, "products": 0, "policy_sweeps": 42, "hot_states": 2251, "stage": 0,
        "discounts": list(schedule.WALK_DISCOUNTS), "change": 0.63, "options": header, "tolerance": 1e-5,
        "method": "walk"})
    said: list[str] = []
    got = checkpoint.resume(tmp_path, header, 5, "walk", said.append)
    assert not said
    assert (got.sweeps, got.stage, got.cheap, got.tier, got.hot) == (7, 0, 42, 0, 2251)
    assert got.values.tolist() == values.tolist()
    assert checkpoint.resume(tmp_path / "none", header, 5, "walk").sweeps == 0


def test_a_full_disk_while_checkpointing_leaves_no_temporary(tmp_path, monkeypatch) -> None:
    o = mini_options(tmp_path, 3)
    real_save = np.save

    def full(file, *a, **kw):
        if str(getattr(file, "name", file)).endswith(checkpoint.CHECKPOINT + ".tmp"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(file, *a, **kw)

    monkeypatch.setattr(iteration.np, "save", full)
    with pytest.raises(TableWriteError, match="cannot write the checkpoint in .*No space left on device"):
        solve(o, tmp_path / "t", threads=2, method="sweeps", graph="regenerate")
    assert not list((tmp_path / "t").glob("*.tmp"))


def test_a_walk_checkpoint_resumes_in_the_stage_of_todays_schedule(monkeypatch) -> None:
    """A checkpoint names the discounts it was written under; under another schedule the walk
    resumes at the first stage that discounts no more than the checkpoint's stage did (a
    checkpoint without the names was written under the first, five-stage schedule)."""
    monkeypatch.setattr(schedule, "WALK_DISCOUNTS", (1e-2, 1e-4, 1e-6))
    same = {"stage": 1, "discounts": [1e-2, 1e-4, 1e-6]}
    assert schedule.walk_stage(same) == 1
    five = [1e-2, 1e-3, 1e-4, 1e-5, 1e-6]
    assert [schedule.walk_stage({"stage": k}) for k in range(6)] == [0, 1, 1, 2, 2, 3]
    assert [schedule.walk_stage({"stage": k, "discounts": five}) for k in range(6)] == [0, 1, 1, 2, 2, 3]
    assert schedule.walk_stage({"stage": 1, "discounts": [1e-3, 1e-6]}) == 2  # its 1e-6 stage: our 1e-6
    assert schedule.walk_stage({"stage": 0, "discounts": [0.1, 1e-3]}) == 0


def test_slow_checkpoints_are_spaced_out_and_a_stopped_walk_keeps_its_last_round(tmp_path, monkeypatch) -> None:
    # A checkpoint that costs more than CHECKPOINT_SHARE of the run is written only once that share
    # of the time has passed (six pieces on a GPU: 1 GB after rounds of about a second); a walk
    # stopped by Ctrl-C still writes the round it had finished, and a resumed run goes on from it.
    o = mini_options(tmp_path, 4)
    sweeps = StoppedSweeps(monkeypatch, (10,), each=1.0)  # each full sweep costs a second; the tenth is stopped
    real = checkpoint.write_checkpoint
    written: list[int] = []

    def slow(root, values, info):  # each write costs one second of the fake clock too
        sweeps.clock[0] += 1.0
        written.append(info["sweeps"])
        real(root, values, info)

    monkeypatch.setattr(checkpoint, "write_checkpoint", slow)
    monkeypatch.setattr(checkpoint, "CHECKPOINT_SHARE", 0.25)  # wait 4 s after a write of 1 s
    root = tmp_path / "t"
    with pytest.raises(KeyboardInterrupt):
        solve(o, root, tolerance=1e-6, threads=1, graph="regenerate")
    # the sweep-0 start is written only with a stored graph; rounds end at 1, 2, ...: the first is
    # written, then every fourth second's worth (1 s a round + 1 s a write), and the stop writes 9
    assert written[0] == 1 and written[-1] == 9 and len(written) < 9
    assert all(b - a >= 2 for a, b in zip(written[:-2], written[1:-1]))
    sweeps.restore()
    said: list[str] = []
    table = solve(o, root, tolerance=1e-6, threads=1, graph="regenerate", log=said.append)
    assert any("resuming from the checkpoint after sweep 9" in s for s in said)
    # ... and says where the walk goes on
    assert any(re.search(r"after sweep 9, in stage [1-4] of 4 \((1 - discount|undiscounted)", s) for s in said)
    fresh = solve(o, tmp_path / "fresh", tolerance=1e-6, threads=1, graph="regenerate")
    assert np.abs(np.asarray(table["value"]) - np.asarray(fresh["value"])).max() < 1e-5


def test_a_checkpoint_is_written_at_least_every_checkpoint_most_seconds(tmp_path, monkeypatch) -> None:
    # writes so dear that CHECKPOINT_SHARE alone would space them past the run's end: one is
    # still written once CHECKPOINT_MOST seconds have passed since the last
    o = mini_options(tmp_path, 4)
    sweeps = StoppedSweeps(monkeypatch, (12,), each=1.0)  # a second a full sweep; the twelfth stopped
    real = checkpoint.write_checkpoint
    written: list[int] = []

    def dear(root, values, info):  # each write costs 100 s of the fake clock
        sweeps.clock[0] += 100.0
        written.append(info["sweeps"])
        real(root, values, info)

    monkeypatch.setattr(checkpoint, "write_checkpoint", dear)
    monkeypatch.setattr(checkpoint, "CHECKPOINT_SHARE", 0.05)  # alone: 2,000 s after each write
    monkeypatch.setattr(checkpoint, "CHECKPOINT_MOST", 3.0)
    with pytest.raises(KeyboardInterrupt):
        solve(o, tmp_path / "t", tolerance=1e-6, threads=1, graph="regenerate")
    # the first round is written; then at most three rounds (3 s) after each write (sooner where a
    # stage ends, which is always written), where the share alone would have waited past the run's
    # end; the stop writes the last (11)
    assert written[0] == 1 and written[-1] == 11 and len(written) >= 5
    assert all(b - a <= 3 for a, b in zip(written, written[1:]))
    written.clear()
    monkeypatch.setattr(checkpoint, "CHECKPOINT_MOST", float("inf"))  # the share alone: fewer writes
    sweeps.count = 0
    with pytest.raises(KeyboardInterrupt):
        solve(o, tmp_path / "u", tolerance=1e-6, threads=1, graph="regenerate")
    assert written[0] == 1 and written[-1] == 11 and any(b - a > 3 for a, b in zip(written, written[1:]))


def test_a_checkpoint_is_priced_at_the_median_of_the_last_writes(tmp_path, monkeypatch) -> None:
    """One write slowed by other work (20 s where the others take 1 s) does not space the next ones
    as if every write took 20 s: the Pacer prices a write at the median of the last three."""
    clock = [0.0]
    costs = iter([1.0, 1.0, 20.0, 1.0, 1.0])
    written: list[float] = []

    def write(root, values, info):
        clock[0] += next(costs)
        written.append(clock[0])

    monkeypatch.setattr(checkpoint.time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(checkpoint, "write_checkpoint", write)
    monkeypatch.setattr(checkpoint, "CHECKPOINT_SHARE", 0.05)  # a write of c seconds: the next c / 0.05 later
    pacer = checkpoint.Pacer(tmp_path, np.zeros(4, np.float32))
    for _ in range(3):
        pacer.round({"sweeps": 1}, force=True)
    assert pacer.costs == [1.0, 1.0, 20.0] and pacer.cost == 1.0
    clock[0] += 19.0  # 19 s after the slow write: not yet 1 / 0.05 = 20 s
    pacer.round({"sweeps": 2})
    assert len(written) == 3
    clock[0] += 1.0  # 20 s: the usual write's spacing (the last write alone would wait 400 s)
    pacer.round({"sweeps": 3})
    assert len(written) == 4 and pacer.costs == [1.0, 20.0, 1.0]


def test_a_stopped_solve_says_where_its_files_are_and_how_to_resume(tmp_path, monkeypatch) -> None:
    """Ctrl-C (or SIGTERM) ends a solve as ``Interrupted``: the folder, what it keeps there, and
    that the same command resumes it; before any checkpoint, that nothing is kept to resume. The
    CLI prints it after "interrupted" and exits 130."""
    from click.testing import CliRunner

    from gamesolver.solver.cli import cli
    from gamesolver.solver.errors import Interrupted

    o = mini_options(tmp_path, 4)
    sweeps = StoppedSweeps(monkeypatch, (4,))  # the fourth full sweep is stopped
    root = tmp_path / "t"
    with pytest.raises(Interrupted) as stop:
        solve(o, root, tolerance=1e-6, threads=1, graph="regenerate")
    said = str(stop.value)
    assert f"kept in {root}" in said and "MiB" in said
    assert "run the same command again to resume from its checkpoint after sweep 3" in said
    assert f"delete {root} to start over" in said
    assert not (root / checkpoint.POLICY_FILE).exists()
    # stopped before the first checkpoint: nothing to resume
    sweeps.count = 3
    with pytest.raises(Interrupted, match="nothing to resume yet"):
        solve(o, tmp_path / "u", tolerance=1e-6, threads=1, graph="regenerate")
    # through the CLI: one message after "interrupted", exit 130
    sweeps.count = 0
    out = tmp_path / "cli"
    r = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "4", "--board", o.board_file, "--graph", "regenerate",
                                 "--no-proof", "--out", str(out)])
    assert r.exit_code == 130 and "Traceback" not in r.output, r.output
    last = r.output.strip().splitlines()[-1]
    assert last.startswith(f"interrupted: ") and f"kept in {out}" in last and "resume from its checkpoint" in last


def test_a_resumed_solve_counts_the_seconds_of_its_earlier_runs(tmp_path, monkeypatch) -> None:
    """A checkpoint records the solve's seconds so far; a resumed run adds them to its own, in its
    round log ("this run, ... in all") and in the table's ``solve_seconds``, while
    ``solve_seconds_this_run`` stays this run's. A fake clock: each full sweep costs one second."""
    o = mini_options(tmp_path, 4)
    StoppedSweeps(monkeypatch, (4, 7), each=1.0)  # the first run's fourth sweep and the second's third are stopped
    root = tmp_path / "t"
    for sweeps, seconds in ((3, 3.0), (5, 5.0)):  # each stop keeps its rounds and the clock so far
        with pytest.raises(KeyboardInterrupt):
            solve(o, root, tolerance=1e-6, threads=1, graph="regenerate")
        info = json.loads((root / checkpoint.CHECKPOINT_INFO).read_text())
        assert (info["sweeps"], info["seconds"]) == (sweeps, seconds)
    said: list[str] = []
    table = solve(o, root, tolerance=1e-6, threads=1, graph="regenerate", log=said.append)
    m = table.meta
    assert m["resumed_at_sweep"] == 5 and m["solve_seconds_this_run"] >= m["sweeps"] - 5 > 0
    assert m["solve_seconds"] == m["solve_seconds_this_run"] + 5.0
    first = next(s for s in said if s.startswith("sweep 6 "))
    assert "1.0 s this run, 6.0 s in all" in first, first
    # a fresh solve's log and header have the one clock
    fresh: list[str] = []
    other = solve(o, tmp_path / "fresh", tolerance=1e-6, threads=1, graph="regenerate", log=fresh.append)
    assert other.meta["solve_seconds"] == other.meta["solve_seconds_this_run"]
    assert any(s.startswith("sweep 1 ") and "1.0 s so far" in s for s in fresh)


@pytest.mark.parametrize("seconds", ["an hour", -5.0, None, float("nan"), [1]])
def test_a_checkpoint_with_an_odd_clock_resumes_with_its_counts(tmp_path, seconds) -> None:
    """The clock is a figure for the log: a checkpoint whose ``seconds`` is not a count of
    seconds still resumes with all its counts, its clock at 0."""
    header = {"pieces": 1, "mirror": True}
    values = np.linspace(-1, 1, 5, dtype=np.float32)
    checkpoint.write_checkpoint(tmp_path, values, {
        "sweeps": 7, "policy_sweeps": 42, "hot_states": 2251, "stage": 1, "discounts": list(schedule.WALK_DISCOUNTS),
        "change": 0.63, "options": header, "tolerance": 1e-5, "method": "walk", "seconds": seconds})
    got = checkpoint.resume(tmp_path, header, 5, "walk")
    assert (got.sweeps, got.stage, got.cheap, got.hot, got.seconds) == (7, 1, 42, 2251, 0.0)
    checkpoint.write_checkpoint(tmp_path, values, {"sweeps": 7, "options": header, "method": "walk",
                                                   "seconds": 5400.5})
    assert checkpoint.resume(tmp_path, header, 5, "walk").seconds == 5400.5


def test_the_solving_time_a_table_reports() -> None:
    from gamesolver.games.ur.answers import solving_time

    assert solving_time({"solve_seconds_this_run": 40.0, "solve_seconds": 40.0}) == "40 s of solving"
    assert solving_time({"solve_seconds_this_run": 40.0}) == "40 s of solving"  # an older table's
    assert (solving_time({"solve_seconds_this_run": 1800.0, "solve_seconds": 9000.0})
            == "2.5 hours of solving (30 minutes of it in this run)")
    assert solving_time({}) == ""
