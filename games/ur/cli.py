"""``solver ur``: the Ur commands, click only: each verb asks the rule family --rules names
(``games.ur.family``: the fort rules, the default, or one of RoyalUr's rule sets) and shows its
answer.

Here the queries: best-move, analyze, show, export; ``cli_solve`` adds graph (state counts per
tier), solve (value iteration to a table) and check (is a table the game's value where endless
play is possible), ``cli_opening`` the opening files, ``cli_common`` what they share.
"""
from __future__ import annotations

import sys

import click

from gamesolver.games.ur import cli_opening, cli_solve  # noqa: F401  (they add their commands to ur)
from gamesolver.games.ur.cli_common import (
    ask, cache_option, emit, log_line, opening_option, options_decorator, pick, rules_option, solve_option, ur,
)
from gamesolver.games.ur.family import ExportAsk, Where
from gamesolver.solver.errors import InputError
from gamesolver.solver.report import example


@ur.command("best-move", epilog=example("solver ur best-move start --roll gold+gold --pieces 2"))
@click.argument("position")
@click.option("--roll", required=True,
              help="blank+blank, blank+gold, blank+silver, gold+silver, gold+gold, silver+silver; with a "
                   "RoyalUr rule set the number rolled (0-4)")
@options_decorator()
@click.option("--table", "table_dir", type=click.Path(),
              help="Table directory (default: the cache); with a RoyalUr rule set also a RoyalUr .rgu file.")
@cache_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@rules_option
@opening_option
@solve_option
def best_move(position: str, roll: str, pieces: int, board_file: str | None, dice_file: str | None,
              table_dir: str | None, cache: str | None, as_json: bool, rules_name: str,
              opening_file: str | None, solve_first: bool) -> None:
    """The best action for ROLL in POSITION (or 'start') and its value for the side to move."""
    fam = pick(rules_name, pieces, board_file, dice_file)
    where = Where(table_dir, cache, opening_file, solve_first, log_line)
    emit(ask(lambda: fam.best_move(position, roll, where), as_json), as_json)


@ur.command(epilog=example('solver ur analyze "X:A1,B4 O:C7 X" --pieces 3'))
@click.argument("position")
@options_decorator()
@click.option("--table", "table_dir", type=click.Path(),
              help="Table directory (default: the cache); with a RoyalUr rule set also a RoyalUr .rgu file.")
@cache_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@rules_option
@opening_option
@solve_option
def analyze(position: str, pieces: int, board_file: str | None, dice_file: str | None, table_dir: str | None,
            cache: str | None, as_json: bool, rules_name: str, opening_file: str | None, solve_first: bool) -> None:
    """The value of POSITION before the roll, and each roll's best action and value."""
    fam = pick(rules_name, pieces, board_file, dice_file)
    where = Where(table_dir, cache, opening_file, solve_first, log_line)
    emit(ask(lambda: fam.analyze(position, where), as_json), as_json)


@ur.command(epilog=example('solver ur show "X:A1,B4 O:C7 X"'))
@click.argument("position")
@options_decorator()
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the tiles each side holds and the side to move.")
@rules_option
def show(position: str, pieces: int, board_file: str | None, dice_file: str | None, as_json: bool,
         rules_name: str) -> None:
    """Draw POSITION (or 'start') on the board."""
    emit(pick(rules_name, pieces, board_file, dice_file).show(position), as_json)


@ur.command("export", epilog=example("solver ur export --pieces 3 --format csv --out k3.csv"))
@options_decorator()
@click.option("--table", "table_dir", type=click.Path(file_okay=False), help="Table directory (default: the cache).")
@cache_option
@click.option("--format", "fmt", type=click.Choice(["csv", "npy", "rgu"]), default="csv", show_default=True,
              help="csv: position, side, pieces of each side, value; npy: a structured array (x, o: tile masks, "
                   "bit i = tile i of the board file; value); rgu: RoyalUr's lookup-table file (with --rules "
                   "finkel, blitz or masters).")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Output file (csv: default standard output).")
@click.option("--reachable", is_flag=True, help="Only positions reachable from the start (needs the stored graph's memory).")
@click.option("--threads", type=int, default=None, help="OpenMP threads (default: all cores).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the file written and how many positions (needs --out).")
@rules_option
@click.option("--value-type", default="percent16", show_default=True,
              help="With --format rgu: the stored values, percent16, f32 (float32) or f64 (float64).")
@solve_option
def export_cmd(pieces: int, board_file: str | None, dice_file: str | None, table_dir: str | None,
               cache: str | None, fmt: str, out: str | None, reachable: bool, threads: int | None,
               as_json: bool, rules_name: str, value_type: str, solve_first: bool) -> None:
    """Write every position of a solved table with its value (X to move; both mirror images), or a
    RoyalUr rule set's table as RoyalUr's .rgu file (written whole or not at all)."""
    if threads is not None and threads < 1:
        raise InputError("--threads must be at least 1")
    fam = pick(rules_name, pieces, board_file, dice_file)
    export = ExportAsk(fmt, table_dir, cache, out, reachable, threads, as_json, value_type, solve_first,
                       sys.stdout, log_line)  # sys.stdout: click 8.5 deprecates get_text_stream
    reply = ask(lambda: fam.export(export), as_json)
    if out is not None:
        emit(reply, as_json)
