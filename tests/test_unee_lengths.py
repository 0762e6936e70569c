"""Game-length sampling for Ünee: the Cython game player against a plain Python player, the
statistics, the histogram and the 150-move claim check."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games import unee
from gamesolver.games.claims import STATUSES
from gamesolver.games.unee import lengths as L
from gamesolver.games.unee.graph import build_graph
from gamesolver.solver.retrograde import _play
from gamesolver.solver.errors import InputError
from tests.unee_ref import OPTION_COMBOS, sow_ball_by_ball
from tests.unee_solve_ref import plain_graph, uncounted_values

SMALL = unee.UneeOptions(holes_per_row=2, balls_per_hole=3)  # 12 balls on 2 x 2 holes
END = {"no-move": _play.END_NO_MOVE, "repetition": _play.END_REPETITION, "cap": _play.END_CAP}


def opts(h, b, skip=False, both=False):
    return unee.UneeOptions(holes_per_row=h, balls_per_hole=b, skip_origin=skip, capture_rows="both" if both else "own")


def ref_play(board, side, choose, options, max_plies=10**9):
    """Play one game on relative boards with a Python set of (board, side) seen so far.

    ``choose(side, board, legal holes)`` picks the mover's relative hole. Returns
    (plies, end name, [South captured, North captured], holes played, final (board, side))."""
    n = options.holes_per_row
    board = tuple(board)
    seen = {(board, side)}
    caps = [0, 0]
    holes = []
    while True:
        legal = [h for h in range(n) if board[h]]
        if not legal:
            return len(holes), "no-move", caps, holes, (board, side)
        if len(holes) >= max_plies:
            return len(holes), "cap", caps, holes, (board, side)
        h = choose(side, board, legal)
        assert h in legal
        nxt, cap = sow_ball_by_ball(board, h, options.skip_origin, options.capture_both)
        caps[side] += cap
        holes.append(h)
        board, side = tuple(nxt), 1 - side
        if (board, side) in seen:
            return len(holes), "repetition", caps, holes, (board, side)
        seen.add((board, side))


def kernel_games(options, board, side, games, seed, policies, mask=None, max_plies=10**6):
    g = build_graph(options)
    rank = g.rank(unee.Position.from_relative(list(board), "S"))
    if mask is None:
        mask = np.ones(g.n_edges, dtype=np.uint8)
    out = _play.play_games(g.indptr, g.succ, g.captured, rank, side, games, seed, policies[0], policies[1],
                           mask, max_plies, True)
    return g, out


def game_holes(g, out, i):
    return [int(h) for h in g.hole[out["edges"][out["offsets"][i]:out["offsets"][i + 1]]]]


def check_same_game(g, out, i, ref):
    plies, end, caps, holes, (board, side) = ref
    assert int(out["plies"][i]) == plies
    assert int(out["end"][i]) == END[end]
    assert [int(out["south_captured"][i]), int(out["north_captured"][i])] == caps
    assert game_holes(g, out, i) == holes
    assert (tuple(g.board(int(out["final_state"][i]))), int(out["final_side"][i])) == (board, side)


@st.composite
def positions(draw, h, max_balls):
    board = [0] * (2 * h)
    for _ in range(draw(st.integers(0, max_balls))):
        board[draw(st.integers(0, 2 * h - 1))] += 1
    return board, draw(st.integers(0, 1))


# ---------------------------------------------------------------- deterministic play


@pytest.mark.parametrize("skip,both", OPTION_COMBOS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_first_legal_move_games_equal_reference(skip, both, data):
    """With every edge marked, 'first marked' is 'lowest non-empty hole': no randomness at all."""
    o = opts(2, 3, skip, both)
    board, side = data.draw(positions(2, o.max_balls))
    cap = data.draw(st.sampled_from([1, 3, 10**6]))
    g, out = kernel_games(o, board, side, 2, 5, (_play.FIRST_MARKED, _play.FIRST_MARKED), max_plies=cap)
    ref = ref_play(board, side, lambda s, b, legal: legal[0], o, max_plies=cap)
    check_same_game(g, out, 0, ref)
    check_same_game(g, out, 1, ref)


def reference_values(o):
    return uncounted_values(plain_graph(o.holes_per_row, o.max_balls, o.skip_origin, o.capture_both))


def value_array(g, values):
    arr = np.zeros(g.n_states, dtype=np.int8)
    for board, v in values.items():
        arr[g.rank(unee.Position.from_relative(board, "S"))] = v
    return arr


def optimal_holes(values, o, board):
    """Relative holes whose move keeps the mover's value, straight from the definition."""
    out = []
    for h in range(o.holes_per_row):
        if board[h]:
            nxt, cap = sow_ball_by_ball(board, h, o.skip_origin, o.capture_both)
            if cap - values[tuple(nxt)] == values[tuple(board)]:
                out.append(h)
    return out


