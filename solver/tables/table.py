"""The project's one table format: a directory with ``header.json`` and one ``.npy`` per array.

Every solved table of every game is stored this way. The header names the game, the variant
options, the rule, the encoding and its version, the number of states, a CRC-32 of every array,
and how and when it was made. Arrays are opened memory-mapped, so a table opens instantly and a
probe touches only the pages it needs. A table is written under a temporary name in the same
parent directory and renamed into place only when complete, so a crash never leaves a
half-written table under the real name.

A table is written only into a new or empty folder, or over a folder that already holds one of
ours (recognised by its header, or by the checkpoint a stopped solve left): anything else is
refused, so a mistyped ``--out`` never deletes a user's files.
"""
from __future__ import annotations

import hashlib
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
from typing import Any, Callable, Mapping

import numpy as np

from gamesolver.solver.errors import (CorruptTableError, InputError, MissingTableError, OutputWriteError,
                                     TableMismatchError, TableWriteError)
from gamesolver.solver.tables.paths import cache_dir
from gamesolver.solver.tables.atomic import atomic_path, sync_dir, sync_folder
from gamesolver.solver.tables.lock import LOCK_FILE

FORMAT_NAME = "gamesolver-table"
FORMAT_VERSION = 1
HEADER_FILE = "header.json"
CHECKPOINT_FORMAT = "gamesolver-checkpoint"
_CHUNK = 1 << 24


def array_crc32(array: np.ndarray) -> int:
    """CRC-32 of the array's bytes in C order (chunked, so memory maps stay lazy)."""
    flat = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    crc = 0
    for start in range(0, flat.size, _CHUNK):
        crc = zlib.crc32(flat[start : start + _CHUNK].data, crc)
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


def _is_our_header(file: Path, fmt: str) -> bool:
    try:
        with open(file, encoding="utf-8") as f:
            head = json.load(f)
    except (OSError, ValueError):
        return False
    return isinstance(head, dict) and head.get("format") == fmt


def holds_our_work(path: str | os.PathLike[str]) -> bool:
    """True when the folder holds a table of ours or a stopped solve's checkpoint (what a new
    table may replace), False for anything else."""
    root = Path(path)
    return _is_our_header(root / HEADER_FILE, FORMAT_NAME) or _is_our_header(
        root / "checkpoint.json", CHECKPOINT_FORMAT)


def has_entries(folder: Path) -> bool:
    """True when ``folder`` holds anything besides a solve's lock file (``lock.LOCK_FILE``, which
    a run leaves behind and which is no one's data)."""
    with os.scandir(folder) as entries:
        return any(e.name != LOCK_FILE for e in entries)


def existing_ancestor(path: Path) -> Path:
    """``path`` (made absolute) or its nearest folder above that exists: where a table or a
    checkpoint about to be made would land, for its permissions and its disk's free space."""
    probe = path.absolute()
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    return probe


def prepare_table_dir(path: str | os.PathLike[str], *, create: bool = True) -> Path:
    """Check that a table may be written at ``path`` and (with ``create``) make the folder.

    Allowed: a path that does not exist yet (its parents are made), an empty folder, or a folder
    that holds a table of ours or a stopped solve's checkpoint. Anything else, and a place that
    cannot be written, is a one-line InputError; nothing is created or removed then.
    """
    final = Path(path)
    if final.exists() or final.is_symlink():
        if not final.is_dir():
            raise InputError(f"cannot write a table at {final}: it exists and is not a folder")
        try:
            empty = not has_entries(final)
        except OSError as exc:
            raise InputError(f"cannot write a table at {final}: {exc.strerror or exc}") from None
        if not empty and not holds_our_work(final):
            raise InputError(
                f"refusing to write a table into {final}: the folder holds other files and no table of ours "
                f"(give a new or empty folder)")
        if final.resolve() == Path.cwd().resolve() or final.resolve().parent == final.resolve():
            raise InputError(f"cannot write a table at {final}: the current folder or a root cannot be replaced "
                             f"(give a new folder)")
    probe = existing_ancestor(final.absolute().parent)
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise InputError(f"cannot write a table at {final}: {probe} is not a writable folder")
    if final.exists() and not os.access(final, os.W_OK | os.X_OK):
        raise InputError(f"cannot write a table at {final}: the folder is not writable")
    if create:
        try:
            final.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot write a table at {final}: {exc.strerror or exc}") from None
    return final


