"""RoyalUr.net's rule sets for the ancient board (Finkel, Blitz, Masters): rules, notation, moves.

Owns the rule data read from ``data/ur_rulesets.json``, the position notation players write, the
move generator (every legal move for a roll, with its successor, extra roll and win);
``royal_encoding`` numbers the states. Pure Python: the reference the engine's kernels are
checked against.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import comb
from typing import Iterator

from gamesolver import data
from gamesolver.solver.errors import InputError

RULESETS_FILE = "ur_rulesets.json"
COLUMNS = "ABC"
ROWS = 8
# RoyalUr's table keys give each hand count three bits, so 7 is the most its format (and ours) holds.
MAX_PIECES = 7
SIDES = ("L", "D")
SIDE_NAMES = {"L": "light", "D": "dark"}


def mirror(tile: str) -> str:
    """The tile on the other player's side of the board (columns A and C swap)."""
    return {"A": "C", "B": "B", "C": "A"}[tile[0]] + tile[1:]


@dataclass(frozen=True)
class RuleSet:
    """One rule set with its piece count. Paths are light's; dark's is the mirror image."""

    name: str
    path_name: str
    path: tuple[str, ...]
    dice_name: str
    dice: int
    zero_counts_as: int | None
    pieces: int
    safe_rosettes: bool
    rosettes_grant_rolls: bool
    captures_grant_rolls: bool
    rosettes: frozenset[str]

    @property
    def length(self) -> int:
        """Tiles on a path; a piece at path index ``length`` has borne off."""
        return len(self.path)

    @property
    def dark_path(self) -> tuple[str, ...]:
        return tuple(mirror(t) for t in self.path)

    def path_of(self, side: str) -> tuple[str, ...]:
        return self.path if side == "L" else self.dark_path

    @property
    def roll_probabilities(self) -> tuple[tuple[int, Fraction], ...]:
        """(roll, exact probability) for every roll that can happen, smallest roll first."""
        out: dict[int, Fraction] = {}
        for total in range(self.dice + 1):
            roll = self.zero_counts_as if (total == 0 and self.zero_counts_as) else total
            out[roll] = out.get(roll, Fraction(0)) + Fraction(comb(self.dice, total), 2**self.dice)
        return tuple(sorted(out.items()))

    @property
    def cross(self) -> tuple[int, ...]:
        """For each index of the mover's path, the opponent's path index of the same tile (-1: private)."""
        theirs = {t: j for j, t in enumerate(self.dark_path)}
        return tuple(theirs.get(t, -1) for t in self.path)

    @property
    def rosette_index(self) -> frozenset[int]:
        """Path indices (the same for both players, by symmetry) that are rosettes."""
        return frozenset(i for i, t in enumerate(self.path) if t in self.rosettes)

    def settings_json(self) -> dict:
        """The rule set in RoyalUr's own game-settings words (used in .rgu metadata)."""
        return {
            "board_shape": "standard",
            "paths": self.path_name,
            "dice": self.dice_name,
            "start_pieces": self.pieces,
            "safe_rosettes": self.safe_rosettes,
            "rosettes_grant_rolls": self.rosettes_grant_rolls,
            "captures_grant_rolls": self.captures_grant_rolls,
        }


@lru_cache(maxsize=1)
def _rule_data() -> dict:
    with open(data.path(RULESETS_FILE), encoding="utf-8") as f:
        return json.load(f)


def ruleset_names() -> tuple[str, ...]:
    return tuple(_rule_data()["rulesets"])


@lru_cache(maxsize=32)
def load_ruleset(name: str, pieces: int | None = None) -> RuleSet:
    """The named rule set; ``pieces`` overrides its starting piece count (1-7)."""
    raw = _rule_data()
    key = name.strip().lower()
    if key not in raw["rulesets"]:
        raise InputError(f"unknown rule set {name!r}; expected one of {', '.join(ruleset_names())}")
    r = raw["rulesets"][key]
    n = r["pieces"] if pieces is None else pieces
    if not isinstance(n, int) or not 1 <= n <= MAX_PIECES:
        raise InputError(f"--pieces must be a whole number from 1 to {MAX_PIECES}, not {n!r}")
    dice = raw["dice"][r["dice"]]
    return RuleSet(
        name=key,
        path_name=r["path"],
        path=tuple(raw["paths"][r["path"]]),
        dice_name=r["dice"],
        dice=dice["dice"],
        zero_counts_as=dice["zero_counts_as"],
        pieces=n,
        safe_rosettes=r["safe_rosettes"],
        rosettes_grant_rolls=r["rosettes_grant_rolls"],
        captures_grant_rolls=r["captures_grant_rolls"],
        rosettes=frozenset(raw["rosettes"]),
    )


