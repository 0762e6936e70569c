"""The dice-game engine (solver/stochastic/_engine) over the fort rules' move generator (games/ur/_fort):
the mirror reduction equal to the full solve. The generator itself is held to the slow Python
reference in test_ur_moves.py and its values in test_ur_values.py."""
from __future__ import annotations

import json

import numpy as np
import pytest

from gamesolver.games.ur import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import solve
from tests.test_ur_reference import mini_options

# A 9-tile board that the left-right mirror maps onto itself (the 8-tile test board does not).
SYMMETRIC_BOARD = {
    "name": "symmetric test board",
    "tiles": [
        {"name": "A1", "at": [0, 1], "section": "earth", "roles": ["fort"], "neighbours": ["B1", "A2"]},
        {"name": "B1", "at": [1, 1], "section": "earth", "roles": ["entry"], "neighbours": ["A1", "C1", "B2"]},
        {"name": "C1", "at": [2, 1], "section": "earth", "roles": ["fort"], "neighbours": ["B1", "C2"]},
        {"name": "A2", "at": [0, 2], "section": "earth", "roles": ["royal"], "neighbours": ["A1", "B2"]},
        {"name": "B2", "at": [1, 2], "section": "earth", "roles": ["ishtar"], "neighbours": ["B1", "A2", "C2", "B3"]},
        {"name": "C2", "at": [2, 2], "section": "earth", "roles": ["royal"], "neighbours": ["C1", "B2"]},
        {"name": "A3", "at": [0, 3], "section": "heaven", "roles": ["fort"], "neighbours": ["B3"]},
        {"name": "B3", "at": [1, 3], "section": "bridge", "roles": ["marduk"], "neighbours": ["B2", "A3", "C3"]},
        {"name": "C3", "at": [2, 3], "section": "heaven", "roles": ["fort"], "neighbours": ["B3"]},
    ],
}


def symmetric_options(directory, pieces: int, mirror: bool) -> UrOptions:
    path = directory / "symmetric_board.json"
    path.write_text(json.dumps(SYMMETRIC_BOARD))
    return UrOptions(pieces=pieces, board_file=str(path), mirror=mirror)


def test_a_board_without_the_symmetry_numbers_every_state(tmp_path) -> None:
    o = mini_options(tmp_path, 3)
    assert o.board.mirror is None and not o.uses_mirror and not kernel(o).mirrored
    assert kernel(o).state_count == kernel(o).full_state_count


@pytest.mark.parametrize("pieces", [2, 4])
def test_mirror_reduction_gives_the_full_solves_values(tmp_path, pieces: int) -> None:
    full_o = symmetric_options(tmp_path, pieces, mirror=False)
    half_o = symmetric_options(tmp_path, pieces, mirror=True)
    full_k, half_k = kernel(full_o), kernel(half_o)
    assert half_o.uses_mirror and half_k.state_count < full_k.state_count
    full = solve(full_o, tmp_path / "full", tolerance=3e-7, threads=2)
    half = solve(half_o, tmp_path / "half", tolerance=3e-7, threads=2)
    ms, ts = full_k.unrank(np.arange(full_k.state_count))
    mapped = np.asarray(half["value"])[half_k.rank(ms, ts)].astype(np.float32)
    # the mirrored table, spread over every state, solves the full game's equations as closely as
    # the full solve's own table does (largest change of a sweep 2.7e-7 to 3.0e-7 for both here)
    assert full_k.sweep(mapped.copy(), write=False) < 1e-6
    # the two solves visit states in different orders, so their values agree to the solves' error,
    # not bit for bit: 2.9e-6 to 3.0e-6 apart in three runs with four pieces, and 2.7e-5 in one of
    # five runs of the whole suite (a residual of 3e-7 can leave an error a hundred times larger in
    # a game this slow to mix; on this board both leave a few states that the endless check flags
    # at eps 3e-6: its values sit on a plateau there, with or without the mirror)
    assert np.abs(mapped - np.asarray(full["value"])).max() < 1e-4
    if pieces == 4:
        assert np.abs(np.asarray(full["value"])).max() > 0.1  # wins happen: the comparison means something


@pytest.mark.parametrize("pieces", [2, 3])
def test_mirror_on_the_real_board_with_too_few_pieces_to_win(tmp_path, pieces: int) -> None:
    table = solve(UrOptions(pieces=pieces), tmp_path / "t", tolerance=1e-6, threads=2, method="sweeps",
                  graph="regenerate")
    assert table.header["options"]["mirror"] is True
    assert not np.any(np.asarray(table["value"]))
