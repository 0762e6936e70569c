"""``solver ur``: the Ur commands, a thin layer over ``games.ur``.

Here the queries: best-move, analyze, show, export; ``cli_solve`` adds graph (state counts per
tier), solve (value iteration to a table) and check (is a table the game's value where endless
play is possible), ``cli_opening`` the opening files, ``cli_common`` what they share. ``--rules``
picks the fort rules (the default) or one of RoyalUr's rule sets, whose side lives in
``games.ur.royal_cli`` (with RoyalUr's ``.rgu`` table files).
"""
from __future__ import annotations

import json
import sys

import click

from gamesolver.games.ur.notation import diagram, parse
from gamesolver.games.ur.answers import (
    analyze_answer, answer_source, best_move_answer, nobody_wins, proven_text, show_answer,
    source_line,
)
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import choices
from gamesolver.solver.stochastic.planning import default_threads
from gamesolver.solver.errors import InputError
from gamesolver.solver.report import example
from gamesolver.games.ur import cli_opening, cli_solve  # noqa: F401  (they add their commands to ur)
from gamesolver.games.ur.cli_common import (
    cache_option, fort_only, fort_options, opening_option, options_decorator, outside_opening,
    query_source, query_table, royal_rules, rules_option, solve_option, ur,
)


def _roll_index(options: UrOptions, roll: str) -> int:
    return options.dice.index(roll)


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
    from gamesolver.games.ur.opening import OutsideOpening

    rules = royal_rules(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_cli

        fort_only(rules, board=board_file, dice=dice_file, cache=cache, opening=opening_file)
        return royal_cli.best_move_cmd(rules, position, roll, table_dir, as_json, solve_first)
    options = fort_options(pieces, board_file, dice_file)
    pos = parse(position, options)
    r = _roll_index(options, roll)
    table, book = query_source(options, table_dir, cache, as_json, opening_file, solve_first)
    try:
        ranked = choices(options, table, pos, r)
    except OutsideOpening:
        outside_opening(options, book, cache, as_json)
    best = ranked[0]
    board = options.board
    draw = nobody_wins(options)
    if draw is not None and not as_json:  # every value is 0: no action is best, and the answer says why
        click.echo(f"{pos.to_move} to move, roll {options.dice.rolls[r].name}: {len(ranked)} legal "
                   f"action{'s' if len(ranked) != 1 else ''}, all worth the same ({best.value:g})")
        click.echo(draw)
        return
    answer = best_move_answer(options, pos, r, ranked, table)
    if as_json:
        answer["source"] = answer_source(table, book, opening_file)
        click.echo(json.dumps(answer))
        return
    click.echo(f"{pos.to_move} to move, roll {options.dice.rolls[r].name}: {best.action.describe(board)}")
    click.echo(f"value for {pos.to_move}: {best.value:+.6f}{proven_text(answer)}  (P(win) - P(loss))")
    click.echo(source_line(table, book, opening_file))


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
    from gamesolver.games.ur.opening import OutsideOpening

    rules = royal_rules(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_cli

        fort_only(rules, board=board_file, dice=dice_file, cache=cache, opening=opening_file)
        return royal_cli.analyze_cmd(rules, position, table_dir, as_json, solve_first)
    options = fort_options(pieces, board_file, dice_file)
    pos = parse(position, options)
    table, book = query_source(options, table_dir, cache, as_json, opening_file, solve_first)
    try:
        answer = analyze_answer(options, table, pos)
    except OutsideOpening:
        outside_opening(options, book, cache, as_json)
    answer["source"] = answer_source(table, book, opening_file)
    if answer.get("winnable") is False and not as_json:
        click.echo(f"{answer['position']}: a draw whatever is rolled or played (value {answer['value']:g})")
        click.echo(answer["note"])
        return
    if as_json:
        click.echo(json.dumps(answer))
        return
    click.echo(f"{answer['position']}: value for {pos.to_move} before rolling {answer['value']:+.6f}"
               f"{proven_text(answer)}")
    for row in answer["rolls"]:
        click.echo(f"  {row['roll']:<14} p={row['probability']:<7g} {row['value']:+.6f}  {row['best']}")
    click.echo(source_line(table, book, opening_file))


@ur.command(epilog=example('solver ur show "X:A1,B4 O:C7 X"'))
@click.argument("position")
@options_decorator()
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the tiles each side holds and the side to move.")
@rules_option
def show(position: str, pieces: int, board_file: str | None, dice_file: str | None, as_json: bool,
         rules_name: str) -> None:
    """Draw POSITION (or 'start') on the board."""
    rules = royal_rules(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_cli

        fort_only(rules, board=board_file, dice=dice_file)
        return royal_cli.show_cmd(rules, position, as_json)
    options = fort_options(pieces, board_file, dice_file)
    pos = parse(position, options)
    if as_json:
        click.echo(json.dumps(show_answer(options, pos)))
        return
    click.echo(diagram(pos, options))


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
    from gamesolver.games.ur.export import write_csv, write_npy
    from gamesolver.solver.tables.atomic import atomic_path

    rules = royal_rules(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_cli

        fort_only(rules, board=board_file, dice=dice_file, cache=cache, reachable=reachable, json=as_json)
        if out is None:
            raise InputError("--format rgu needs --out FILE")
        return royal_cli.export_cmd(rules, fmt, table_dir, out, value_type, solve_first)
    if fmt == "rgu":
        raise InputError("--format rgu writes RoyalUr's rule sets (--rules finkel, blitz or masters), "
                         "not the fort rules")
    options = fort_options(pieces, board_file, dice_file)
    if fmt == "npy" and out is None:
        raise InputError("--format npy needs --out FILE")
    if as_json and out is None:
        raise InputError("--json reports the file written with --out FILE; without --out the CSV goes to standard output")
    if threads is not None and threads < 1:
        raise InputError("--threads must be at least 1")
    table = query_table(options, table_dir, cache, solve_first=solve_first)
    n_threads = threads or default_threads()
    if out is None:
        write_csv(options, table, sys.stdout, reachable, n_threads)  # click 8.5 deprecates get_text_stream
        return
    with atomic_path(out) as tmp:
        if fmt == "npy":
            count = write_npy(options, table, tmp, reachable, n_threads)
        else:
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                count = write_csv(options, table, f, reachable, n_threads)
    if as_json:
        click.echo(json.dumps({"out": out, "format": fmt, "positions": count, "reachable_only": reachable}))
    else:
        click.echo(f"wrote {count:,} positions to {out}", err=True)


