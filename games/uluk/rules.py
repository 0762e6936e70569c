"""Uluk's numbers (``data/uluk_rules.json``) and the tribe board / feast card data files.

The printed boards and cards were lost, so they are always inputs: the shipped ones are
examples (``data/uluk_board_example.json``, ``data/uluk_feast_example.json``).
"""
from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from gamesolver import data
from gamesolver.solver.errors import InputError

EXAMPLE_BOARD = "uluk_board_example.json"
EXAMPLE_FEAST = "uluk_feast_example.json"


@dataclass(frozen=True)
class UlukRules:
    all_fed_bonus: int
    food_per_new_triber: int
    celebration_with_food: int
    celebration_with_poison: int
    treat_bonus: int
    hunger_penalty: int
    hunger_forgiven: int
    max_tribers: int
    arrow_kinds: tuple[str, ...]


@lru_cache(maxsize=1)
def rules() -> UlukRules:
    raw = data.load_json("uluk_rules.json")
    return UlukRules(
        all_fed_bonus=int(raw["all_fed_bonus"]),
        food_per_new_triber=int(raw["food_per_new_triber"]),
        celebration_with_food=int(raw["celebration_with_food"]),
        celebration_with_poison=int(raw["celebration_with_poison"]),
        treat_bonus=int(raw["treat_bonus"]),
        hunger_penalty=int(raw["hunger_penalty"]),
        hunger_forgiven=int(raw["hunger_tokens_forgiven_at_end"]),
        max_tribers=int(raw["max_tribers"]),
        arrow_kinds=tuple(raw["arrow_kinds"]),
    )


def key(name: str) -> str:
    """A resource name as the files use it: lower case, accents dropped (fnōrd -> fnord)."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return " ".join(plain.lower().split())


@dataclass(frozen=True)
class Resource:
    name: str
    food: bool = False
    treat: bool = False
    perishable: bool = False
    poison: bool = False
    holiday: bool = False
    raw: bool = False


@dataclass(frozen=True)
class Arrow:
    source: str
    target: str
    kind: str


@dataclass(frozen=True)
class Board:
    name: str
    resources: dict[str, Resource]
    arrows: tuple[Arrow, ...]
    example: bool


@dataclass(frozen=True)
class FeastCard:
    name: str
    needs: dict[str, int]
    one_set: int
    two_sets: int
    example: bool


def _load(path: str | Path | None, default: str) -> tuple[dict[str, Any], str]:
    if not path or path == "example":
        return data.load_json(default), str(data.path(default))
    file = Path(path)
    try:
        with open(file, encoding="utf-8") as f:
            return json.load(f), str(file)
    except OSError as exc:
        raise InputError(f"cannot read {file}: {exc.strerror}; expected a JSON file") from None
    except ValueError as exc:
        raise InputError(f"{file} is not valid JSON ({exc}); expected a JSON object") from None


def load_board(path: str | Path | None = None) -> Board:
    """A tribe board file (default: the shipped example)."""
    raw, where = _load(path, EXAMPLE_BOARD)
    try:
        resources = {}
        for name, spec in raw["resources"].items():
            flags = {k: bool(spec.get(k, False)) for k in ("food", "treat", "perishable", "poison", "holiday", "raw")}
            if flags["treat"]:
                flags["food"] = True  # a treat is a kind of food
            resources[key(name)] = Resource(key(name), **flags)
        arrows = tuple(Arrow(key(a["from"]), key(a["to"]), str(a["kind"])) for a in raw.get("arrows", []))
    except (KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"{where}: not a tribe board ({exc}); expected 'resources' and 'arrows'") from None
    for a in arrows:
        if a.kind not in rules().arrow_kinds:
            raise InputError(f"{where}: arrow kind {a.kind!r}; expected one of {', '.join(rules().arrow_kinds)}")
        for end in (a.source, a.target):
            if end not in resources:
                raise InputError(f"{where}: arrow names unknown resource {end!r}")
    return Board(str(raw.get("name", where)), resources, arrows, "_example" in raw)


def load_feast(path: str | Path | None = None) -> FeastCard:
    """A feast card file (default: the shipped example)."""
    raw, where = _load(path, EXAMPLE_FEAST)
    try:
        needs = {key(k): int(v) for k, v in raw["set"].items()}
        one, two = int(raw["one_set"]), int(raw["two_sets"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(f"{where}: not a feast card ({exc}); expected 'set', 'one_set', 'two_sets'") from None
    if any(v <= 0 for v in needs.values()) or not needs:
        raise InputError(f"{where}: a feast set needs at least one resource, each count >= 1")
    if one < 0 or two < 0:
        raise InputError(f"{where}: feast points are negative; expected numbers >= 0")
    return FeastCard(str(raw.get("name", where)), needs, one, two, "_example" in raw)