# ---------------------------------------------------------------------------------------------
# Positions


@dataclass(frozen=True)
class Side:
    """One player's pieces: in hand, on the board (indices along their own path), borne off."""

    hand: int
    path: frozenset[int]
    scored: int


@dataclass(frozen=True)
class State:
    """A position seen by the side to move (the solver's state): its pieces, then the other's."""

    mine: Side
    theirs: Side

    def swapped(self) -> "State":
        return State(self.theirs, self.mine)


@dataclass(frozen=True)
class Position:
    """An absolute position: light's pieces, dark's pieces and the side to move ('L' or 'D')."""

    light: Side
    dark: Side
    to_move: str = "L"

    def state(self) -> State:
        return State(self.light, self.dark) if self.to_move == "L" else State(self.dark, self.light)

    @staticmethod
    def of(state: State, to_move: str) -> "Position":
        if to_move == "L":
            return Position(state.mine, state.theirs, "L")
        return Position(state.theirs, state.mine, "D")


def start(rules: RuleSet) -> Position:
    return Position(Side(rules.pieces, frozenset(), 0), Side(rules.pieces, frozenset(), 0), "L")


_USAGE = (
    "write e.g. 'L:3/A2,B5/2 D:4/C1/2 L' (per side: pieces in hand/tiles on the board/pieces "
    "borne off; then the side to move) or 'start'"
)
_TOKEN = re.compile(r"^([LD]):(.*)$", re.IGNORECASE)


def parse(text: str, rules: RuleSet) -> Position:
    """Read a position; raise InputError with a one-line reason when it is not valid."""
    words = text.split()
    if len(words) == 1 and words[0].lower() == "start":
        return start(rules)
    sides: dict[str, Side] = {}
    to_move = None
    for w in words:
        m = _TOKEN.match(w)
        if m:
            side = m.group(1).upper()
            if side in sides:
                raise InputError(f"position lists {SIDE_NAMES[side]} twice; {_USAGE}")
            sides[side] = _parse_side(side, m.group(2), rules)
        elif w.lower() in ("l", "d", "light", "dark") and to_move is None:
            to_move = w[0].upper()
        else:
            raise InputError(f"cannot read {w!r} in the position; {_USAGE}")
    for side in SIDES:
        if side not in sides:
            raise InputError(f"position does not list {SIDE_NAMES[side]}'s pieces; {_USAGE}")
    if to_move is None:
        raise InputError(f"position does not say whose turn it is; {_USAGE}")
    pos = Position(sides["L"], sides["D"], to_move)
    check(pos, rules)
    return pos


def _parse_side(side: str, body: str, rules: RuleSet) -> Side:
    parts = body.split("/")
    if len(parts) != 3:
        raise InputError(f"{SIDE_NAMES[side]}'s part {side}:{body} needs three fields hand/tiles/borne-off; {_USAGE}")
    try:
        hand, scored = int(parts[0]), int(parts[2])
    except ValueError:
        raise InputError(
            f"{SIDE_NAMES[side]}'s pieces in hand and borne off must be whole numbers, "
            f"not {parts[0]!r} and {parts[2]!r}"
        ) from None
    path = rules.path_of(side)
    index = {t: i for i, t in enumerate(path)}
    on: list[int] = []
    tiles = parts[1].strip()
    for t in ([] if tiles in ("", "-") else tiles.split(",")):
        name = t.strip().upper()
        if name not in index:
            raise InputError(f"{t.strip()!r} is not on {SIDE_NAMES[side]}'s path; it is {', '.join(path)}")
        if index[name] in on:
            raise InputError(f"{SIDE_NAMES[side]} lists tile {name} twice")
        on.append(index[name])
    return Side(hand, frozenset(on), scored)


