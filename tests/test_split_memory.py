"""The split rule's bounds with memory of the first plies (``solver/retrograde/memory.py``,
``split.memory_bounds``, ``analyze --memory``): every interval holds the exact value (the plain
exhaustive search over histories ``tests.unee_solve_ref.first_repetition_value`` where it is quick,
else ``split.exact_value``, the alpha-beta search that test_unee_solve holds to it), never leaves
the positional bounds, and closes on the small starts where it was worked out."""
from __future__ import annotations

import json
from functools import lru_cache

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gamesolver.games.unee import split
from gamesolver.games.unee.graph import build_graph
from gamesolver.games.unee.notation import start_position
from gamesolver.games.unee.rules import UneeOptions
from gamesolver.games.unee.graph import terminal_payoffs
from gamesolver.games.unee.solution import solve_arrays
from gamesolver.solver.cli import cli
from gamesolver.solver.retrograde import _split
from gamesolver.solver.retrograde.memory import MemoryBounds
from tests.unee_solve_ref import first_repetition_value, plain_graph

VARIANTS = [UneeOptions(2, 1), UneeOptions(2, 2), UneeOptions(3, 1), UneeOptions(2, 2, True, "both"),
            UneeOptions(2, 3)]
# balls on the board up to which the exhaustive reference stays within a fraction of a second
EXHAUSTIVE = {UneeOptions(2, 1): 4, UneeOptions(2, 2): 5, UneeOptions(3, 1): 3,
              UneeOptions(2, 2, True, "both"): 6, UneeOptions(2, 3): 5}


@lru_cache(maxsize=None)
def solved(options: UneeOptions):
    g = build_graph(options)
    arr = solve_arrays(g, "split")
    return g, arr["lower"], arr["upper"], plain_graph(options.holes_per_row, options.max_balls,
                                                       options.skip_origin, options.capture_rows == "both")


def kernel_args(g):
    rindptr, pred, _ = g.reverse()
    return g.indptr, g.succ, g.captured, rindptr, pred


@pytest.mark.parametrize("options", VARIANTS[:4], ids=str)
def test_one_threshold_without_sinks_agrees_with_the_bisected_bounds(options):
    g, lower, upper, _ = solved(options)
    term, delta = terminal_payoffs(g), split.split_deltas(g)
    for t in range(len(g.offsets) - 1):
        lo, hi = int(g.offsets[t]), int(g.offsets[t + 1])
        none = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int16)
        for u in range(-t, t + 2):
            wins = _split.tier_wins_with_sinks(*kernel_args(g), lo, hi, term, delta, t, lower, upper, *none, u)
            assert np.array_equal(wins[0::2].astype(bool), lower[lo:hi] >= u), (t, u)
            assert np.array_equal(wins[1::2].astype(bool), -upper[lo:hi].astype(int) >= u), (t, u)


def test_the_kernel_refuses_sinks_outside_the_tier():
    g, lower, upper, _ = solved(UneeOptions(2, 1))
    term, delta = terminal_payoffs(g), split.split_deltas(g)
    lo, hi = int(g.offsets[4]), int(g.offsets[5])
    with pytest.raises(ValueError, match="outside the tier"):
        _split.tier_wins_with_sinks(*kernel_args(g), lo, hi, term, delta, 4, lower, upper,
                                    np.array([2 * (hi - lo)]), np.array([0], dtype=np.int16), 0)
    with pytest.raises(ValueError, match="not a range"):
        _split.tier_wins_with_sinks(*kernel_args(g), hi, lo, term, delta, 4, lower, upper,
                                    np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int16), 0)


def relative_board(g, x):
    return tuple(g.board(int(x)))


def exact(options, x):
    """The exact value of a fresh game from x, or None where both searches are too long."""
    g, lower, upper, pg = solved(options)
    if g.layer_of(x) <= EXHAUSTIVE[options]:
        return first_repetition_value(pg, options.holes_per_row, relative_board(g, x), None, {})
    try:
        return split.exact_value(g, lower, upper, int(x), effort=100_000)[0]
    except split.EffortLimitReached:
        return None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(VARIANTS), st.integers(0, 10**9), st.integers(0, 8), st.booleans())
