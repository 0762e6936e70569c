"""How long Ünee games last: seeded Monte Carlo samples of games from the start, their length
statistics and histogram (the claim "games usually take more than 150 moves" is judged from
them in ``games.unee.claims``).

A game ends at the first repetition of an absolute position (board and side to move) or when
the mover has no ball; lengths are counted in plies (one player's turn = one ply).
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gamesolver.games.unee.graph import SIDE_INDEX, StateGraph, build_graph
from gamesolver.games.unee.notation import Position, start_position
from gamesolver.games.unee.rules import DEFAULT, UneeOptions
from gamesolver.solver.retrograde import _play
from gamesolver.solver.errors import InputError
from gamesolver.games.unee.solution import solve

POLICIES = ("random", "optimal")
# scenario name -> (South's policy, North's policy)
SCENARIOS: dict[str, tuple[str, str]] = {
    "random": ("random", "random"),
    "optimal": ("optimal", "optimal"),
    "south-optimal": ("optimal", "random"),
    "north-optimal": ("random", "optimal"),
}
SCENARIO_TEXT = {
    "random": "both sides play uniformly random legal moves",
    "optimal": "both sides play optimally (uncounted rule), uniformly among equally good moves",
    "south-optimal": "South optimal (uncounted rule), North uniformly random",
    "north-optimal": "North optimal (uncounted rule), South uniformly random",
}
END_NAMES = ("no-move", "repetition", "cap")
DEFAULT_SEED = 20090601  # fixed so that every report shows the same sample
# no game can be longer than the number of absolute positions; the cap is only a safety stop
DEFAULT_MAX_PLIES = 1_000_000
MAX_GAMES = 10_000_000

# the claim: "more than 150 moves"; a move here is one player's turn (a ply)
CLAIM_MOVES = 150
CLAIM_GAMES = {"random": 50_000, "optimal": 5_000, "south-optimal": 5_000, "north-optimal": 5_000}
CONFIDENCE_Z = 3.29  # two-sided 99.9 % normal quantile for the Wilson interval of a share
HISTOGRAM_NAME = "unee_game_lengths.png"


def optimal_mask(graph: StateGraph, table: Any | None = None) -> np.ndarray:
    """uint8 per edge: 1 where the move keeps the mover's uncounted-rule value."""
    if table is None:
        table = solve("uncounted", graph.options)
    if table.rule != "uncounted":
        raise InputError(f"optimal moves are taken from the uncounted table, not the {table.rule} one")
    return _play.optimal_mask(graph.indptr, graph.succ, graph.captured, np.asarray(table.table["value"]))


def _policy_code(policy: str) -> int:
    if policy == "random":
        return _play.RANDOM
    if policy == "optimal":
        return _play.RANDOM_MARKED
    raise InputError(f"unknown policy {policy!r}; expected one of: {', '.join(POLICIES)}")


def play_sample(
    options: UneeOptions = DEFAULT,
    south: str = "random",
    north: str = "random",
    games: int = 1000,
    seed: int = DEFAULT_SEED,
    start: Position | None = None,
    max_plies: int = DEFAULT_MAX_PLIES,
    record: bool = False,
    mask: np.ndarray | None = None,
) -> dict[str, Any]:
    """Play ``games`` seeded games from ``start`` (default: the standard start) with the given
    policies; returns the kernel's per-game arrays (see ``gamesolver.solver.retrograde._play.play_games``)."""
    if not 1 <= games <= MAX_GAMES:
        raise InputError(f"number of games must be 1..{MAX_GAMES:,}, got {games}")
    if max_plies < 1:
        raise InputError(f"the ply cap must be at least 1, got {max_plies}")
    if not 0 <= seed < 2**64:
        raise InputError(f"the seed must be 0 .. 2**64 - 1, got {seed}")
    codes = (_policy_code(south), _policy_code(north))
    graph = build_graph(options)
    if mask is None and _play.RANDOM_MARKED in codes:
        mask = optimal_mask(graph)
    pos = start if start is not None else start_position(options)
    return _play.play_games(
        graph.indptr, graph.succ, graph.captured, graph.rank(pos), SIDE_INDEX[pos.side],
        games, seed, codes[0], codes[1], mask, max_plies, record,
    )


@dataclass
class LengthStats:
    """Game lengths (plies) of one seeded sample from the start."""

    scenario: str
    south: str
    north: str
    options: UneeOptions
    games: int
    seed: int
    max_plies: int
    median: float
    q1: float
    q3: float
    mean: float
    minimum: int
    maximum: int
    share_over: float  # games longer than ``threshold`` plies
    share_over_each: float  # games longer than ``threshold`` moves of each player (2 x plies)
    threshold: int
    ends: dict[str, int]
    outcomes: dict[str, int]  # under the uncounted rule: "south", "draw", "north" (who won)
    mean_difference: float  # South's final balls minus North's, uncounted rule
    seconds: float
    plies: np.ndarray = field(repr=False)

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else float("inf")

    def share_interval(self, z: float = CONFIDENCE_Z) -> tuple[float, float]:
        """Wilson score interval of ``share_over``."""
        return wilson(self.share_over, self.games, z)

    def as_dict(self) -> dict[str, Any]:
        lo, hi = self.share_interval()
        return {
            "scenario": self.scenario,
            "description": SCENARIO_TEXT[self.scenario],
            "south": self.south,
            "north": self.north,
            "options": self.options.as_dict(),
            "unit": "ply (one player's turn)",
            "games": self.games,
            "seed": self.seed,
            "max_plies": self.max_plies,
            "median": self.median,
            "q1": self.q1,
            "q3": self.q3,
            "mean": round(self.mean, 3),
            "min": self.minimum,
            "max": self.maximum,
            "threshold": self.threshold,
            "share_over": self.share_over,
            "share_over_interval": [round(lo, 5), round(hi, 5)],
            "share_over_each": self.share_over_each,
            "ends": self.ends,
            "outcomes": self.outcomes,
            "mean_difference": round(self.mean_difference, 3),
            "seconds": round(self.seconds, 3),
        }

    def line(self) -> str:
        ends = ", ".join(f"{100 * v / self.games:.0f} % {k}" for k, v in self.ends.items() if v)
        won = "/".join(f"{100 * self.outcomes[k] / self.games:.0f}" for k in ("south", "draw", "north"))
        return (
            f"{self.scenario:<13} {self.games:>7,} games: median {self.median:g} plies "
            f"(quartiles {self.q1:g}-{self.q3:g}, mean {self.mean:.1f}, max {self.maximum}); "
            f"> {self.threshold} plies {100 * self.share_over:.1f} %, "
            f"> {2 * self.threshold} plies {100 * self.share_over_each:.1f} %; ends {ends}; "
            f"South won/drew/lost {won} %"
        )


