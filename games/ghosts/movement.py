"""Ghosts of Ur movement: the four Ur dice, extra turns on a 2, and how long a journey takes.

The squares a turn allows, with its unbounded chain of extra turns, have generating function
Q(z) / (1 - p2 z^2), where Q holds the rolls other than 2; every coefficient is a finite sum,
so the distribution is exact at every length and only the printed tail is cut.
"""
from __future__ import annotations

from fractions import Fraction
from math import comb
from typing import Callable

from gamesolver.games.ghosts.rules import REROLL_READINGS, rules
from gamesolver.solver.errors import InputError


def parse_probabilities(text: str) -> list[Fraction]:
    """``"1/16,1/4,3/8,1/4,1/16"`` -> P(roll = 0..4) for dice that are not the fair Ur dice.

    Each entry is a fraction or decimal; they must be >= 0, sum to 1 (within 1e-9, then
    scaled to sum exactly to 1); P(2) must be below 1 or a turn would never end, and P(0) below 1
    or nobody would ever move.
    """
    parts = [p.strip() for p in text.split(",")]
    size = rules().ur_dice + 1
    if len(parts) != size:
        raise InputError(f"--probs has {len(parts)} entries; expected {size} (P of rolling 0..{size - 1})")
    try:
        probs = [Fraction(p) for p in parts]
    except (ValueError, ZeroDivisionError):
        raise InputError(f"--probs {text!r}: not numbers; expected e.g. 1/16,1/4,3/8,1/4,1/16") from None
    if any(p < 0 for p in probs):
        raise InputError(f"--probs {text!r}: a probability is negative")
    total = sum(probs, Fraction(0))
    if abs(total - 1) > Fraction(1, 10**9):
        raise InputError(f"--probs sum to {float(total):.9g}; expected 1")
    probs = [p / total for p in probs]
    if probs[rules().extra_turn_roll] == 1:
        raise InputError("--probs: a roll of 2 is certain, so a turn never ends; expected P(2) < 1")
    if probs[0] == 1:
        raise InputError("--probs: a roll of 0 is certain, so nobody ever moves; expected P(0) < 1")
    return probs


def ur_roll_distribution(
    anglean: bool = False, reroll: str = "roll", probs: list[Fraction] | None = None
) -> list[Fraction]:
    """P(roll = 0..4) for the Ur dice; Anglean rerolls zeros once in the chosen reading.

    ``die``: every die showing no mark is rolled again once; ``roll``: a total of 0 is rolled
    again once.  ``probs`` replaces the fair dice (only the ``roll`` reading applies to it).
    """
    if reroll not in REROLL_READINGS:
        raise InputError(f"unknown reroll reading {reroll!r}; expected one of {', '.join(REROLL_READINGS)}")
    if probs is not None:
        if anglean and reroll == "die":
            raise InputError("the 'die' reroll reading needs the fair dice; use --reroll roll with --probs")
        dist = list(probs)
        if anglean:
            zero = dist[0]
            dist = [zero * zero] + [p + zero * p for p in dist[1:]]
        return dist
    r = rules()
    m = Fraction(r.ur_marked, r.ur_tips)
    if anglean and reroll == "die":
        m = m + (1 - m) * m
    dist = [comb(r.ur_dice, k) * m**k * (1 - m) ** (r.ur_dice - k) for k in range(r.ur_dice + 1)]
    if anglean and reroll == "roll":
        zero = dist[0]
        dist = [zero * zero] + [p + zero * p for p in dist[1:]]
    return dist


