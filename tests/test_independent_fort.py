"""The engine's proven intervals against a second implementation of the fort rules
(tests/independent_fort.py, written from the rules' text alone), on every state of the 8-tile test
board: the independent values must lie inside the intervals, and with a rule deliberately changed
they must not."""
from __future__ import annotations

import numpy as np
import pytest

from gamesolver.games.ur import kernel
from gamesolver.games.ur.provenance import of_table
from gamesolver.games.ur.solve import solve
from tests.independent_fort import Board, Rules
from tests.independent_fort import solve as independent_solve
from tests.test_ur_reference import mini_options

PIECES = 4  # the fewest that can hold the four forts
SLACK = 1e-9  # float64 against float32 intervals rounded outward: far below any rule's effect


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    """The engine's proven table of the test board, and its states as tile sets."""
    d = tmp_path_factory.mktemp("independent")
    o = mini_options(d, PIECES)
    table = solve(o, d / "t", tolerance=3e-7, threads=2, proof=True, width=1e-6, show_progress=False)
    assert of_table(table).proven
    K = kernel(o)
    ms, ts = K.unrank(np.arange(K.state_count))
    if "lower" in table.arrays:
        lower, upper = np.asarray(table["lower"], np.float64), np.asarray(table["upper"], np.float64)
    else:
        v, bound = np.asarray(table["value"], np.float64), of_table(table).bound
        lower, upper = v - bound, v + bound
    board = Board.read(o.board_file)
    sets = [(frozenset(i for i in range(len(board.names)) if m >> i & 1),
             frozenset(i for i in range(len(board.names)) if t >> i & 1)) for m, t in zip(ms.tolist(), ts.tolist())]
    return board, sets, lower, upper


def outside(board, sets, lower, upper, variant: str = "") -> tuple[int, int, float]:
    """(states compared, states outside their interval, the largest distance outside)."""
    V = independent_solve(Rules(board, PIECES, variant))
    compared = missed = 0
    worst = 0.0
    for s, lo, hi in zip(sets, lower, upper):
        if s not in V:  # a finished game: nobody moves there
            continue
        compared += 1
        gap = max(lo - V[s], V[s] - hi, 0.0)
        if gap > SLACK:
            missed += 1
            worst = max(worst, gap)
    return compared, missed, worst


def test_the_independent_values_lie_in_the_proven_intervals(proven) -> None:
    board, sets, lower, upper = proven
    compared, missed, worst = outside(board, sets, lower, upper)
    assert compared > 0.9 * len(sets) and missed == 0, (missed, worst)
    assert float(np.max(upper - lower)) < 1e-5
    assert float(np.max(np.abs(lower))) > 0.3  # wins and losses happen: the comparison means something


@pytest.mark.parametrize("variant", ["captures-stop-always", "no-ishtar"])
def test_a_rule_changed_on_purpose_is_caught(proven, variant: str) -> None:
    board, sets, lower, upper = proven
    _, missed, worst = outside(board, sets, lower, upper, variant)
    assert missed > 0 and worst > 1e-4, (variant, missed, worst)
