"""Files that hold hours of work reach the disk before they take their names: every writer that
renames a temporary into place syncs it first (and the folder after), so that a crash or a power
cut leaves the old file or the new one, never a new name on data that was never written. The syncs
are watched by wrapping os.fsync, os.replace and os.rename; a writer that drops its sync fails here."""
from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pytest

from gamesolver.solver.errors import TableWriteError
from gamesolver.solver.retrograde.layers import MODES, TierCheckpoint
from gamesolver.solver.stochastic import checkpoint, skip
from gamesolver.solver.tables import atomic
from gamesolver.solver.tables.atomic import SYNC_FROM
from gamesolver.solver.tables.table import open_table, write_table


class Watch:
    """What was synced and renamed, in order (paths resolved when the call was made)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.events: list[tuple[str, ...]] = []
        fsync, replace, rename = os.fsync, os.replace, os.rename

        def watched_fsync(fd: int) -> None:
            self.events.append(("sync", os.readlink(f"/proc/self/fd/{fd}")))
            fsync(fd)

        def watched_replace(src, dst) -> None:
            self.events.append(("rename", str(Path(src).resolve()), str(Path(dst).resolve())))
            replace(src, dst)

        def watched_rename(src, dst) -> None:
            self.events.append(("rename", str(Path(src).resolve()), str(Path(dst).resolve())))
            rename(src, dst)

        monkeypatch.setattr(os, "fsync", watched_fsync)
        monkeypatch.setattr(os, "replace", watched_replace)
        monkeypatch.setattr(os, "rename", watched_rename)

    def synced_before(self, i: int) -> set[str]:
        return {e[1] for e in self.events[:i] if e[0] == "sync"}

    def renames(self) -> list[tuple[int, str, str]]:
        return [(i, e[1], e[2]) for i, e in enumerate(self.events) if e[0] == "rename"]

    def check(self, into: Path) -> int:
        """Every rename into ``into`` moved a synced file (or a folder whose files and itself were
        synced), and the folder was synced after it; the number of such renames."""
        into = into.resolve()
        count = 0
        for i, src, dst in self.renames():
            if Path(dst).parent != into:
                continue
            count += 1
            before = self.synced_before(i)
            if Path(dst).is_dir():
                inner = {str(Path(dst) / p.name) for p in Path(dst).iterdir()}
                assert {str(Path(src) / Path(p).name) for p in inner} <= before, f"{dst}: a file not synced"
            assert src in before, f"{dst} took the name of {src} before it was synced"
            after = {e[1] for e in self.events[i + 1:] if e[0] == "sync"}
            assert str(into) in after, f"{into} not synced after the rename to {dst}"
        return count


@pytest.fixture
def watch(monkeypatch):
    return Watch(monkeypatch)


def _need_proc() -> None:
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc/self/fd to name the file a descriptor syncs (Linux)")


def _checkpoint_files(root: Path, n: int) -> np.ndarray:
    values = np.linspace(-1, 1, n, dtype=np.float32)
    crc = checkpoint.values_crc(values)
    checkpoint.write_skip_file(root, {"lead": np.arange(n, dtype=np.uint16)}, 3, crc)
    checkpoint.write_checkpoint(root, values, {"sweeps": 3, "skip": {"round": 3, "crc": crc}})
    checkpoint.write_marks(root, np.ones(n, dtype=np.uint8), 2, 1e-6, crc)
    checkpoint.write_held(root, np.array([1, 5, 9]))
    checkpoint.drop_skip_record(root)
    assert np.array_equal(np.load(root / checkpoint.CHECKPOINT), values)
    assert checkpoint.read_held(root, n).tolist() == [1, 5, 9]
    return values


def test_a_large_checkpoint_and_its_skip_record_are_synced_before_they_take_their_names(tmp_path, watch) -> None:
    _need_proc()
    _checkpoint_files(tmp_path, SYNC_FROM)  # values of 4 * SYNC_FROM bytes, the skip's 2 *, the marks' 1 *
    assert watch.check(tmp_path) == 6  # skip file, values, counts, marks, held, counts again


def test_a_small_checkpoint_is_not_waited_for(tmp_path, watch) -> None:
    _need_proc()
    _checkpoint_files(tmp_path, SYNC_FROM // 8 - 1)  # values just below SYNC_FROM bytes: nothing synced
    assert [e for e in watch.events if e[0] == "sync"] == []
    assert len(watch.renames()) == 6


def test_the_skips_blocks_are_synced(tmp_path, watch) -> None:
    _need_proc()
    arrays = tuple(np.arange(k + 2, dtype=np.int64) for k in range(6))
    skip.write_blocks(tmp_path / checkpoint.BLOCKS_FILE, 10, 4, "g", arrays)
    assert watch.check(tmp_path) == 1


def test_a_table_its_outputs_and_tier_files_are_synced(tmp_path, watch) -> None:
    _need_proc()
    out = write_table(tmp_path / "t", game="test", encoding="none", encoding_version=1, state_count=3,
                      arrays={"value": np.arange(3, dtype=np.float32), "best": np.zeros(3, dtype=np.int8)})
    assert watch.check(tmp_path) == 1  # the folder: its three files and itself synced first
    assert open_table(out)["value"].tolist() == [0, 1, 2]
    with atomic.atomic_path(tmp_path / "out.txt") as tmp:
        Path(tmp).write_text("done")
    assert watch.check(tmp_path) == 2
    tiers = TierCheckpoint(tmp_path / "tiers", "split", {0: SYNC_FROM, 1: 2})
    tiers.save(0, {key: np.zeros(SYNC_FROM, dtype=np.int8) for key in MODES["split"]})
    assert watch.check(tmp_path / "tiers") == 1
    syncs = len(watch.events)
    tiers.save(1, {key: np.zeros(2, dtype=np.int8) for key in MODES["split"]})  # a small tier: no wait
    assert [e[0] for e in watch.events[syncs:]] == ["rename"]
    assert sorted(tiers.load()) == [0, 1]


def test_a_stored_graph_is_synced_before_its_folder_takes_its_name(tmp_path, watch) -> None:
    _need_proc()
    from gamesolver.games.ur import kernel
    from gamesolver.games.ur.rules import UrOptions
    from gamesolver.solver.stochastic.outcomes import build_mapped_graph, load_graph
    K = kernel(UrOptions(pieces=2))
    build_mapped_graph(K, tmp_path, {"what": "real2"}, threads=1)
    assert watch.check(tmp_path) == 1
    assert load_graph(K, tmp_path, {"what": "real2"}) is not None


def test_a_file_system_that_cannot_sync_is_left_as_it_is(tmp_path, monkeypatch) -> None:
    def cannot(fd: int) -> None:
        raise OSError(errno.EINVAL, "Invalid argument")
    monkeypatch.setattr(os, "fsync", cannot)
    monkeypatch.setattr(checkpoint, "SYNC_FROM", 0)
    values = np.zeros(10, dtype=np.float32)
    checkpoint.write_checkpoint(tmp_path, values, {"sweeps": 1})
    assert np.array_equal(np.load(tmp_path / checkpoint.CHECKPOINT), values)


def test_a_sync_that_fails_leaves_the_old_checkpoint_and_no_temporary(tmp_path, monkeypatch) -> None:
    old = np.ones(10, dtype=np.float32)
    checkpoint.write_checkpoint(tmp_path, old, {"sweeps": 1})

    def broken(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")
    monkeypatch.setattr(os, "fsync", broken)
    monkeypatch.setattr(checkpoint, "SYNC_FROM", 0)
    with pytest.raises(TableWriteError, match="cannot write the checkpoint.*Input/output error"):
        checkpoint.write_checkpoint(tmp_path, np.zeros(10, dtype=np.float32), {"sweeps": 2})
    assert np.array_equal(np.load(tmp_path / checkpoint.CHECKPOINT), old)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([checkpoint.CHECKPOINT, checkpoint.CHECKPOINT_INFO])