@pytest.mark.parametrize("h,b", [(2, 3), (3, 2)])
def test_optimal_mask_equals_definition(h, b):
    o = opts(h, b)
    g = build_graph(o)
    values = reference_values(o)
    mask = _play.optimal_mask(g.indptr, g.succ, g.captured, value_array(g, values))
    for board in values:
        x = g.rank(unee.Position.from_relative(board, "S"))
        lo, hi = int(g.indptr[x]), int(g.indptr[x + 1])
        marked = [int(g.hole[k]) for k in range(lo, hi) if mask[k]]
        assert marked == optimal_holes(values, o, board), board
        # every state with a move has an optimal move
        assert (hi == lo) or marked


def test_table_mask_equals_kernel_mask_from_reference_values():
    g = build_graph(SMALL)
    table = unee.solve("uncounted", SMALL)
    assert np.array_equal(L.optimal_mask(g, table),
                          _play.optimal_mask(g.indptr, g.succ, g.captured, value_array(g, reference_values(SMALL))))


@settings(max_examples=30, deadline=None)
@given(pos=positions(2, 12))
def test_first_optimal_move_games_equal_reference(pos):
    board, side = pos
    values = _values_small()
    g = build_graph(SMALL)
    mask = _play.optimal_mask(g.indptr, g.succ, g.captured, value_array(g, values))
    _, out = kernel_games(SMALL, board, side, 1, 9, (_play.FIRST_MARKED, _play.FIRST_MARKED), mask)
    ref = ref_play(board, side, lambda s, b, legal: optimal_holes(values, SMALL, b)[0], SMALL)
    check_same_game(g, out, 0, ref)


_VALUES: dict = {}


def _values_small():
    if not _VALUES:
        _VALUES.update(reference_values(SMALL))
    return _VALUES


def test_single_move_positions_are_forced():
    """On one hole a row every side has at most one move, so every policy plays the same game."""
    o = opts(1, 5)
    for board in ([5, 5], [4, 0], [3, 6], [0, 7]):
        ref = ref_play(board, 0, lambda s, b, legal: legal[0], o)
        for pol in (_play.RANDOM, _play.RANDOM_MARKED, _play.FIRST_MARKED):
            g, out = kernel_games(o, board, 0, 3, 11, (pol, _play.RANDOM))
            for i in range(3):
                check_same_game(g, out, i, ref)


# ---------------------------------------------------------------- random play


@pytest.mark.parametrize("policies", [("random", "random"), ("optimal", "random"), ("random", "optimal")])
def test_recorded_games_replay_legally(policies):
    """Every recorded game is a legal game in the reference: same captures, same end, and it
    stops exactly at the first repetition or at an empty row; optimal sides keep their value."""
    values = _values_small()
    out = L.play_sample(SMALL, policies[0], policies[1], games=300, seed=3, record=True)
    g = build_graph(SMALL)
    start = tuple(unee.start_position(SMALL).relative())
    for i in range(300):
        holes = iter(game_holes(g, out, i))

        def replay(side, board, legal):
            h = next(holes)
            if policies[side] == "optimal":
                assert h in optimal_holes(values, SMALL, board)
            return h

        ref = ref_play(start, 0, replay, SMALL)
        check_same_game(g, out, i, ref)
        plies, end, caps, _, (board, side) = ref
        if end == "no-move":  # the player who moved last takes what is left
            caps[1 - side] += sum(board)
        assert [int(L.final_scores(SMALL, out)[k][i]) for k in (0, 1)] == caps


@pytest.mark.parametrize("options", [SMALL, opts(3, 2), opts(2, 2)])
def test_optimal_sides_secure_the_start_value(options):
    """Uncounted rule: both sides optimal gives South exactly the start's value in every game;
    South optimal against random gives at least that, North optimal at most that."""
    table = unee.solve("uncounted", options)
    v = table.probe_value(unee.start_position(options))
    for scenario, test in (("optimal", np.equal), ("south-optimal", np.greater_equal),
                           ("north-optimal", np.less_equal)):
        out = L.play_sample(options, *L.SCENARIOS[scenario], games=400, seed=4)
        s, n = L.final_scores(options, out)
        assert np.all(test(s - n, v)), scenario
        assert np.all(out["end"] != _play.END_CAP)


def ks_distance(a, b):
    grid = np.union1d(a, b)
    fa = np.searchsorted(np.sort(a), grid, side="right") / len(a)
    fb = np.searchsorted(np.sort(b), grid, side="right") / len(b)
    return float(np.abs(fa - fb).max())


