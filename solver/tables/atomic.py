"""Files written whole or not at all: write to a temporary name beside the target, sync it to the
disk, then rename (so that a crash or a power cut leaves the old file or the new one, never a torn one)."""
from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path
from typing import Iterator

from gamesolver.solver.errors import DataFileError, InputError, OutputWriteError, TableError


# errors of creating a file that say the path given is wrong (the user's to change, exit 2), as
# against the system's faults (a full disk, an I/O error: exit 1)
PATH_REFUSED = frozenset({errno.ENOENT, errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EISDIR,
                          errno.ENAMETOOLONG, errno.EINVAL})
# errors of os.fsync that say the file system cannot sync, not that the data was lost
_CANNOT_SYNC = frozenset({errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP})


# files written again and again in a run (a solve's checkpoints, a layered solve's tier files) are
# synced from this size up (their own, or that of the values they go with): a small game's
# checkpoint takes 5-20 ms to sync against milliseconds to write and seconds of work to redo
SYNC_FROM = 16 << 20


def sync_file(path: str | os.PathLike[str]) -> None:
    """Wait until the file at ``path`` is on the disk (``os.fsync``), so that a rename that puts it
    in place never outlives its data after a crash or a power cut. A file system that cannot sync
    (EINVAL, ENOTSUP: some network or virtual ones) is left as it is; any other error is raised."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in _CANNOT_SYNC:
            raise
    finally:
        os.close(fd)


def sync_dir(path: str | os.PathLike[str]) -> None:
    """Wait until the folder's entries (a rename into it) are on the disk; nothing where the
    system cannot open or sync a folder (Windows, some file systems)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def sync_folder(folder: Path) -> None:
    """Sync every entry of a freshly written ``folder``, then the folder itself, before it is renamed
    into place (a table, a stored graph)."""
    for entry in folder.iterdir():
        sync_file(entry)
    sync_dir(folder)


def replace_synced(tmp: Path, final: Path, sync: bool = True) -> None:
    """Rename the written ``tmp`` onto ``final``; where ``sync``, only once its data is on the disk,
    and the folder is synced after (without the syncs a power cut after the rename can leave the
    new name on a file whose data never reached the disk)."""
    if sync:
        sync_file(tmp)
    os.replace(tmp, final)
    if sync:
        sync_dir(final.parent)


def check_writable(path: str | os.PathLike[str]) -> Path:
    """The output path, if its directory exists and can be written; else a one-line InputError."""
    out = Path(path)
    parent = out.resolve().parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise InputError(f"cannot write {out}: {parent} is not a writable directory")
    return out


def writable_folder(path: str | os.PathLike[str], what: str) -> Path:
    """The folder at ``path``, made if missing (its parents too); a one-line InputError that
    starts with ``what`` (the option or the folder's role) if it is a file, cannot be made or
    cannot be written."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{what}: {folder} is a file; give a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{what}: cannot make the folder {folder} ({exc.strerror or exc})") from None
    if not os.access(folder, os.W_OK):
        raise InputError(f"{what}: the folder {folder} cannot be written")
    return folder


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[str]:
    """Yield a temporary file name beside ``path``; on success it is synced to the disk and
    replaces ``path`` (readable by all, as outputs are meant to be shared), on failure it is removed."""
    out = check_writable(path)
    if out.is_dir():
        raise InputError(f"cannot write {out}: it is a folder; give a file name")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{out.stem}-", suffix=out.suffix, dir=out.resolve().parent)
        os.close(fd)
    except OSError as exc:
        if exc.errno in PATH_REFUSED:  # the place the user named takes no file (e.g. under /proc): exit 2
            raise InputError(f"cannot write {out}: {out.resolve().parent} takes no new file "
                             f"({exc.strerror or exc}); give another path") from None
        raise OutputWriteError(f"cannot write {out}: {exc.strerror or exc}") from None
    try:
        yield tmp
        os.chmod(tmp, 0o644)
        replace_synced(Path(tmp), out.resolve())
    except (TableError, DataFileError, OutputWriteError):
        _discard(tmp)
        raise
    except OSError as exc:
        # a full disk or a folder that turned read-only while writing: the partial file goes
        _discard(tmp)
        raise OutputWriteError(f"cannot write {out}: {exc.strerror or exc}") from None
    except BaseException:
        _discard(tmp)
        raise


def _discard(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
