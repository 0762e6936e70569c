"""Historical claims about Ünee Tugalluulax, each checked against the whole state space.

- Repetitions exist (Eichler, June 2009): the shortest game from the start that repeats.
- "Capturing loses!" (Eichler's diagram, ball counts lost): every position that fits the
  caption, under each repetition rule, and a checker for a position a user enters.
- "Not so much for computers": the solved value of the start under each rule.
(The 150-move claim lives in ``games.unee.lengths``.)

What "fits the caption" means, per rule, for the side to move (South, by symmetry any board):
a capture is available, and
- ``uncounted``: every capture leaves the mover behind from here on (value < 0), while best
  play keeps at least an even score (value >= 0) and ends in a repetition;
- ``draw`` (score level so far): every capture loses the game, and neither side can force the
  game to finish (without repetition) at least level for itself, so best play repeats;
- ``split``: every capture certainly loses (its upper bound is below 0) while the mover can
  guarantee at least an even score (lower bound >= 0), and best play by the bounds (the move
  with the best guaranteed, then hoped-for, value) repeats a position.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from gamesolver.games.claims import ClaimResult
from gamesolver.games.unee.graph import StateGraph, build_graph
from gamesolver.games.unee.notation import Position, diagram
from gamesolver.games.unee.rules import DEFAULT, REPETITION_RULES, UneeOptions
from gamesolver.games.unee.solution import NEVER, UneeTable, solve

SHOWN = 3


def capture_losing_mask(table: UneeTable, graph: StateGraph, ranks: np.ndarray | None = None) -> np.ndarray:
    """Boolean per board (South to move; all boards, or the given ``ranks``): the position fits
    the 'Capturing loses!' caption."""
    t = table.table
    owner, edges = graph.edges_of(ranks)
    states = np.arange(graph.n_states) if ranks is None else np.asarray(ranks, dtype=np.int64)
    succ = graph.succ[edges]
    cap = graph.captured[edges].astype(np.int16)
    is_cap = cap > 0
    if table.rule == "uncounted":
        loses = cap - t["value"][succ].astype(np.int16) < 0
        ok_state = (t["value"][states] >= 0) & (t["cycling"][states] == 1)
    elif table.rule == "draw":
        a_succ = t["a"][succ].astype(np.int16)
        loses = (a_succ != NEVER) & (a_succ > cap)
        ok_state = (t["a"][states] < 0) & (t["b"][states] < 0)
    else:
        loses = cap - t["lower"][succ].astype(np.int16) < 0
        ok_state = t["lower"][states] >= 0
    n = states.size
    captures = np.bincount(owner[is_cap], minlength=n)
    losing = np.bincount(owner[is_cap & loses], minlength=n)
    mask = (captures > 0) & (losing == captures) & ok_state
    if table.rule == "split" and mask.any():
        # the bounds say nothing of repetition: keep the positions whose best play repeats
        choice = split_choice(table, graph)
        for i in np.flatnonzero(mask):
            mask[i] = follow_repeats(graph, choice, int(states[i]))
    return mask


def split_choice(table: UneeTable, graph: StateGraph) -> np.ndarray:
    """The edge best play follows under the split rule (the first move with the best
    (guaranteed, hoped-for) pair, as ``UneeTable.best_moves`` orders them); -1 without a move."""
    t = table.table
    owner, _ = graph.edges_of()
    cap = graph.captured.astype(np.int32)
    low = cap - t["upper"][graph.succ].astype(np.int32)
    high = cap - t["lower"][graph.succ].astype(np.int32)
    key = (low + 64) * 256 + (high + 64)
    deg = graph.degree()
    starts = np.minimum(graph.indptr[:-1], max(key.size - 1, 0))
    best = np.maximum.reduceat(key, starts) if key.size else np.zeros(graph.n_states, dtype=key.dtype)
    best[deg == 0] = -1
    hit = np.flatnonzero(key == best[owner])
    who = owner[hit]
    first = np.ones(hit.size, dtype=bool)
    first[1:] = who[1:] != who[:-1]
    choice = np.full(graph.n_states, -1, dtype=np.int64)
    choice[who[first]] = hit[first]
    return choice


def follow_repeats(graph: StateGraph, choice: np.ndarray, rank: int, limit: int = 100_000) -> bool:
    """Does following ``choice`` from (rank, South to move) end by repeating a position?"""
    seen = {(rank, 0)}
    x, side = rank, 0
    for _ in range(limit):
        k = int(choice[x])
        if k < 0:
            return False
        x, side = int(graph.succ[k]), 1 - side
        if (x, side) in seen:
            return True
        seen.add((x, side))
    return False


@dataclass
class CaptionSearch:
    rule: str
    boards: np.ndarray  # ranks that fit, ascending
    reachable: np.ndarray  # the subset reachable from the start with South to move
    per_balls: dict[int, tuple[int, int]]  # balls -> (count, reachable count)


def search_capturing_loses(rule: str, options: UneeOptions = DEFAULT) -> CaptionSearch:
    graph = build_graph(options)
    table = solve(rule, options)
    mask = capture_losing_mask(table, graph)
    boards = np.flatnonzero(mask)
    reach = graph.reachable()
    reachable = boards[(reach[boards] & 1).astype(bool)]
    layer = graph.layer_of(boards)
    rlayer = graph.layer_of(reachable)
    per = {}
    for s in np.unique(layer):
        per[int(s)] = (int((layer == s).sum()), int((rlayer == s).sum()))
    return CaptionSearch(rule, boards, reachable, per)


def explain_position(table: UneeTable, pos: Position, captured: int = 0) -> dict[str, Any]:
    """Each move's outcome for a user's position, and whether it fits the caption."""
    graph = build_graph(table.options)
    moves = table.analyze(pos, captured)
    rank = table.rank(pos)
    fits = bool(capture_losing_mask(table, graph, np.array([rank]))[0])
    rows = []
    for m in moves:
        if table.rule == "draw":
            verdict = {1: "wins", 0: "draws", -1: "loses"}[m.outcome]
        elif m.lower is not None and m.lower != m.upper:
            if captured + m.upper < 0:
                verdict = "loses"
            elif captured + m.lower > 0:
                verdict = "wins"
            else:
                verdict = "undetermined by the bounds"
        else:
            v = captured + (m.value if m.value is not None else m.lower)
            verdict = "wins" if v > 0 else ("loses" if v < 0 else "draws")
        rows.append({**m.as_dict(), "verdict": verdict})
    line = table.principal_variation(pos, captured)
    best = [r for r in rows if r["best"]]
    has_capture = any(m.captured for m in moves)
    if captured != 0:
        # the stored search is for a level score; with captures so far, judge the moves themselves
        fits = (
            has_capture
            and all(r["verdict"] == "loses" for r in rows if r["captured"])
            and line.end == "repetition"
            and any(r["verdict"] != "loses" for r in best)
        )
    return {
        "position": str(pos),
        "rule": table.rule,
        "captured_difference": captured,
        "fits_caption": fits,
        "has_capture": has_capture,
        "best_play_repeats": line.end == "repetition",
        "best_play_plies": len(line.plies),
        "moves": rows,
    }


def replay_check(table: UneeTable, pos: Position) -> tuple[bool, str]:
    """Play the position out against the table: every capture followed by best play ends worse
    than 0 for the mover, and best play from the position ends by repetition."""
    line = table.principal_variation(pos)
    if line.end != "repetition":
        return False, f"best play ends by {line.end}, not by repetition"
    best = line.final_difference(table.rule)
    for m in table.analyze(pos):
        if not m.captured:
            continue
        # the opponent moves next, behind by the capture (which matters under the draw rule)
        after = table.principal_variation(m.position, -m.captured if table.rule == "draw" else 0)
        total = after.final_difference(table.rule)
        mine = m.captured - total if total is not None else None
        if table.rule == "draw":
            if total is None or total <= 0:
                return False, f"{m.move}: the opponent does not win after the capture"
        elif mine is None or mine >= 0:
            return False, f"{m.move}: capturing gives {mine}, not a loss"
    return True, f"best play repeats after {len(line.plies)} plies with {best if best is not None else 'no result'}"


# ---------------------------------------------------------------- claim checks


def repetitions_exist() -> ClaimResult:
    from gamesolver.games.unee.cycles import position_of, shortest_repetition_game

    graph = build_graph(DEFAULT)
    t0 = time.perf_counter()
    found = shortest_repetition_game(graph)
    seconds = time.perf_counter() - t0
    if found is None:
        return ClaimResult("refuted", "no position reachable from the start can repeat")
    nodes, first = found
    positions = [position_of(graph, v) for v in nodes]
    plies = len(nodes) - 1
    evidence = [
        f"shortest game from the start that ends by repetition: {plies} plies; position {first} "
        f"({positions[first]}) occurs again at ply {plies} (searched in {seconds:.1f} s)",
    ]
    evidence += [f"  ply {i:>2}: {p}" for i, p in enumerate(positions)]
    return ClaimResult(
        "verified",
        f"positions repeat in games from the standard start; the shortest such game has {plies} plies",
        evidence,
        {"plies": plies, "repeated_ply": first, "game": [str(p) for p in positions]},
    )


def capturing_loses() -> ClaimResult:
    from gamesolver.games.unee.cycles import optimal_cycle

    evidence: list[str] = []
    figures: dict[str, Any] = {}
    found_rules = []
    for rule in REPETITION_RULES:
        res = search_capturing_loses(rule)
        table = solve(rule)
        graph = build_graph(DEFAULT)
        figures[rule] = {
            "positions": int(res.boards.size),
            "reachable": int(res.reachable.size),
            "per_balls": {str(k): {"all": v[0], "reachable": v[1]} for k, v in sorted(res.per_balls.items())},
        }
        evidence.append(
            f"[{rule}] {res.boards.size:,} positions fit the caption (South to move), "
            f"{res.reachable.size:,} of them reachable from the start"
        )
        if res.per_balls:
            evidence.append(
                "  per balls on the board: "
                + ", ".join(f"{k}: {v[0]:,} ({v[1]:,})" for k, v in sorted(res.per_balls.items()))
                + "  [all (reachable)]"
            )
        shown = []
        picks = list(res.boards[:SHOWN]) + [r for r in res.reachable[:2] if r not in res.boards[:SHOWN]]
        for r in picks:
            pos = graph.position(int(r), "S")
            ok, why = replay_check(table, pos) if rule != "split" else (True, "")
            line = table.principal_variation(pos)
            shown.append(str(pos))
            evidence.append(f"  {pos}" + (f"   (replayed: {why})" if why else ""))
            evidence.extend(diagram(pos, indent="    ").splitlines())
            lead, cyc = optimal_cycle(table, pos)
            reach_note = " (reachable from the start)" if r in res.reachable else ""
            evidence.append(
                f"    best play{reach_note}: {line.end} after {len(line.plies)} plies"
                + (f", a {cyc.length}-ply cycle entered after {lead.length} plies: " + " ".join(cyc.moves) if cyc else "")
            )
            if not ok:
                evidence.append(f"    replay disagrees: {why}")
        figures[rule]["smallest"] = shown
        if res.boards.size:
            found_rules.append(rule)
    if len(found_rules) == len(REPETITION_RULES):
        status, summary = "verified", "positions where capturing loses and best play repeats exist under every rule"
    elif found_rules:
        status = "undetermined"
        summary = f"such positions exist under {', '.join(found_rules)} only; the diagram's rule is unknown"
    else:
        status, summary = "refuted", "no position fits the caption under any rule"
    return ClaimResult(status, summary, evidence, figures)


def solved_by_computer() -> ClaimResult:
    from gamesolver.games.unee.notation import start_position

    evidence = []
    figures: dict[str, Any] = {}
    start = start_position(DEFAULT)
    total_seconds = 0.0
    for rule in REPETITION_RULES:
        table = solve(rule)
        created = table.table.header.get("created", {})
        seconds = float(created.get("seconds") or 0.0)
        total_seconds += seconds
        if rule == "uncounted":
            v = table.probe_value(start)
            rem, cyc = table.probe_remoteness(start)
            text = f"value {v:+d} (draw), best play repeats after {rem} plies" if cyc else f"value {v:+d}"
            figures[rule] = {"value": v, "remoteness": rem, "cycling": cyc}
        elif rule == "draw":
            o = table.probe_value(start, 0)
            text = {1: "South wins", 0: "draw", -1: "North wins"}[o]
            figures[rule] = {"outcome": o}
        else:
            lo, hi = table.probe_bounds(start)
            text = f"value between {lo:+d} and {hi:+d} (certified bounds; {table.table.meta.get('exact_share', 0):.1%} of boards exact)"
            figures[rule] = {"lower": lo, "upper": hi}
        figures[rule]["solve_seconds"] = seconds
        evidence.append(f"[{rule}] start: {text}; whole space solved in {seconds:.2f} s on {created.get('host', '?')}")
    return ClaimResult(
        "verified",
        f"all 5,245,786 boards solved under the three rules in {total_seconds:.1f} s in total on this machine",
        evidence,
        figures,
    )
