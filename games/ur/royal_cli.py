"""``solver ur ... --rules finkel|blitz|masters``: the RoyalUr rule sets' side of the Ur commands.

``games/ur/cli.py`` hands a command here when ``--rules`` names one of RoyalUr's rule sets; each
function is a thin layer over ``games.ur.royal`` (rules, notation, moves), ``royal_solve`` (the
engine's table) and ``rgu`` (RoyalUr's table files, read by ``--table FILE.rgu``).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import click
import numpy as np

from gamesolver.games.ur.provenance import Provenance, check_lines, of_table
from gamesolver.games.ur import rgu, royal
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
from gamesolver.games.ur.rules import AUTO_BUILD_MAX_PIECES, SOLVE_HINT  # the same for both rule families
from gamesolver.solver.errors import InputError, MissingTableError
from gamesolver.solver.tables.paths import file_kind


def ruleset(name: str, pieces: int | None) -> royal.RuleSet:
    """The rule set; ``pieces`` None means its own piece count (7 Finkel and Masters, 5 Blitz)."""
    return royal.load_ruleset(name, pieces)


def _log(text: str) -> None:
    click.echo(text, err=True)


def table_source(solved: Any) -> dict[str, Any]:
    """An answer's ``source`` in JSON for one of our tables (the fort rules' answers say the same)."""
    return {"kind": "table", "path": str(solved.path), **of_table(solved).table_fields()}


def lookup(rules: royal.RuleSet, table: str | None,
           solve_first: bool = False) -> tuple[Callable[[royal.State], float], dict[str, Any], Provenance]:
    """A function from a state to the mover's chance of winning, where it reads (an ``.rgu`` file
    (``--table FILE.rgu``), a table directory, or the cache: small tables built on demand, any
    table missing with ``solve_first``), the answer's ``source`` (JSON fields; ``source_text``
    says it in words), and whether its values are proven (RoyalUr's rule sets are not: a table
    says its residual)."""
    if table is not None and Path(table).is_file():
        if not rgu.looks_like_rgu(table):  # the user's mistake (exit 2), not a damaged table
            raise InputError(
                f"--table {table} is {file_kind(table)}, not a table: for {rules.name} give a table folder "
                f"(holding header.json; 'solver ur solve --rules {rules.name} --pieces {rules.pieces} --out FOLDER' "
                f"makes one) or an .rgu file ('solver ur export --format rgu --rules {rules.name} --pieces "
                f"{rules.pieces} --out FILE.rgu')")
        t = rgu.read_rgu(table)
        t.expect(rules)  # an .rgu for other settings is one line, not wrong answers
        # an .rgu file records no residual, and its values are rounded to its value type
        prov = Provenance(False, rounded_as=t.value_type, rounded_within=t.rounding)
        return ((lambda s: t.win_probability(s, rules)), {"kind": "rgu-file", "path": str(table), **prov.fields(0.0)},
                prov)
    if table is not None and table.endswith(".rgu"):
        raise InputError(f"no .rgu file at {table}")
    where = Path(table) if table is not None else default_table_dir(rules)
    book = shipped_fallback(rules) if table is None and not solve_first else None
    if book is not None:  # the opening, answered at once from the file shipped with the program
        return book.lookup(), book.source(True), book.provenance
    solved = _solved(rules, where, table, solve_first)
    return table_lookup(rules, solved), table_source(solved), of_table(solved)


def source_text(source: dict[str, Any], rules: royal.RuleSet) -> str:
    """Where an answer came from, in words, from its ``source`` fields."""
    if source["kind"] == "opening-file":
        which = "the shipped opening file" if source["shipped"] else f"the opening file {source['file']}"
        return (f"{which} (positions within {source['turns']} moves of the start), built from table "
                f"{source['table_values_sha256'][:16]} ({rules.name}, pieces={rules.pieces})")
    return source["path"]


def _solved(rules: royal.RuleSet, where: Path, table: str | None, solve_first: bool) -> Any:
    """The table at ``where``: a small one missing from the cache is solved into it, as is any
    missing one with ``solve_first`` (--solve); otherwise a missing table is the message that says
    how to build it."""
    build = solve_first or (table is None and rules.pieces <= AUTO_BUILD_MAX_PIECES)
    try:
        return load_royal_table(rules, where, build=build, log=_log)
    except MissingTableError:
        raise MissingTableError(f"{missing_table_message(rules, where, table)}; {SOLVE_HINT}") from None


def shipped_fallback(rules: royal.RuleSet, cache: str | Path | None = None) -> Any:
    """The opening file shipped for the rule set, where a query answers from it: the table is too
    large to build on a query and not in the cache (else None; the server asks too)."""
    if rules.pieces <= AUTO_BUILD_MAX_PIECES or (default_table_dir(rules, cache) / "header.json").is_file():
        return None
    from gamesolver.games.ur import royal_opening

    return royal_opening.shipped(rules)


# core-seconds a state of a whole solve, measured on the 2-core machine (benchmarks/bench_royal.py,
# docs/royalur.md): Blitz 381 core-seconds for 41,243,781 states, Finkel 1,537 for 137,870,097
CORE_SECONDS_PER_STATE = (381.0 / 41_243_781, 1537.0 / 137_870_097)


def solve_seconds(rules: royal.RuleSet, cores: int) -> tuple[float, float]:
    """About how long solving the rule set takes on ``cores`` cores, from the measured rates."""
    states = royal.encoding(rules).size
    return (states * CORE_SECONDS_PER_STATE[0] / cores, states * CORE_SECONDS_PER_STATE[1] / cores)


def missing_table_message(rules: royal.RuleSet, where: Path, given: str | None = None) -> str:
    """Why a query does not build the rule set's table at ``where`` itself (``given``: --table):
    what is missing, about how long solving it takes here, and the command."""
    from gamesolver.solver.stochastic.projection import span
    from gamesolver.solver.stochastic.iteration import default_threads

    hint = "" if given is None else f" --out {given}"
    cores = default_threads()
    return (f"no solved table for {rules.name} with {rules.pieces} pieces at {where}; solving its "
            f"{royal.encoding(rules).size:,} states takes about {span(solve_seconds(rules, cores))} on "
            f"{cores} core{'s' if cores != 1 else ''}: 'solver ur solve --rules {rules.name} "
            f"--pieces {rules.pieces}{hint}'")


def table_lookup(rules: royal.RuleSet, solved: Any) -> Callable[[royal.State], float]:
    """A state's mover win chance read from an opened table of the rule set."""
    values = solved["value"]
    return lambda s: float((1.0 + float(values[state_rank(rules, s)])) / 2.0)


