"""The README's figures for the fort rules come from the code that the CLI's messages use: the
positions of each piece count, the stored states of seven pieces, and the projected GPU time of
the unsolved seven-piece game (``gpu_solve_seconds``, the missing table's message quotes it too),
so that the README and the CLI cannot disagree."""
from __future__ import annotations

import dataclasses
import re

import pytest

from gamesolver.games.ur import kernel
from gamesolver.games.ur.cli import GPU_MEASURED_ON, gpu_solve_seconds
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import stored_state_count
from gamesolver.solver.stochastic.iteration import TYPICAL_SWEEPS
from gamesolver.solver.stochastic.projection import span
from tests.doc_examples import ROOT


def ur_row(pieces: int) -> str:
    rows = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
            if line.startswith(f"| Ur, fort rules, {pieces} pieces |")]
    assert len(rows) == 1, f"the README has no single row for {pieces} pieces"
    return rows[0]


@pytest.mark.parametrize("pieces", [4, 5, 6, 7])
def test_the_positions_are_the_generators(pieces: int) -> None:
    positions = kernel(dataclasses.replace(UrOptions(pieces=pieces), mirror=False)).state_count
    cell = ur_row(pieces).split("|")[2]
    assert re.match(rf"\s*{positions:,}\b", cell), (cell, positions)


def test_the_unsolved_game_quotes_the_messages_projection() -> None:
    row = ur_row(7)
    options = UrOptions(pieces=7)
    assert f"{stored_state_count(options):,} stored" in row
    seconds, _ = gpu_solve_seconds(options)
    lo, hi = TYPICAL_SWEEPS
    assert f"projected at {span(seconds)} of one {GPU_MEASURED_ON}" in row
    assert f"times {lo}-{hi} rounds" in row
