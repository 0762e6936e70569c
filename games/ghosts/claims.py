"""Checks for the Ghosts of Ur claims in ``data/claims/ghosts.json``.

The combat numbers (modifiers, die sides, the Emmer Field bonus, the tie rule) are the claim's
options, not read behind its back, so the registry shows exactly what each verdict rests on.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

from gamesolver.games.claims import ClaimResult
from gamesolver.games.ghosts.combat import win_probability
from gamesolver.games.ghosts.movement import turn_mean, turn_rolls_mean, turn_squares_pmf, ur_roll_distribution
from gamesolver.solver.errors import InputError

TIES = ("defender", "attacker", "reroll")
LADDER = ("kish", "akkadian", "ghost", "nanna")


def attack_win(net: int, sides: int, ties: str = "defender") -> Fraction:
    """P(attacker wins) with both rolling 1..sides and the attacker ``net`` ahead in modifiers;
    ``ties`` says who wins an equal total (``reroll``: rolled again until someone wins)."""
    if ties not in TIES:
        raise InputError(f"unknown tie rule {ties!r}; expected one of {', '.join(TIES)}")
    strict = win_probability(net, sides)  # attacker total strictly higher
    tie = Fraction(max(0, sides - abs(net)), sides * sides)
    if ties == "attacker":
        return strict + tie
    if ties == "reroll":
        return strict / (1 - tie)
    return strict


def _pct(p: Fraction) -> str:
    return f"{100 * float(p):.2f} %"


def fighter_ladder(modifiers: dict[str, int], attacker_bonuses: Sequence[int] = (0, 15), sides: int = 100,
                   ties: str = "defender") -> ClaimResult:
    """Kish are the weak common fighters, Akkadians the elite, then the Ghosts (+25) and Nanna
    (+45): the attacker's chance must fall strictly along that ladder, for every bonus."""
    missing = [k for k in LADDER if k not in modifiers]
    if missing:
        raise InputError(f"modifiers lack {', '.join(missing)}; expected one each for {', '.join(LADDER)}")
    evidence, figures, ordered = [], {}, True
    for bonus in attacker_bonuses:
        chances = [attack_win(bonus - modifiers[k], sides, ties) for k in LADDER]
        ordered &= all(a > b for a, b in zip(chances, chances[1:]))
        figures[str(bonus)] = {k: str(c) for k, c in zip(LADDER, chances)}
        evidence.append(f"attacker bonus {bonus:+d}: " + ", ".join(f"{k} ({modifiers[k]:+d}) {_pct(c)}"
                                                                  for k, c in zip(LADDER, chances)))
    evidence.append(f"two d{sides}, ties: {ties}; Anglean's +15 shown as the second bonus")
    if ordered:
        bare = figures[str(attacker_bonuses[0])]
        return ClaimResult("verified", "the chance of winning falls strictly from Kish to Akkadian to Ghost to Nanna: "
                                       + " > ".join(f"{k} {_pct(Fraction(bare[k]))}" for k in LADDER),
                           evidence, figures)
    return ClaimResult("refuted", "the win chances do not fall along Kish, Akkadian, Ghost, Nanna", evidence, figures)


def defender_wins_ties(sides: int = 100, ties: str = "defender") -> ClaimResult:
    """"Defender always wins on a tied combat roll": this makes an even fight (no modifier either
    side) the defender's; how much, and what it takes the attacker to be the favourite."""
    even = attack_win(0, sides, ties)
    first = next((net for net in range(-sides, sides + 1) if attack_win(net, sides, ties) > Fraction(1, 2)), None)
    evidence = [f"two d{sides}, ties to the {ties}: the attacker wins an even fight with P = {even} ({_pct(even)})",
                f"the attacker is the favourite from a modifier lead of {first:+d}" if first is not None else
                "the attacker is never the favourite"]
    figures = {"even_fight_attacker": str(even), "first_favoured_net": first}
    if even < Fraction(1, 2):
        return ClaimResult("verified", f"an even fight goes to the defender more often: attacker {_pct(even)}, "
                                       f"defender {_pct(1 - even)}", evidence, figures)
    return ClaimResult("refuted", f"the defender is not favoured in an even fight (attacker {_pct(even)})", evidence,
                       figures)


def nanna_three_attempts(modifiers: dict[str, int], attacker_bonuses: Sequence[int] = (0, 15, 30, 45),
                         attempts: int = 3, sides: int = 100) -> ClaimResult:
    """"Nanna wins!": with only three attempts each, an adventurer without bonuses more likely
    than not never beats Nanna. Exact fractions per bonus, and the bonus that tips it."""
    if attempts < 1:
        raise InputError(f"attempts is {attempts}; expected 1 or more")
    evidence: list[str] = []
    figures: dict[str, Any] = {}
    for bonus in attacker_bonuses:
        p = attack_win(bonus - modifiers["nanna"], sides)
        within = 1 - (1 - p) ** attempts
        figures[str(bonus)] = {"one_fight": str(p), "within": str(within)}
        evidence.append(f"bonus {bonus:+d}: one fight {p} ({_pct(p)}); within {attempts} attempts {within} "
                        f"({_pct(within)})")
    tip = next((b for b in range(0, 2 * sides)
                if 1 - (1 - attack_win(b - modifiers["nanna"], sides)) ** attempts >= Fraction(1, 2)), None)
    evidence.append(f"an adventurer needs a bonus of {tip:+d} (equipment and abilities) to be at least even over "
                    f"{attempts} attempts" if tip is not None else "no bonus makes the attempts even")
    figures["even_from_bonus"] = tip
    bare = Fraction(figures[str(attacker_bonuses[0])]["within"])
    if bare < Fraction(1, 2):
        return ClaimResult("verified", f"with bonus {attacker_bonuses[0]:+d} the {attempts} attempts succeed with P = "
                                       f"{bare} ({_pct(bare)}): Nanna wins more often than not", evidence, figures)
    return ClaimResult("refuted", f"with bonus {attacker_bonuses[0]:+d} the {attempts} attempts succeed with "
                                  f"{_pct(bare)}: the adventurer is the favourite", evidence, figures)


