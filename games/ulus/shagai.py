"""Shagai (knucklebone) odds for Ulus: face-probability presets, the four-shagai patterns,
what each pattern means at a monster fight and at Tuul'ch, and the expected strength change.

Probabilities are exact ``Fraction``s: preset numbers are decimal strings in
``data/ulus_presets.json`` and user input is parsed the same way.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import factorial
from typing import Any, Sequence

from gamesolver import data
from gamesolver.solver.errors import InputError

FACES = ("horse", "camel", "sheep", "goat")
HORSE, CAMEL, SHEEP, GOAT = range(4)

# Patterns of four shagai, in the order the rules list them; three-or-more-goats wins over
# every other reading (so "four goats" and "three goats" never appear on their own).
PATTERNS = (
    "four-different",
    "four-horses",
    "four-camels",
    "four-sheep",
    "three-horses",
    "three-camels",
    "three-sheep",
    "two-pairs",
    "one-pair",
    "three-or-more-goats",
)

# Nomadic phase: what rolling for help before a monster fight gives.
NOMADIC = {
    "four-different": "immune",
    "four-horses": "automatic win",
    "four-camels": "automatic win",
    "four-sheep": "automatic win",
    "three-horses": "fight",
    "three-camels": "fight",
    "three-sheep": "fight",
    "two-pairs": "fight",
    "one-pair": "fight",
    "three-or-more-goats": "second monster",
}

# Tuul'ch: asset-card consequence of each pattern (the strength change is rule data).
TUULCH_CARDS = {
    "four-different": "swap two assets",
    "four-horses": "swap two assets",
    "four-camels": "swap two assets",
    "four-sheep": "swap two assets",
    "three-horses": "none",
    "three-camels": "none",
    "three-sheep": "none",
    "two-pairs": "none",
    "one-pair": "none",
    "three-or-more-goats": "discard one asset",
}


@lru_cache(maxsize=1)
def rules() -> dict[str, Any]:
    """The rule numbers shipped in ``data/ulus_presets.json``."""
    return data.load_json("ulus_presets.json")


def preset_names() -> list[str]:
    return list(rules()["presets"])


def _parse_probability(text: str) -> Fraction:
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise InputError(f"face probability {text.strip()!r} is not a number; give decimals or fractions like 0.135 or 1/4") from None
    return value


def check_faces(probs: Sequence[Fraction]) -> tuple[Fraction, ...]:
    """Validate four face probabilities (Horse, Camel, Sheep, Goat): non-negative, summing to 1."""
    if len(probs) != 4:
        raise InputError(f"--faces needs 4 probabilities (Horse,Camel,Sheep,Goat), got {len(probs)}")
    if any(p < 0 for p in probs):
        raise InputError("face probabilities must not be negative; give 4 values in [0, 1] summing to 1")
    total = sum(probs, Fraction(0))
    if total != 1:
        raise InputError(f"face probabilities sum to {float(total):g}, not 1; give 4 values (Horse,Camel,Sheep,Goat) summing to 1")
    return tuple(probs)


def face_probabilities(preset: str | None = None, faces: str | None = None) -> tuple[Fraction, ...]:
    """Face probabilities from ``--faces "H,C,S,G"`` if given, else from a named preset."""
    if faces is not None:
        return check_faces([_parse_probability(t) for t in faces.split(",")])
    name = preset or rules()["default_preset"]
    presets = rules()["presets"]
    if name not in presets:
        raise InputError(f"unknown preset {name!r}; choose one of {', '.join(presets)}")
    return check_faces([Fraction(t) for t in presets[name]["probabilities"]])


def classify(counts: Sequence[int]) -> str:
    """Pattern of four shagai given how many show each face (Horse, Camel, Sheep, Goat)."""
    if counts[GOAT] >= 3:
        return "three-or-more-goats"
    shape = sorted((c for c in counts if c), reverse=True)
    if shape == [1, 1, 1, 1]:
        return "four-different"
    if shape == [4]:
        return "four-" + ("horses", "camels", "sheep")[max(range(3), key=lambda i: counts[i])]
    if shape == [3, 1]:
        return "three-" + ("horses", "camels", "sheep")[max(range(3), key=lambda i: counts[i])]
    if shape == [2, 2]:
        return "two-pairs"
    return "one-pair"


def pattern_probabilities(probs: Sequence[Fraction], n: int = 4) -> dict[str, Fraction]:
    """Exact probability of every pattern, summing over the multinomial face counts."""
    out = {name: Fraction(0) for name in PATTERNS}
    for counts in itertools.product(range(n + 1), repeat=4):
        if sum(counts) != n:
            continue
        ways = factorial(n)
        weight = Fraction(1)
        for c, p in zip(counts, probs):
            ways //= factorial(c)
            weight *= p**c
        out[classify(counts)] += ways * weight
    return out


def tuulch_change(pattern: str, strength: int | None = None) -> int:
    """Strength change at Tuul'ch; with a current strength, clamped so strength stays >= 0."""
    delta = int(rules()["tuulch_strength"][pattern])
    if strength is not None and strength + delta < 0:
        return -strength
    return delta


@dataclass
class ShagaiReport:
    probabilities: tuple[Fraction, ...]
    patterns: dict[str, Fraction]
    strength: int | None

    def expected_tuulch_change(self) -> Fraction:
        return sum((p * tuulch_change(k, self.strength) for k, p in self.patterns.items()), Fraction(0))

    def rows(self) -> list[dict[str, Any]]:
        return [
            {
                "pattern": name,
                "probability": float(self.patterns[name]),
                "fraction": str(self.patterns[name]),
                "nomadic": NOMADIC[name],
                "tuulch_strength": tuulch_change(name, self.strength),
                "tuulch_cards": TUULCH_CARDS[name],
            }
            for name in PATTERNS
        ]


def shagai_report(probs: Sequence[Fraction], strength: int | None = None) -> ShagaiReport:
    if strength is not None and strength < 0:
        raise InputError(f"strength must be 0 or more, got {strength}")
    return ShagaiReport(tuple(probs), pattern_probabilities(probs), strength)
