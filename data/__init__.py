"""Shipped data: board geometries, dice presets, example inputs and the claims registry.

Read files with ``data.path(name)``; they are package data, found through importlib.resources
however the package was installed.
"""
from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def path(*parts: str) -> Path:
    """Path of a shipped data file, e.g. ``data.path("claims", "unee.json")``."""
    where = files(__name__)
    for part in parts:
        where = where.joinpath(part)
    return Path(str(where))
