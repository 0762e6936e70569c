"""Ur (fort rules) as data: the board geometry, the dice and the rule options.

The board and the dice are read from JSON files in ``data/`` (``--board FILE`` / ``--dice FILE``
replace them); every other module takes its numbers from the ``Board`` and ``Dice`` built here.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations_with_replacement
from pathlib import Path
from typing import Any

from gamesolver import data
from gamesolver.solver.errors import InputError

MAX_PIECES = 7
# a query solves a missing table of up to this many pieces on its own, in seconds (both rule
# families: the fort rules' three pieces, RoyalUr's three); larger ones are asked for, or --solve
AUTO_BUILD_MAX_PIECES = 3
# ... and what the command line adds where a missing table is larger (queries, exports)
SOLVE_HINT = "or add --solve to this command to solve it first (with a progress bar; a stopped solve resumes)"
MAX_TILES = 32  # tile sets are 32-bit masks in the kernels
ROLES = ("fort", "entry", "royal", "ishtar", "marduk")
SECTIONS = ("earth", "bridge", "heaven")
SPAWN_KINDS = ("adjacent", "royal", "ishtar", "marduk")
DEFAULT_BOARD = data.path("ur_board.json")
DEFAULT_DICE = data.path("ur_dice.json")


@dataclass(frozen=True)
class Board:
    """Tiles (index = position in the file), their neighbours, sections and roles."""

    names: tuple[str, ...]
    at: tuple[tuple[int, int], ...]
    sections: tuple[str, ...]
    roles: tuple[frozenset[str], ...]
    neighbours: tuple[tuple[int, ...], ...]
    digest: str  # sha256 of the file's bytes, recorded in table headers
    source: str

    @property
    def size(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        try:
            return self._by_name()[name.strip().upper()]
        except KeyError:
            raise InputError(f"unknown tile {name.strip()!r}; tiles are {', '.join(self.names)}") from None

    def _by_name(self) -> dict[str, int]:
        return {n.upper(): i for i, n in enumerate(self.names)}

    def with_role(self, role: str) -> frozenset[int]:
        return frozenset(i for i, r in enumerate(self.roles) if role in r)

    @property
    def forts(self) -> frozenset[int]:
        return self.with_role("fort")

    @property
    def earth_forts(self) -> frozenset[int]:
        return frozenset(i for i in self.forts if self.sections[i] == "earth")

    @property
    def heaven_forts(self) -> frozenset[int]:
        return frozenset(i for i in self.forts if self.sections[i] == "heaven")

    @property
    def entry(self) -> int:
        return next(iter(self.with_role("entry")))

    @property
    def mirror(self) -> tuple[int, ...] | None:
        """The left-right mirror (columns reversed) as a tile permutation, when it is a symmetry
        of the board: every tile has a twin, and twins share section, roles and mirrored
        neighbours. None otherwise (then a solve numbers every state)."""
        cols = [c for c, _ in self.at]
        where = {at: i for i, at in enumerate(self.at)}
        twin = []
        for c, r in self.at:
            j = where.get((min(cols) + max(cols) - c, r))
            if j is None:
                return None
            twin.append(j)
        for i, j in enumerate(twin):
            if self.sections[i] != self.sections[j] or self.roles[i] != self.roles[j]:
                return None
            if {twin[x] for x in self.neighbours[i]} != set(self.neighbours[j]):
                return None
        return tuple(twin)

    def mask(self, tiles: frozenset[int] | set[int]) -> int:
        m = 0
        for t in tiles:
            m |= 1 << t
        return m


@dataclass(frozen=True)
class Roll:
    name: str
    probability: float
    steps: int  # 0, 1 or 2: total steps the movement part allows
    spawn: str | None  # None or one of SPAWN_KINDS
    heaven_steps: int  # one piece may move up to this many steps while dominating Heaven (0: no)


@dataclass(frozen=True)
class Dice:
    rolls: tuple[Roll, ...]
    digest: str

    def names(self) -> list[str]:
        return [r.name for r in self.rolls]

    def index(self, name: str) -> int:
        wanted = "+".join(part.strip() for part in name.strip().lower().split("+"))  # 'Gold + Silver' too
        for i, r in enumerate(self.rolls):
            if r.name == wanted or "+".join(reversed(r.name.split("+"))) == wanted:
                return i
        raise InputError(f"unknown roll {name.strip()!r}; rolls are {', '.join(self.names())}")


@dataclass(frozen=True)
class UrOptions:
    """Rule options. ``pieces``: pieces per player (1-7); board and dice files as data;
    ``mirror``: number and solve one state of each pair that the board's left-right mirror maps
    onto each other (half the states; ignored on a board without that symmetry)."""

    pieces: int = MAX_PIECES
    board_file: str | None = None
    dice_file: str | None = None
    mirror: bool = True
    board: Board = field(init=False, repr=False, compare=False)
    dice: Dice = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.pieces, int) or not 1 <= self.pieces <= MAX_PIECES:
            raise InputError(f"pieces must be a whole number from 1 to {MAX_PIECES}, not {self.pieces!r}")
        object.__setattr__(self, "board", load_board(str(self.board_file or DEFAULT_BOARD)))
        object.__setattr__(self, "dice", load_dice(str(self.dice_file or DEFAULT_DICE)))

    def header(self) -> dict[str, Any]:
        """What a table depends on: recorded in (and checked against) table headers."""
        return {"pieces": self.pieces, "board_sha256": self.board.digest, "dice_sha256": self.dice.digest,
                "mirror": self.uses_mirror}

    @property
    def uses_mirror(self) -> bool:
        return self.mirror and self.board.mirror is not None


def _read_json(path: str, what: str) -> tuple[Any, str]:
    shipped = Path(path) in (Path(DEFAULT_BOARD), Path(DEFAULT_DICE))
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        if shipped:  # a damaged installation, not a user's mistake
            raise data.missing(Path(path), exc.strerror or str(exc)) from None
        raise InputError(f"cannot read {what} file {path}: {exc.strerror}") from None
    try:
        return json.loads(raw), hashlib.sha256(raw).hexdigest()
    except ValueError as exc:
        if shipped:
            raise data.missing(Path(path), f"not valid JSON ({exc})") from None
        raise InputError(f"{what} file {path} is not valid JSON ({exc})") from None


@lru_cache(maxsize=16)
def load_board(path: str | os.PathLike[str] = DEFAULT_BOARD) -> Board:
    """Read and check a board file: unique tile names, known roles, symmetric adjacency."""
    doc, digest = _read_json(str(path), "board")
    where = f"board file {path}"
    try:
        tiles = doc["tiles"]
        names = [str(t["name"]).upper() for t in tiles]
        at = [tuple(int(v) for v in t["at"]) for t in tiles]
        sections = [str(t["section"]) for t in tiles]
        roles = [frozenset(str(r) for r in t.get("roles", [])) for t in tiles]
        nbr_names = [[str(n).upper() for n in t["neighbours"]] for t in tiles]
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{where}: each tile needs name, at, section, roles, neighbours ({exc})") from None
    if not 1 <= len(names) <= MAX_TILES or len(set(names)) != len(names):
        raise InputError(f"{where}: needs 1 to {MAX_TILES} tiles with distinct names")
    index = {n: i for i, n in enumerate(names)}
    neighbours: list[tuple[int, ...]] = []
    for i, nb in enumerate(nbr_names):
        for n in nb:
            if n not in index:
                raise InputError(f"{where}: broken adjacency: {names[i]} lists unknown neighbour {n}")
            if n == names[i] or nb.count(n) > 1:
                raise InputError(f"{where}: broken adjacency: {names[i]} lists {n} wrongly (itself or twice)")
        neighbours.append(tuple(index[n] for n in nb))
    for i, adjacent in enumerate(neighbours):
        for j in adjacent:
            if i not in neighbours[j]:
                raise InputError(
                    f"{where}: broken adjacency: {names[i]} lists {names[j]} but {names[j]} does not list {names[i]}"
                )
    for i, (s, r) in enumerate(zip(sections, roles)):
        if s not in SECTIONS or not r <= set(ROLES):
            raise InputError(f"{where}: tile {names[i]} has an unknown section or role")
    board = Board(tuple(names), tuple(at), tuple(sections), tuple(roles), tuple(neighbours), digest, str(path))  # type: ignore[arg-type]
    for role in ("entry", "ishtar"):
        if len(board.with_role(role)) != 1:
            raise InputError(f"{where}: needs exactly one {role} tile")
    if len(board.earth_forts) != 2 or len(board.heaven_forts) != 2 or len(board.forts) != 4:
        raise InputError(f"{where}: needs two Earth forts and two Heaven forts")
    return board


@lru_cache(maxsize=16)
def load_dice(path: str | os.PathLike[str] = DEFAULT_DICE) -> Dice:
    """Read a dice file; a roll's probability follows from the tips per face of each die."""
    doc, digest = _read_json(str(path), "dice")
    try:
        faces = {str(k): int(v) for k, v in doc["faces"].items()}
        spec = doc["rolls"]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(f"dice file {path}: needs 'faces' and 'rolls' ({exc})") from None
    tips = sum(faces.values())
    prob: dict[str, float] = {}
    for a, b in combinations_with_replacement(faces, 2):
        p = faces[a] * faces[b] / tips**2
        prob[f"{a}+{b}"] = p if a == b else 2 * p
    rolls = []
    for name, what in spec.items():
        key = name.lower()
        if key not in prob:
            raise InputError(f"dice file {path}: roll {name!r} is not two of the faces {', '.join(faces)}")
        steps, spawn, heaven = int(what.get("steps", 0)), what.get("spawn"), int(what.get("heaven_steps", 0))
        if steps not in (0, 1, 2) or heaven not in (0, 3) or (spawn is not None and spawn not in SPAWN_KINDS):
            raise InputError(f"dice file {path}: roll {name!r} has an unsupported action")
        rolls.append(Roll(key, prob[key], steps, spawn, heaven))
    if sorted(r.name for r in rolls) != sorted(prob):
        raise InputError(f"dice file {path}: every pair of faces needs a roll entry")
    return Dice(tuple(rolls), digest)
