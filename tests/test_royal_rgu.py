"""RoyalUr's .rgu lookup tables: our reader and writer against RoyalUr's own finkel2p.rgu.

tests/data/finkel2p.rgu is RoyalUr-Java's models/finkel2p.rgu (commit f09c562; Finkel rules, two
pieces, percent16), shipped under its MIT licence (tests/data/finkel2p.rgu.LICENSE).
"""
from __future__ import annotations

import bisect
import os
import random
import struct
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ur import rgu, royal
from gamesolver.solver.errors import (
    CorruptTableError,
    InputError,
    MissingTableError,
    PositionNotCoveredError,
    TableMismatchError,
)
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
    assert t.entry_count == 12_990 == royal.Encoding(FINKEL2).royalur_state_count()
    t.expect(FINKEL2)


def test_our_solve_has_their_key_set_and_values(finkel2_solution):
    t = rgu.read_rgu(THEIRS)
    keys, percent = rgu.table_from_values(FINKEL2, finkel2_solution.values)
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
    keys, percent = rgu.table_from_values(FINKEL2, finkel2_solution.values)
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
        enc = royal.Encoding(rules)
        keys, _ = rgu.table_from_values(rules, np.zeros(enc.size))
        assert len(set(keys.tolist())) == len(keys) == enc.royalur_state_count()
    # shared tiles beyond eight are read in runs: Masters has twelve, in two runs of six
    ke = rgu.KeyEncoding(royal.load_ruleset("masters"))
    assert (ke.run, ke.runs, ke.run_bits, ke.board_bits) == (6, 2, 10, 28)
    kf = rgu.KeyEncoding(royal.load_ruleset("finkel"))
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
    ke = rgu.KeyEncoding(rules)
    rng = random.Random(5)
    for _ in range(200):
        pos = random_position(rules, rng)
        assert ke.key(pos.light, pos.dark) == _finkel_key_by_lanes(pos.light, pos.dark)


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(["finkel", "blitz", "masters"]), pieces=st.integers(1, 7), seed=st.integers(0, 2**32 - 1))
def test_the_numpy_keys_equal_the_slow_key_of_each_state(name: str, pieces: int, seed: int) -> None:
    from gamesolver.games.ur.royal_table import royal_game

    rules = royal.load_ruleset(name, pieces)
    enc, ke, game = royal.encoding(rules), rgu.key_encoding(rules), royal_game(rules)
    ranks = np.random.default_rng(seed).integers(0, enc.size, 300)
    assert list(ke.keys_of(*game.unrank_many(ranks))) == [ke.state_key(enc.unrank(int(r))) for r in ranks]


def test_reading_a_table_back_in_numpy_gives_the_values_written(tmp_path) -> None:
    from gamesolver.games.ur.royal_table import royal_game

    rules = royal.load_ruleset("blitz", 2)
    values = np.random.default_rng(3).random(royal_game(rules).state_count)
    rgu.write_values(tmp_path / "b.rgu", rules, values, "f64")
    back = rgu.values_from_table(rgu.read_rgu(tmp_path / "b.rgu"), rules)
    assert np.allclose(back, values, rtol=0, atol=1e-15)
