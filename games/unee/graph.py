"""The whole Ünee state graph: every mover-relative board with up to the variant's balls.

States are board ranks (see ``solver/encoding/_boards.pyx`` for the encoding); an absolute position is
(rank, side to move). Edges are moves, stored as CSR arrays with the relative hole played and
the balls captured; the predecessor CSR and the part reachable from the start are derived once.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np

from gamesolver.games.unee.notation import Position, start_position
from gamesolver.games.unee.rules import CAPTURE_COUNT, DEFAULT, UneeOptions
from gamesolver.solver.encoding import _boards
from gamesolver.solver.retrograde import _graph
from gamesolver.games.unee import _sow
from gamesolver.solver.errors import InputError

ENCODING = "unee-board-rank"
ENCODING_VERSION = 1
SIDE_INDEX = {"S": 0, "N": 1}


@dataclass
class StateGraph:
    options: UneeOptions
    indptr: np.ndarray  # int64[N+1]
    succ: np.ndarray  # int32[E]
    hole: np.ndarray  # int8[E]: relative hole of the mover
    captured: np.ndarray  # int8[E]
    offsets: np.ndarray  # int64[B+2]: first rank of each layer (balls on the board)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def n_states(self) -> int:
        return int(self.indptr.shape[0] - 1)

    @property
    def n_edges(self) -> int:
        return int(self.succ.shape[0])

    @property
    def max_balls(self) -> int:
        return self.options.max_balls

    def degree(self) -> np.ndarray:
        return np.diff(self.indptr)

    def edges_of(self, ranks: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(owner, edge) for every move of the given states (all states by default): the index
        of the move's state in ``ranks`` and the move's edge id, in CSR order."""
        if ranks is None:
            return np.repeat(np.arange(self.n_states, dtype=np.int64), self.degree()), np.arange(self.n_edges)
        ranks = np.asarray(ranks, dtype=np.int64)
        lo = self.indptr[ranks]
        deg = self.indptr[ranks + 1] - lo
        owner = np.repeat(np.arange(ranks.size, dtype=np.int64), deg)
        edges = np.repeat(lo - (np.cumsum(deg) - deg), deg) + np.arange(int(deg.sum()))
        return owner, edges

    def reverse(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Predecessor CSR: (rindptr, pred, forward edge id)."""
        if "reverse" not in self._cache:
            self._cache["reverse"] = _graph.reverse_csr(self.indptr, self.succ)
        return self._cache["reverse"]

    def reachable(self) -> np.ndarray:
        """uint8 per state: bit 0 = reachable from the start with South to move, bit 1 = North."""
        if "reachable" not in self._cache:
            start = self.rank(start_position(self.options))
            self._cache["reachable"] = _graph.reachable_alternating(self.indptr, self.succ, start, 0)
        return self._cache["reachable"]

    @overload
    def layer_of(self, ranks: int) -> int: ...
    @overload
    def layer_of(self, ranks: np.ndarray) -> np.ndarray: ...
    def layer_of(self, ranks: np.ndarray | int) -> np.ndarray | int:
        """Balls on the board for each rank."""
        out = np.searchsorted(self.offsets, ranks, side="right") - 1
        return int(out) if np.ndim(out) == 0 else out

    def layer(self, balls: int) -> range:
        return range(int(self.offsets[balls]), int(self.offsets[balls + 1]))

    def rank(self, pos: Position) -> int:
        return rank_position(pos, self.options)

    def board(self, rank: int) -> list[int]:
        return [int(c) for c in _boards.unrank_boards([rank], self.options.holes, self.max_balls)[0]]

    def position(self, rank: int, side: str) -> Position:
        return Position.from_relative(self.board(rank), side)

    def moves(self, rank: int) -> list[tuple[int, int, int]]:
        """(relative hole, successor rank, captured) for each move of a state."""
        lo, hi = int(self.indptr[rank]), int(self.indptr[rank + 1])
        return [(int(self.hole[k]), int(self.succ[k]), int(self.captured[k])) for k in range(lo, hi)]


def rank_position(pos: Position, options: UneeOptions = DEFAULT) -> int:
    if len(pos.north) != options.holes_per_row or len(pos.south) != options.holes_per_row:
        raise InputError(f"the position has {len(pos.north)} holes per row; this variant has {options.holes_per_row}")
    if pos.balls > options.max_balls:
        raise InputError(f"{pos.balls} balls on the board; this variant has only {options.max_balls}")
    return int(_boards.rank_boards([pos.relative()], options.max_balls)[0])


@functools.lru_cache(maxsize=4)
def build_graph(options: UneeOptions = DEFAULT) -> StateGraph:
    """Build (once per process and variant) the successor CSR of the whole state space."""
    indptr, succ, hole, captured = _sow.build_sowing_graph(
        options.holes_per_row, options.max_balls, options.skip_origin, options.capture_both, CAPTURE_COUNT
    )
    return StateGraph(options, indptr, succ, hole, captured, _boards.layer_offsets(options.holes, options.max_balls))


def graph_summary(graph: StateGraph) -> dict[str, Any]:
    """Counts of absolute positions and moves, whole space and reachable, per balls on the board."""
    deg = graph.degree()
    reach = graph.reachable()
    reach_s = (reach & 1).astype(np.int64)
    reach_n = ((reach >> 1) & 1).astype(np.int64)
    reach_states = reach_s + reach_n
    layers = []
    for s in range(graph.max_balls + 1):
        lo, hi = int(graph.offsets[s]), int(graph.offsets[s + 1])
        d = deg[lo:hi]
        r = reach_states[lo:hi]
        layers.append(
            {
                "balls": s,
                "states": 2 * (hi - lo),
                "moves": 2 * int(d.sum()),
                "terminal": 2 * int((d == 0).sum()),
                "reachable_states": int(r.sum()),
                "reachable_moves": int((r * d).sum()),
                "reachable_terminal": int(r[d == 0].sum()),
            }
        )
    total = {key: sum(layer[key] for layer in layers) for key in layers[0] if key != "balls"}
    return {
        "game": "unee",
        "options": graph.options.as_dict(),
        "encoding": ENCODING,
        "encoding_version": ENCODING_VERSION,
        "boards": graph.n_states,
        "total": total,
        "layers": layers,
    }


def terminal_payoffs(graph: StateGraph) -> np.ndarray:
    """For a state with no move, the mover's payoff: every ball on the board goes to the opponent."""
    term = np.zeros(graph.n_states, dtype=np.int8)
    dead = np.flatnonzero(graph.degree() == 0)
    term[dead] = -graph.layer_of(dead).astype(np.int8)
    return term
