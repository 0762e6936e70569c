"""Slow, obvious Python references for the Ünee kernels (used only by the tests)."""
from __future__ import annotations

import itertools
from collections import deque


def sow_ball_by_ball(board, hole, skip_origin=False, capture_both=False, capture_count=4):
    """Drop the balls one at a time; return (successor seen by the opponent, captured)."""
    c = list(board)
    holes = len(c)
    n = holes // 2
    balls = c[hole]
    assert balls > 0
    c[hole] = 0
    pos = hole
    while balls:
        pos = (pos + 1) % holes
        if skip_origin and pos == hole:
            continue
        c[pos] += 1
        balls -= 1
    captured = 0
    if (capture_both or pos < n) and c[pos] == capture_count:
        captured = c[pos]
        c[pos] = 0
    return c[n:] + c[:n], captured


def compositions(total, parts):
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in compositions(total - first, parts - 1):
            yield (first,) + rest


def boards_in_rank_order(holes, max_balls):
    """All boards ordered by balls, then by colex order of the stars-and-bars positions."""
    out = []
    for s in range(max_balls + 1):
        layer = []
        for c in compositions(s, holes):
            bars = tuple(sum(c[: i + 1]) + i for i in range(holes - 1))
            layer.append((tuple(reversed(bars)), c))
        layer.sort()
        out.extend(c for _, c in layer)
    return out


def graph_by_bfs(start_board, skip_origin=False, capture_both=False):
    """Reachable absolute positions (board tuple, side) and their moves, by plain BFS."""
    n = len(start_board) // 2
    seen = {(tuple(start_board), 0)}
    edges = {}
    queue = deque(seen)
    while queue:
        board, side = queue.popleft()
        out = []
        for hole in range(n):
            if board[hole]:
                nxt, cap = sow_ball_by_ball(board, hole, skip_origin, capture_both)
                out.append((hole, (tuple(nxt), 1 - side), cap))
                if (tuple(nxt), 1 - side) not in seen:
                    seen.add((tuple(nxt), 1 - side))
                    queue.append((tuple(nxt), 1 - side))
        edges[(board, side)] = out
    return edges


def all_boards(holes, max_balls):
    for s in range(max_balls + 1):
        yield from compositions(s, holes)


OPTION_COMBOS = list(itertools.product([False, True], [False, True]))
