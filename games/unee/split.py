"""The ``split`` repetition rule: certified bounds for every state, exact search for one position.

When a position repeats, each player adds the balls on their own row. Which position repeats
depends on the whole history, so the positional solution only brackets the true value: the
bounds come from ``solver/retrograde/_split.pyx``. ``exact_value`` searches the game tree with its history
(a repetition ends the game at once) for one position, within an effort limit.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from gamesolver.games.unee.graph import StateGraph, terminal_payoffs
from gamesolver.games.unee.rules import UneeOptions
from gamesolver.solver.encoding import _boards
from gamesolver.solver.retrograde import _graph, _split
from gamesolver.solver.errors import InputError
from gamesolver.solver.retrograde.memory import MemoryBounds, MemoryResult, tighten

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


DEFAULT_MEMORY_SOLVES = 200_000


def states_below(graph: StateGraph, lower: np.ndarray, upper: np.ndarray, rank: int) -> np.ndarray:
    """The states reachable from ``rank`` in the layers under its own whose bounds differ (sorted)."""
    if lower[rank] == upper[rank]:
        return np.empty(0, dtype=np.int64)
    states = np.flatnonzero(_graph.reachable_alternating(graph.indptr, graph.succ, rank, 0))
    return states[(states < graph.offsets[graph.layer_of(rank)]) & (lower[states] != upper[states])]


def memory_bounds(graph: StateGraph, lower: np.ndarray, upper: np.ndarray, rank: int, depth: int,
                  max_solves: int | None = DEFAULT_MEMORY_SOLVES, below: np.ndarray | None = None,
                  progress: Callable[[int], None] | None = None,
                  effort: int | None = DEFAULT_EFFORT) -> tuple[MemoryResult, dict[str, int]]:
    """Bounds of a fresh game's split value from ``rank`` with full memory for ``depth`` plies
    (``solver/retrograde/memory.py``), never wider than the positional ``lower``/``upper`` (which
    are not changed). The states ``below`` (by default ``states_below``: every one reachable from
    ``rank`` in the layers under its own) are narrowed first, bottom-up, so that the captures the
    search meets are bounded more tightly; pass an empty array to skip that. ``max_solves`` caps
    the residual layer solves of the whole run and ``effort`` the positions each state's search
    may visit (a stopped state keeps its bounds; ``progress`` ticks once a state below). Returns
    the result and the counts of the layers below."""
    rindptr, pred, _ = graph.reverse()
    bound = np.arange(graph.max_balls + 1, dtype=np.int8)
    lo, hi = lower.copy(), upper.copy()
    search = MemoryBounds(graph.indptr, graph.succ, graph.captured, rindptr, pred, graph.offsets,
                          terminal_payoffs(graph), split_deltas(graph), bound, lo, hi)
    if below is None:
        below = states_below(graph, lower, upper, rank)
    counts = {"states": int(below.size), "solves": 0, "narrowed": 0, "stopped": 0}
    if below.size:
        counts.update(tighten(search, below, depth, max_solves, max_nodes_each=effort, progress=progress))
        search.resolve_tier(graph.layer_of(rank))  # the position's own layer, from the narrowed ones below
    left = None if max_solves is None else max(0, max_solves - counts["solves"])
    return search.interval(rank, depth, left, effort), counts
