"""``solver ur opening build`` and ``info``: opening files (the solved values near the start, small
enough to ship) for both rule families.
"""
from __future__ import annotations

from pathlib import Path

import click

from gamesolver.games.ur import opening
from gamesolver.games.ur.cli_common import (
    ask, cache_option, emit, log_line, options_decorator, pick, rules_option, ur,
)
from gamesolver.solver.errors import InputError
from gamesolver.solver.report import example


@ur.group("opening", epilog=example("solver ur opening build --pieces 4 --turns 5 --out k4.npz"))
def opening_group() -> None:
    """Opening files: the values near the start, for answering without the full table."""


@opening_group.command("build", epilog=example("solver ur opening build --pieces 4 --turns 5 --out k4.npz"))
@options_decorator()
@click.option("--turns", type=int, required=True,
              help="Keep every position reachable from the start within this many turns (1-8; an extra "
                   "turn from a fort counts as one), and their successors' values.")
@click.option("--out", type=click.Path(dir_okay=False), required=True, help="The file to write (.npz).")
@click.option("--table", "table_dir", type=click.Path(file_okay=False), help="Table directory (default: the cache).")
@cache_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the file written and its counts.")
@rules_option
def opening_build(pieces: int, board_file: str | None, dice_file: str | None, turns: int, out: str,
                  table_dir: str | None, cache: str | None, as_json: bool, rules_name: str) -> None:
    """Write the opening file of a solved table (written whole or not at all). With a RoyalUr rule
    set a turn is one move (a roll and what is done with it)."""
    if not 1 <= turns <= opening.MAX_TURNS:
        raise InputError(f"--turns must be from 1 to {opening.MAX_TURNS}; got {turns}")
    fam = pick(rules_name, pieces, board_file, dice_file)
    emit(ask(lambda: fam.opening_build(turns, out, table_dir, cache, log_line), as_json), as_json)


@opening_group.command("info", epilog=example("solver ur opening info k4.npz"))
@click.argument("file", type=click.Path(dir_okay=False))
@options_decorator()
@click.option("--json", "as_json", is_flag=True, help="Print the file's header as JSON.")
@rules_option
@click.pass_context
def opening_info(ctx: click.Context, file: str, pieces: int, board_file: str | None, dice_file: str | None,
                 as_json: bool, rules_name: str) -> None:
    """What an opening file holds and which table it was built from. The file records its rule
    set and piece count, which are taken from it unless --rules or --pieces is given (then the
    file is checked against them, as are --board and --dice)."""
    found = opening.read_header(Path(file), "solver ur opening build")
    given = {name for name in ("pieces", "rules_name")
             if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT}
    royal_file = found.get("format") == "gamesolver-royalur-opening"
    if "rules_name" not in given and royal_file and found.get("rules"):
        rules_name = str(found["rules"])
    recorded = found.get("pieces") if royal_file else (found.get("options") or {}).get("pieces")
    if "pieces" not in given and isinstance(recorded, int):
        pieces = recorded
        given.add("pieces")
    emit(pick(rules_name, pieces, board_file, dice_file, "pieces" in given).opening_info(file), as_json)
