"""The generator's hint (``sg_hint``: each outcome's value asked of the cache as its code is
written) is a hint only: every regenerating kernel that takes it gives the same values, policies,
changes and marks with it as without it, for the fort rules (the small test board, its
role-swapped variant, the real board) and RoyalUr's rules, in float32 and float64, over whole
sweeps, rank ranges and the skipping sweep's two paths."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ur import kernel, royal
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.royal_table import royal_game
from gamesolver.solver.stochastic import _engine as kernels
from tests.test_ur_reference import mini_options


@pytest.fixture(scope="module")
def games(tmp_path_factory):
    d = tmp_path_factory.mktemp("hint")
    return {
        "mini4": kernel(mini_options(d, 4)),
        "swapped4": kernel(mini_options(d, 4, swapped=True)),
        "real2": kernel(UrOptions(pieces=2)),
        "finkel2": royal_game(royal.load_ruleset("finkel", 2)),
        "masters2": royal_game(royal.load_ruleset("masters", 2)),
    }


def skip_arrays(n: int, seed: int):
    """Lead and stamp bytes that send some states down the row's path and the rest to the
    generator: stamps of round 0 (bound 1e-6) or never, and leads small and large."""
    rng = np.random.default_rng(seed)
    lead = rng.integers(0, kernels.LEAD_TOP + 3, size=n).astype(np.uint8)
    stamp = np.where(rng.random(n) < 0.5, 0, kernels.STAMP_NEVER).astype(np.uint8)
    bounds = np.full(256, np.inf)
    bounds[0] = 1e-6
    return lead, stamp, bounds


@settings(max_examples=12, deadline=None)
@given(which=st.sampled_from(["mini4", "swapped4", "real2", "finkel2", "masters2"]),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**32 - 1),
       threads=st.sampled_from([1, 2]), cut=st.floats(0.0, 1.0))
def test_the_hint_changes_no_value(games, which: str, dtype, seed: int, threads: int, cut: float) -> None:
    K = games[which]
    n, R = K.state_count, K.roll_count
    rng = np.random.default_rng(seed)
    start = int(cut * n) // 2
    stop = max(start + 1, int(cut * n))
    base = (rng.random(n) * 2 - 1).astype(dtype)
    for kwargs in ({}, {"start": start, "stop": stop}, {"backwards": True}):
        got = {}
        for hint in (False, True):
            V, P = base.copy(), np.zeros((n, R), dtype=np.int32)
            change = K.sweep(V, threads=1, policy=P, discount=0.999, hint=hint, **kwargs)
            residual = K.sweep(V, threads=threads, write=False, discount=0.999, hint=hint, **kwargs)
            got[hint] = (change, residual, V, P)
        assert got[False][:2] == got[True][:2]
        assert np.array_equal(got[False][2], got[True][2]) and np.array_equal(got[False][3], got[True][3])
    # the skipping sweep (one thread: its choice of path is then the same in both runs)
    lead0, stamp0, bounds = skip_arrays(n, seed)
    P0 = np.zeros((n, R), dtype=np.int32)
    K.sweep(base.copy(), policy=P0, discount=0.999)  # rows for the states the skip backs up from them
    got = {}
    for hint in (False, True):
        V, P, lead, stamp = base.copy(), P0.copy(), lead0.copy(), stamp0.copy()
        work = np.zeros(2, dtype=np.int64)
        change = K.sweep(V, policy=P, discount=0.999, lead=lead, stamp=stamp, bounds=bounds, now=1, work=work,
                         hint=hint)
        got[hint] = (change, V, P, lead, stamp, work)
    assert got[False][0] == got[True][0]
    for a, b in zip(got[False][1:], got[True][1:]):
        assert np.array_equal(a, b)
    # the endless check's pass, first and later (one thread: with two, the marks it adds in place
    # reach the other thread sooner or later, so the counts of a pass may differ from run to run)
    good = {}
    for hint in (False, True):
        g = np.zeros(n, dtype=np.uint8)
        added = [kernels.endless_pass(K, base, g, 0.05, first=True, hint=hint)]
        added.append(kernels.endless_pass(K, base, g, 0.05, hint=hint))
        good[hint] = (added, g)
    assert good[False][0] == good[True][0] and np.array_equal(good[False][1], good[True][1])
