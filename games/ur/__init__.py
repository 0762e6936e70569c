"""Ur: The Royal Game under the fort rules (docs/rules.md section 2).

    from gamesolver.games import ur
    t = ur.solve_table(pieces=3)            # or ur.open_table(path, pieces=3)
    t.value("start"), t.best_action("X:A1,B4 O:C7 X", "gold+gold").text
    f = ur.open_opening(rules="finkel")     # RoyalUr's rule sets through the same calls
    f.win_probability("start"), f.best_action("start", 2).text

``rules`` reads the board and dice data, ``generator`` makes the compiled move generator
(``kernel``), ``notation`` the positions players write, ``engine`` the legal actions in Python,
``solve`` builds the exact value table, ``answers`` answers from it.
RoyalUr's rule sets (Finkel, Blitz, Masters): ``royal`` (rules, notation, moves, encoding),
``royal_table`` (solving them on the engine; ``royal_solve`` below), ``rgu`` (RoyalUr's files),
``royal_answers``. Both families stand behind one interface (``family``: ``fort_family``,
``royal_family``), which the commands, the server and ``api`` ask; ``tables`` holds the tables
a user opens (``UrTable``, ``RoyalTable``).
"""
from __future__ import annotations

import os

from gamesolver.games.ur.generator import fresh_kernel, kernel
from gamesolver.games.ur.api import (
    RoyalTable, UrAction, UrTable, UrValue, family, open_opening, open_table, parse, solve_table,
)
from gamesolver.games.ur.notation import Position, format_position
from gamesolver.games.ur.rules import Board, Dice, UrOptions, load_board, load_dice
from gamesolver.games.ur import royal
from gamesolver.games.ur.royal_table import royal_solve as solve_rules

__all__ = ["Board", "Dice", "Position", "RoyalTable", "UrAction", "UrOptions", "UrTable", "UrValue", "family",
           "format_position", "fresh_kernel", "kernel", "load_board", "load_dice", "open_opening", "open_table",
           "parse", "royal_solve", "solve_table"]




def royal_solve(rules: str = "finkel", pieces: int | None = None, out: str | os.PathLike[str] | None = None,
                **kw: object) -> "gamesolver.solver.tables.table.Table":  # type: ignore[name-defined]  # noqa: F821
    """Solve one of RoyalUr's rule sets (``finkel``, ``blitz``, ``masters``; ``pieces`` defaults
    to the rule set's own) on the engine and return the written table (``out``, else the cache);
    ``kw`` as ``games.ur.royal_table.royal_solve`` (tolerance, threads, graph, log)."""
    return solve_rules(royal.load_ruleset(rules, pieces), out, **kw)  # type: ignore[arg-type]