def emmer_field_bonus(modifiers: dict[str, int], emmer_bonus: int = 10, attacker_bonus: int = 0,
                      sides: int = 100) -> ClaimResult:
    """Defenders on an Emmer Field get +10, so Nisaba (a Ghost on an Emmer Field) is the hardest
    ghost, and an Emmer Field's three Kish the hardest Kish tile to clear in one go."""
    ghost = modifiers["ghost"]
    nisaba = attack_win(attacker_bonus - ghost - emmer_bonus, sides)
    other = attack_win(attacker_bonus - ghost, sides)
    kish_emmer = attack_win(attacker_bonus - modifiers["kish"] - emmer_bonus, sides)
    kish_plain = attack_win(attacker_bonus - modifiers["kish"], sides)
    tiles = {"emmer field (3 Kish)": kish_emmer**3, "desert (2 Kish)": kish_plain**2, "water (1 Kish)": kish_plain}
    evidence = [f"attacker bonus {attacker_bonus:+d}: Nisaba on her Emmer Field ({ghost + emmer_bonus:+d}) "
                f"{_pct(nisaba)}; Gilgamesh and Enki ({ghost:+d}) {_pct(other)}",
                "clearing a tile in one go (every fight won): " + ", ".join(f"{k} {_pct(v)}" for k, v in tiles.items()),
                f"two d{sides}, defender wins ties, Emmer Field bonus {emmer_bonus:+d} for any defender on it"]
    figures = {"nisaba": str(nisaba), "other_ghosts": str(other),
               "clear_in_one_go": {k: str(v) for k, v in tiles.items()}}
    if nisaba < other and tiles["emmer field (3 Kish)"] < min(tiles["desert (2 Kish)"], tiles["water (1 Kish)"]):
        return ClaimResult("verified", f"the Emmer Field makes Nisaba the hardest ghost ({_pct(nisaba)} against "
                                       f"{_pct(other)}) and its Kish the hardest tile", evidence, figures)
    return ClaimResult("refuted", "the Emmer Field bonus does not make its defenders the hardest", evidence, figures)


def unlimited_extra_turns(dice: Sequence[str] | None = None, shown: int = 4) -> ClaimResult:
    """A roll of 2 gives another turn, without limit: the squares a turn allows, against one roll
    and against a rule that allows a single extra turn."""
    probs = None if dice is None else [Fraction(p) for p in dice]
    if probs is not None and (len(probs) != 5 or sum(probs) != 1 or any(p < 0 for p in probs)):
        raise InputError(f"dice must be five probabilities of rolling 0..4 that sum to 1, got {list(dice or [])}")
    dist = ur_roll_distribution(probs=probs)
    one_roll = sum((k * p for k, p in enumerate(dist)), Fraction(0))
    unlimited = turn_mean(dist)
    p2 = dist[2]
    single_extra = one_roll + p2 * one_roll
    rolls = turn_rolls_mean(dist)
    chain = [p2**k for k in range(1, shown + 1)]
    big = 1 - sum((turn_squares_pmf(s, dist) for s in range(5)), Fraction(0))
    evidence = [f"P(roll 0..4) = {', '.join(str(p) for p in dist)}",
                f"expected squares: one roll {one_roll} ({float(one_roll):.3f}); at most one extra turn "
                f"{single_extra} ({float(single_extra):.3f}); extra turns without limit {unlimited} "
                f"({float(unlimited):.3f})",
                f"expected rolls per turn {rolls} ({float(rolls):.3f}); P(at least k extra turns) for k = 1..{shown}: "
                + ", ".join(f"{float(c):.4f}" for c in chain),
                f"P(a turn allows more than 4 squares, beyond any single roll) = {big} ({_pct(big)})"]
    figures = {"one_roll": str(one_roll), "single_extra": str(single_extra), "unlimited": str(unlimited),
               "rolls_per_turn": str(rolls), "p_more_than_4": str(big)}
    if unlimited > single_extra > one_roll:
        return ClaimResult("verified", f"a turn allows {float(unlimited):.2f} squares on average against "
                                       f"{float(one_roll):.2f} for one roll; chains of 2s can run on "
                                       f"(P(3+ extra turns) = {float(p2**3):.3f})", evidence, figures)
    return ClaimResult("refuted", "with these dice a 2 never gives extra squares", evidence, figures)
