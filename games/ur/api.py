"""The Ur Python API a notebook uses: solved tables that answer in the players' words, for the fort
rules and RoyalUr's rule sets through the same calls.

Positions are the players' notation, rolls their names, actions the tiles they use; nothing here
speaks of command-line options or of the solver's ranks. ``family`` picks a rule family
(``games.ur.family``), which the commands and the server use too; the tables it opens are
``games.ur.tables``'.
"""
from __future__ import annotations

import os
from typing import Any

from gamesolver.games.ur import royal
from gamesolver.games.ur.family import Family, refuse_options
from gamesolver.games.ur.fort_family import FortFamily
from gamesolver.games.ur.royal_family import RoyalFamily
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.tables import RoyalTable, UrAction, UrTable, UrValue
from gamesolver.solver.errors import InputError

Where = str | os.PathLike[str]

__all__ = ["RoyalTable", "UrAction", "UrTable", "UrValue", "family", "open_opening", "open_table", "parse",
           "solve_table"]


def is_fort(rules: str) -> bool:
    return str(rules).strip().lower() == "fort"


def family(rules: str = "fort", pieces: int | None = None, *, board: str | None = None, dice: str | None = None,
           options: UrOptions | None = None) -> Family:
    """The rule family ``rules`` names (``fort``, or RoyalUr's ``finkel``, ``blitz``, ``masters``)
    with these settings. ``pieces`` None: the fort rules' default, or a RoyalUr rule set's own
    count (7, 5, 7). ``board`` and ``dice`` (data files) or ``options`` (``UrOptions``) belong to
    the fort rules; given with another family they are refused."""
    if is_fort(rules):
        if options is not None and pieces is not None and options.pieces != pieces:
            raise InputError(f"pieces={pieces} disagrees with the options' pieces={options.pieces}; give one")
        if options is None:
            options = UrOptions(board_file=board, dice_file=dice) if pieces is None else \
                UrOptions(pieces=pieces, board_file=board, dice_file=dice)
        return FortFamily(options)
    if str(rules).strip().lower() not in royal.ruleset_names():  # the family's own message names all four
        raise InputError(f"unknown rule set {rules!r}; expected fort or one of RoyalUr's: "
                         f"{', '.join(royal.ruleset_names())}")
    ruleset = royal.load_ruleset(rules, pieces)
    if options is not None:
        raise InputError("options= (board, dice) belong to the fort rules; RoyalUr's rule sets are named by rules=")
    refuse_options(ruleset.name, board=board, dice=dice)
    return RoyalFamily(ruleset)


def open_table(path: Where | None = None, *, pieces: int | None = None, options: UrOptions | None = None,
               cache: Where | None = None, rules: str = "fort") -> UrTable | RoyalTable:
    """Open the table at ``path`` (default: the cache); never solves. A missing table is a
    MissingTableError naming the folder; one built for other options is a TableMismatchError.
    ``rules``: ``fort`` (the default) or one of RoyalUr's (``finkel``, ``blitz``, ``masters``;
    ``pieces`` defaults to the rule set's own, and ``path`` may also be an ``.rgu`` file)."""
    return family(rules, pieces, options=options).open_table(path, cache)


def open_opening(path: Where | None = None, *, pieces: int | None = None,
                 options: UrOptions | None = None, rules: str = "fort") -> UrTable | RoyalTable:
    """Answer from an opening file (``path``; default: the one shipped for these options): the
    values of the positions within a few turns of the start, taken from a solved table. A position
    outside it raises ``PositionNotCoveredError`` (a KeyError) from ``probe_*`` and the plain
    calls, and gives the default from ``get_*``; no file shipped for these options is a
    MissingTableError. ``rules`` as in ``open_table``."""
    return family(rules, pieces, options=options).open_opening(path)


def solve_table(pieces: int | None = None, *, options: UrOptions | None = None, out: Where | None = None,
                cache: Where | None = None, rules: str = "fort", **settings: Any) -> UrTable | RoyalTable:
    """Solve (or resume solving) and write the table, then open it; ``settings`` go to the solver
    (fort rules: ``tolerance``, ``threads``, ``method``, ``graph``, ``policy_place``, ``proof``,
    ``width``; RoyalUr's: ``tolerance``, ``threads``, ``graph``). Not named ``solve``: that name is
    the package's ``solve`` module, which replaces a function of that name once it is imported.
    Four pieces take about 7 minutes on two cores (7 min 24 s with the proof, docs/ur.md); up to
    three take seconds."""
    return family(rules, pieces, options=options).solve_table(out, cache, **settings)


def parse(text: str, pieces: int | None = None, options: UrOptions | None = None, rules: str = "fort") -> Any:
    """A position in the players' notation, e.g. 'X:A1,B4 O:C7 X', or 'start' (with one of
    RoyalUr's ``rules``, theirs: 'L:7/-/0 D:7/-/0 L')."""
    return family(rules, pieces, options=options).parse(text)
