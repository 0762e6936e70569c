"""Opening files: the solved values of the positions near the start, small enough to ship.

An opening file holds, for every position reachable from the start within T turns (one turn: a
roll and its action; an extra turn from a fort is a turn of its own) plus one, its value from a
solved table. That is every value ``best-move`` and ``analyze`` read for a position within T
turns (its own and each successor's), so they can answer there without the table, which for
seven pieces is 2.4 GiB and takes a GPU or a cluster to build.

The file is an ``.npz`` (no pickled objects): ``keys`` (uint64, sorted: the mover's tile mask
in the high 32 bits, the other side's in the low 32, the smaller of the two mirror images when
the board's mirror is used), ``values`` (float32, the table's numbers as stored), ``depth``
(uint8, the fewest turns from the start), from a proven table (``solve`` with its proof) ``lower`` and
``upper`` too (float32, each position's proven interval, as the table stores it), and ``header``
(JSON as bytes: rules and options with the board's and dice's digests, T, and the SHA-256 of the
table's values with its tolerance and proven bound). Keys need no rank, so answering needs neither
the table nor the mirror index.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from gamesolver import data
from gamesolver.games.ur.generator import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.errors import CorruptTableError, InputError, PositionNotCoveredError, TableMismatchError
from gamesolver.solver.tables.paths import file_kind
from gamesolver.games.ur.provenance import of_table
from gamesolver.solver import __version__
from gamesolver.solver.tables.atomic import atomic_path

FORMAT_NAME = "gamesolver-ur-opening"
FORMAT_VERSION = 1
MAX_TURNS = 8  # 1.3 million stored positions; each turn multiplies them by four or five
SHIPPED = ("ur_opening",)  # package data folder of the shipped files (data.path)
_CHUNK = 1 << 24


class OutsideOpening(PositionNotCoveredError):
    """A position whose value (or a successor's) the opening file does not hold: the error a table
    raises for a position it does not cover (a KeyError), so callers catch one error for both."""


def _flip_table(options: UrOptions) -> np.ndarray | None:
    """Per byte of a tile mask, the mask of the mirror images of its tiles (None: no mirror)."""
    perm = options.board.mirror if options.uses_mirror else None
    if perm is None:
        return None
    out = np.zeros((4, 256), dtype=np.uint64)
    for byte in range(4):
        for b in range(256):
            m = 0
            for i in range(8):
                if b >> i & 1 and byte * 8 + i < len(perm):
                    m |= 1 << perm[byte * 8 + i]
            out[byte, b] = m
    return out


def state_keys(options: UrOptions, mine: Any, theirs: Any, flips: np.ndarray | None = None) -> np.ndarray:
    """The opening file's key of each mover-relative state (tile masks): with the mirror, the
    smaller of the keys of the state and of its mirror image, as the move generator orders them."""
    m = np.asarray(mine, dtype=np.uint64).reshape(-1)
    o = np.asarray(theirs, dtype=np.uint64).reshape(-1)
    keys = (m << np.uint64(32)) | o
    table = flips if flips is not None else _flip_table(options)
    if table is None:
        return keys

    def flip(x: np.ndarray) -> np.ndarray:
        out = np.zeros_like(x)
        for byte in range(4):
            out |= table[byte][((x >> np.uint64(8 * byte)) & np.uint64(255)).astype(np.intp)]
        return out

    return np.minimum(keys, (flip(m) << np.uint64(32)) | flip(o))


def reachable(options: UrOptions, turns: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every unfinished position reachable from the start within ``turns`` turns under any rolls
    and actions: (keys sorted, depth, mine, theirs), one representative of each mirrored pair."""
    game = kernel(dataclasses.replace(options, mirror=False))  # generating moves needs no index
    forts = options.board.mask(options.board.forts)
    flips = _flip_table(options)
    start = int(state_keys(options, [0], [0], flips)[0])
    seen: dict[int, tuple[int, int, int]] = {start: (0, 0, 0)}
    frontier = [(0, 0)]
    rolls = range(len(options.dice.rolls))
    for depth in range(1, turns + 1):
        found: dict[tuple[int, int], None] = {}
        for mine, theirs in frontier:
            for r in rolls:
                for m2, o2, flag in game.successors(mine, theirs, r):
                    if m2 & forts == forts:
                        continue  # a win: its value is known without a table
                    found[(m2, o2) if flag == 1 else (o2, m2)] = None
        if not found:
            break
        cand = np.array(list(found), dtype=np.uint64).reshape(-1, 2)
        keys = state_keys(options, cand[:, 0], cand[:, 1], flips)
        frontier = []
        for key, (m, o) in zip(keys.tolist(), cand.tolist()):
            if key not in seen:
                seen[key] = (depth, m, o)
                frontier.append((m, o))
    keys = np.array(sorted(seen), dtype=np.uint64)
    rows = np.array([seen[k] for k in keys.tolist()], dtype=np.int64).reshape(-1, 3)
    return keys, rows[:, 0].astype(np.uint8), rows[:, 1].astype(np.uint32), rows[:, 2].astype(np.uint32)


def values_sha256(values: np.ndarray) -> str:
    """SHA-256 of a table's value array in C order (chunked: a memory map stays lazy)."""
    flat = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
    h = hashlib.sha256()
    for start in range(0, flat.size, _CHUNK):
        h.update(flat[start : start + _CHUNK].data)
    return h.hexdigest()


class OpeningFile:
    """An opened opening file: answers ``stored_value`` for the positions it holds."""

    def __init__(self, path: Path, header: dict[str, Any], keys: np.ndarray, values: np.ndarray,
                 depth: np.ndarray, options: UrOptions, intervals: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self.path = path
        self.header = header
        self.keys = keys
        self.values = values
        self.depth = depth
        self.intervals = intervals  # (lower, upper) from a proven table, else None
        self._flips = _flip_table(options)
        self._options = options

    @property
    def turns(self) -> int:
        return int(self.header["turns"])

    @property
    def meta(self) -> dict[str, Any]:
        """The solved table's figures, as a table's ``meta`` gives them."""
        t = self.header["table"]
        return {"tolerance": t.get("tolerance"), **({"residual": t["residual"]} if t.get("residual") is not None else {}),
                **({"certified": {"bound": t["bound"]}} if t.get("bound") is not None else {})}

    def _row(self, mine: int, theirs: int) -> int:
        key = state_keys(self._options, [mine], [theirs], self._flips)[0]
        i = int(np.searchsorted(self.keys, key))
        if i >= self.keys.size or self.keys[i] != key:
            raise OutsideOpening(f"the opening file {self.path} does not hold this position")
        return i

    def stored_value(self, mine: int, theirs: int) -> float:
        """The value of the mover-relative state (tile masks); OutsideOpening when not held."""
        return float(self.values[self._row(mine, theirs)])

    def stored_interval(self, mine: int, theirs: int) -> tuple[float, float] | None:
        """The state's proven interval where the file has intervals, else None; OutsideOpening
        when the position is not held."""
        i = self._row(mine, theirs)
        if self.intervals is None:
            return None
        return float(self.intervals[0][i]), float(self.intervals[1][i])

    def describe(self, shipped: bool) -> str:
        """Where the answer came from, in one line."""
        t = self.header["table"]
        which = "the shipped opening file" if shipped else f"the opening file {self.path}"
        return (f"from {which} (positions within {self.turns} turns of the start), built from table "
                f"{t['values_sha256'][:16]} (pieces={self.header['options']['pieces']}; "
                f"{self.provenance.text()})")

    @property
    def provenance(self) -> Any:
        """Whether the values are proven (``games.ur.provenance``), as the table they came from was."""
        return of_table(self)

    def source(self, shipped: bool) -> dict[str, Any]:
        """The same as JSON fields."""
        t = self.header["table"]
        return {"kind": "opening-file", "shipped": shipped, "file": str(self.path), "turns": self.turns,
                "table_values_sha256": t["values_sha256"], **self.provenance.table_fields()}


def build(options: UrOptions, table: Any, turns: int) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays and header of an opening file of ``turns`` turns from a solved table (opened
    with ``games.ur.solve.load_table``, so that the generator has its mirror index)."""
    if not 1 <= turns <= MAX_TURNS:
        raise InputError(f"turns must be from 1 to {MAX_TURNS}, not {turns}")
    keys, depth, mine, theirs = reachable(options, turns + 1)
    ranks = kernel(options).rank(mine, theirs)
    values = np.asarray(table["value"])[ranks].astype(np.float32)
    arrays = {"keys": keys, "values": values, "depth": depth}
    if "lower" in table.arrays:  # a proven table: each position's interval, as the table has it
        arrays.update({side: np.asarray(table[side])[ranks].astype(np.float32) for side in ("lower", "upper")})

    meta = table.meta
    header = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "game": "ur",
        "rule": "fort",
        "options": options.header(),
        "turns": turns,
        "positions_answered": int(np.count_nonzero(depth <= turns)),
        "positions_stored": int(keys.size),
        "intervals": "lower" in arrays,
        "table": {
            "values_sha256": values_sha256(table["value"]),
            "state_count": int(table.state_count),
            "tolerance": meta.get("tolerance"),
            "residual": meta.get("residual"),
            "bound": (meta.get("certified") or {}).get("bound"),
            "created": table.header.get("created", {}).get("at"),
        },
        "created": {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "by": f"gamesolver {__version__}"},
    }
    return arrays, header


def write(path: str | os.PathLike[str], arrays: dict[str, Any], header: dict[str, Any]) -> Path:
    """Write an opening file whole or not at all."""
    raw = np.frombuffer(json.dumps(header, sort_keys=True).encode("utf-8"), dtype=np.uint8)
    with atomic_path(path) as tmp, open(tmp, "wb") as f:  # a file object: savez adds no suffix
        np.savez_compressed(f, header=raw, **arrays)
    return Path(path)


def read_header(where: Path, rebuild: str) -> dict[str, Any]:
    """An opening file's header alone, of either family (its ``format`` says which): a missing
    file is an InputError, one that is not an .npz archive an InputError naming what it is, an
    unreadable one a CorruptTableError (each one line; ``rebuild`` as in ``read_file``)."""
    return _read(where, rebuild, arrays=False)[0]


def read_file(where: Path, format_name: str, version: int, rebuild: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """An opening file's header and arrays, read whole (no pickles); a missing file is an
    InputError, an unreadable or foreign one a CorruptTableError, another format version a
    TableMismatchError (each one line; ``rebuild``: the command that makes the file again)."""
    header, arrays = _read(where, rebuild, arrays=True)
    if header.get("format") != format_name:
        hint = {"gamesolver-royalur-opening": f"; it is RoyalUr's {header.get('rules')}: give --rules {header.get('rules')}",
                "gamesolver-ur-opening": "; it is the fort rules': leave out --rules"}.get(str(header.get("format")), "")
        raise CorruptTableError(f"opening file {where}: not a {format_name} file{hint}")
    if header.get("format_version") != version:
        raise TableMismatchError(f"opening file {where}: format version {header.get('format_version')}, this "
                                 f"program reads {version}")
    if not all(name in arrays for name in ("keys", "values", "depth")):
        raise CorruptTableError(f"opening file {where}: its arrays do not fit its header; build it again")
    return header, arrays


def _read(where: Path, rebuild: str, arrays: bool) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The header (a dict, else {}) and, with ``arrays``, the arrays of an opening file."""
    if not where.is_file():
        raise InputError(f"no opening file at {where}")
    with open(where, "rb") as f:
        head = f.read(4)
    if head != b"PK\x03\x04":  # every opening file is a zip archive (.npz)
        raise InputError(f"opening file {where} is not an opening file (an .npz archive): it is "
                         f"{file_kind(where)}; make one with '{rebuild}'")
    try:
        with np.load(where, allow_pickle=False) as z:
            header = json.loads(bytes(z["header"]).decode("utf-8"))
            found = {name: z[name] for name in z.files if name != "header"} if arrays else {}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
        raise CorruptTableError(f"opening file {where} is unreadable ({exc}); build it again with "
                                f"'{rebuild}'") from None
    return (header if isinstance(header, dict) else {}), found


def arrays_fit(header: dict[str, Any], keys: np.ndarray, values: np.ndarray, depth: np.ndarray,
               key_type: Any, value_type: Any) -> bool:
    """Whether an opening file's three arrays have the types and length its header says, keys
    strictly increasing."""
    n = keys.shape[0] if keys.ndim == 1 else -1
    return (keys.dtype == key_type and values.dtype == value_type and depth.dtype == np.uint8 and n >= 1
            and values.shape == (n,) and depth.shape == (n,) and n == header.get("positions_stored")
            and bool(np.all(keys[1:] > keys[:-1])))


def load(path: str | os.PathLike[str], options: UrOptions) -> OpeningFile:
    """Open an opening file and check that it was made for ``options``; a broken file is a
    CorruptTableError, one made for other rules a TableMismatchError (both one line)."""
    where = Path(path)
    header, arrays = read_file(where, FORMAT_NAME, FORMAT_VERSION, "solver ur opening build")
    keys, values, depth = arrays["keys"], arrays["values"], arrays["depth"]
    intervals = (arrays["lower"], arrays["upper"]) if "lower" in arrays else None
    n = keys.shape[0] if keys.ndim == 1 else -1
    if (not arrays_fit(header, keys, values, depth, np.uint64, np.float32)
            or bool(header.get("intervals")) != (intervals is not None)
            or (intervals is not None and not (all(a.dtype == np.float32 and a.shape == (n,) for a in intervals)
                                               and bool(np.all(intervals[0] <= intervals[1]))))):
        raise CorruptTableError(f"opening file {where}: its arrays do not fit its header; build it again")
    want = options.header()
    have = header.get("options", {})
    for key in ("pieces", "board_sha256", "dice_sha256", "mirror"):
        if have.get(key) != want[key]:
            hint = f"; read it with pieces={have.get(key)} (--pieces {have.get(key)})" if key == "pieces" else ""
            raise TableMismatchError(f"opening file {where} was built with {key}={have.get(key)!r}, "
                                     f"wanted {key}={want[key]!r}{hint}")
    return OpeningFile(where, header, keys, values, depth, options, intervals)


def shipped_name(options: UrOptions) -> str:
    h = options.header()
    return f"k{options.pieces}-{h['board_sha256'][:10]}-{h['dice_sha256'][:10]}.npz"


def shipped_path(options: UrOptions) -> Path:
    """Where the opening file for these options (board, dice, pieces) would be shipped."""
    return data.path(*SHIPPED, shipped_name(options))


def shipped(options: UrOptions) -> OpeningFile | None:
    """The opening file shipped for these options, or None."""
    file = shipped_path(options)
    if not file.is_file():
        return None
    return load(file, options)