def parse_roll(rules: royal.RuleSet, roll: str) -> int:
    """The number rolled, checked against the rule set's dice (InputError naming the rolls it has)."""
    allowed = [r for r, _ in rules.roll_probabilities]
    try:
        value = int(roll)
    except ValueError:
        value = -1
    if value not in allowed:
        raise InputError(f"--roll {roll!r} is not a roll of {rules.name}'s dice; expected one of "
                         f"{', '.join(map(str, allowed))}")
    return value


def move_text(move: royal.Move, rules: royal.RuleSet, side: str) -> str:
    """The move as from-to: 'hand-A3', 'C2-off'."""
    path = rules.path_of(side)
    src = "hand" if move.source < 0 else path[move.source]
    dest = "off" if move.dest == rules.length else path[move.dest]
    return f"{src}-{dest}"


def describe(move: royal.Move, rules: royal.RuleSet, side: str) -> str:
    """``move_text`` with what the move does besides: 'hand-A1 (rolls again)'."""
    notes = [n for n, on in (("captures", move.capture), ("wins", move.win), ("rolls again", move.extra_roll)) if on]
    return move_text(move, rules, side) + (f" ({', '.join(notes)})" if notes else "")


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
    rows = [{"tiers": [list(t) for t in g], "states": b - a} for g, (a, b) in zip(groups, tier_ranges(rules))]
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
    from gamesolver.solver.stochastic.iteration import check_eps, default_threads, endless_check
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


def show_answer(rules: royal.RuleSet, pos: royal.Position) -> dict[str, Any]:
    """``show --json``, as the fort rules' (the tiles each side holds and the side to move), with
    each side's pieces in hand and borne off."""
    return {"position": royal.format_position(pos, rules), "to_move": pos.to_move,
            "L": sorted(rules.path[i] for i in pos.light.path), "D": sorted(rules.dark_path[i] for i in pos.dark.path),
            "off_board": {s: {"hand": side.hand, "borne_off": side.scored}
                          for s, side in (("L", pos.light), ("D", pos.dark))}}


