"""Opening files for RoyalUr's rule sets: the solved values of the positions near the start, small
enough to ship, so that ``best-move`` and ``analyze`` answer the opening of Finkel, Blitz and
Masters without their tables (1.1 GB to 4 GB, minutes to an hour to solve).

A file holds every state reachable from the start within T moves (a move: one roll and what the
player does with it, a pass included; an extra roll is a move of its own) plus one, so that every
value a query reads for a position within T moves (its own and each successor's) is there. It is
an ``.npz`` (no pickled objects): ``keys`` (int64, sorted: the state's rank in the rule set's
encoding, ``royal_table.state_rank``), ``values`` (float64, the table's V = P(win) - P(loss) for
the side to move, as stored), ``depth`` (uint8, the fewest moves from the start) and ``header``
(JSON as bytes: the rule set in RoyalUr's words, T, and the SHA-256 of the table's values with
its residual).
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from gamesolver import data
from gamesolver.games.ur import royal
from gamesolver.games.ur.opening import OutsideOpening, arrays_fit, read_file, values_sha256, write  # noqa: F401  (write: one writer for both families' files)
from gamesolver.solver.errors import CorruptTableError, InputError, TableMismatchError
from gamesolver.games.ur.royal_table import state_rank
from gamesolver.solver import __version__
from gamesolver.games.ur.provenance import Provenance

FORMAT_NAME = "gamesolver-royalur-opening"
FORMAT_VERSION = 1
MAX_TURNS = 8
SHIPPED = ("ur_opening",)  # package data, beside the fort rules' files


def settings_digest(rules: royal.RuleSet) -> str:
    return hashlib.sha256(json.dumps(rules.settings_json(), sort_keys=True).encode()).hexdigest()


def reachable(rules: royal.RuleSet, moves: int) -> dict[royal.State, int]:
    """Every state reachable from the start within ``moves`` moves, with the fewest moves to it
    (breadth first; a pass is a move to the swapped state, a won game is not a state)."""
    start = royal.start(rules).state()
    depth = {start: 0}
    frontier = [start]
    for d in range(1, moves + 1):
        nxt = []
        for state in frontier:
            for roll, _ in rules.roll_probabilities:
                legal = royal.moves(state, roll, rules)
                for after in [m.after for m in legal if not m.win] if legal else [state.swapped()]:
                    if after not in depth:
                        depth[after] = d
                        nxt.append(after)
        frontier = nxt
    return depth


def build(rules: royal.RuleSet, table: Any, turns: int) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays and header of an opening file of ``turns`` moves from the rule set's solved table."""
    if not 1 <= turns <= MAX_TURNS:
        raise InputError(f"turns must be from 1 to {MAX_TURNS}, not {turns}")
    depth = reachable(rules, turns + 1)
    ranks = np.array([state_rank(rules, s) for s in depth], dtype=np.int64)
    d = np.array(list(depth.values()), dtype=np.uint8)
    order = np.argsort(ranks)
    keys, d = ranks[order], d[order]
    values = np.asarray(table["value"], dtype=np.float64)[keys]
    meta = table.meta

    header = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "game": "ur",
        "rules": rules.name,
        "pieces": rules.pieces,
        "settings": rules.settings_json(),
        "settings_sha256": settings_digest(rules),
        "turns": turns,
        "positions_answered": int(np.count_nonzero(d <= turns)),
        "positions_stored": int(keys.size),
        "table": {
            "values_sha256": values_sha256(table["value"]),
            "state_count": int(table.state_count),
            "residual": meta.get("residual"),
            "tolerance": meta.get("tolerance"),
            "created": table.header.get("created", {}).get("at"),
        },
        "created": {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "by": f"gamesolver {__version__}"},
    }
    return {"keys": keys, "values": values, "depth": d}, header


class RoyalOpening:
    """An opened opening file of a RoyalUr rule set: the mover's chance of winning for the states
    it holds (``win_probability``), OutsideOpening for the others."""

    def __init__(self, path: Path, header: dict[str, Any], keys: np.ndarray, values: np.ndarray,
                 depth: np.ndarray, rules: royal.RuleSet) -> None:
        self.path, self.header, self.keys, self.values, self.depth = path, header, keys, values, depth
        self.rules = rules

    @property
    def turns(self) -> int:
        return int(self.header["turns"])

    @property
    def meta(self) -> dict[str, Any]:
        return dict(self.header["table"])

    @property
    def provenance(self) -> Any:
        return Provenance.of_meta(self.header["table"], False)

    def win_probability(self, state: royal.State) -> float:
        key = state_rank(self.rules, state)
        i = int(np.searchsorted(self.keys, key))
        if i >= self.keys.size or self.keys[i] != key:
            raise OutsideOpening(f"the opening file {self.path} does not hold this position")
        return float((1.0 + float(self.values[i])) / 2.0)

    def lookup(self) -> Callable[[royal.State], float]:
        return self.win_probability

    def source(self, shipped: bool) -> dict[str, Any]:
        """``describe`` as an answer's ``source`` in JSON, as the fort rules' opening files give it."""
        t = self.header["table"]
        return {"kind": "opening-file", "shipped": shipped, "file": str(self.path), "turns": self.turns,
                "table_values_sha256": t["values_sha256"], **self.provenance.table_fields()}

    def describe(self, shipped: bool) -> str:
        t = self.header["table"]
        which = "the shipped opening file" if shipped else f"the opening file {self.path}"
        return (f"{which} (positions within {self.turns} moves of the start), built from table "
                f"{t['values_sha256'][:16]} ({self.rules.name}, pieces={self.rules.pieces})")


def load(path: str | os.PathLike[str], rules: royal.RuleSet) -> RoyalOpening:
    """Open a RoyalUr opening file made for ``rules``; a broken one is a CorruptTableError, one for
    other rules a TableMismatchError (both one line)."""
    where = Path(path)
    header, arrays = read_file(where, FORMAT_NAME, FORMAT_VERSION, f"solver ur opening build --rules {rules.name}")
    keys, values, depth = arrays["keys"], arrays["values"], arrays["depth"]
    if not arrays_fit(header, keys, values, depth, np.int64, np.float64):
        raise CorruptTableError(f"opening file {where}: its arrays do not fit its header; build it again")
    for key, want in (("rules", rules.name), ("pieces", rules.pieces), ("settings_sha256", settings_digest(rules))):
        if header.get(key) != want:
            raise TableMismatchError(f"opening file {where} was built with {key}={header.get(key)!r}, "
                                     f"wanted {key}={want!r}")
    return RoyalOpening(where, header, keys, values, depth, rules)


def shipped_name(rules: royal.RuleSet) -> str:
    return f"{rules.name}-k{rules.pieces}-{settings_digest(rules)[:10]}.npz"


def shipped_path(rules: royal.RuleSet) -> Path:
    """Where the opening file shipped for this rule set and piece count would be."""
    return data.path(*SHIPPED, shipped_name(rules))


def shipped(rules: royal.RuleSet) -> RoyalOpening | None:
    """The opening file shipped for this rule set and piece count, or None."""
    file = shipped_path(rules)
    return load(file, rules) if file.is_file() else None
