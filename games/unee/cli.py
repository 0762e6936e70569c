"""``solver unee ...``: a thin click layer over the games.unee API."""
from __future__ import annotations

import json
import sys
import time
from typing import Any

import click

from gamesolver.games.unee import notation
from gamesolver.games.unee.rules import CAPTURE_ROWS, UneeOptions
from gamesolver.solver.progress import progress


def emit_json(payload: Any) -> None:
    click.echo(json.dumps(payload, indent=2))


@click.group()
@click.option("--holes", "holes_per_row", type=int, default=3, show_default=True, help="Holes per row.")
@click.option("--balls", "balls_per_hole", type=int, default=6, show_default=True, help="Balls per hole at the start.")
@click.option("--skip-origin/--no-skip-origin", default=False, show_default=True, help="Laps skip the hole they started from.")
@click.option("--capture-rows", type=click.Choice(CAPTURE_ROWS), default="own", show_default=True,
              help="Rows where a last ball making four captures.")
@click.pass_context
def unee(ctx: click.Context, holes_per_row: int, balls_per_hole: int, skip_origin: bool, capture_rows: str) -> None:
    """Ünee Tugalluulax (2 x 3 holes, 36 balls). Positions are written 'N-row / S-row SIDE', e.g. '6 6 6 / 6 6 6 S'."""
    ctx.obj = UneeOptions(holes_per_row, balls_per_hole, skip_origin, capture_rows)


def _move_rows(pos: notation.Position, options: UneeOptions) -> list[dict[str, Any]]:
    from gamesolver.games.unee.rules import sow_relative

    rows = []
    board = pos.relative()
    for hole in range(options.holes_per_row):
        if board[hole] == 0:
            continue
        after, captured = sow_relative(board, hole, options)
        nxt = notation.Position.from_relative(after, pos.other)
        rows.append(
            {
                "move": notation.move_name(pos.side, hole, options.holes_per_row),
                "balls": board[hole],
                "captured": captured,
                "position": str(nxt),
                "game_over": sum(after[: options.holes_per_row]) == 0,
            }
        )
    return rows


@unee.command()
@click.argument("position")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def show(options: UneeOptions, position: str, as_json: bool) -> None:
    """Draw POSITION and list every legal move with the position it leads to."""
    pos = notation.parse_position(position, options)
    moves = _move_rows(pos, options)
    mover_row = pos.south if pos.side == "S" else pos.north
    over = sum(mover_row) == 0
    if as_json:
        emit_json(
            {
                "position": str(pos),
                "side": pos.side,
                "north": list(pos.north),
                "south": list(pos.south),
                "balls": pos.balls,
                "game_over": over,
                "moves": moves,
            }
        )
        return
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
        click.echo(f"  {m['move']:<10} ({m['balls']:>2} balls) -> {m['position']}{note}{end}")


@unee.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def graph(options: UneeOptions, as_json: bool) -> None:
    """Count positions and moves of the whole state graph and of the part reachable from the start."""
    from gamesolver.games.unee.graph import build_graph, graph_summary

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


# ---------------------------------------------------------------- solved tables

RULE_CHOICE = click.Choice(["uncounted", "draw", "split"])
RULE_HELP = "Repetition rule: uncounted (balls left count for nobody), draw (no result), split (own row)."


def cache_option(f: Any) -> Any:
    return click.option(
        "--cache", "cache", type=click.Path(file_okay=False), default=None,
        help="Table cache directory (default: $SOLVER_CACHE_DIR or ~/.cache/gamesolver).",
    )(f)


def table_option(f: Any) -> Any:
    return click.option(
        "--table", "table_dir", type=click.Path(file_okay=False), default=None,
        help="Use the table in this directory instead of the cache.",
    )(f)