def check(pos: Position, rules: RuleSet) -> None:
    """Raise InputError unless the position can occur in a game that is not over."""
    tiles: dict[str, str] = {}
    for side, s in (("L", pos.light), ("D", pos.dark)):
        who = SIDE_NAMES[side]
        if s.hand < 0 or s.scored < 0:
            raise InputError(f"{who}'s piece counts cannot be negative")
        if s.hand + len(s.path) + s.scored != rules.pieces:
            raise InputError(
                f"{who} has {s.hand} in hand, {len(s.path)} on the board and {s.scored} borne off; "
                f"expected {rules.pieces} pieces in all (--pieces)"
            )
        if s.scored == rules.pieces:
            raise InputError(f"{who} has borne off every piece: the game is over")
        path = rules.path_of(side)
        for i in s.path:
            if not 0 <= i < rules.length:
                raise InputError(f"{who}'s path index {i} is off the path (0-{rules.length - 1})")
            if path[i] in tiles:
                raise InputError(f"tile {path[i]} holds a piece of both players")
            tiles[path[i]] = side
    if pos.to_move not in SIDES:
        raise InputError(f"side to move must be L or D, not {pos.to_move!r}")


def format_position(pos: Position, rules: RuleSet) -> str:
    """The notation ``parse`` reads: ``L:3/A2,B5/2 D:4/C1/2 L``."""
    out = []
    for side, s in (("L", pos.light), ("D", pos.dark)):
        path = rules.path_of(side)
        tiles = ",".join(path[i] for i in sorted(s.path)) or "-"
        out.append(f"{side}:{s.hand}/{tiles}/{s.scored}")
    return " ".join(out) + " " + pos.to_move


def diagram(pos: Position, rules: RuleSet) -> str:
    """The board as text, row 8 at the top (light's side on the left), then the counts."""
    held = {rules.path[i]: "L" for i in pos.light.path} | {rules.dark_path[i]: "D" for i in pos.dark.path}
    tiles = set(rules.path) | set(rules.dark_path)
    lines = ["     A   B   C"]
    for row in range(ROWS, 0, -1):
        cells = []
        for col in COLUMNS:
            t = f"{col}{row}"
            cells.append(f"[{held[t]}]" if t in held else " * " if t in rules.rosettes else " . " if t in tiles else "   ")
        lines.append(f" {row}  " + " ".join(cells).rstrip())
    lines.append(
        f"light: {pos.light.hand} in hand, {pos.light.scored} borne off;  "
        f"dark: {pos.dark.hand} in hand, {pos.dark.scored} borne off;  "
        f"{SIDE_NAMES[pos.to_move]} to move   (* rosette)"
    )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Moves


@dataclass(frozen=True)
class Move:
    """One legal move for a roll. ``source`` -1 enters a piece from the hand; ``dest`` equal to
    the path length bears it off. ``after`` is the state seen by the side that moves next: the
    same side when ``extra_roll``, the opponent otherwise; after a ``win`` it is the final
    position seen by the winner."""

    source: int
    dest: int
    capture: bool
    extra_roll: bool
    win: bool
    after: State


def moves(state: State, roll: int, rules: RuleSet) -> list[Move]:
    """Every legal move of the side to move for ``roll``; empty when it must pass."""
    if roll <= 0:
        return []
    me, them = state.mine, state.theirs
    length = rules.length
    cross = rules.cross
    theirs_at = set(them.path)
    out = []
    sources = ([-1] if me.hand > 0 else []) + sorted(me.path)
    for src in sources:
        dest = src + roll
        if dest > length:
            continue
        capture = False
        if dest < length:
            if dest in me.path:
                continue
            victim = cross[dest]
            if victim >= 0 and victim in theirs_at:
                if rules.safe_rosettes and dest in rules.rosette_index:
                    continue
                capture = True
        mine_path = set(me.path)
        mine_path.discard(src)
        scored = me.scored
        if dest == length:
            scored += 1
        else:
            mine_path.add(dest)
        new_me = Side(me.hand - (src == -1), frozenset(mine_path), scored)
        new_them = them
        if capture:
            new_them = Side(them.hand + 1, them.path - {cross[dest]}, them.scored)
        win = scored == rules.pieces
        extra = not win and dest < length and (
            (rules.rosettes_grant_rolls and dest in rules.rosette_index)
            or (rules.captures_grant_rolls and capture)
        )
        after = State(new_me, new_them) if (extra or win) else State(new_them, new_me)
        out.append(Move(src, dest, capture, extra, win, after))
    return out


def outcomes(state: State, rules: RuleSet) -> Iterator[tuple[int, Fraction, list[Move]]]:
    """(roll, probability, legal moves) per roll; an empty list means the turn passes."""
    for roll, p in rules.roll_probabilities:
        yield roll, p, moves(state, roll, rules)
