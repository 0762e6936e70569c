import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.solver.encoding import _boards
from tests.unee_ref import boards_in_rank_order


@pytest.mark.parametrize("holes,max_balls", [(2, 9), (4, 8), (6, 12)])
def test_rank_order_matches_reference_enumeration(holes, max_balls):
    boards = boards_in_rank_order(holes, max_balls)
    assert len(boards) == _boards.board_count(holes, max_balls)
    ranks = _boards.rank_boards(np.array(boards), max_balls)
    assert np.array_equal(ranks, np.arange(len(boards)))
    back = _boards.unrank_boards(ranks, holes, max_balls)
    assert np.array_equal(back, np.array(boards))


def test_default_variant_size_and_layers():
    assert _boards.board_count(6, 36) == 5_245_786
    off = _boards.layer_offsets(6, 36)
    assert off[0] == 0 and off[-1] == 5_245_786
    # a layer of s balls over 6 holes holds C(s+5, 5) boards
    from math import comb

    assert all(off[s + 1] - off[s] == comb(s + 5, 5) for s in range(37))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 5_245_785), min_size=1, max_size=200))
def test_default_variant_bijection_on_samples(ranks):
    boards = _boards.unrank_boards(ranks, 6, 36)
    assert (boards >= 0).all() and (boards.sum(axis=1) <= 36).all()
    assert np.array_equal(_boards.rank_boards(boards, 36), np.array(ranks))


def test_default_variant_layer_sums_exhaustive():
    ranks = np.arange(5_245_786)
    boards = _boards.unrank_boards(ranks, 6, 36)
    sums = boards.sum(axis=1)
    off = _boards.layer_offsets(6, 36)
    assert np.array_equal(np.searchsorted(off, ranks, side="right") - 1, sums)
    assert np.array_equal(_boards.rank_boards(boards, 36), ranks)


def test_rank_rejects_boards_outside_encoding():
    with pytest.raises(ValueError):
        _boards.rank_boards([[37, 0, 0, 0, 0, 0]], 36)
    with pytest.raises(ValueError):
        _boards.rank_boards([[-1, 0, 0, 0, 0, 0]], 36)
    with pytest.raises(ValueError):
        _boards.unrank_boards([5_245_786], 6, 36)