def _moved_twos_weight(n: int, p2: Fraction, ambush_clear: Fraction | None) -> Fraction:
    """P(the first n rolls of a turn are 2s that all moved), with the Ambush variant's checks."""
    every = rules().ambush_every
    return p2**n * (ambush_clear ** (n // every) if ambush_clear is not None else 1)


def turn_squares_pmf(s: int, dice: list[Fraction], ambush_clear: Fraction | None = None) -> Fraction:
    """P(a turn with all its extra turns allows exactly ``s`` squares).

    With the Ambush variant (``ambush_clear`` = chance of clearing an Ambush), every third
    consecutive 2 is moved only if the Ambush is cleared; otherwise the turn ends there.
    """
    two = rules().extra_turn_roll
    every = rules().ambush_every
    p2 = dice[two]
    total = Fraction(0)
    for n in range(s // two + 1):  # n rolls of 2 moved, then the roll that ends the turn
        w = _moved_twos_weight(n, p2, ambush_clear)
        last = s - two * n
        if 0 <= last < len(dice) and last != two:
            total += w * dice[last]
        if ambush_clear is not None and last == 0 and (n + 1) % every == 0:
            total += w * p2 * (1 - ambush_clear)  # the Ambush is lost: the turn is over
    return total


def turn_squares(
    anglean: bool = False, reroll: str = "roll", tolerance: float = 1e-9, max_squares: int = 400,
    probs: list[Fraction] | None = None, ambush_clear: Fraction | None = None,
) -> tuple[list[tuple[int, Fraction, Fraction]], Fraction]:
    """Rows (squares, P(exactly), P(at most)) until the exact tail P(more) drops below tolerance.

    Returns the rows and the exact tail mass left off.
    """
    if not 0 < tolerance < 1:
        raise InputError(f"tolerance is {tolerance}; expected a number between 0 and 1")
    dice = ur_roll_distribution(anglean, reroll, probs)
    rows = []
    cdf = Fraction(0)
    for s in range(max_squares + 1):
        p = turn_squares_pmf(s, dice, ambush_clear)
        cdf += p
        rows.append((s, p, cdf))
        if 1 - cdf < tolerance:
            break
    return rows, 1 - cdf


def turn_mean(dice: list[Fraction], ambush_clear: Fraction | None = None) -> Fraction:
    """Expected squares per turn, exactly.

    Without the variant this is Wald's E[roll] / (1 - P(2)).  With it, the weights of n moved
    2s repeat in blocks of three (x = P(2)^3 * P(clear) per block), so the series is summed in
    closed form with sum x^k = 1/(1-x) and sum k x^k = x/(1-x)^2.
    """
    two = rules().extra_turn_roll
    p2 = dice[two]
    if ambush_clear is None:
        return sum((k * p for k, p in enumerate(dice)), Fraction(0)) / (1 - p2)
    every = rules().ambush_every
    stop = sum((p for k, p in enumerate(dice) if k != two), Fraction(0))       # P(a turn-ending roll)
    stop_sq = sum((k * p for k, p in enumerate(dice) if k != two), Fraction(0))
    x = p2**every * ambush_clear
    g0, g1 = 1 / (1 - x), x / (1 - x) ** 2
    mean = Fraction(0)
    for j in range(every):
        # n = every*k + j moved 2s: squares 2n, then the ending roll (or a lost Ambush, 0 more)
        end = stop + (p2 * (1 - ambush_clear) if j == every - 1 else 0)
        weight = p2**j
        mean += weight * (two * (every * g1 + j * g0) * end + g0 * stop_sq)
    return mean


def turn_rolls_mean(dice: list[Fraction], ambush_clear: Fraction | None = None) -> Fraction:
    """Expected Ur dice rolls in one turn: the sum over n of P(n moved 2s), in blocks of three."""
    p2 = dice[rules().extra_turn_roll]
    if ambush_clear is None:
        return 1 / (1 - p2)
    every = rules().ambush_every
    return sum((p2**j for j in range(every)), Fraction(0)) / (1 - p2**every * ambush_clear)


def _check_race(distance: int, count: str, ambush_clear: Fraction | None) -> None:
    if distance < 0:
        raise InputError(f"distance is {distance}; expected 0 or more squares")
    if count not in ("rounds", "rolls"):
        raise InputError(f"unknown count {count!r}; expected rounds or rolls")
    if count == "rolls" and ambush_clear is not None:
        raise InputError("the Ambush variant needs --count rounds (rolls are then not independent)")


def _race_steps(
    distance: int, anglean: bool, reroll: str, count: str, probs: list[Fraction] | None,
    ambush_clear: Fraction | None,
) -> list[Fraction]:
    """P(a turn moves s squares) for s = 0 .. distance (a turn: a round, or a single roll)."""
    dice = ur_roll_distribution(anglean, reroll, probs)
    if count == "rounds":
        step = [turn_squares_pmf(s, dice, ambush_clear) for s in range(distance + 1)]
    else:
        step = list(dice) + [Fraction(0)] * max(0, distance + 1 - len(dice))
    return step


def race(
    distance: int,
    anglean: bool = False,
    reroll: str = "roll",
    count: str = "rounds",
    tolerance: float = 1e-9,
    max_turns: int = 1000,
    probs: list[Fraction] | None = None,
    ambush_clear: Fraction | None = None,
    on_turn: Callable[[float], None] | None = None,
) -> tuple[list[tuple[int, Fraction, Fraction]], Fraction]:
    """Distribution of the number of turns to travel ``distance`` squares on open ground.

    ``count="rounds"``: one turn is a roll with all its extra turns; ``"rolls"``: every roll of
    the Ur dice counts.  Overshooting is allowed.  Rows (t, P(exactly t), P(at most t)) until
    the exact tail is below ``tolerance``; also returns that tail. ``on_turn`` is called after
    each turn's row with the probability finished so far (for a progress bar).
    """
    _check_race(distance, count, ambush_clear)
    if not 0 < tolerance < 1:
        raise InputError(f"tolerance is {tolerance}; expected a number between 0 and 1")
    step = _race_steps(distance, anglean, reroll, count, probs, ambush_clear)
    if distance == 0:
        return [(0, Fraction(1), Fraction(1))], Fraction(0)
    # left[d] = P(d squares still to go); d = distance .. 1
    left = [Fraction(0)] * (distance + 1)
    left[distance] = Fraction(1)
    done = Fraction(0)
    rows = []
    for t in range(1, max_turns + 1):
        new = [Fraction(0)] * (distance + 1)
        finished = Fraction(0)
        for d in range(1, distance + 1):
            mass = left[d]
            if not mass:
                continue
            short = Fraction(0)
            for s in range(d):
                if step[s]:
                    new[d - s] += mass * step[s]
                    short += step[s]
            finished += mass * (1 - short)
        done += finished
        rows.append((t, finished, done))
        left = new
        if on_turn is not None:
            on_turn(float(done))
        if 1 - done < tolerance:
            break
    return rows, 1 - done


def race_mean(
    distance: int, anglean: bool = False, reroll: str = "roll", count: str = "rounds",
    probs: list[Fraction] | None = None, ambush_clear: Fraction | None = None,
) -> Fraction:
    """Exact expected number of turns to travel ``distance``: E[d] = 1 + sum_s P(s) E[d - s].

    A turn that moves nothing (s = 0) leaves d unchanged, so that term moves to the left side.
    """
    _check_race(distance, count, ambush_clear)
    step = _race_steps(distance, anglean, reroll, count, probs, ambush_clear)
    mean = [Fraction(0)] * (distance + 1)
    for d in range(1, distance + 1):
        mean[d] = (1 + sum((step[s] * mean[d - s] for s in range(1, d)), Fraction(0))) / (1 - step[0])
    return mean[distance]
