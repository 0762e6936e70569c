"""The claims registry: historical or rulebook claims about a game, each machine-checkable.

A claim is a record in ``data/claims/<game>.json``:

    {"name": "...", "game": "...", "source": "...", "claim": "... (our own words)",
     "options": {...rule options it depends on...}, "check": "package.module:function"}

``check`` names a function taking no required argument and returning a ``ClaimResult``.
"""
from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable

from gamesolver import data
from gamesolver.solver.errors import InputError

STATUSES = ("verified", "refuted", "undetermined")


@dataclass
class ClaimResult:
    """The verdict on one claim with its evidence (lines of text, figures, diagrams)."""

    status: str
    summary: str
    evidence: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"claim status must be one of {STATUSES}, not {self.status!r}")


@dataclass
class Claim:
    name: str
    game: str
    source: str
    claim: str
    options: dict[str, Any]
    check: str

    def checker(self) -> Callable[..., ClaimResult]:
        module, _, attr = self.check.partition(":")
        return getattr(importlib.import_module(module), attr)


def load_claims() -> list[Claim]:
    """Every claim in ``data/claims/*.json``, in file then record order."""
    claims: list[Claim] = []
    for file in sorted(data.path("claims").glob("*.json")):
        with open(file, encoding="utf-8") as f:
            for record in json.load(f):
                claims.append(Claim(**record))
    return claims


def find_claim(name: str) -> Claim:
    claims = load_claims()
    for c in claims:
        if c.name == name:
            return c
    raise InputError(f"unknown claim {name!r}; known claims: {', '.join(c.name for c in claims)}")
