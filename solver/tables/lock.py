"""One writer a table folder: a solve holds an advisory lock on a file in its folder while it runs,
so that a second solve started on the same folder (the same command run twice, a resume while the
first run still goes on in the background) is refused in one line instead of racing the first
over its checkpoint and its mapped policy.

The lock is ``flock`` on LOCK_FILE inside the folder: the system drops it when its holder ends,
however it ends, so a killed run leaves no stale lock, only the small file, which the table
writers ignore and which goes when the table replaces the folder. The file names the holder's
process, for the message. Within one process the lock is re-entrant (the table writer holds it
around the solve, which holds it again)."""
from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Iterator

from gamesolver.solver.errors import FolderBusyError

try:
    import fcntl
except ImportError:  # not on POSIX: no lock, as before (the project runs on Linux and macOS)
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".solving.lock"
# the folders this process holds (resolved paths); a hold inside another one of the same folder adds nothing
_held: set[str] = set()


def _holder(path: Path) -> str:
    """What the lock file says of its holder ("pid 123 since 2026-...") or "" if unreadable."""
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""


@contextlib.contextmanager
def folder_lock(folder: str | os.PathLike[str]) -> Iterator[None]:
    """Hold ``folder``'s lock (the folder must exist) for the ``with`` block; a FolderBusyError
    (one line, naming the holder) if another process holds it."""
    root = Path(folder)
    key = str(root.resolve())
    if key in _held:
        yield
        return
    if fcntl is None:
        yield
        return
    path = root / LOCK_FILE
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            who = _holder(path)
            raise FolderBusyError(
                f"another solve is writing {root}{f' ({who})' if who else ''}: let it finish, or stop it "
                "(Ctrl-C, or SIGTERM if it runs in the background) and run this command again to resume "
                "from its checkpoint") from None
        except BaseException:
            os.close(fd)
            raise
        # the file may have gone with its folder's old table between the open and the lock: a lock
        # on a file no longer at ``path`` guards nothing, so take the one that is there now
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} since {time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode())
    except OSError:
        pass  # the lock holds without its note
    _held.add(key)
    try:
        yield
    finally:
        _held.discard(key)
        os.close(fd)  # releases the lock; the file stays (removing it would race a newcomer's open)


def holder(folder: str | os.PathLike[str]) -> str | None:
    """Who holds ``folder``'s lock now: what its file says of the holder ("pid 123 since ...", or
    "a process" where it says nothing), or None where no process holds it. Only asks: the probe
    takes the lock for a moment where it is free and never creates the file. None where locks do
    not exist (not POSIX), and for a folder this process holds itself."""
    root = Path(folder)
    if fcntl is None or str(root.resolve()) in _held:
        return None
    path = root / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # no file: nobody ever held it (a holder's file stays while it runs)
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _holder(path) or "a process"
    finally:
        os.close(fd)  # (releases the probe's lock where it took one)
    return None
