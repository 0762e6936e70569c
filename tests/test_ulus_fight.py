"""Monster fights: exact outcome tables against enumeration of all 256 face sequences with the
rules applied literally, the rulebook's worked examples, and a seeded Monte Carlo simulation."""
from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ulus.fight import FightSetup, fight, hand_to_hand, make_setup, verdict
from gamesolver.games.ulus.shagai import face_probabilities
from gamesolver.solver.errors import InputError


def literal_roll_result(roll: tuple[str, ...], s: FightSetup) -> list[tuple[str, bool, int, Fraction]]:
    """What one roll of four faces leads to: [(outcome, asset won, strength after, weight)]."""
    c = Counter(roll)
    winter = 1 if s.season == "winter" else 0
    power = sum((m + winter) * s.players for m in (s.multiplier, *s.others))

    def duel(total: int) -> tuple[bool, int]:
        return (True, s.strength - total) if s.strength > total else (False, 0)

    if c["G"] >= 3:
        res = []
        for m2 in s.second_multipliers:
            ok, left = duel(power + (m2 + winter) * s.players)
            res.append(("won vs extra monster" if ok else "lost vs extra monster", ok, left,
                        Fraction(1, len(s.second_multipliers))))
        return res
    if len(c) == 4:
        return [("immune", True, s.strength, Fraction(1))]
    if max(c.values()) == 4:
        return [("automatic win", True, s.strength, Fraction(1))]
    ok, left = duel(power)
    return [("won" if ok else "lost", ok, left, Fraction(1))]


def literal_table(s: FightSetup, probs) -> dict[tuple[str, bool, int], Fraction]:
    p = dict(zip("HCSG", probs))
    out: dict[tuple[str, bool, int], Fraction] = defaultdict(Fraction)
    for roll in itertools.product("HCSG", repeat=4):
        w = Fraction(1)
        for f in roll:
            w *= p[f]
        for name, asset, left, share in literal_roll_result(roll, s):
            out[(name, asset, left)] += w * share
    return {k: v for k, v in out.items() if v}


def as_table(choice) -> dict[tuple[str, bool, int], Fraction]:
    return {(o.name, o.asset, o.strength): o.probability for o in choice.outcomes if o.probability}


@settings(max_examples=60, deadline=None)
@given(
    strength=st.integers(0, 45),
    mult=st.integers(1, 5),
    players=st.integers(2, 6),
    season=st.sampled_from(["summer", "autumn", "winter", "spring"]),
    seconds=st.lists(st.integers(1, 5), min_size=0, max_size=3),
    preset=st.sampled_from(["uniform", "gmit-2018", "narrow-10"]),
    others=st.lists(st.integers(1, 4), max_size=1),
)
def test_roll_matches_enumeration(strength, mult, players, season, seconds, preset, others) -> None:
    s = make_setup(strength, mult, players, season, seconds or None, others=others)
    probs = face_probabilities(preset)
    got = fight(s, probs)
    assert as_table(got["roll"]) == literal_table(s, probs)
    assert sum(o.probability for o in got["roll"].outcomes) == 1


def test_rulebook_examples() -> None:
    # three players, strength 14 against a 3X monster: power 9, 5 strength left
    s = make_setup(14, 3, 3, "summer")
    assert s.power == 9
    assert as_table(fight(s, face_probabilities())["fight"]) == {("won", True, 5): 1}
    # a monster of 2X fights as 3X in winter
    assert make_setup(10, 2, 2, "winter").power == 6
    # two monsters revealed together (Uureg Lake): powers add, each hungrier in winter
    assert make_setup(10, 2, 2, "winter", others=[3]).power == 6 + 8
    # strength equal to power loses
    assert hand_to_hand(9, 9) == (False, 0)
    assert hand_to_hand(10, 9) == (True, 1)


def test_weak_champion_should_roll() -> None:
    # a champion who cannot win by strength only gains by rolling
    s = make_setup(5, 3, 4, "summer")
    ch = fight(s, face_probabilities("gmit-2018"))
    assert ch["fight"].p_asset == 0
    assert verdict(s, ch)["by_asset"] == "roll"
    pats_win = ch["roll"].p_asset
    assert 0 < pats_win < 1


def test_monte_carlo() -> None:
    s = make_setup(20, 2, 4, "winter", [1, 3])  # power 12; second monster 8 or 16
    probs = face_probabilities("gmit-2018")
    rng = np.random.default_rng(77)
    n = 100_000
    faces = np.array(list("HCSG"))[rng.choice(4, size=(n, 4), p=[float(p) for p in probs])]
    pick = rng.integers(0, 2, size=n)
    seen: Counter = Counter()
    for roll, k in zip(faces, pick):
        res = literal_roll_result(tuple(roll), s)
        name, asset, left, _ = res[k] if len(res) > 1 else res[0]
        seen[(name, asset, left)] += 1
    exact = as_table(fight(s, probs)["roll"])
    assert set(seen) <= set(exact)
    for key, p in exact.items():
        p = float(p)
        assert abs(seen[key] / n - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-9, key


@pytest.mark.parametrize(
    "args",
    [(-1, 3, 3, "summer"), (10, 0, 3, "summer"), (10, 3, 7, "summer"), (10, 3, 3, "monsoon"), (10, 3, 3, "winter", [0])],
)
def test_bad_fight_input(args) -> None:
    with pytest.raises(InputError):
        make_setup(*args)
