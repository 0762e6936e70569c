"""Where solved tables are cached: ``--cache DIR``, else $SOLVER_CACHE_DIR, else
$XDG_CACHE_HOME/gamesolver, else ~/.cache/gamesolver; and what a file given in place of a table
is, for the message that refuses it."""
from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "SOLVER_CACHE_DIR"


def cache_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The directory that holds cached tables (not created here)."""
    if override:
        return Path(override).expanduser()
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "gamesolver"


def file_kind(path: str | os.PathLike[str]) -> str:
    """What the file at ``path`` looks like, for a message that refuses it: "an empty file", "a
    text file" (its first 512 bytes read as UTF-8, a character cut at the end allowed) or "a
    binary file of another kind"."""
    with open(path, "rb") as f:
        head = f.read(512)
    if not head:
        return "an empty file"
    try:
        (head[:-3] if len(head) == 512 else head).decode("utf-8")
    except UnicodeDecodeError:
        return "a binary file of another kind"
    return "a text file"
