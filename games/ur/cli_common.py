"""What the ``solver ur`` commands share: the ``ur`` click group, the options every command takes
(``--pieces``, ``--board``, ``--dice``, ``--rules``, ``--cache``, ``--solve``, ``--opening``), the
rule family a command asks (``pick``: the fort rules or one of RoyalUr's, ``games.ur.family``) and
how a family's ``Reply`` is shown (``emit``: its JSON or its lines, a refused query as a one-line
error or as JSON).
"""
from __future__ import annotations

import json
from typing import Any, Callable, NoReturn

import click

from gamesolver.games.ur.api import family, is_fort
from gamesolver.games.ur.family import Family, QueryRefused, Reply
from gamesolver.games.ur.rules import MAX_PIECES
from gamesolver.solver.report import example


BACKENDS = ("cpu", "ray", "gpu")


def options_decorator(default_pieces: int = MAX_PIECES) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        f = click.option("--dice", "dice_file", type=click.Path(dir_okay=False), help="Dice data file (JSON).")(f)
        f = click.option("--board", "board_file", type=click.Path(dir_okay=False), help="Board data file (JSON).")(f)
        f = click.option(
            "--pieces", type=int, default=default_pieces, show_default=True, help=f"Pieces per player (1-{MAX_PIECES})."
        )(f)
        return f

    return wrap


def pick(rules_name: str, pieces: int, board_file: str | None, dice_file: str | None,
         pieces_given: bool | None = None) -> Family:
    """The family --rules names. With one of RoyalUr's rule sets, --pieces left at its default
    means the rule set's own piece count; --board and --dice are refused."""
    if pieces_given is None:
        source = click.get_current_context().get_parameter_source("pieces")
        pieces_given = source != click.core.ParameterSource.DEFAULT
    return family(rules_name, pieces if pieces_given or is_fort(rules_name) else None,
                  board=board_file, dice=dice_file)


def emit(reply: Reply, as_json: bool) -> None:
    """Show a family's answer: its JSON, or its lines (and its notes on standard error); exit 1
    where it says the command failed."""
    if as_json:
        click.echo(json.dumps(reply.fields, default=str))
    else:
        for line in reply.lines:
            click.echo(line)
        for line in reply.notes:
            click.echo(line, err=True)
    if not reply.ok:
        raise SystemExit(1)


def ask(call: Callable[[], Reply], as_json: bool) -> Reply:
    """``call()``, where a query refused for a missing table (``QueryRefused``) exits 1 with its
    message as the one-line error or, with --json, as JSON (the message and its fields)."""
    try:
        return call()
    except QueryRefused as refused:
        if not as_json:
            raise
        _refuse_json(str(refused), refused.fields)


def _refuse_json(text: str, fields: dict[str, Any]) -> NoReturn:
    click.echo(json.dumps({"error": text, **fields}))
    raise SystemExit(1)


def log_line(text: str) -> None:
    click.echo(text, err=True)


rules_option = click.option(
    "--rules", "rules_name", default="fort", show_default=True,
    help="Rule set: fort (docs/ur.md) or one of RoyalUr's: finkel, blitz, masters (docs/royalur.md); "
         "their default --pieces is the rule set's own (7, 5, 7).")


cache_option = click.option("--cache", type=click.Path(file_okay=False), default=None,
                             help="Table cache directory (default: $SOLVER_CACHE_DIR or ~/.cache/gamesolver).")


solve_option = click.option(
    "--solve", "solve_first", is_flag=True,
    help="Solve a missing table first, however large (without --solve the message says how long it "
         "would take), with a progress bar, then answer; a stopped solve resumes with the same command.")
opening_option = click.option(
    "--opening", "opening_file", type=click.Path(dir_okay=False), default=None,
    help="Answer from this opening file (solver ur opening build) instead of a table. Without --table "
         "or --opening, a missing table falls back on the opening file shipped for these options, if any.")


@click.group(epilog=example("solver ur best-move start --roll gold+gold --pieces 2"))
def ur() -> None:
    """Ur: The Royal Game, fort rules or RoyalUr's (--rules): exact solutions.

    Every command takes --rules: fort (the default: hold all four forts to win, docs/ur.md) or one
    of RoyalUr's rule sets, finkel, blitz or masters (bear every piece off, docs/royalur.md).

    Positions are written 'X:A1,B4 O:C7 X' under the fort rules (tiles of X, tiles of O, side to
    move), or 'start'; RoyalUr's notation is in docs/royalur.md.
    """
