"""``solver unee export``: a table in the players' notation, as CSV or a numpy file."""
from __future__ import annotations

import sys

import click

from gamesolver.games.unee.cli_common import (
    RULE_CHOICE,
    RULE_HELP,
    cache_option,
    emit_json,
    load_table,
    table_option,
    unee,
    variant_options,
)
from gamesolver.games.unee.rules import UneeOptions
from gamesolver.solver.report import example
from gamesolver.games.unee import export as tables_out  # by module: a test stands in a full disk for write_csv
from gamesolver.solver.tables.atomic import atomic_path, check_writable
from gamesolver.games.unee.graph import build_graph
from gamesolver.solver.errors import InputError


@unee.command(epilog=example('solver unee export --on-board 4 --reachable --out four.csv'))
@click.option("--rule", type=RULE_CHOICE, default="uncounted", show_default=True, help=RULE_HELP)
@click.option("--format", "fmt", type=click.Choice(["csv", "npy"]), default="csv", show_default=True)
@click.option("--on-board", "balls", type=int, default=None,
              help="Only positions with this many balls on the board (the variant's --balls is per hole).")
@click.option("--reachable", is_flag=True, help="Only positions reachable from the standard start.")
@click.option("--out", "out", type=click.Path(dir_okay=False), default=None,
              help="Output file (CSV goes to stdout without it; npy needs it).")
@cache_option
@table_option
@click.option("--json", "as_json", is_flag=True, help="With --out: print what was written as JSON.")
@variant_options
def export(options: UneeOptions, rule: str, fmt: str, balls: int | None, reachable: bool, out: str | None,
           cache: str | None, table_dir: str | None, as_json: bool) -> None:
    """Export the table in the player's notation: position, side, value, remoteness, best moves."""
    if balls is not None and not 0 <= balls <= options.max_balls:
        raise InputError(f"--on-board {balls}: expected 0..{options.max_balls} balls on the board")
    if fmt == "npy" and out is None:
        raise InputError("--format npy needs --out FILE")
    if as_json and out is None:
        raise InputError("--json reports the file written with --out FILE; without --out the CSV itself goes to stdout")
    if out is not None:
        check_writable(out)
    table = load_table(options, rule, cache, table_dir)
    graph = build_graph(options)
    if out is None:
        tables_out.write_csv(sys.stdout, table, graph, balls, reachable)
        return
    with atomic_path(out) as tmp:
        if fmt == "csv":
            with open(tmp, "w", newline="") as f:
                count = tables_out.write_csv(f, table, graph, balls, reachable)
        else:
            import numpy as np

            arr = tables_out.export_array(table, graph, balls, reachable)
            count = len(arr)
            with open(tmp, "wb") as f:
                np.save(f, arr, allow_pickle=False)
    if as_json:
        emit_json({"path": out, "format": fmt, "rule": rule, "positions": count, "balls": balls,
                   "reachable": reachable, "options": options.as_dict()})
        return
    click.echo(f"wrote {count:,} positions to {out}", err=True)
