"""The mover-relative encoding of RoyalUr's rule sets that tables are indexed by: tiers by pieces
borne off, each a mixed-radix product of colexicographic subset ranks (rank and unrank). Pure
Python, over ``games.ur.royal``'s states: the reference the Cython encoding is checked against.
"""
from __future__ import annotations

import bisect
from functools import lru_cache
from math import comb
from typing import Iterator

from gamesolver.games.ur.royal import RuleSet, Side, State
from gamesolver.solver.errors import InputError


def _colex_rank(items: list[int]) -> int:
    return sum(comb(c, k + 1) for k, c in enumerate(sorted(items)))


def _colex_unrank(rank: int, k: int) -> list[int]:
    out = []
    for size in range(k, 0, -1):
        c = size - 1
        while comb(c + 1, size) <= rank:
            c += 1
        rank -= comb(c, size)
        out.append(c)
    return sorted(out)


class Encoding:
    """Mover-relative states in tiers by (pieces borne off by the mover, by the opponent).

    Only states whose game is not over are ranked (both scores below the piece count). Inside a
    tier, states are grouped by (pieces on the board of each side, of those on the shared tiles);
    a group is a mixed-radix product of colexicographic subset ranks: the mover's shared tiles,
    the opponent's among the shared tiles left, the mover's private tiles, the opponent's.
    Tiers are laid out in solving order (``tier_groups_last_first``), so that every tier group
    is one contiguous rank range (``group_range``) an engine can sweep on its own.
    """

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        n = rules.pieces
        cross = rules.cross
        self.private = [i for i, c in enumerate(cross) if c < 0]
        self.shared = [i for i, c in enumerate(cross) if c >= 0]
        # the opponent's path index -> slot among the shared tiles, as the mover sees them
        self.their_slot = {cross[i]: k for k, i in enumerate(self.shared)}
        self.their_shared = [cross[i] for i in self.shared]
        self.their_private = [j for j in range(rules.length) if j not in self.their_slot]
        self.tiers = [t for group in self.tier_groups_last_first() for t in group]
        self._blocks: dict[tuple[int, int], list[tuple[int, tuple[int, int, int, int]]]] = {}
        self.tier_offset: dict[tuple[int, int], int] = {}
        total = 0
        for t in self.tiers:
            self.tier_offset[t] = total
            blocks = self._layout(*t)
            self._blocks[t] = blocks
            total += self.tier_size(*t)
        self.size = total
        self._tier_starts = [self.tier_offset[t] for t in self.tiers]

    def _block_size(self, bm: int, bo: int, a: int, b: int) -> int:
        p, s = len(self.private), len(self.shared)
        return comb(s, a) * comb(s - a, b) * comb(p, bm - a) * comb(p, bo - b)

    def _layout(self, sm: int, so: int) -> list[tuple[int, tuple[int, int, int, int]]]:
        n = self.rules.pieces
        out = []
        off = 0
        for bm in range(n - sm + 1):
            for bo in range(n - so + 1):
                for a in range(min(bm, len(self.shared)) + 1):
                    for b in range(min(bo, len(self.shared) - a) + 1):
                        size = self._block_size(bm, bo, a, b)
                        if size:
                            out.append((off, (bm, bo, a, b)))
                            off += size
        return out

    def tier_size(self, mover_scored: int, other_scored: int) -> int:
        """States in a tier; also defined for a finished tier (a score equal to the piece count)."""
        return sum(self._block_size(*key) for _, key in self._layout(mover_scored, other_scored))

    def royalur_state_count(self) -> int:
        """States as RoyalUr counts them: light to move, dark has not won (light may have)."""
        n = self.rules.pieces
        return sum(self.tier_size(a, b) for a in range(n + 1) for b in range(n))

    def tier_groups_last_first(self) -> list[list[tuple[int, int]]]:
        """Tiers in the order to solve them. (a, b) and (b, a) reach each other, so they form one
        group; a move only ever raises a score, so a group needs only groups listed before it."""
        n = self.rules.pieces
        out = []
        for lo in range(n - 1, -1, -1):
            for hi in range(n - 1, lo - 1, -1):
                out.append([(lo, hi)] if lo == hi else [(lo, hi), (hi, lo)])
        return out

    def group_range(self, group: list[tuple[int, int]]) -> range:
        """The ranks of one tier group (contiguous by the layout)."""
        first, last = self.tier_range(group[0]), self.tier_range(group[-1])
        return range(first.start, last.stop)

    def tier_range(self, tier: tuple[int, int]) -> range:
        start = self.tier_offset[tier]
        return range(start, start + self.tier_size(*tier))

    def rank(self, state: State) -> int:
        me, them = state.mine, state.theirs
        n = self.rules.pieces
        if me.scored >= n or them.scored >= n:
            raise InputError("a finished game has no rank: one side has borne off every piece")
        my_shared = [k for k, i in enumerate(self.shared) if i in me.path]
        my_private = [self.private.index(i) for i in sorted(me.path) if i not in self.shared]
        their_shared_slots = sorted(self.their_slot[j] for j in them.path if j in self.their_slot)
        their_private = [self.their_private.index(j) for j in sorted(them.path) if j not in self.their_slot]
        a, b = len(my_shared), len(their_shared_slots)
        bm, bo = len(me.path), len(them.path)
        tier = (me.scored, them.scored)
        free = [k for k in range(len(self.shared)) if k not in my_shared]
        their_in_free = [free.index(k) for k in their_shared_slots]
        p, s = len(self.private), len(self.shared)
        idx = _colex_rank(my_shared)
        idx = idx * comb(s - a, b) + _colex_rank(their_in_free)
        idx = idx * comb(p, bm - a) + _colex_rank(my_private)
        idx = idx * comb(p, bo - b) + _colex_rank(their_private)
        block = next(off for off, key in self._blocks[tier] if key == (bm, bo, a, b))
        return self.tier_offset[tier] + block + idx

    def unrank(self, rank: int) -> State:
        if not 0 <= rank < self.size:
            raise InputError(f"rank {rank} is outside 0..{self.size - 1}")
        t = self.tiers[bisect.bisect_right(self._tier_starts, rank) - 1]
        r = rank - self.tier_offset[t]
        blocks = self._blocks[t]
        i = bisect.bisect_right([off for off, _ in blocks], r) - 1
        off, (bm, bo, a, b) = blocks[i]
        r -= off
        p, s = len(self.private), len(self.shared)
        r, their_private = divmod(r, comb(p, bo - b))
        r, my_private = divmod(r, comb(p, bm - a))
        my_shared, their_in_free = divmod(r, comb(s - a, b))
        mine_sh = _colex_unrank(my_shared, a)
        free = [k for k in range(s) if k not in mine_sh]
        theirs_sh = [free[k] for k in _colex_unrank(their_in_free, b)]
        n = self.rules.pieces
        my_path = {self.shared[k] for k in mine_sh} | {self.private[k] for k in _colex_unrank(my_private, bm - a)}
        their_path = {self.their_shared[k] for k in theirs_sh} | {
            self.their_private[k] for k in _colex_unrank(their_private, bo - b)
        }
        sm, so = t
        return State(
            Side(n - sm - bm, frozenset(my_path), sm),
            Side(n - so - bo, frozenset(their_path), so),
        )

    def states(self, tier: tuple[int, int] | None = None) -> Iterator[State]:
        """Every state (of one tier), in rank order."""
        ranks = range(self.size) if tier is None else self.tier_range(tier)
        for r in ranks:
            yield self.unrank(r)


@lru_cache(maxsize=8)
def encoding(rules: RuleSet) -> Encoding:
    return Encoding(rules)