def _remove_stale_temporaries(final: Path) -> None:
    """Remove temporary folders that a killed writer of this table left beside it.

    Their names carry the writer's process id; a folder whose writer is gone is removed."""
    try:
        entries = list(final.parent.glob(f".{final.name}.tmp-*")) + list(final.parent.glob(f".{final.name}.old-*"))
    except OSError:
        return
    for entry in entries:
        pid = entry.name.rsplit(".", 1)[-1].split("-")[1] if "-" in entry.name else ""
        if pid.isdigit() and _alive(int(pid)):
            continue
        shutil.rmtree(entry, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


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
    """Write a complete table at ``path`` (a directory), atomically replacing an old table there.

    ``path`` must be new, empty, or hold a table of ours or a checkpoint (``prepare_table_dir``);
    a folder of other files is refused with an InputError and left as it was. OS errors (a full
    disk, a read-only folder) leave nothing behind and surface as a one-line TableWriteError.
    """
    final = prepare_table_dir(path, create=False)
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temporaries(final)
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.tmp-{os.getpid()}-", dir=final.parent))
    except OSError as exc:
        raise TableWriteError(f"cannot write a table at {final}: {exc.strerror or exc}") from None
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
        from gamesolver.solver import __version__

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
        sync_folder(tmp)  # on the disk before the folder takes the table's name
        _replace_dir(tmp, final)
        sync_dir(final.parent)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise TableWriteError(f"cannot write a table at {final}: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def _replace_dir(new: Path, final: Path) -> None:
    """Move ``new`` to ``final``; an existing table there is swapped out, then removed.

    Only a folder that ``prepare_table_dir`` accepted gets here; it is checked once more just
    before the swap, so a folder that filled with other files meanwhile is never removed."""
    old = None
    if final.exists():
        if has_entries(final) and not holds_our_work(final):
            raise InputError(f"refusing to replace {final}: it no longer holds a table of ours")
        old = Path(tempfile.mkdtemp(prefix=f".{final.name}.old-{os.getpid()}-", dir=final.parent))
        os.rmdir(old)
        os.rename(final, old)
    os.rename(new, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


VERIFY_ONCE = "once"


def _file_marks(root: Path, header: Mapping[str, Any]) -> dict[str, list[int]]:
    """What says a table's files are the ones that were checked: size, change time and inode of
    the header and of every array file (a copy, an edit or a new table changes one of them)."""
    marks = {}
    for file in [HEADER_FILE] + [str(info["file"]) for info in header["arrays"].values()]:
        st = os.stat(root / file)
        marks[file] = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]
    return marks


def _verified_marker(root: Path) -> Path:
    key = hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return cache_dir() / "verified" / f"{key}.json"


def _verified_before(root: Path, header: Mapping[str, Any]) -> bool:
    try:
        with open(_verified_marker(root), encoding="utf-8") as f:
            seen = json.load(f)
        return bool(seen.get("path") == str(root.resolve()) and seen.get("files") == _file_marks(root, header))
    except (OSError, ValueError, AttributeError, TypeError, KeyError):
        return False


def _record_verified(root: Path, header: Mapping[str, Any]) -> None:
    """Remember that the table's checksums passed; where the cache cannot be written, nothing is
    remembered and the next open checks again."""
    marker = _verified_marker(root)
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(marker) as tmp, open(tmp, "w", encoding="utf-8") as f:
            json.dump({"path": str(root.resolve()), "files": _file_marks(root, header)}, f)
    except (OSError, InputError, OutputWriteError):
        pass


def open_table(
    path: str | os.PathLike[str],
    *,
    expect: Mapping[str, Any] | None = None,
    verify: bool | str = True,
) -> Table:
    """Open the table at ``path``; refuse it if it is corrupt or does not match ``expect``.

    ``expect`` may name ``game``, ``rule``, ``encoding``, ``encoding_version``, ``state_count``
    and ``options`` (a mapping compared key by key). ``verify``: True recomputes the checksums
    at every open; ``"once"`` only when this table's files (size, change time, inode) differ from
    those of the last open whose checksums passed, as recorded in the cache's ``verified/``
    folder; False never. Shapes and file lengths are checked at every open.
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
            try:
                array = np.load(root / info["file"], mmap_mode="r", allow_pickle=False)
            except (OSError, ValueError) as exc:
                # name the file: a truncated copy is the usual cause, and the user must find it
                raise CorruptTableError(f"table {root}: array file {info['file']} is unreadable or truncated "
                                        f"({exc}); delete the table and solve again") from None
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
    if verify == VERIFY_ONCE:
        if not _verified_before(root, header):
            table.verify()
            _record_verified(root, header)
    elif verify:
        table.verify()
    return table


def open_or_build(path: str | os.PathLike[str], expect: Mapping[str, Any],
                  build: Callable[[], Any] | None = None, verify: bool | str = True) -> Table:
    """Open the table at ``path`` (see ``open_table``); when there is none, call ``build`` (which
    writes it there) and open what it wrote. Without ``build`` a missing table is an error."""
    try:
        return open_table(path, expect=expect, verify=verify)
    except MissingTableError:
        if build is None:
            raise
    build()
    return open_table(path, expect=expect, verify=verify)


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
