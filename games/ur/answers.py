"""The fort rules' answers, as data: best move, analysis, show, and what a missing table or a
position beyond an opening file would take. ``solver ur`` prints them and ``solver serve`` sends
them, so both answer alike; nothing here knows click or HTTP.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from gamesolver.games.ur.engine import terminal_value
from gamesolver.games.ur.generator import kernel
from gamesolver.games.ur.notation import Position, format_position
from gamesolver.games.ur.provenance import of_table
from gamesolver.games.ur.rules import AUTO_BUILD_MAX_PIECES, UrOptions
from gamesolver.games.ur.solve import (
    Choice,
    choice_interval,
    choices,
    default_table_dir,
    state_interval,
    state_value,
    stored_state_count,
)
from gamesolver.solver.stochastic.planning import (
    Projection, RAY_WORKER_EFFICIENCY, STORED_SWEEP_SPEEDUP, TYPICAL_SWEEPS, default_threads, extra_bytes,
    sweep_rate, span,
)
from gamesolver.games.ur import opening
from gamesolver.games.ur.opening import OpeningFile
from gamesolver.solver.errors import InputError
from gamesolver.solver.limits import duration
from gamesolver.solver.tables.table import Table
from gamesolver.solver.stochastic.outcomes import auto_stores, estimate_bytes


def shipped_fallback(options: UrOptions, cache: str | Path | None) -> OpeningFile | None:
    """The opening file shipped for these options, where a query answers from it: the table is
    too large to build on a query and not in the cache (else None; the server asks too)."""
    if options.pieces <= AUTO_BUILD_MAX_PIECES or (default_table_dir(options, cache) / "header.json").is_file():
        return None
    return opening.shipped(options)


def outside_opening_message(options: UrOptions, book: OpeningFile, cache: str | Path | None) -> tuple[str, dict[str, Any]]:
    """A position the opening file does not cover: the missing table's message, which also says
    what the file covers, and its JSON fields (the CLI and the server answer with it)."""
    where = default_table_dir(options, cache)
    text, fields = missing_table_message(options, where, False)
    first, _, rest = text.partition("\n")
    note = (f"the opening file {book.path} holds only the positions within {book.turns} turns of the start, "
            f"not this one")
    return "\n".join([note, first] + ([rest] if rest else [])), {**fields, "opening_file": str(book.path)}


def exact_zero(note: str) -> dict[str, Any]:
    """Where nobody can win, every value is 0 by the rules alone: proven, whatever the table."""
    return {"proven": True, "lower": 0.0, "upper": 0.0, "why": note}


def answer_source(table: Table | OpeningFile, book: OpeningFile | None, opening_file: str | None) -> dict[str, Any]:
    """An answer's ``source`` in --json: the opening file it came from, or the solved table."""
    if book is not None:
        return book.source(opening_file is None)
    return {"kind": "table", "path": str(table.path), **of_table(table).table_fields()}


def source_line(table: Table | OpeningFile, book: OpeningFile | None, opening_file: str | None) -> str:
    """The answer's source in one line of text; the only place an unproven value says so."""
    if book is not None:
        return f"({book.describe(opening_file is None)})"
    return f"(from the table at {table.path}; {of_table(table).text()})"


def proven_text(answer: dict[str, Any]) -> str:
    """' (proven between a and b)' for a value with an interval; ' (unproven: residual r)' (or
    'residual below r') where the answer says it is not proven, on the value's own line; else ''."""
    if answer.get("proven") is False:
        if "residual" in answer:
            return f" (unproven: residual {answer['residual']:.2g})"
        if "residual_below" in answer:
            return f" (unproven: residual below {answer['residual_below']:.2g})"
        return " (unproven)"
    if not answer.get("proven") or "lower" not in answer:
        return ""
    if answer["lower"] == answer["upper"]:
        return " (proven exactly)"
    return f" (proven between {answer['lower']:+.7f} and {answer['upper']:+.7f})"


