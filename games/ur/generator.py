"""The fort rules' compiled move generator for a set of options: which build runs here
(``fort_module``: the POPCNT and BMI2 build where the CPU runs it well, else the POPCNT build where
the CPU has POPCNT, else the portable one) and the ``StochasticGame`` it makes (``kernel``, cached;
``fresh_kernel``, never cached), which the engine in ``solver.stochastic`` solves.
"""
from __future__ import annotations

import importlib
import os
from functools import lru_cache
from typing import Any

from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.errors import InputError
from gamesolver.games.ur import _fort


# which build of the fort rules' generator ``kernel`` uses: "auto" (the fastest this CPU runs well),
# or one by name: "portable" (any CPU), "popcnt" or "bmi2" (where the CPU has their instructions)
FORT_BUILD_ENV = "SOLVER_FORT_BUILD"
FORT_BUILDS = ("auto", "portable", "popcnt", "bmi2")
_MODULES = {"portable": "_fort", "popcnt": "_fort_popcnt", "bmi2": "_fort_bmi2"}


def fort_module(build: str | None = None) -> Any:
    """The compiled module of the fort rules' generator for ``build`` (default: the environment's
    SOLVER_FORT_BUILD, else "auto"). "auto" takes ``_fort_bmi2`` (built for x86-64 CPUs with POPCNT
    and BMI2: bit counts inline, the squeeze of a tile set one PEXT) where the CPU runs PEXT well,
    else ``_fort_popcnt`` (bit counts inline, tile sets squeezed by loops: AMD before Zen 3, whose
    PEXT is microcode, and CPUs without BMI2) where it has POPCNT, else ``_fort``. A build named
    outright is refused where this CPU lacks its instructions or it was not built. All give the
    same codes; tests hold them to each other."""
    build = build or os.environ.get(FORT_BUILD_ENV) or "auto"
    if build not in FORT_BUILDS:
        raise InputError(f"{FORT_BUILD_ENV} must be one of {', '.join(FORT_BUILDS)}; got {build!r}")
    if build == "auto":
        for name in ("bmi2", "popcnt"):
            if _fort.fast_bmi2() if name == "bmi2" else _fort.cpu_has(name):
                try:
                    return importlib.import_module(f"gamesolver.games.ur.{_MODULES[name]}")
                except ImportError:  # a build for another architecture, or without it
                    pass
        return _fort
    if not _fort.cpu_has(build):
        raise InputError(f"{FORT_BUILD_ENV}={build}: this CPU lacks the instructions that build is compiled for; "
                         f"use auto or portable")
    try:
        return importlib.import_module(f"gamesolver.games.ur.{_MODULES[build]}")
    except ImportError:
        raise InputError(f"{FORT_BUILD_ENV}={build}: that build is not installed here (it is built on x86-64 only); "
                         f"use auto or portable") from None


def kernel(options: UrOptions, build: str | None = None) -> "gamesolver.games.ur._fort.FortGame":  # type: ignore[name-defined]  # noqa: F821
    """The fort rules' move generator for these options (board, dice and piece count in C form),
    a ``StochasticGame`` that the engine in ``solver.stochastic`` solves; ``build`` as in
    ``fort_module``. One generator per (options, compiled module): the build is chosen before the
    cache, so SOLVER_FORT_BUILD counts on every call and "auto" shares the default's generator."""
    return _cached_game(options, fort_module(build))


def fresh_kernel(options: UrOptions, build: str | None = None) -> Any:
    """``kernel``'s generator, but one of its own, never cached (e.g. to build a mirror index
    afresh beside the cached generator's)."""
    return _new_game(options, fort_module(build))


def _new_game(options: UrOptions, module: Any) -> Any:
    b = options.board
    rolls = [
        (
            r.probability,
            r.steps,
            r.heaven_steps,
            1 if r.spawn == "adjacent" else 0,
            b.mask(b.with_role(r.spawn)) if r.spawn and r.spawn != "adjacent" else 0,
        )
        for r in options.dice.rolls
    ]
    return module.FortGame(
        b.size,
        options.pieces,
        [list(n) for n in b.neighbours],
        b.mask(b.forts),
        b.mask(b.earth_forts),
        b.mask(b.heaven_forts),
        b.mask(b.with_role("ishtar")),
        b.mask({b.entry}),
        rolls,
        mirror=list(b.mirror) if options.uses_mirror else None,  # type: ignore[arg-type]
        threads=max(1, len(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else 1,
    )


_cached_game = lru_cache(maxsize=8)(_new_game)
kernel.cache_clear = _cached_game.cache_clear  # type: ignore[attr-defined]  # forget every generator built
