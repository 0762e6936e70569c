"""Print one SHA-256 over the package's sources (solver/, games/, data/, setup.py, pyproject.toml),
leaving out what a build makes (compiled modules, generated C, caches).

A GPU session installs a wheel built here beforehand (benchmarks/gpu_prebuild.sh) instead of
compiling on the lent machine, but only when this digest, taken there over the working tree that
travelled, equals the one written beside the wheel: a wheel of other sources is never used.

    python benchmarks/source_digest.py
"""
from __future__ import annotations

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("solver", "games", "data")
FILES = ("setup.py", "pyproject.toml")
SKIP_SUFFIXES = {".so", ".c", ".pyc", ".pyo", ".html", ".pyd"}


def sources(root: Path = ROOT) -> list[Path]:
    """The files whose contents decide what the wheel holds, in a fixed order."""
    found = [root / f for f in FILES if (root / f).is_file()]
    for folder in FOLDERS:
        for p in (root / folder).rglob("*"):
            if not p.is_file() or "__pycache__" in p.parts:
                continue
            if p.suffix in SKIP_SUFFIXES and not (folder == "games" and p.suffix == ".html"):
                continue
            found.append(p)
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def digest(root: Path = ROOT) -> str:
    h = hashlib.sha256()
    for p in sources(root):
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


if __name__ == "__main__":
    print(digest())
