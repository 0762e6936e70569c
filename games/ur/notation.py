"""Ur position notation and the board diagram.

A position is written ``X:A1,B4 O:C7 X``: the tiles held by player X, the tiles held by player O
(``-`` or nothing after the colon for none), then the side to move. Pieces not on the board are
in their owner's pool. ``start`` is the empty board with X (the first player) to move.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from gamesolver.games.ur.rules import Board, UrOptions
from gamesolver.solver.errors import InputError

SIDES = ("X", "O")


@dataclass(frozen=True)
class Position:
    """Tiles (indices into the board) held by X and by O, and the side to move."""

    x: frozenset[int]
    o: frozenset[int]
    to_move: str = "X"

    def mover_relative(self) -> tuple[frozenset[int], frozenset[int]]:
        """(tiles of the side to move, tiles of the other side): the solver's state."""
        return (self.x, self.o) if self.to_move == "X" else (self.o, self.x)

    @staticmethod
    def from_relative(mine: frozenset[int], theirs: frozenset[int], to_move: str) -> "Position":
        return Position(mine, theirs, to_move) if to_move == "X" else Position(theirs, mine, to_move)


_TOKEN = re.compile(r"^([XO]):(.*)$", re.IGNORECASE)
_ROUND_COMMA = re.compile(r"\s*,\s*")
_AFTER_COLON = re.compile(r":\s+(?=[^\s:]*\d)")
_BEFORE_COLON = re.compile(r"\b([XO])\s+:", re.IGNORECASE)


def parse(text: str, options: UrOptions) -> Position:
    """Read a position; raise InputError with a one-line reason when it is not valid."""
    board = options.board
    # spaces people put in lists: round a comma, before a side's colon, and after it where a tile
    # follows ('X : A1, B4 O: C7 X'); a tile name has a digit, a side to move none
    words = _AFTER_COLON.sub(":", _BEFORE_COLON.sub(r"\1:", _ROUND_COMMA.sub(",", text))).split()
    if len(words) == 1 and words[0].lower() == "start":
        return Position(frozenset(), frozenset(), "X")
    usage = "write e.g. 'X:A1,B4 O:C7 X' (tiles of X, tiles of O, side to move) or 'start'"
    held: dict[str, list[int]] = {}
    to_move = None
    for w in words:
        m = _TOKEN.match(w)
        if m:
            side = m.group(1).upper()
            if side in held:
                raise InputError(f"position lists side {side} twice; {usage}")
            body = m.group(2).strip()
            held[side] = [] if body in ("", "-") else [board.index(t) for t in body.split(",") if t.strip()]
        elif w.upper() in SIDES and to_move is None:
            to_move = w.upper()
        else:
            raise InputError(f"cannot read {w!r} in the position; {usage}")
    if to_move is None:
        raise InputError(f"position does not say whose turn it is; {usage}")
    x, o = held.get("X", []), held.get("O", [])
    for side, tiles in (("X", x), ("O", o)):
        seen = set()
        for t in tiles:
            if t in seen:
                raise InputError(f"{side} lists tile {board.names[t]} twice")
            seen.add(t)
        if len(tiles) > options.pieces:
            raise InputError(f"{side} has {len(tiles)} pieces on the board but owns only {options.pieces}")
    both = set(x) & set(o)
    if both:
        raise InputError(f"a piece on two tiles: {', '.join(board.names[t] for t in sorted(both))} held by both X and O")
    return Position(frozenset(x), frozenset(o), to_move)


def format_position(pos: Position, board: Board) -> str:
    def tiles(s: frozenset[int]) -> str:
        return ",".join(board.names[t] for t in sorted(s)) or "-"

    return f"X:{tiles(pos.x)} O:{tiles(pos.o)} {pos.to_move}"


_MARK = {"fort": "*", "entry": "e", "royal": "r", "ishtar": "i", "marduk": "m"}


def diagram(pos: Position, options: UrOptions) -> str:
    """The board drawn with the last row on top; X and O are pieces, marks show tile roles."""
    board = options.board
    cols = sorted({c for c, _ in board.at})
    rows = sorted({r for _, r in board.at}, reverse=True)
    where = {xy: i for i, xy in enumerate(board.at)}
    lines = ["    " + " ".join(f" {chr(ord('A') + c)} " if c < 26 else f"{c:^3}" for c in cols)]
    for r in rows:
        cells, section = [], ""
        for c in cols:
            i = where.get((c, r))
            if i is None:
                cells.append("   ")
                continue
            section = board.sections[i]
            mark = next((_MARK[k] for k in _MARK if k in board.roles[i]), ".")
            piece = "X" if i in pos.x else "O" if i in pos.o else None
            cells.append(f"[{piece}]" if piece else f" {mark} ")
        lines.append(f"{r:>2}  " + " ".join(cells) + f"   {section}")
    k = options.pieces
    lines.append(
        f"pools: X {k - len(pos.x)}, O {k - len(pos.o)};  {pos.to_move} to move"
        "   (* fort, e entry, r royal, i Ishtar, m Marduk)"
    )
    return "\n".join(lines)
