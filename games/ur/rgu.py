"""RoyalUr's lookup-table files (``.rgu``, version 0): our own reader and writer (their keys:
``games.ur.rgu_keys``).

A file holds, big-endian: the bytes ``RGU``, a version byte (0), the length of a UTF-8 JSON
metadata object and the object (its ``value_type`` and ``game_settings``, and any other notes),
the number of maps, each map's entry count, every map's sorted uint32 keys, then every map's
values. A state's 64-bit key splits into the map (upper 32 bits) and the key in it (lower 32).
Values are light's chance of winning, in percent, with light to move; dark-to-move positions are
looked up with the colours swapped. ``value_type`` is ``percent16`` (uint16, 0..65535 for
0..100 %), ``f32`` or ``f64``.
"""
from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from gamesolver.games.ur import royal
from gamesolver.solver.errors import (
    CorruptTableError,
    InputError,
    MissingTableError,
    OutputWriteError,
    PositionNotCoveredError,
    TableMismatchError,
    TableWriteError,
)
from gamesolver.solver.tables.atomic import atomic_path
from gamesolver.games.ur.rgu_keys import CHUNK, key_encoding, won_keys
from gamesolver.games.ur.royal_table import royal_game

MAGIC = b"RGU"
VERSION = 0
PERCENT16_MAX = 65535
# value type name in the file -> numpy dtype of one stored value
VALUE_TYPES: dict[str, np.dtype[Any]] = {"percent16": np.dtype(">u2"), "f32": np.dtype(">f4"), "f64": np.dtype(">f8")}
VALUE_TYPE_ALIASES = {"percent16": "percent16", "f32": "f32", "float32": "f32", "f64": "f64", "float64": "f64"}


def value_type_name(name: str) -> str:
    """The file's name for a value type given as percent16, float32/f32 or float64/f64."""
    try:
        return VALUE_TYPE_ALIASES[name.strip().lower()]
    except KeyError:
        raise InputError(f"unknown .rgu value type {name!r}; expected percent16, float32 or float64") from None


def encode_percent16(percent: np.ndarray) -> np.ndarray:
    """Percentages to uint16 the way RoyalUr rounds them (half up, clamped to 0..100)."""
    p = np.clip(np.asarray(percent, dtype=np.float64), 0.0, 100.0)
    return np.floor(p / 100.0 * PERCENT16_MAX + 0.5).astype(np.uint16)


def decode_percent16(stored: np.ndarray) -> np.ndarray:
    return np.asarray(stored, dtype=np.float64) * 100.0 / PERCENT16_MAX


# ---------------------------------------------------------------------------------------------
# Files

# keys of a map behind one entry of its fence index: a look-up reads the fence (native, 1/64 of the
# keys) and then at most seven keys of one block of the memory-mapped map
FENCE = 64


