"""Placement ranking: a bijection onto 0..N-1 (without the mirror) or onto the mirror pairs (with
it), tiers contiguous, counts as the formula says."""
from __future__ import annotations

from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ur import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import tier_counts
from gamesolver.solver.stochastic._engine import LOSS, WIN
from tests.test_engine import symmetric_options
from tests.test_ur_reference import all_states, mini_options, state_total


def masks(states, n=20):
    m = np.array([sum(1 << t for t in a) for a, _ in states], dtype=np.uint32)
    o = np.array([sum(1 << t for t in b) for _, b in states], dtype=np.uint32)
    return m, o


def mirrored(m: np.ndarray, twin: tuple[int, ...]) -> np.ndarray:
    """Tile masks with every tile moved to its mirror twin, written plainly."""
    out = np.zeros_like(m)
    for t, u in enumerate(twin):
        out |= ((m >> np.uint32(t)) & np.uint32(1)) << np.uint32(u)
    return out


def fixed_by_mirror(fixed: int, pairs: int, k: int) -> int:
    """States the mirror maps onto themselves: each pair of twin tiles is held whole by one side
    or empty; each tile on the axis is anyone's."""
    total = 0
    for fa in range(fixed + 1):
        for fb in range(fixed - fa + 1):
            for pa in range(pairs + 1):
                for pb in range(pairs - pa + 1):
                    if fa + 2 * pa <= k and fb + 2 * pb <= k:
                        total += comb(fixed, fa) * comb(fixed - fa, fb) * comb(pairs, pa) * comb(pairs - pa, pb)
    return total


def test_the_real_board_is_mirror_symmetric() -> None:
    twin = UrOptions().board.mirror
    names = UrOptions().board.names
    assert twin is not None
    assert {names[i]: names[j] for i, j in enumerate(twin) if i != j}["A4"] == "C4"
    assert sum(1 for i, j in enumerate(twin) if i == j) == 8  # the B column


@pytest.mark.parametrize("k", [1, 2])
def test_mirror_ranks_number_the_pairs_exhaustively(k: int) -> None:
    o = UrOptions(pieces=k)
    K = kernel(o)
    twin = o.board.mirror
    states = all_states(20, k)
    m, t = masks(states)
    fm, ft = mirrored(m, twin), mirrored(t, twin)
    r = K.rank(m, t)
    assert np.array_equal(r, K.rank(fm, ft))  # a state and its mirror image share a number
    pairs = {min((int(a) << 32) | int(b), (int(c) << 32) | int(d)) for a, b, c, d in zip(m, t, fm, ft)}
    assert K.state_count == len(pairs) == (len(states) + fixed_by_mirror(8, 6, k)) // 2
    assert np.array_equal(np.unique(r), np.arange(K.state_count))
    m2, t2 = K.unrank(np.arange(K.state_count))  # each number names the pair's smaller member
    assert {(int(a) << 32) | int(b) for a, b in zip(m2, t2)} == pairs


@pytest.mark.parametrize("k", [1, 2])
def test_rank_is_a_bijection_exhaustively(k: int) -> None:
    K = kernel(UrOptions(pieces=k, mirror=False))
    states = all_states(20, k)
    assert K.state_count == len(states) == state_total(20, k)
    m, o = masks(states)
    r = K.rank(m, o)
    assert np.array_equal(np.sort(r), np.arange(len(states)))
    m2, o2 = K.unrank(r)
    assert np.array_equal(m2, m) and np.array_equal(o2, o)


@pytest.mark.parametrize("k", [3, 5, 7])
def test_rank_round_trips_on_samples(k: int) -> None:
    K = kernel(UrOptions(pieces=k, mirror=False))
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
    assert kernel(UrOptions(pieces=3, mirror=False)).state_count == 1_163_031
    assert kernel(UrOptions(pieces=3)).full_state_count == 1_163_031
    assert kernel(UrOptions(pieces=3)).state_count == 587_859 == (1_163_031 + fixed_by_mirror(8, 6, 3)) // 2
    assert kernel(UrOptions(pieces=7, mirror=False)).state_count == 1_277_171_301
    assert (1_277_171_301 + fixed_by_mirror(8, 6, 7)) // 2 == 639_358_121


