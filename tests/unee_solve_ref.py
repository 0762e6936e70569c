"""Slow, obvious Python references for the Ünee solvers (tests only).

They work on a plain dict graph {board: [(captured, successor board)]} built with the
ball-by-ball sowing reference, straight from the definitions, without tiers or buckets.
"""
from __future__ import annotations

from tests.unee_ref import all_boards, sow_ball_by_ball


def plain_graph(holes_per_row, max_balls, skip_origin=False, capture_both=False):
    g = {}
    for board in all_boards(2 * holes_per_row, max_balls):
        moves = []
        for h in range(holes_per_row):
            if board[h]:
                nxt, cap = sow_ball_by_ball(board, h, skip_origin, capture_both)
                moves.append((cap, tuple(nxt)))
        g[tuple(board)] = moves
    return g


def uncounted_values(g):
    """V(x) = best future difference, endless play worth 0: for each t >= 1 the sets
    'mover forces >= t' and 'mover held to <= -t' as least fixed points, by plain iteration."""
    bound = max(sum(b) for b in g) + 4

    def term(x):
        return -sum(x)

    value = {x: 0 for x in g}
    # payoffs across a capture need the successor's final value, so go by balls on the board
    for s in sorted({sum(x) for x in g}):
        layer = [x for x in g if sum(x) == s]
        for t in range(1, bound + 1):
            win, lose = set(), set()
            changed = True
            while changed:
                changed = False
                for x in layer:
                    moves = g[x]
                    if not moves:
                        w, l = term(x) >= t, term(x) <= -t
                    else:
                        w = any((y in lose) if cap == 0 and sum(y) == s else cap - value[y] >= t for cap, y in moves)
                        l = all((y in win) if cap == 0 and sum(y) == s else cap - value[y] <= -t for cap, y in moves)
                    if w and x not in win:
                        win.add(x)
                        changed = True
                    if l and x not in lose:
                        lose.add(x)
                        changed = True
            for x in win:
                value[x] = t
            for x in lose:
                value[x] = -t
    return value


def termination_thresholds(g):
    """Draw rule: W(x,u) 'mover forces a repetition-free end with future >= u' and
    L(x,u) 'opponent forces one with the mover's future <= -u', least fixed point over all
    (state, u) at once. Returns {x: (a, b)} with a/b the largest such u or None."""
    m = max(sum(b) for b in g) + 8
    us = range(-m, m + 1)

    def clamp(u):
        return max(-m, min(m, u))

    win = {(x, u): False for x in g for u in us}
    lose = dict(win)
    changed = True
    while changed:
        changed = False
        for x, moves in g.items():
            for u in us:
                if not moves:
                    w, l = -sum(x) >= u, -sum(x) <= -u
                else:
                    w = any(u - cap <= m and lose[(y, clamp(u - cap))] for cap, y in moves)
                    l = all(u + cap <= m and win[(y, clamp(u + cap))] for cap, y in moves)
                if w and not win[(x, u)]:
                    win[(x, u)] = True
                    changed = True
                if l and not lose[(x, u)]:
                    lose[(x, u)] = True
                    changed = True
    out = {}
    for x in g:
        a = max((u for u in us if win[(x, u)]), default=None)
        b = max((u for u in us if lose[(x, u)]), default=None)
        out[x] = (a, b)
    return out, m