def solving_time(meta: dict[str, Any]) -> str:
    """How long a table took to solve, from its header: every run of a solve that was stopped and
    resumed counts, and this run's share is said where it was not all of it ("" for a table that
    records no time)."""
    this = meta.get("solve_seconds_this_run")
    total = meta.get("solve_seconds", this)  # tables written before the solve's runs were added up
    if total is None:
        return ""
    if this is None or float(this) >= float(total):
        return f"{duration(float(total))} of solving"
    return f"{duration(float(total))} of solving ({duration(float(this))} of it in this run)"


def best_move_answer(options: UrOptions, pos: Position, roll: int, ranked: list[Choice],
                     table: Table | OpeningFile) -> dict[str, Any]:
    """``best-move --json`` from the ranked ``choices`` for ``roll`` (the server answers the same):
    the best action's value with its proven interval, or ``proven: false`` and the residual."""
    board = options.board
    note = nobody_wins(options)
    if note is not None:  # every value is 0: no action is best, and the answer says why
        return {"position": format_position(pos, board), "to_move": pos.to_move,
                "roll": options.dice.rolls[roll].name, "value": ranked[0].value, **exact_zero(note),
                "winnable": False, "note": note, "best": None,
                "actions": [{"action": c.action.describe(board), "value": c.value} for c in ranked]}
    prov = of_table(table)

    def action(c: Choice) -> dict[str, Any]:
        return {"action": c.action.describe(board), "value": c.value,
                **prov.interval_fields(c.value, choice_interval(options, table, c))}

    return {
        "position": format_position(pos, board),
        "to_move": pos.to_move,
        "roll": options.dice.rolls[roll].name,
        "value": ranked[0].value,
        **prov.fields(ranked[0].value, choice_interval(options, table, ranked[0])),
        "best": ranked[0].action.describe(board),
        "actions": [action(c) for c in ranked],
    }


def analyze_answer(options: UrOptions, table: Table | OpeningFile, pos: Position) -> dict[str, Any]:
    """``analyze --json``: the value before rolling with its proven interval (or ``proven: false``
    and the residual), and each roll's best action."""
    mine, theirs = pos.mover_relative()
    note = nobody_wins(options)
    if note is not None:  # every value is 0: no action is best, and the answer says why
        return {"position": format_position(pos, options.board), "to_move": pos.to_move,
                "value": state_value(options, table, mine, theirs), **exact_zero(note), "winnable": False,
                "note": note,
                "rolls": [{"roll": roll.name, "probability": roll.probability,
                           "value": choices(options, table, pos, i)[0].value, "best": None,
                           "actions": len(choices(options, table, pos, i))}
                          for i, roll in enumerate(options.dice.rolls)]}
    prov = of_table(table)
    rows = []
    for i, roll in enumerate(options.dice.rolls):
        best = choices(options, table, pos, i)[0]
        rows.append({"roll": roll.name, "probability": roll.probability,
                     "best": best.action.describe(options.board), "value": best.value,
                     **prov.interval_fields(best.value, choice_interval(options, table, best))})
    value = state_value(options, table, mine, theirs)
    return {"position": format_position(pos, options.board), "to_move": pos.to_move,
            "value": value, **prov.fields(value, state_interval(options, table, mine, theirs)),
            "rolls": rows}


CLUSTER_CORES = 64  # the cluster the missing-table message prices a solve on (e.g. 4 nodes of 16)


# One NVIDIA H200's round of the walk, seconds a stored state, measured on one: seven pieces' first
# 10 rounds of a regenerating solve (the walk with its early aim and the hot sets found
# on the device): a full sweep of K = 7's 639,358,121 states 12.2 s, with the round's policy
# sweeps 12.5 to 13.4 s a round (the day before, a benchmark's full sweep took 12.71 s and the
# policy sweeps were reckoned at up to 3 s more a round)
GPU_MEASURED_ON = "NVIDIA H200"


GPU_SECONDS_PER_STATE = (12.5 / 639_358_121, 13.4 / 639_358_121)