def show_cmd(rules: royal.RuleSet, position: str, as_json: bool = False) -> None:
    pos = royal.parse(position, rules)
    if as_json:
        click.echo(json.dumps(show_answer(rules, pos)))
        return
    click.echo(royal.diagram(pos, rules))


def outside_opening(rules: royal.RuleSet) -> MissingTableError:
    """A position beyond the shipped opening file: what it holds and the command that solves the rest."""
    return MissingTableError(f"the opening file shipped for {rules.name} holds only the positions near the start, "
                             f"not this one; {missing_table_message(rules, default_table_dir(rules))}")


def best_move_cmd(rules: royal.RuleSet, position: str, roll: str, table: str | None, as_json: bool,
                  solve_first: bool = False) -> None:
    from gamesolver.games.ur.opening import OutsideOpening

    pos = royal.parse(position, rules)
    r = parse_roll(rules, roll)
    look, source, prov = lookup(rules, table, solve_first)
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


def best_move_answer(rules: royal.RuleSet, pos: royal.Position, roll: int, ranked: list[Any],
                     prov: Provenance) -> dict[str, Any]:
    """``best-move --json`` from the ranked ``royal_choices`` (the server answers the same), in the
    fort rules' shape: the position, the side to move, the roll, the best action's value (``value``,
    P(win) - P(loss), which RoyalUr's games, always finished, make 2 P(win) - 1; and
    ``win_probability``) with whether it is proven (``proven: false`` and the table's residual),
    ``best``, and every legal action best first (``actions``: its move, its chances, whether it
    rolls again or captures); ``best`` is None and ``actions`` empty where the roll must pass."""
    actions = [{"action": move_text(c.move, rules, pos.to_move), "value": 2.0 * c.win_probability - 1.0,
                "win_probability": c.win_probability, "extra_roll": bool(c.move.extra_roll),
                "captures": bool(c.move.capture), "wins": bool(c.move.win)} for c in ranked]
    best = actions[0] if actions else None
    return {"position": royal.format_position(pos, rules), "to_move": pos.to_move, "roll": roll,
            "value": best["value"] if best else None, "win_probability": best["win_probability"] if best else None,
            **prov.fields(0.0), "best": best["action"] if best else None, "actions": actions}


def analyze_answer(rules: royal.RuleSet, pos: royal.Position, look: Callable[[royal.State], float],
                   source: dict[str, Any], prov: Provenance) -> dict[str, Any]:
    """``analyze --json``, in the fort rules' shape: the mover's value (``value``, 2 P(win) - 1) and
    chance (``win_probability``) before rolling and each roll's best move with both, whether the
    values are proven (``proven: false`` and the table's residual), and the ``source``."""
    state = pos.state()
    rows: list[dict[str, Any]] = []
    for roll, prob in rules.roll_probabilities:
        ranked = royal_choices(rules, look, state, roll)
        p = ranked[0].win_probability if ranked else 1.0 - look(state.swapped())
        rows.append({"roll": roll, "probability": float(prob),
                     "best": describe(ranked[0].move, rules, pos.to_move) if ranked else "pass",
                     "value": 2.0 * p - 1.0, "win_probability": p})
    p = look(state)
    return {"position": royal.format_position(pos, rules), "to_move": pos.to_move, "value": 2.0 * p - 1.0,
            "win_probability": p, **prov.fields(0.0), "rolls": rows, "source": source}


def analyze_cmd(rules: royal.RuleSet, position: str, table: str | None, as_json: bool,
                solve_first: bool = False) -> None:
    pos = royal.parse(position, rules)
    from gamesolver.games.ur.opening import OutsideOpening

    look, source, prov = lookup(rules, table, solve_first)
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
    solved = _solved(rules, where, table, solve_first)
    values = (1.0 + np.asarray(solved["value"], dtype=np.float64)) / 2.0
    rgu.write_values(out, rules, values, value_type,
                     notes={"author": "gamesolver", "tolerance": solved.meta.get("tolerance")})
    click.echo(f"wrote {values.shape[0]:,} positions to {out} ({rules.name}, {rules.pieces} pieces, "
               f"{rgu.value_type_name(value_type)})")
