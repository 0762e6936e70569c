"""Shipped data: board geometries, dice presets, example inputs and the claims registry.

Read files with ``data.path(name)`` or ``data.load_json(name)``; they are package data, found
through importlib.resources however the package was installed.
"""
from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any


def path(*parts: str) -> Path:
    """Path of a shipped data file, e.g. ``data.path("claims", "unee.json")``."""
    where = files(__name__)
    for part in parts:
        where = where.joinpath(part)
    return Path(str(where))


def load_json(*parts: str) -> Any:
    """A shipped JSON file, parsed. A missing or broken one is a DataFileError (one line, exit 1):
    the installation is damaged, not the user's input."""
    file = path(*parts)
    try:
        with open(file, encoding="utf-8") as f:
            return json.load(f)
    except OSError as exc:
        raise _damaged(file, exc.strerror or str(exc)) from None
    except ValueError as exc:
        raise _damaged(file, f"not valid JSON ({exc})") from None


def missing(file: Path, reason: str) -> Exception:
    """The error for a shipped data file that cannot be used."""
    return _damaged(file, reason)


def _damaged(file: Path, reason: str) -> Exception:
    from gamesolver.solver.errors import DataFileError

    return DataFileError(f"shipped data file {file}: {reason}; the installation is damaged, reinstall gamesolver")
