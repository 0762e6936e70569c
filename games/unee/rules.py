"""Ünee Tugalluulax rule options and single moves (docs/rules.md §1).

Two rows of holes; a move sows all balls of one of the mover's holes clockwise, one per hole;
a last ball that makes exactly four in a hole of the mover's row captures those four. A player
with an empty row at their turn loses the rest of the balls to the opponent.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from gamesolver.games.unee import _sow
from gamesolver.solver.errors import InputError

CAPTURE_COUNT = 4  # a hole that ends with exactly this many balls is captured
CAPTURE_ROWS = ("own", "both")
REPETITION_RULES = ("uncounted", "draw", "split")


@dataclass(frozen=True)
class UneeOptions:
    """A variant of the game. The defaults are the traditional board (2 x 3 holes, 6 balls each)."""

    holes_per_row: int = 3
    balls_per_hole: int = 6
    skip_origin: bool = False
    capture_rows: str = "own"

    def __post_init__(self) -> None:
        if not 1 <= self.holes_per_row <= 8:
            raise InputError(f"holes per row must be 1..8, got {self.holes_per_row}")
        if not 0 <= self.balls_per_hole <= 12:
            raise InputError(f"balls per hole must be 0..12, got {self.balls_per_hole}")
        if self.capture_rows not in CAPTURE_ROWS:
            raise InputError(f"unknown capture rows {self.capture_rows!r}; expected one of: own, both")

    @property
    def holes(self) -> int:
        """Holes on the whole board."""
        return 2 * self.holes_per_row

    @property
    def max_balls(self) -> int:
        """Balls in the game (all on the board at the start)."""
        return self.holes * self.balls_per_hole

    @property
    def capture_both(self) -> bool:
        return self.capture_rows == "both"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


DEFAULT = UneeOptions()


def check_rule(rule: str) -> str:
    if rule not in REPETITION_RULES:
        raise InputError(f"unknown repetition rule {rule!r}; expected one of: {', '.join(REPETITION_RULES)}")
    return rule


def sow_relative(board: list[int] | tuple[int, ...], hole: int, options: UneeOptions = DEFAULT) -> tuple[list[int], int]:
    """Play the mover's relative hole ``hole`` on a mover-relative board.

    Returns the successor board as seen by the opponent (who moves next) and the balls captured.
    """
    return _sow.sow_move(list(board), hole, options.skip_origin, options.capture_both, CAPTURE_COUNT)
