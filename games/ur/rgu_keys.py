"""RoyalUr's 64-bit keys of Ur positions (``.rgu`` files are keyed by them): ``KeyEncoding``
turns a position, or a whole array of our ranks' states at once (``keys_of``), into RoyalUr's key;
``table_from_values`` gives every key and light's win percent of a solved table of ours.
"""
from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from typing import Any

import numpy as np
from gamesolver.games.ur import royal, royal_encoding
from gamesolver.solver.errors import InputError
from gamesolver.games.ur.royal_table import royal_game


# RoyalUr's layout groups the shared tiles in runs of at most this many (one lookup table each)
MAX_RUN = 8


def _board_index(tile: str) -> int:
    """RoyalUr's index of a tile: column + 3 * (row - 1)."""
    return "ABC".index(tile[0]) + 3 * (int(tile[1:]) - 1)


class KeyEncoding:
    """RoyalUr's key of a state with light to move, for one rule set and piece count.

    Tiles only light's path visits and tiles only dark's path visits get one bit each (set when
    held); tiles on both paths are read in runs, each run a base-4 number (0 empty, 1 dark,
    2 light) mapped to its place among the runs that piece counts allow. Then come dark's pieces
    in hand and light's pieces in hand, three bits each.
    """

    def __init__(self, rules: royal.RuleSet) -> None:
        self.rules = rules
        light, dark = set(rules.path), set(rules.dark_path)
        by_index = sorted(light | dark, key=_board_index)
        self.shared_tiles = [t for t in by_index if t in light and t in dark]
        self.light_only = [t for t in by_index if t in light and t not in dark]
        self.dark_only = [t for t in by_index if t in dark and t not in light]
        if len(self.light_only) != len(self.dark_only):
            raise InputError("the two paths are not mirror images; RoyalUr's keys need them to be")
        n_shared = len(self.shared_tiles)
        if n_shared <= MAX_RUN:
            self.run = n_shared
        else:
            segments = 2
            while True:
                self.run = -(-n_shared // segments)
                segments += 1
                if self.run <= MAX_RUN:
                    break
        self.runs = -(-n_shared // self.run)
        self.compress = self._compression(rules.pieces, self.run)
        top = int(self.compress.max())
        bits = 1
        while top > (1 << bits):  # RoyalUr's rule, kept as it is so keys agree bit for bit
            bits += 1
        self.run_bits = bits
        self.safe_bits = len(self.light_only)
        self.board_bits = 2 * self.safe_bits + self.runs * self.run_bits
        # where each player's path index sits: ('L'|'D'|'S', position in that list)
        self.light_place = [self._place(t, "L") for t in rules.path]
        self.dark_place = [self._place(t, "D") for t in rules.dark_path]

    def _place(self, tile: str, side: str) -> tuple[str, int]:
        if tile in self.shared_tiles:
            return ("S", self.shared_tiles.index(tile))
        return (side, (self.light_only if side == "L" else self.dark_only).index(tile))

    @staticmethod
    def _compression(pieces: int, run: int) -> np.ndarray:
        """Base-4 run -> its rank among the runs with at most ``pieces`` of each colour (-1: none)."""
        out = np.full(4**run, -1, dtype=np.int64)
        nxt = 0
        for state in range(4**run):
            digits = [(state >> (2 * k)) & 3 for k in range(run)]
            if 3 in digits or digits.count(1) > pieces or digits.count(2) > pieces:
                continue
            out[state] = nxt
            nxt += 1
        return out

    def key(self, light: royal.Side, dark: royal.Side) -> int:
        """The key of the position with these pieces and light to move."""
        light_bits = dark_bits = 0
        shared = [0] * len(self.shared_tiles)
        for i in light.path:
            kind, k = self.light_place[i]
            if kind == "S":
                shared[k] = 2
            else:
                light_bits |= 1 << k
        for i in dark.path:
            kind, k = self.dark_place[i]
            if kind == "S":
                shared[k] = 1
            else:
                dark_bits |= 1 << k
        war = 0
        for start in range(0, len(shared), self.run):
            state = 0
            for occ in shared[start:start + self.run]:
                state = (state << 2) | occ
            war = (war << self.run_bits) | int(self.compress[state])
        board = dark_bits | (war << self.safe_bits) | (light_bits << (self.safe_bits + self.runs * self.run_bits))
        return board | (dark.hand << self.board_bits) | (light.hand << (self.board_bits + 3))

    def state_key(self, state: royal.State) -> int:
        """The key of a mover-relative state: the mover plays light (the colours are symmetric)."""
        return self.key(state.mine, state.theirs)

    def keys_of(self, mine: np.ndarray, mine_scored: np.ndarray, theirs: np.ndarray,
                theirs_scored: np.ndarray) -> np.ndarray:
        """``state_key`` for arrays of mover-relative states given as path masks (bit i: a piece
        at path index i) and scores, in numpy: the mover plays light. Each 16-bit part of a mask is
        read through two tables: what it adds to the key outside the shared tiles (its private
        bits in place, less its pieces on the board in the hand field) and what it adds to the
        shared tiles read as one base-4 number (tiles are disjoint, so the parts add up); each run
        of shared digits is then compressed. int64 throughout: every key is below 2**63."""
        fixed, digits = self._mask_tables()
        i64 = np.int64
        mine, theirs = np.asarray(mine).astype(i64), np.asarray(theirs).astype(i64)
        pieces = self.rules.pieces
        hand = self.board_bits
        key = (pieces - np.asarray(mine_scored).astype(i64)) << (hand + 3)
        key += (pieces - np.asarray(theirs_scored).astype(i64)) << hand
        shared: Any = None
        for side, masks in ((0, mine), (1, theirs)):
            for part in range(fixed.shape[1]):
                m = masks if fixed.shape[1] == 1 else (masks >> (16 * part)) & 0xFFFF
                key += fixed[side, part][m]
                d = digits[side, part][m]
                shared = d if shared is None else shared + d
        n = len(self.shared_tiles)
        compress = self._compress64()
        war: Any = None
        for start in range(0, n, self.run):
            width = min(self.run, n - start)
            state = (shared >> (2 * (n - start - width))) & ((1 << (2 * width)) - 1) if n > width else shared
            war = compress[state] if war is None else (war << self.run_bits) | compress[state]
        if war is not None:
            key += war << self.safe_bits
        return key.view(np.uint64)

    def _compress64(self) -> np.ndarray:
        if getattr(self, "_compress_i64", None) is None:
            self._compress_i64 = self.compress.astype(np.int64)
        return self._compress_i64

    def _mask_tables(self) -> tuple[np.ndarray, np.ndarray]:
        """For each side (light = the mover, dark), each 16-bit part of its path mask and each
        value of that part: what it adds to the key outside the shared tiles (private bits in
        place, minus one in the side's hand field per piece), and what it adds to the shared tiles
        read as one base-4 number (the first shared tile the highest digit; light 2, dark 1)."""
        if getattr(self, "_tables", None) is None:
            width = min(16, self.rules.length)
            parts = -(-self.rules.length // 16)
            n = len(self.shared_tiles)
            fixed = np.zeros((2, parts, 1 << width), np.int64)
            digits = np.zeros((2, parts, 1 << width), np.int64)
            values = np.arange(1 << width, dtype=np.int64)
            light_at = self.safe_bits + self.runs * self.run_bits
            for side, (places, colour, private_at, hand_at) in enumerate(
                    ((self.light_place, 2, light_at, self.board_bits + 3), (self.dark_place, 1, 0, self.board_bits))):
                for i, (kind, k) in enumerate(places):
                    part, bit = divmod(i, 16)
                    held = (values >> bit) & 1
                    fixed[side, part] -= held << hand_at
                    if kind == "S":
                        digits[side, part] += (held * colour) << (2 * (n - 1 - k))
                    else:
                        fixed[side, part] += held << (private_at + k)
            self._tables = (fixed, digits)
        return self._tables


@lru_cache(maxsize=8)
def key_encoding(rules: royal.RuleSet) -> KeyEncoding:
    return KeyEncoding(rules)


CHUNK = 1 << 20  # states whose keys are computed at once (about 100 MB of scratch)


def all_state_keys(rules: royal.RuleSet, chunk: int = CHUNK) -> np.ndarray:
    """RoyalUr's key of every state of our encoding, indexed by rank (uint64), in chunks."""
    game, ke = royal_game(rules), key_encoding(rules)
    out = np.empty(game.state_count, dtype=np.uint64)
    for a in range(0, game.state_count, chunk):
        ranks = np.arange(a, min(a + chunk, game.state_count), dtype=np.int64)
        ms, ss, os_, ts = game.unrank_many(ranks)
        out[a:a + ranks.size] = ke.keys_of(ms, ss, os_, ts)
    return out


def won_keys(rules: royal.RuleSet) -> np.ndarray:
    """The keys of the positions light has just won (dark to move in them never comes: RoyalUr's
    tables hold them at 100 %)."""
    ke = key_encoding(rules)
    n = rules.pieces
    won = royal.Side(0, frozenset(), n)
    return np.array([ke.key(won, royal.Side(n - so - on_board, frozenset(tiles), so))
                     for so in range(n) for on_board in range(n - so + 1)
                     for tiles in combinations(range(rules.length), on_board)], dtype=np.uint64)


def table_from_values(rules: royal.RuleSet, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(keys, light's win percent) of every position RoyalUr's table holds, from our values (the
    mover's chance of winning, indexed by rank). Positions light has already won are added at
    100 %; positions dark has won are not in RoyalUr's tables."""
    enc = royal_encoding.encoding(rules)
    if values.shape != (enc.size,):
        raise InputError(
            f"values hold {values.shape} entries; expected {enc.size} for {rules.name} with {rules.pieces} pieces"
        )
    won = won_keys(rules)
    keys = np.concatenate([all_state_keys(rules), won])
    percent = np.concatenate([np.asarray(values, dtype=np.float64) * 100.0, np.full(won.size, 100.0)])
    return keys, percent
