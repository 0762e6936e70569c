"""``solver ur ... --rules finkel|blitz|masters``: the RoyalUr rule sets' side of the Ur commands.

``games/ur/cli.py`` hands a command here when ``--rules`` names one of RoyalUr's rule sets; each
function prints what ``games.ur.royal_answers`` answers (over ``games.ur.royal``'s rules, notation
and moves, ``royal_solve``'s tables and ``rgu``'s RoyalUr table files, read by ``--table FILE.rgu``).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import numpy as np

from gamesolver.games.ur.provenance import check_lines, of_table
from gamesolver.games.ur import rgu, royal
from gamesolver.games.ur.royal_answers import (
    analyze_answer,
    best_move_answer,
    describe,
    lookup,
    missing_table_message,
    outside_opening,
    parse_roll,
    show_answer,
    solved_table,
    source_text,
)
from gamesolver.games.ur.royal_table import (
    DEFAULT_TOLERANCE,
    default_table_dir,
    load_royal_table,
    royal_choices,
    royal_game,
    royal_solve,
    state_rank,
    tier_ranges,
)
from gamesolver.solver.errors import InputError, MissingTableError


def ruleset(name: str, pieces: int | None) -> royal.RuleSet:
    """The rule set; ``pieces`` None means its own piece count (7 Finkel and Masters, 5 Blitz)."""
    return royal.load_ruleset(name, pieces)


def _log(text: str) -> None:
    click.echo(text, err=True)


def solve_cmd(rules: royal.RuleSet, out: str | None, tolerance: float | None, threads: int | None,
              graph: str, as_json: bool = False) -> None:
    table = royal_solve(rules, out, tolerance=DEFAULT_TOLERANCE if tolerance is None else tolerance,
                        threads=threads, graph=graph, log=_log)
    m = table.meta
    start = royal.start(rules).state()
    p = (1.0 + float(table["value"][state_rank(rules, start)])) / 2.0
    if as_json:
        keys = ("sweeps", "tiers", "residual", "tolerance", "endless_check", "value_dtype", "solve_seconds_this_run")
        click.echo(json.dumps({"rules": rules.name, "pieces": rules.pieces, "states": table.state_count,
                               "table": str(table.path), "start_win_probability": p,
                               **{k: m[k] for k in keys if k in m}}, default=str))
        return
    click.echo(f"solved {rules.name}, pieces={rules.pieces}: {table.state_count:,} states, {m['tiers']} tier "
               f"groups, {m['sweeps']} sweeps (float64), stopped at residual {m['residual']:.2g} (below "
               f"{m['tolerance']:g}), {m['solve_seconds_this_run']:.1f} s; unproven (docs/royalur.md)")
    check = m["endless_check"]
    click.echo(f"endless check (eps {check['eps']:g}): "
               + ("passed" if check["flagged"] == 0 else f"FAILED in {check['flagged']:,} states"))
    click.echo(f"light's chance of winning from the start: {100 * p:.10f} %")
    click.echo(f"table: {table.path}")


def graph_cmd(rules: royal.RuleSet, as_json: bool) -> None:
    enc = royal.encoding(rules)
    groups = enc.tier_groups_last_first()
    rows: list[dict[str, Any]] = [{"tiers": [list(t) for t in g], "states": b - a}
                                  for g, (a, b) in zip(groups, tier_ranges(rules))]
    if as_json:
        click.echo(json.dumps({"rules": rules.name, "pieces": rules.pieces, "states": enc.size,
                               "royalur_count": enc.royalur_state_count(), "tier_groups": rows}))
        return
    click.echo(f"Ur, {rules.name} rules: {rules.length}-tile paths, {rules.pieces} pieces a side")
    click.echo("tier groups in solving order (pieces borne off: mover, other), states:")
    for row in rows:
        click.echo(f"  {' + '.join(f'({a},{b})' for a, b in row['tiers']):<16} {row['states']:>14,}")
    click.echo(f"states (mover-relative, game not over): {enc.size:,}; as RoyalUr counts them: "
               f"{enc.royalur_state_count():,}")


def check_cmd(rules: royal.RuleSet, table: str | None, eps: float | None, threads: int | None,
              as_json: bool) -> None:
    """``ur check --rules NAME``: the table's checksums recomputed, its Bellman residual against
    the tolerance it was solved to, and the endless-play check, as for the fort rules' tables (exit
    1 when it fails). RoyalUr's values are not proven here, and the check says so."""
    from gamesolver.solver.stochastic.iteration import check_eps, endless_check
    from gamesolver.solver.stochastic.planning import default_threads
    from gamesolver.solver.stochastic.outcomes import Regenerated

    where = Path(table) if table is not None else default_table_dir(rules)
    if table is not None and Path(table).is_file():
        raise InputError(f"--table {table} is a file; ur check reads a table folder of ours (an .rgu file "
                         f"records no residual to check)")
    try:
        solved = load_royal_table(rules, where, build=False, verify=True)
    except MissingTableError:
        raise MissingTableError(missing_table_message(rules, where, table)) from None
    game = royal_game(rules)
    values = np.ascontiguousarray(solved["value"], dtype=np.float64)
    tolerance = float(solved.meta.get("tolerance", DEFAULT_TOLERANCE))
    eps = eps if eps is not None else check_eps(tolerance)
    n = threads or default_threads()
    residual = float(game.sweep(values.copy(), threads=n, write=False))
    result = endless_check(Regenerated(game), values, eps, n, show_progress=None)
    ok = result.passed and residual < tolerance
    if as_json:
        click.echo(json.dumps({"table": str(solved.path), "rules": rules.name, "pieces": rules.pieces,
                               "states": solved.state_count, "stop_residual": tolerance, "residual": residual,
                               "eps": eps, "passes": result.passes, "flagged": result.flagged, "passed": ok}))
    else:
        click.echo(f"table {solved.path}: {rules.name}, {rules.pieces} pieces, {solved.state_count:,} states, "
                   f"solved until the residual fell below {tolerance:g}; {of_table(solved).text()}")
        for line in check_lines(residual, tolerance, result, "moves"):
            click.echo(line)
        click.echo("passed: these solve the game's equations (unproven)" if ok else "FAILED: not the game's values")
    if not ok:
        raise SystemExit(1)


