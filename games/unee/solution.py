"""Exact Ünee solutions under each repetition rule, their tables, and the queries on them.

Values are always for the side to move and count only what happens from now on (future
captures minus the opponent's, plus the balls a game end hands out):

- ``uncounted``: a repetition ends the game and the balls still on the board count for nobody.
  Table arrays: ``value`` (int8), ``remoteness`` (int32 plies to the end), ``cycling`` (uint8),
  ``follow`` (int8: the mover's relative hole that optimal play follows, -1 without a move).
- ``draw``: a repetition ends the game with no result. Table arrays ``a`` and ``b`` (int8,
  -128 = never): the mover can force the game to end, without repetition, with a future
  difference of at least ``a``; the opponent can force it to end with one of at most ``-b``.
  With ``d`` balls captured so far (mover minus opponent) the mover wins iff ``d + a > 0`` and
  loses iff ``d - b < 0``; otherwise the game is a draw.
- ``split``: each player adds the balls on their own row at the repeated position. Table
  arrays ``lower`` and ``upper`` (int8): certified bounds of the value under the
  first-repetition rule (see ``solver/retrograde/_split.pyx``); the value is exact where they meet.
"""
from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from gamesolver.games.unee.graph import (ENCODING, ENCODING_VERSION, StateGraph, build_graph, rank_position,
                                         terminal_payoffs)
from gamesolver.games.unee.notation import Position, move_name
from gamesolver.games.unee.rules import DEFAULT, REPETITION_RULES, UneeOptions, check_rule, sow_relative
from gamesolver.solver.retrograde import _retro
from gamesolver.solver.retrograde.layers import followed_labels
from gamesolver.solver.errors import InputError, MissingTableError, PositionNotCoveredError
from gamesolver.solver.tables.paths import cache_dir
from gamesolver.solver.tables.table import Table, open_table as open_generic_table, write_table
from gamesolver.games.unee.split import split_bounds
from gamesolver.solver.encoding import _boards
from gamesolver.games.unee.layers import solve_arrays_by_layers

NEVER = -128


def solve_arrays(
    graph: StateGraph, rule: str, progress: Callable[[int], None] | None = None
) -> dict[str, np.ndarray]:
    """Solve the whole state space of ``graph`` under ``rule``; returns the table arrays."""
    rindptr, pred, pedge = graph.reverse()
    tiers = graph.offsets
    term = terminal_payoffs(graph)
    reward = graph.captured
    if rule == "uncounted":
        value = _retro.solve_tiers(graph.indptr, graph.succ, reward, rindptr, pred, tiers, term, "value", progress)
        remoteness, cycling, choice = _retro.remoteness_tiers(
            graph.indptr, graph.succ, reward, rindptr, pred, pedge, tiers, value, progress
        )
        # the move optimal play follows, as the mover's relative hole (-1: no move)
        follow = followed_labels(graph.indptr, graph.hole, choice)
        return {"value": value, "remoteness": remoteness, "cycling": cycling, "follow": follow}
    if rule == "draw":
        a, b = _retro.solve_tiers(graph.indptr, graph.succ, reward, rindptr, pred, tiers, term, "termination", progress)
        return {"a": a, "b": b}
    if rule != "split":
        check_rule(rule)  # reached only by a rule no branch above took: that is the error

    lower, upper = split_bounds(graph, term, progress)
    return {"lower": lower, "upper": upper}


def progress_steps(rule: str, backend: str = "cpu") -> int:
    """How many tier passes ``solve_arrays`` reports (for sizing a progress bar); solved by layers,
    each layer is reported once, when all of it is done."""
    return 1 if backend != "cpu" else {"uncounted": 2, "draw": 1, "split": 2}[rule]


# ------------------------------------------------------------------ tables


def variant_key(options: UneeOptions) -> str:
    return (
        f"h{options.holes_per_row}-b{options.balls_per_hole}"
        f"-{'skip' if options.skip_origin else 'noskip'}-{options.capture_rows}"
    )


def table_path(options: UneeOptions, rule: str, cache: str | os.PathLike[str] | None = None) -> Path:
    return cache_dir(cache) / "unee" / variant_key(options) / rule


