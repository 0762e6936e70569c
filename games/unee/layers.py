"""Ünee as a game of tiers: one tier per number of balls on the board.

A capture takes ``CAPTURE_COUNT`` balls off the board and nothing puts balls back, so a move
either stays in its layer or lands exactly four balls lower: the layers fall into four chains
(balls mod 4) that never meet, and each layer needs only the one below it in its chain. The
generic driver (``solver.retrograde.layers``) solves them one at a time, here or on a Ray cluster,
with each layer's moves built alone (``_sow.build_layer_graph``), so the largest layer, not the
whole game, has to fit one machine.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from gamesolver.games.unee import _sow
from gamesolver.games.unee.rules import CAPTURE_COUNT, UneeOptions
from gamesolver.solver.encoding import _boards
from gamesolver.games.unee.split import row_differences
from gamesolver.solver.retrograde.layers import TierCheckpoint, TierGraph, empty_result, solve_by_tiers

# the kernel mode each repetition rule is solved in
RULE_MODE = {"uncounted": "value", "draw": "termination", "split": "split"}


@dataclass(frozen=True)
class UneeLayers:
    """The tier game of one variant (picklable: a Ray worker rebuilds each layer from it)."""

    options: UneeOptions

    def tiers(self) -> list[int]:
        return list(range(self.options.max_balls + 1))

    def depends(self, tier: int) -> list[int]:
        return [tier - CAPTURE_COUNT] if tier >= CAPTURE_COUNT else []

    def tier_size(self, tier: int) -> int:
        return int(layer_sizes(self.options)[tier])

    def tier_graph(self, tier: int) -> TierGraph:
        o = self.options
        indptr, succ, hole, captured = _sow.build_layer_graph(
            o.holes_per_row, tier, 0, -1, o.skip_origin, o.capture_both, CAPTURE_COUNT
        )
        return TierGraph(indptr, succ, captured, hole, tier - captured.astype(np.int16))

    def terminal(self, tier: int) -> int:
        return -tier  # the mover cannot move: every ball on the board goes to the opponent

    def delta(self, tier: int) -> np.ndarray:
        first, stop = (int(x) for x in _boards.layer_offsets(self.options.holes, tier)[tier:tier + 2])
        return row_differences(self.options, first, stop, tier)

    def bound(self, tier: int) -> int:
        return tier  # |value| never exceeds the balls on the board


def layer_sizes(options: UneeOptions) -> np.ndarray:
    return np.diff(_boards.layer_offsets(options.holes, options.max_balls))


def assemble(options: UneeOptions, rule: str) -> tuple[dict[str, np.ndarray], Callable[[int, dict[str, np.ndarray]], None]]:
    """Whole-space result arrays and the callback that writes one finished layer into them."""
    offsets = _boards.layer_offsets(options.holes, options.max_balls)
    arrays = empty_result(RULE_MODE[rule], int(offsets[-1]))

    def done(tier: int, part: dict[str, np.ndarray]) -> None:
        lo, hi = int(offsets[tier]), int(offsets[tier + 1])
        for key, array in part.items():
            arrays[key][lo:hi] = array

    return arrays, done


def solve_arrays_by_layers(
    options: UneeOptions, rule: str, progress: Callable[[int], None] | None = None, engine: Any = None,
    checkpoint: str | os.PathLike[str] | None = None, log: Callable[[str], None] | None = None,
) -> dict[str, np.ndarray]:
    """The same table arrays as ``solution.solve_arrays``, solved layer by layer, in this process
    (``engine=None``) or on a Ray cluster (``engine``: a ``solver.backends.ray_tiers.TierEngine``).
    ``checkpoint``: a folder keeping each finished layer, read back by a run that resumes."""
    game = UneeLayers(options)
    mode = RULE_MODE[rule]
    arrays, write = assemble(options, rule)
    sizes = {t: int(size) for t, size in enumerate(layer_sizes(options))}
    store = TierCheckpoint(Path(checkpoint), mode, sizes) if checkpoint is not None else None
    known = store.load() if store is not None else {}
    if known and log is not None:
        log(f"resuming: {len(known)} of {len(sizes)} layers solved before, read from {checkpoint}")
    for t, part in known.items():
        write(t, part)
        if progress is not None:
            progress(sizes[t])

    def done(tier: int, part: dict[str, np.ndarray]) -> None:
        if store is not None:
            store.save(tier, part)
        write(tier, part)
        if progress is not None:
            progress(sizes[tier])

    if engine is None:
        solve_by_tiers(game, mode, done, known)
    else:
        engine.solve(game, mode, done, known)
    return arrays
