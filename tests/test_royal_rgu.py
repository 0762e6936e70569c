"""RoyalUr's .rgu lookup tables: our reader and writer against RoyalUr's own finkel2p.rgu.

tests/data/finkel2p.rgu is RoyalUr-Java's models/finkel2p.rgu (commit f09c562; Finkel rules, two
pieces, percent16), shipped under its MIT licence (tests/data/finkel2p.rgu.LICENSE).
"""
from __future__ import annotations

import bisect
import json
import math
import os
import random
import struct
import tracemalloc
from functools import lru_cache
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from gamesolver.games.ur import rgu, rgu_keys, royal, royal_encoding
from gamesolver.solver.errors import (
    CorruptTableError,
    InputError,
    MissingTableError,
    PositionNotCoveredError,
    TableMismatchError,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.royal_ref import random_position, solve

THEIRS = Path(__file__).parent / "data" / "finkel2p.rgu"
FINKEL2 = royal.load_ruleset("finkel", 2)


@pytest.fixture(scope="module")
def finkel2_solution():
    return solve(FINKEL2)


def test_reads_royalurs_table():
    t = rgu.read_rgu(THEIRS)
    assert t.value_type == "percent16"
    assert t.settings == FINKEL2.settings_json()
    assert t.entry_count == 12_990 == royal_encoding.Encoding(FINKEL2).royalur_state_count()
    t.expect(FINKEL2)


def test_our_solve_has_their_key_set_and_values(finkel2_solution):
    t = rgu.read_rgu(THEIRS)
    keys, percent = rgu_keys.table_from_values(FINKEL2, finkel2_solution.values)
    order = np.argsort(keys)
    keys, percent = keys[order], percent[order]
    assert np.array_equal(keys, t.all_keys())
    ours16 = rgu.encode_percent16(percent).astype(np.int64)
    theirs16 = np.asarray(t.values[0]).astype(np.int64)
    diff = np.abs(ours16 - theirs16)
    # RoyalUr trained this table in float32: a value next to a rounding boundary may land one
    # step (1/65535 of 100 %) away; anything more would be a different game
    assert diff.max() <= 1
    assert (diff > 0).sum() <= len(diff) // 1000
    assert np.abs(percent - t.all_percent()).max() < 100 / 65535


def test_probe_by_position(finkel2_solution):
    t = rgu.read_rgu(THEIRS)
    enc = finkel2_solution.encoding
    for text in ("start", "L:1/B4/0 D:0/C1,B5/0 D", "L:0/A7/1 D:1/-/1 L"):
        st = royal.parse(text, FINKEL2).state()
        assert t.win_probability(st, FINKEL2) == pytest.approx(finkel2_solution.values[enc.rank(st)], abs=2e-5)
    with pytest.raises(PositionNotCoveredError, match="is not in"):
        t.percent_at(0)  # both sides borne off: not a position a table holds


def test_rewriting_their_table_reproduces_its_data_bytes(tmp_path):
    t = rgu.read_rgu(THEIRS)
    notes = {k: v for k, v in t.metadata.items() if k not in ("value_type", "game_settings")}
    out = tmp_path / "again.rgu"
    rgu.write_rgu(out, FINKEL2, t.all_keys(), t.all_percent(), "percent16", notes)
    theirs, ours = THEIRS.read_bytes(), out.read_bytes()
    (their_meta,) = struct.unpack(">I", theirs[4:8])
    (our_meta,) = struct.unpack(">I", ours[4:8])
    assert ours[:4] == theirs[:4]
    # map counts, key tables and values agree byte for byte (the JSON may format numbers otherwise)
    assert ours[8 + our_meta:] == theirs[8 + their_meta:]


@pytest.mark.parametrize("value_type", ["percent16", "float32", "float64"])
def test_round_trip_every_value_type(tmp_path, value_type, finkel2_solution):
    keys, percent = rgu_keys.table_from_values(FINKEL2, finkel2_solution.values)
    out = tmp_path / f"t-{value_type}.rgu"
    rgu.write_values(out, FINKEL2, finkel2_solution.values, value_type, {"tolerance": 1e-15})
    t = rgu.read_rgu(out)
    assert t.value_type == rgu.value_type_name(value_type)
    assert t.metadata["tolerance"] == 1e-15
    order = np.argsort(keys)
    assert np.array_equal(t.all_keys(), keys[order])
    back = t.all_percent()
    if value_type == "percent16":
        assert np.array_equal(rgu.encode_percent16(back), rgu.encode_percent16(percent[order]))
        assert np.abs(back - percent[order]).max() <= 50 / 65535 + 1e-12
    elif value_type == "float32":
        assert np.array_equal(back, percent[order].astype(np.float32).astype(np.float64))
    else:
        assert np.array_equal(back, percent[order])
    # and our values come back per rank through the file
    enc = finkel2_solution.encoding
    ranks = range(0, enc.size, 97)
    got = rgu.values_from_table(t, FINKEL2, ranks)
    tol = 1e-15 if value_type == "float64" else 1e-6 if value_type == "float32" else 1e-5
    assert np.abs(got - finkel2_solution.values[list(ranks)]).max() <= tol


def test_keys_are_distinct_for_every_rule_set():
    for name, pieces in (("masters", 2), ("blitz", 2)):
        rules = royal.load_ruleset(name, pieces)
        enc = royal_encoding.Encoding(rules)
        keys, _ = rgu_keys.table_from_values(rules, np.zeros(enc.size))
        assert len(set(keys.tolist())) == len(keys) == enc.royalur_state_count()
    # shared tiles beyond eight are read in runs: Masters has twelve, in two runs of six
    ke = rgu_keys.KeyEncoding(royal.load_ruleset("masters"))
    assert (ke.run, ke.runs, ke.run_bits, ke.board_bits) == (6, 2, 10, 28)
    kf = rgu_keys.KeyEncoding(royal.load_ruleset("finkel"))
    assert (kf.run, kf.runs, kf.run_bits, kf.board_bits) == (8, 1, 13, 25)


def _cut(tmp_path, data: bytes, name: str) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


@pytest.mark.parametrize("keep", [2, 6, 100, 300, 310, 20_000, 78_242])
def test_truncated_file_is_one_line_error(tmp_path, keep):
    p = _cut(tmp_path, THEIRS.read_bytes()[:keep], f"cut{keep}.rgu")
    with pytest.raises(CorruptTableError) as e:
        rgu.read_rgu(p)
    assert "\n" not in str(e.value) and str(p) in str(e.value)


def test_other_damage_is_one_line_error(tmp_path):
    data = THEIRS.read_bytes()
    cases = {
        "magic.rgu": (b"XGU" + data[3:], "does not start with"),
        "version.rgu": (data[:3] + b"\x01" + data[4:], "format version 1"),
        "tail.rgu": (data + b"\x00\x00", "bytes follow"),
        "json.rgu": (data[:8] + b"}" + data[9:], "not valid JSON"),
        "order.rgu": (data[:0x12F] + data[0x133:0x137] + data[0x12F:0x133] + data[0x137:], "increasing order"),
    }
    for name, (blob, why) in cases.items():
        with pytest.raises(CorruptTableError) as e:
            rgu.read_rgu(_cut(tmp_path, blob, name))
        assert why in str(e.value) and "\n" not in str(e.value), name
    with pytest.raises(MissingTableError):
        rgu.read_rgu(tmp_path / "none.rgu")


def test_table_for_other_settings_is_refused():
    t = rgu.read_rgu(THEIRS)
    with pytest.raises(TableMismatchError) as e:
        t.expect(royal.load_ruleset("finkel", 3))
    assert "3 pieces" in str(e.value) and "2 pieces" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(TableMismatchError, match="path masters"):
        t.win_probability(royal.start(royal.load_ruleset("blitz", 2)).state(), royal.load_ruleset("blitz", 2))


def test_writer_leaves_nothing_behind_and_checks_input(tmp_path):
    with pytest.raises(InputError, match="unknown .rgu value type"):
        rgu.write_rgu(tmp_path / "x.rgu", FINKEL2, np.array([1]), np.array([50.0]), "u16")
    with pytest.raises(InputError, match="share one key"):
        rgu.write_rgu(tmp_path / "x.rgu", FINKEL2, np.array([1, 1]), np.array([50.0, 50.0]))
    with pytest.raises(InputError, match="not a writable directory"):
        rgu.write_rgu(tmp_path / "no" / "x.rgu", FINKEL2, np.array([1]), np.array([50.0]))
    assert os.listdir(tmp_path) == []


def test_a_write_the_system_refuses_is_named_once(tmp_path, monkeypatch):
    """A full disk (the temporary file cannot be made): one line that names the file once, the
    exit code of a system fault, and nothing left behind."""
    import errno
    from gamesolver.solver.errors import OutputWriteError
    from gamesolver.solver.tables import atomic

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(atomic.tempfile, "mkstemp", full)
    out = tmp_path / "x.rgu"
    with pytest.raises(OutputWriteError) as e:
        rgu.write_rgu(out, FINKEL2, np.array([1]), np.array([50.0]))
    assert str(e.value) == f"cannot write {out}: No space left on device"
    assert os.listdir(tmp_path) == []


@lru_cache(maxsize=1)
def _valid_lanes() -> list[int]:
    out = []
    for x in range(4**8):
        digits = [(x >> (2 * k)) & 3 for k in range(8)]
        if 3 not in digits and digits.count(1) <= 7 and digits.count(2) <= 7:
            out.append(x)
    return out


def _finkel_key_by_lanes(light: royal.Side, dark: royal.Side) -> int:
    """RoyalUr's key for full Finkel written out lane by lane (its dedicated Finkel encoding):
    dark's lane C (rows 1-4, 7, 8) in bits 0-5, the middle lane in bits 6-18, light's lane A in
    bits 19-24, dark's hand from bit 25, light's from bit 28. The middle lane is a base-4 number
    (row 1 the highest digit; empty 0, dark 1, light 2) replaced by how many valid lanes (at most
    seven pieces of a colour) lie below it."""
    rules = royal.load_ruleset("finkel")
    rows = [1, 2, 3, 4, 7, 8]
    held = {rules.path[i]: 2 for i in light.path} | {rules.dark_path[i]: 1 for i in dark.path}
    side_bits = {c: sum(1 << k for k, row in enumerate(rows) if f"{c}{row}" in held) for c in "AC"}
    lane = 0
    for row in range(1, 9):
        lane = lane * 4 + held.get(f"B{row}", 0)
    below = bisect.bisect_left(_valid_lanes(), lane)
    return side_bits["C"] | below << 6 | side_bits["A"] << 19 | dark.hand << 25 | light.hand << 28


def test_keys_match_the_lane_by_lane_finkel_formula():
    rules = royal.load_ruleset("finkel")
    ke = rgu_keys.KeyEncoding(rules)
    rng = random.Random(5)
    for _ in range(200):
        pos = random_position(rules, rng)
        assert ke.key(pos.light, pos.dark) == _finkel_key_by_lanes(pos.light, pos.dark)


# ---------------------------------------------------------------------------------------------
# The slow reference: RoyalUr's key of one position and the whole file, written out per position
# from docs/royalur.md (the format as the first writer wrote it); the numpy writer and reader are
# held to these byte for byte.


def _board_index(tile: str) -> int:
    return "ABC".index(tile[0]) + 3 * (int(tile[1:]) - 1)


@lru_cache(maxsize=16)
def _valid_runs(run: int, pieces: int) -> list[int]:
    """The base-4 runs of ``run`` tiles with no digit 3 and at most ``pieces`` of each colour."""
    out = []
    for x in range(4**run):
        digits = [(x >> (2 * k)) & 3 for k in range(run)]
        if 3 not in digits and digits.count(1) <= pieces and digits.count(2) <= pieces:
            out.append(x)
    return out


def _reference_key(rules: royal.RuleSet, light: royal.Side, dark: royal.Side) -> int:
    """RoyalUr's key with light to move, one position at a time: from the lowest bit, a bit per
    tile only dark's path visits; the shared tiles in runs of at most eight (equal runs: Masters'
    twelve are two of six), each a base-4 number (empty 0, dark 1, light 2, the first tile in board
    order the highest digit) replaced by its place among the valid runs, the first run highest; a
    bit per tile only light's path visits; dark's hand (3 bits); light's hand (3 bits)."""
    on_light, on_dark = set(rules.path), set(rules.dark_path)
    tiles = sorted(on_light | on_dark, key=_board_index)
    shared = [t for t in tiles if t in on_light and t in on_dark]
    light_only = [t for t in tiles if t in on_light and t not in on_dark]
    dark_only = [t for t in tiles if t in on_dark and t not in on_light]
    run = math.ceil(len(shared) / math.ceil(len(shared) / 8))
    valid = _valid_runs(run, rules.pieces)
    run_bits = 1
    while len(valid) - 1 > 1 << run_bits:  # RoyalUr's rule for the field's width
        run_bits += 1
    held = {rules.path[i]: 2 for i in light.path} | {rules.dark_path[i]: 1 for i in dark.path}
    key = sum(1 << k for k, t in enumerate(dark_only) if t in held)
    at = len(dark_only)
    runs = [shared[a:a + run] for a in range(0, len(shared), run)]
    war = 0
    for tiles_of_run in runs:
        value = 0
        for t in tiles_of_run:
            value = value * 4 + held.get(t, 0)
        war = (war << run_bits) | bisect.bisect_left(valid, value)
    key |= war << at
    at += len(runs) * run_bits
    key |= sum(1 << k for k, t in enumerate(light_only) if t in held) << at
    at += len(light_only)
    return key | dark.hand << at | light.hand << (at + 3)


def _reference_stored(value_type: str, percent: float) -> bytes:
    if value_type == "percent16":
        return struct.pack(">H", math.floor(min(max(percent, 0.0), 100.0) / 100.0 * 65535 + 0.5))
    return struct.pack(">f" if value_type == "f32" else ">d", percent)


def _reference_file(rules: royal.RuleSet, keys: list[int], percent: list[float], value_type: str,
                    notes: dict) -> bytes:
    """The .rgu bytes of these keys and percentages, a row at a time with struct."""
    rows = sorted(zip(keys, percent))
    maps = (rows[-1][0] >> 32) + 1 if rows else 0
    counts = [0] * maps
    for k, _ in rows:
        counts[k >> 32] += 1
    meta = json.dumps({"value_type": value_type, **notes, "game_settings": rules.settings_json()},
                      separators=(",", ":")).encode("utf-8")
    return b"".join([b"RGU\x00", struct.pack(">I", len(meta)), meta, struct.pack(f">I{maps}I", maps, *counts),
                     *(struct.pack(">I", k & 0xFFFFFFFF) for k, _ in rows),
                     *(_reference_stored(value_type, p) for _, p in rows)])


def _reference_table(rules: royal.RuleSet, values: np.ndarray) -> tuple[list[int], list[float]]:
    """Every position RoyalUr's table holds, per position: each rank's state (the mover as light)
    at its value, and every position light has just won at 100 %."""
    enc = royal_encoding.encoding(rules)
    keys, percent = [], []
    for r in range(enc.size):
        s = enc.unrank(r)
        keys.append(_reference_key(rules, s.mine, s.theirs))
        percent.append(float(values[r]) * 100.0)
    n = rules.pieces
    for scored in range(n):
        for on_board in range(n - scored + 1):
            for tiles in combinations(range(rules.length), on_board):
                dark = royal.Side(n - scored - on_board, frozenset(tiles), scored)
                keys.append(_reference_key(rules, royal.Side(0, frozenset(), n), dark))
                percent.append(100.0)
    return keys, percent


RULE_NAMES = st.sampled_from(["finkel", "blitz", "masters"])


@settings(max_examples=30, deadline=None)
@given(name=RULE_NAMES, pieces=st.integers(1, 7), seed=st.integers(0, 2**32 - 1))
def test_the_numpy_keys_equal_the_slow_key_of_each_state(name: str, pieces: int, seed: int) -> None:
    from gamesolver.games.ur.royal_table import royal_game

    rules = royal.load_ruleset(name, pieces)
    enc, ke, game = royal_encoding.encoding(rules), rgu_keys.key_encoding(rules), royal_game(rules)
    ranks = np.random.default_rng(seed).integers(0, enc.size, 300)
    states = [enc.unrank(int(r)) for r in ranks]
    want = [_reference_key(rules, s.mine, s.theirs) for s in states]
    assert ke.keys_of(*game.unrank_many(ranks)).tolist() == want
    assert [ke.state_key(s) for s in states] == want


@settings(max_examples=40, deadline=None)
@given(name=RULE_NAMES, pieces=st.integers(1, 7), seed=st.integers(0, 2**32 - 1))
def test_keys_of_random_positions_equal_the_reference(name: str, pieces: int, seed: int) -> None:
    """Positions drawn piece by piece (not by rank), either side to move, through the mask form."""
    rules = royal.load_ruleset(name, pieces)
    rng = random.Random(seed)
    states = [random_position(rules, rng).state() for _ in range(50)]
    mask = [sum(1 << i for i in s.mine.path) for s in states]
    other = [sum(1 << i for i in s.theirs.path) for s in states]
    got = rgu_keys.key_encoding(rules).keys_of(np.array(mask, np.uint32), np.array([s.mine.scored for s in states]),
                                          np.array(other, np.uint32), np.array([s.theirs.scored for s in states]))
    assert got.tolist() == [_reference_key(rules, s.mine, s.theirs) for s in states]


@pytest.mark.parametrize("name", ["finkel", "blitz", "masters"])
@pytest.mark.parametrize("value_type", ["percent16", "f32", "f64"])
def test_the_writer_writes_the_reference_bytes(tmp_path, name, value_type) -> None:
    """write_values (numpy keys, packed in-place sort or an index sort) against the per-position
    reference file, for every value type; values include exact percent16 steps and their halves."""
    rules = royal.load_ruleset(name, 2)
    n = royal_encoding.encoding(rules).size
    values = np.random.default_rng(7).random(n)
    values[::5] = np.round(values[::5] * 65535) / 65535
    values[1::5] = (np.floor(values[1::5] * 65535) + 0.5) / 65535
    values[:2] = (0.0, 1.0)
    notes = {"author": "test", "tolerance": 1e-12}
    rgu.write_values(tmp_path / "t.rgu", rules, values, value_type, notes)
    keys, percent = _reference_table(rules, values)
    assert (tmp_path / "t.rgu").read_bytes() == _reference_file(rules, keys, percent, value_type, notes)


def test_the_writer_writes_the_reference_bytes_across_maps_and_chunks(tmp_path, monkeypatch) -> None:
    """Keys above 32 bits (several maps), in chunks far smaller than a map, both sort paths
    (f32 with keys over 32 bits cannot be packed into one uint64; percent16 can)."""
    rng = np.random.default_rng(11)
    keys = np.unique(rng.integers(0, 5 << 32, 5_000, dtype=np.uint64))
    keys = np.concatenate([keys, [np.uint64(3 << 32)]])  # a map starting at its key 0
    keys = np.unique(keys)
    rng.shuffle(keys)
    percent = rng.random(keys.size) * 100
    monkeypatch.setattr(rgu, "WRITE_CHUNK", 333)
    for value_type in ("percent16", "f32", "f64"):
        out = tmp_path / f"m-{value_type}.rgu"
        rgu.write_rgu(out, FINKEL2, keys, percent, value_type, {"n": 1})
        want = _reference_file(FINKEL2, keys.tolist(), percent.tolist(), value_type, {"n": 1})
        assert out.read_bytes() == want, value_type
        t = rgu.read_rgu(out)
        assert len(t.keys) == 5
        assert np.array_equal(t.all_keys(), np.sort(keys))
    # and the whole Blitz 3 export (two maps) through the numpy keys, chunked
    from gamesolver.games.ur.royal_table import royal_game

    rules = royal.load_ruleset("blitz", 3)
    game, ke = royal_game(rules), rgu_keys.key_encoding(rules)
    values = rng.random(game.state_count)
    rgu.write_values(tmp_path / "b3.rgu", rules, values, "percent16")
    state_keys = ke.keys_of(*game.unrank_many(np.arange(game.state_count)))
    won = rgu_keys.won_keys(rules)
    want = _reference_file(rules, state_keys.tolist() + won.tolist(), (values * 100).tolist() + [100.0] * won.size,
                           "percent16", {})
    assert (tmp_path / "b3.rgu").read_bytes() == want
    assert len(rgu.read_rgu(tmp_path / "b3.rgu").keys) == 2


@pytest.mark.parametrize("value_type", ["percent16", "f64"])
def test_a_shared_key_across_a_chunk_boundary_is_refused(tmp_path, monkeypatch, value_type) -> None:
    monkeypatch.setattr(rgu, "WRITE_CHUNK", 4)
    keys = np.array([9, 1, 2, 3, 4, 5, 6, 7, 4], np.uint64)  # sorted, the two 4s straddle chunks
    with pytest.raises(InputError, match="share one key"):
        rgu.write_rgu(tmp_path / "x.rgu", FINKEL2, keys, np.full(keys.size, 50.0), value_type)
    assert os.listdir(tmp_path) == []


def test_look_ups_find_exactly_the_keys_present(tmp_path, monkeypatch) -> None:
    """Present and absent keys, in every map and at every block edge, against a dict; with a
    small fence (blocks of 4) and a small read chunk, so edges are everywhere."""
    monkeypatch.setattr(rgu, "FENCE", 4)
    monkeypatch.setattr(rgu, "READ_CHUNK", 16)
    rng = np.random.default_rng(3)
    keys = np.unique(np.concatenate([rng.integers(0, 3 << 32, 3_000, dtype=np.uint64),
                                     np.array([0, 0xFFFFFFFF, 2 << 32, (2 << 32) | 0xFFFFFFFF], np.uint64)]))
    percent = rng.random(keys.size) * 100
    rgu.write_rgu(tmp_path / "k.rgu", FINKEL2, keys, percent, "f64")
    t = rgu.read_rgu(tmp_path / "k.rgu")
    assert [len(f) for f in t.fences] == [-(-len(k) // 4) for k in t.keys]
    stored = dict(zip(keys.tolist(), percent.tolist()))
    assert t.percent_many(keys).tolist() == percent.tolist()
    probes = np.unique(np.concatenate([keys + np.uint64(1), keys[1:] - np.uint64(1), rng.integers(0, 4 << 32, 2_000,
                                                                                              dtype=np.uint64)]))
    for k in probes.tolist()[::7]:
        if k in stored:
            assert t.percent_at(k) == stored[k]
        else:
            with pytest.raises(PositionNotCoveredError, match=f"{k:#x} is not in"):
                t.percent_at(k)
    absent = probes[~np.isin(probes, keys)]
    with pytest.raises(PositionNotCoveredError, match=f"{int(absent[0]):#x}"):
        t.percent_many(np.concatenate([keys[:10], absent[:1]]))


def test_keys_out_of_order_across_a_read_chunk_are_refused(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(rgu, "READ_CHUNK", 64)
    keys = np.arange(1, 200, dtype=np.uint64)
    rgu.write_rgu(tmp_path / "o.rgu", FINKEL2, keys, np.full(keys.size, 50.0), "percent16")
    data = bytearray((tmp_path / "o.rgu").read_bytes())
    (meta,) = struct.unpack(">I", data[4:8])
    at = 8 + meta + 8 + 4 * 64  # key 64 of the only map: the first of the second read chunk
    data[at:at + 4] = struct.pack(">I", 5)
    p = _cut(tmp_path, bytes(data), "o2.rgu")
    with pytest.raises(CorruptTableError, match="increasing order"):
        rgu.read_rgu(p)


def test_opening_and_looking_up_do_not_copy_the_map(tmp_path, monkeypatch) -> None:
    """numpy's searchsorted would copy a big-endian map whole, byte-swapped, on every call: on a
    RoyalUr-size file, the file held twice for each look-up. Opening checks the order a chunk at a
    time and keeps only the fence; the fence search allocates a few bytes."""
    keys = np.arange(0, 3 * 2_000_000, 3, dtype=np.uint64)  # one map of 8 MB of keys
    rgu.write_rgu(tmp_path / "big.rgu", FINKEL2, keys, np.linspace(0, 100, keys.size), "percent16")
    monkeypatch.setattr(rgu, "READ_CHUNK", 1 << 16)
    tracemalloc.start()
    try:
        t = rgu.read_rgu(tmp_path / "big.rgu")
        opened = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert opened < 1_000_000, opened  # a chunk (256 kB) and the fence (125 kB), not the 8 MB map
    probes = keys[np.random.default_rng(0).integers(0, keys.size, 1_000)]
    tracemalloc.start()
    try:
        t.percent_at(int(keys[123_456]))
        t.percent_many(probes)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200_000, peak
    assert t.percent_at(int(keys[-1])) == 100.0


def test_reading_a_table_back_in_numpy_gives_the_values_written(tmp_path) -> None:
    from gamesolver.games.ur.royal_table import royal_game

    rules = royal.load_ruleset("blitz", 2)
    values = np.random.default_rng(3).random(royal_game(rules).state_count)
    rgu.write_values(tmp_path / "b.rgu", rules, values, "f64")
    back = rgu.values_from_table(rgu.read_rgu(tmp_path / "b.rgu"), rules)
    assert np.allclose(back, values, rtol=0, atol=1e-15)
