"""``solver ur opening build`` and ``info``: opening files (the solved values near the start, small
enough to ship) for both rule families.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from gamesolver.solver.errors import InputError
from gamesolver.solver.report import example
from gamesolver.games.ur.cli_common import (
    cache_option, fort_only, fort_options, options_decorator, query_table, royal_rules,
    rules_option, ur,
)


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
    from gamesolver.games.ur import opening

    if not 1 <= turns <= opening.MAX_TURNS:
        raise InputError(f"--turns must be from 1 to {opening.MAX_TURNS}; got {turns}")
    rules = royal_rules(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_opening
        from gamesolver.games.ur.royal_table import load_royal_table

        fort_only(rules, board=board_file, dice=dice_file, cache=cache)
        table = load_royal_table(rules, table_dir, build=False)
        arrays, header = royal_opening.build(rules, table, turns)
        royal_opening.write(out, arrays, header)
    else:
        options = fort_options(pieces, board_file, dice_file)
        table = query_table(options, table_dir, cache, as_json)
        arrays, header = opening.build(options, table, turns)
        opening.write(out, arrays, header)
    size = Path(out).stat().st_size
    if as_json:
        click.echo(json.dumps({"out": out, "bytes": size, "turns": turns,
                               "positions_answered": header["positions_answered"],
                               "positions_stored": header["positions_stored"],
                               "table_values_sha256": header["table"]["values_sha256"]}))
        return
    click.echo(f"{out}: {header['positions_answered']:,} positions within {turns} turns of the start answered, "
               f"{header['positions_stored']:,} values stored, {size:,} bytes; from table "
               f"{header['table']['values_sha256'][:16]} at {table.path}")


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
    from gamesolver.games.ur import opening

    found = opening.read_header(Path(file), "solver ur opening build")
    given = {name for name in ("pieces", "rules_name")
             if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT}
    if "rules_name" not in given and found.get("format") == "gamesolver-royalur-opening" and found.get("rules"):
        rules_name = str(found["rules"])
    recorded = found.get("pieces") if found.get("format") == "gamesolver-royalur-opening" else \
        (found.get("options") or {}).get("pieces")
    if "pieces" not in given and isinstance(recorded, int):
        pieces = recorded
        given.add("pieces")
    rules = royal_rules(rules_name, pieces)
    if rules is not None and "pieces" in given:
        from gamesolver.games.ur import royal

        rules = royal.load_ruleset(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_opening

        fort_only(rules, board=board_file, dice=dice_file)
        book: Any = royal_opening.load(file, rules)
    else:
        book = opening.load(file, fort_options(pieces, board_file, dice_file))
    if as_json:
        click.echo(json.dumps(book.header))
        return
    h, t = book.header, book.header["table"]
    if rules is not None:
        click.echo(f"{file}: RoyalUr {rules.name}, pieces={rules.pieces}, settings {h['settings_sha256'][:16]}")
        click.echo(f"  {h['positions_answered']:,} positions within {h['turns']} moves of the start answered, "
                   f"{h['positions_stored']:,} values stored")
        click.echo(f"  from table {t['values_sha256']} ({book.provenance.text()})")
        return
    click.echo(f"{file}: Ur (fort rules), pieces={h['options']['pieces']}, board {h['options']['board_sha256'][:16]}, "
               f"dice {h['options']['dice_sha256'][:16]}")
    click.echo(f"  {h['positions_answered']:,} positions within {h['turns']} turns of the start answered, "
               f"{h['positions_stored']:,} values stored")
    click.echo(f"  from table {t['values_sha256']} ({t['state_count']:,} states; {book.provenance.text()})")
