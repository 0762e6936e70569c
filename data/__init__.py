"""Shipped data: board geometries, dice presets, example inputs and the claims registry.

Read files with ``data.path(name)``; they install with the package.
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent


def path(*parts: str) -> Path:
    """Path of a shipped data file, e.g. ``data.path("claims", "unee.json")``."""
    return ROOT.joinpath(*parts)
