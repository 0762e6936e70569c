"""Where solved tables are cached: ``--cache DIR``, else $SOLVER_CACHE_DIR, else
$XDG_CACHE_HOME/gamesolver, else ~/.cache/gamesolver."""
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