@dataclass
class RguTable:
    """A read ``.rgu`` file: its metadata and its maps (sorted keys, values as stored), memory-
    mapped. Look-ups go through a small fence index per map (every ``FENCE``-th key, native
    order) and never copy a map: numpy's ``searchsorted`` on a big-endian array would copy it
    whole, byte-swapped, on every call."""

    path: str
    metadata: dict
    value_type: str
    keys: list[np.ndarray] = field(default_factory=list)
    values: list[np.ndarray] = field(default_factory=list)
    fences: list[np.ndarray] = field(default_factory=list)

    @property
    def settings(self) -> dict:
        return self.metadata["game_settings"]

    @property
    def entry_count(self) -> int:
        return sum(len(k) for k in self.keys)

    @property
    def rounding(self) -> float:
        """How far a win chance read from this file can be from the one written to it, by the
        value type's rounding alone: half a step of 1/65,535 for percent16, half a float's last
        place at 64-100 % for f32 and f64."""
        half_place = {"percent16": 0.5 / PERCENT16_MAX, "f32": 2.0**-18 / 100, "f64": 2.0**-47 / 100}
        return half_place[self.value_type]

    def _fence(self, m: int) -> np.ndarray:
        while len(self.fences) <= m:
            self.fences.append(np.asarray(self.keys[len(self.fences)][::FENCE], dtype=np.uint32))
        return self.fences[m]

    def _locate(self, m: int, lower: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each of ``lower`` (uint32 keys of map ``m``): its index in the map and whether it
        is there. A binary search of the fence, then one of the block, all entries at once."""
        lower = np.asarray(lower, dtype=np.uint32)
        ks = np.asarray(self.keys[m]) if m < len(self.keys) else np.zeros(0, ">u4")
        n = len(ks)
        if n == 0:
            return np.zeros(lower.size, np.int64), np.zeros(lower.size, bool)
        block = np.searchsorted(self._fence(m), lower, side="right").astype(np.int64) - 1
        first = np.maximum(block, 0) * FENCE
        count = np.minimum(first + FENCE, n) - first
        while True:  # lower_bound in [first, first + count), every entry a step at a time
            step = count >> 1
            probe = first + step
            go = count > 0
            if not go.any():
                break
            go &= ks[np.minimum(probe, n - 1)] < lower
            first = np.where(go, probe + 1, first)
            count = np.where(go, count - step - 1, step)
        found = first < n
        found[found] = ks[first[found]] == lower[found]
        return first, found

    def _percent(self, m: int, at: np.ndarray) -> np.ndarray:
        v = np.asarray(self.values[m])[at]
        return decode_percent16(v) if self.value_type == "percent16" else v.astype(np.float64)

    def percent_at(self, key: int) -> float:
        """Light's win percent stored for ``key``; PositionNotCoveredError when it is not there."""
        return float(self.percent_many(np.array([key], dtype=np.uint64))[0])

    def percent_many(self, keys: np.ndarray) -> np.ndarray:
        """``percent_at`` for an array of keys; PositionNotCoveredError names the first missing."""
        keys = np.asarray(keys, dtype=np.uint64).reshape(-1)
        upper = (keys >> np.uint64(32)).astype(np.int64)
        lower = (keys & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        out = np.empty(keys.size, dtype=np.float64)
        if keys.size == 0:
            return out
        one_map = upper.min() == upper.max()  # Finkel's keys all fall in map 0: no grouping
        for m in [int(upper[0])] if one_map else np.unique(upper).tolist():
            at = slice(None) if one_map else np.flatnonzero(upper == m)
            i, found = self._locate(m, lower[at])
            if not found.all():
                missing = keys[at][~found][0]
                raise PositionNotCoveredError(f"key {int(missing):#x} is not in {self.path}")
            out[at] = self._percent(m, i)
        return out

    def all_keys(self) -> np.ndarray:
        """Every key, in the file's order, in memory (for small tables and tests)."""
        parts = [(np.uint64(u) << np.uint64(32)) | k.astype(np.uint64) for u, k in enumerate(self.keys)]
        return np.concatenate(parts) if parts else np.zeros(0, np.uint64)

    def all_percent(self) -> np.ndarray:
        """Every value in percent, in the file's order, in memory (for small tables and tests)."""
        pct16 = self.value_type == "percent16"
        vals = [decode_percent16(v) if pct16 else np.asarray(v, np.float64) for v in self.values]
        return np.concatenate(vals) if vals else np.zeros(0)

    def expect(self, rules: royal.RuleSet) -> None:
        """Raise TableMismatchError unless the file was made for exactly these rules and pieces."""
        want = rules.settings_json()
        have = self.settings
        if {k: have.get(k) for k in want} != want:
            raise TableMismatchError(
                f"{self.path} holds a table for {describe_settings(have)}; expected {describe_settings(want)}"
            )

    def win_probability(self, state: royal.State, rules: royal.RuleSet) -> float:
        """The mover's chance of winning (0..1) before rolling, read from the file."""
        self.expect(rules)
        return self.percent_at(key_encoding(rules).state_key(state)) / 100.0


def describe_settings(s: dict) -> str:
    return (
        f"path {s.get('paths')}, dice {s.get('dice')}, {s.get('start_pieces')} pieces, "
        f"{'safe' if s.get('safe_rosettes') else 'unsafe'} rosettes, "
        f"extra roll on rosette {s.get('rosettes_grant_rolls')}, on capture {s.get('captures_grant_rolls')}"
    )


def _corrupt(path: str | os.PathLike[str], why: str) -> CorruptTableError:
    return CorruptTableError(f"{path} is not a usable .rgu table: {why}")


# keys checked (and fenced) at once when a file is read: 16 MiB of native keys
READ_CHUNK = 1 << 22


def looks_like_rgu(path: str | os.PathLike[str]) -> bool:
    """Whether the file starts as every ``.rgu`` file does (a damaged one may still: ``read_rgu``
    says what is wrong with it), as opposed to a file of another kind given in its place."""
    with open(path, "rb") as f:
        return f.read(len(MAGIC)) == MAGIC


def read_rgu(path: str | os.PathLike[str]) -> RguTable:
    """Read a ``.rgu`` file; the key and value arrays are memory-mapped, not loaded. The keys are
    checked to be increasing a chunk at a time, and each map's fence index is built on the way."""
    p = Path(path)
    if not p.is_file():
        raise MissingTableError(f"no .rgu table at {p}")
    size = p.stat().st_size
    with open(p, "rb") as f:
        head = f.read(8)
        if head[:3] != MAGIC[: len(head)]:
            raise _corrupt(p, "it does not start with the bytes 'RGU'")
        if len(head) < 8:
            raise _corrupt(p, f"the file is truncated: {size} bytes, too short for its header")
        if head[3] != VERSION:
            raise _corrupt(p, f"it is format version {head[3]}; this reader knows version {VERSION}")
        (meta_len,) = struct.unpack(">I", head[4:8])
        raw = f.read(meta_len)
        if len(raw) < meta_len:
            raise _corrupt(p, f"the file is truncated inside its metadata ({len(raw)} of {meta_len} bytes)")
        try:
            meta = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise _corrupt(p, f"its metadata is not valid JSON ({e.msg if hasattr(e, 'msg') else e})") from None
        if not isinstance(meta, dict) or not isinstance(meta.get("game_settings"), dict):
            raise _corrupt(p, "its metadata has no game_settings object")
        vt = meta.get("value_type", "percent16")
        if vt not in VALUE_TYPES:
            raise _corrupt(p, f"unknown value type {vt!r}; expected percent16, f32 or f64")
        counts_head = f.read(4)
        if len(counts_head) < 4:
            raise _corrupt(p, "the file is truncated before its map count")
        (maps,) = struct.unpack(">I", counts_head)
        counts_raw = f.read(4 * maps)
        if len(counts_raw) < 4 * maps:
            raise _corrupt(p, f"the file is truncated inside its {maps} map sizes")
        counts = struct.unpack(f">{maps}I", counts_raw)
        keys_at = 8 + meta_len + 4 + 4 * maps
    total = sum(counts)
    expected = keys_at + 4 * total + VALUE_TYPES[vt].itemsize * total
    if size < expected:
        raise _corrupt(p, f"the file is truncated: {size} bytes, its header promises {expected}")
    if size > expected:
        raise _corrupt(p, f"{size - expected} bytes follow the end of the table its header describes")
    table = RguTable(str(p), meta, vt)
    off = keys_at
    for c in counts:
        table.keys.append(np.memmap(p, dtype=">u4", mode="r", offset=off, shape=(c,)) if c else np.zeros(0, ">u4"))
        off += 4 * c
    for c in counts:
        dt = VALUE_TYPES[vt]
        table.values.append(np.memmap(p, dtype=dt, mode="r", offset=off, shape=(c,)) if c else np.zeros(0, dt))
        off += dt.itemsize * c
    for m, ks in enumerate(table.keys):
        fence = []
        for a in range(0, len(ks), READ_CHUNK):  # READ_CHUNK is a multiple of FENCE
            part = np.asarray(ks[a:a + READ_CHUNK + 1], dtype=np.uint32)
            if not bool(np.all(part[1:] > part[:-1])):
                raise _corrupt(p, f"the keys of map {m} are not in strictly increasing order")
            fence.append(part[:READ_CHUNK:FENCE].copy())  # a view would keep the whole chunk alive
        table.fences.append(np.concatenate(fence) if fence else np.zeros(0, np.uint32))
    return table


# writing: rows of (key, stored value) handled at once (8 MiB of keys)
WRITE_CHUNK = 1 << 20


def _stored_bits(vt: str, percent: np.ndarray) -> np.ndarray:
    """Percentages as the file stores them, as native unsigned integers of the stored width (the
    bytes the file holds are these integers big-endian)."""
    if vt == "percent16":
        return encode_percent16(percent)
    if vt == "f32":
        return np.asarray(percent, dtype=np.float64).astype(np.float32).view(np.uint32)
    return np.ascontiguousarray(percent, dtype=np.float64).view(np.uint64)


def _value_bits(vt: str) -> int:
    return 8 * VALUE_TYPES[vt].itemsize


def _metadata_blob(rules: royal.RuleSet, vt: str, notes: dict | None) -> bytes:
    meta: dict = {"value_type": vt}
    for k, v in (notes or {}).items():
        if k in ("value_type", "game_settings"):
            raise InputError(f"metadata field {k!r} is set by the writer")
        meta[k] = v
    meta["game_settings"] = rules.settings_json()
    return json.dumps(meta, separators=(",", ":")).encode("utf-8")


def _write_sorted(path: str | os.PathLike[str], blob: bytes, vt: str, n: int, rows) -> None:
    """Write a table whose rows come sorted by key: ``rows(a, b)`` gives rows a..b-1 as (uint64
    keys, stored value bits). A first pass checks the keys strictly increase and counts each
    map's entries; a second writes the keys, a third the values, a chunk at a time."""
    counts = np.zeros(0, np.int64)
    last = None
    for a in range(0, n, WRITE_CHUNK):
        keys, _ = rows(a, min(a + WRITE_CHUNK, n))
        if (last is not None and keys[0] <= last) or not bool(np.all(keys[1:] > keys[:-1])):
            raise InputError("two positions share one key; a table needs one value per key")
        last = keys[-1]
        part = np.bincount((keys >> np.uint64(32)).astype(np.int64))
        if part.size > counts.size:
            part[:counts.size] += counts
            counts = part
        else:
            counts[:part.size] += part
    maps = counts.size
    stored = ">u" + str(VALUE_TYPES[vt].itemsize)
    try:
        with atomic_path(path) as tmp, open(tmp, "wb") as f:
            f.write(MAGIC + bytes([VERSION]) + struct.pack(">I", len(blob)) + blob)
            f.write(struct.pack(f">I{maps}I", maps, *(int(c) for c in counts)))
            for a in range(0, n, WRITE_CHUNK):
                f.write((rows(a, min(a + WRITE_CHUNK, n))[0] & np.uint64(0xFFFFFFFF)).astype(">u4").tobytes())
            for a in range(0, n, WRITE_CHUNK):
                f.write(rows(a, min(a + WRITE_CHUNK, n))[1].astype(stored).tobytes())
    except OutputWriteError:
        raise  # already one line naming the file
    except OSError as e:
        raise TableWriteError(f"cannot write {path}: {e.strerror or e}") from None


def _write_packed(path: str | os.PathLike[str], blob: bytes, vt: str, packed: np.ndarray) -> None:
    """Write rows packed one to a uint64 as key << value bits | stored value, sorting them in
    place: keys are distinct, so the order is the keys' order, and no index array is needed."""
    vbits = _value_bits(vt)
    vmask = np.uint64((1 << vbits) - 1)
    packed.sort()

    def rows(a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        return packed[a:b] >> np.uint64(vbits), packed[a:b] & vmask

    _write_sorted(path, blob, vt, packed.size, rows)


def _write_by_order(path: str | os.PathLike[str], blob: bytes, vt: str, keys: np.ndarray, percent_at) -> None:
    """Write rows too wide to pack (f64 values, or keys of more than 32 bits with f32): sort an
    index of the keys and gather rows through it; ``percent_at(index)`` gives their percentages."""
    order = np.argsort(keys)

    def rows(a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        at = order[a:b]
        return keys[at], _stored_bits(vt, percent_at(at))

    _write_sorted(path, blob, vt, keys.size, rows)


def write_rgu(
    path: str | os.PathLike[str],
    rules: royal.RuleSet,
    keys: np.ndarray,
    percent: np.ndarray,
    value_type: str = "percent16",
    notes: dict | None = None,
) -> None:
    """Write a ``.rgu`` file whole or not at all: ``keys`` (64-bit) and light's win ``percent``
    for each, in any order. ``notes`` are extra metadata fields (e.g. the tolerance)."""
    vt = value_type_name(value_type)
    keys = np.asarray(keys, dtype=np.uint64)
    percent = np.asarray(percent, dtype=np.float64)
    if keys.shape != percent.shape or keys.ndim != 1:
        raise InputError(f"keys and values differ in shape: {keys.shape} and {percent.shape}")
    blob = _metadata_blob(rules, vt, notes)
    vbits = _value_bits(vt)
    if keys.size and int(keys.max()).bit_length() + vbits <= 64:
        packed = np.empty(keys.size, np.uint64)
        for a in range(0, keys.size, WRITE_CHUNK):
            b = min(a + WRITE_CHUNK, keys.size)
            packed[a:b] = (keys[a:b] << np.uint64(vbits)) | _stored_bits(vt, percent[a:b])
        _write_packed(path, blob, vt, packed)
    else:
        _write_by_order(path, blob, vt, keys, lambda at: percent[at])


def write_values(
    path: str | os.PathLike[str],
    rules: royal.RuleSet,
    values: np.ndarray,
    value_type: str = "percent16",
    notes: dict | None = None,
) -> None:
    """Write our solution (the mover's chance of winning per rank) as RoyalUr's table: the keys
    of a million ranks at a time (``KeyEncoding.keys_of``), each packed with its stored value
    into one uint64 that is sorted in place (percent16 always; f32 where keys fit in 32 bits), so
    the peak is the values and eight bytes a position; f64 sorts an index instead."""
    vt = value_type_name(value_type)
    game, ke = royal_game(rules), key_encoding(rules)
    n_states = game.state_count
    if np.shape(values) != (n_states,):
        raise InputError(
            f"values hold {np.shape(values)} entries; expected {n_states} for {rules.name} with {rules.pieces} pieces"
        )
    blob = _metadata_blob(rules, vt, notes)
    won = won_keys(rules)
    n = n_states + won.size
    vbits = _value_bits(vt)
    packs = ke.board_bits + 6 + vbits <= 64
    out = np.empty(n, np.uint64)
    for a in range(0, n_states, CHUNK):
        b = min(a + CHUNK, n_states)
        keys = ke.keys_of(*game.unrank_many(np.arange(a, b, dtype=np.int64)))
        if packs:
            pct = np.asarray(values[a:b], dtype=np.float64) * 100.0
            out[a:b] = (keys << np.uint64(vbits)) | _stored_bits(vt, pct)
        else:
            out[a:b] = keys
    if packs:
        out[n_states:] = (won << np.uint64(vbits)) | _stored_bits(vt, np.full(won.size, 100.0))
        _write_packed(path, blob, vt, out)
    else:
        out[n_states:] = won

        def percent_at(at: np.ndarray) -> np.ndarray:
            inside = at < n_states
            return np.where(inside, np.asarray(values[np.where(inside, at, 0)], dtype=np.float64) * 100.0, 100.0)

        _write_by_order(path, blob, vt, out, percent_at)


def values_from_table(table: RguTable, rules: royal.RuleSet, ranks: Iterable[int] | None = None) -> np.ndarray:
    """The mover's chance of winning per rank of our encoding, read from a RoyalUr table (keys
    computed in chunks, each looked up in its map of the memory-mapped file through the fence
    index; the file is never copied into memory)."""
    table.expect(rules)
    game, ke = royal_game(rules), key_encoding(rules)
    rs = None if ranks is None else np.asarray(list(ranks), dtype=np.int64)
    size = game.state_count if rs is None else rs.size
    out = np.empty(size, dtype=np.float64)
    for a in range(0, size, CHUNK):
        b = min(a + CHUNK, size)
        part = np.arange(a, b, dtype=np.int64) if rs is None else rs[a:b]
        out[a:b] = table.percent_many(ke.keys_of(*game.unrank_many(part))) / 100.0
    return out