def load_table(options: UneeOptions, rule: str, cache: str | None, table_dir: str | None) -> Any:
    """The solved table: an explicit directory, else the cache, solving it on first use."""
    from gamesolver.games.unee.solution import build_table, open_table, progress_steps, table_path
    from gamesolver.solver.errors import MissingTableError

    if table_dir is not None:
        return open_table(table_dir, options, rule)
    path = table_path(options, rule, cache)
    try:
        return open_table(path, options, rule)
    except MissingTableError:
        pass
    from gamesolver.solver import _core

    n = _core.board_count(options.holes, options.max_balls)
    click.echo(f"solving Ünee under the {rule} rule (first use; cached in {path})", err=True)
    with progress(n * progress_steps(rule), f"solve {rule}") as bar:
        build_table(options, rule, cache=cache, progress=bar.update)
    return open_table(path, options, rule)


def parse_captured(text: str | None, pos: notation.Position, options: UneeOptions) -> tuple[int, int]:
    """``S-N`` balls captured so far by South and North; returns (south, north)."""
    from gamesolver.solver.errors import InputError

    if text is None:
        return 0, 0
    parts = text.replace(":", "-").split("-")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise InputError(f"--captured {text!r}: expected South's and North's captured balls as S-N, e.g. 10-6")
    south, north = (int(p) for p in parts)
    if south + north + pos.balls > options.max_balls:
        raise InputError(
            f"--captured {text}: {south + north} captured plus {pos.balls} on the board is more than the "
            f"{options.max_balls} balls of the game"
        )
    return south, north


def mover_difference(pos: notation.Position, captured: tuple[int, int]) -> int:
    south, north = captured
    return south - north if pos.side == "S" else north - south


def verdict(diff: int | None) -> str:
    if diff is None:
        return "no result (the repetition ends the game without a winner)"
    if diff > 0:
        return f"wins by {diff}"
    if diff < 0:
        return f"loses by {-diff}"
    return "draws"


def describe_value(table: Any, pos: notation.Position, d: int) -> dict[str, Any]:
    """The position's value for the side to move, with what it means given the captures so far."""
    mover = notation.SIDE_NAMES[pos.side]
    out: dict[str, Any] = {"rule": table.rule, "side": pos.side, "captured_difference": d}
    if table.rule == "uncounted":
        v = table.probe_value(pos)
        rem, cyc = table.probe_remoteness(pos)
        out.update(value=v, remoteness=rem, cycling=cyc, outcome=_sign(d + v))
        ends = f"the game ends by repetition after {rem} plies" if cyc else f"the game ends after {rem} plies"
        out["meaning"] = (
            f"{mover} can force a future capture difference of {v:+d}; with {d:+d} so far {mover} "
            f"{verdict(d + v)} with best play; {ends}"
        )
    elif table.rule == "draw":
        a, b = table.probe_thresholds(pos)
        o = table.probe_value(pos, captured=d)
        out.update(value=o, a=a, b=b, outcome=o)
        word = {1: "wins", 0: "draws (or the game repeats)", -1: "loses"}[o]
        out["meaning"] = (
            f"with {d:+d} captured so far, {mover} {word} with best play "
            f"(wins iff captured difference > {-a if a is not None else 'never'}, "
            f"loses iff < {b if b is not None else 'never'})"
        )
    else:
        lo, hi = table.probe_bounds(pos)
        out.update(value=lo if lo == hi else None, lower=lo, upper=hi, exact=lo == hi)
        if lo == hi:
            out["outcome"] = _sign(d + lo)
            out["meaning"] = f"{mover} can force exactly {lo:+d} from now on; with {d:+d} so far {mover} {verdict(d + lo)}"
        else:
            out["outcome"] = _sign(d + lo) if _sign(d + lo) == _sign(d + hi) else None
            out["meaning"] = (
                f"{mover} can force between {lo:+d} and {hi:+d} from now on (certified bounds; "
                f"use 'analyze --exact' for the exact value); with {d:+d} so far: "
                + (verdict(d + lo) if out["outcome"] is not None else "the outcome depends on the exact value")
            )
    return out


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


def _move_value_text(m: Any, rule: str) -> str:
    if rule == "uncounted":
        cyc = " cycles" if m.cycling else ""
        return f"value {m.value:+d}  remoteness {m.remoteness}{cyc}"
    if rule == "draw":
        return {1: "wins", 0: "draw", -1: "loses"}[m.outcome]
    if m.lower == m.upper:
        return f"value {m.lower:+d} (exact)"
    return f"value in [{m.lower:+d}, {m.upper:+d}]"


