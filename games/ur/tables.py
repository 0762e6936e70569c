"""The tables a user opens, for both rule families: ``UrTable`` (the fort rules' tables and opening
files) and ``RoyalTable`` (RoyalUr's rule sets: our tables, ``.rgu`` files, opening files), which
answer in the players' words with the same calls, and the actions and values they answer with.

Each question has python-chess's pair: ``probe_*`` raises ``PositionNotCoveredError`` where the
table does not hold the position (an opening file beyond its turns), ``get_*`` returns a default.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from abc import ABC, abstractmethod
from typing import Any, Callable, TypeVar

from gamesolver.games.ur import royal, royal_answers
from gamesolver.games.ur.answers import game_over_refusal
from gamesolver.games.ur.notation import Position
from gamesolver.games.ur.notation import parse as _parse
from gamesolver.games.ur.provenance import Provenance, of_table
from gamesolver.games.ur.royal_table import royal_choices
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import choices, state_interval, state_value
from gamesolver.solver.errors import PositionNotCoveredError


@dataclass(frozen=True)
class UrAction:
    """One legal action for a roll, named by tiles, with its value for the side that takes it."""

    text: str  # e.g. 'move B1-B2 (captures B2)', 'spawn on B5'
    kind: str  # 'spawn', 'move' or 'pass'
    paths: tuple[tuple[str, ...], ...]  # spawn: (('B1',),); move: each piece's tiles in order
    captures: tuple[str, ...]
    extra_turn: bool
    wins: bool
    value: float  # P(win) - P(loss) for the side that acts, after this action

    def as_dict(self) -> dict[str, Any]:
        return {"action": self.text, "kind": self.kind, "paths": [list(p) for p in self.paths],
                "captures": list(self.captures), "extra_turn": self.extra_turn, "wins": self.wins,
                "value": self.value}


@dataclass(frozen=True)
class UrValue:
    """A value with what is known of it: proven (``lower`` <= the game's value <= ``upper``) or not
    (``residual``: the largest change of the solve's last sweep, or the bound it was below; not a
    bound on the error)."""

    value: float
    proven: bool
    lower: float | None = None
    upper: float | None = None
    residual: float | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value, "proven": self.proven}
        if self.proven:
            out.update(lower=self.lower, upper=self.upper)
        elif self.residual is not None:
            out["residual"] = self.residual
        return out


T = TypeVar("T")


def covered_or(ask: Callable[[Any], T], position: Any, default: Any) -> T | Any:
    """``ask(position)``, or ``default`` where the table does not hold the position."""
    try:
        return ask(position)
    except PositionNotCoveredError:
        return default


class _Probes(ABC):
    """python-chess's pair for each question a table answers: ``probe_*`` raises
    ``PositionNotCoveredError`` (a KeyError) where the table does not hold the position (an
    opening file beyond its turns), ``get_*`` returns ``default`` there instead."""

    @abstractmethod
    def value(self, position: Any) -> float:
        """P(win) - P(loss) for the side to move, before it rolls."""

    @abstractmethod
    def evaluate(self, position: Any) -> UrValue:
        """The value with its proven interval, or unproven with its residual."""

    def probe_value(self, position: Any) -> float:
        """``value``: P(win) - P(loss) for the side to move, before it rolls."""
        return self.value(position)

    def get_value(self, position: Any, default: Any = None) -> Any:
        return covered_or(self.probe_value, position, default)

    def probe_evaluation(self, position: Any) -> UrValue:
        """``evaluate``: the value with its proven interval, or unproven with its residual."""
        return self.evaluate(position)

    def get_evaluation(self, position: Any, default: Any = None) -> Any:
        return covered_or(self.probe_evaluation, position, default)


class UrTable(_Probes):
    """A solved Ur table for one set of options; positions may be text or ``Position``. A table
    holds every position; an opening file (``open_opening``) only those near the start, and the
    others raise ``PositionNotCoveredError`` (``probe_*``) or give the default (``get_*``)."""

    def __init__(self, table: Any, options: UrOptions) -> None:
        self.table = table
        self.options = options

    @property
    def path(self) -> Path:
        return Path(self.table.path)

    def position(self, position: str | Position) -> Position:
        return position if isinstance(position, Position) else _parse(position, self.options)

    def value(self, position: str | Position) -> float:
        """P(win) - P(loss) for the side to move, before it rolls."""
        mine, theirs = self.position(position).mover_relative()
        return state_value(self.options, self.table, mine, theirs)

    @property
    def provenance(self) -> Provenance:
        """Whether this table's values are proven (``games.ur.provenance.Provenance``: its ``text()``
        says 'proven within ...' or 'unproven (residual ...)')."""
        return of_table(self.table)

    def evaluate(self, position: str | Position) -> UrValue:
        """The value before rolling with what is known of it: its proven interval, or that it is
        unproven and the residual of the solve it came from."""
        pos = self.position(position)
        v = self.value(pos)
        fields = self.provenance.fields(v, state_interval(self.options, self.table, *pos.mover_relative()))
        return UrValue(v, fields["proven"], fields.get("lower"), fields.get("upper"),
                       fields.get("residual", fields.get("residual_below")))

    def actions(self, position: str | Position, roll: str) -> list[UrAction]:
        """Every legal action for ``roll`` (e.g. 'gold+gold'), best first. A won game (one side
        holds every fort) has none to choose: an ``InputError`` says so."""
        names = self.options.board.names
        pos = self.position(position)
        r = self.options.dice.index(roll)
        game_over_refusal(self.options, pos)
        ranked = choices(self.options, self.table, pos, r)
        return [
            UrAction(
                text=c.action.describe(self.options.board),
                kind=c.action.kind,
                paths=tuple(tuple(names[t] for t in p) for p in c.action.paths),
                captures=tuple(names[t] for t in c.action.captures),
                extra_turn=c.action.extra_turn,
                wins=c.action.win,
                value=c.value,
            )
            for c in ranked
        ]

    def best_action(self, position: str | Position, roll: str) -> UrAction:
        """The best action for ``roll``; a pass when nothing is legal."""
        return self.actions(position, roll)[0]


class RoyalTable(_Probes):
    """A table of one of RoyalUr's rule sets (ours, an ``.rgu`` file, or an opening file) answering
    in the same words as ``UrTable``: positions in RoyalUr's notation ('L:7/-/0 D:7/-/0 L' or
    'start'), rolls as numbers, ``value`` P(win) - P(loss) (2 P(win) - 1: these games always end)
    and ``win_probability`` beside it."""

    def __init__(self, lookup: Callable[[royal.State], float], rules: royal.RuleSet, provenance: Provenance,
                 path: Path) -> None:
        self._look, self.rules, self.provenance, self._path = lookup, rules, provenance, path

    @property
    def path(self) -> Path:
        return self._path

    def position(self, position: str | royal.Position) -> royal.Position:
        return royal.parse(position, self.rules) if isinstance(position, str) else position

    def win_probability(self, position: str | royal.Position) -> float:
        """The chance that the side to move wins, before it rolls."""
        return self._look(self.position(position).state())

    def probe_win_probability(self, position: str | royal.Position) -> float:
        return self.win_probability(position)

    def get_win_probability(self, position: str | royal.Position, default: Any = None) -> Any:
        return covered_or(self.probe_win_probability, position, default)

    def value(self, position: str | royal.Position) -> float:
        """P(win) - P(loss) for the side to move, before it rolls (2 P(win) - 1)."""
        return 2.0 * self.win_probability(position) - 1.0

    def evaluate(self, position: str | royal.Position) -> UrValue:
        """The value before rolling, unproven (RoyalUr's rule sets are solved, not proven), with the
        residual of the solve it came from where it is known."""
        fields = self.provenance.fields(0.0)
        return UrValue(self.value(position), False, residual=fields.get("residual", fields.get("residual_below")))

    def actions(self, position: str | royal.Position, roll: int) -> list[UrAction]:
        """Every legal move for ``roll`` (0-4; 0 to 8 with Masters' dice), best first; empty when
        the roll must pass."""
        pos = self.position(position)
        r = royal_answers.parse_roll(self.rules, str(roll))
        path = self.rules.path_of(pos.to_move)
        out = []
        for c in royal_choices(self.rules, self._look, pos.state(), r):
            m = c.move
            tiles = tuple(t for t in ((path[m.source] if m.source >= 0 else None),
                                      (path[m.dest] if m.dest < self.rules.length else None)) if t)
            kind = "enter" if m.source < 0 else ("bear off" if m.dest == self.rules.length else "move")
            capture = (path[m.dest],) if m.capture else ()
            out.append(UrAction(text=royal_answers.describe(m, self.rules, pos.to_move), kind=kind, paths=(tiles,),
                                captures=capture, extra_turn=m.extra_roll, wins=m.win,
                                value=2.0 * c.win_probability - 1.0))
        return out

    def best_action(self, position: str | royal.Position, roll: int) -> UrAction | None:
        """The best move for ``roll``; None when the roll must pass."""
        moves = self.actions(position, roll)
        return moves[0] if moves else None
