"""Slow, exact reference solver for RoyalUr's rule sets with few pieces (pure Python + numpy).

Value iteration in float64 over the mover-relative states of ``games.ur.royal``, one tier group
at a time from the last (most pieces borne off) to the first, as the engine must do it. The
engine's kernels are tested against it; it is far too slow for the full games.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from gamesolver.games.ur import royal, royal_encoding

WIN, SAME, SWAP = 0, 1, 2  # a move's value: 1, the successor's value, or 1 minus it


@dataclass
class Solution:
    values: np.ndarray  # P(the side to move wins), before rolling, indexed by rank
    sweeps: int  # full passes over the tier groups, summed
    encoding: royal_encoding.Encoding


def _outcome_arrays(enc: royal_encoding.Encoding, ranks: range | np.ndarray):
    """Flat arrays of every (state, roll) choice and its moves, for one group of states."""
    rules = enc.rules
    kind, succ, seg_start, seg_prob, seg_state = [], [], [], [], []
    for local, r in enumerate(ranks):
        st = enc.unrank(int(r))
        for _roll, p, ms in royal.outcomes(st, rules):
            seg_start.append(len(kind))
            seg_prob.append(float(p))
            seg_state.append(local)
            if not ms:
                kind.append(SWAP)
                succ.append(enc.rank(st.swapped()))
                continue
            for m in ms:
                if m.win:
                    kind.append(WIN)
                    succ.append(0)
                else:
                    kind.append(SAME if m.extra_roll else SWAP)
                    succ.append(enc.rank(m.after))
    return (np.array(kind, np.int8), np.array(succ, np.int64), np.array(seg_start, np.int64),
            np.array(seg_prob), np.array(seg_state, np.int64))


def solve(rules: royal.RuleSet, tol: float = 1e-15, max_sweeps: int = 100_000) -> Solution:
    """Exact values (to ``tol``) of every state: tiers last-first, Jacobi sweeps inside a group."""
    enc = royal_encoding.encoding(rules)
    v = np.zeros(enc.size)
    sweeps = 0
    for group in enc.tier_groups_last_first():
        ranks = np.arange(enc.group_range(group).start, enc.group_range(group).stop)
        kind, succ, seg_start, seg_prob, seg_state = _outcome_arrays(enc, ranks)
        for _ in range(max_sweeps):
            sweeps += 1
            term = np.where(kind == WIN, 1.0, np.where(kind == SAME, v[succ], 1.0 - v[succ]))
            best = np.maximum.reduceat(term, seg_start)
            new = np.bincount(seg_state, weights=seg_prob * best, minlength=len(ranks))
            change = np.max(np.abs(new - v[ranks])) if len(ranks) else 0.0
            v[ranks] = new
            if change <= tol:
                break
        else:
            raise RuntimeError(f"tier group {group} did not reach {tol} in {max_sweeps} sweeps")
    return Solution(v, sweeps, enc)


def random_position(rules: royal.RuleSet, rng: random.Random) -> royal.Position:
    """Each piece independently in hand, borne off or on a random tile of its path, with odds
    drawn afresh for each position so that early, middle and end games all occur (retried until
    no tile is held twice and nobody has won)."""
    n = rules.pieces
    while True:
        w_hand, w_scored, w_board = rng.random(), rng.random(), rng.random() + 0.2
        p_hand = w_hand / (w_hand + w_scored + w_board)
        p_scored = p_hand + w_scored / (w_hand + w_scored + w_board)
        taken: set[str] = set()
        sides = []
        ok = True
        for side in ("L", "D"):
            path = rules.path_of(side)
            hand = scored = 0
            on: set[int] = set()
            for _ in range(n):
                u = rng.random()
                if u < p_hand:
                    hand += 1
                elif u < p_scored:
                    scored += 1
                else:
                    i = rng.randrange(rules.length)
                    if i in on or path[i] in taken:
                        ok = False
                        break
                    on.add(i)
                    taken.add(path[i])
            if not ok or scored == n:
                ok = False
                break
            sides.append(royal.Side(hand, frozenset(on), scored))
        if ok:
            return royal.Position(sides[0], sides[1], rng.choice("LD"))