@unee.command()
@click.option("--rule", type=click.Choice(["uncounted", "draw", "split", "all"]), default="uncounted", show_default=True,
              help=RULE_HELP + " 'all' solves the three.")
@click.option("--out", "out", type=click.Path(file_okay=False), default=None, help="Write the table here (one rule).")
@cache_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def solve(options: UneeOptions, rule: str, out: str | None, cache: str | None, as_json: bool) -> None:
    """Solve the whole state space and write the table(s)."""
    from gamesolver.games.unee.notation import start_position
    from gamesolver.games.unee.solution import build_table, open_table, progress_steps
    from gamesolver.solver import _core
    from gamesolver.solver.errors import InputError

    rules = ["uncounted", "draw", "split"] if rule == "all" else [rule]
    if out is not None and len(rules) > 1:
        raise InputError("--out takes one rule; with --rule all the tables go to the cache (or use --cache DIR)")
    n = _core.board_count(options.holes, options.max_balls)
    report = []
    for r in rules:
        t0 = time.perf_counter()
        with progress(n * progress_steps(r), f"solve {r}") as bar:
            path = build_table(options, r, out=out, cache=cache, progress=bar.update)
        seconds = time.perf_counter() - t0
        table = open_table(path, options, r)
        start = start_position(options)
        info = describe_value(table, start, 0)
        row = {"rule": r, "path": str(path), "seconds": round(seconds, 3), "states": n, "start": info}
        if r == "split":
            row["exact_share"] = table.table.meta.get("exact_share")
        report.append(row)
    if as_json:
        emit_json(report)
        return
    for row in report:
        click.echo(f"{row['rule']:>9}: {row['states']:,} boards solved in {row['seconds']:.2f} s -> {row['path']}")
        if row["rule"] == "split":
            click.echo(f"           exact (lower = upper) for {row['exact_share']:.2%} of the boards")
        click.echo(f"           start: {row['start']['meaning']}")


@unee.command("best-move")
@click.argument("position")
@click.option("--rule", type=RULE_CHOICE, default="uncounted", show_default=True, help=RULE_HELP)
@click.option("--captured", default=None, help="Balls captured so far by South and North, as S-N (e.g. 10-6).")
@cache_option
@table_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def best_move(options: UneeOptions, position: str, rule: str, captured: str | None, cache: str | None,
              table_dir: str | None, as_json: bool) -> None:
    """The best move in POSITION, the position it leads to, and what the position is worth."""
    pos = notation.parse_position(position, options)
    caps = parse_captured(captured, pos, options)
    d = mover_difference(pos, caps)
    table = load_table(options, rule, cache, table_dir)
    info = describe_value(table, pos, d)
    best = table.best_moves(pos, d)
    payload = {"position": str(pos), **info, "best_moves": [m.as_dict() for m in best]}
    if as_json:
        emit_json(payload)
        return
    if not best:
        click.echo(f"{notation.SIDE_NAMES[pos.side]} has no move: the game is over and the {pos.balls} balls go to "
                   f"{notation.SIDE_NAMES[pos.other]}.")
        return
    m = best[0]
    cap = f", capturing {m.captured}" if m.captured else ""
    click.echo(f"best move: {m.move}{cap} -> {m.position}")
    if len(best) > 1:
        click.echo("equally good: " + ", ".join(x.move for x in best[1:]))
    click.echo(info["meaning"])


@unee.command()
@click.argument("position")
@click.option("--rule", type=RULE_CHOICE, default="uncounted", show_default=True, help=RULE_HELP)
@click.option("--captured", default=None, help="Balls captured so far by South and North, as S-N.")
@click.option("--exact", is_flag=True, help="Split rule: search the exact first-repetition value of POSITION.")
@click.option("--effort", type=click.IntRange(min=1), default=2_000_000, show_default=True,
              help="Most positions the --exact search may visit.")
