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


def split_bounds_reference(g, n):
    """Split rule bounds from the textbook co-Büchi formula W = mu X. nu Y. (Good & Pre(Y)) | Pre(X),
    one threshold at a time, on nodes (board, 0 = P to move / 1 = opponent to move)."""
    L, U = {}, {}

    def delta(x):
        return sum(x[:n]) - sum(x[n:])

    for s in sorted({sum(x) for x in g}):
        layer = [x for x in g if sum(x) == s]
        nodes = [(x, r) for x in layer for r in (0, 1)]
        won = {}
        for u in range(-s + 1, s + 1):
            def fixed(node):
                x, r = node
                if g[x]:
                    return None
                return (-s >= u) if r == 0 else (s >= u)  # no move: all balls go to the opponent

            def pre(node, S):
                f = fixed(node)
                if f is not None:
                    return f
                x, r = node
                inner = [(cap, y) for cap, y in g[x] if cap == 0]
                exits = [(cap, y) for cap, y in g[x] if cap != 0]
                if r == 0:
                    return any(cap - U[y] >= u for cap, y in exits) or any((y, 1) in S for _, y in inner)
                return all(L[y] - cap >= u for cap, y in exits) and all((y, 0) in S for _, y in inner)

            def good(node):
                x, r = node
                return delta(x) >= u if r == 0 else -delta(x) >= u

            X = set()
            while True:
                Y = set(nodes)
                while True:
                    Y2 = {v for v in nodes if (good(v) and pre(v, Y)) or pre(v, X)}
                    if Y2 == Y:
                        break
                    Y = Y2
                if Y == X:
                    break
                X = Y
            won[u] = X
        for x in layer:
            L[x] = max([u for u in range(-s + 1, s + 1) if (x, 0) in won[u]], default=-s)
            lost = [u for u in range(-s + 1, s + 1) if (x, 1) not in won[u]]
            U[x] = 1 - min(lost, default=s + 1)
    return L, U


def first_repetition_value(g, n, x, path=None, fresh=None):
    """The exact split-rule value of a fresh game from x by exhaustive search over histories
    (``fresh``, if given, is a dict that remembers the value of each fresh game after a capture)."""
    if path is None:
        path = [(x, 0)]
    moves = g[x]
    if not moves:
        return -sum(x)
    side = path[-1][1]
    best = None
    for cap, y in moves:
        if cap:
            if fresh is None:
                val = cap - first_repetition_value(g, n, y)
            else:
                if y not in fresh:
                    fresh[y] = first_repetition_value(g, n, y, None, fresh)
                val = cap - fresh[y]
        elif (y, 1 - side) in path:
            val = -(sum(y[:n]) - sum(y[n:]))
        else:
            val = -first_repetition_value(g, n, y, path + [(y, 1 - side)], fresh)
        best = val if best is None else max(best, val)
    return best
