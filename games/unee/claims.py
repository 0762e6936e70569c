"""Historical claims about Ünee Tugalluulax, each checked against the whole state space.

- Repetitions exist (Eichler, June 2009): the shortest game from the start that repeats.
- "Capturing loses!" (Eichler's diagram, ball counts lost): every position that fits the
  caption, under each repetition rule, and a checker for a position a user enters.
- "Games usually take more than 150 moves": every reading side by side (plies or moves of
  each player; random or best play), the verdict for the reading the page most plausibly means.
Each check takes the variant as keyword options, so the registry's options are what it runs.

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

from dataclasses import dataclass
from typing import Any

import numpy as np

from gamesolver.games.claims import ClaimResult
from gamesolver.games.unee.graph import StateGraph, build_graph
from gamesolver.games.unee.notation import Position, diagram
from gamesolver.games.unee.rules import DEFAULT, REPETITION_RULES, UneeOptions
from gamesolver.games.unee.solution import NEVER, UneeTable, solve
from gamesolver.games.unee.cycles import optimal_cycle, position_of, shortest_repetition_game
from gamesolver.games.unee.split import EffortLimitReached, exact_value
from gamesolver.games.unee.lengths import CLAIM_GAMES, DEFAULT_SEED, HISTOGRAM_NAME, SCENARIOS, histogram, length_statistics, optimal_mask, wilson

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
            assert m.outcome is not None
            verdict = {1: "wins", 0: "draws", -1: "loses"}[m.outcome]
        elif m.lower is not None and m.upper is not None and m.lower != m.upper:
            if captured + m.upper < 0:
                verdict = "loses"
            elif captured + m.lower > 0:
                verdict = "wins"
            else:
                verdict = "undetermined by the bounds"
        else:
            exact = m.value if m.value is not None else m.lower
            assert exact is not None
            v = captured + exact
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


def _variant(holes_per_row: int, balls_per_hole: int, skip_origin: bool, capture_rows: str) -> UneeOptions:
    return UneeOptions(holes_per_row, balls_per_hole, skip_origin, capture_rows)


def repetitions_exist(holes_per_row: int = 3, balls_per_hole: int = 6, skip_origin: bool = False,
                      capture_rows: str = "own") -> ClaimResult:
    """Can a game from the start repeat a position? The shortest such game, or none."""
    options = _variant(holes_per_row, balls_per_hole, skip_origin, capture_rows)
    graph = build_graph(options)
    found = shortest_repetition_game(graph)
    if found is None:
        return ClaimResult("refuted", "no position reachable from the start can repeat",
                           [f"variant: {options.as_dict()}"], {"plies": None})
    nodes, first = found
    positions = [position_of(graph, v) for v in nodes]
    plies = len(nodes) - 1
    evidence = [f"shortest game from the start that repeats: {plies} plies; the position of ply {first} "
                f"({positions[first]}) comes back at ply {plies}"]
    details = [f"ply {i:>2}: {p}" for i, p in enumerate(positions)]
    return ClaimResult(
        "verified",
        f"positions repeat in games from the start; the shortest such game has {plies} plies",
        evidence,
        {"plies": plies, "repeated_ply": first, "game": [str(p) for p in positions]},
        details=details,
    )


REPLAY_EFFORT = 200_000  # positions the exact split search may visit per replay (about a second)


def _replay(rule: str, table: UneeTable, graph: StateGraph, pos: Position) -> tuple[str, str]:
    """Play a fitting position out again, independently of the mask that found it: ("ok" |
    "failed" | "not replayed", why)."""
    if rule != "split":
        ok, why = replay_check(table, pos)
        return ("ok" if ok else "failed"), why
    # under split the stored bounds only bracket the value: search the exact history-aware value

    t = table.table
    lower, upper = np.asarray(t["lower"]), np.asarray(t["upper"])
    try:
        value, _ = exact_value(graph, lower, upper, table.rank(pos), effort=REPLAY_EFFORT)
        for m in table.analyze(pos):
            if m.captured:
                after, _ = exact_value(graph, lower, upper, table.rank(m.position), effort=REPLAY_EFFORT)
                if m.captured - after >= 0:
                    return "failed", f"{m.move}: capturing gives {m.captured - after:+d}, not a loss"
    except EffortLimitReached:
        return "not replayed", f"the exact search needs more than {REPLAY_EFFORT:,} positions"
    if value < 0:
        return "failed", f"the exact value is {value:+d}, so best play does not even hold the score"
    return "ok", f"exact search: best play is worth {value:+d}, every capture loses"


def capturing_loses(holes_per_row: int = 3, balls_per_hole: int = 6, skip_origin: bool = False,
                    capture_rows: str = "own",
                    repetition: tuple[str, ...] | list[str] = REPETITION_RULES) -> ClaimResult:
    """Eichler's caption: positions (South to move) where a capture is possible, every capture
    loses against best play, and best play repeats a position. Led by the most convincing one:
    fewest balls, reachable from the start, fitting under as many rules as possible."""
    options = _variant(holes_per_row, balls_per_hole, skip_origin, capture_rows)
    rules = [r for r in repetition]
    for r in rules:
        if r not in REPETITION_RULES:
            raise ValueError(f"unknown repetition rule {r!r}")
    graph = build_graph(options)
    figures: dict[str, Any] = {}
    searches = {}
    counts: list[str] = []
    details: list[str] = []
    for rule in rules:
        res = search_capturing_loses(rule, options)
        searches[rule] = res
        per = {str(k): {"all": v[0], "reachable": v[1]} for k, v in sorted(res.per_balls.items())}
        figures[rule] = {"positions": int(res.boards.size), "reachable": int(res.reachable.size), "per_balls": per}
        counts.append(f"{rule:<9} {res.boards.size:>7,} positions fit, {res.reachable.size:>6,} of them reachable "
                      f"from the start" + (f"; fewest balls {min(res.per_balls)}" if res.per_balls else ""))
        details.append(f"[{rule}] per balls on the board, all (reachable): "
                       + ", ".join(f"{k}: {v[0]:,} ({v[1]:,})" for k, v in sorted(res.per_balls.items())))
    found = [r for r in rules if searches[r].boards.size]
    if not found:
        return ClaimResult("refuted", "no position fits the caption under any repetition rule", counts, figures,
                           details=details)
    # the lead position: reachable first, then fewest balls, then the most rules it fits
    fits_in: dict[int, list[str]] = {}
    for rule in found:
        for b in searches[rule].reachable.tolist():
            fits_in.setdefault(int(b), []).append(rule)
    pool = fits_in or {int(b): [r] for r in found for b in searches[r].boards[:50].tolist()}
    lead = min(pool, key=lambda b: (int(graph.layer_of(b)), -len(pool[b]), b))
    lead_rules = pool[lead]
    pos = graph.position(lead, "S")
    replays = {}
    for rule in lead_rules:
        replays[rule] = _replay(rule, solve(rule, options), graph, pos)
    main_rule = lead_rules[0]
    table = solve(main_rule, options)
    line = table.principal_variation(pos)
    moves = table.analyze(pos)
    caps = [m for m in moves if m.captured]
    lead_in, cyc = optimal_cycle(table, pos)
    reachable = bool(fits_in)
    answer = (
        f"Yes. Positions that fit the caption exist under {', '.join(found)} "
        f"({len(found)} of {len(rules)} rules). The most convincing is {pos} ({graph.layer_of(lead)} balls"
        f"{', reachable from the start' if reachable else ''}; fits under {', '.join(lead_rules)}): South can "
        f"capture with {', '.join(m.move for m in caps)}, but against best play every capture ends behind, "
        f"while the best move ({line.plies[0][0].move if line.plies else '-'}) keeps the score and play runs into "
        f"a repetition after {len(line.plies)} plies"
        + (f" (a {cyc.length}-ply cycle)." if cyc else ".")
    )
    evidence = [answer, ""] + diagram(pos, indent="  ").splitlines() + [""]
    for m in moves:
        if m.value is not None:
            worth = f"worth {m.value:+d} to South"
        elif m.lower is not None:
            worth = f"worth {m.lower:+d}..{m.upper:+d} to South"
        else:
            worth = "?" if m.outcome is None else {1: "South wins", 0: "draw", -1: "South loses"}.get(m.outcome, "?")
        evidence.append(f"  {m.move:<9} {'captures ' + str(m.captured) if m.captured else 'no capture':<11} "
                        f"-> {m.position}   {worth} [{main_rule}]{'  (best)' if m.best else ''}")
    evidence.append("replayed: " + "; ".join(f"[{r}] {ok}: {why}" for r, (ok, why) in replays.items()))
    evidence.append("positions that fit, per repetition rule (South to move):")
    evidence += ["  " + c for c in counts]
    figures["lead"] = {"position": str(pos), "balls": int(graph.layer_of(lead)), "reachable": reachable,
                       "rules": lead_rules, "best_play_plies": len(line.plies),
                       "replayed": {r: ok == "ok" for r, (ok, _) in replays.items()}}
    for rule in found:
        res = searches[rule]
        t = solve(rule, options)
        for r in list(res.boards[:3]) + [x for x in res.reachable[:2] if x not in res.boards[:3]]:
            p = graph.position(int(r), "S")
            ok, why = _replay(rule, t, graph, p)
            details.append(f"[{rule}] {p} ({graph.layer_of(int(r))} balls"
                           f"{', reachable' if r in res.reachable else ''}): {ok} - {why}")
    if not all(ok == "ok" for ok, _ in replays.values()):
        return ClaimResult("undetermined", f"the lead position {pos} fails its replay", evidence, figures,
                           details=details)
    if len(found) == len(rules):
        status, summary = "verified", (f"such positions exist under every rule; the smallest reachable, {pos}, "
                                       f"has {graph.layer_of(lead)} balls")
    else:
        status = "undetermined"
        summary = f"such positions exist under {', '.join(found)} only; the diagram's rule is unknown"
    return ClaimResult(status, summary, evidence, figures, details=details)


def games_over_150_moves(holes_per_row: int = 3, balls_per_hole: int = 6, skip_origin: bool = False,
                         capture_rows: str = "own", moves: int = 150,
                         games: dict[str, int] | None = None, seed: int | None = None,
                         plots_dir: Any = None) -> ClaimResult:
    """"Games usually take more than 150 moves", under every reading side by side.

    Readings: a move is one player's turn (a ply) or a turn of each player (two plies); the
    games are played at random (casual play) or by both sides optimally (uncounted rule).
    "Usually" = more than half, judged by a 99.9 % Wilson interval clear of one half.

    The verdict is for the ply reading, because mancala texts (this page included, "at his turn a
    player distributes ...") count one player's sowing as a move; a real game lies between random
    and best play, so the ply reading is verified only if both agree, refuted if both refute.
    """
    from pathlib import Path


    options = _variant(holes_per_row, balls_per_hole, skip_origin, capture_rows)
    games = dict(CLAIM_GAMES if games is None else games)
    seed = DEFAULT_SEED if seed is None else seed
    graph = build_graph(options)
    mask = optimal_mask(graph, solve("uncounted", options))
    stats = {name: length_statistics(options, name, int(games[name]), seed, threshold=moves, mask=mask)
             for name in SCENARIOS if name in games}
    if not {"random", "optimal"} <= set(stats):
        raise ValueError("games must give counts for the 'random' and 'optimal' scenarios")

    def judge(share: float, n: int) -> tuple[str, float, float]:
        lo, hi = wilson(share, n)
        return ("verified" if lo > 0.5 else "refuted" if hi < 0.5 else "undetermined"), lo, hi

    rows, readings = [], {}
    for unit, attr, limit in (("plies", "share_over", moves), ("moves each", "share_over_each", 2 * moves)):
        for name, s in stats.items():
            share = getattr(s, attr)
            v, lo, hi = judge(share, s.games)
            readings[f"{unit}/{name}"] = {"threshold_plies": limit, "share": share, "interval": [lo, hi],
                                          "games": s.games, "verdict": v}
            rows.append(f"{'> ' + str(moves) + ' ' + unit:<20} {name:<14} {100 * share:5.1f} % "
                        f"(99.9 % {100 * lo:.1f}-{100 * hi:.1f} %) of {s.games:,} games  -> {v}")
    a, b = readings["plies/random"]["verdict"], readings["plies/optimal"]["verdict"]
    status = a if a == b else "undetermined"
    r, o = readings["plies/random"], readings["plies/optimal"]
    summary = (f"counted in plies (the page's sense of a move): {100 * r['share']:.1f} % of random and "
               f"{100 * o['share']:.1f} % of best-play games exceed {moves}; as {moves} moves of each player "
               f"only {100 * readings['moves each/random']['share']:.1f} % / "
               f"{100 * readings['moves each/optimal']['share']:.1f} %")
    evidence = [f"{'reading':<20} {'play':<14} share longer (interval) -> verdict of that reading"] + rows
    evidence += [
        "verdict for the ply reading: mancala texts count one player's sowing as a move, and a real game "
        "lies between random and best play, so the two must agree",
        f"games end at the first repeated position or when the mover has no ball; seed {seed}",
    ]
    evidence += [s.line() for s in stats.values()]
    figures: dict[str, Any] = {"readings": readings, "samples": {n: s.as_dict() for n, s in stats.items()}}
    if plots_dir is not None:
        path = histogram(list(stats.values()), Path(plots_dir) / HISTOGRAM_NAME)
        evidence.append(f"histogram: {path}")
        figures["histogram"] = str(path)
    unc = {"method": f"Wilson 99.9 % intervals of sampled shares (seeded Monte Carlo, seed {seed})",
           "intervals": {k: v["interval"] for k, v in readings.items()}}
    return ClaimResult(status, summary, evidence, figures, uncertainty=unc)
