"""The fort rules' generator is compiled three times (setup.py): ``_fort`` for any CPU and, on
x86-64, ``_fort_popcnt`` with POPCNT (bit counts inline, from-scratch ranks by ``colex_outside``)
and ``_fort_bmi2`` with POPCNT and BMI2 (``squeeze`` one PEXT); ``games.ur.generator`` picks the
fastest this CPU runs well. Every build must number states and write outcome codes identically, and
sweep to the same values bit for bit. Each build is tested wherever the CPU has its instructions,
whether or not it runs them fast (a microcoded PEXT is slow but exact)."""
from __future__ import annotations

import importlib

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ur.generator import FORT_BUILD_ENV, FORT_BUILDS, fort_module, kernel
from gamesolver.games.ur import _fort
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.cli import cli
from gamesolver.solver.errors import InputError
from tests.test_engine import symmetric_options
from tests.test_ur_reference import mini_options


def _module(build: str):
    """The compiled module of ``build`` where it is built and this CPU runs it, else None."""
    try:
        module = importlib.import_module(f"gamesolver.games.ur._fort_{build}")
    except ImportError:  # not built (another architecture)
        return None
    return module if _fort.cpu_has(build) else None


MODULES = {"portable": _fort, "popcnt": _module("popcnt"), "bmi2": _module("bmi2")}
FAST = ("popcnt", "bmi2")
BAD_NAME = f"{FORT_BUILD_ENV} must be one of auto, portable, popcnt, bmi2; got 'fast'"


def needs(build: str) -> None:
    if MODULES[build] is None:
        pytest.skip(f"the {build} build is not here, or this CPU lacks its instructions")


@pytest.fixture(autouse=True)
def default_build(monkeypatch):
    """Every test here starts with SOLVER_FORT_BUILD unset, so the default build is "auto" even
    where the suite itself runs under SOLVER_FORT_BUILD=portable; a test that wants the variable
    sets it."""
    monkeypatch.delenv(FORT_BUILD_ENV, raising=False)


@pytest.fixture(scope="module")
def games(tmp_path_factory):
    """Each game's generator of every build that runs here, by build name."""
    d = tmp_path_factory.mktemp("builds")
    opts = {"real3": UrOptions(pieces=3), "real4": UrOptions(pieces=4), "real5-full": UrOptions(pieces=5, mirror=False),
            "symmetric3": symmetric_options(d, 3, mirror=True), "mini4": mini_options(d, 4)}
    return {name: {b: kernel(o, b) for b, m in MODULES.items() if m is not None} for name, o in opts.items()}


def test_the_builds_say_what_they_are() -> None:
    assert _fort.build_name() == "portable" and not _fort.uses_bmi2()
    for build in FAST:
        if MODULES[build] is not None:
            assert MODULES[build].build_name() == build
            assert MODULES[build].uses_bmi2() == (build == "bmi2")
            assert fort_module(build) is MODULES[build]
    assert fort_module("portable") is _fort
    if MODULES["bmi2"] is not None and _fort.fast_bmi2():
        expected = MODULES["bmi2"]
    elif MODULES["popcnt"] is not None:
        expected = MODULES["popcnt"]  # e.g. AMD before Zen 3: POPCNT, and a PEXT in microcode
    else:
        expected = _fort
    assert fort_module() is expected and fort_module("auto") is expected


@settings(max_examples=80, deadline=None)
@given(build=st.sampled_from(FAST), which=st.sampled_from(["real3", "real4", "real5-full", "symmetric3", "mini4"]),
       where=st.floats(0, 1))
def test_every_build_writes_the_same_codes_and_numbers(games, build: str, which: str, where: float) -> None:
    needs(build)
    plain, fast = games[which]["portable"], games[which][build]
    assert type(fast).__module__ == MODULES[build].__name__ and type(plain).__module__ == _fort.__name__
    assert plain.state_count == fast.state_count
    r = min(int(where * plain.state_count), plain.state_count - 1)
    ranks = np.arange(r, min(r + 64, plain.state_count))
    m, o = plain.unrank(ranks)
    m2, o2 = fast.unrank(ranks)
    assert np.array_equal(m, m2) and np.array_equal(o, o2)
    assert np.array_equal(fast.rank(m, o), ranks)
    for s in ranks[::8]:
        assert plain.outcome_groups(int(s)) == fast.outcome_groups(int(s))


@pytest.mark.parametrize("build", FAST)
@pytest.mark.parametrize("which", ["real3", "mini4"])
def test_every_build_sweeps_to_the_same_values_bit_for_bit(games, build: str, which: str) -> None:
    needs(build)
    plain, fast = games[which]["portable"], games[which][build]
    V = np.random.default_rng(3).random(plain.state_count, dtype=np.float32) * 2 - 1
    W = V.copy()
    for _ in range(2):
        a = plain.sweep(V, threads=1)
        b = fast.sweep(W, threads=1)
        assert a == b and np.array_equal(V, W)


def test_a_build_this_cpu_lacks_is_refused(monkeypatch) -> None:
    monkeypatch.setattr(_fort, "cpu_has", lambda build: build == "portable")
    for build in FAST:
        with pytest.raises(InputError, match=f"{FORT_BUILD_ENV}={build}: this CPU lacks the instructions"):
            fort_module(build)
    monkeypatch.setattr(_fort, "fast_bmi2", lambda: False)
    assert fort_module() is _fort  # "auto" falls back on the portable build


def test_cpu_has_knows_the_builds() -> None:
    assert _fort.cpu_has("portable")
    assert _fort.cpu_has("bmi2") <= _fort.cpu_has("popcnt")  # BMI2's build needs POPCNT too
    assert _fort.fast_bmi2() <= _fort.cpu_has("bmi2")
    with pytest.raises(ValueError, match="unknown build 'fast'; the builds are portable, popcnt and bmi2"):
        _fort.cpu_has("fast")


def test_a_bad_build_name_is_one_line(monkeypatch) -> None:
    with pytest.raises(InputError, match=BAD_NAME):
        fort_module("fast")
    kernel(UrOptions(pieces=2))  # a generator cached before the variable is set does not hide it
    monkeypatch.setenv(FORT_BUILD_ENV, "fast")
    res = CliRunner().invoke(cli, ["ur", "best-move", "X:A1 O:- X", "--roll", "gold+gold", "--pieces", "2"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert res.output.strip().splitlines()[-1].endswith(BAD_NAME)


def test_the_portable_build_can_be_asked_for(monkeypatch) -> None:
    o = UrOptions(pieces=2)
    default = kernel(o)
    assert kernel(o, "auto") is default  # one generator for the default and "auto"
    monkeypatch.setenv(FORT_BUILD_ENV, "portable")
    assert fort_module() is _fort
    assert type(kernel(o)).__module__ == _fort.__name__  # the variable counts after a first call too
