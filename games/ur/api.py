"""The Ur Python API a notebook uses: a solved table that answers in the players' words.

Positions are the players' notation, rolls their names, actions the tiles they use; nothing here
speaks of command-line options or of the solver's ranks. The solver itself is ``games.ur.solve``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gamesolver.games.ur.notation import Position
from gamesolver.games.ur.notation import parse as _parse
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.errors import InputError, MissingTableError

Where = str | os.PathLike[str]


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


class UrTable:
    """A solved Ur table for one set of options; positions may be text or ``Position``."""

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
        from gamesolver.games.ur.solve import state_value

        mine, theirs = self.position(position).mover_relative()
        return state_value(self.options, self.table, mine, theirs)

    @property
    def provenance(self) -> Any:
        """Whether this table's values are proven (``games.ur.provenance.Provenance``: its ``text()``
        says 'proven within ...' or 'unproven (residual ...)')."""
        from gamesolver.games.ur.provenance import of_table

        return of_table(self.table)

    def evaluate(self, position: str | Position) -> UrValue:
        """The value before rolling with what is known of it: its proven interval, or that it is
        unproven and the residual of the solve it came from."""
        from gamesolver.games.ur.solve import state_interval

        pos = self.position(position)
        v = self.value(pos)
        fields = self.provenance.fields(v, state_interval(self.options, self.table, *pos.mover_relative()))
        return UrValue(v, fields["proven"], fields.get("lower"), fields.get("upper"),
                       fields.get("residual", fields.get("residual_below")))

    def actions(self, position: str | Position, roll: str) -> list[UrAction]:
        """Every legal action for ``roll`` (e.g. 'gold+gold'), best first."""
        from gamesolver.games.ur.solve import choices

        names = self.options.board.names
        ranked = choices(self.options, self.table, self.position(position), self.options.dice.index(roll))
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


def _options(options: UrOptions | None, pieces: int | None) -> UrOptions:
    if options is not None and pieces is not None and options.pieces != pieces:
        raise InputError(f"pieces={pieces} disagrees with the options' pieces={options.pieces}; give one")
    if options is not None:
        return options
    return UrOptions() if pieces is None else UrOptions(pieces=pieces)


def open_table(path: Where | None = None, *, pieces: int | None = None, options: UrOptions | None = None,
               cache: Where | None = None) -> UrTable:
    """Open the table at ``path`` (default: the cache); never solves. A missing table is a
    MissingTableError naming the folder; one built for other options is a TableMismatchError."""
    from gamesolver.games.ur.solve import default_table_dir, load_table

    opts = _options(options, pieces)
    where = Path(path) if path is not None else default_table_dir(opts, None if cache is None else str(cache))
    try:
        return UrTable(load_table(opts, where, build=False, scattered=True), opts)
    except MissingTableError:
        raise MissingTableError(
            f"no Ur table for {opts.pieces} pieces at {where}; "
            f"make it with ur.solve_table(pieces={opts.pieces})"
        ) from None


def open_opening(path: Where | None = None, *, pieces: int | None = None,
                 options: UrOptions | None = None) -> UrTable:
    """Answer from an opening file (``path``; default: the one shipped for these options): the
    values of the positions within a few turns of the start, taken from a solved table. A position
    outside it raises ``games.ur.opening.OutsideOpening`` (a KeyError); no file shipped for these
    options is a MissingTableError."""
    from gamesolver.games.ur import opening

    opts = _options(options, pieces)
    if path is not None:
        return UrTable(opening.load(path, opts), opts)
    book = opening.shipped(opts)
    if book is None:
        raise MissingTableError(f"no opening file is shipped for {opts.pieces} pieces on this board; make one "
                                f"from a solved table with 'solver ur opening build'")
    return UrTable(book, opts)


def solve_table(pieces: int | None = None, *, options: UrOptions | None = None, out: Where | None = None,
          cache: Where | None = None, **settings: Any) -> UrTable:
    """Solve (or resume solving) and write the table, then open it; ``settings`` go to the solver
    (``tolerance``, ``threads``, ``method``, ``graph``, ``policy_place``). Not named ``solve``: that
    name is the package's ``solve`` module, which replaces a function of that name once it is
    imported. Four pieces take about 7 minutes on two cores (7 min 24 s with the proof, docs/ur.md);
    up to three take seconds."""
    from gamesolver.games.ur.solve import default_table_dir
    from gamesolver.games.ur.solve import solve as _solve

    opts = _options(options, pieces)
    if out is None:
        out = default_table_dir(opts, None if cache is None else str(cache))
    return UrTable(_solve(opts, out, **settings), opts)


def parse(text: str, pieces: int | None = None, options: UrOptions | None = None) -> Position:
    """A position in the players' notation, e.g. 'X:A1,B4 O:C7 X', or 'start'."""
    return _parse(text, _options(options, pieces))