@cache_option
@table_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON (top-level 'value' is the position's value).")
@click.pass_obj
def analyze(options: UneeOptions, position: str, rule: str, captured: str | None, exact: bool, effort: int,
            cache: str | None, table_dir: str | None, as_json: bool) -> None:
    """Every legal move of POSITION with its value, remoteness and whether it enters a cycle."""
    from gamesolver.solver.errors import InputError

    pos = notation.parse_position(position, options)
    d = mover_difference(pos, parse_captured(captured, pos, options))
    if exact and rule != "split":
        raise InputError("--exact is for --rule split (the other rules are exact already)")
    table = load_table(options, rule, cache, table_dir)
    info = describe_value(table, pos, d)
    moves = table.analyze(pos, d)
    if exact:
        from gamesolver.games.unee.graph import build_graph
        from gamesolver.games.unee.split import exact_value

        g = build_graph(options)
        value, searched = exact_value(g, table.table["lower"], table.table["upper"], table.rank(pos), effort)
        info.update(value=value, exact_value=value, searched=searched, exact=True, outcome=_sign(d + value))
        info["meaning"] += f"; exact search: {value:+d} ({searched:,} positions searched)"
    if as_json:
        emit_json({"position": str(pos), **info, "moves": [m.as_dict() for m in moves]})
        return
    click.echo(notation.diagram(pos))
    click.echo()
    click.echo(info["meaning"])
    if not moves:
        click.echo("no legal move: the game is over")
        return
    click.echo()
    for m in moves:
        star = "*" if m.best else " "
        cap = f"captures {m.captured}" if m.captured else ""
        click.echo(f" {star} {m.move:<10} -> {str(m.position):<22} {cap:<11} {_move_value_text(m, table.rule)}")
    click.echo("(* best; values are for the player making the move, counting only what happens from now on)")


@unee.command()
@click.argument("position")
@click.option("--rule", type=RULE_CHOICE, default="uncounted", show_default=True, help=RULE_HELP)
@click.option("--captured", default=None, help="Balls captured so far by South and North, as S-N.")
@click.option("--diagrams", is_flag=True, help="Draw the board after every ply.")
@click.option("--max-plies", type=click.IntRange(min=1), default=10_000, show_default=True)
@cache_option
@table_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def pv(options: UneeOptions, position: str, rule: str, captured: str | None, diagrams: bool, max_plies: int,
       cache: str | None, table_dir: str | None, as_json: bool) -> None:
    """The principal variation from POSITION until the game ends or a position repeats."""
    pos = notation.parse_position(position, options)
    caps = parse_captured(captured, pos, options)
    d = mover_difference(pos, caps)
    table = load_table(options, rule, cache, table_dir)
    line = table.principal_variation(pos, d, max_plies)
    total = line.final_difference(rule)
    mover = notation.SIDE_NAMES[pos.side]
    if line.end == "repetition":
        end = f"position {line.final} repeats after {len(line.plies)} plies"
    elif line.end == "no-move":
        end = f"{notation.SIDE_NAMES[line.final.side]} cannot move after {len(line.plies)} plies"
    else:
        end = f"stopped after {len(line.plies)} plies (--max-plies)"
    if as_json:
        emit_json({
            "position": str(pos), "rule": rule, "end": line.end, "plies": len(line.plies),
            "moves": [{"move": m.move, "captured": m.captured, "position": str(p)} for m, p in line.plies],
            "final_difference": total,
        })
        return
    if diagrams:
        click.echo(notation.diagram(pos))
        click.echo()
    for i, (m, p) in enumerate(line.plies, 1):
        cap = f"  captures {m.captured}" if m.captured else ""
        click.echo(f"{i:>4}. {m.move:<10} -> {p}{cap}")
        if diagrams:
            click.echo(notation.diagram(p, indent="      "))
    result = "unfinished" if line.end == "limit" else verdict(total)
    click.echo(f"end: {end}; with best play {mover} {result}")


@unee.command()
@click.option("--rule", type=RULE_CHOICE, default="uncounted", show_default=True, help=RULE_HELP)
@click.option("--format", "fmt", type=click.Choice(["csv", "npy"]), default="csv", show_default=True)
@click.option("--balls", type=int, default=None, help="Only positions with this many balls on the board.")
@click.option("--reachable", is_flag=True, help="Only positions reachable from the standard start.")
@click.option("--out", "out", type=click.Path(dir_okay=False), default=None,
              help="Output file (CSV goes to stdout without it; npy needs it).")
@cache_option
@table_option
@click.pass_obj
def export(options: UneeOptions, rule: str, fmt: str, balls: int | None, reachable: bool, out: str | None,
           cache: str | None, table_dir: str | None) -> None:
    """Export the table in the player's notation: position, side, value, remoteness, best moves."""
    from gamesolver.games.unee.export import export_array, write_csv
    from gamesolver.solver.atomic import atomic_path, check_writable
    from gamesolver.games.unee.graph import build_graph
    from gamesolver.solver.errors import InputError

    if balls is not None and not 0 <= balls <= options.max_balls:
        raise InputError(f"--balls {balls}: expected 0..{options.max_balls}")
    if fmt == "npy" and out is None:
        raise InputError("--format npy needs --out FILE")
    if out is not None:
        check_writable(out)
    table = load_table(options, rule, cache, table_dir)
    graph = build_graph(options)
    if out is None:
        write_csv(sys.stdout, table, graph, balls, reachable)
        return
    with atomic_path(out) as tmp:
        if fmt == "csv":
            with open(tmp, "w", newline="") as f:
                count = write_csv(f, table, graph, balls, reachable)
        else:
            import numpy as np

            arr = export_array(table, graph, balls, reachable)
            count = len(arr)
            with open(tmp, "wb") as f:
                np.save(f, arr, allow_pickle=False)
    click.echo(f"wrote {count:,} positions to {out}", err=True)


# ---------------------------------------------------------------- cycles and claims


@unee.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def cycles(options: UneeOptions, as_json: bool) -> None:
    """Strongly connected components of the game graph: cycles per number of balls."""
    from gamesolver.games.unee.cycles import cycle_summary
    from gamesolver.games.unee.graph import build_graph

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


@unee.command()
@click.argument("position")
@click.option("--out", "out", type=click.Path(dir_okay=False), default=None,
              help="Write the picture (.png, .svg) or the graph (.graphml).")
@click.option("--radius", type=click.IntRange(min=0), default=None,
              help="Show the position's component within this many moves instead of one cycle.")
@click.option("--shortest", is_flag=True, help="Show the shortest cycle through POSITION, not best play's.")
@cache_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def cycle(options: UneeOptions, position: str, out: str | None, radius: int | None, shortest: bool,
          cache: str | None, as_json: bool) -> None:
    """The loop of POSITION: the cycle best play (uncounted rule) runs into, or the shortest cycle."""
    from gamesolver.games.unee import cycles as C
    from gamesolver.games.unee.graph import build_graph

    pos = notation.parse_position(position, options)
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
    info = {"position": str(pos), "kind": "shortest" if shortest else "optimal",
            "cycle": cyc.as_dict() if cyc else None, "lead_in": lead.length if lead else 0}
    if cyc is None:
        if as_json:
            emit_json(info)
            return
        click.echo(("the position can never recur" if shortest else
                    f"best play from {pos} ends without repetition after {lead.length if lead else 0} plies"))
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


@unee.command("check-eichler")
@click.argument("position")
@click.option("--rule", type=RULE_CHOICE, default="uncounted", show_default=True, help=RULE_HELP)
@click.option("--captured", default=None, help="Balls captured so far by South and North, as S-N.")
@cache_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def check_eichler(options: UneeOptions, position: str, rule: str, captured: str | None, cache: str | None,
                  as_json: bool) -> None:
    """Does POSITION fit Eichler's caption 'Capturing loses!' (a capture is possible, every capture
    loses, best play repeats)? Each move's outcome is explained."""
    from gamesolver.games.unee.claims import explain_position

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
