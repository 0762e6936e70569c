"""Combat, equipment, Kish tiles, Ambush, Nanna and AVA defence against enumeration and simulation.

Monte Carlo checks use a fixed seed and accept a gap of at most 5 standard errors.
"""
from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ghosts import combat
from gamesolver.games.ghosts.rules import defender_modifier
from gamesolver.solver.errors import InputError
from tests.test_ghosts_reference import EMMER, MODS, enum_win, fight_sim, roll_die_sim


def within(p_exact, hits: int, n: int) -> bool:
    p = float(p_exact)
    se = math.sqrt(max(p * (1 - p), 1e-12) / n)
    return abs(hits / n - p) <= 5 * se + 1e-12


@given(st.integers(-130, 130), st.integers(1, 12))
@settings(max_examples=150, deadline=None)
def test_closed_form_matches_enumeration_small_dice(net, sides):
    assert combat.win_probability(net, sides) == enum_win(net, sides)


def test_closed_form_matches_enumeration_d100_whole_table():
    for net, p in combat.combat_table():
        assert p == enum_win(net), net
    assert combat.win_probability(-200) == 0 and combat.win_probability(200) == 1


def test_hand_worked_cases():
    # equal modifiers: the attacker needs a strictly higher roll, 4950 of 10000 pairs
    assert combat.win_probability(0) == Fraction(99, 200)
    # one point up: every tie becomes a win, 5050 of 10000
    assert combat.win_probability(1) == Fraction(101, 200)
    # against a Kish (-20) with no bonus the attacker wins when x + 20 > y
    assert combat.win_probability(-defender_modifier("kish")) == enum_win(20)
    assert defender_modifier("ghost", emmer=True) == MODS["ghost"] + EMMER
    with pytest.raises(InputError):
        defender_modifier("dragon")


def test_monte_carlo_combat():
    rng = random.Random(6)
    n = 40000
    for net in (-45, 0, 35):
        hits = sum(fight_sim(rng, net) for _ in range(n))
        assert within(combat.win_probability(net), hits, n)


@given(st.integers(0, 60), st.sampled_from(sorted(MODS)), st.booleans(), st.integers(0, 40))
@settings(max_examples=40, deadline=None)
def test_equipment_plan_against_pairs(bonus, defender, emmer, gear):
    d = MODS[defender] + (EMMER if emmer else 0)
    plan = combat.equipment_plan(bonus, d, gear)
    win = auto = use = hope = 0
    for x in range(1, 101):
        beats_with = [y for y in range(1, 101) if x + bonus + gear > y + d]
        beats_without = [y for y in range(1, 101) if x + bonus > y + d]
        win += len(beats_with)
        if x + bonus + gear > 100 + d:   # attrition: no defender roll can reach it
            auto += 1
        elif not beats_with:
            hope += 1
        elif len(beats_with) > len(beats_without):
            use += 1
    assert plan.win == Fraction(win, 10000)
    assert plan.win == combat.win_probability(bonus + gear - d)
    assert (plan.auto_win, plan.use_cards, plan.hopeless) == (Fraction(auto, 100), Fraction(use, 100), Fraction(hope, 100))


def _clear_enum(k: int, p: Fraction, attempts: int) -> Fraction:
    """P(cleared within ``attempts``) by walking every win/loss sequence."""
    if k == 0:
        return Fraction(1)
    if attempts == 0:
        return Fraction(0)
    return p * _clear_enum(k - 1, p, attempts) + (1 - p) * _clear_enum(k, p, attempts - 1)


def _clear_rounds_iterated(k: int, p: Fraction, dice, rounds: int, extra_after_retreat=True, turns=60) -> list[float]:
    """Turn-by-turn propagation (no closed form for the extra-turn chain), cut after many turns."""
    if k == 0:
        return [1.0] * rounds  # nothing to clear
    # state: (kish left, rounds finished) -> mass, for turns that start a fresh round or continue one
    fresh = {(k, 0): 1.0}
    cont: dict = {}
    done = [0.0] * (rounds + 1)
    for _ in range(turns):
        nfresh: dict = {}
        ncont: dict = {}
        for (left, r), mass in list(fresh.items()) + list(cont.items()):
            if r >= rounds:
                continue
            for roll, pr in enumerate(dice):
                pr = float(pr)
                if roll == 0:
                    nfresh[(left, r + 1)] = nfresh.get((left, r + 1), 0) + mass * pr
                    continue
                done[r + 1] += mass * pr * float(p) ** left
                for w in range(left):
                    m = mass * pr * float(p) ** w * float(1 - p)
                    key_same = (left - w, r)
                    if roll == 2 and extra_after_retreat:
                        ncont[key_same] = ncont.get(key_same, 0) + m
                    else:
                        nfresh[(left - w, r + 1)] = nfresh.get((left - w, r + 1), 0) + m
        fresh, cont = nfresh, ncont
    return [sum(done[1 : r + 1]) for r in range(1, rounds + 1)]


