"""RoyalUr rule sets: the encoding (counts, rank/unrank, tiers) and the slow reference solver.

The state counts are RoyalUr's published ones; the endgame values are J. Heled's hand-worked
fractions, which the float64 value iteration must reproduce to rounding error.
"""
from __future__ import annotations

import random
from fractions import Fraction

import pytest

from gamesolver.games.ur import royal, royal_encoding
from tests.royal_ref import random_position, solve


@pytest.mark.parametrize(
    "name,count",
    # RoyalUr.net's figures: positions with light to move, dark not yet the winner
    [("finkel", 137_892_016), ("blitz", 41_254_034), ("masters", 500_981_472)],
)
def test_state_counts_equal_royalurs(name, count):
    enc = royal_encoding.Encoding(royal.load_ruleset(name))
    assert enc.royalur_state_count() == count
    # our ranks leave out the positions where the mover has already won
    n = enc.rules.pieces
    assert enc.size == count - sum(enc.tier_size(n, b) for b in range(n))


@pytest.mark.parametrize("name,pieces", [("finkel", 2), ("masters", 2), ("blitz", 1)])
def test_rank_unrank_is_a_bijection(name, pieces):
    enc = royal_encoding.Encoding(royal.load_ruleset(name, pieces))
    seen = set()
    for r in range(enc.size):
        st = enc.unrank(r)
        assert enc.rank(st) == r
        seen.add(st)
    assert len(seen) == enc.size


@pytest.mark.parametrize("name", ["finkel", "blitz", "masters"])
def test_rank_round_trip_on_the_full_games(name):
    rules = royal.load_ruleset(name)
    enc = royal_encoding.Encoding(rules)
    rng = random.Random(name)
    for _ in range(1500):
        st = random_position(rules, rng).state()
        r = enc.rank(st)
        assert r in enc.tier_range((st.mine.scored, st.theirs.scored))
        assert enc.unrank(r) == st
        r = rng.randrange(enc.size)
        assert enc.rank(enc.unrank(r)) == r


def test_tiers_are_contiguous_and_solve_last_first():
    rules = royal.load_ruleset("blitz", 3)
    enc = royal_encoding.Encoding(rules)
    groups = enc.tier_groups_last_first()
    order = {t: g for g, group in enumerate(groups) for t in group}
    assert sorted(order) == sorted(enc.tiers)
    # the groups tile the ranks in solving order, each one contiguous range
    ranges = [enc.group_range(g) for g in groups]
    assert ranges[0].start == 0 and ranges[-1].stop == enc.size
    assert all(a.stop == b.start for a, b in zip(ranges, ranges[1:]))
    assert sum(len(enc.tier_range(t)) for g in groups for t in g) == enc.size
    rng = random.Random(3)
    for _ in range(2000):
        r = rng.randrange(enc.size)
        st = enc.unrank(r)
        t = (st.mine.scored, st.theirs.scored)
        assert r in enc.tier_range(t)
        for _roll, _p, ms in royal.outcomes(st, rules):
            for m in ms:
                if m.win:
                    continue
                after = (m.after.mine.scored, m.after.theirs.scored)
                # a successor's tier group was solved before this one, or is this one
                assert order[after] <= order[t]


def _value(sol, text, rules):
    return sol.values[sol.encoding.rank(royal.parse(text, rules).state())]


def test_heled_endgames():
    rules = royal.load_ruleset("finkel", 1)
    sol = solve(rules)
    # one piece each; A7/C7 is the last tile (needs a 1), A8/C8 the one before (needs a 2)
    assert _value(sol, "L:0/A7/0 D:0/C7/0 L", rules) == pytest.approx(4 / 7, abs=1e-13)
    assert _value(sol, "L:0/A8/0 D:0/C7/0 L", rules) == pytest.approx(116 / 161, abs=1e-13)
    assert _value(sol, "L:0/A7/0 D:0/C8/0 L", rules) == pytest.approx(74 / 161, abs=1e-13)
    # colours are symmetric: dark to move, needing a 2 against light's 1
    assert _value(sol, "L:0/A7/0 D:0/C8/0 D", rules) == pytest.approx(116 / 161, abs=1e-13)


def _move_value(sol, m):
    v = sol.values[sol.encoding.rank(m.after)]
    return v if m.extra_roll else 1 - v


def test_values_satisfy_the_bellman_equation():
    rules = royal.load_ruleset("masters", 2)
    sol = solve(rules)
    enc = sol.encoding
    rng = random.Random(11)
    for _ in range(300):
        st = enc.unrank(rng.randrange(enc.size))
        total = 0.0
        for _roll, p, ms in royal.outcomes(st, rules):
            if not ms:
                best = 1 - sol.values[enc.rank(st.swapped())]
            else:
                best = max(1.0 if m.win else _move_value(sol, m) for m in ms)
            total += float(p) * best
        assert sol.values[enc.rank(st)] == pytest.approx(total, abs=1e-13)
    assert all(0.0 <= v <= 1.0 for v in sol.values)


def test_dice_probabilities_sum_to_one():
    for name in royal.ruleset_names():
        assert sum(p for _, p in royal.load_ruleset(name).roll_probabilities) == Fraction(1)


def test_a_solve_that_cannot_fit_is_refused_before_it_starts(monkeypatch, tmp_path) -> None:
    from gamesolver.games.ur import royal
    from gamesolver.games.ur.royal_table import check_memory, royal_solve
    from gamesolver.solver.errors import InputError
    from gamesolver.solver.stochastic import outcomes

    masters = royal.load_ruleset("masters")
    assert 12 * 2**30 < check_memory(masters) < 16 * 2**30  # values 3.7 GiB, its largest group 118.5 million states
    monkeypatch.setattr(outcomes, "memory_bytes", lambda: 2 * 2**30)
    with pytest.raises(InputError, match="its values alone need 3.7 GiB, more than this machine's 2.0 GiB"):
        royal_solve(masters, tmp_path / "t")
    assert not (tmp_path / "t").exists()
