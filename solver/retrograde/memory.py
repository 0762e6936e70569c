"""Bounds of a first-repetition value with full memory for the first plies.

For games scored by the position that repeats first (``_split.pyx``), the positional bounds
``lower``/``upper`` assume the bounding player plays the same move in a position whatever
happened before. Real play may depend on the path. This module searches the first ``depth``
plies from a position over the actual histories and, at each leaf of that tree, solves the
leaf's tier again as the game that is left: the positions already on the path are sinks worth
what repeating them scores, every other position is open, and the positional relaxation of
that residual game bounds the leaf. Each threshold is a proof: "P gets at least u" holds at a
node of P's if one move proves it, at the opponent's if every move does. Captures (moves to a
lower tier) start a fresh game, read from ``lower``/``upper``.

Sound for every depth (a path's sinks only remove play that cannot happen). With a depth as
long as the longest path without a repeat in the tier, and exact values in the tiers below
(``tighten`` narrows them first, bottom-up), the result is exact. ``depth=0`` is the positional
relaxation again, with the position itself as the one sink.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from gamesolver.solver.retrograde import _split


class SolveBudgetReached(Exception):
    """The search asked for more tier solves, or visited more positions, than it was allowed."""


@dataclass(frozen=True)
class MemoryResult:
    lower: int
    upper: int
    depth: int
    solves: int          # residual tier solves the proofs needed
    complete: bool       # False when a budget stopped a proof (the bounds still hold)
    nodes: int = 0       # positions the proofs visited in the tree over histories


class MemoryBounds:
    """Threshold proofs over histories for one solved graph (mover-relative states, tiers
    bottom-up, moves out of a tier carry ``reward``, ``delta[x]`` = what x's mover scores if x
    repeats, ``terminal[x]`` = the value of a state without moves for its mover)."""

    def __init__(self, indptr: np.ndarray, succ: np.ndarray, reward: np.ndarray, rindptr: np.ndarray,
                 pred: np.ndarray, tiers: np.ndarray, terminal: np.ndarray, delta: np.ndarray,
                 bound: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> None:
        self.indptr, self.succ, self.reward = indptr, succ, reward
        self.rindptr, self.pred = rindptr, pred
        self.tiers, self.terminal, self.delta, self.bound = tiers, terminal, delta, bound
        self.lower, self.upper = lower, upper
        self.solves = self.nodes = 0
        self.max_solves: int | None = None
        self.max_nodes: int | None = None

    def _tier(self, x: int) -> int:
        return int(np.searchsorted(self.tiers, x, side="right")) - 1

    def resolve_tier(self, t: int) -> None:
        """Solve tier t positionally again, in place, from the bounds of the tiers below it."""
        lo, hi = int(self.tiers[t]), int(self.tiers[t + 1])
        _split.split_tiers(self.indptr, self.succ, self.reward, self.rindptr, self.pred,
                           np.array([lo, hi], dtype=np.int64), self.terminal, self.delta, self.bound[t:t + 1],
                           None, (self.lower, self.upper))

    def _leaf(self, x: int, path: set[tuple[int, int]], P: int, u: int) -> np.ndarray:
        """Solve x's tier at threshold u for P with the path's positions as sinks: per node of
        the tier, whether P certainly gets at least u from it."""
        if self.max_solves is not None and self.solves >= self.max_solves:
            raise SolveBudgetReached
        self.solves += 1
        t = self._tier(x)
        lo, hi = int(self.tiers[t]), int(self.tiers[t + 1])
        nodes = np.array([2 * (p - lo) + (side ^ P) for p, side in path], dtype=np.int64)
        values = np.array([int(self.delta[p]) if side == P else -int(self.delta[p]) for p, side in path],
                          dtype=np.int16)
        return _split.tier_wins_with_sinks(
            self.indptr, self.succ, self.reward, self.rindptr, self.pred, lo, hi, self.terminal, self.delta,
            int(self.bound[t]), self.lower, self.upper, nodes, values, u)

    def proves(self, x: int, side: int, path: set[tuple[int, int]], depth: int, P: int, u: int) -> bool:
        """Whether side P certainly gets at least u from now on, at position (x, side) after the
        positions in ``path`` (which holds (x, side) itself). Sides are 0 and 1."""
        self.nodes += 1
        if self.max_nodes is not None and self.nodes > self.max_nodes:
            raise SolveBudgetReached
        a, b = int(self.indptr[x]), int(self.indptr[x + 1])
        sign = 1 if side == P else -1
        if a == b:
            return sign * int(self.terminal[x]) >= u
        mine = side == P
        t = self._tier(x)
        lo, hi = int(self.tiers[t]), int(self.tiers[t + 1])
        wins = self._leaf(x, path, P, u) if depth == 0 else None
        later = []
        for k in range(a, b):
            y, nxt = int(self.succ[k]), 1 - side
            if not lo <= y < hi:
                # a move out of the tier: a fresh game there, P's share from the bounds
                got = sign * int(self.reward[k]) + (int(self.lower[y]) if nxt == P else -int(self.upper[y]))
                ok = got >= u
            elif (y, nxt) in path:
                ok = -sign * int(self.delta[y]) >= u
            elif wins is not None:
                ok = bool(wins[2 * (y - lo) + (nxt ^ P)])
            else:
                # P's positional bound at the child orders the search: likeliest proof first
                hint = int(self.lower[y]) if nxt == P else -int(self.upper[y])
                later.append((-hint if mine else hint, y))
                continue
            if ok == mine:
                return mine
        for _, y in sorted(later):
            path.add((y, 1 - side))
            try:
                ok = self.proves(y, 1 - side, path, depth - 1, P, u)
            finally:
                path.discard((y, 1 - side))
            if ok == mine:
                return mine
        return not mine

    def interval(self, x: int, depth: int, max_solves: int | None = None,
                 max_nodes: int | None = None) -> MemoryResult:
        """The bounds of x's value for its mover, fresh (no history), with full memory for
        ``depth`` plies: raised from the positional lower bound and lowered from the upper one
        one proof at a time, until a proof fails or a budget (tier solves, positions visited)
        is spent."""
        if depth < 0:
            raise ValueError(f"depth must be at least 0, not {depth}")
        self.solves, self.max_solves = 0, max_solves
        self.nodes, self.max_nodes = 0, max_nodes
        lo, hi = int(self.lower[x]), int(self.upper[x])
        complete = True
        try:
            while lo < hi and self.proves(x, 0, {(x, 0)}, depth, 0, lo + 1):
                lo += 1
            while hi > lo and self.proves(x, 0, {(x, 0)}, depth, 1, 1 - hi):
                hi -= 1
        except SolveBudgetReached:
            complete = False
        return MemoryResult(lo, hi, depth, self.solves, complete, self.nodes)


def tighten(search: MemoryBounds, states: np.ndarray, depth: int, max_solves: int | None = None,
            max_nodes_each: int | None = None, progress: Callable[[int], None] | None = None) -> dict[str, int]:
    """Narrow ``search.lower``/``search.upper`` in place, tier by tier from the bottom: each tier
    holding one of ``states`` (sorted ranks) is first solved positionally again from the bounds
    below it (which earlier tiers may have narrowed), then each of its ``states`` whose bounds
    differ gets ``search.interval`` at ``depth``. A state stopped by ``max_nodes_each``, or every
    state once ``max_solves`` is spent, keeps the bounds it has (still sound). Returns counts."""
    s = search
    which = np.searchsorted(s.tiers, states, side="right") - 1
    spent = narrowed = stopped = 0
    for t in np.unique(which):
        s.resolve_tier(int(t))
        for x in states[which == t]:
            x = int(x)
            if progress is not None:
                progress(1)
            if s.lower[x] == s.upper[x]:
                continue
            left = None if max_solves is None else max_solves - spent
            if left is not None and left <= 0:
                stopped += 1
                continue
            r = s.interval(x, depth, left, max_nodes_each)
            spent += r.solves
            stopped += not r.complete
            if (r.lower, r.upper) != (int(s.lower[x]), int(s.upper[x])):
                narrowed += 1
                s.lower[x], s.upper[x] = r.lower, r.upper
    return {"solves": spent, "narrowed": narrowed, "stopped": stopped}
