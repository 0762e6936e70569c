"""A slow, obvious reference for Ur's rules and values, independent of engine.py and _ur.pyx.

Moves are found by trying every sequence of single steps (any piece, any neighbour) up to the
roll's budget and then keeping the sequences the rules allow; values by plain Jacobi value
iteration over a dictionary of states. The tests in the other test_ur_* files compare the
Cython kernel and the Python engine with this module.
"""
from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np

from gamesolver.games.ur.rules import Board, Roll, UrOptions

Outcome = tuple[frozenset, frozenset, int]  # flag: 0 turn passes, 1 extra turn, 2 win, 3 pass


def ref_outcomes(opts: UrOptions, mine: frozenset, theirs: frozenset, roll: Roll) -> set[Outcome]:
    b: Board = opts.board
    forts = {i for i in range(b.size) if "fort" in b.roles[i]}
    earth = {i for i in forts if b.sections[i] == "earth"}
    heaven = {i for i in forts if b.sections[i] == "heaven"}
    ishtar = {i for i in range(b.size) if "ishtar" in b.roles[i]}
    entry = next(i for i in range(b.size) if "entry" in b.roles[i])
    out: set[Outcome] = set()

    def add(m: frozenset, t: frozenset, fort: bool) -> None:
        out.add((m, t, 2 if forts <= m else (1 if fort else 0)))

    have_pool = len(mine) < opts.pieces
    empty = set(range(b.size)) - mine - theirs
    if have_pool and entry not in mine:
        if entry not in theirs or len(theirs) >= 2:
            add(mine | {entry}, theirs - {entry}, False)
    if have_pool and roll.spawn == "adjacent":
        for t in empty:
            if any(t in b.neighbours[p] for p in mine):
                add(mine | {t}, theirs, False)
    elif have_pool and roll.spawn:
        for t in empty:
            if roll.spawn in b.roles[t]:
                add(mine | {t}, theirs, False)

    budget = roll.steps
    if roll.heaven_steps and heaven <= mine:
        budget = max(budget, roll.heaven_steps)

    # sequences of steps: each item (piece id, from, to); pieces are named by their start tile
    def extend(seq, m, t, where, stopped):
        yield seq, m, t, where
        if len(seq) == budget:
            return
        for pid, here in where.items():
            for to in b.neighbours[here]:
                if to in m:
                    continue
                if to in t and to in forts and (ishtar & t):
                    continue
                if pid in stopped:
                    continue
                cap = to in t
                m2, t2 = (m - {here}) | {to}, t - {to}
                w2 = dict(where)
                w2[pid] = to
                st2 = set(stopped)
                if cap and not earth <= m2:
                    st2.add(pid)
                yield from extend(seq + [(pid, here, to)], m2, t2, w2, frozenset(st2))

    start_where = {p: p for p in mine}
    for seq, m, t, where in extend([], mine, theirs, start_where, frozenset()):
        if not seq:
            continue
        pids = [s[0] for s in seq]
        groups = [pids[0]] + [p for i, p in enumerate(pids[1:], 1) if p != pids[i - 1]]
        if len(set(groups)) != len(groups) or len(groups) > 2:
            continue  # at most two pieces, and a piece may not come back after another moved
        if len(groups) == 2:
            if roll.steps < 2 or len(seq) != 2:
                continue  # two pieces: only with a two-step roll, one step each
        else:
            n = len(seq)
            if n > roll.steps and not (roll.heaven_steps and heaven <= mine and n <= roll.heaven_steps):
                continue
            if where[pids[0]] == pids[0]:
                continue  # a move may not end where it started
        add(m, t, any(s[2] in forts for s in seq))
    if not out:
        out.add((mine, theirs, 3))
    return out


def all_states(n: int, k: int) -> list[tuple[frozenset, frozenset]]:
    states = []
    for a in range(k + 1):
        for ms in combinations(range(n), a):
            rest = [t for t in range(n) if t not in ms]
            for b in range(k + 1):
                for os_ in combinations(rest, b):
                    states.append((frozenset(ms), frozenset(os_)))
    return states


def state_total(n: int, k: int) -> int:
    return sum(comb(n, a) * comb(n - a, b) for a in range(k + 1) for b in range(k + 1) if a + b <= n)


