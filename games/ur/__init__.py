"""Ur: The Royal Game under the fort rules (docs/rules.md section 2).

    from gamesolver.games import ur
    t = ur.solve_table(pieces=3)            # or ur.open_table(path, pieces=3)
    t.value("start"), t.best_action("X:A1,B4 O:C7 X", "gold+gold").text

``rules`` reads the board and dice data, ``notation`` the positions players write, ``engine``
the legal actions in Python, ``solve`` builds the exact value table, ``api`` answers from it.
RoyalUr's rule sets (Finkel, Blitz, Masters): ``royal`` (rules, notation, moves, encoding),
``royal_table`` (solving them on the engine; ``royal_solve`` below), ``rgu`` (RoyalUr's files).
"""
from __future__ import annotations

import os
from functools import lru_cache

from gamesolver.games.ur.api import UrAction, UrTable, open_opening, open_table, parse, solve_table
from gamesolver.games.ur.notation import Position, format_position
from gamesolver.games.ur.rules import Board, Dice, UrOptions, load_board, load_dice

__all__ = ["Board", "Dice", "Position", "UrAction", "UrOptions", "UrTable", "format_position", "kernel", "load_board",
           "load_dice", "open_opening", "open_table", "parse", "royal_solve", "solve_table"]


@lru_cache(maxsize=8)
def kernel(options: UrOptions) -> "gamesolver.games.ur._fort.FortGame":  # type: ignore[name-defined]  # noqa: F821
    """The fort rules' move generator for these options (board, dice and piece count in C form),
    a ``StochasticGame`` that the engine in ``solver.stochastic`` solves."""
    from gamesolver.games.ur._fort import FortGame

    b = options.board
    rolls = [
        (
            r.probability,
            r.steps,
            r.heaven_steps,
            1 if r.spawn == "adjacent" else 0,
            b.mask(b.with_role(r.spawn)) if r.spawn and r.spawn != "adjacent" else 0,
        )
        for r in options.dice.rolls
    ]
    return FortGame(
        b.size,
        options.pieces,
        [list(n) for n in b.neighbours],
        b.mask(b.forts),
        b.mask(b.earth_forts),
        b.mask(b.heaven_forts),
        b.mask(b.with_role("ishtar")),
        b.mask({b.entry}),
        rolls,
        mirror=list(b.mirror) if options.uses_mirror else None,  # type: ignore[arg-type]
        threads=max(1, len(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else 1,
    )


def royal_solve(rules: str = "finkel", pieces: int | None = None, out: str | os.PathLike[str] | None = None,
                **kw: object) -> "gamesolver.solver.table.Table":  # type: ignore[name-defined]  # noqa: F821
    """Solve one of RoyalUr's rule sets (``finkel``, ``blitz``, ``masters``; ``pieces`` defaults
    to the rule set's own) on the engine and return the written table (``out``, else the cache);
    ``kw`` as ``games.ur.royal_table.royal_solve`` (tolerance, threads, graph, log)."""
    from gamesolver.games.ur import royal
    from gamesolver.games.ur.royal_table import royal_solve as solve_rules

    return solve_rules(royal.load_ruleset(rules, pieces), out, **kw)  # type: ignore[arg-type]
