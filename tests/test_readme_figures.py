"""The README's figures for the fort rules come from the code that the CLI's messages use: the
positions of each piece count, the stored states of seven pieces, and the projected GPU time of
the unsolved seven-piece game (``gpu_solve_seconds``, the missing table's message quotes it too),
so that the README and the CLI cannot disagree."""
from __future__ import annotations

import dataclasses
import re

import pytest

from gamesolver.games.ur import kernel
from gamesolver.games.ur.answers import GPU_MEASURED_ON, gpu_solve_seconds
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import stored_state_count
from gamesolver.solver.stochastic.planning import TYPICAL_SWEEPS
from gamesolver.solver.stochastic.planning import span
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


def test_serve_md_names_every_shipped_opening_file() -> None:
    """docs/serve.md lists which games the board answers from a shipped opening file: every file in
    data/ur_opening is among them."""
    import json

    import numpy as np

    text = " ".join((ROOT / "docs" / "serve.md").read_text(encoding="utf-8").split())
    listed = text.split("shipped opening file (", 1)[1].split(")", 1)[0]
    pieces = []
    for f in sorted((ROOT / "data" / "ur_opening").glob("*.npz")):
        with np.load(f, allow_pickle=False) as z:
            header = json.loads(bytes(z["header"]).decode("utf-8"))
        if header["format"] == "gamesolver-royalur-opening":
            assert header["rules"].capitalize() in listed, (f.name, listed)
        else:
            pieces.append(header["options"]["pieces"])
    words = {4: "four", 5: "five", 6: "six"}
    assert f"fort rules with {words[min(pieces)]} to {words[max(pieces)]} pieces" in listed, (pieces, listed)
