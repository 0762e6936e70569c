"""Retrograde analysis one tier at a time, each tier's graph built alone.

The whole-graph drivers (``_retro.solve_tiers``, ``_split.split_tiers``) hold every state's moves
at once. A game whose tiers are only ever left for tiers below (Ünee: a capture takes balls off
the board for good) can instead be solved tier by tier: build one tier's moves, read the values of
the states its exits reach from the tiers already solved, solve it with the same kernels, keep
its results and drop its graph. The peak memory is then one tier's graph, not the whole game's,
and tiers that do not depend on each other can be solved at the same time, on other machines
(``solver.backends.ray_tiers``).

A game gives a ``TierGame`` (picklable, so that a worker can rebuild it): its tiers in an order
where each comes after the tiers it ``depends`` on, each tier's successor CSR with the
successor's index *inside its own tier*, the tier each move lands in, and the payoff of a state
without moves. The kernels see a small stand-in problem for one tier: first one state without
moves for each distinct exit target ("stubs", their results copied from the lower tier), then
the tier's own states; only the tier is solved (``tiers = [m, m + n]``), and the kernels read
the stubs as they would read the solved tiers below in the whole graph. Results are therefore
identical to the whole-graph solve, state for state (tests/test_unee_layers.py).
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

import numpy as np

from gamesolver.solver.tables.atomic import SYNC_FROM, replace_synced
from gamesolver.solver.retrograde import _graph, _retro, _split

NONE8 = -128

# what each mode solves and the arrays it returns for every state of a tier
MODES: dict[str, tuple[str, ...]] = {
    "value": ("value", "remoteness", "cycling", "follow"),
    "termination": ("a", "b"),
    "split": ("lower", "upper"),
}
# the entries of a state no kernel wrote (a tier's stubs always have theirs copied in)
_FILL = {"value": 0, "remoteness": -1, "cycling": 0, "follow": -1, "a": NONE8, "b": NONE8, "lower": 0, "upper": 0}
_DTYPE = {"remoteness": np.int32, "cycling": np.uint8}


@dataclass(frozen=True)
class TierGraph:
    """One tier's moves: CSR over the tier's states (index = rank inside the tier)."""

    indptr: np.ndarray  # int64[n + 1]
    succ: np.ndarray  # int32[E]: the successor's index inside its own tier
    reward: np.ndarray  # int8[E]: what the move earns the mover (0 for a move inside the tier)
    label: np.ndarray  # int8[E]: the move as the game names it (``follow`` reports it)
    target: np.ndarray  # int[E]: the tier of the successor

    @property
    def n_states(self) -> int:
        return int(self.indptr.shape[0] - 1)


class TierGame(Protocol):
    """What the tier-by-tier driver needs of a game (a picklable object)."""

    def tiers(self) -> list[int]:
        """Every tier, each after the tiers it depends on."""

    def depends(self, tier: int) -> list[int]:
        """The tiers this tier's exits land in."""

    def tier_size(self, tier: int) -> int: ...

    def tier_graph(self, tier: int) -> TierGraph: ...

    def terminal(self, tier: int) -> int:
        """The mover's payoff at a state of this tier without moves."""

    def delta(self, tier: int) -> np.ndarray:
        """``split`` mode: per state, what the mover scores over the opponent if the game stops there."""

    def bound(self, tier: int) -> int:
        """``split`` mode: a bound on |value| for the tier's states."""


def empty_result(mode: str, n: int) -> dict[str, np.ndarray]:
    return {key: np.full(n, _FILL[key], dtype=_DTYPE.get(key, np.int8)) for key in MODES[mode]}


def followed_labels(indptr: np.ndarray, label: np.ndarray, choice: np.ndarray) -> np.ndarray:
    """The label of the move each state follows (``remoteness_tiers``' ``choice``: an index into
    the state's moves, -1 without a move), -1 where there is none."""
    has = choice >= 0
    out = np.full(choice.shape[0], -1, dtype=np.int8)
    out[has] = label[indptr[:-1][has] + choice[has]]
    return out


