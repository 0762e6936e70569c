"""``solver unee show`` and ``graph``: a position and its moves, and the size of the state graph."""
from __future__ import annotations

import sys
import time
from typing import Any

import click

from gamesolver.games.unee import notation
from gamesolver.games.unee.answers import show_answer
from gamesolver.games.unee.cli_common import emit_json, unee, variant_options
from gamesolver.games.unee.rules import UneeOptions
from gamesolver.solver.report import example
from gamesolver.solver.progress import progress
from gamesolver.games.unee.graph import build_graph, graph_summary


@unee.command(epilog=example('solver unee show "3 0 1 / 2 0 6 S"'))
@click.argument("position")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@variant_options
def show(options: UneeOptions, position: str, as_json: bool) -> None:
    """Draw POSITION and list every legal move with the position it leads to."""
    pos = notation.parse_position(position, options)
    answer = show_answer(pos, options)
    if as_json:
        emit_json(answer)
        return
    moves, over = answer["moves"], answer["game_over"]
    click.echo(notation.diagram(pos))
    click.echo()
    if over:
        click.echo(
            f"Game over: {notation.SIDE_NAMES[pos.side]} has no ball to sow; the {pos.balls} balls on the board "
            f"go to {notation.SIDE_NAMES[pos.other]}."
        )
        return
    for m in moves:
        note = f"  captures {m['captured']}" if m["captured"] else ""
        end = "  (then the opponent cannot move)" if m["game_over"] else ""
        balls = "ball) " if m["balls"] == 1 else "balls)"  # the columns line up either way
        click.echo(f"  {m['move']:<10} ({m['balls']:>2} {balls} -> {m['position']}{note}{end}")


@unee.command(epilog=example('solver unee graph --holes 2 --balls 4'))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@variant_options
def graph(options: UneeOptions, as_json: bool) -> None:
    """Count positions and moves of the whole state graph and of the part reachable from the start."""
    t0 = time.perf_counter()
    with progress(3, "state graph", enabled=sys.stderr.isatty() and options.max_balls > 24) as bar:
        bar.note("building moves")
        g = build_graph(options)
        bar.update()
        bar.note("predecessors")
        g.reverse()
        bar.update()
        bar.note("reachable part")
        summary = graph_summary(g)
        bar.update()
    summary["seconds"] = round(time.perf_counter() - t0, 3)
    if as_json:
        emit_json(summary)
        return
    tot = summary["total"]
    click.echo(
        f"Ünee Tugalluulax, {options.holes_per_row} holes per row, {options.max_balls} balls: "
        f"{summary['boards']:,} boards, {tot['states']:,} positions (board and side to move), {tot['moves']:,} moves."
    )
    click.echo(
        f"Reachable from the start: {tot['reachable_states']:,} positions, {tot['reachable_moves']:,} moves, "
        f"{tot['reachable_terminal']:,} game-over positions.  ({summary['seconds']} s)"
    )
    click.echo()
    click.echo(f"{'balls':>5} {'positions':>11} {'moves':>11} {'game over':>10} {'reachable':>10} {'reach moves':>12}")
    for layer in summary["layers"]:
        click.echo(
            f"{layer['balls']:>5} {layer['states']:>11,} {layer['moves']:>11,} {layer['terminal']:>10,} "
            f"{layer['reachable_states']:>10,} {layer['reachable_moves']:>12,}"
        )
