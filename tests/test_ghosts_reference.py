"""Slow, obvious references for the Ghosts of Ur tests: enumeration and seeded simulation."""
from __future__ import annotations

import itertools
import random
from fractions import Fraction

SIDES = 100
MODS = {"kish": -20, "akkadian": 0, "ghost": 25, "nanna": 45}
EMMER = 10


def enum_win(net: int, sides: int = SIDES) -> Fraction:
    """Count every pair of die faces: the attacker wins on a strictly higher total."""
    wins = sum(1 for x in range(1, sides + 1) for y in range(1, sides + 1) if x + net > y)
    return Fraction(wins, sides * sides)


def die_faces(anglean: bool = False, reroll: str = "roll"):
    """Every equally likely outcome of the four Ur dice as (total, weight), dice one by one."""
    tips = [1, 1, 0, 0]  # two marked tips of four
    out: dict[int, Fraction] = {}
    if anglean and reroll == "die":
        one = {}
        for t in tips:
            if t:
                one[1] = one.get(1, 0) + Fraction(1, 4)
            else:
                for t2 in tips:
                    one[t2] = one.get(t2, 0) + Fraction(1, 16)
        for combo in itertools.product(one.items(), repeat=4):
            total = sum(k for k, _ in combo)
            w = Fraction(1)
            for _, p in combo:
                w *= p
            out[total] = out.get(total, 0) + w
        return out
    for combo in itertools.product(tips, repeat=4):
        total = sum(combo)
        w = Fraction(1, 256)
        if anglean and reroll == "roll" and total == 0:
            for combo2 in itertools.product(tips, repeat=4):
                t2 = sum(combo2)
                out[t2] = out.get(t2, 0) + w * Fraction(1, 256)
        else:
            out[total] = out.get(total, 0) + w
    return out


def roll_die_sim(rng: random.Random, anglean: bool = False, reroll: str = "roll") -> int:
    marks = [rng.random() < 0.5 for _ in range(4)]
    if anglean and reroll == "die":
        marks = [m or rng.random() < 0.5 for m in marks]
    total = sum(marks)
    if anglean and reroll == "roll" and total == 0:
        total = sum(rng.random() < 0.5 for _ in range(4))
    return total


def fight_sim(rng: random.Random, net: int) -> bool:
    return rng.randint(1, SIDES) + net > rng.randint(1, SIDES)
