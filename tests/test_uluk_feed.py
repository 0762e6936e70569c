"""The Feeding phase optimum against brute force over every item and role, and seeded random plans."""
from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.uluk.feed import FeedOptions, feast_points, hunger_points, parse_have, solve_feed
from gamesolver.games.uluk.rules import Board, FeastCard, Resource, load_board, load_feast
from gamesolver.solver.errors import InputError

SMALL = Board("test", {
    "bread": Resource("bread", food=True, perishable=True),
    "jerky": Resource("jerky", food=True),
    "nuts": Resource("nuts", food=True),  # durable like jerky, but not on the feast card
    "candy": Resource("candy", food=True, treat=True),
    "sweet": Resource("sweet", food=True, treat=True, perishable=True),
    "candle": Resource("candle", holiday=True),
    "brew": Resource("brew", poison=True),
}, (), False)
CARD = FeastCard("test", {"jerky": 1, "candle": 1}, 3, 7, False)


def brute(board, have, tribers, opts, feast, cap=10):
    """Best score for each number of new tribers: every eaten vector and every role of every treat."""
    res = board.resources
    food = [n for n in res if res[n].food]
    total = sum(have.get(n, 0) for n in food)
    feast = feast if opts.final else None

    def score(eaten, happiness, unfed, b):
        left = {n: have.get(n, 0) - eaten.get(n, 0) for n in res}
        sets = 0
        if feast:
            sets = min(2, *(0 if res[n].perishable else left[n] // k for n, k in feast.needs.items()))
        kept = sum(left[n] for n in food if not res[n].perishable)
        keep = 0 if opts.final else opts.keep_value * kept
        unforgiven = max(0, opts.hunger_before + unfed - 1) - max(0, opts.hunger_before - 1)
        return happiness - 3 * unforgiven + feast_points(sets, feast) + keep + opts.triber_value * b

    if total < tribers:
        treats = sum(have.get(n, 0) for n in food if res[n].treat)
        return {0: score({n: have.get(n, 0) for n in food}, treats, tribers - total, 0)}
    best: dict[int, Fraction] = {}
    for counts in itertools.product(*(range(have.get(n, 0) + 1) for n in food)):
        eaten = dict(zip(food, counts))
        u = sum(k for n, k in eaten.items() if not res[n].treat)
        t = sum(k for n, k in eaten.items() if res[n].treat)
        holidays = [n for n in res if res[n].holiday and have.get(n, 0)]
        poisons = [n for n in res if res[n].poison and have.get(n, 0)]
        options = [("none", None, None)] + [("food", h, None) for h in holidays] + \
                  [("poison", h, p) for h in holidays for p in poisons]
        for cel, h, p in options:
            cf = int(cel == "food")
            spent = dict(eaten)
            for extra in (h, p):
                if extra:
                    spent[extra] = spent.get(extra, 0) + 1
            for b in range(cap - tribers + 1):
                for tr in range(min(t, 2 * b) + 1):  # treats spent on reproduction
                    if 2 * b - tr > u:
                        continue
                    rest_plain = u - (2 * b - tr)
                    if rest_plain > tribers + cf or rest_plain + t - tr < tribers + cf:
                        continue
                    bonus = t if opts.treat_on_reproduction else t - tr
                    happy = 1 + {"none": 0, "food": 6, "poison": 3}[cel] + bonus
                    s = score(spent, happy, 0, b)
                    if b not in best or s > best[b]:
                        best[b] = s
    return best


counts = st.integers(0, 3)


@given(st.fixed_dictionaries({n: counts for n in SMALL.resources}), st.integers(0, 4), st.booleans(),
       st.integers(0, 2), st.sampled_from([Fraction(0), Fraction(1, 2), Fraction(2)]),
       st.sampled_from([Fraction(0), Fraction(3, 2)]), st.booleans())
@settings(max_examples=60, deadline=None)
def test_optimum_matches_brute_force(have, tribers, final, hunger, triber_value, keep_value, treat_repro):
    opts = FeedOptions(final=final, hunger_before=hunger, triber_value=triber_value, keep_value=keep_value,
                       treat_on_reproduction=treat_repro, max_tribers=6)
    best, frontier = solve_feed(SMALL, have, tribers, opts, CARD)
    ref = brute(SMALL, have, tribers, opts, CARD, cap=6)
    assert {p.new_tribers: p.score for p in frontier} == ref
    assert best.score == max(ref.values())
    # the reported plan is consistent with what it eats
    for p in frontier:
        for n, k in p.eaten.items():
            assert 0 < k <= have[n]


def test_hand_worked_plans():
    board = load_board()
    # two tribers, three baked mgobu and a holiday substance: feed 2 (+1), celebrate with food (+6)
    best, _ = solve_feed(board, parse_have("baked mgobu=3, fermented zork=1", board), 2)
    assert best.score == 7 and best.celebration == "food" and best.eaten["baked mgobu"] == 3
    # no food left for the celebration, so poison instead: 1 + 3
    best, _ = solve_feed(board, parse_have("baked mgobu=2, fermented zork=1, tlon brew=1", board), 2)
    assert best.score == 4 and best.celebration == "poison"
    # not enough food: every piece is eaten, no +1, Hunger tokens (the first is forgiven at the end)
    best, _ = solve_feed(board, parse_have("salted fnord=1", board), 3, FeedOptions(hunger_before=0))
    assert (best.fed, best.unfed, best.happiness, best.hunger_points) == (1, 2, 1, -3)
    assert hunger_points(2, 2) == -6 and hunger_points(0, 1) == 0
    # extra treats are eaten for +1 each when nothing else wants them
    best, _ = solve_feed(board, parse_have("salted fnord=5", board), 2)
    assert best.score == 1 + 5 and best.extra_treats == 3


def test_random_plans_never_beat_the_optimum():
    """Seeded random search over legal plans: it never exceeds the optimum and finds it."""
    rng = random.Random(2026)
    have = {"bread": 3, "jerky": 2, "nuts": 0, "candy": 2, "sweet": 1, "candle": 1, "brew": 1}
    opts = FeedOptions(final=True, triber_value=Fraction(1, 2), max_tribers=5)
    best, _ = solve_feed(SMALL, have, 2, opts, CARD)
    found = Fraction(-100)
    for _ in range(3000):
        sample = {n: rng.randint(0, have[n]) for n in ("bread", "jerky", "candy", "sweet")}
        b = rng.randint(0, 3)
        cel = rng.choice(["none", "food", "poison"])
        found = max(found, _plan_value(sample, b, cel, have, opts))
    assert found <= best.score
    assert found == best.score


def _plan_value(eaten, b, cel, have, opts):
    res = SMALL.resources
    u = sum(k for n, k in eaten.items() if not res[n].treat)
    t = sum(k for n, k in eaten.items() if res[n].treat)
    cf = int(cel == "food")
    slots = 2 + 2 * b + cf
    if u > slots or u + t < slots:
        return Fraction(-100)
    in_repro = max(0, 2 * b - u)
    left = {n: have[n] - eaten.get(n, 0) for n in res}
    if cel != "none":
        left["candle"] -= 1
    if cel == "poison":
        left["brew"] -= 1
    sets = min(2, left["jerky"], left["candle"])
    return 1 + {"none": 0, "food": 6, "poison": 3}[cel] + t - in_repro + feast_points(sets, CARD) + opts.triber_value * b


def test_example_files_are_marked_and_load():
    board, card = load_board(), load_feast()
    assert board.example and card.example
    assert board.resources["salted fnord"].treat and board.resources["baked mgobu"].perishable


def test_bad_input():
    board = load_board()
    with pytest.raises(InputError):
        parse_have("gold=2", board)
    with pytest.raises(InputError):
        parse_have("baked mgobu=-1", board)
    with pytest.raises(InputError):
        parse_have("baked mgobu", board)
    with pytest.raises(InputError):
        solve_feed(board, {}, 11)
    with pytest.raises(InputError):
        solve_feed(board, {}, 2, FeedOptions(triber_value=Fraction(-1)))