# Where the stored graph fits in that GPU's memory beside the rest of the solve, the device sweeps
# from it: a whole round (a stored full sweep and the walk's policy sweeps, the endless check and
# its repairs included) a stored state, from the two solves run so with the walk as it is
# (docs/design): six pieces 142 rounds in 174.6 s (4.8 ns a state a round),
# five 105 rounds in 44.1 s (6.8 ns); with the walk before, 197 in 297 s and 169 in 75 s
GPU_STORED_SECONDS_PER_STATE = (174.6 / 142 / 254_927_401, 44.1 / 105 / 61_877_337)


GPU_MEMORY_BYTES = 150_109_880_320  # that H200's memory as CUDA reports it


GPU_MEMORY_USABLE = 0.9  # the share of it the message counts on (the engine asks for the free memory)


# A stored state of the mirrored generator costs more to sweep than a state of the plain one (each
# successor is brought to its canonical twin and numbered from the mirror's index): one thread,
# idle, three samples each (with the index prefetch), K = 5 1.41-1.56 against
# 1.05-1.15 us, K = 6 1.94-2.21 against 1.31-1.42, K = 7 2.06-2.37 against 1.46-1.68. Up to
# MIRROR_TIMED_MAX placements (K = 5: 123,479,901) the message times the mirrored generator itself
# (its index takes 2 s for K = 5); above, the plain one (the mirrored one's index takes 10 s for
# K = 6, 25 s for K = 7), its rate scaled by this
MIRROR_SWEEP_COST = 1.5


MIRROR_TIMED_MAX = 150_000_000


def gpu_solve_seconds(options: UrOptions) -> tuple[tuple[float, float], bool]:
    """The solve's time on one GPU of the kind measured (GPU_MEASURED_ON), from its measured rates
    times the walk's typical rounds (TYPICAL_SWEEPS), and whether the stored graph fits there
    beside the values, the walk's policy and marks (then it sweeps from the graph). The missing
    table's message and the README's table of results both quote it."""
    plain = kernel(dataclasses.replace(options, mirror=False))
    states = stored_state_count(options)
    graph = int(estimate_bytes(plain) * states / max(1, plain.state_count))
    need = graph + 4 * states + extra_bytes(states, plain.roll_count, "walk")
    stores = need <= GPU_MEMORY_USABLE * GPU_MEMORY_BYTES
    rate = GPU_STORED_SECONDS_PER_STATE if stores else GPU_SECONDS_PER_STATE
    return (TYPICAL_SWEEPS[0] * rate[0] * states, TYPICAL_SWEEPS[1] * rate[1] * states), stores


