"""Ur dice, extra turns and journeys against dice-by-dice enumeration and seeded simulation.

Monte Carlo checks use a fixed seed and accept a gap of at most 5 standard errors.
"""
from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from gamesolver.games.ghosts import movement
from gamesolver.solver.errors import InputError
from tests.test_ghosts_reference import die_faces, roll_die_sim

READINGS = [(False, "roll"), (True, "roll"), (True, "die")]


@pytest.mark.parametrize("anglean,reroll", READINGS)
def test_roll_distribution_matches_dice(anglean, reroll):
    dist = movement.ur_roll_distribution(anglean, reroll)
    faces = die_faces(anglean, reroll)
    assert dist == [faces.get(k, 0) for k in range(5)]
    assert sum(dist) == 1


def test_hand_worked_rolls():
    assert movement.ur_roll_distribution() == [Fraction(c, 16) for c in (1, 4, 6, 4, 1)]
    # 'roll' reading: a total of 0 comes back only if the second roll is also 0
    assert movement.ur_roll_distribution(True, "roll")[0] == Fraction(1, 256)
    # 'die' reading: each die shows a mark with chance 3/4
    assert movement.ur_roll_distribution(True, "die")[4] == Fraction(81, 256)
    with pytest.raises(InputError):
        movement.ur_roll_distribution(True, "zeros")


def _turn_enum(s_max: int, faces: dict[int, Fraction]) -> list[Fraction]:
    """Walk every chain of rolls; a chain with n twos moves at least 2n, so this is exact to s_max."""
    out = [Fraction(0)] * (s_max + 1)

    def walk(moved: int, mass: Fraction) -> None:
        for roll, w in faces.items():
            s = moved + roll
            if s > s_max:
                continue
            if roll == 2:
                walk(s, mass * w)
            else:
                out[s] += mass * w

    walk(0, Fraction(1))
    return out


@pytest.mark.parametrize("anglean,reroll", READINGS)
def test_turn_squares_exact(anglean, reroll):
    faces = die_faces(anglean, reroll)
    ref = _turn_enum(14, faces)
    dice = movement.ur_roll_distribution(anglean, reroll)
    assert [movement.turn_squares_pmf(s, dice) for s in range(15)] == ref
    rows, tail = movement.turn_squares(anglean, reroll, tolerance=1e-12)
    assert tail < 1e-12 and rows[-1][2] == 1 - tail
    # Wald: E[squares] = E[roll] / (1 - P(2)); the listed part approaches it from below
    listed = sum(s * p for s, p, _ in rows)
    assert 0 <= movement.turn_mean(dice) - listed < 1e-8


def test_turn_squares_mean_hand_worked():
    assert movement.turn_mean(movement.ur_roll_distribution()) == Fraction(16, 5)


def test_turn_squares_monte_carlo():
    rng = random.Random(11)
    n = 40000
    counts: dict[int, int] = {}
    for _ in range(n):
        s = 0
        while True:
            r = roll_die_sim(rng)
            s += r
            if r != 2:
                break
        counts[s] = counts.get(s, 0) + 1
    rows, _ = movement.turn_squares()
    for s, p, _ in rows[:10]:
        se = math.sqrt(float(p) * (1 - float(p)) / n)
        assert abs(counts.get(s, 0) / n - float(p)) <= 5 * se + 1e-9


def _race_enum(distance: int, t_max: int, faces, count: str) -> list[Fraction]:
    """P(finishing at turn t) for t <= t_max by walking every roll."""
    out = [Fraction(0)] * (t_max + 1)

    def walk(left: int, turns: int, mass: Fraction) -> None:
        for roll, w in faces.items():
            left2 = left - roll
            new_turns = turns + 1 if (count == "rolls" or roll != 2) else turns
            if left2 <= 0:
                # finishing mid-round still uses up the round in progress
                out_t = turns + 1
                if out_t <= t_max:
                    out[out_t] += mass * w
            elif new_turns < t_max:
                walk(left2, new_turns, mass * w)

    walk(distance, 0, Fraction(1))
    return out


@pytest.mark.parametrize("distance,count,anglean,reroll",
                         [(1, "rounds", False, "roll"), (5, "rounds", False, "roll"), (6, "rolls", False, "roll"),
                          (7, "rounds", True, "die"), (4, "rolls", True, "roll")])