@pytest.mark.parametrize("kish,bonus,emmer", [(1, 0, False), (2, 15, True), (3, 30, False), (0, 0, False)])
def test_clear_tile_by_attempts_and_rounds(kish, bonus, emmer):
    res = combat.clear_tile(kish, bonus, emmer, max_steps=4)
    p = enum_win(bonus - MODS["kish"] - (EMMER if emmer else 0))
    assert res.p_fight == p
    assert res.one_attempt == p**kish
    for t, _, by in res.by_attempts:
        assert by == _clear_enum(kish, p, t)
    from gamesolver.games.ghosts.movement import ur_roll_distribution

    for extra in (True, False):
        res2 = combat.clear_tile(kish, bonus, emmer, 4, extra_after_retreat=extra)
        ref = _clear_rounds_iterated(kish, p, ur_roll_distribution(), 4, extra)
        assert [float(r[2]) for r in res2.by_rounds] == pytest.approx(ref, abs=1e-12)


def test_clear_tile_monte_carlo_rounds():
    rng = random.Random(7)
    kish, bonus, emmer = 3, 10, True
    net = bonus - MODS["kish"] - EMMER
    res = combat.clear_tile(kish, bonus, emmer, max_steps=3, anglean=True, reroll="die")
    n = 20000
    by_round = [0, 0, 0]
    for _ in range(n):
        left, r = kish, 0
        while left and r < 3:
            roll = roll_die_sim(rng, True, "die")
            if roll:
                while left and fight_sim(rng, net):
                    left -= 1
            if left and roll == 2:
                continue  # the extra turn stays in this round
            r += 1
        if not left:
            for i in range(r - 1 if r else 0, 3):
                by_round[i] += 1
    for (_, _, exact), hits in zip(res.by_rounds, by_round):
        assert within(exact, hits, n)


def test_ambush_closed_form_and_monte_carlo():
    res = combat.ambush(15)
    p = res.p_fight
    assert res.card == ((1 + p) / 2) ** 4  # binomial theorem over the Ur dice
    rng = random.Random(8)
    n = 30000
    cards = beaten = 0
    for _ in range(n):
        k = roll_die_sim(rng)
        won = 0
        while won < k and fight_sim(rng, 15 - MODS["kish"]):
            won += 1
        cards += won == k
        beaten += won
    assert within(res.card, cards, n)
    assert abs(beaten / n - float(res.expected_kish_beaten)) < 0.03


def test_nanna_against_enumeration():
    p, within_ = combat.nanna(30, 3)
    assert p == enum_win(30 - MODS["nanna"])
    # all 2^3 outcome sequences; success when any fight is won
    for t in range(1, 4):
        fail = (1 - p) ** t
        assert within_[t - 1] == 1 - fail
    with pytest.raises(InputError):
        combat.nanna(0, 0)


@given(st.integers(0, 50), st.integers(0, 50), st.integers(0, 8), st.integers(0, 8), st.integers(0, 3), st.booleans())
@settings(max_examples=40, deadline=None)
def test_defend_table_against_pairs(a, b, stake, prize, cost, emmer):
    rows, summary = combat.defend_table(a, b, stake, prize, cost, emmer)
    d = b + (EMMER if emmer else 0)
    wins = 0
    for row, x in zip(rows, range(1, 101)):
        w = Fraction(sum(1 for y in range(1, 101) if y + d >= x + a), 100)
        assert row.fight_win == w
        fight = w * prize - (1 - w) * stake >= -cost
        assert row.choice == ("fight" if fight else "flee")
        if fight:
            wins += w
    assert summary["p_defender_wins"] == wins / 100
    assert summary["p_fight"] + summary["p_flee"] == 1
