"""Files written whole or not at all: write to a temporary name beside the target, then rename."""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Iterator

from gamesolver.solver.errors import InputError


def check_writable(path: str | os.PathLike[str]) -> Path:
    """The output path, if its directory exists and can be written; else a one-line InputError."""
    out = Path(path)
    parent = out.resolve().parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise InputError(f"cannot write {out}: {parent} is not a writable directory")
    return out


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[str]:
    """Yield a temporary file name beside ``path``; on success it replaces ``path`` (readable by
    all, as outputs are meant to be shared), on failure it is removed."""
    out = check_writable(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.stem}-", suffix=out.suffix, dir=out.resolve().parent)
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