def show_cmd(rules: royal.RuleSet, position: str, as_json: bool = False) -> None:
    pos = royal.parse(position, rules)
    if as_json:
        click.echo(json.dumps(show_answer(rules, pos)))
        return
    click.echo(royal.diagram(pos, rules))


def best_move_cmd(rules: royal.RuleSet, position: str, roll: str, table: str | None, as_json: bool,
                  solve_first: bool = False) -> None:
    from gamesolver.games.ur.opening import OutsideOpening

    pos = royal.parse(position, rules)
    r = parse_roll(rules, roll)
    look, source, prov = lookup(rules, table, solve_first, log=_log)
    try:
        ranked = royal_choices(rules, look, pos.state(), r)
    except OutsideOpening:
        raise outside_opening(rules) from None
    who = royal.SIDE_NAMES[pos.to_move]
    if as_json:
        click.echo(json.dumps({**best_move_answer(rules, pos, r, ranked, prov), "source": source}))
        return
    if not ranked:
        click.echo(f"{who} to move, roll {r}: no legal move, the turn passes")
        return
    best = ranked[0]
    click.echo(f"{who} to move, roll {r}: {describe(best.move, rules, pos.to_move)} "
               f"(wins {100 * best.win_probability:.4f} %)")
    for c in ranked[1:]:
        click.echo(f"  also {describe(c.move, rules, pos.to_move)}: {100 * c.win_probability:.4f} %")
    click.echo(f"(from {source_text(source, rules)}; {prov.text()})")


def analyze_cmd(rules: royal.RuleSet, position: str, table: str | None, as_json: bool,
                solve_first: bool = False) -> None:
    pos = royal.parse(position, rules)
    from gamesolver.games.ur.opening import OutsideOpening

    look, source, prov = lookup(rules, table, solve_first, log=_log)
    try:
        answer = analyze_answer(rules, pos, look, source, prov)
    except OutsideOpening:
        raise outside_opening(rules) from None
    who = royal.SIDE_NAMES[pos.to_move]
    if as_json:
        click.echo(json.dumps(answer))
        return
    p = answer["win_probability"]
    click.echo(f"{royal.format_position(pos, rules)}: {who} wins {100 * p:.4f} % before rolling")
    for row in answer["rolls"]:
        click.echo(f"  roll {row['roll']} p={row['probability']:<7g} {100 * row['win_probability']:8.4f} %  "
                   f"{row['best']}")
    click.echo(f"(from {source_text(source, rules)}; {prov.text()})")


def export_cmd(rules: royal.RuleSet, fmt: str, table: str | None, out: str, value_type: str,
               solve_first: bool = False) -> None:
    if fmt != "rgu":
        raise InputError(f"unknown export format {fmt!r}; expected rgu")
    where = Path(table) if table is not None else default_table_dir(rules)
    # as a query does: a small table (seconds) is solved into the cache on first use, a larger one
    # is asked for with the command that builds it, or solved first with --solve
    solved = solved_table(rules, where, table, solve_first, log=_log)
    values = (1.0 + np.asarray(solved["value"], dtype=np.float64)) / 2.0
    rgu.write_values(out, rules, values, value_type,
                     notes={"author": "gamesolver", "tolerance": solved.meta.get("tolerance")})
    click.echo(f"wrote {values.shape[0]:,} positions to {out} ({rules.name}, {rules.pieces} pieces, "
               f"{rgu.value_type_name(value_type)})")
