"""The project's one table format: a directory with ``header.json`` and one ``.npy`` per array.

Every solved table of every game is stored this way. The header names the game, the variant
options, the rule, the encoding and its version, the number of states, a CRC-32 of every array,
and how and when it was made. Arrays are opened memory-mapped, so a table opens instantly and a
probe touches only the pages it needs. A table is written under a temporary name in the same
parent directory and renamed into place only when complete, so a crash never leaves a
half-written table under the real name.
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from solver.errors import CorruptTableError, MissingTableError, TableMismatchError

FORMAT_NAME = "gamesolver-table"
FORMAT_VERSION = 1
HEADER_FILE = "header.json"
_CHUNK = 1 << 24


def array_crc32(array: np.ndarray) -> int:
    """CRC-32 of the array's bytes in C order (chunked, so memory maps stay lazy)."""
    flat = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    crc = 0
    for start in range(0, flat.size, _CHUNK):
        crc = zlib.crc32(flat[start : start + _CHUNK], crc)
    return crc & 0xFFFFFFFF


@dataclass
class Table:
    """An opened table: its header and its arrays (memory-mapped, read-only)."""

    path: Path
    header: dict[str, Any]
    arrays: dict[str, np.ndarray] = field(repr=False)

    @property
    def game(self) -> str:
        return str(self.header["game"])

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.header.get("options", {}))

    @property
    def rule(self) -> str | None:
        return self.header.get("rule")

    @property
    def state_count(self) -> int:
        return int(self.header["state_count"])

    @property
    def meta(self) -> dict[str, Any]:
        return dict(self.header.get("meta", {}))

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    def verify(self) -> None:
        """Recompute every array's CRC-32 and compare with the header."""
        for name, info in self.header["arrays"].items():
            if array_crc32(self.arrays[name]) != int(info["crc32"]):
                raise CorruptTableError(
                    f"table {self.path}: array '{name}' fails its checksum; delete the table and solve again"
                )


def write_table(
    path: str | os.PathLike[str],
    *,
    game: str,
    encoding: str,
    encoding_version: int,
    state_count: int,
    arrays: Mapping[str, np.ndarray],
    options: Mapping[str, Any] | None = None,
    rule: str | None = None,
    meta: Mapping[str, Any] | None = None,
    seconds: float | None = None,
) -> Path:
    """Write a complete table at ``path`` (a directory), atomically replacing any old one."""
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.tmp-", dir=final.parent))
    try:
        described: dict[str, Any] = {}
        for name, array in arrays.items():
            array = np.ascontiguousarray(array)
            file = f"{name}.npy"
            np.save(tmp / file, array, allow_pickle=False)
            described[name] = {
                "file": file,
                "dtype": array.dtype.str,
                "shape": list(array.shape),
                "crc32": array_crc32(array),
            }
        from solver import __version__

        header = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "game": game,
            "options": dict(options or {}),
            "rule": rule,
            "encoding": encoding,
            "encoding_version": encoding_version,
            "state_count": int(state_count),
            "arrays": described,
            "meta": dict(meta or {}),
            "created": {
                "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "by": f"gamesolver {__version__}",
                "python": platform.python_version(),
                "host": socket.gethostname(),
                "seconds": None if seconds is None else round(float(seconds), 3),
            },
        }
        with open(tmp / HEADER_FILE, "w", encoding="utf-8") as f:
            json.dump(header, f, indent=2, sort_keys=True)
            f.write("\n")
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; tables are meant to be shared
        _replace_dir(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def _replace_dir(new: Path, final: Path) -> None:
    """Move ``new`` to ``final``; an existing table there is swapped out, then removed."""
    old = None
    if final.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{final.name}.old-", dir=final.parent))
        os.rmdir(old)
        os.rename(final, old)
    os.rename(new, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def open_table(
    path: str | os.PathLike[str],
    *,
    expect: Mapping[str, Any] | None = None,
    verify: bool = True,
) -> Table:
    """Open the table at ``path``; refuse it if it is corrupt or does not match ``expect``.

    ``expect`` may name ``game``, ``rule``, ``encoding``, ``encoding_version``, ``state_count``
    and ``options`` (a mapping compared key by key). ``verify`` recomputes the checksums.
    """
    root = Path(path)
    head = root / HEADER_FILE
    if not head.is_file():
        raise MissingTableError(f"no table at {root} (expected a directory with {HEADER_FILE})")
    try:
        with open(head, encoding="utf-8") as f:
            header = json.load(f)
    except (OSError, ValueError) as exc:
        raise CorruptTableError(f"table {root}: unreadable header ({exc})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise CorruptTableError(f"table {root}: not a {FORMAT_NAME} header")
    if header.get("format_version") != FORMAT_VERSION:
        raise TableMismatchError(
            f"table {root}: format version {header.get('format_version')}, this program reads {FORMAT_VERSION}"
        )
    _check_expected(root, header, expect or {})
    arrays: dict[str, np.ndarray] = {}
    try:
        for name, info in header["arrays"].items():
            array = np.load(root / info["file"], mmap_mode="r", allow_pickle=False)
            if array.dtype.str != info["dtype"] or list(array.shape) != list(info["shape"]):
                raise CorruptTableError(
                    f"table {root}: array '{name}' is {array.dtype.str}{list(array.shape)}, "
                    f"header says {info['dtype']}{info['shape']}"
                )
            arrays[name] = array
    except CorruptTableError:
        raise
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorruptTableError(f"table {root}: cannot read arrays ({exc})") from None
    table = Table(root, header, arrays)
    if verify:
        table.verify()
    return table


def _check_expected(root: Path, header: Mapping[str, Any], expect: Mapping[str, Any]) -> None:
    for key, want in expect.items():
        if key == "options":
            have_opts = header.get("options", {})
            for opt, value in want.items():
                if have_opts.get(opt) != value:
                    raise TableMismatchError(
                        f"table {root} was built with {opt}={have_opts.get(opt)!r}, wanted {opt}={value!r}"
                    )
        elif header.get(key) != want:
            raise TableMismatchError(f"table {root} has {key}={header.get(key)!r}, wanted {key}={want!r}")