@pytest.mark.parametrize("policies", [("random", "random"), ("optimal", "optimal"), ("optimal", "random")])
def test_length_distribution_agrees_with_reference(policies):
    """Seeded samples from the kernel and from the Python player with Python's RNG: the two
    length distributions agree (two-sample Kolmogorov-Smirnov at the 0.1 % level), and so do
    the South capture means."""
    values = _values_small()
    rng = random.Random(2024)

    def choose(side, board, legal):
        if policies[side] == "optimal":
            legal = optimal_holes(values, SMALL, board)
        return rng.choice(legal)

    start = tuple(unee.start_position(SMALL).relative())
    ref = [ref_play(start, 0, choose, SMALL) for _ in range(1500)]
    out = L.play_sample(SMALL, policies[0], policies[1], games=6000, seed=17)
    ref_plies = np.array([r[0] for r in ref])
    n, m = len(ref_plies), len(out["plies"])
    assert ks_distance(ref_plies, out["plies"]) < 1.95 * ((n + m) / (n * m)) ** 0.5
    ref_caps = np.array([r[2][0] for r in ref], dtype=float)
    se = (ref_caps.var() / n + out["south_captured"].var() / m) ** 0.5
    assert abs(ref_caps.mean() - out["south_captured"].mean()) < 4 * se + 1e-9


def test_first_move_is_uniform():
    out = L.play_sample(L.DEFAULT, "random", "random", games=30000, seed=8, record=True, max_plies=1)
    g = build_graph(L.DEFAULT)
    first = g.hole[out["edges"][out["offsets"][:-1]]]
    counts = np.bincount(first, minlength=3)
    assert out["plies"].max() == 1 and set(out["end"]) == {_play.END_CAP}
    # each hole 1/3: binomial sd is about 82 games
    assert np.all(np.abs(counts - 10000) < 400), counts


def test_seed_reproducible_and_games_independent_of_sample_size():
    a = L.play_sample(SMALL, "random", "optimal", games=500, seed=99)
    b = L.play_sample(SMALL, "random", "optimal", games=500, seed=99)
    c = L.play_sample(SMALL, "random", "optimal", games=200, seed=99)
    d = L.play_sample(SMALL, "random", "optimal", games=500, seed=100)
    for key in ("plies", "end", "south_captured", "north_captured", "final_state", "final_side"):
        assert np.array_equal(a[key], b[key])
        assert np.array_equal(a[key][:200], c[key])
    assert not np.array_equal(a["plies"], d["plies"])


# ---------------------------------------------------------------- statistics, plot, claim


def test_length_statistics_figures():
    s = L.length_statistics(SMALL, "south-optimal", games=2000, seed=5, threshold=20)
    again = L.length_statistics(SMALL, "south-optimal", games=2000, seed=5, threshold=20)
    assert s.as_dict() | {"seconds": 0} == again.as_dict() | {"seconds": 0}
    plies = L.play_sample(SMALL, "optimal", "random", games=2000, seed=5)["plies"]
    assert np.array_equal(s.plies, plies)
    assert s.median == float(np.median(plies))
    assert s.q1 <= s.median <= s.q3
    assert s.share_over == np.mean(plies > 20)
    assert s.share_over_each == np.mean(plies > 40)
    assert sum(s.ends.values()) == 2000 and s.ends["cap"] == 0
    lo, hi = s.share_interval()
    assert lo <= s.share_over <= hi
    json.dumps(s.as_dict())


def test_histogram_png(tmp_path):
    stats = [L.length_statistics(SMALL, name, games=300, seed=1) for name in ("random", "optimal")]
    path = L.histogram(stats, tmp_path / "h.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(InputError, match="cannot write"):
        L.histogram(stats, tmp_path / "missing" / "h.png")


def test_bad_input():
    with pytest.raises(InputError, match="unknown scenario"):
        L.length_statistics(SMALL, "greedy")
    with pytest.raises(InputError, match="number of games"):
        L.length_statistics(SMALL, "random", games=0)
    with pytest.raises(InputError, match="unknown policy"):
        L.play_sample(SMALL, "clever", "random")
    with pytest.raises(ValueError):
        g = build_graph(SMALL)
        _play.play_games(g.indptr, g.succ, g.captured, 0, 0, 1, 1, _play.RANDOM_MARKED, _play.RANDOM, None)


def test_claim_check(tmp_path):
    from gamesolver.games.claims import find_claim

    r = find_claim("unee-games-over-150-moves").run(plots_dir=tmp_path)
    assert r.status in STATUSES
    rnd = r.figures["samples"]["random"]
    assert rnd["games"] == L.CLAIM_GAMES["random"] and rnd["seed"] == L.DEFAULT_SEED
    lo, hi = rnd["share_over_interval"]
    assert r.figures["readings"]["plies/random"]["verdict"] == (
        "verified" if lo > 0.5 else "refuted" if hi < 0.5 else "undetermined")
    samples = r.figures["samples"]
    assert sum(samples["optimal"]["ends"].values()) == L.CLAIM_GAMES["optimal"]
    assert all(f["ends"]["cap"] == 0 for f in samples.values())
    value = unee.solve("uncounted").probe_value(unee.start_position())
    assert samples["optimal"]["mean_difference"] == value
    assert samples["south-optimal"]["outcomes"]["north"] == 0 or value < 0
    assert (tmp_path / L.HISTOGRAM_NAME).stat().st_size > 1000
    json.dumps(r.figures)
