"""``solver unee cycles``, ``cycle`` and ``check-eichler``: where play repeats, and Eichler's caption."""
from __future__ import annotations

import time
from pathlib import Path

import click

from gamesolver.games.unee import cycles as C, notation
from gamesolver.games.unee.cli_common import (
    RULE_CHOICE,
    RULE_HELP,
    cache_option,
    emit_json,
    load_table,
    unee,
    variant_options,
)
from gamesolver.games.unee.answers import cycle_answer, mover_difference, parse_captured
from gamesolver.games.unee.rules import UneeOptions
from gamesolver.solver.errors import InputError
from gamesolver.solver.report import example
from gamesolver.games.unee.cycles import cycle_summary
from gamesolver.games.unee.graph import build_graph
from gamesolver.solver.tables.atomic import check_writable
from gamesolver.games.unee.claims import explain_position


@unee.command(epilog=example('solver unee cycles'))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@variant_options
def cycles(options: UneeOptions, as_json: bool) -> None:
    """Strongly connected components of the game graph: cycles per number of balls."""
    t0 = time.perf_counter()
    summary = cycle_summary(build_graph(options))
    summary["seconds"] = round(time.perf_counter() - t0, 3)
    if as_json:
        emit_json(summary)
        return
    a, r = summary["total"]["all"], summary["total"]["reachable"]
    click.echo(
        f"{a['on_cycle']:,} of {a['positions']:,} positions lie on a cycle, in {a['components']:,} components "
        f"(largest {a['largest']:,}); reachable from the start: {r['on_cycle']:,} of {r['positions']:,} in "
        f"{r['components']:,} components.  ({summary['seconds']} s)"
    )
    click.echo()
    click.echo(f"{'balls':>5} {'positions':>10} {'on cycle':>9} {'comps':>6} {'largest':>8}   "
               f"{'reachable':>9} {'on cycle':>9} {'comps':>6}")
    for layer in summary["layers"]:
        a, r = layer["all"], layer["reachable"]
        click.echo(f"{layer['balls']:>5} {a['positions']:>10,} {a['on_cycle']:>9,} {a['components']:>6,} "
                   f"{a['largest']:>8,}   {r['positions']:>9,} {r['on_cycle']:>9,} {r['components']:>6,}")


@unee.command(epilog=example('solver unee cycle start --out start_cycle.png'))
@click.argument("position")
@click.option("--out", "out", type=click.Path(dir_okay=False), default=None,
              help="Write the picture (.png, .svg) or the graph (.graphml).")
@click.option("--radius", type=click.IntRange(min=0), default=None,
              help="Show the position's component within this many moves instead of one cycle.")
@click.option("--shortest", is_flag=True, help="Show the shortest cycle through POSITION, not best play's.")
@cache_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@variant_options
def cycle(options: UneeOptions, position: str, out: str | None, radius: int | None, shortest: bool,
          cache: str | None, as_json: bool) -> None:
    """The loop of POSITION: the cycle best play (uncounted rule) runs into, or the shortest cycle."""
    pos = notation.parse_position(position, options)
    if out:
        # refuse a bad --out before the work, not after it

        if Path(out).suffix.lower() not in C.GRAPH_SUFFIXES:
            raise InputError(f"--out {out}: expected a .png, .svg or .graphml file name")
        check_writable(out)
    g = build_graph(options)
    if radius is not None:
        G = C.neighbourhood(g, pos, radius)
        info = {"position": str(pos), "radius": radius, "nodes": G.number_of_nodes(), "edges": G.number_of_edges()}
        if out:
            C.save_graph(G, out, f"{pos}: its component within {radius} moves")
            info["out"] = out
        if as_json:
            emit_json(info)
        else:
            click.echo(f"{info['nodes']} positions and {info['edges']} moves of {pos}'s component within {radius} moves"
                       + (f" -> {out}" if out else ""))
        return
    lead = None
    if shortest:
        cyc = C.shortest_cycle(g, pos)
        what = "shortest cycle through the position"
    else:
        table = load_table(options, "uncounted", cache, None)
        lead, cyc = C.optimal_cycle(table, pos)
        what = "cycle of best play (uncounted rule)"
    info = cycle_answer(pos, shortest, cyc, lead)
    if cyc is None:
        if as_json:
            emit_json(info)
            return
        click.echo(("the position can never recur" if shortest else
                    f"best play from {pos} ends without repetition after {lead.length if lead else 0} plies")
                   + ("; no cycle to draw, nothing written to " + out if out else ""))
        return
    if out:
        title = f"{pos}: {what}, {cyc.length} plies" + (f", entered after {lead.length}" if lead and lead.length else "")
        C.save_graph(C.cycle_graph(cyc, lead), out, title)
        info["out"] = out
    if as_json:
        emit_json(info)
        return
    click.echo(f"{what}: {cyc.length} plies" + (f", entered after {lead.length} plies" if lead and lead.length else ""))
    for i, (m, p) in enumerate(zip(cyc.moves, cyc.positions[1:]), 1):
        cap = f"  captures {c}" if (c := cyc.captures[i - 1]) else ""
        click.echo(f"{i:>4}. {m:<10} -> {p}{cap}")
    if out:
        click.echo(f"picture: {out}")


@unee.command("check-eichler", epilog=example('solver unee check-eichler "0 1 4 / 3 1 0 S"'))
@click.argument("position")
@click.option("--rule", type=RULE_CHOICE, default="uncounted", show_default=True, help=RULE_HELP)
@click.option("--captured", default=None, help="Balls captured so far by South and North, as S-N.")
@cache_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@variant_options
def check_eichler(options: UneeOptions, position: str, rule: str, captured: str | None, cache: str | None,
                  as_json: bool) -> None:
    """Does POSITION fit Eichler's caption 'Capturing loses!' (a capture is possible, every capture
    loses, best play repeats)? Each move's outcome is explained."""
    pos = notation.parse_position(position, options)
    d = mover_difference(pos, parse_captured(captured, pos, options))
    table = load_table(options, rule, cache, None)
    info = explain_position(table, pos, d)
    if as_json:
        emit_json(info)
        return
    click.echo(notation.diagram(pos))
    click.echo()
    for m in info["moves"]:
        cap = f"captures {m['captured']}" if m["captured"] else "no capture"
        click.echo(f"  {m['move']:<10} {cap:<12} -> {m['position']:<22} {m['verdict']}")
    click.echo()
    click.echo(f"a capture is available: {'yes' if info['has_capture'] else 'no'}")
    click.echo(f"best play repeats a position: {'yes' if info['best_play_repeats'] else 'no'} "
               f"({info['best_play_plies']} plies)")
    click.echo(f"fits 'Capturing loses!' under the {rule} rule: {'YES' if info['fits_caption'] else 'no'}")
