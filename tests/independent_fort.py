"""A second, independent solver of the fort rules, written from docs/rules.md (section 2, and the
readings docs/ur.md lists) and nothing of the engine's code: positions as two sets of tiles, moves
found by walking the board step by step, values by plain float64 value iteration from 0.

It is slow and small on purpose (an 8-tile board, a few pieces): its only job is to be obviously
right, so that the engine's proven intervals can be held against it on every state.

``variant`` switches one rule off on purpose ("no-fort-roll": entering a fort gives no extra roll;
"captures-stop-always": holding both Earth forts does not let a capturing piece go on; "no-ishtar":
holding Ishtar protects no fort), so the test can show that the check fails when the rules differ.
"""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# the dice as rules.md gives them: two dice, each blank 1/2, gold 1/4, silver 1/4
FACE = {"blank": 0.5, "gold": 0.25, "silver": 0.25}
# per roll: steps in all, the colour a piece may be brought onto instead, Heaven's longer move
ROLLS = {
    "blank+blank": (0, "adjacent", 0),
    "blank+gold": (1, None, 0),
    "blank+silver": (1, None, 0),
    "gold+silver": (2, "royal", 0),
    "gold+gold": (2, "marduk", 3),
    "silver+silver": (2, "ishtar", 3),
}


def roll_probability(name: str) -> float:
    a, b = name.split("+")
    return FACE[a] * FACE[b] * (1 if a == b else 2)


@dataclass(frozen=True)
class Board:
    names: tuple[str, ...]
    neighbours: tuple[frozenset[int], ...]
    forts: frozenset[int]
    earth_forts: frozenset[int]
    heaven_forts: frozenset[int]
    roles: tuple[frozenset[str], ...]

    @classmethod
    def read(cls, path: str | Path) -> "Board":
        tiles = json.loads(Path(path).read_text())["tiles"]
        names = tuple(t["name"] for t in tiles)
        at = {n: i for i, n in enumerate(names)}
        roles = tuple(frozenset(t["roles"]) for t in tiles)
        forts = frozenset(i for i, r in enumerate(roles) if "fort" in r)
        return cls(names, tuple(frozenset(at[n] for n in t["neighbours"]) for t in tiles), forts,
                   frozenset(i for i in forts if tiles[i]["section"] == "earth"),
                   frozenset(i for i in forts if tiles[i]["section"] == "heaven"), roles)

    def with_role(self, role: str) -> frozenset[int]:
        return frozenset(i for i, r in enumerate(self.roles) if role in r)


