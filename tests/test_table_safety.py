"""Writing a table never destroys a user's files, and a query never writes where --table points."""
from __future__ import annotations

import os

import numpy as np
import pytest
from click.testing import CliRunner

from gamesolver.solver.cli import cli
from gamesolver.solver.errors import InputError
from gamesolver.solver.tables.table import open_table, prepare_table_dir, write_table


def _write(path) -> None:
    write_table(path, game="test", encoding="none", encoding_version=1, state_count=3,
                arrays={"value": np.arange(3, dtype=np.float32)})


def _precious(root):
    (root / "sub").mkdir(parents=True)
    (root / "precious.txt").write_text("thesis")
    (root / "sub" / "notes.txt").write_text("x")


def _intact(root) -> None:
    assert (root / "precious.txt").read_text() == "thesis"
    assert (root / "sub" / "notes.txt").read_text() == "x"
    assert not (root / "header.json").exists()


def test_write_table_refuses_a_folder_of_other_files(tmp_path) -> None:
    d = tmp_path / "d"
    _precious(d)
    with pytest.raises(InputError, match="holds other files"):
        _write(d)
    _intact(d)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]  # no temporary left beside it


def test_write_table_into_new_empty_or_own_folder(tmp_path) -> None:
    _write(tmp_path / "new" / "deep")
    assert open_table(tmp_path / "new" / "deep").state_count == 3
    (tmp_path / "empty").mkdir()
    _write(tmp_path / "empty")
    _write(tmp_path / "empty")  # over a table of ours
    assert open_table(tmp_path / "empty")["value"].tolist() == [0, 1, 2]


def test_a_file_or_the_current_folder_is_refused(tmp_path, monkeypatch) -> None:
    f = tmp_path / "file"
    f.write_text("keep")
    with pytest.raises(InputError, match="not a folder"):
        _write(f)
    assert f.read_text() == "keep"
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    with pytest.raises(InputError, match="current folder"):
        _write(".")


def test_stale_temporaries_of_dead_writers_are_removed(tmp_path) -> None:
    # a writer killed mid-write leaves .NAME.tmp-PID-XXXX; pid 2**22+1 is above Linux's pid_max
    dead = tmp_path / f".t.tmp-{2**22 + 1}-abcd"
    dead.mkdir()
    (dead / "value.npy").write_bytes(b"half")
    mine = tmp_path / f".t.tmp-{os.getpid()}-live"  # a live writer's folder stays
    mine.mkdir()
    _write(tmp_path / "t")
    assert not dead.exists() and mine.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_parent_is_one_line(tmp_path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(InputError, match="not a writable folder"):
            prepare_table_dir(ro / "t")
    finally:
        ro.chmod(0o755)


def _cli(*args: str):
    return CliRunner().invoke(cli, list(args))


def _one_line(result, code: int = 2) -> None:
    assert result.exit_code == code, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error:"), result.output


def test_unee_solve_out_keeps_a_users_folder(tmp_path) -> None:
    d = tmp_path / "d"
    _precious(d)
    r = _cli("unee", "--holes", "2", "solve", "--out", str(d))
    _one_line(r)
    _intact(d)


def test_ur_solve_out_keeps_a_users_folder(tmp_path) -> None:
    d = tmp_path / "d"
    _precious(d)
    r = _cli("ur", "solve", "--pieces", "2", "--out", str(d))
    _one_line(r)
    _intact(d)
    assert sorted(p.name for p in d.iterdir()) == ["precious.txt", "sub"]


def test_ur_query_never_writes_where_table_points(tmp_path) -> None:
    d = tmp_path / "d"
    _precious(d)
    r = _cli("ur", "best-move", "start", "--roll", "gold+gold", "--pieces", "2", "--table", str(d))
    _one_line(r, 1)  # a missing table is unusable data (exit 1), not bad input
    assert "solver ur solve --pieces 2 --out" in r.output
    _intact(d)
    missing = tmp_path / "nonexistent" / "dir"
    r = _cli("ur", "best-move", "start", "--roll", "gold+gold", "--pieces", "3", "--table", str(missing))
    _one_line(r, 1)
    assert not (tmp_path / "nonexistent").exists()


def test_ur_solve_into_new_folder_then_again(tmp_path) -> None:
    d = tmp_path / "d"
    assert _cli("ur", "solve", "--pieces", "1", "--out", str(d)).exit_code == 0
    r = _cli("ur", "solve", "--pieces", "1", "--out", str(d))  # over our own table
    assert r.exit_code == 0, r.output
    r = _cli("ur", "best-move", "start", "--roll", "gold+gold", "--pieces", "1", "--table", str(d))
    assert r.exit_code == 0, r.output
