"""Ghosts of Ur combat: two d100 rolls, defender wins ties, modifiers from docs/rules.md section 4.

Owns the closed-form win probability, the table by net modifier, the attacker's equipment
decision, clearing a Kish tile, Ambush, Nanna, and the defender's flee-or-fight choice (AVA).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import comb
from typing import Callable

from gamesolver.games.ghosts.movement import ur_roll_distribution
from gamesolver.games.ghosts.rules import defender_modifier, rules
from gamesolver.solver.errors import InputError


def win_probability(net: int, sides: int | None = None) -> Fraction:
    """P(attacker wins) when the attacker's modifiers exceed the defender's by ``net``.

    Both roll uniformly 1..n and the attacker wins iff X + net > Y.  The number of pairs with
    X - Y > k is (n-k)(n-k-1)/2 for 0 <= k < n, and n^2 minus its mirror for k < 0.
    """
    n = rules().sides if sides is None else sides
    k = -net
    if k >= n - 1:
        wins = 0
    elif k >= 0:
        wins = (n - k) * (n - k - 1) // 2
    elif k >= -n:
        wins = n * n - (n + k + 1) * (n + k) // 2
    else:
        wins = n * n
    return Fraction(wins, n * n)


def combat_table(sides: int | None = None) -> list[tuple[int, Fraction]]:
    """Every net modifier that changes the answer, with the attacker's win probability."""
    n = rules().sides if sides is None else sides
    return [(net, win_probability(net, n)) for net in range(-n + 1, n + 1)]


@dataclass(frozen=True)
class EquipmentPlan:
    """What equipment added after the attacker's roll does, over the 100 possible rolls."""

    win: Fraction          # P(win) using the equipment whenever it helps
    win_without: Fraction  # P(win) never using it
    auto_win: Fraction     # roll so high that attrition wins without showing a card
    use_cards: Fraction    # roll where adding equipment raises the chance (cards are shown)
    hopeless: Fraction     # even with every card the defender cannot be beaten
    first_useful_roll: int | None
    last_useful_roll: int | None


def equipment_plan(bonus: int, defender_mod: int, equipment: int) -> EquipmentPlan:
    """The attacker sees its own roll x, then adds equipment only where it changes the odds.

    The defender rolls after, so for a given x the win chance is P(Y + D < x + A + e); it is
    0 if even e = all equipment cannot pass 1 + D, and 1 without cards if x + A > n + D.  By
    the attrition rule x + A + E > n + D also wins at once without spending cards.
    """
    n = rules().sides
    win = win0 = auto = use = hope = Fraction(0)
    first = last = None
    for x in range(1, n + 1):
        p0 = _p_beat(x + bonus - defender_mod, n)
        p1 = _p_beat(x + bonus + equipment - defender_mod, n)
        win += p1
        win0 += p0
        if p1 == 1:
            auto += 1
        elif p1 == 0:
            hope += 1
        elif p1 > p0:
            use += 1
            first = x if first is None else first
            last = x
    return EquipmentPlan(win / n, win0 / n, auto / n, use / n, hope / n, first, last)


def _p_beat(margin: int, n: int) -> Fraction:
    """P(Y < margin) for Y uniform on 1..n: the chance a fixed attacker total beats the defender."""
    return Fraction(min(max(margin - 1, 0), n), n)


@dataclass(frozen=True)
class ClearResult:
    kish: int
    p_fight: Fraction                          # one fight against one Kish
    one_attempt: Fraction                      # all K fights won in a row
    by_attempts: list[tuple[int, Fraction, Fraction]]  # attempt t, P(cleared at t), P(cleared by t)
    by_rounds: list[tuple[int, Fraction, Fraction]]    # own rounds (turn + extra turns)
    expected_attempts: Fraction


def clear_tile(
    kish: int,
    bonus: int,
    emmer: bool = False,
    max_steps: int = 20,
    anglean: bool = False,
    reroll: str = "roll",
    extra_after_retreat: bool = True,
    on_step: Callable[[], None] | None = None,
) -> ClearResult:
    """Clearing a tile of ``kish`` Kish: fights go on until the tile is clear or one is lost.

    A loss sends the adventurer into Retreat (next to the tile) and the Kish left stay, so an
    attempt is one turn in which the tile is reached.  The count of attempts is negative
    binomial.  By rounds: an attempt needs an Ur dice roll of at least 1, and a roll of 2
    gives another turn in the same round (kept after a Retreat unless told otherwise).
    ``on_step`` is called after each round's row (a progress bar's tick).
    """
    if kish < 0:
        raise InputError(f"number of Kish is {kish}; expected 0 or more")
    p = win_probability(bonus - defender_modifier("kish", emmer))
    q = 1 - p
    by_attempts = []
    total = Fraction(0)
    for t in range(1, max_steps + 1):
        # cleared exactly at attempt t: K wins and t-1 losses, the last fight a win
        at = Fraction(comb(kish - 1 + t - 1, t - 1)) * p**kish * q ** (t - 1) if kish else Fraction(int(t == 1))
        total += at
        by_attempts.append((t, at, total))
    expected = Fraction(kish) / p if p else Fraction(-1)
    by_rounds = _clear_by_rounds(kish, p, max_steps, ur_roll_distribution(anglean, reroll), extra_after_retreat,
                                 on_step)
    return ClearResult(kish, p, p**kish, by_attempts, by_rounds, expected)


