"""Export a solved Ünee table in the player's notation, streamed chunk by chunk.

Each row is an absolute position (board and side to move) with its value, remoteness (uncounted
rule) or thresholds (draw) or bounds (split), and its best moves named as the player sees them.
"""
from __future__ import annotations

from typing import IO, Any, Iterator

import numpy as np

from gamesolver.games.unee.graph import StateGraph
from gamesolver.games.unee.notation import column_names
from gamesolver.games.unee.solution import NEVER, UneeTable
from gamesolver.solver.encoding import _boards

CHUNK = 1 << 16

COLUMNS = {
    "uncounted": ["position", "side", "balls", "value", "remoteness", "cycling", "best_moves"],
    "draw": ["position", "side", "balls", "a", "b", "even_outcome", "best_moves"],
    "split": ["position", "side", "balls", "lower", "upper", "exact", "best_moves"],
}


def _best_mask(table: UneeTable, graph: StateGraph, ranks: np.ndarray) -> np.ndarray:
    """Bit h set when the mover's relative hole h is a best move (by the rule's own measure)."""
    t = table.table
    mask = np.zeros(ranks.shape[0], dtype=np.uint8)
    owner, edges = graph.edges_of(ranks)
    succ = graph.succ[edges]
    cap = graph.captured[edges].astype(np.int16)
    if table.rule == "uncounted":
        score = cap - t["value"][succ].astype(np.int16)
    elif table.rule == "draw":
        # at an even score so far: the opponent at the successor is behind by the capture
        a, b = t["a"][succ].astype(np.int16), t["b"][succ].astype(np.int16)
        d = -cap
        opp = np.where((a != NEVER) & (d + a > 0), 1, np.where((b != NEVER) & (d - b < 0), -1, 0))
        score = -opp
    else:
        score = cap - t["upper"][succ].astype(np.int16)  # the guaranteed (lower) value of the move
    best = np.full(ranks.shape[0], -1000, dtype=np.int16)
    np.maximum.at(best, owner, score)
    hit = score == best[owner]
    np.bitwise_or.at(mask, owner[hit], (1 << graph.hole[edges][hit].astype(np.uint8)).astype(np.uint8))
    return mask


def rows(table: UneeTable, graph: StateGraph, balls: int | None = None, reachable: bool = False) -> Iterator[list[Any]]:
    """Rows of the export, in rank order, South to move before North for each board."""
    opts = table.options
    n = opts.holes_per_row
    names = column_names(n)
    lo, hi = (0, graph.n_states) if balls is None else (int(graph.offsets[balls]), int(graph.offsets[balls + 1]))
    reach = graph.reachable() if reachable else None
    t = table.table
    for start in range(lo, hi, CHUNK):
        ranks = np.arange(start, min(hi, start + CHUNK), dtype=np.int64)
        boards = _boards.unrank_boards(ranks, opts.holes, opts.max_balls)
        mask = _best_mask(table, graph, ranks)
        cols = {k: np.asarray(t[k][ranks]) for k in t.arrays}
        for j, r in enumerate(ranks):
            mover = [int(c) for c in boards[j, :n]]
            opp = [int(c) for c in boards[j, n:]]
            for side_index, side in enumerate(("S", "N")):
                if reach is not None and not (reach[r] >> side_index) & 1:
                    continue
                if side == "S":
                    north, south = opp, mover[::-1]
                else:
                    north, south = mover, opp[::-1]
                pos = f"{' '.join(map(str, north))} / {' '.join(map(str, south))} {side}"
                best = [
                    f"{side}-{names[n - 1 - h if side == 'S' else h]}" for h in range(n) if (mask[j] >> h) & 1
                ]
                if side == "S":
                    best = best[::-1]
                row: list[Any] = [pos, side, sum(mover) + sum(opp)]
                if table.rule == "uncounted":
                    row += [int(cols["value"][j]), int(cols["remoteness"][j]), int(cols["cycling"][j])]
                elif table.rule == "draw":
                    a, b = int(cols["a"][j]), int(cols["b"][j])
                    even = 1 if a != NEVER and a > 0 else (-1 if b != NEVER and b > 0 else 0)
                    row += ["" if a == NEVER else a, "" if b == NEVER else b, even]
                else:
                    lw, up = int(cols["lower"][j]), int(cols["upper"][j])
                    row += [lw, up, int(lw == up)]
                row.append(" ".join(best))
                yield row


def write_csv(out: IO[str], table: UneeTable, graph: StateGraph, balls: int | None, reachable: bool) -> int:
    import csv

    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS[table.rule])
    count = 0
    for row in rows(table, graph, balls, reachable):
        writer.writerow(row)
        count += 1
    return count


def export_array(table: UneeTable, graph: StateGraph, balls: int | None, reachable: bool) -> np.ndarray:
    """A structured array: north/south rows as drawn, side, balls, the rule's values, best moves."""
    n = table.options.holes_per_row
    cols = COLUMNS[table.rule]
    fields: list[tuple[str, Any, Any]] = [("north", np.int8, (n,)), ("south", np.int8, (n,)), ("side", "U1", ()),
                                          ("balls", np.int8, ())]
    for c in cols[3:-1]:
        fields.append((c, np.int32, ()))
    fields.append(("best_moves", f"U{12 * n}", ()))
    out = []
    for row in rows(table, graph, balls, reachable):
        north_text, _, rest = row[0].partition("/")
        south = [int(x) for x in rest.split()[:-1]]
        north = [int(x) for x in north_text.split()]
        vals = [(-999 if v == "" else int(v)) for v in row[3:-1]]
        out.append((north, south, row[1], row[2], *vals, row[-1]))
    return np.array(out, dtype=[(f[0], f[1], f[2]) if f[2] else (f[0], f[1]) for f in fields])