def wilson(share: float, n: int, z: float = CONFIDENCE_Z) -> tuple[float, float]:
    if n <= 0:
        return 0.0, 1.0
    denom = 1 + z * z / n
    centre = (share + z * z / (2 * n)) / denom
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def final_scores(options: UneeOptions, out: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Each game's final balls (South, North) under the uncounted rule: captures, plus the balls
    left on the board for the player who moved last when the mover has none; a repetition or the
    ply cap leaves the board's balls to nobody."""
    graph = build_graph(options)
    south = out["south_captured"].astype(np.int64)
    north = out["north_captured"].astype(np.int64)
    stuck = out["end"] == _play.END_NO_MOVE
    left = np.where(stuck, graph.layer_of(out["final_state"]), 0)
    # the mover (final_side) is stuck: the balls go to the other side
    return south + np.where(out["final_side"] == 1, left, 0), north + np.where(out["final_side"] == 0, left, 0)


def length_statistics(
    options: UneeOptions = DEFAULT,
    scenario: str = "random",
    games: int = 5000,
    seed: int = DEFAULT_SEED,
    max_plies: int = DEFAULT_MAX_PLIES,
    threshold: int = CLAIM_MOVES,
    mask: np.ndarray | None = None,
) -> LengthStats:
    """Length statistics of ``games`` games from the standard start under ``scenario``
    (one of ``SCENARIOS``); the same seed gives the same games."""
    if scenario not in SCENARIOS:
        raise InputError(f"unknown scenario {scenario!r}; expected one of: {', '.join(SCENARIOS)}")
    south, north = SCENARIOS[scenario]
    t0 = time.perf_counter()
    out = play_sample(options, south, north, games, seed, max_plies=max_plies, mask=mask)
    seconds = time.perf_counter() - t0
    plies = out["plies"]
    q1, med, q3 = (float(v) for v in np.percentile(plies, [25, 50, 75]))
    counts = np.bincount(out["end"], minlength=len(END_NAMES))
    south_total, north_total = final_scores(options, out)
    diff = south_total - north_total
    return LengthStats(
        scenario=scenario,
        south=south,
        north=north,
        options=options,
        games=games,
        seed=seed,
        max_plies=max_plies,
        median=med,
        q1=q1,
        q3=q3,
        mean=float(plies.mean()),
        minimum=int(plies.min()),
        maximum=int(plies.max()),
        share_over=float(np.count_nonzero(plies > threshold)) / games,
        share_over_each=float(np.count_nonzero(plies > 2 * threshold)) / games,
        threshold=threshold,
        ends={name: int(c) for name, c in zip(END_NAMES, counts)},
        outcomes={"south": int((diff > 0).sum()), "draw": int((diff == 0).sum()), "north": int((diff < 0).sum())},
        mean_difference=float(diff.mean()),
        seconds=seconds,
        plies=plies,
    )


def histogram(samples: list[LengthStats], path: str | os.PathLike[str]) -> Path:
    """Draw the length distribution of each sample (share of games per 10 plies) to a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    top = max(int(s.maximum) for s in samples)
    bins = np.arange(0, top + 11, 10).tolist()  # the edges: 0, 10, 20, ... plies
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    try:
        for s in samples:
            weights = np.full(s.plies.shape, 1.0 / s.games)
            ax.hist(s.plies, bins=bins, weights=weights, histtype="step", linewidth=1.4,
                    label=f"{s.scenario}: median {s.median:g}, {s.games:,} games")
        threshold = samples[0].threshold
        ax.axvline(threshold, color="black", linestyle="--", linewidth=1)
        ax.axvline(2 * threshold, color="grey", linestyle=":", linewidth=1)
        ax.text(threshold, ax.get_ylim()[1] * 0.95, f" {threshold} plies", fontsize=8, va="top")
        ax.text(2 * threshold, ax.get_ylim()[1] * 0.95, f" {threshold} moves each", fontsize=8, va="top")
        opts = samples[0].options
        ax.set_title(
            f"Ünee Tugalluulax ({opts.holes_per_row} holes a row, {opts.balls_per_hole} balls each): "
            f"game length from the start, seed {samples[0].seed}",
            fontsize=9,
        )
        ax.set_xlabel("plies (one player's turn each) until no move or the first repetition")
        ax.set_ylabel("share of games per 10 plies")
        ax.legend(fontsize=8)
        fig.tight_layout()
        try:
            fig.savefig(path, format="png")
        except OSError as exc:
            raise InputError(f"cannot write the histogram {path}: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)
    return path
