"""A champion's fight against one monster in the Nomadic phase, with and without rolling the
four shagai for help first: the exact probability of every outcome and which choice is better.

Readings where the rules are silent (docs/ulus.md): the second monster brought by three or
more goats has a multiplier drawn evenly from ``second_multipliers`` (default: the same as the
first); both monsters guard the one asset; a lost fight is counted before any call for help or
divine protection; "better" means more expected points (asset value x P(asset) + strength left,
since strength counts as points at the end), with P(asset) reported beside it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

from gamesolver.games.ulus.shagai import NOMADIC, pattern_probabilities, rules
from gamesolver.solver.errors import InputError


@dataclass(frozen=True)
class FightSetup:
    strength: int
    multiplier: int
    players: int
    season: str
    second_multipliers: tuple[int, ...]
    asset_value: int = 10
    others: tuple[int, ...] = ()  # multipliers of monsters revealed with it (Uureg Lake, whispering)

    @property
    def winter(self) -> int:
        return int(rules()["winter_multiplier_bonus"]) if self.season == "winter" else 0

    @property
    def power(self) -> int:
        return sum((m + self.winter) * self.players for m in (self.multiplier, *self.others))

    def second_powers(self) -> list[int]:
        return [(m + self.winter) * self.players for m in self.second_multipliers]


def make_setup(
    strength: int,
    multiplier: int,
    players: int,
    season: str,
    second_multipliers: Sequence[int] | None = None,
    asset_value: int = 10,
    others: Sequence[int] = (),
) -> FightSetup:
    r = rules()
    if strength < 0:
        raise InputError(f"strength must be 0 or more, got {strength}")
    if multiplier < 1:
        raise InputError(f"the monster's multiplier must be 1 or more, got {multiplier}")
    lo, hi = r["players"]["min"], r["players"]["max"]
    if not lo <= players <= hi:
        raise InputError(f"Ulus takes {lo} to {hi} players, got {players}")
    season = season.lower()
    if season not in r["seasons"]:
        raise InputError(f"unknown season {season!r}; choose one of {', '.join(r['seasons'])}")
    seconds = tuple(second_multipliers) if second_multipliers else (multiplier,)
    if any(m < 1 for m in (*seconds, *others)):
        raise InputError("every monster's multiplier must be 1 or more")
    if asset_value < 0:
        raise InputError(f"asset value must be 0 or more, got {asset_value}")
    return FightSetup(strength, multiplier, players, season, seconds, asset_value, tuple(others))


@dataclass
class Outcome:
    name: str
    probability: Fraction
    asset: bool
    strength: int  # strength after the fight


@dataclass
class Choice:
    name: str
    outcomes: list[Outcome] = field(default_factory=list)

    def add(self, name: str, p: Fraction, asset: bool, strength: int) -> None:
        for o in self.outcomes:
            if o.name == name and o.strength == strength:
                o.probability += p
                return
        self.outcomes.append(Outcome(name, p, asset, strength))

    @property
    def p_asset(self) -> Fraction:
        return sum((o.probability for o in self.outcomes if o.asset), Fraction(0))

    @property
    def expected_strength(self) -> Fraction:
        return sum((o.probability * o.strength for o in self.outcomes), Fraction(0))

    def expected_points(self, asset_value: int) -> Fraction:
        return asset_value * self.p_asset + self.expected_strength


def hand_to_hand(strength: int, power: int) -> tuple[bool, int]:
    """Strength against power: more strength wins and loses the power; a tie is lost."""
    if strength > power:
        return True, strength - power
    return False, 0


def fight(setup: FightSetup, probs: Sequence[Fraction]) -> dict[str, Choice]:
    """Both choices: ``fight`` (no roll) and ``roll`` (roll the four shagai first)."""
    plain = Choice("fight")
    won, left = hand_to_hand(setup.strength, setup.power)
    plain.add("won" if won else "lost", Fraction(1), won, left)

    roll = Choice("roll")
    for pattern, p in pattern_probabilities(probs).items():
        if p == 0:
            continue
        meaning = NOMADIC[pattern]
        if meaning == "immune":
            roll.add("immune", p, True, setup.strength)
        elif meaning == "automatic win":
            roll.add("automatic win", p, True, setup.strength)
        elif meaning == "fight":
            roll.add("won" if won else "lost", p, won, left)
        else:
            powers = setup.second_powers()
            for power2 in powers:
                w2, l2 = hand_to_hand(setup.strength, setup.power + power2)
                roll.add("won vs extra monster" if w2 else "lost vs extra monster", p / len(powers), w2, l2)
    return {"fight": plain, "roll": roll}


def verdict(setup: FightSetup, choices: dict[str, Choice]) -> dict[str, Any]:
    """Which choice is better by expected points, and by the chance of the asset alone."""
    f, r = choices["fight"], choices["roll"]

    def pick(a: Fraction, b: Fraction) -> str:
        return "roll" if b > a else "fight" if a > b else "either"

    return {
        "by_points": pick(f.expected_points(setup.asset_value), r.expected_points(setup.asset_value)),
        "by_asset": pick(f.p_asset, r.p_asset),
        "by_strength": pick(f.expected_strength, r.expected_strength),
    }
