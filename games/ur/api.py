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
from gamesolver.solver.errors import InputError, MissingTableError, PositionNotCoveredError

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


class _Probes:
    """python-chess's pair for each question a table answers: ``probe_*`` raises
    ``PositionNotCoveredError`` (a KeyError) where the table does not hold the position (an
    opening file beyond its turns), ``get_*`` returns ``default`` there instead."""

    def value(self, position: Any) -> float:
        raise NotImplementedError

    def evaluate(self, position: Any) -> UrValue:
        raise NotImplementedError

    def probe_value(self, position: Any) -> float:
        """``value``: P(win) - P(loss) for the side to move, before it rolls."""
        return self.value(position)

    def get_value(self, position: Any, default: Any = None) -> Any:
        try:
            return self.probe_value(position)
        except PositionNotCoveredError:
            return default

    def probe_evaluation(self, position: Any) -> UrValue:
        """``evaluate``: the value with its proven interval, or unproven with its residual."""
        return self.evaluate(position)

    def get_evaluation(self, position: Any, default: Any = None) -> Any:
        try:
            return self.probe_evaluation(position)
        except PositionNotCoveredError:
            return default


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


class RoyalTable(_Probes):
    """A table of one of RoyalUr's rule sets (ours, an ``.rgu`` file, or an opening file) answering
    in the same words as ``UrTable``: positions in RoyalUr's notation ('L:7/-/0 D:7/-/0 L' or
    'start'), rolls as numbers, ``value`` P(win) - P(loss) (2 P(win) - 1: these games always end)
    and ``win_probability`` beside it."""

    def __init__(self, lookup: Any, rules: Any, provenance: Any, path: Path) -> None:
        self._look, self.rules, self.provenance, self._path = lookup, rules, provenance, path

    @property
    def path(self) -> Path:
        return self._path

    def position(self, position: str | Any) -> Any:
        from gamesolver.games.ur import royal

        return royal.parse(position, self.rules) if isinstance(position, str) else position

    def win_probability(self, position: str | Any) -> float:
        """The chance that the side to move wins, before it rolls."""
        return self._look(self.position(position).state())

    def probe_win_probability(self, position: str | Any) -> float:
        return self.win_probability(position)

    def get_win_probability(self, position: str | Any, default: Any = None) -> Any:
        try:
            return self.probe_win_probability(position)
        except PositionNotCoveredError:
            return default

    def value(self, position: str | Any) -> float:
        """P(win) - P(loss) for the side to move, before it rolls (2 P(win) - 1)."""
        return 2.0 * self.win_probability(position) - 1.0

    def evaluate(self, position: str | Any) -> UrValue:
        """The value before rolling, unproven (RoyalUr's rule sets are solved, not proven), with the
        residual of the solve it came from where it is known."""
        fields = self.provenance.fields(0.0)
        return UrValue(self.value(position), False, residual=fields.get("residual", fields.get("residual_below")))

    def actions(self, position: str | Any, roll: int) -> list[UrAction]:
        """Every legal move for ``roll`` (0-4; 0 to 8 with Masters' dice), best first; empty when
        the roll must pass."""
        from gamesolver.games.ur import royal_answers
        from gamesolver.games.ur.royal_table import royal_choices

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

    def best_action(self, position: str | Any, roll: int) -> UrAction | None:
        """The best move for ``roll``; None when the roll must pass."""
        moves = self.actions(position, roll)
        return moves[0] if moves else None


def _royal(rules: str, pieces: int | None) -> Any:
    """RoyalUr's rule set named ``rules``, or None for the fort rules."""
    if str(rules).strip().lower() == "fort":
        return None
    from gamesolver.games.ur import royal

    return royal.load_ruleset(rules, pieces)


def _royal_table(rules: Any, path: Where | None, cache: Where | None) -> RoyalTable:
    from gamesolver.games.ur import royal_answers
    from gamesolver.games.ur.provenance import of_table
    from gamesolver.games.ur.royal_table import default_table_dir, load_royal_table

    if path is not None and Path(path).is_file():  # a RoyalUr .rgu file
        look, _, prov = royal_answers.lookup(rules, str(path))
        return RoyalTable(look, rules, prov, Path(path))
    where = Path(path) if path is not None else default_table_dir(rules, None if cache is None else str(cache))
    try:
        solved = load_royal_table(rules, where, build=False)
    except MissingTableError:
        raise MissingTableError(f"no {rules.name} table for {rules.pieces} pieces at {where}; make it with "
                                f"ur.solve_table(rules={rules.name!r}, pieces={rules.pieces})") from None
    return RoyalTable(royal_answers.table_lookup(rules, solved), rules, of_table(solved), Path(solved.path))