def expected_header(options: UneeOptions, rule: str) -> dict[str, Any]:
    return {
        "game": "unee",
        "rule": rule,
        "encoding": ENCODING,
        "encoding_version": ENCODING_VERSION,
        "state_count": _boards.board_count(options.holes, options.max_balls),
        "options": options.as_dict(),
    }


def build_table(
    options: UneeOptions = DEFAULT,
    rule: str = "uncounted",
    out: str | os.PathLike[str] | None = None,
    cache: str | os.PathLike[str] | None = None,
    progress: Callable[[int], None] | None = None,
    backend: str = "cpu",
    engine: Any = None,
    log: Callable[[str], None] | None = None,
) -> Path:
    """Solve and write a table; returns its path (``out`` or the cache location).

    ``backend``: ``cpu`` builds the whole graph; ``layers`` solves one layer (balls on the board)
    at a time, each layer's moves built alone, in this process, or on a Ray cluster when
    ``engine`` (a ``solver.backends.ray_tiers.TierEngine``) is given. The arrays are the same.
    Solved by layers, each finished layer is kept in a hidden folder beside the table
    (``.<name>.layers``) until the table is written, so a stopped run resumes there."""
    return _build_table(options, check_rule(rule), out, cache, progress, backend, engine, log)


def _build_table(
    options: UneeOptions,
    rule: str,
    out: str | os.PathLike[str] | None,
    cache: str | os.PathLike[str] | None,
    progress: Callable[[int], None] | None,
    backend: str = "cpu",
    engine: Any = None,
    log: Callable[[str], None] | None = None,
) -> Path:
    # the rule was checked where it entered (build_table or solve)
    path = Path(out) if out is not None else table_path(options, rule, cache)
    t0 = time.perf_counter()
    layered = backend != "cpu" or engine is not None
    checkpoint = path.parent / f".{path.name}.layers" if layered else None
    if checkpoint is None:
        arrays = solve_arrays(build_graph(options), rule, progress)
    else:
        arrays = solve_arrays_by_layers(options, rule, progress, engine, checkpoint, log)
    seconds = time.perf_counter() - t0
    head = expected_header(options, rule)
    n_states = int(head["state_count"])
    meta: dict[str, Any] = {"tiers": "balls on the board", "values": "future capture difference for the mover",
                            "solved": ("by layers on Ray" if engine is not None else "by layers") if layered
                            else "whole graph"}
    if rule == "split":
        exact = int(np.count_nonzero(arrays["lower"] == arrays["upper"]))
        meta["exact_states"] = exact
        meta["exact_share"] = exact / n_states
    written = write_table(
        path,
        game="unee",
        encoding=ENCODING,
        encoding_version=ENCODING_VERSION,
        state_count=n_states,
        arrays=arrays,
        options=head["options"],
        rule=rule,
        meta=meta,
        seconds=seconds,
    )
    if checkpoint is not None:
        shutil.rmtree(checkpoint, ignore_errors=True)
    return written


def open_table(
    path: str | os.PathLike[str], options: UneeOptions | None = None, rule: str | None = None, verify: bool = True
) -> "UneeTable":
    """Open an Ünee table; refuse it if it is corrupt or built for another variant, rule or encoding."""
    return _open_table(path, options, None if rule is None else check_rule(rule), verify)


def _open_table(
    path: str | os.PathLike[str], options: UneeOptions | None, rule: str | None, verify: bool
) -> "UneeTable":
    # the rule was checked where it entered (open_table or solve)
    expect: dict[str, Any] = {"game": "unee", "encoding": ENCODING, "encoding_version": ENCODING_VERSION}
    if options is not None:
        expect.update({k: v for k, v in expected_header(options, rule or "uncounted").items() if k != "rule"})
    if rule is not None:
        expect["rule"] = rule
    table = open_generic_table(path, expect=expect, verify=verify)
    opts = UneeOptions(**table.options)
    return UneeTable(table, opts)


def solve(
    repetition: str = "uncounted",
    options: UneeOptions = DEFAULT,
    cache: str | os.PathLike[str] | None = None,
    progress: Callable[[int], None] | None = None,
    verify: bool = True,
) -> "UneeTable":
    """The solved table for a rule, from the cache, solving and caching it on first use."""
    rule = check_rule(repetition)  # the one check on this path; the helpers below trust it
    path = table_path(options, rule, cache)
    try:
        return _open_table(path, options, rule, verify)
    except MissingTableError:
        pass
    _build_table(options, rule, None, cache, progress)
    return _open_table(path, options, rule, verify)