class Rules:
    def __init__(self, board: Board, pieces: int, variant: str = "") -> None:
        self.board, self.pieces, self.variant = board, pieces, variant
        (self.entry,) = board.with_role("entry")
        (self.ishtar,) = board.with_role("ishtar")

    def won(self, mine: frozenset[int]) -> bool:
        return self.board.forts <= mine

    # -- one action -------------------------------------------------------------------------
    def step(self, mine: frozenset[int], theirs: frozenset[int], at: int, to: int):
        """One step of the piece on ``at`` to the neighbour ``to``: None if not allowed, else
        (mine, theirs, captured)."""
        if to in mine:
            return None
        captured = to in theirs
        if captured:
            if self.ishtar in theirs and to in self.board.forts and self.variant != "no-ishtar":  # protected now
                return None
            theirs = theirs - {to}
        return (mine - {at}) | {to}, theirs, captured

    def walks(self, mine, theirs, start, longest, go_on_after_capture=True):
        """Every end of one piece's walk from ``start`` of 1..longest steps: (mine, theirs,
        entered a fort, stopped by a capture with steps left)."""
        out = []
        if longest < 1:
            return out

        def go(m, t, at, taken, fort):
            for to in self.board.neighbours[at]:
                s = self.step(m, t, at, to)
                if s is None:
                    continue
                m2, t2, captured = s
                f = fort or to in self.board.forts
                if to != start:
                    out.append((m2, t2, f, captured and taken + 1 < longest))
                if taken + 1 == longest:
                    continue
                if captured:
                    earth = self.board.earth_forts <= m2 and self.variant != "captures-stop-always"
                    if not (earth and go_on_after_capture):
                        continue
                go(m2, t2, to, taken + 1, f)

        go(mine, theirs, start, 0, False)
        return out

    def actions(self, mine: frozenset[int], theirs: frozenset[int], roll: str):
        """Every result of an action for ``roll``: (mine, theirs, another roll)."""
        steps, colour, heaven = ROLLS[roll]
        out = set()
        pool = self.pieces - len(mine)
        if pool > 0:  # bring a piece in: onto the Entrance, or onto a tile the roll names
            e = self.entry
            if e not in mine and not (e in theirs and len(theirs) == 1):
                out.add((mine | {e}, theirs - {e}, False))
            if colour == "adjacent":
                spots = {u for p in mine for u in self.board.neighbours[p]}
            elif colour is not None:
                spots = set(self.board.with_role(colour))
            else:
                spots = set()
            for u in spots - mine - theirs:
                out.add((mine | {u}, theirs, False))
        fort_roll = self.variant != "no-fort-roll"
        for p in mine:
            for m, t, fort, _ in self.walks(mine, theirs, p, steps):
                out.add((m, t, fort and fort_roll))
        if steps == 2:  # two pieces one step each, either first
            for p, q in itertools.permutations(mine, 2):
                for to in self.board.neighbours[p]:
                    s = self.step(mine, theirs, p, to)
                    if s is None:
                        continue
                    m1, t1, _ = s
                    for to2 in self.board.neighbours[q]:
                        s2 = self.step(m1, t1, q, to2)
                        if s2 is not None:
                            fort = to in self.board.forts or to2 in self.board.forts
                            out.add((s2[0], s2[1], fort and fort_roll))
        if heaven and self.board.heaven_forts <= mine:  # one piece up to three steps
            for p in mine:
                for m, t, fort, _ in self.walks(mine, theirs, p, heaven):
                    out.add((m, t, fort and fort_roll))
        return out


def all_states(rules: Rules):
    """Every placement of up to ``pieces`` pieces a side on distinct tiles where nobody has won."""
    n = len(rules.board.names)
    for a in range(rules.pieces + 1):
        for mine in itertools.combinations(range(n), a):
            rest = [i for i in range(n) if i not in mine]
            for b in range(rules.pieces + 1):
                for theirs in itertools.combinations(rest, b):
                    m, t = frozenset(mine), frozenset(theirs)
                    if not (rules.won(m) or rules.won(t)):
                        yield m, t


def solve(rules: Rules, tolerance: float = 1e-12, max_sweeps: int = 1_000_000) -> dict:
    """V[(mine, theirs)] = P(win) - P(loss) for the side to move before rolling, endless play 0:
    plain value iteration from 0 (every value from the last sweep's, in numpy) until no value
    changes by ``tolerance``. A roll with no action passes the turn."""
    states = list(all_states(rules))
    index = {s: i for i, s in enumerate(states)}
    owner, prob, starts, target, sign = [], [], [], [], []
    for i, (mine, theirs) in enumerate(states):
        for roll in ROLLS:
            owner.append(i)
            prob.append(roll_probability(roll))
            starts.append(len(target))
            acts = rules.actions(mine, theirs, roll)
            if not acts:  # the turn passes
                target.append(index[(theirs, mine)])
                sign.append(-1.0)
            for m, t, again in acts:
                if rules.won(m):
                    target.append(-1)
                    sign.append(1.0)
                else:
                    target.append(index[(m, t)] if again else index[(t, m)])
                    sign.append(1.0 if again else -1.0)
    owner_a, prob_a, starts_a = np.array(owner), np.array(prob), np.array(starts)
    target_a, sign_a = np.array(target), np.array(sign)
    win = target_a < 0
    target_a[win] = 0
    V = np.zeros(len(states) + 1)
    for _ in range(max_sweeps):
        worth = np.where(win, 1.0, sign_a * V[target_a])
        new = np.bincount(owner_a, weights=prob_a * np.maximum.reduceat(worth, starts_a), minlength=len(states))
        change = float(np.max(np.abs(new - V[:-1])))
        V[:-1] = new
        if change < tolerance:
            break
    return {s: float(V[i]) for i, s in enumerate(states)}
