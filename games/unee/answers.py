"""The Ünee answers, as data: a position and its moves (``show``), captured balls so far, the
value for the side to move and what it means for the result. ``solver unee`` prints them and
``solver serve`` sends them; nothing here knows click or HTTP."""
from __future__ import annotations

from typing import Any

from gamesolver.games.unee import notation
from gamesolver.games.unee.rules import CAPTURE_COUNT, UneeOptions, sow_relative
from gamesolver.solver.errors import InputError


def parse_captured(text: str | None, pos: notation.Position, options: UneeOptions) -> tuple[int, int]:
    """``S-N`` balls captured so far by South and North; returns (south, north)."""
    if text is None:
        return 0, 0
    parts = text.replace(":", "-").split("-")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise InputError(f"--captured {text!r}: expected South's and North's captured balls as S-N, e.g. 12-8")
    south, north = (int(p) for p in parts)

    odd = [f"{who} {n}" for who, n in (("South", south), ("North", north)) if n % CAPTURE_COUNT]
    if odd:
        raise InputError(f"--captured {text}: {' and '.join(odd)} cannot have been captured; captures take "
                         f"{CAPTURE_COUNT} balls at a time, so each side's count is a multiple of {CAPTURE_COUNT}")
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
        out.update(value=v, remoteness=rem, cycling=cyc, outcome=sign(d + v))
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
        out["meaning"] = f"with {d:+d} captured so far, {mover} {word} with best play ({thresholds(a, b)})"
    else:
        lo, hi = table.probe_bounds(pos)
        note = None if lo == hi else "certified bounds; use 'analyze --exact' for the exact value"
        out.update(split_bounds_answer(mover, lo, hi, d, note))
    return out


def thresholds(a: int | None, b: int | None) -> str:
    """The draw rule's thresholds in words: above which captured difference the mover wins, below
    which it loses (None: no difference does)."""
    if a is None and b is None:
        return "no captured difference wins or loses"
    win = f"wins iff captured difference > {-a}" if a is not None else "no captured difference wins"
    lose = (f"loses iff < {b}" if a is not None else f"loses iff it is < {b}") if b is not None else "none loses"
    return f"{win}, {lose}"


def split_bounds_answer(mover: str, lo: int, hi: int, d: int, note: str | None) -> dict[str, Any]:
    """The split rule's bounds ``lo..hi`` for the mover, with ``d`` captured so far: the answer's
    value fields and its sentence (``note``, if any, in brackets after the bounds)."""
    outcome = sign(d + lo) if sign(d + lo) == sign(d + hi) else None
    bracket = f" ({note})" if note else ""
    if lo == hi:
        meaning = f"{mover} can force exactly {lo:+d} from now on{bracket}; with {d:+d} so far {mover} {verdict(d + lo)}"
    else:
        meaning = (f"{mover} can force between {lo:+d} and {hi:+d} from now on{bracket}; with {d:+d} so far: "
                   + (verdict(d + lo) if outcome is not None else "the outcome depends on the exact value"))
    return {"value": lo if lo == hi else None, "lower": lo, "upper": hi, "exact": lo == hi, "outcome": outcome,
            "meaning": meaning}


def best_move_answer(table: Any, pos: notation.Position, d: int) -> dict[str, Any]:
    """``best-move --json``: the position's value and its best moves (the server answers the same)."""
    info = describe_value(table, pos, d)
    return {"position": str(pos), **info, "best_moves": [m.as_dict() for m in table.best_moves(pos, d)]}


def analyze_answer(table: Any, pos: notation.Position, d: int,
                   exact: tuple[int, int] | None = None, memory: tuple[Any, dict[str, int]] | None = None
                   ) -> dict[str, Any]:
    """``analyze --json``: the position's value and every legal move judged; ``exact`` is the
    split rule's (exact value, positions searched) when that search was run, ``memory`` the
    result of ``split.memory_bounds`` and its counts of the layers below."""
    info = describe_value(table, pos, d)
    if exact is not None:
        value, searched = exact
        info.update(value=value, exact_value=value, searched=searched, exact=True, outcome=sign(d + value))
        info["meaning"] += f"; exact search: {value:+d} ({searched:,} positions searched)"
    if memory is not None:
        r, below = memory
        lo, hi = r.lower, r.upper
        complete = r.complete and not below["stopped"]
        info["memory"] = {"depth": r.depth, "lower": lo, "upper": hi, "solves": r.solves + below["solves"],
                          "complete": complete, "states_below": below["states"],
                          "narrowed_below": below["narrowed"], "stopped_below": below["stopped"]}
        how = (f"with memory of the first {r.depth} plies: {info['memory']['solves']:,} layer solves, "
               f"{below['narrowed']:,} of {below['states']:,} positions below narrowed"
               + ("" if complete else ", stopped by the solve limit (raise --max-solves or --effort)")
               + f"; positional bounds {info['lower']:+d}..{info['upper']:+d}")
        info.update(split_bounds_answer(notation.SIDE_NAMES[pos.side], lo, hi, d, how))
    return {"position": str(pos), **info, "moves": [m.as_dict() for m in table.analyze(pos, d)]}


def pv_answer(pos: notation.Position, rule: str, line: Any) -> dict[str, Any]:
    """``pv --json``: the principal variation ``line`` from ``pos`` (``table.principal_variation``)."""
    return {
        "position": str(pos), "rule": rule, "end": line.end, "plies": len(line.plies),
        "moves": [{"move": m.move, "captured": m.captured, "position": str(p)} for m, p in line.plies],
        "final_difference": line.final_difference(rule),
    }


def cycle_answer(pos: notation.Position, shortest: bool, cyc: Any, lead: Any) -> dict[str, Any]:
    """``cycle --json`` (without ``--radius``): the loop found and the plies that lead into it."""
    return {"position": str(pos), "kind": "shortest" if shortest else "optimal",
            "cycle": cyc.as_dict() if cyc else None, "lead_in": lead.length if lead else 0}


def sign(x: int) -> int:
    return (x > 0) - (x < 0)


def move_value_text(m: Any, rule: str) -> str:
    if rule == "uncounted":
        cyc = " cycles" if m.cycling else ""
        return f"value {m.value:+d}  remoteness {m.remoteness}{cyc}"
    if rule == "draw":
        return {1: "wins", 0: "draw", -1: "loses"}[m.outcome]
    if m.lower == m.upper:
        return f"value {m.lower:+d} (exact)"
    return f"value in [{m.lower:+d}, {m.upper:+d}]"


def _move_rows(pos: notation.Position, options: UneeOptions) -> list[dict[str, Any]]:
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


def show_answer(pos: notation.Position, options: UneeOptions) -> dict[str, Any]:
    """``show --json``: the position, its rows and every legal move (the server answers the same)."""
    mover_row = pos.south if pos.side == "S" else pos.north
    return {
        "position": str(pos),
        "side": pos.side,
        "north": list(pos.north),
        "south": list(pos.south),
        "balls": pos.balls,
        "game_over": sum(mover_row) == 0,
        "moves": _move_rows(pos, options),
    }
