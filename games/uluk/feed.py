"""The Uluk Feeding phase solved exactly: feeding, reproduction, celebration and treats.

Food is interchangeable for feeding, so a plan is fixed by a few counts: the celebration
(none, with food, with poison), the new tribers b, the non-treat food U and the treats T
eaten.  Within each count, perishables go first (they are lost anyway).  In the last season
the feast card is handled by trying 0, 1 and 2 sets held back, which makes leftovers
additive; the search over this small space is exhaustive.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from gamesolver.games.uluk.rules import Board, FeastCard, key, rules
from gamesolver.solver.errors import InputError

CELEBRATIONS = ("none", "food", "poison")


@dataclass(frozen=True)
class FeedOptions:
    """How the season ends and what leftovers and new tribers are worth to the player."""

    final: bool = False                     # last season: feast card scores, keeping is worthless
    hunger_before: int = 0                  # Hunger tokens already taken (one is forgiven at the end)
    triber_value: Fraction = Fraction(0)    # Happiness a new triber is worth to you
    keep_value: Fraction = Fraction(0)      # Happiness per durable food piece kept (not final)
    treat_on_reproduction: bool = False     # treats spent on reproduction also give +1
    max_tribers: int | None = None          # pawns of one colour (rules: 10)


@dataclass
class Plan:
    fed: int
    unfed: int
    new_tribers: int
    celebration: str
    extra_treats: int
    treats_eaten: int
    eaten: dict[str, int] = field(default_factory=dict)   # every piece spent, by resource
    happiness: int = 0                                     # gained in this phase
    hunger_tokens: int = 0
    hunger_points: int = 0                                 # their end-of-game cost
    feast_sets: int = 0
    feast_points: int = 0
    kept_food: int = 0
    keep_points: Fraction = Fraction(0)
    perished: dict[str, int] = field(default_factory=dict)
    score: Fraction = Fraction(0)


def parse_have(text: str, board: Board) -> dict[str, int]:
    """``"baked mgobu=3, salted fnord=2"`` -> counts, checked against the board."""
    have: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, count = part.rpartition("=")
        if not sep:
            raise InputError(f"--have: {part!r} has no count; expected name=count, e.g. baked mgobu=3")
        name = key(name)
        if name not in board.resources:
            raise InputError(f"--have: {name!r} is not on the tribe board; known: {', '.join(board.resources)}")
        try:
            n = int(count)
        except ValueError:
            raise InputError(f"--have: count {count.strip()!r} for {name} is not a whole number") from None
        if n < 0:
            raise InputError(f"--have: {name}={n} is negative; expected a count >= 0")
        have[name] = have.get(name, 0) + n
    return have


def _check(board: Board, have: dict[str, int], tribers: int, opts: FeedOptions, feast: FeastCard | None) -> int:
    cap = rules().max_tribers if opts.max_tribers is None else opts.max_tribers
    if tribers < 0 or tribers > cap:
        raise InputError(f"tribers is {tribers}; expected 0 to {cap}")
    for name, n in have.items():
        if name not in board.resources or n < 0:
            raise InputError(f"resource {name}={n}: not on the board or negative")
    for what, v in (("hunger before", opts.hunger_before), ("triber value", opts.triber_value),
                    ("keep value", opts.keep_value)):
        if v < 0:
            raise InputError(f"{what} is {v}; expected a number >= 0")
    if feast is not None:
        if feast.one_set > feast.two_sets:
            raise InputError("feast card: one set scores more than two; expected one_set <= two_sets")
        for name in feast.needs:
            if name not in board.resources:
                raise InputError(f"feast card needs {name!r}, which is not on the tribe board")
    return cap


def hunger_points(before: int, new: int) -> int:
    """End-of-game cost of ``new`` Hunger tokens given ``before`` (the first token is forgiven)."""
    r = rules()
    late = max(0, before + new - r.hunger_forgiven) - max(0, before - r.hunger_forgiven)
    return -r.hunger_penalty * late


def feast_sets(left: dict[str, int], board: Board, feast: FeastCard | None) -> int:
    """Complete feast sets in what is left (perishables are gone by the end of the game), at most 2."""
    if feast is None:
        return 0
    sets = 2
    for name, need in feast.needs.items():
        n = 0 if board.resources[name].perishable else left.get(name, 0)
        sets = min(sets, n // need)
    return sets


def feast_points(sets: int, feast: FeastCard | None) -> int:
    if feast is None or sets == 0:
        return 0
    return feast.one_set if sets == 1 else feast.two_sets


def solve_feed(
    board: Board,
    have: dict[str, int],
    tribers: int,
    opts: FeedOptions = FeedOptions(),
    feast: FeastCard | None = None,
) -> tuple[Plan, list[Plan]]:
    """The best plan and, for each number of new tribers, the best plan making exactly that many."""
    cap = _check(board, have, tribers, opts, feast)
    r = rules()
    res = board.resources
    feast = feast if opts.final else None
    food = [n for n in res if res[n].food]
    total_food = sum(have.get(n, 0) for n in food)
    if total_food < tribers:
        eaten = {n: have[n] for n in food if have.get(n, 0)}
        treats = sum(have.get(n, 0) for n in food if res[n].treat)
        plan = _finish(board, have, eaten, opts, feast, Plan(
            fed=total_food, unfed=tribers - total_food, new_tribers=0, celebration="none", extra_treats=0,
            treats_eaten=treats, happiness=treats * r.treat_bonus))
        return plan, [plan]

    best_by_b: dict[int, Plan] = {}
    for sets in ((0, 1, 2) if feast else (0,)):
        held = {n: sets * k for n, k in feast.needs.items()} if feast else {}
        if any(res[n].perishable or have.get(n, 0) < k for n, k in held.items() if k):
            continue
        avail = {n: have.get(n, 0) - held.get(n, 0) for n in res}
        groups = {  # consumption order inside each class: perishables first
            "plain": [n for n in food if not res[n].treat and res[n].perishable]
            + [n for n in food if not res[n].treat and not res[n].perishable],
            "treat": [n for n in food if res[n].treat and res[n].perishable]
            + [n for n in food if res[n].treat and not res[n].perishable],
        }
        plain_total = sum(avail[n] for n in groups["plain"])
        treat_total = sum(avail[n] for n in groups["treat"])
        # spend perishable holiday substances and poisons first: they would be lost anyway
        holiday = sorted((n for n in res if res[n].holiday and avail[n] > 0), key=lambda n: not res[n].perishable)
        poison = sorted((n for n in res if res[n].poison and avail[n] > 0), key=lambda n: not res[n].perishable)
        for cel in CELEBRATIONS:
            if cel != "none" and not holiday or cel == "poison" and not poison:
                continue
            cf = 1 if cel == "food" else 0
            cel_points = {"none": 0, "food": r.celebration_with_food, "poison": r.celebration_with_poison}[cel]
            for b in range(0, max(0, cap - tribers) + 1):
                slots = tribers + r.food_per_new_triber * b + cf
                if slots > plain_total + treat_total:
                    break
                for u in range(0, min(plain_total, slots) + 1):
                    for t in range(max(0, slots - u), treat_total + 1):
                        in_repro = 0 if opts.treat_on_reproduction else max(0, r.food_per_new_triber * b - u)
                        eaten = _take(groups["plain"], avail, u)
                        for n, k in _take(groups["treat"], avail, t).items():
                            eaten[n] = k
                        if cel != "none":
                            eaten[holiday[0]] = eaten.get(holiday[0], 0) + 1
                        if cel == "poison":
                            eaten[poison[0]] = eaten.get(poison[0], 0) + 1
                        plan = _finish(board, have, eaten, opts, feast, Plan(
                            fed=tribers, unfed=0, new_tribers=b, celebration=cel, extra_treats=u + t - slots,
                            treats_eaten=t,
                            happiness=r.all_fed_bonus + cel_points + (t - in_repro) * r.treat_bonus))
                        old = best_by_b.get(b)
                        if old is None or plan.score > old.score:
                            best_by_b[b] = plan
    frontier = [best_by_b[b] for b in sorted(best_by_b)]
    best = max(frontier, key=lambda p: (p.score, -p.new_tribers))
    return best, frontier


def _take(names: list[str], avail: dict[str, int], count: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for n in names:
        k = min(count, avail[n])
        if k:
            out[n] = k
            count -= k
    return out


def _finish(board: Board, have: dict[str, int], eaten: dict[str, int], opts: FeedOptions,
            feast: FeastCard | None, plan: Plan) -> Plan:
    """Fill in leftovers, perishing, hunger, feast and the score of a plan."""
    res = board.resources
    left = {n: have.get(n, 0) - eaten.get(n, 0) for n in res}
    plan.eaten = {n: k for n, k in eaten.items() if k}
    plan.perished = {n: k for n, k in left.items() if k and res[n].perishable}
    plan.hunger_tokens = plan.unfed
    plan.hunger_points = hunger_points(opts.hunger_before, plan.unfed)
    plan.feast_sets = feast_sets(left, board, feast)
    plan.feast_points = feast_points(plan.feast_sets, feast)
    plan.kept_food = sum(k for n, k in left.items() if res[n].food and not res[n].perishable)
    plan.keep_points = Fraction(0) if opts.final else opts.keep_value * plan.kept_food
    plan.score = (plan.happiness + plan.hunger_points + plan.feast_points + plan.keep_points
                  + opts.triber_value * plan.new_tribers)
    return plan
