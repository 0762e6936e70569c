"""The engine's checkpoints: a stopped run resumes (mapping the stored graph it kept), a damaged
checkpoint is said so and ignored, and a full disk ends the run with one line and no leftovers."""
from __future__ import annotations

import errno

import numpy as np
import pytest

from gamesolver.games.ur.solve import solve
from gamesolver.solver import stochastic
from gamesolver.solver.errors import TableWriteError
from tests.test_ur_reference import mini_options


def _stop_early(o, root, sweeps: int = 3) -> None:
    with pytest.raises(RuntimeError, match="no convergence"):
        solve(o, root, tolerance=1e-6, threads=2, method="sweeps", graph="store", max_sweeps=sweeps)
    assert (root / stochastic.CHECKPOINT).exists() and (root / "graph" / "codes.npy").exists()


def test_a_stopped_run_resumes_and_maps_its_graph(tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    _stop_early(o, tmp_path / "t")
    said: list[str] = []
    resumed = solve(o, tmp_path / "t", tolerance=1e-6, threads=2, method="sweeps", graph="store", log=said.append)
    assert any("resuming from the checkpoint after sweep 3" in s for s in said)
    assert any("mapped from the stopped run" in s for s in said)
    assert resumed.meta["resumed_at_sweep"] == 3
    fresh = solve(o, tmp_path / "fresh", tolerance=1e-6, threads=2, method="sweeps", graph="store")
    assert np.abs(np.asarray(resumed["value"]) - np.asarray(fresh["value"])).max() < 1e-5
    assert not (tmp_path / "t" / "graph").exists() and not (tmp_path / "t" / stochastic.CHECKPOINT).exists()


def test_a_run_stopped_while_its_graph_is_built_is_taken_up_again(tmp_path, monkeypatch) -> None:
    o = mini_options(tmp_path, 4)
    root = tmp_path / "t"
    real = stochastic.build_mapped_graph

    def built_then_stopped(game, where, key, *args, **kw):
        real(game, where, key, *args, **kw)  # the graph is finished and kept, then the run stops
        raise KeyboardInterrupt

    monkeypatch.setattr(stochastic, "build_mapped_graph", built_then_stopped)
    with pytest.raises(KeyboardInterrupt):
        solve(o, root, tolerance=1e-6, threads=2, graph="store")
    assert (root / stochastic.CHECKPOINT_INFO).exists()  # the folder is recognisably a stopped solve
    monkeypatch.setattr(stochastic, "build_mapped_graph", real)
    said: list[str] = []
    table = solve(o, root, tolerance=1e-6, threads=2, graph="store", log=said.append)
    assert any("mapped from the stopped run" in s for s in said)
    assert table.meta["graph"] == "stored" and np.abs(np.asarray(table["value"])).max() > 0.1


def test_a_truncated_checkpoint_is_said_and_ignored(tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    _stop_early(o, tmp_path / "t")
    ck = tmp_path / "t" / stochastic.CHECKPOINT
    ck.write_bytes(ck.read_bytes()[:100])
    said: list[str] = []
    table = solve(o, tmp_path / "t", tolerance=1e-6, threads=2, method="sweeps", log=said.append)
    warning = [s for s in said if s.startswith("warning: ignoring the checkpoint")]
    assert warning and "cannot be read" in warning[0] and "starting from sweep 0" in warning[0]
    assert table.meta["resumed_at_sweep"] == 0


def test_a_full_disk_while_checkpointing_leaves_no_temporary(tmp_path, monkeypatch) -> None:
    o = mini_options(tmp_path, 3)
    real_save = np.save

    def full(file, *a, **kw):
        if str(getattr(file, "name", file)).endswith(stochastic.CHECKPOINT + ".tmp"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(file, *a, **kw)

    monkeypatch.setattr(stochastic.np, "save", full)
    with pytest.raises(TableWriteError, match="cannot write the checkpoint in .*No space left on device"):
        solve(o, tmp_path / "t", threads=2, method="sweeps", graph="regenerate")
    assert not list((tmp_path / "t").glob("*.tmp"))


def test_a_walk_checkpoint_resumes_in_the_stage_of_todays_schedule(monkeypatch) -> None:
    """A checkpoint names the discounts it was written under; under another schedule the walk
    resumes at the first stage that discounts no more than the checkpoint's stage did (a
    checkpoint without the names was written under the first, five-stage schedule)."""
    monkeypatch.setattr(stochastic, "WALK_DISCOUNTS", (1e-2, 1e-4, 1e-6))
    same = {"stage": 1, "discounts": [1e-2, 1e-4, 1e-6]}
    assert stochastic._walk_stage(same) == 1
    five = [1e-2, 1e-3, 1e-4, 1e-5, 1e-6]
    assert [stochastic._walk_stage({"stage": k}) for k in range(6)] == [0, 1, 1, 2, 2, 3]
    assert [stochastic._walk_stage({"stage": k, "discounts": five}) for k in range(6)] == [0, 1, 1, 2, 2, 3]
    assert stochastic._walk_stage({"stage": 1, "discounts": [1e-3, 1e-6]}) == 2  # its 1e-6 stage: our 1e-6
    assert stochastic._walk_stage({"stage": 0, "discounts": [0.1, 1e-3]}) == 0
