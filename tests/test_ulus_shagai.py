"""Shagai pattern odds: exact formula against enumeration of every face sequence, hand-worked
cases, and a seeded Monte Carlo simulation."""
from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ulus.shagai import (
    PATTERNS,
    check_faces,
    face_probabilities,
    pattern_probabilities,
    preset_names,
    shagai_report,
    tuulch_change,
)
from gamesolver.solver.errors import InputError

NAMES = {"H": "horses", "C": "camels", "S": "sheep"}


def slow_pattern(roll: tuple[str, ...]) -> str:
    """The rules read literally from four face letters."""
    c = Counter(roll)
    if c["G"] >= 3:
        return "three-or-more-goats"
    if len(c) == 4:
        return "four-different"
    face, top = c.most_common(1)[0]
    if top == 4:
        return "four-" + NAMES[face]
    if top == 3:
        return "three-" + NAMES[face]
    if sorted(c.values()) == [2, 2]:
        return "two-pairs"
    return "one-pair"


def slow_patterns(probs: tuple[Fraction, ...]) -> dict[str, Fraction]:
    p = dict(zip("HCSG", probs))
    out: dict[str, Fraction] = Counter()  # type: ignore[assignment]
    for roll in itertools.product("HCSG", repeat=4):
        w = Fraction(1)
        for f in roll:
            w *= p[f]
        out[slow_pattern(roll)] += w
    return {k: out.get(k, Fraction(0)) for k in PATTERNS}


@pytest.mark.parametrize("preset", preset_names())
def test_presets_match_enumeration(preset: str) -> None:
    probs = face_probabilities(preset)
    exact = pattern_probabilities(probs)
    assert exact == slow_patterns(probs)
    assert sum(exact.values()) == 1


fractions_4 = st.lists(st.integers(0, 50), min_size=4, max_size=4).filter(lambda xs: sum(xs) > 0).map(
    lambda xs: tuple(Fraction(x, sum(xs)) for x in xs)
)


@settings(max_examples=40, deadline=None)
@given(fractions_4)
def test_random_faces_match_enumeration(probs: tuple[Fraction, ...]) -> None:
    assert pattern_probabilities(probs) == slow_patterns(probs)


def test_uniform_by_hand() -> None:
    pats = pattern_probabilities(face_probabilities("uniform"))
    assert pats["four-different"] == Fraction(24, 256)
    assert pats["four-horses"] == Fraction(1, 256)
    # three goats (4 ways x 3 other faces) plus four goats
    assert pats["three-or-more-goats"] == Fraction(12 + 1, 256)
    # three horses in 4 places, the fourth shagai any of the 3 other faces
    assert pats["three-horses"] == Fraction(4 * 3, 256)
    # two pairs: choose the 2 faces (6) and arrange them (6)
    assert pats["two-pairs"] == Fraction(36, 256)


def test_gmit_goats_by_hand() -> None:
    g = Fraction("0.385")
    pats = pattern_probabilities(face_probabilities("gmit-2018"))
    assert pats["three-or-more-goats"] == 4 * g**3 * (1 - g) + g**4


def test_monte_carlo_gmit() -> None:
    """200 000 seeded rolls; every pattern within 5 standard errors."""
    probs = face_probabilities("gmit-2018")
    rng = np.random.default_rng(20181)
    n = 200_000
    rolls = rng.choice(4, size=(n, 4), p=[float(p) for p in probs])
    letters = np.array(list("HCSG"))[rolls]
    seen = Counter(slow_pattern(tuple(r)) for r in letters)
    for name, p in pattern_probabilities(probs).items():
        p = float(p)
        tol = 5 * np.sqrt(p * (1 - p) / n) + 1e-9
        assert abs(seen[name] / n - p) <= tol, name


def test_tuulch_expected_change_by_hand() -> None:
    pats = pattern_probabilities(face_probabilities("uniform"))
    want = (10 * (pats["four-different"] + 3 * pats["four-horses"]) + 5 * 3 * pats["three-horses"]
            - 3 * pats["one-pair"] - 10 * pats["three-or-more-goats"])
    assert shagai_report(face_probabilities("uniform")).expected_tuulch_change() == want
    # with 2 strength a loss of 3 or 10 takes only 2
    assert tuulch_change("one-pair", 2) == -2
    assert tuulch_change("three-or-more-goats", 2) == -2
    assert tuulch_change("three-or-more-goats", 15) == -10
    assert tuulch_change("four-sheep", 0) == 10


@pytest.mark.parametrize("text", ["0.5,0.5,0.5,0.5", "0.3,0.3,0.3", "1.2,-0.2,0,0", "a,b,c,d", "0.25,0.25,0.25,0.25,0"])
def test_bad_faces(text: str) -> None:
    with pytest.raises(InputError):
        face_probabilities(faces=text)


def test_faces_parse_fractions() -> None:
    assert face_probabilities(faces="1/4,1/4,1/4,1/4") == face_probabilities("uniform")
    with pytest.raises(InputError):
        check_faces([Fraction(1)])