def _options(options: UrOptions | None, pieces: int | None) -> UrOptions:
    if options is not None and pieces is not None and options.pieces != pieces:
        raise InputError(f"pieces={pieces} disagrees with the options' pieces={options.pieces}; give one")
    if options is not None:
        return options
    return UrOptions() if pieces is None else UrOptions(pieces=pieces)


def open_table(path: Where | None = None, *, pieces: int | None = None, options: UrOptions | None = None,
               cache: Where | None = None, rules: str = "fort") -> UrTable | RoyalTable:
    """Open the table at ``path`` (default: the cache); never solves. A missing table is a
    MissingTableError naming the folder; one built for other options is a TableMismatchError.
    ``rules``: ``fort`` (the default) or one of RoyalUr's (``finkel``, ``blitz``, ``masters``;
    ``pieces`` defaults to the rule set's own, and ``path`` may also be an ``.rgu`` file)."""
    from gamesolver.games.ur.solve import default_table_dir, load_table

    royal_rules = _royal(rules, pieces)
    if royal_rules is not None:
        _fort_options_only(options)
        return _royal_table(royal_rules, path, cache)
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
                 options: UrOptions | None = None, rules: str = "fort") -> UrTable | RoyalTable:
    """Answer from an opening file (``path``; default: the one shipped for these options): the
    values of the positions within a few turns of the start, taken from a solved table. A position
    outside it raises ``games.ur.opening.OutsideOpening`` (a KeyError); no file shipped for these
    options is a MissingTableError. ``rules`` as in ``open_table``."""
    from gamesolver.games.ur import opening

    royal_rules = _royal(rules, pieces)
    if royal_rules is not None:
        from gamesolver.games.ur import royal_opening

        _fort_options_only(options)
        book = royal_opening.load(path, royal_rules) if path is not None else royal_opening.shipped(royal_rules)
        if book is None:
            raise MissingTableError(f"no opening file is shipped for {royal_rules.name} with {royal_rules.pieces} "
                                    f"pieces; make one from a solved table with 'solver ur opening build --rules "
                                    f"{royal_rules.name}'")
        return RoyalTable(book.lookup(), royal_rules, book.provenance, Path(book.path))
    opts = _options(options, pieces)
    if path is not None:
        return UrTable(opening.load(path, opts), opts)
    shipped = opening.shipped(opts)
    if shipped is None:
        raise MissingTableError(f"no opening file is shipped for {opts.pieces} pieces on this board; make one "
                                f"from a solved table with 'solver ur opening build'")
    return UrTable(shipped, opts)


def solve_table(pieces: int | None = None, *, options: UrOptions | None = None, out: Where | None = None,
                cache: Where | None = None, rules: str = "fort", **settings: Any) -> UrTable | RoyalTable:
    """Solve (or resume solving) and write the table, then open it; ``settings`` go to the solver
    (``tolerance``, ``threads``, ``method``, ``graph``, ``policy_place``). Not named ``solve``: that
    name is the package's ``solve`` module, which replaces a function of that name once it is
    imported. Four pieces take about 7 minutes on two cores (7 min 24 s with the proof, docs/ur.md);
    up to three take seconds."""
    from gamesolver.games.ur.solve import default_table_dir
    from gamesolver.games.ur.solve import solve as _solve

    royal_rules = _royal(rules, pieces)
    if royal_rules is not None:  # RoyalUr's rule sets: ``settings`` as games.ur.royal_table.royal_solve
        from gamesolver.games.ur.royal_table import default_table_dir as royal_dir, royal_solve

        _fort_options_only(options)
        if out is None:
            out = royal_dir(royal_rules, None if cache is None else str(cache))
        royal_solve(royal_rules, out, **settings)
        return _royal_table(royal_rules, out, None)
    opts = _options(options, pieces)
    if out is None:
        out = default_table_dir(opts, None if cache is None else str(cache))
    return UrTable(_solve(opts, out, **settings), opts)


def parse(text: str, pieces: int | None = None, options: UrOptions | None = None, rules: str = "fort") -> Any:
    """A position in the players' notation, e.g. 'X:A1,B4 O:C7 X', or 'start' (with one of
    RoyalUr's ``rules``, theirs: 'L:7/-/0 D:7/-/0 L')."""
    royal_rules = _royal(rules, pieces)
    if royal_rules is not None:
        from gamesolver.games.ur import royal

        _fort_options_only(options)
        return royal.parse(text, royal_rules)
    return _parse(text, _options(options, pieces))


def _fort_options_only(options: UrOptions | None) -> None:
    if options is not None:
        raise InputError("options= (board, dice) belong to the fort rules; RoyalUr's rule sets are named by rules=")

