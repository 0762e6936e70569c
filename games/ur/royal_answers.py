"""RoyalUr's rule sets' answers, as data, in the fort rules' shapes (``games.ur.answers``): where
a query reads its values (an ``.rgu`` file, a table, the shipped opening file), best move,
analysis, show, and what a missing table would take. ``solver ur --rules ...`` prints them and
``solver serve`` sends them; nothing here knows click or HTTP.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from gamesolver.solver.stochastic.engine import Log
from gamesolver.games.ur import rgu, royal, royal_encoding, royal_opening
from gamesolver.games.ur.provenance import Provenance, of_table
from gamesolver.games.ur.royal_table import default_table_dir, load_royal_table, royal_choices, state_rank
from gamesolver.games.ur.rules import AUTO_BUILD_MAX_PIECES, SOLVE_HINT  # the same for both rule families
from gamesolver.solver.errors import InputError, MissingTableError
from gamesolver.solver.tables.paths import file_kind
from gamesolver.solver.stochastic.planning import default_threads, span


def table_source(solved: Any) -> dict[str, Any]:
    """An answer's ``source`` in JSON for one of our tables (the fort rules' answers say the same)."""
    return {"kind": "table", "path": str(solved.path), **of_table(solved).table_fields()}


def lookup(rules: royal.RuleSet, table: str | None, solve_first: bool = False,
           log: Log | None = None) -> tuple[Callable[[royal.State], float], dict[str, Any], Provenance]:
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
    solved = solved_table(rules, where, table, solve_first, log)
    return table_lookup(rules, solved), table_source(solved), of_table(solved)


def source_text(source: dict[str, Any], rules: royal.RuleSet) -> str:
    """Where an answer came from, in words, from its ``source`` fields."""
    if source["kind"] == "opening-file":
        which = "the shipped opening file" if source["shipped"] else f"the opening file {source['file']}"
        return (f"{which} (positions within {source['turns']} moves of the start), built from table "
                f"{source['table_values_sha256'][:16]} ({rules.name}, pieces={rules.pieces})")
    return source["path"]


def solved_table(rules: royal.RuleSet, where: Path, table: str | None, solve_first: bool,
            log: Log | None = None) -> Any:
    """The table at ``where``: a small one missing from the cache is solved into it, as is any
    missing one with ``solve_first`` (--solve); otherwise a missing table is the message that says
    how to build it."""
    build = solve_first or (table is None and rules.pieces <= AUTO_BUILD_MAX_PIECES)
    try:
        return load_royal_table(rules, where, build=build, log=log)
    except MissingTableError:
        raise MissingTableError(f"{missing_table_message(rules, where, table)}; {SOLVE_HINT}") from None


def shipped_fallback(rules: royal.RuleSet, cache: str | Path | None = None) -> Any:
    """The opening file shipped for the rule set, where a query answers from it: the table is too
    large to build on a query and not in the cache (else None; the server asks too)."""
    if rules.pieces <= AUTO_BUILD_MAX_PIECES or (default_table_dir(rules, cache) / "header.json").is_file():
        return None

    return royal_opening.shipped(rules)


# core-seconds a state of a whole solve, measured on the 2-core machine (benchmarks/bench_royal.py,
# docs/royalur.md): Blitz 381 core-seconds for 41,243,781 states, Finkel 1,537 for 137,870,097
CORE_SECONDS_PER_STATE = (381.0 / 41_243_781, 1537.0 / 137_870_097)


def solve_seconds(rules: royal.RuleSet, cores: int) -> tuple[float, float]:
    """About how long solving the rule set takes on ``cores`` cores, from the measured rates."""
    states = royal_encoding.encoding(rules).size
    return (states * CORE_SECONDS_PER_STATE[0] / cores, states * CORE_SECONDS_PER_STATE[1] / cores)


def missing_table_message(rules: royal.RuleSet, where: Path, given: str | None = None) -> str:
    """Why a query does not build the rule set's table at ``where`` itself (``given``: --table):
    what is missing, about how long solving it takes here, and the command."""
    hint = "" if given is None else f" --out {given}"
    cores = default_threads()
    return (f"no solved table for {rules.name} with {rules.pieces} pieces at {where}; solving its "
            f"{royal_encoding.encoding(rules).size:,} states takes about {span(solve_seconds(rules, cores))} on "
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


def show_answer(rules: royal.RuleSet, pos: royal.Position) -> dict[str, Any]:
    """``show --json``, as the fort rules' (the tiles each side holds and the side to move), with
    each side's pieces in hand and borne off."""
    return {"position": royal.format_position(pos, rules), "to_move": pos.to_move,
            "L": sorted(rules.path[i] for i in pos.light.path), "D": sorted(rules.dark_path[i] for i in pos.dark.path),
            "off_board": {s: {"hand": side.hand, "borne_off": side.scored}
                          for s, side in (("L", pos.light), ("D", pos.dark))}}


def outside_opening(rules: royal.RuleSet) -> MissingTableError:
    """A position beyond the shipped opening file: what it holds and the command that solves the rest."""
    return MissingTableError(f"the opening file shipped for {rules.name} holds only the positions near the start, "
                             f"not this one; {missing_table_message(rules, default_table_dir(rules))}")


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
