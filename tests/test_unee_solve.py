import numpy as np
import pytest

from gamesolver.games import unee
from gamesolver.games.unee import solution as S
from gamesolver.games.unee.graph import build_graph
from tests.unee_ref import OPTION_COMBOS
from tests.unee_solve_ref import plain_graph, termination_thresholds, uncounted_values

SMALL = [(2, 3), (3, 2)]  # (holes per row, balls per hole): 12 balls on 2x2 and on 2x3 holes


def small_options(h, b, skip=False, both=False):
    return unee.UneeOptions(holes_per_row=h, balls_per_hole=b, skip_origin=skip, capture_rows="both" if both else "own")


@pytest.mark.parametrize("h,b", SMALL)
@pytest.mark.parametrize("skip,both", OPTION_COMBOS)
def test_uncounted_values_equal_reference(h, b, skip, both):
    if h == 3 and (skip or both):
        pytest.skip("the 2x3 board is checked with the default options here, all options under -m slow")
    opts = small_options(h, b, skip, both)
    g = build_graph(opts)
    value = S.solve_arrays(g, "uncounted")["value"]
    ref = uncounted_values(plain_graph(h, opts.max_balls, skip, both))
    for board, v in ref.items():
        assert value[g.rank(unee.Position.from_relative(board, "S"))] == v, board


@pytest.mark.parametrize("h,b", [(2, 2), (2, 3)])
@pytest.mark.parametrize("skip,both", OPTION_COMBOS)
def test_draw_thresholds_equal_reference(h, b, skip, both):
    if b == 3 and (skip or both):
        pytest.skip("12 balls checked with the default options here")
    opts = small_options(h, b, skip, both)
    g = build_graph(opts)
    arr = S.solve_arrays(g, "draw")
    ref, _ = termination_thresholds(plain_graph(h, opts.max_balls, skip, both))
    for board, (a, bb) in ref.items():
        r = g.rank(unee.Position.from_relative(board, "S"))
        got = (None if arr["a"][r] == -128 else int(arr["a"][r]), None if arr["b"][r] == -128 else int(arr["b"][r]))
        assert got == (a, bb), board


@pytest.mark.slow
@pytest.mark.parametrize("skip,both", OPTION_COMBOS)
def test_uncounted_3x12_all_options(skip, both):
    opts = small_options(3, 2, skip, both)
    g = build_graph(opts)
    value = S.solve_arrays(g, "uncounted")["value"]
    ref = uncounted_values(plain_graph(3, 12, skip, both))
    for board, v in ref.items():
        assert value[g.rank(unee.Position.from_relative(board, "S"))] == v


def play_out(g, value, follow, rank):
    """Follow the solver's stored choice, checking it keeps the value, and count plies until
    no move or an absolute repetition."""
    seen = {(rank, 0)}
    x, side, plies = rank, 0, 0
    while True:
        moves = g.moves(x)
        if not moves:
            return plies, False
        chosen = [(y, c) for h, y, c in moves if h == follow[x]]
        assert len(chosen) == 1
        y, c = chosen[0]
        assert c - int(value[y]) == value[x], "optimal play keeps the value"
        x, side, plies = y, 1 - side, plies + 1
        if (x, side) in seen:
            return plies, True
        seen.add((x, side))


@pytest.mark.parametrize("h,b", SMALL)
def test_remoteness_is_the_length_of_optimal_play(h, b):
    opts = small_options(h, b)
    g = build_graph(opts)
    arr = S.solve_arrays(g, "uncounted")
    value, rem, cyc = arr["value"], arr["remoteness"], arr["cycling"]
    assert (rem >= 0).all()
    rng = np.random.default_rng(7)
    for r in rng.choice(g.n_states, size=min(400, g.n_states), replace=False):
        plies, repeated = play_out(g, value, arr["follow"], int(r))
        assert plies == rem[r] and repeated == bool(cyc[r]), g.board(int(r))