def test_race_against_enumeration(distance, count, anglean, reroll):
    rows, tail = movement.race(distance, anglean, reroll, count, tolerance=1e-12)
    # the mean from the linear recursion agrees with the listed distribution
    assert 0 <= movement.race_mean(distance, anglean, reroll, count) - sum(t * p for t, p, _ in rows) < 1e-9
    ref = _race_enum(distance, 4, die_faces(anglean, reroll), count)
    assert [p for _, p, _ in rows[:4]] == ref[1:5]


def test_race_monte_carlo_and_edges():
    rows, tail = movement.race(12)
    rng = random.Random(12)
    n = 20000
    counts: dict[int, int] = {}
    for _ in range(n):
        left, t = 12, 0
        while left > 0:
            t += 1
            while True:
                r = roll_die_sim(rng)
                left -= r
                if r != 2 or left <= 0:
                    break
        counts[t] = counts.get(t, 0) + 1
    for t, p, _ in rows[:8]:
        se = math.sqrt(float(p) * (1 - float(p)) / n)
        assert abs(counts.get(t, 0) / n - float(p)) <= 5 * se + 1e-9
    assert tail < 1e-9 and rows[-1][2] == 1 - tail
    listed = sum(t * p for t, p, _ in rows)
    assert 0 <= movement.race_mean(12) - listed < 1e-6
    assert abs(sum(counts[t] * t for t in counts) / n - float(movement.race_mean(12))) < 0.05
    assert movement.race(0)[0] == [(0, 1, 1)]
    with pytest.raises(InputError):
        movement.race(-1)


def _turn_enum_ambush(s_max: int, faces, clear: Fraction) -> list[Fraction]:
    """Every roll chain, with an Ambush (cleared with chance ``clear``) on each third 2 in a row."""
    out = [Fraction(0)] * (s_max + 1)

    def walk(moved: int, twos: int, mass: Fraction) -> None:
        for roll, w in faces.items():
            if roll != 2:
                if moved + roll <= s_max:
                    out[moved + roll] += mass * w
                continue
            if (twos + 1) % 3 == 0:
                out[moved] += mass * w * (1 - clear)  # Ambush lost: turn over, the 2 not moved
                if moved + 2 <= s_max:
                    walk(moved + 2, twos + 1, mass * w * clear)
            elif moved + 2 <= s_max:
                walk(moved + 2, twos + 1, mass * w)

    walk(0, 0, Fraction(1))
    return out


@pytest.mark.parametrize("clear", [Fraction(0), Fraction(1, 3), Fraction(1)])
def test_ambush_variant_against_enumeration(clear):
    dice = movement.ur_roll_distribution()
    ref = _turn_enum_ambush(16, die_faces(), clear)
    assert [movement.turn_squares_pmf(s, dice, clear) for s in range(17)] == ref
    rows, tail = movement.turn_squares(tolerance=1e-13, ambush_clear=clear)
    assert 0 <= movement.turn_mean(dice, clear) - sum(s * p for s, p, _ in rows) < 1e-9
    if clear == 1:  # an Ambush always cleared is no variant at all
        assert movement.turn_mean(dice, clear) == Fraction(16, 5)
        assert movement.turn_rolls_mean(dice, clear) == movement.turn_rolls_mean(dice)


def test_ambush_variant_monte_carlo():
    clear = Fraction(2, 3)
    dice = movement.ur_roll_distribution()
    rng = random.Random(13)
    n = 40000
    counts: dict[int, int] = {}
    rolls = 0
    for _ in range(n):
        s = twos = 0
        while True:
            r = roll_die_sim(rng)
            rolls += 1
            if r != 2:
                s += r
                break
            twos += 1
            if twos % 3 == 0 and rng.random() >= float(clear):
                break
            s += 2
        counts[s] = counts.get(s, 0) + 1
    for s in range(10):
        p = float(movement.turn_squares_pmf(s, dice, clear))
        se = math.sqrt(p * (1 - p) / n)
        assert abs(counts.get(s, 0) / n - p) <= 5 * se + 1e-9
    assert abs(rolls / n - float(movement.turn_rolls_mean(dice, clear))) < 0.03
    rows, _ = movement.race(9, ambush_clear=clear, tolerance=1e-8)
    assert 0 <= movement.race_mean(9, ambush_clear=clear) - sum(t * p for t, p, _ in rows) < 1e-6
    with pytest.raises(InputError):
        movement.race(9, count="rolls", ambush_clear=clear)