def solve_tier(game: TierGame, tier: int, mode: str, lower: dict[int, dict[str, np.ndarray]],
               stats: dict[str, int] | None = None) -> dict[str, np.ndarray]:
    """Solve one tier under ``mode`` given the results of the tiers it depends on (``lower``:
    tier -> that tier's result arrays). Returns this tier's result arrays; ``stats``, if given,
    receives the tier's states, moves and exit targets."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}")
    g = game.tier_graph(tier)
    n = g.n_states
    inside = g.target == tier
    exits = np.flatnonzero(~inside)
    succ = g.succ.copy()  # becomes the stand-in problem's successors: stubs first, then the tier
    stub_parts: dict[str, list[np.ndarray]] = {key: [] for key in MODES[mode] if key != "follow"}
    m = 0
    exit_tier = g.target[exits]
    for u in np.unique(exit_tier).tolist():
        if u not in lower:
            raise ValueError(f"tier {tier} has moves into tier {u}, which was not given")
        sel = exits[exit_tier == u]
        targets, where = np.unique(g.succ[sel], return_inverse=True)
        succ[sel] = where + m
        for key, parts in stub_parts.items():
            parts.append(lower[u][key][targets])
        m += targets.shape[0]
    if m + n >= 2**31:
        raise ValueError(f"tier {tier} and its exits have {m + n:,} states, more than 32-bit indices hold")
    succ[inside] += m
    indptr = np.concatenate([np.zeros(m, dtype=np.int64), g.indptr])
    reward, label, tier_indptr = g.reward, g.label, g.indptr
    del inside, exits, exit_tier, g  # the successors within tiers are in ``succ`` now
    if stats is not None:
        stats.update(states=n, moves=int(succ.shape[0]), stubs=m)
    rindptr, pred, pedge = _graph.reverse_csr(indptr, succ)
    tiers = np.array([m, m + n], dtype=np.int64)
    terminal = np.zeros(m + n, dtype=np.int8)
    terminal[m:][np.diff(tier_indptr) == 0] = game.terminal(tier)
    full = empty_result(mode, m + n)
    for key, parts in stub_parts.items():
        if m:
            full[key][:m] = np.concatenate(parts)
    if mode == "value":
        _retro.solve_tiers(indptr, succ, reward, rindptr, pred, tiers, terminal, "value", out=full["value"])
        _retro.remoteness_tiers(indptr, succ, reward, rindptr, pred, pedge, tiers, full["value"],
                                out=(full["remoteness"], full["cycling"], full["follow"]))
        full["follow"][m:] = followed_labels(tier_indptr, label, full["follow"][m:])
    elif mode == "termination":
        _retro.solve_tiers(indptr, succ, reward, rindptr, pred, tiers, terminal, "termination",
                           out=(full["a"], full["b"]))
    else:
        delta = np.zeros(m + n, dtype=np.int8)
        delta[m:] = game.delta(tier)
        bound = np.array([game.bound(tier)], dtype=np.int8)
        _split.split_tiers(indptr, succ, reward, rindptr, pred, tiers, terminal, delta, bound,
                           out=(full["lower"], full["upper"]))
    return {key: array[m:].copy() for key, array in full.items()}


def solve_by_tiers(
    game: TierGame,
    mode: str,
    done: Callable[[int, dict[str, np.ndarray]], None] | None = None,
    known: dict[int, dict[str, np.ndarray]] | None = None,
) -> dict[int, dict[str, np.ndarray]]:
    """Solve every tier in this process, in order. ``known``: tiers solved before (a checkpoint),
    not solved again and read where a tier needs them. ``done(tier, arrays)`` is called as each
    tier finishes; with it, a tier's results are dropped once nothing left needs them, without it
    all are kept and returned."""
    known = known or {}
    order = [t for t in game.tiers() if t not in known]
    needed: dict[int, int] = {}
    for t in order:
        for u in game.depends(t):
            needed[u] = needed.get(u, 0) + 1
    results: dict[int, dict[str, np.ndarray]] = {u: known[u] for u in needed if u in known}
    for t in order:
        results[t] = solve_tier(game, t, mode, {u: results[u] for u in game.depends(t)})
        if done is not None:
            done(t, results[t])
            for u in game.depends(t):
                needed[u] -= 1
                if needed[u] == 0:
                    del results[u]
            if needed.get(t, 0) == 0:
                del results[t]
    return results


class TierCheckpoint:
    """One file a finished tier in a folder (``<tier>.npz``, each written whole or not at all), so
    that a stopped solve resumes with the tiers it had, and the folder removed once the table
    that uses them is written."""

    def __init__(self, folder: Path, mode: str, sizes: dict[int, int]) -> None:
        self.folder, self.mode, self.sizes = Path(folder), mode, sizes

    def load(self) -> dict[int, dict[str, np.ndarray]]:
        """The tiers found whole in the folder (a file that does not load, or is for another
        mode or size, is left out and solved again)."""
        out: dict[int, dict[str, np.ndarray]] = {}
        if not self.folder.is_dir():
            return out
        for path in self.folder.glob("*.npz"):
            if not path.stem.isdigit() or int(path.stem) not in self.sizes:
                continue
            t = int(path.stem)
            try:
                with np.load(path) as z:
                    arrays = {key: z[key] for key in z.files}
            except (OSError, ValueError, EOFError):
                continue
            if sorted(arrays) == sorted(MODES[self.mode]) and all(a.shape == (self.sizes[t],) for a in arrays.values()):
                out[t] = arrays
        return out

    def save(self, tier: int, arrays: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f".{tier}.tmp-{os.getpid()}.npz"
        np.savez(tmp, **arrays)
        # (a large tier is minutes of work; a small one is not worth the wait)
        replace_synced(tmp, self.folder / f"{tier}.npz", tmp.stat().st_size >= SYNC_FROM)

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
