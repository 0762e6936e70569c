"""Positions as players write them: North's row, a slash, South's row, then the side to move.

``6 6 6 / 6 6 6 S`` (or ``666/666 S`` when every count has one digit). Rows are written left to
right as seen from South's side of the board, North on top. Moves are named by the hole the
player points at: ``S-left``, ``S-middle``, ``S-right`` (``S-1`` .. ``S-n`` from the left also work).

The solver works on the mover-relative board: the mover's holes in sowing order, then the
opponent's. South sows right to left along the bottom row, then left to right along the top, so
for South to move the relative board is S-right, S-middle, S-left, N-left, N-middle, N-right;
for North it is N-left, N-middle, N-right, S-right, S-middle, S-left.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from gamesolver.games.unee.rules import DEFAULT, UneeOptions
from gamesolver.solver.errors import InputError

SIDES = {"s": "S", "south": "S", "n": "N", "north": "N"}
SIDE_NAMES = {"S": "South", "N": "North"}
EXAMPLE = "6 6 6 / 6 6 6 S"


@dataclass(frozen=True)
class Position:
    """An absolute position: both rows left to right as drawn, and the side to move."""

    north: tuple[int, ...]
    south: tuple[int, ...]
    side: str  # "S" or "N"

    @property
    def other(self) -> str:
        return "N" if self.side == "S" else "S"

    @property
    def balls(self) -> int:
        return sum(self.north) + sum(self.south)

    def relative(self) -> list[int]:
        """The mover-relative board (mover's row in sowing order, then the opponent's)."""
        south_sowing = list(reversed(self.south))
        if self.side == "S":
            return south_sowing + list(self.north)
        return list(self.north) + south_sowing

    @classmethod
    def from_relative(cls, board: list[int] | tuple[int, ...], side: str) -> "Position":
        board = [int(b) for b in board]
        n = len(board) // 2
        mover, opponent = board[:n], board[n:]
        if side == "S":
            return cls(tuple(opponent), tuple(reversed(mover)), "S")
        return cls(tuple(mover), tuple(reversed(opponent)), "N")

    def __str__(self) -> str:
        return format_position(self)


def start_position(options: UneeOptions = DEFAULT) -> Position:
    row = (options.balls_per_hole,) * options.holes_per_row
    return Position(row, row, "S")


def _parse_row(text: str, n: int, who: str) -> tuple[int, ...]:
    tokens = text.split()
    if len(tokens) == 1 and len(tokens[0]) == n and tokens[0].isdigit() and n > 1:
        tokens = list(tokens[0])  # compact form: one digit per hole
    counts = []
    for tok in tokens:
        if re.fullmatch(r"[+-]?\d+", tok) is None:
            raise InputError(f"{who}'s row: {tok!r} is not a ball count; expected whole numbers like '{EXAMPLE}'")
        value = int(tok)
        if value < 0:
            raise InputError(f"{who}'s row: negative ball count {value}; counts are 0 or more")
        counts.append(value)
    if len(counts) != n:
        raise InputError(
            f"{who}'s row has {len(counts)} holes; expected {n} (write the position like '{example(n)}')"
        )
    return tuple(counts)


def example(n: int) -> str:
    row = " ".join(["6"] * n)
    return f"{row} / {row} S"


def parse_side(text: str) -> str:
    side = SIDES.get(text.strip().lower())
    if side is None:
        raise InputError(f"unknown side {text!r}; expected S, N, south or north")
    return side


def parse_position(text: str, options: UneeOptions = DEFAULT) -> Position:
    """Parse ``'N-row / S-row SIDE'``; raise ``InputError`` naming what is wrong."""
    n = options.holes_per_row
    if text.strip().lower() == "start":
        return start_position(options)
    if "/" not in text:
        raise InputError(f"missing '/' between the rows in {text!r}; expected North's row / South's row and the side, like '{example(n)}'")
    north_text, _, rest = text.partition("/")
    rest_tokens = rest.split()
    if not rest_tokens:
        raise InputError(f"South's row and the side to move are missing; expected '{example(n)}'")
    last = rest_tokens[-1]
    if last.lower() in SIDES:
        side = SIDES[last.lower()]
        south_text = " ".join(rest_tokens[:-1])
    elif re.fullmatch(r"[+-]?\d+", last):
        raise InputError(f"the side to move is missing; end the position with S or N, like '{example(n)}'")
    else:
        raise InputError(f"unknown side {last!r}; expected S, N, south or north")
    north = _parse_row(north_text, n, "North")
    south = _parse_row(south_text, n, "South")
    pos = Position(north, south, side)
    if pos.balls > options.max_balls:
        raise InputError(
            f"{pos.balls} balls on the board; this variant has only {options.max_balls} "
            f"({options.holes} holes x {options.balls_per_hole})"
        )
    return pos


def format_position(pos: Position) -> str:
    return f"{' '.join(map(str, pos.north))} / {' '.join(map(str, pos.south))} {pos.side}"


def column_names(n: int) -> list[str]:
    if n == 3:
        return ["left", "middle", "right"]
    if n == 2:
        return ["left", "right"]
    if n == 1:
        return ["middle"]
    return [str(i + 1) for i in range(n)]


def move_name(side: str, relative_hole: int, n: int) -> str:
    """The player's name for the mover's relative hole (0 = first in sowing order)."""
    column = n - 1 - relative_hole if side == "S" else relative_hole
    return f"{side}-{column_names(n)[column]}"


def parse_move(text: str, pos: Position, options: UneeOptions = DEFAULT) -> int:
    """The relative hole of a move named like ``S-left``; it must be the mover's non-empty hole."""
    n = options.holes_per_row
    m = re.fullmatch(r"\s*([A-Za-z]+)\s*-?\s*([A-Za-z0-9]+)\s*", text)
    names = column_names(n)
    legal = ", ".join(f"{pos.side}-{c}" for c in names)
    if m is None:
        raise InputError(f"cannot read move {text!r}; expected one of {legal}")
    side = SIDES.get(m.group(1).lower())
    if side is None:
        raise InputError(f"unknown side in move {text!r}; expected one of {legal}")
    if side != pos.side:
        raise InputError(f"{SIDE_NAMES[pos.side]} is to move; {text!r} is a hole of {SIDE_NAMES[side]}")
    col_text = m.group(2).lower()
    if col_text in names:
        column = names.index(col_text)
    elif col_text.isdigit() and 1 <= int(col_text) <= n:
        column = int(col_text) - 1
    else:
        raise InputError(f"unknown hole in move {text!r}; expected one of {legal}")
    row = pos.south if side == "S" else pos.north
    if row[column] == 0:
        raise InputError(f"hole {side}-{names[column]} is empty; a move lifts a non-empty hole of the mover's row")
    return n - 1 - column if side == "S" else column


def diagram(pos: Position, indent: str = "") -> str:
    """A two-row picture of the board as seen from South, with the side to move marked."""
    n = len(pos.north)
    names = column_names(n)
    width = max(3, max(len(str(c)) for c in pos.north + pos.south) + 1, max(len(c) for c in names) + 1)
    head = " " * 8 + "".join(name.rjust(width) for name in names)
    north = "North " + "  " + "".join(str(c).rjust(width) for c in pos.north)
    south = "South " + "  " + "".join(str(c).rjust(width) for c in pos.south)
    mark = "  <- to move"
    north += mark if pos.side == "N" else ""
    south += mark if pos.side == "S" else ""
    return "\n".join(indent + line for line in (head, north, south))