def test_every_interval_holds_the_exhaustive_value(options, seed, depth, below):
    g, lower, upper, pg = solved(options)
    rng = np.random.default_rng(seed)
    x = int(rng.choice(np.flatnonzero(lower != upper)))
    value = exact(options, x)
    assume(value is not None)
    none = None if below else np.empty(0, dtype=np.int64)
    r, counts = split.memory_bounds(g, lower, upper, x, depth, 2000, none, effort=20_000)
    assert int(lower[x]) <= r.lower <= value <= r.upper <= int(upper[x])


@pytest.mark.parametrize("options", VARIANTS, ids=str)
def test_memory_without_a_depth_limit_is_the_exact_value(options):
    # with every layer below narrowed first, bottom-up, a search that never stops at a depth is exact
    g, lower, upper, pg = solved(options)
    closed = 0
    gaps = np.flatnonzero(lower != upper)
    for x in np.random.default_rng(5).choice(gaps, min(30, gaps.size), replace=False):
        value = exact(options, x)
        if value is None:
            continue
        r, counts = split.memory_bounds(g, lower, upper, int(x), 10**6, 3000, effort=20_000)
        if r.complete and not counts["stopped"]:
            assert r.lower == r.upper == value
            closed += 1
        else:
            assert r.lower <= value <= r.upper
    assert closed >= 5


@pytest.mark.parametrize("h, b, depth, lower, upper", [
    (2, 3, 3, -4, -4),   # positional -4..+2; the exhaustive search gives -4
    (3, 1, 4, -2, -2),   # positional -4..-2
    (2, 4, 20, 0, 0),    # positional -8..+8
    (2, 5, 16, -6, 4),   # positional -8..+8
])
def test_small_starts_narrow_to_the_worked_out_interval(h, b, depth, lower, upper):
    options = UneeOptions(h, b)
    g = build_graph(options)
    arr = solve_arrays(g, "split")
    r, counts = split.memory_bounds(g, arr["lower"], arr["upper"], g.rank(start_position(options)), depth, None)
    assert (r.lower, r.upper) == (lower, upper) and r.complete and counts["stopped"] == 0


def test_the_solve_limit_stops_with_sound_bounds():
    options = UneeOptions(2, 4)
    g = build_graph(options)
    arr = solve_arrays(g, "split")
    start = g.rank(start_position(options))
    r, counts = split.memory_bounds(g, arr["lower"], arr["upper"], start, 20, max_solves=50)
    assert not r.complete or counts["stopped"] > 0
    assert arr["lower"][start] <= r.lower <= 0 <= r.upper <= arr["upper"][start]
    assert r.solves + counts["solves"] <= 50 + 1


def test_cli_memory_narrows_the_start(tmp_path):
    result = CliRunner().invoke(cli, ["unee", "--holes", "2", "--balls", "4", "analyze", "start", "--rule", "split",
                                      "--memory", "20", "--cache", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output[result.output.index("{"):])
    assert answer["value"] == 0 and answer["exact"] and answer["memory"]["lower"] == answer["memory"]["upper"] == 0
    assert answer["memory"]["complete"] and answer["meaning"].startswith(
        "South can force exactly +0 from now on (with memory of the first 20 plies")
    text = CliRunner().invoke(cli, ["unee", "--holes", "2", "--balls", "4", "analyze", "start", "--rule", "split",
                                    "--memory", "3", "--cache", str(tmp_path)])
    assert text.exit_code == 0 and "South can force between" in text.output
    assert "(with memory of the first 3 plies:" in text.output and "positional bounds -8..+8" in text.output


@pytest.mark.parametrize("args, words", [
    (["--rule", "uncounted", "--memory", "3"], "--memory is for --rule split"),
    (["--rule", "split", "--memory", "3", "--exact"], "choose one of --exact and --memory"),
    (["--rule", "split", "--memory", "-1"], "-1"),
])
def test_cli_memory_errors_are_one_line(tmp_path, args, words):
    result = CliRunner().invoke(cli, ["unee", "--holes", "2", "--balls", "1", "analyze", "start", "--cache",
                                      str(tmp_path)] + args)
    assert result.exit_code == 2 and words in result.output and "Traceback" not in result.output