@pytest.mark.slow
def test_seven_pieces_mirrored_count() -> None:
    assert kernel(UrOptions(pieces=7)).state_count == 639_358_121


@pytest.mark.parametrize("k", [3, 4])
def test_mirror_ranks_round_trip_on_samples(k: int) -> None:
    o = UrOptions(pieces=k)
    K = kernel(o)
    rng = np.random.default_rng(k)
    r = rng.integers(0, K.state_count, 20000)
    m, t = K.unrank(r)
    assert np.array_equal(K.rank(m, t), r)
    assert np.array_equal(K.rank(mirrored(m, o.board.mirror), mirrored(t, o.board.mirror)), r)


@pytest.mark.parametrize("mirror", [False, True])
def test_tiers_are_contiguous_rank_ranges(mirror: bool) -> None:
    o = UrOptions(pieces=2, mirror=mirror)
    K = kernel(o)
    off = K.tier_offsets()
    for (a, b), full in tier_counts(o).items():
        assert full == comb(20, a) * comb(20 - a, b)
        count = tier_counts(o, full=False)[a, b]
        assert count == full if not mirror else full // 2 <= count <= full
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


def plain_rank(n: int, k: int, mine: int, theirs: int) -> int:
    """The numbering without the mirror, spelled out: tiers (a, b) in order, then colex of the
    mover's tiles, then colex of the other side's tiles counted among the tiles the mover leaves free."""
    m = [t for t in range(n) if mine >> t & 1]
    free = [t for t in range(n) if not mine >> t & 1]
    o = [free.index(t) for t in range(n) if theirs >> t & 1]
    before = sum(comb(n, x) * comb(n - x, y) for x in range(k + 1) for y in range(k + 1)
                 if (x, y) < (len(m), len(o)) and x + y <= n)
    colex = sum(comb(t, i + 1) for i, t in enumerate(m))
    return before + colex * comb(n - len(m), len(o)) + sum(comb(t, i + 1) for i, t in enumerate(o))


@settings(max_examples=40, deadline=None)
@given(k=st.sampled_from([1, 3, 4, 7]), seed=st.integers(0, 2**32 - 1))
def test_rank_equals_the_plain_numbering(k: int, seed: int) -> None:
    K = kernel(UrOptions(pieces=k, mirror=False))
    rng = np.random.default_rng(seed)
    perm = rng.permutation(20)
    a, b = rng.integers(0, k + 1, 2)
    m = sum(1 << int(t) for t in perm[:a])
    o = sum(1 << int(t) for t in perm[a:a + b])
    assert int(K.rank([m], [o])[0]) == plain_rank(20, k, m, o)


@pytest.fixture(scope="module")
def games(tmp_path_factory):
    d = tmp_path_factory.mktemp("codes")
    return {"real3": UrOptions(pieces=3), "real4": UrOptions(pieces=4), "real4-full": UrOptions(pieces=4, mirror=False),
            "symmetric3": symmetric_options(d, 3, mirror=True), "mini4": mini_options(d, 4)}


@settings(max_examples=60, deadline=None)
@given(which=st.sampled_from(["real3", "real4", "real4-full", "symmetric3", "mini4"]), where=st.floats(0, 1))
def test_outcome_codes_equal_each_successor_ranked_from_scratch(games, which: str, where: float) -> None:
    # The move generator ranks most successors from its parent's partial sums; here every
    # successor of every roll is ranked on its own through ``rank`` (mirror included).
    o = games[which]
    K = kernel(o)
    r = min(int(where * K.state_count), K.state_count - 1)
    (m,), (t,) = K.unrank([r])
    m, t = int(m), int(t)
    forts = o.board.mask(o.board.forts)
    if (m & forts) == forts or (t & forts) == forts:
        assert K.roll_outcomes(r, 0) == {WIN if (m & forts) == forts else LOSS}
        return
    for roll in range(K.roll_count):
        want = set()
        for m2, t2, flag in K.successors(m, t, roll):
            if (m2 & forts) == forts:
                want.add(WIN)
            elif flag == 1:
                want.add(int(K.rank([m2], [t2])[0]))
            else:
                want.add(-int(K.rank([t2], [m2])[0]) - 1)
        assert K.roll_outcomes(r, roll) == want
