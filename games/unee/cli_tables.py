"""``solver unee solve``, ``best-move``, ``analyze`` and ``pv``: solving tables and asking them."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from gamesolver.games.unee import notation, split
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
from gamesolver.games.unee.answers import (
    analyze_answer,
    best_move_answer,
    describe_value,
    move_value_text,
    mover_difference,
    parse_captured,
    pv_answer,
    verdict,
)
from gamesolver.games.unee.rules import UneeOptions
from gamesolver.solver.report import example
from gamesolver.solver.progress import progress
from gamesolver.games.unee.solution import build_table, open_table, progress_steps
from gamesolver.solver.encoding import _boards
from gamesolver.solver.errors import InputError
from gamesolver.games.unee.notation import start_position
from gamesolver.games.unee.graph import build_graph


@unee.command(epilog=example('solver unee solve --rule all'))
@click.option("--rule", type=click.Choice(["uncounted", "draw", "split", "all"]), default="uncounted", show_default=True,
              help=RULE_HELP + " 'all' solves the three.")
@click.option("--out", "out", type=click.Path(file_okay=False), default=None, help="Write the table here (one rule).")
@cache_option
@click.option("--backend", type=click.Choice(["cpu", "layers", "ray"]), default="cpu", show_default=True,
              help="cpu: build the whole state graph and solve it here; layers: build and solve one layer "
                   "(balls on the board) at a time here, so only the largest layer's moves must fit in memory; "
                   "ray: the layers as tasks on a Ray cluster, the four chains of layers (balls mod 4) at "
                   "once (pip install \"gamesolver[ray]\"). The tables are the same.")
@click.option("--address", default=None,
              help="With --backend ray: the cluster to join (e.g. 10.0.0.1:6379, or 'auto' for the one "
                   "'ray start' began here); default: a local Ray on this machine.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="With --backend ray: layers solved at once (default: one a CPU of the cluster).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@variant_options
def solve(options: UneeOptions, rule: str, out: str | None, cache: str | None, backend: str, address: str | None,
          workers: int | None, as_json: bool) -> None:
    """Solve the whole state space and write the table(s)."""
    import contextlib

    rules = ["uncounted", "draw", "split"] if rule == "all" else [rule]
    if out is not None and len(rules) > 1:
        raise InputError("--out takes one rule; with --rule all the tables go to the cache (or use --cache DIR)")
    if backend != "ray":
        for name, value in (("address", address), ("workers", workers)):
            if value is not None:
                raise InputError(f"--{name} applies to --backend ray")
    n = _boards.board_count(options.holes, options.max_balls)
    report: list[dict[str, Any]] = []
    with contextlib.ExitStack() as stack:
        engine = None
        if backend == "ray":
            from gamesolver.solver.backends.ray_tiers import TierEngine

            engine = stack.enter_context(TierEngine(address=address, workers=workers))
        for r in rules:
            t0 = time.perf_counter()
            with progress(n * progress_steps(r, backend), f"solve {r}") as bar:
                path = build_table(options, r, out=out, cache=cache, progress=bar.update, backend=backend,
                                   engine=engine, log=lambda line: click.echo(line, err=True))
            seconds = time.perf_counter() - t0
            report.append(_solved_row(options, r, path, seconds, n))
    if as_json:
        emit_json(report)
        return
    for row in report:
        click.echo(f"{row['rule']:>9}: {row['states']:,} boards solved in {row['seconds']:.2f} s -> {row['path']}")
        if row["rule"] == "split":
            click.echo(f"           exact (lower = upper) for {row['exact_share']:.2%} of the boards")
        click.echo(f"           start: {row['start']['meaning']}")


def _solved_row(options: UneeOptions, r: str, path: Path, seconds: float, n: int) -> dict[str, Any]:
    """One rule's line of the solve report: where the table went, how long, the start's value."""
    table = open_table(path, options, r)
    row: dict[str, object] = {"rule": r, "path": str(path), "seconds": round(seconds, 3), "states": n,
                              "start": describe_value(table, start_position(options), 0)}
    if r == "split":
        row["exact_share"] = table.table.meta.get("exact_share")
    return row


@unee.command("best-move", epilog=example('solver unee best-move "3 0 1 / 2 0 6 S" --captured 12-8'))
@click.argument("position")
@click.option("--rule", type=RULE_CHOICE, default="uncounted", show_default=True, help=RULE_HELP)
@click.option("--captured", default=None, help="Balls captured so far by South and North, as S-N (e.g. 12-8; multiples of 4).")
@cache_option
@table_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@variant_options
def best_move(options: UneeOptions, position: str, rule: str, captured: str | None, cache: str | None,
              table_dir: str | None, as_json: bool) -> None:
    """The best move in POSITION, the position it leads to, and what the position is worth."""
    pos = notation.parse_position(position, options)
    caps = parse_captured(captured, pos, options)
    d = mover_difference(pos, caps)
    table = load_table(options, rule, cache, table_dir)
    payload = best_move_answer(table, pos, d)
    if as_json:
        emit_json(payload)
        return
    best = table.best_moves(pos, d)
    if not best:
        click.echo(f"{notation.SIDE_NAMES[pos.side]} has no move: the game is over and the {pos.balls} balls go to "
                   f"{notation.SIDE_NAMES[pos.other]}.")
        return
    m = best[0]
    cap = f", capturing {m.captured}" if m.captured else ""
    click.echo(f"best move: {m.move}{cap} -> {m.position}")
    if len(best) > 1:
        click.echo("equally good: " + ", ".join(x.move for x in best[1:]))
    click.echo(payload["meaning"])


@unee.command(epilog=example('solver unee analyze start --rule draw'))
@click.argument("position")
@click.option("--rule", type=RULE_CHOICE, default="uncounted", show_default=True, help=RULE_HELP)
@click.option("--captured", default=None, help="Balls captured so far by South and North, as S-N.")
@click.option("--exact", is_flag=True, help="Split rule: search the exact first-repetition value of POSITION.")
@click.option("--effort", type=click.IntRange(min=1), default=2_000_000, show_default=True,
              help="Most positions the --exact search (or --memory, for each position) may visit.")
@click.option("--memory", "memory_depth", type=click.IntRange(min=0), default=None,
              help="Split rule: narrow the bounds with full memory of the first N plies (and of the "
                   "positions below that POSITION can reach), the positional bounds beyond.")
@click.option("--max-solves", type=click.IntRange(min=1), default=200_000, show_default=True,
              help="Most layer solves the --memory search may run (the bounds hold when it stops).")
@cache_option
@table_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON (top-level 'value' is the position's value).")
@variant_options
def analyze(options: UneeOptions, position: str, rule: str, captured: str | None, exact: bool, effort: int,
            memory_depth: int | None, max_solves: int, cache: str | None, table_dir: str | None,
            as_json: bool) -> None:
    """Every legal move of POSITION with its value, remoteness and whether it enters a cycle."""
    pos = notation.parse_position(position, options)
    d = mover_difference(pos, parse_captured(captured, pos, options))
    if exact and rule != "split":
        raise InputError("--exact is for --rule split (the other rules are exact already)")
    if memory_depth is not None and rule != "split":
        raise InputError("--memory is for --rule split (the other rules are exact already)")
    if exact and memory_depth is not None:
        raise InputError("choose one of --exact and --memory")
    table = load_table(options, rule, cache, table_dir)
    found = memory = None
    if exact or memory_depth is not None:
        g = build_graph(options)
        if exact:
            found = split.exact_value(g, table.table["lower"], table.table["upper"], table.rank(pos), effort)
        else:
            assert memory_depth is not None  # --memory without --exact
            lower, upper, rank = table.table["lower"], table.table["upper"], table.rank(pos)
            below = split.states_below(g, lower, upper, rank)
            with progress(max(1, below.size), "memory search") as bar:
                memory = split.memory_bounds(g, lower, upper, rank, memory_depth, max_solves, below, bar.update,
                                             effort)
    answer = analyze_answer(table, pos, d, found, memory)
    if as_json:
        emit_json(answer)
        return
    moves = table.analyze(pos, d)
    click.echo(notation.diagram(pos))
    click.echo()
    click.echo(answer["meaning"])
    if not moves:
        click.echo("no legal move: the game is over")
        return
    click.echo()
    for m in moves:
        star = "*" if m.best else " "
        cap = f"captures {m.captured}" if m.captured else ""
        click.echo(f" {star} {m.move:<10} -> {str(m.position):<22} {cap:<11} {move_value_text(m, table.rule)}")
    click.echo("(* best; values are for the player making the move, counting only what happens from now on)")


def pv_tally(start: notation.Position, caps: tuple[int, int], line: Any, rule: str) -> str:
    """Where every ball went by the end of a principal variation: the balls left on the board (to
    the side that moved last when the other cannot move; under a repetition, to nobody, to each
    row's owner or no result, by the rule) and each side's total with the captures so far, so that
    the verdict's margin can be read off the line. Empty for a line cut short."""
    south, north = caps
    for m, _ in line.plies:
        if m.move.startswith("S"):
            south += m.captured
        else:
            north += m.captured
    final = line.final
    left = final.balls
    if line.end == "no-move":
        to = "North" if final.side == "S" else "South"
        where = f"the {left} ball{'s' if left != 1 else ''} left go{'es' if left == 1 else ''} to {to}" if left else ""
        south, north = (south + left, north) if to == "South" else (south, north + left)
    elif line.end == "repetition" and rule in ("uncounted", "split"):
        if rule == "uncounted":
            where = f"the {left} ball{'s' if left != 1 else ''} left count for nobody" if left else ""
        else:
            where = f"each side takes its own row ({sum(final.south)} South, {sum(final.north)} North)"
            south, north = south + sum(final.south), north + sum(final.north)
    else:
        return ""
    total = f"South {south}, North {north} in all"
    return f"{where}: {total}" if where else total


@unee.command(epilog=example('solver unee pv "3 0 1 / 2 0 6 S"'))
@click.argument("position")
@click.option("--rule", type=RULE_CHOICE, default="uncounted", show_default=True, help=RULE_HELP)
@click.option("--captured", default=None, help="Balls captured so far by South and North, as S-N.")
@click.option("--diagrams", is_flag=True, help="Draw the board after every ply.")
@click.option("--max-plies", type=click.IntRange(min=1), default=10_000, show_default=True)
@cache_option
@table_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@variant_options
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
        emit_json(pv_answer(pos, rule, line))
        return
    if diagrams:
        click.echo(notation.diagram(pos))
        click.echo()
    for i, (m, p) in enumerate(line.plies, 1):
        cap = f"  captures {m.captured}" if m.captured else ""
        click.echo(f"{i:>4}. {m.move:<10} -> {p}{cap}")
        if diagrams:
            click.echo(notation.diagram(p, indent="      "))
    tally = pv_tally(pos, caps, line, rule)
    if line.end == "limit":
        result = f"{mover} unfinished"
    elif total is None:
        result = "the game has no result (under the draw rule a repetition ends it without a winner)"
    else:
        result = f"{mover} {verdict(total)}"
    click.echo(f"end: {end}; {tally + '; ' if tally else ''}with best play {result}")
