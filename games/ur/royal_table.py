"""Solving RoyalUr's rule sets (Finkel, Blitz, Masters) on the dice-game engine, and querying.

``royal_game`` builds the Cython move generator (``games.ur._royal``) for a rule set; ``royal_solve``
solves it tier group by tier group (``solver.stochastic.solve.solve_table`` with ``tiers``) in float64,
since RoyalUr's published start values have ten digits, and writes the table with
``solver.tables.table.write_table``. The table holds V = P(win) - P(loss) for the side to move, before
the roll; the mover's chance of winning is (1 + V) / 2.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from gamesolver.solver.stochastic.engine import Log
from gamesolver.games.ur import royal, royal_encoding
from gamesolver.solver.tables.paths import cache_dir
from gamesolver.solver.stochastic.solve import SolveSettings, TableSpec, solve_table
from gamesolver.solver.tables.table import Table, open_or_build
from gamesolver.games.ur._royal import RoyalGame
from gamesolver.solver.errors import InputError
from gamesolver.solver.stochastic import outcomes  # by module: tests stand in a smaller machine

GAME = "ur"
ENCODING = "royalur-mover-relative-score-tiers"
ENCODING_VERSION = 1
# float64 sweeps to this change per tier group put the start value within about 1e-10 of the fixed
# point (a group's sweeps contract by well under 0.9 per sweep)
DEFAULT_TOLERANCE = 1e-12


@lru_cache(maxsize=16)
def royal_game(rules: royal.RuleSet) -> Any:
    """The rule set's move generator in C form, numbering states exactly as ``royal_encoding.Encoding``."""
    enc = royal_encoding.encoding(rules)
    blocks = [(enc.tier_offset[t] + off, t, key) for t in enc.tiers for off, key in enc._blocks[t]]
    return RoyalGame(
        rules.pieces,
        list(rules.cross),
        sorted(rules.rosette_index),
        rules.safe_rosettes,
        rules.rosettes_grant_rolls,
        rules.captures_grant_rolls,
        [(roll, float(p)) for roll, p in rules.roll_probabilities],
        blocks,
        enc.size,
    )


def tier_ranges(rules: royal.RuleSet) -> list[tuple[int, int]]:
    """The rank range of each tier group, in solving order (last scores first)."""
    enc = royal_encoding.encoding(rules)
    return [(enc.group_range(g).start, enc.group_range(g).stop) for g in enc.tier_groups_last_first()]


def header(rules: royal.RuleSet) -> dict[str, Any]:
    """The table's options: the rule set by name and in RoyalUr's own words."""
    return {"rules": rules.name, "pieces": rules.pieces, "settings": rules.settings_json()}


def default_table_dir(rules: royal.RuleSet, cache: str | os.PathLike[str] | None = None) -> Path:
    return cache_dir(cache) / GAME / f"{rules.name}-k{rules.pieces}-e{ENCODING_VERSION}"


def mask(indices: frozenset[int]) -> int:
    return sum(1 << i for i in indices)


def state_rank(rules: royal.RuleSet, state: royal.State) -> int:
    """The state's rank through the Cython encoding (the same as ``royal_encoding.Encoding.rank``)."""
    return int(royal_game(rules).rank(mask(state.mine.path), state.mine.scored,
                                      mask(state.theirs.path), state.theirs.scored))


# The solve's peak: the float64 values of every state, and for the tier group being solved its ranked
# outcomes with their index and the solve's scratch, per state of the largest group; measured
# (benchmarks/bench_royal.py, peak resident memory less the values): Blitz 88, Finkel 89 bytes
VALUE_BYTES = 8
GROUP_BYTES = 90


def check_memory(rules: royal.RuleSet) -> int:
    """The memory the solve needs at its peak, or an InputError (before anything is written) where
    even the values alone would not fit in this machine's memory."""
    n = royal_game(rules).state_count
    largest = max(b - a for a, b in tier_ranges(rules))
    need = VALUE_BYTES * n + GROUP_BYTES * largest
    memory = outcomes.memory_bytes()
    if memory and VALUE_BYTES * n > 0.9 * memory:
        raise InputError(f"{rules.name} with {rules.pieces} pieces has {n:,} states: its values alone need "
                         f"{VALUE_BYTES * n / 2**30:.1f} GiB, more than this machine's {memory / 2**30:.1f} GiB")
    return need


def royal_solve(
    rules: royal.RuleSet,
    out: str | os.PathLike[str] | None = None,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    threads: int | None = None,
    graph: str = "auto",
    show_progress: bool | None = None,
    log: Log | None = None,
) -> Table:
    """Solve the rule set and write its table at ``out`` (default: the cache); a stopped run
    resumes at the tier group it was in. Values are float64."""
    root = Path(out) if out is not None else default_table_dir(rules)
    game = royal_game(rules)
    need = check_memory(rules)
    if log:
        log(f"{rules.name}, {rules.pieces} pieces: about {need / 2**30:.1f} GiB at the peak (float64 values and the "
            f"largest tier group's stored outcomes)")
    settings = SolveSettings(tolerance=tolerance, threads=threads, method="sweeps", graph=graph, dtype="float64",
                             tiers=tier_ranges(rules), show_progress=show_progress, log=log)
    spec = TableSpec(GAME, rules.name, ENCODING, ENCODING_VERSION, header(rules))
    return solve_table(game, root, spec, settings, verify=True)


def load_royal_table(rules: royal.RuleSet, table_dir: str | os.PathLike[str] | None = None, *,
                     build: bool = True, log: Log | None = None, verify: bool | str | None = None) -> Table:
    """The solved table of the rule set, from ``table_dir`` (or the cache); solved when missing
    and ``build``. ``verify`` as in ``solver.tables.table.open_table`` (True: every checksum now)."""
    root = Path(table_dir) if table_dir is not None else default_table_dir(rules)
    expect = {"game": GAME, "rule": rules.name, "encoding": ENCODING, "encoding_version": ENCODING_VERSION,
              "options": header(rules)}

    def make() -> None:
        if log:
            log(f"no table at {root}; solving {rules.name} with {rules.pieces} pieces first")
        royal_solve(rules, root, log=log)

    if verify is None:
        return open_or_build(root, expect, make if build else None)
    return open_or_build(root, expect, make if build else None, verify=verify)


def win_probability(values: np.ndarray, rules: royal.RuleSet, state: royal.State) -> float:
    """The mover's chance of winning from ``state`` before rolling."""
    return float((1.0 + float(values[state_rank(rules, state)])) / 2.0)


@dataclass(frozen=True)
class RoyalChoice:
    move: royal.Move
    win_probability: float  # of the side that moves, after this move


def royal_choices(rules: royal.RuleSet, lookup: Any, state: royal.State, roll: int) -> list[RoyalChoice]:
    """Every legal move for the roll with the mover's chance of winning after it, best first;
    ``lookup(state)`` gives a state's mover win chance (a solved table or an .rgu file)."""
    out = []
    for m in royal.moves(state, roll, rules):
        if m.win:
            p = 1.0
        elif m.extra_roll:
            p = lookup(m.after)
        else:
            p = 1.0 - lookup(m.after)
        out.append(RoyalChoice(m, p))
    out.sort(key=lambda c: -c.win_probability)
    return out
