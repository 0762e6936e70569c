"""The ``split`` repetition rule: certified bounds for every state, exact search for one position.

When a position repeats, each player adds the balls on their own row. Which position repeats
depends on the whole history, so the positional solution only brackets the true value: the
bounds come from ``solver/retrograde/_split.pyx``. ``exact_value`` searches the game tree with its history
(a repetition ends the game at once) for one position, within an effort limit.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from gamesolver.games.unee.graph import StateGraph
from gamesolver.games.unee.rules import UneeOptions
from gamesolver.solver.encoding import _boards
from gamesolver.solver.retrograde import _split
from gamesolver.solver.errors import InputError

DEFAULT_EFFORT = 2_000_000


class EffortLimitReached(InputError):
    """The exact search visited more positions than allowed."""


def split_deltas(graph: StateGraph) -> np.ndarray:
    """For each state: balls in the mover's row minus balls in the opponent's row."""
    return row_differences(graph.options, 0, graph.n_states, graph.max_balls)


def row_differences(options: UneeOptions, start: int, stop: int, max_balls: int) -> np.ndarray:
    """Balls in the mover's row minus balls in the opponent's row, for the boards ranked
    ``start:stop`` (all of them with at most ``max_balls`` balls), unranked a million at a time."""
    n = options.holes_per_row
    out = np.empty(stop - start, dtype=np.int8)
    step = 1 << 20
    for lo in range(0, out.shape[0], step):
        hi = min(out.shape[0], lo + step)
        boards = _boards.unrank_boards(np.arange(start + lo, start + hi), options.holes, max_balls).astype(np.int16)
        out[lo:hi] = boards[:, :n].sum(axis=1) - boards[:, n:].sum(axis=1)
    return out


def split_bounds(
    graph: StateGraph, terminal: np.ndarray, progress: Callable[[int], None] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    rindptr, pred, _ = graph.reverse()
    bound = np.arange(graph.max_balls + 1, dtype=np.int8)  # |value| <= balls on the board
    return _split.split_tiers(
        graph.indptr, graph.succ, graph.captured, rindptr, pred, graph.offsets, terminal, split_deltas(graph), bound,
        progress,
    )


def exact_value(
    graph: StateGraph,
    lower: np.ndarray,
    upper: np.ndarray,
    rank: int,
    effort: int = DEFAULT_EFFORT,
) -> tuple[int, int]:
    """The exact value of a fresh game from ``rank`` under the first-repetition split rule.

    Negamax with alpha-beta over game histories: a move onto a position (board and side to
    move) already on the path ends the game, each side adding its own row. After a capture the
    earlier positions can never recur, so the rest is a fresh game: its value is memoized and,
    where the certified bounds meet, read from them. Returns (value, positions searched);
    raises ``EffortLimitReached`` past ``effort`` positions.
    """
    n = graph.options.holes_per_row
    indptr, succ, captured = graph.indptr, graph.succ, graph.captured
    delta_cache: dict[int, int] = {}
    fresh: dict[int, int] = {}
    count = 0

    def delta(x: int) -> int:
        if x not in delta_cache:
            b = graph.board(x)
            delta_cache[x] = sum(b[:n]) - sum(b[n:])
        return delta_cache[x]

    def fresh_value(x: int) -> int:
        lo, hi = int(lower[x]), int(upper[x])
        if lo == hi:
            return lo
        if x not in fresh:
            fresh[x] = search(x, 0, {(x, 0)}, lo - 1, hi + 1)
        return fresh[x]

    def search(x: int, side: int, path: set[tuple[int, int]], alpha: int, beta: int) -> int:
        nonlocal count
        count += 1
        if count > effort:
            raise EffortLimitReached(
                f"exact search stopped after {effort:,} positions without an answer; "
                f"raise the limit with --effort (the certified bounds still hold)"
            )
        lo, hi = int(indptr[x]), int(indptr[x + 1])
        if lo == hi:
            return -int(graph.layer_of(x))
        best = -1000
        for k in range(lo, hi):
            y = int(succ[k])
            cap = int(captured[k])
            if cap:
                val = cap - fresh_value(y)
            elif (y, 1 - side) in path:
                val = -delta(y)
            else:
                path.add((y, 1 - side))
                val = -search(y, 1 - side, path, -beta, -max(alpha, best))
                path.discard((y, 1 - side))
            if val > best:
                best = val
                if best >= beta:
                    break
        return best

    lo, hi = int(lower[rank]), int(upper[rank])
    if lo == hi:
        return lo, 0
    value = search(rank, 0, {(rank, 0)}, lo - 1, hi + 1)
    return value, count
