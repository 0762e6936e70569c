"""Placement ranking: a bijection onto 0..N-1, tiers contiguous, counts as the formula says."""
from __future__ import annotations

from math import comb

import numpy as np
import pytest

from gamesolver.games.ur import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import tier_counts
from tests.test_ur_reference import all_states, state_total


def masks(states, n=20):
    m = np.array([sum(1 << t for t in a) for a, _ in states], dtype=np.uint32)
    o = np.array([sum(1 << t for t in b) for _, b in states], dtype=np.uint32)
    return m, o


@pytest.mark.parametrize("k", [1, 2])
def test_rank_is_a_bijection_exhaustively(k: int) -> None:
    K = kernel(UrOptions(pieces=k))
    states = all_states(20, k)
    assert K.state_count == len(states) == state_total(20, k)
    m, o = masks(states)
    r = K.rank(m, o)
    assert np.array_equal(np.sort(r), np.arange(len(states)))
    m2, o2 = K.unrank(r)
    assert np.array_equal(m2, m) and np.array_equal(o2, o)


@pytest.mark.parametrize("k", [3, 5, 7])
def test_rank_round_trips_on_samples(k: int) -> None:
    K = kernel(UrOptions(pieces=k))
    rng = np.random.default_rng(k)
    r = rng.integers(0, K.state_count, 20000)
    m, o = K.unrank(r)
    assert not np.any(m & o)
    assert np.all(np.bitwise_count(m) <= k) and np.all(np.bitwise_count(o) <= k)
    assert np.array_equal(K.rank(m, o), r)
    # and from random placements
    perm = np.array([rng.permutation(20) for _ in range(2000)])
    a, b = rng.integers(0, k + 1, 2000), rng.integers(0, k + 1, 2000)
    mm = np.array([sum(1 << int(t) for t in p[:x]) for p, x in zip(perm, a)], dtype=np.uint32)
    oo = np.array([sum(1 << int(t) for t in p[x:x + y]) for p, x, y in zip(perm, a, b)], dtype=np.uint32)
    m3, o3 = K.unrank(K.rank(mm, oo))
    assert np.array_equal(m3, mm) and np.array_equal(o3, oo)


def test_state_counts_match_the_issue() -> None:
    assert kernel(UrOptions(pieces=3)).state_count == 1_163_031
    assert kernel(UrOptions(pieces=7)).state_count == 1_277_171_301


def test_tiers_are_contiguous_rank_ranges() -> None:
    o = UrOptions(pieces=2)
    K = kernel(o)
    off = K.tier_offsets()
    for (a, b), count in tier_counts(o).items():
        assert count == comb(20, a) * comb(20 - a, b)
        ranks = np.arange(off[a, b], off[a, b] + count)
        m, t = K.unrank(ranks)
        assert np.all(np.bitwise_count(m) == a) and np.all(np.bitwise_count(t) == b)


def test_rank_rejects_states_outside_the_encoding() -> None:
    K = kernel(UrOptions(pieces=2))
    with pytest.raises(ValueError):
        K.rank([0b11], [0b10])  # a tile held by both
    with pytest.raises(ValueError):
        K.rank([0b111], [0])  # three pieces with k = 2
    with pytest.raises(ValueError):
        K.unrank([K.state_count])