# ------------------------------------------------------------------ queries


@dataclass(frozen=True)
class MoveInfo:
    """One legal move judged by a table (values for the player making the move)."""

    move: str
    hole: int
    captured: int
    position: Position
    value: int | None  # exact future difference after this move (uncounted, or split when exact)
    lower: int | None
    upper: int | None
    outcome: int | None  # draw rule: +1 win, 0 draw, -1 loss for the mover
    remoteness: int | None  # plies from the position before the move (uncounted)
    cycling: bool | None
    best: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "move": self.move,
            "captured": self.captured,
            "position": str(self.position),
            "value": self.value,
            "lower": self.lower,
            "upper": self.upper,
            "outcome": self.outcome,
            "remoteness": self.remoteness,
            "cycling": self.cycling,
            "best": self.best,
        }


class UneeTable:
    """A solved Ünee table (memory-mapped) with tablebase-style probes.

    ``probe_value(pos)`` returns the value on the rule's own scale and raises
    ``PositionNotCoveredError`` for a position outside the table; ``get_value(pos, default)``
    returns ``default`` instead. Under ``uncounted`` the value is the future capture difference;
    under ``draw`` it is the outcome (+1, 0, -1) given ``captured`` (mover minus opponent so
    far); under ``split`` it is the certified lower bound (``probe_bounds`` gives both).
    """

    def __init__(self, table: Table, options: UneeOptions) -> None:
        self.table = table
        self.options = options
        self.rule = str(table.rule)
        self.path = table.path

    def __repr__(self) -> str:
        return f"UneeTable(rule={self.rule!r}, options={self.options}, path='{self.path}')"

    # -- lookup helpers
    def rank(self, pos: Position) -> int:
        try:
            return rank_position(pos, self.options)
        except InputError as exc:
            raise PositionNotCoveredError(f"position {pos} is not covered by this table: {exc}") from None

    def _outcome(self, rank: int, captured: int) -> int:
        a = int(self.table["a"][rank])
        b = int(self.table["b"][rank])
        if a != NEVER and captured + a > 0:
            return 1
        if b != NEVER and captured - b < 0:
            return -1
        return 0

    def probe_value(self, pos: Position, captured: int = 0) -> int:
        r = self.rank(pos)
        if self.rule == "uncounted":
            return int(self.table["value"][r])
        if self.rule == "draw":
            return self._outcome(r, captured)
        return int(self.table["lower"][r])

    def get_value(self, pos: Position, default: Any = None, captured: int = 0) -> Any:
        try:
            return self.probe_value(pos, captured)
        except PositionNotCoveredError:
            return default

    def probe_bounds(self, pos: Position) -> tuple[int, int]:
        """(lower, upper) of the value: equal under ``uncounted``; the certified bounds under ``split``."""
        r = self.rank(pos)
        if self.rule == "uncounted":
            v = int(self.table["value"][r])
            return v, v
        if self.rule == "split":
            return int(self.table["lower"][r]), int(self.table["upper"][r])
        raise InputError("bounds are given for the uncounted and split rules; the draw rule has outcomes")

    def probe_thresholds(self, pos: Position) -> tuple[int | None, int | None]:
        """Draw rule: (a, b) as stored; None where the side can never force the game to end."""
        if self.rule != "draw":
            raise InputError("thresholds belong to the draw rule")
        r = self.rank(pos)
        a, b = int(self.table["a"][r]), int(self.table["b"][r])
        return (None if a == NEVER else a), (None if b == NEVER else b)

    def probe_remoteness(self, pos: Position) -> tuple[int, bool]:
        """Uncounted rule: (plies to the end of the game, whether it ends by repetition)."""
        if self.rule != "uncounted":
            raise InputError("remoteness is stored for the uncounted rule")
        r = self.rank(pos)
        return int(self.table["remoteness"][r]), bool(self.table["cycling"][r])

    # -- moves
    def analyze(self, pos: Position, captured: int = 0) -> list[MoveInfo]:
        """Every legal move with what it is worth to the mover, best moves flagged."""
        return self._judge(pos, captured)[0]

    def _judge(self, pos: Position, captured: int) -> tuple[list[MoveInfo], list[int]]:
        """The moves (best flagged) and the indices of the best ones, best first."""
        r = self.rank(pos)
        board = pos.relative()
        n = self.options.holes_per_row
        infos: list[MoveInfo] = []
        for hole in range(n):
            if board[hole] == 0:
                continue
            after, cap = sow_relative(board, hole, self.options)
            nxt = Position.from_relative(after, pos.other)
            s = rank_position(nxt, self.options)
            value = lower = upper = outcome = rem = None
            cyc = None
            if self.rule == "uncounted":
                value = cap - int(self.table["value"][s])
                rem = 1 + int(self.table["remoteness"][s])
                cyc = bool(self.table["cycling"][s])
            elif self.rule == "draw":
                outcome = -self._outcome(s, -(captured + cap))
            else:
                lower = cap - int(self.table["upper"][s])
                upper = cap - int(self.table["lower"][s])
                value = lower if lower == upper else None
            infos.append(MoveInfo(move_name(pos.side, hole, n), hole, cap, nxt, value, lower, upper, outcome, rem, cyc))
        best = self._best_indices(r, infos)
        return [replace(m, best=i in best) for i, m in enumerate(infos)], best

    def _best_indices(self, rank: int, infos: list[MoveInfo]) -> list[int]:
        """Indices of the best moves, best first by the rule's tie-break."""
        if not infos:
            return []
        if self.rule == "uncounted":
            v = int(self.table["value"][rank])
            hole = int(self.table["follow"][rank])
            opt = [i for i, m in enumerate(infos) if m.value == v]
            # the move the solver's remoteness follows comes first, then the other optimal moves
            return sorted(opt, key=lambda i: infos[i].hole != hole)
        if self.rule == "draw":
            top = max(m.outcome for m in infos)  # type: ignore[type-var]
            return [i for i, m in enumerate(infos) if m.outcome == top]
        pair = max((m.lower, m.upper) for m in infos)
        return [i for i, m in enumerate(infos) if (m.lower, m.upper) == pair]

    def best_moves(self, pos: Position, captured: int = 0) -> list[MoveInfo]:
        """The best moves, the one the principal variation follows first."""
        infos, order = self._judge(pos, captured)
        return [infos[i] for i in order]

    def best_move(self, pos: Position, captured: int = 0) -> MoveInfo | None:
        moves = self.best_moves(pos, captured)
        return moves[0] if moves else None

    def principal_variation(self, pos: Position, captured: int = 0, max_plies: int = 10_000) -> "Line":
        """Best play from ``pos`` until the game ends or a position repeats."""
        seen = {pos: 0}
        plies: list[tuple[MoveInfo, Position]] = []
        diff = captured  # from the side to move at ``pos``
        cur = pos
        sign = 1
        end = "limit"
        while len(plies) < max_plies:
            move = self.best_move(cur, diff * sign)
            if move is None:
                end = "no-move"
                break
            diff += sign * move.captured
            sign = -sign
            cur = move.position
            plies.append((move, cur))
            if cur in seen:
                end = "repetition"
                break
            seen[cur] = len(plies)
        return Line(pos, plies, end, diff, self.options)


@dataclass
class Line:
    """A principal variation: the moves, how it ended and the captures along it."""

    start: Position
    plies: list[tuple[MoveInfo, Position]]
    end: str  # "no-move", "repetition" or "limit"
    captured: int  # captured difference for the side to move at ``start``, before the end
    options: UneeOptions

    @property
    def final(self) -> Position:
        return self.plies[-1][1] if self.plies else self.start

    def final_difference(self, rule: str) -> int | None:
        """The whole game's difference for the starting mover (None: no result under ``draw``)."""
        final = self.final
        mover_first = final.side == self.start.side
        if self.end == "no-move":
            left = final.balls  # all go to the player who moved last, the one not to move now
            return self.captured + (-left if mover_first else left)
        if self.end == "repetition":
            if rule == "uncounted":
                return self.captured
            if rule == "draw":
                return None
            own = sum(final.south) if self.start.side == "S" else sum(final.north)
            other = final.balls - own
            return self.captured + own - other
        return None