@pytest.mark.parametrize("h,b", SMALL)
def test_winner_is_fastest_and_loser_slowest(h, b):
    opts = small_options(h, b)
    g = build_graph(opts)
    arr = S.solve_arrays(g, "uncounted")
    value, rem, cyc = arr["value"], arr["remoteness"], arr["cycling"]
    for x in range(g.n_states):
        moves = g.moves(x)
        if not moves:
            assert rem[x] == 0 and not cyc[x]
            continue
        v = int(value[x])
        assert v == max(c - int(value[y]) for _, y, c in moves)
        opt = [1 + int(rem[y]) for _, y, c in moves if c - int(value[y]) == v]
        if v > 0:
            assert rem[x] == min(opt)
        elif v < 0:
            assert rem[x] == max(opt)


def test_default_variant_best_moves_agree_with_successor_values():
    t = unee.solve("uncounted")
    g = build_graph(unee.DEFAULT)
    rng = np.random.default_rng(2009)
    for r in rng.choice(g.n_states, size=300, replace=False):
        pos = g.position(int(r), "S")
        v = t.probe_value(pos)
        infos = t.analyze(pos)
        if not infos:
            assert v == -pos.balls
            continue
        assert v == max(m.value for m in infos)
        best = t.best_moves(pos)
        assert best and all(m.value == v for m in best)


@pytest.mark.parametrize("h,b", [(2, 2), (2, 3), (3, 1)])
@pytest.mark.parametrize("skip,both", OPTION_COMBOS)
def test_split_bounds_equal_reference(h, b, skip, both):
    if b == 3 and (skip or both):
        pytest.skip("12 balls checked with the default options here")
    from tests.unee_solve_ref import split_bounds_reference

    opts = small_options(h, b, skip, both)
    g = build_graph(opts)
    arr = S.solve_arrays(g, "split")
    L, U = split_bounds_reference(plain_graph(h, opts.max_balls, skip, both), h)
    for board in L:
        r = g.rank(unee.Position.from_relative(board, "S"))
        assert (arr["lower"][r], arr["upper"][r]) == (L[board], U[board]), board


@pytest.mark.parametrize("h,b,smax", [(2, 2, 5), (3, 1, 3)])
def test_split_exact_search_lies_within_bounds(h, b, smax):
    from gamesolver.games.unee.split import exact_value
    from tests.unee_solve_ref import first_repetition_value

    opts = small_options(h, b)
    g = build_graph(opts)
    arr = S.solve_arrays(g, "split")
    pg = plain_graph(h, opts.max_balls)
    rng = np.random.default_rng(11)
    for r in rng.choice(g.n_states, size=min(150, g.n_states), replace=False):
        lo, hi = int(arr["lower"][r]), int(arr["upper"][r])
        value, _ = exact_value(g, arr["lower"], arr["upper"], int(r))
        assert lo <= value <= hi
    # on small boards the search equals a plain exhaustive search over histories
    checked = open_gap = 0
    for board in pg:
        if sum(board) > smax:
            continue
        r = g.rank(unee.Position.from_relative(board, "S"))
        value, _ = exact_value(g, arr["lower"], arr["upper"], r)
        assert value == first_repetition_value(pg, h, board), board
        checked += 1
        open_gap += arr["lower"][r] != arr["upper"][r]
    assert checked > 20
    if h == 2:  # there the small boards include positions where the bounds differ
        assert open_gap > 0


def test_split_exact_search_stops_at_its_effort_limit():
    from gamesolver.games.unee.split import EffortLimitReached, exact_value

    g = build_graph(small_options(3, 1))
    arr = S.solve_arrays(g, "split")
    gap = np.flatnonzero(arr["lower"] != arr["upper"])
    with pytest.raises(EffortLimitReached, match="stopped after 1 positions"):
        exact_value(g, arr["lower"], arr["upper"], int(gap[-1]), effort=1)
