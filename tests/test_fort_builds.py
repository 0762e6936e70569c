"""The fort rules' generator is compiled twice (setup.py): ``_fort`` for any CPU and, on x86-64,
``_fort_bmi2`` with POPCNT and BMI2 (bit counts inline, ``squeeze`` one PEXT), which
``games.ur.kernel`` picks where the CPU runs it well. Both must number states and write outcome
codes identically, and sweep to the same values bit for bit."""
from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ur.generator import FORT_BUILD_ENV, fort_module, kernel
from gamesolver.games.ur import _fort
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.cli import cli
from gamesolver.solver.errors import InputError
from tests.test_engine import symmetric_options
from tests.test_ur_reference import mini_options

try:
    from gamesolver.games.ur import _fort_bmi2
except ImportError:  # not built (another architecture)
    _fort_bmi2 = None

BMI2_HERE = _fort_bmi2 is not None and _fort.fast_bmi2()
needs_bmi2 = pytest.mark.skipif(
    not BMI2_HERE,
    reason="the POPCNT and BMI2 build is not here, or this CPU does not run it (no BMI2, or a microcoded PEXT)")


@pytest.fixture(autouse=True)
def default_build(monkeypatch):
    """Every test here starts with SOLVER_FORT_BUILD unset, so the default build is "auto" even
    where the suite itself runs under SOLVER_FORT_BUILD=portable; a test that wants the variable
    sets it."""
    monkeypatch.delenv(FORT_BUILD_ENV, raising=False)


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    """Each game as (portable, BMI2) generators (only the tests that need the BMI2 build ask)."""
    d = tmp_path_factory.mktemp("builds")
    opts = {"real3": UrOptions(pieces=3), "real4": UrOptions(pieces=4), "real5-full": UrOptions(pieces=5, mirror=False),
            "symmetric3": symmetric_options(d, 3, mirror=True), "mini4": mini_options(d, 4)}
    return {name: (kernel(o, "portable"), kernel(o, "auto")) for name, o in opts.items()}


def test_the_builds_say_what_they_are() -> None:
    assert not _fort.uses_bmi2()
    if BMI2_HERE:
        assert _fort_bmi2.uses_bmi2()
        assert fort_module() is _fort_bmi2
        assert fort_module("auto") is _fort_bmi2
    assert fort_module("portable") is _fort


@needs_bmi2
@settings(max_examples=80, deadline=None)
@given(which=st.sampled_from(["real3", "real4", "real5-full", "symmetric3", "mini4"]), where=st.floats(0, 1))
def test_both_builds_write_the_same_codes_and_numbers(pairs, which: str, where: float) -> None:
    plain, fast = pairs[which]
    assert type(fast).__module__ == _fort_bmi2.__name__ and type(plain).__module__ == _fort.__name__
    assert plain.state_count == fast.state_count
    r = min(int(where * plain.state_count), plain.state_count - 1)
    ranks = np.arange(r, min(r + 64, plain.state_count))
    m, o = plain.unrank(ranks)
    m2, o2 = fast.unrank(ranks)
    assert np.array_equal(m, m2) and np.array_equal(o, o2)
    assert np.array_equal(fast.rank(m, o), ranks)
    for s in ranks[::8]:
        assert plain.outcome_groups(int(s)) == fast.outcome_groups(int(s))


@needs_bmi2
@pytest.mark.parametrize("which", ["real3", "mini4"])
def test_both_builds_sweep_to_the_same_values_bit_for_bit(pairs, which: str) -> None:
    plain, fast = pairs[which]
    V = np.random.default_rng(3).random(plain.state_count, dtype=np.float32) * 2 - 1
    W = V.copy()
    for _ in range(2):
        a = plain.sweep(V, threads=1)
        b = fast.sweep(W, threads=1)
        assert a == b and np.array_equal(V, W)


def test_a_bad_build_name_is_one_line(monkeypatch) -> None:
    with pytest.raises(InputError, match=f"{FORT_BUILD_ENV} must be 'auto' or 'portable'; got 'fast'"):
        fort_module("fast")
    kernel(UrOptions(pieces=2))  # a generator cached before the variable is set does not hide it
    monkeypatch.setenv(FORT_BUILD_ENV, "fast")
    res = CliRunner().invoke(cli, ["ur", "best-move", "X:A1 O:- X", "--roll", "gold+gold", "--pieces", "2"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert res.output.strip().splitlines()[-1].endswith(f"{FORT_BUILD_ENV} must be 'auto' or 'portable'; got 'fast'")


def test_the_portable_build_can_be_asked_for(monkeypatch) -> None:
    o = UrOptions(pieces=2)
    default = kernel(o)
    assert kernel(o, "auto") is default  # one generator for the default and "auto"
    monkeypatch.setenv(FORT_BUILD_ENV, "portable")
    assert fort_module() is _fort
    assert type(kernel(o)).__module__ == _fort.__name__  # the variable counts after a first call too
