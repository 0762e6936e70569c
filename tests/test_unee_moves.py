import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games import unee
from gamesolver.games.unee.graph import build_graph
from gamesolver.solver.encoding import _boards
from gamesolver.games.unee import _sow
from tests.unee_ref import OPTION_COMBOS, all_boards, graph_by_bfs, sow_ball_by_ball


@st.composite
def board_and_hole(draw):
    n = draw(st.integers(1, 4))
    board = draw(st.lists(st.integers(0, 30), min_size=2 * n, max_size=2 * n))
    hole = draw(st.integers(0, n - 1))
    board[hole] = max(board[hole], 1)
    return board, hole


@settings(max_examples=400, deadline=None)
@given(board_and_hole(), st.booleans(), st.booleans())
def test_sow_matches_ball_by_ball_reference(bh, skip_origin, capture_both):
    board, hole = bh
    assert _sow.sow_move(board, hole, skip_origin, capture_both, 4) == sow_ball_by_ball(
        board, hole, skip_origin, capture_both
    )


@pytest.mark.parametrize("skip_origin,capture_both", OPTION_COMBOS)
@pytest.mark.parametrize("holes_per_row,max_balls", [(2, 10), (3, 9)])
def test_whole_graph_matches_reference(holes_per_row, max_balls, skip_origin, capture_both):
    indptr, succ, hole, captured = _sow.build_sowing_graph(holes_per_row, max_balls, skip_origin, capture_both)
    boards = list(all_boards(2 * holes_per_row, max_balls))
    ranks = _boards.rank_boards(np.array(boards), max_balls)
    for board, r in zip(boards, ranks):
        want = []
        for h in range(holes_per_row):
            if board[h]:
                nxt, cap = sow_ball_by_ball(board, h, skip_origin, capture_both)
                want.append((h, int(_boards.rank_boards([nxt], max_balls)[0]), cap))
        got = [(int(hole[k]), int(succ[k]), int(captured[k])) for k in range(indptr[r], indptr[r + 1])]
        assert got == want, board


@pytest.mark.parametrize("skip_origin,capture_both", OPTION_COMBOS)
def test_reachable_part_matches_python_bfs(skip_origin, capture_both):
    options = unee.UneeOptions(holes_per_row=2, balls_per_hole=3, skip_origin=skip_origin,
                               capture_rows="both" if capture_both else "own")
    g = build_graph(options)
    ref = graph_by_bfs(unee.start_position(options).relative(), skip_origin, capture_both)
    mask = g.reachable()
    got = {(tuple(g.board(r)), side) for r in np.flatnonzero(mask) for side in (0, 1) if mask[r] >> side & 1}
    assert got == set(ref)


def sow_named(text, move, **opts):
    options = unee.UneeOptions(**opts)
    pos = unee.parse(text, options)
    hole = unee.parse_move(move, pos, options)
    after, captured = unee.sow_relative(pos.relative(), hole, options)
    return str(unee.Position.from_relative(after, pos.other)), captured


def test_lap_passes_the_origin_hole():
    # 7 balls from S-right: S-middle, S-left, N-left, N-middle, N-right, S-right, S-middle
    assert sow_named("0 0 0 / 0 0 7 S", "S-right") == ("1 1 1 / 1 2 1 N", 0)


def test_lap_skips_the_origin_hole_when_asked():
    # the 6th ball skips S-right and goes on to S-middle, the 7th to S-left
    assert sow_named("0 0 0 / 0 0 7 S", "S-right", skip_origin=True) == ("1 1 1 / 2 2 0 N", 0)


def test_north_sows_left_to_right_then_into_south_from_the_right():
    assert sow_named("0 0 4 / 0 0 0 N", "N-right") == ("1 0 0 / 1 1 1 S", 0)


def test_capture_of_exactly_four_in_the_movers_row():
    assert sow_named("1 0 0 / 3 1 0 S", "S-middle") == ("1 0 0 / 0 0 0 N", 4)


def test_no_capture_of_five():
    assert sow_named("1 0 0 / 4 1 0 S", "S-middle") == ("1 0 0 / 5 0 0 N", 0)


def test_no_capture_in_the_opponents_row_by_default():
    assert sow_named("3 0 0 / 1 0 0 S", "S-left") == ("4 0 0 / 0 0 0 N", 0)


def test_capture_in_the_opponents_row_with_both_rows():
    assert sow_named("3 0 0 / 1 0 0 S", "S-left", capture_rows="both") == ("0 0 0 / 0 0 0 N", 4)


def test_empty_row_means_game_over_with_no_moves():
    g = build_graph(unee.DEFAULT)
    r = g.rank(unee.parse("0 0 0 / 1 0 2 N"))
    assert g.moves(r) == []
    assert g.degree()[r] == 0


def test_graph_edges_name_the_move_played():
    g = build_graph(unee.DEFAULT)
    start = unee.start_position()
    r = g.rank(start)
    names = [unee.move_name("S", h, 3) for h, _, _ in g.moves(r)]
    assert names == ["S-right", "S-middle", "S-left"]
    after = [str(g.position(s, "N")) for _, s, _ in g.moves(r)]
    assert after == ["7 7 7 / 7 7 1 N", "7 7 7 / 7 1 7 N", "7 7 7 / 1 7 7 N"]