def ref_values(opts: UrOptions, tolerance: float = 1e-9, max_sweeps: int = 100_000,
               discounts: tuple[float, ...] = (1.0,)) -> dict:
    """Jacobi value iteration in float64 over a dict of states: V = P(win) - P(loss).

    With ``discounts``, one stage per discount (each from the last stage's values): every value
    reached without winning is multiplied by the discount.
    """
    b = opts.board
    forts = frozenset(i for i in range(b.size) if "fort" in b.roles[i])
    states = all_states(b.size, opts.pieces)
    index = {s: i for i, s in enumerate(states)}
    rows, cols, signs, groups = [], [], [], []  # one group per (state, roll)
    probs = np.array([r.probability for r in opts.dice.rolls])
    fixed = np.full(len(states), np.nan)
    const = []
    g = 0
    for i, (m, t) in enumerate(states):
        if forts <= m:
            fixed[i] = 1.0
        elif forts <= t:
            fixed[i] = -1.0
        for roll in opts.dice.rolls:
            for m2, t2, flag in ref_outcomes(opts, m, t, roll):
                groups.append(g)
                if flag == 2:
                    cols.append(0), signs.append(0.0), const.append(1.0)
                elif flag == 1:
                    cols.append(index[(m2, t2)]), signs.append(1.0), const.append(0.0)
                else:
                    cols.append(index[(t2, m2)]), signs.append(-1.0), const.append(0.0)
            g += 1
    cols_a, signs_a, const_a = np.array(cols), np.array(signs), np.array(const)
    groups_a = np.array(groups)
    starts = np.flatnonzero(np.r_[True, groups_a[1:] != groups_a[:-1]])
    V = np.zeros(len(states))
    nrolls = len(probs)
    for g in discounts:
        for _ in range(max_sweeps):
            vals = g * signs_a * V[cols_a] + const_a
            best = np.maximum.reduceat(vals, starts).reshape(len(states), nrolls)
            new = best @ probs
            new = np.where(np.isnan(fixed), new, fixed)
            delta = np.abs(new - V).max()
            V = new
            if delta < tolerance:
                break
    return {s: V[i] for i, s in enumerate(states)}


# A small board with every role, so that four pieces a side can win and values are not all 0.
#   row 3:  A3 fort   B3 marduk  C3 fort      (heaven)
#   row 2:            B2 ishtar  C2 royal     (earth)
#   row 1:  A1 fort   B1 entry   C1 fort      (earth)
MINI_BOARD = {
    "name": "test board",
    "tiles": [
        {"name": "A1", "at": [0, 1], "section": "earth", "roles": ["fort"], "neighbours": ["B1"]},
        {"name": "B1", "at": [1, 1], "section": "earth", "roles": ["entry"], "neighbours": ["A1", "C1", "B2"]},
        {"name": "C1", "at": [2, 1], "section": "earth", "roles": ["fort"], "neighbours": ["B1", "C2"]},
        {"name": "B2", "at": [1, 2], "section": "earth", "roles": ["ishtar"], "neighbours": ["B1", "C2", "B3"]},
        {"name": "C2", "at": [2, 2], "section": "earth", "roles": ["royal"], "neighbours": ["C1", "B2", "C3"]},
        {"name": "A3", "at": [0, 3], "section": "heaven", "roles": ["fort"], "neighbours": ["B3"]},
        {"name": "B3", "at": [1, 3], "section": "bridge", "roles": ["marduk"], "neighbours": ["B2", "A3", "C3"]},
        {"name": "C3", "at": [2, 3], "section": "heaven", "roles": ["fort"], "neighbours": ["C2", "B3"]},
    ],
}


# The same geometry with the entry and Ishtar swapped, and Marduk and the royal tile: here value
# iteration from zero settles on a false solution (see test_ur_endless).
SWAPPED_ROLES = {"B1": ["ishtar"], "B2": ["entry"], "C2": ["marduk"], "B3": ["royal"]}


def mini_options(directory, pieces: int, swapped: bool = False) -> UrOptions:
    import json

    board = json.loads(json.dumps(MINI_BOARD))
    if swapped:
        for tile in board["tiles"]:
            tile["roles"] = SWAPPED_ROLES.get(tile["name"], tile["roles"])
    path = directory / ("swapped_board.json" if swapped else "mini_board.json")
    path.write_text(json.dumps(board))
    return UrOptions(pieces=pieces, board_file=str(path))


def test_reference_counts_states_like_the_formula() -> None:
    assert len(all_states(20, 1)) == state_total(20, 1) == 421
    assert len(all_states(8, 2)) == state_total(8, 2)
