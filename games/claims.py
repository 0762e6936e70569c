"""The claims registry: statements from the rulebooks and sources, each with a check that can fail.

A claim is a record in ``data/claims/<game>.json``:

    {"name": "...", "game": "...", "source": "title, section", "claim": "... (our own words)",
     "options": {...}, "check": "package.module:function"}

``check`` names a function whose keyword arguments are exactly the claim's ``options``: the
check runs under those options and nothing else, so editing them changes the evidence.
``data/claims/index.json`` says how many claims each file holds, so a registry that lost some
(a file missing from an install, a record deleted) is noticed instead of silently passing.

Also here: the posterior interval used wherever a verdict rests on measured face counts.
"""
from __future__ import annotations

import importlib
import inspect
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from gamesolver import data
from gamesolver.solver.errors import InputError

STATUSES = ("verified", "refuted", "undetermined")
INDEX = "index.json"


@dataclass
class ClaimResult:
    """The verdict on one claim: a one-line summary, the evidence a reader needs, the figures
    behind it, the uncertainty where measured data enters, and long listings (``details``)
    that are shown only on request."""

    status: str
    summary: str
    evidence: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    uncertainty: dict[str, Any] | None = None
    details: list[str] = field(default_factory=list)

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

    def run(self, overrides: dict[str, Any] | None = None, **extra: Any) -> ClaimResult:
        """Run the check under the claim's options (``overrides`` replace some of them).

        ``extra`` are keyword arguments that are not rule options (``plots_dir``); they are
        passed only to a check that takes them."""
        check = self.checker()
        params = inspect.signature(check).parameters
        opts = {**self.options, **(overrides or {})}
        unknown = sorted(set(opts) - set(params))
        if unknown:
            raise InputError(f"claim {self.name}: option(s) {', '.join(unknown)} are not taken by its check "
                             f"{self.check}; it takes {', '.join(p for p in params if p != 'plots_dir')}")
        opts.update({k: v for k, v in extra.items() if k in params and v is not None})
        return check(**opts)


class RegistryError(Exception):
    """The claims registry is missing or holds fewer claims than its index lists."""


def _read(file: Any) -> Any:
    with open(file, encoding="utf-8") as f:
        return json.load(f)


def load_claims() -> list[Claim]:
    """Every claim in ``data/claims/*.json``, in file then record order."""
    claims: list[Claim] = []
    folder = data.path("claims")
    if not folder.is_dir():
        return claims
    for file in sorted(folder.glob("*.json")):
        if file.name == INDEX:
            continue
        for record in _read(file):
            claims.append(Claim(**record))
    return claims


def expected_counts() -> dict[str, int]:
    """How many claims each registry file should hold, from ``data/claims/index.json``."""
    file = data.path("claims", INDEX)
    if not file.is_file():
        return {}
    return {name: int(n) for name, n in _read(file)["files"].items()}


def check_registry(claims: Sequence[Claim]) -> None:
    """Raise ``RegistryError`` (one line) when there are no claims or fewer than the index lists."""
    expected = expected_counts()
    if not claims:
        raise RegistryError("no claims found in the registry (data/claims/*.json); the package data is missing")
    by_game: dict[str, int] = {}
    for c in claims:
        by_game[c.game] = by_game.get(c.game, 0) + 1
    short = []
    for file, n in expected.items():
        got = by_game.get(file.removesuffix(".json"), 0)
        if got < n:
            short.append(f"{file} {got} of {n}")
    if short:
        raise RegistryError(f"the claims registry holds fewer claims than its index lists ({'; '.join(short)}); "
                            f"{len(claims)} found, {sum(expected.values())} expected")


def find_claim(name: str) -> Claim:
    claims = load_claims()
    for c in claims:
        if c.name == name:
            return c
    raise InputError(f"unknown claim {name!r}; known claims: {', '.join(c.name for c in claims)}")


# ---------------------------------------------------------------- measured probabilities


def dirichlet_draws(counts: Sequence[int], draws: int = 2000, seed: int = 0,
                    prior: float = 1.0) -> np.ndarray:
    """Face probabilities drawn from the posterior after ``counts`` throws (rows sum to 1).

    A flat Dirichlet prior (every face 1 pseudo-throw) updated by the observed counts gives
    Dirichlet(counts + 1); a fixed seed keeps the report the same from run to run."""
    seen = np.asarray(counts, dtype=float)
    if seen.ndim != 1 or seen.size < 2 or np.any(seen < 0):
        raise InputError(f"throw counts must be two or more non-negative numbers, got {list(seen)}")
    if draws < 100:
        raise InputError(f"draws must be at least 100 for a usable interval, got {draws}")
    return np.random.default_rng(seed).dirichlet(seen + prior, size=draws)


def interval(values: Sequence[float] | np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The central ``level`` interval of sampled values."""
    v = np.asarray(values, dtype=float)
    lo = (1 - level) / 2
    return float(np.quantile(v, lo)), float(np.quantile(v, 1 - lo))


def verdict_from_interval(lo: float, hi: float, threshold: float = 0.0) -> str:
    """``verified`` when the whole interval lies above ``threshold``, ``refuted`` when below,
    ``undetermined`` when it straddles it: the data cannot tell."""
    if lo > threshold:
        return "verified"
    if hi < threshold:
        return "refuted"
    return "undetermined"
