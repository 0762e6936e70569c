"""The Ur rules engine in plain Python: every legal action for a roll, in the player's words.

States are mover-relative: (tiles of the side to move, tiles of the other side). This engine is
what queries call to name actions; the solver's Cython kernel generates the same successors
(the tests hold the two together).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from gamesolver.games.ur.rules import Board, Roll, UrOptions

Tiles = frozenset[int]


@dataclass(frozen=True)
class Action:
    """One action and what it leads to (still from the mover's point of view)."""

    kind: str  # "spawn", "move" or "pass"
    paths: tuple[tuple[int, ...], ...]  # spawn: ((tile,),); move: one path of tiles per piece
    mine: Tiles
    theirs: Tiles
    captures: tuple[int, ...]
    extra_turn: bool  # a piece moved onto a fort: the mover acts again
    win: bool  # the mover holds every fort

    def describe(self, board: Board) -> str:
        n = board.names
        if self.kind == "pass":
            return "pass (no legal action)"
        if self.kind == "spawn":
            text = f"spawn on {n[self.paths[0][0]]}"
        else:
            text = "move " + " and ".join("-".join(n[t] for t in p) for p in self.paths)
        notes = []
        if self.captures:
            notes.append("captures " + ",".join(n[t] for t in self.captures))
        if self.win:
            notes.append("wins: all four forts")
        elif self.extra_turn:
            notes.append("fort: extra turn")
        return text + (f" ({'; '.join(notes)})" if notes else "")

    @property
    def outcome(self) -> tuple[Tiles, Tiles, int]:
        """(mine, theirs, flag) with flag 0 = turn passes, 1 = extra turn, 2 = win."""
        return self.mine, self.theirs, 2 if self.win else 1 if self.extra_turn else 0


def _step(board: Board, mine: Tiles, theirs: Tiles, frm: int, to: int) -> tuple[Tiles, Tiles, bool] | None:
    """One step of the piece on ``frm`` to ``to``: (mine, theirs, captured), or None if illegal."""
    if to in mine:
        return None
    captured = to in theirs
    if captured and to in board.forts and board.with_role("ishtar") & theirs:
        return None  # Ishtar protects the other side's forts
    return (mine - {frm}) | {to}, theirs - {to}, captured


def _walks(board: Board, mine: Tiles, theirs: Tiles, start: int, most: int) -> Iterator[Action]:
    """Every move of the piece on ``start`` of 1..``most`` steps that ends off ``start``."""

    def go(m: Tiles, t: Tiles, path: tuple[int, ...], caps: tuple[int, ...], fort: bool) -> Iterator[Action]:
        here = path[-1]
        for to in board.neighbours[here]:
            s = _step(board, m, t, here, to)
            if s is None:
                continue
            m2, t2, cap = s
            p2, caps2, fort2 = path + (to,), caps + ((to,) if cap else ()), fort or to in board.forts
            if to != start:
                yield Action("move", (p2,), m2, t2, caps2, fort2, board.forts <= m2)
            stopped = cap and not board.earth_forts <= m2  # dominating Earth: captures do not stop
            if len(p2) - 1 < most and not stopped:
                yield from go(m2, t2, p2, caps2, fort2)

    yield from go(mine, theirs, (start,), (), False)


def actions(options: UrOptions, mine: Tiles, theirs: Tiles, roll: Roll) -> list[Action]:
    """Every legal action for ``roll``; a single pass when there is none."""
    board = options.board
    out: list[Action] = []
    pool = options.pieces - len(mine)

    def spawn(tile: int) -> Action:
        m2, t2 = mine | {tile}, theirs - {tile}
        caps = (tile,) if tile in theirs else ()
        return Action("spawn", ((tile,),), m2, t2, caps, False, board.forts <= m2)

    e = board.entry
    if pool > 0 and e not in mine and (e not in theirs or len(theirs) > 1):
        out.append(spawn(e))
    if pool > 0 and roll.spawn:
        empty = set(range(board.size)) - mine - theirs
        if roll.spawn == "adjacent":
            spots: set[int] | frozenset[int] = {n for t in mine for n in board.neighbours[t]} & empty
        else:
            spots = board.with_role(roll.spawn) & empty
        out.extend(spawn(t) for t in sorted(spots))
    if roll.steps:
        most = roll.steps
        if roll.heaven_steps and board.heaven_forts <= mine:
            most = max(most, roll.heaven_steps)
        for p in sorted(mine):
            out.extend(_walks(board, mine, theirs, p, most))
    if roll.steps >= 2:
        for first in _walks_one(board, mine, theirs):
            moved_to = first.paths[0][-1]
            for p in sorted(first.mine - {moved_to}):
                for second in _walks(board, first.mine, first.theirs, p, 1):
                    out.append(
                        Action(
                            "move",
                            first.paths + second.paths,
                            second.mine,
                            second.theirs,
                            first.captures + second.captures,
                            first.extra_turn or second.extra_turn,
                            board.forts <= second.mine,
                        )
                    )
    if not out:
        out.append(Action("pass", (), mine, theirs, (), False, False))
    return out


def _walks_one(board: Board, mine: Tiles, theirs: Tiles) -> Iterator[Action]:
    for p in sorted(mine):
        yield from _walks(board, mine, theirs, p, 1)


def terminal_value(board: Board, mine: Tiles, theirs: Tiles) -> float | None:
    """+1 / -1 when one side already holds every fort, else None."""
    if board.forts <= mine:
        return 1.0
    if board.forts <= theirs:
        return -1.0
    return None
