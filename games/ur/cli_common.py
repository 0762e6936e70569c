"""What the ``solver ur`` commands share: the ``ur`` click group, the options every command takes
(``--pieces``, ``--board``, ``--dice``, ``--rules``, ``--cache``, ``--solve``, ``--opening``), the
rule family a command is asked for (``royal_rules``, ``fort_only``) and where a query reads its
values (``query_table``, ``query_source``), with the one-line errors of a missing table or a
position beyond an opening file.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, NoReturn

import click

from gamesolver.games.ur.answers import missing_table_message, outside_opening_message, shipped_fallback
from gamesolver.games.ur.rules import AUTO_BUILD_MAX_PIECES, MAX_PIECES, SOLVE_HINT, UrOptions
from gamesolver.games.ur.solve import default_table_dir, load_table
from gamesolver.solver.errors import InputError, MissingTableError
from gamesolver.solver.tables.paths import file_kind
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


def fort_options(pieces: int, board_file: str | None, dice_file: str | None) -> UrOptions:
    return UrOptions(pieces=pieces, board_file=board_file, dice_file=dice_file)


def log_line(text: str) -> None:
    click.echo(text, err=True)


rules_option = click.option(
    "--rules", "rules_name", default="fort", show_default=True,
    help="Rule set: fort (docs/ur.md) or one of RoyalUr's: finkel, blitz, masters (docs/royalur.md); "
         "their default --pieces is the rule set's own (7, 5, 7).")


def royal_rules(rules_name: str, pieces: int | None) -> Any:
    """RoyalUr's rule set named by --rules, or None for the fort rules. --pieces left at its
    default means the rule set's own piece count."""
    if rules_name.strip().lower() == "fort":
        return None
    from gamesolver.games.ur import royal

    given = click.get_current_context().get_parameter_source("pieces") != click.core.ParameterSource.DEFAULT
    return royal.load_ruleset(rules_name, pieces if given else None)


def fort_only(rules: Any, **given: Any) -> None:
    """Options that belong to the fort rules only; refused with a RoyalUr rule set."""
    for name, value in given.items():
        if value is not None and value is not False:
            raise InputError(f"--{name} applies to the fort rules only, not to {rules.name}")


cache_option = click.option("--cache", type=click.Path(file_okay=False), default=None,
                             help="Table cache directory (default: $SOLVER_CACHE_DIR or ~/.cache/gamesolver).")


def query_table(options: UrOptions, table_dir: str | None, cache: str | None = None, as_json: bool = False,
           scattered: bool = False, solve_first: bool = False) -> Any:
    """The table a query reads. Without ``solve_first`` (``--solve``) a query never writes where
    ``--table`` points, and a large solve never starts as its side effect: only a small table
    missing from the cache is built. With it a missing table of any size is solved first, where
    ``--table`` points or in the cache, with its progress shown (a stopped solve resumes).
    ``scattered``: the caller reads a few values, not the whole table (``solve.read_scattered``)."""
    where = Path(table_dir) if table_dir is not None else default_table_dir(options, cache)
    if table_dir is not None and where.is_file():  # the user's mistake (exit 2), not a table to solve there
        raise InputError(f"--table {where} is {file_kind(where)}, not a table: a table is a folder holding "
                         f"header.json (one that 'solver ur solve --pieces {options.pieces} --out FOLDER' makes)")
    if (table_dir is not None or options.pieces > AUTO_BUILD_MAX_PIECES) and not solve_first:
        if not (where / "header.json").is_file():
            missing_table(options, where, table_dir is not None, as_json)
    return load_table(options, where, log=log_line, cache=cache, scattered=scattered)


solve_option = click.option(
    "--solve", "solve_first", is_flag=True,
    help="Solve a missing table first, however large (without --solve the message says how long it "
         "would take), with a progress bar, then answer; a stopped solve resumes with the same command.")
opening_option = click.option(
    "--opening", "opening_file", type=click.Path(dir_okay=False), default=None,
    help="Answer from this opening file (solver ur opening build) instead of a table. Without --table "
         "or --opening, a missing table falls back on the opening file shipped for these options, if any.")


def query_source(options: UrOptions, table_dir: str | None, cache: str | None, as_json: bool,
            opening_file: str | None, solve_first: bool = False) -> tuple[Any, Any]:
    """What a query reads, and the opening file it is (None for a table): ``--opening``; else the
    table; else, when no table was named and the cache has none, the shipped opening file (not
    with ``solve_first``, which solves the missing table instead: ``query_table``)."""
    from gamesolver.games.ur import opening

    if opening_file is not None:
        if table_dir is not None or solve_first:
            raise InputError(f"give {'--table' if table_dir is not None else '--solve'} or --opening, not both")
        book: Any = opening.load(opening_file, options)
        return book, book
    book = shipped_fallback(options, cache) if table_dir is None and not solve_first else None
    if book is not None:
        return book, book
    return query_table(options, table_dir, cache, as_json, scattered=True, solve_first=solve_first), None


def outside_opening(options: UrOptions, book: Any, cache: str | None, as_json: bool) -> NoReturn:
    """``outside_opening_message`` as the CLI's error (exit 1; JSON with --json), with --solve's hint."""
    text, fields = outside_opening_message(options, book, cache)
    note, nl, rest = text.partition("\n")
    first, nl2, more = rest.partition("\n")
    _refuse(f"{note}{nl}{first}; {SOLVE_HINT}{nl2}{more}", fields, as_json)


def missing_table(options: UrOptions, where: Path, named: bool, as_json: bool) -> NoReturn:
    """Exit 1 with ``missing_table_message`` and, on the command line, that --solve would build
    it; with ``as_json`` as a JSON object."""
    text, fields = missing_table_message(options, where, named)
    first, nl, rest = text.partition("\n")
    _refuse(f"{first}; {SOLVE_HINT}{nl}{rest}", fields, as_json)


def _refuse(text: str, fields: dict[str, Any], as_json: bool) -> NoReturn:
    """A query without its table: exit 1, with ``text`` as the one-line error, or as JSON (the
    message and its fields) with ``as_json``."""
    if as_json:
        click.echo(json.dumps({"error": text, **fields}))
        raise SystemExit(1)
    raise MissingTableError(text)


@click.group(epilog=example("solver ur best-move start --roll gold+gold --pieces 2"))
def ur() -> None:
    """Ur: The Royal Game, fort rules: state graph and exact solution.

    Positions are written 'X:A1,B4 O:C7 X' (tiles of X, tiles of O, side to move) or 'start'.
    """