def missing_table_message(options: UrOptions, where: Path, named: bool) -> tuple[str, dict[str, Any]]:
    """Why a query cannot answer without the table at ``where`` and what building it would take:
    one sweep rate timed now on this machine (in CPU time, saying so where the machine was busy), times the sweeps such solves need
    (``solver.stochastic.planning``), here (over the stored graph where it fits, as the solve would) and on
    a Ray cluster, and the commands that build it; and the same as JSON fields. ``named``: the
    folder came from --table."""
    k = options.pieces
    cores = default_threads()
    plain = kernel(dataclasses.replace(options, mirror=False))
    states = stored_state_count(options)
    if states == plain.state_count:  # no mirror: the plain generator is the solve's
        sample = sweep_rate(plain)
        rate = sample.seconds
    elif plain.state_count <= MIRROR_TIMED_MAX:
        sample = sweep_rate(kernel(options))
        rate = sample.seconds
    else:
        sample = sweep_rate(plain)
        rate = sample.seconds * MIRROR_SWEEP_COST
    p = Projection(states, rate, plain.roll_count)
    here, cluster = p.solve_seconds(cores, skipping=True), p.solve_seconds(CLUSTER_CORES, RAY_WORKER_EFFICIENCY)
    # where the stored graph fits (by the solve's own rule, ``want_graph``'s auto), the solve sweeps
    # from it: the plain generator's sample, scaled to the states stored
    graph = int(estimate_bytes(plain) * p.states / max(1, plain.state_count))
    fits = auto_stores(graph + extra_bytes(p.states, plain.roll_count, "walk"))
    stored = p.solve_seconds(cores, stored=STORED_SWEEP_SPEEDUP) if fits else None
    out = f" --out {where}" if named else ""
    gpu, gpu_stores = gpu_solve_seconds(options)
    commands = [f"solver ur solve --pieces {k}{out}",
                f"solver ur solve --pieces {k}{out} --backend ray --address HEAD:6379",
                f"solver ur solve --pieces {k}{out} --backend gpu"]
    fastest = stored or here
    text = (f"no solved table for pieces={k} at {where}; solving its {p.states:,} states takes about "
            f"{span(fastest)} on this machine ({cores} cores, {p.value_bytes / 2**30:.2f} GiB of values)"
            f"{sample.busy_note()}: '{commands[0]}'")
    if fastest[0] > 3600:  # other machines only where this one would take hours
        text += (f"\nelsewhere: about {span(cluster)} on a Ray cluster of {CLUSTER_CORES} worker cores "
                 f"('{commands[1]}'), about {span(gpu)} on one {GPU_MEASURED_ON} GPU ('{commands[2]}', "
                 f"pip install \"gamesolver[gpu]\"; docs/ur.md says how)")
    return text, {"missing_table": str(where), "pieces": k, "commands": commands,
                  "projection": {**p.as_dict(cores, CLUSTER_CORES), "gpu_solve_seconds": list(gpu),
                                 "gpu_measured": True, "gpu_measured_on": GPU_MEASURED_ON,
                                 "gpu_stored_graph": gpu_stores,
                                 "stored_graph_bytes": graph, "stored_graph_fits_here": fits,
                                 "sample_core_share": round(sample.core_share, 3),
                                 "solve_seconds_here_stored": list(stored) if stored else None}}


def nobody_wins(options: UrOptions) -> str | None:
    """Why no game can be won with these options (too few pieces to hold every fort), or None."""
    forts = len(options.board.forts)
    if options.pieces >= forts:
        return None
    return (f"nobody can win with {options.pieces} piece{'s' if options.pieces > 1 else ''} a side: a win needs "
            f"all {forts} forts held at once, so every game is a draw under any play (value 0) and no action "
            "is better than another")


def game_over_answer(options: UrOptions, pos: Position) -> dict[str, Any] | None:
    """``analyze --json`` for a finished game (one side holds every fort): its value by the rules
    alone, exact, with no table read and no roll to play; None while the game goes on."""
    mine, theirs = pos.mover_relative()
    value = terminal_value(options.board, mine, theirs)
    if value is None:
        return None
    winner = pos.to_move if value > 0 else ("O" if pos.to_move == "X" else "X")
    why = f"the game is over ({winner} holds all four forts and has won)"
    return {"position": format_position(pos, options.board), "to_move": pos.to_move, "value": value,
            "proven": True, "lower": value, "upper": value, "why": why, "game_over": True, "winner": winner,
            "rolls": [], "source": {"kind": "rules"}}


def game_over_refusal(options: UrOptions, pos: Position) -> None:
    """Refuse to choose an action in a finished game (a one-line InputError), else nothing."""
    over = game_over_answer(options, pos)
    if over is not None:
        raise InputError(f"{over['position']}: {over['why']}, so there is no action to choose (its value for "
                         f"{over['to_move']} is {over['value']:+g}, exact)")


def show_answer(options: UrOptions, pos: Position) -> dict[str, Any]:
    """``show --json``: the tiles each side holds and the side to move."""
    names = options.board.names
    return {"position": format_position(pos, options.board), "to_move": pos.to_move,
            "X": sorted(names[i] for i in pos.x), "O": sorted(names[i] for i in pos.o)}