def _clear_by_rounds(kish, p, max_rounds, dice, extra_after_retreat, on_step=None):
    """Markov chain on Kish left; one step is one own round (a turn and its extra turns)."""
    step = [_round_from(k, p, dice, extra_after_retreat) for k in range(kish + 1)]
    dist = [Fraction(0)] * (kish + 1)
    dist[kish] = Fraction(1)
    rows = []
    for r in range(1, max_rounds + 1):
        new = [Fraction(0)] * (kish + 1)
        for k, mass in enumerate(dist):
            if mass:
                for j, pr in enumerate(step[k]):
                    new[j] += mass * pr
        rows.append((r, new[0] - dist[0], new[0]))
        dist = new
        if on_step is not None:
            on_step()
    return rows


def _round_from(k: int, p: Fraction, dice: list[Fraction], extra_after_retreat: bool) -> list[Fraction]:
    """Distribution of Kish left after one round starting with ``k`` (0 stays cleared)."""
    extra = rules().extra_turn_roll
    memo: dict[int, list[Fraction]] = {}

    def turn(k: int) -> list[Fraction]:
        # distribution after a turn sequence starting with k Kish left
        if k in memo:
            return memo[k]
        out = [Fraction(0)] * (k + 1)
        if k == 0:
            out[0] = Fraction(1)
            memo[k] = out
            return out
        self_loop = Fraction(0)
        for roll, pr in enumerate(dice):
            if pr == 0:
                continue
            if roll == 0:
                out[k] += pr
                continue
            out[0] += pr * p**k
            for w in range(k):  # w wins, then a loss
                mass = pr * p**w * (1 - p)
                if roll == extra and extra_after_retreat:
                    if w == 0:
                        self_loop += mass
                    else:
                        for j, v in enumerate(turn(k - w)):
                            out[j] += mass * v
                else:
                    out[k - w] += mass
        out = [v / (1 - self_loop) for v in out]
        memo[k] = out
        return out

    return turn(k)


@dataclass(frozen=True)
class AmbushResult:
    p_fight: Fraction
    rows: list[tuple[int, Fraction, Fraction]]  # Kish rolled, P(that many), P(all beaten)
    card: Fraction                              # P(Nisi Emuq card): zero rolled or all won
    retreat: Fraction
    expected_kish_beaten: Fraction


def ambush(bonus: int, emmer: bool = False, anglean: bool = False, reroll: str = "roll") -> AmbushResult:
    """The Ambush card: Ur dice give the number of Kish, fought one after another."""
    p = win_probability(bonus - defender_modifier("kish", emmer))
    dice = ur_roll_distribution(anglean, reroll)
    rows = [(n, pr, p**n) for n, pr in enumerate(dice)]
    card = sum((pr * p**n for n, pr, _ in rows), Fraction(0))
    beaten = Fraction(0)
    for n, pr, _ in rows:
        # wins before the first loss, capped at n
        beaten += pr * sum((p**w for w in range(1, n + 1)), Fraction(0))
    return AmbushResult(p, rows, card, 1 - card, beaten)


def nanna(bonus: int, attempts: int | None = None) -> tuple[Fraction, list[Fraction]]:
    """P(one fight with Nanna) and P(Nanna defeated within 1..attempts fights)."""
    attempts = rules().nanna_attempts if attempts is None else attempts
    if attempts < 1:
        raise InputError(f"attempts is {attempts}; expected 1 or more")
    p = win_probability(bonus - defender_modifier("nanna"))
    return p, [1 - (1 - p) ** t for t in range(1, attempts + 1)]


@dataclass(frozen=True)
class DefendRow:
    attacker_roll: int
    attacker_total: int
    need: int                 # the defender's die must show at least this
    fight_win: Fraction       # P(defender wins if it fights)
    fight_value: Fraction     # expected cards gained (+) or lost (-) by fighting
    flee_value: Fraction
    choice: str               # "fight" or "flee"


def defend_table(
    attacker_bonus: int,
    defender_bonus: int,
    at_stake: int,
    prize: int,
    flee_cost: int = 1,
    emmer: bool = False,
    has_flee_card: bool = True,
) -> tuple[list[DefendRow], dict[str, Fraction]]:
    """The defender's choice in AVA after seeing the attacker's total.

    Fleeing (Vanish Powder or Sandstorm) costs that card and keeps the rest; fighting wins
    ``prize`` (the attacker's cards) or loses ``at_stake`` (every card but Map Cards, and the
    Player Token, in card units).  The defender fights when the expected change in cards is
    at least minus the flee cost (on equal value it fights and keeps the flee card).
    """
    n = rules().sides
    d_total = defender_bonus + (rules().emmer_bonus if emmer else 0)
    rows = []
    p_fight = p_flee = p_def_wins = Fraction(0)
    for x in range(1, n + 1):
        total = x + attacker_bonus
        need = total - d_total  # defender wins on y + d_total >= total
        w = Fraction(min(max(n + 1 - max(need, 1), 0), n), n)
        fight = w * prize - (1 - w) * at_stake
        flee = Fraction(-flee_cost)
        choice = "fight" if (fight >= flee or not has_flee_card) else "flee"
        rows.append(DefendRow(x, total, max(need, 1), w, fight, flee, choice))
        if choice == "fight":
            p_fight += Fraction(1, n)
            p_def_wins += w / n
        else:
            p_flee += Fraction(1, n)
    value = sum(((r.fight_value if r.choice == "fight" else r.flee_value) for r in rows), Fraction(0)) / n
    always_fight = sum((r.fight_value for r in rows), Fraction(0)) / n
    summary = {"p_fight": p_fight, "p_flee": p_flee, "p_defender_wins": p_def_wins,
               "expected_cards": value, "expected_cards_always_fight": always_fight}
    return rows, summary
