"""The walk's policies on the Ur solve: recorded policies and the sweeps of them (plain, over a
hot set), the method choice, and BiCGSTAB, which the proof's evaluations use."""
from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ur import kernel
from gamesolver.solver.stochastic.planning import choose_method
from gamesolver.solver.cli import cli
from gamesolver.solver.errors import InputError
from gamesolver.solver.stochastic.krylov import bicgstab
from tests.test_ur_reference import mini_options

WIN, LOSS = -(2**31), -(2**31) + 1


def term(code: int, V: np.ndarray) -> float:
    """The value a policy code stands for, written out plainly."""
    if code == WIN:
        return 1.0
    if code == LOSS:
        return -1.0
    return float(V[code]) if code >= 0 else -float(V[-code - 1])


@pytest.fixture(scope="module")
def mini4(tmp_path_factory):
    o = mini_options(tmp_path_factory.mktemp("mini"), 4)
    K = kernel(o)
    rng = np.random.default_rng(7)
    V = (rng.random(K.state_count, dtype=np.float32) * 2 - 1).astype(np.float32)
    return o, K, V


def greedy(K, V0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values after one full sweep from ``V0`` and the policy that sweep recorded."""
    V = V0.copy()
    policy = np.empty((K.state_count, K.roll_count), dtype=np.int32)
    K.sweep(V, threads=2, policy=policy)
    return V, policy


def test_recorded_policy_codes_are_each_rolls_best_outcome(mini4) -> None:
    o, K, V0 = mini4
    n, R = K.state_count, len(o.dice.rolls)
    before = V0.copy()
    after = V0.copy()
    policy = np.full((n, R), 12345, dtype=np.int32)
    # a Jacobi-style check needs the values the sweep read; one state at a time keeps them
    rng = np.random.default_rng(3)
    for s in rng.choice(n, 300, replace=False):
        after[:] = before
        K.sweep(after, threads=1, start=int(s), stop=int(s) + 1, policy=policy)
        ms, ts = K.unrank([s])
        if set(policy[s]) <= {WIN, LOSS}:  # a finished game: one code for every roll
            assert len(set(policy[s])) == 1 and after[s] == (1.0 if policy[s, 0] == WIN else -1.0)
            continue
        best = K.roll_values(before, int(s))
        got = [term(int(c), before) for c in policy[s]]
        assert np.allclose(got, best, atol=0)  # the code is the argmax, not just as good
        expect = sum(r.probability * b for r, b in zip(o.dice.rolls, best))
        assert abs(after[s] - expect) < 1e-6


def test_policy_products_equal_a_plain_sum_over_the_codes(mini4) -> None:
    o, K, V0 = mini4
    n, R = K.state_count, len(o.dice.rolls)
    V, policy = greedy(K, V0)
    p = [r.probability for r in o.dice.rolls]
    x = np.random.default_rng(5).random(n) * 2 - 1
    c_and_ax = np.empty(n)
    ax = np.empty(n)
    minus = np.empty(n)
    K.policy_apply(policy, x, c_and_ax, constants=True, threads=2)
    K.policy_apply(policy, x, ax, threads=2)
    K.policy_apply(policy, x, minus, minus=True, threads=2)
    for s in np.random.default_rng(6).choice(n, 300, replace=False):
        full = sum(p[r] * term(int(policy[s, r]), x) for r in range(R))
        lin = sum(p[r] * term(int(policy[s, r]), x) for r in range(R) if policy[s, r] not in (WIN, LOSS))
        assert c_and_ax[s] == pytest.approx(full, abs=1e-12)
        assert ax[s] == pytest.approx(lin, abs=1e-12)
        assert minus[s] == pytest.approx(x[s] - lin, abs=1e-12)
    # one float32 Gauss-Seidel sweep of the policy, checked on its first state (read before any write)
    W = V.copy()
    K.evaluate(policy, W, threads=1)
    assert W[0] == pytest.approx(sum(p[r] * term(int(policy[0, r]), V) for r in range(R)), abs=1e-6)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 60), st.integers(0, 2**32 - 1))
def test_bicgstab_equals_a_dense_solve(size: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    # like a policy's I - A: rows of A are signed weights summing to at most 0.9 in size
    A = rng.random((size, size)) * (rng.random((size, size)) < 0.3) * rng.choice([-1, 1], (size, size))
    A *= 0.9 / np.maximum(np.abs(A).sum(axis=1, keepdims=True), 1e-12)
    M = np.eye(size) - A
    b = rng.random(size) * 2 - 1
    res = bicgstab(lambda x, out: np.matmul(M, x, out=out), b, np.zeros(size), tol=1e-11, maxiter=500)
    assert res.converged
    assert np.allclose(res.x, np.linalg.solve(M, b), atol=1e-9)


def test_bicgstab_reports_failure_when_stopped_early() -> None:
    size = 200
    rng = np.random.default_rng(1)
    A = np.roll(np.eye(size), 1, axis=1) * 0.999  # a long slow cycle
    M = np.eye(size) - A
    b = rng.random(size)
    res = bicgstab(lambda x, out: np.matmul(M, x, out=out), b, np.zeros(size), tol=1e-12, maxiter=2)
    assert not res.converged and res.residual > 1e-12


def test_method_choice() -> None:
    assert choose_method("sweeps", 10**6, 6) == "sweeps"
    assert choose_method("walk", 1000, 6) == "walk"
    with pytest.raises(InputError, match="memory"):
        choose_method("walk", 10**13, 6, place="memory")  # far more memory than any machine
    with pytest.raises(InputError, match="unknown method 'policy'; expected one of walk, sweeps"):
        choose_method("policy", 10, 6)  # the experimental Krylov method is gone


def test_cli_method_option(tmp_path) -> None:
    r = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "1", "--method", "newton", "--out", str(tmp_path / "t")])
    assert r.exit_code == 2 and "newton" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "1", "--threads", "0", "--out", str(tmp_path / "t")])
    assert r.exit_code == 2 and "--threads" in r.output
    r = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "2", "--method", "sweeps", "--out", str(tmp_path / "t")])
    assert r.exit_code == 0, r.output
    assert "(sweeps)" in r.output and "value of start for the first player: +0.000000" in r.output


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), share=st.floats(0.0, 1.0), discount=st.sampled_from([1.0, 0.999]),
       above=st.sampled_from([0.0, 1e-3, 0.05]), ahead=st.sampled_from([0, 3, 32]))
def test_a_hot_set_sweep_is_gauss_seidel_over_those_states_alone(mini4, seed: int, share: float,
                                                                  discount: float, above: float, ahead: int) -> None:
    """``evaluate(subset=...)`` updates the listed states in rank order, each from the values as
    they stand (the earlier ones already updated), and nothing else; ``mark`` gains a 1 exactly
    where the value moved by more than ``above`` and keeps the marks it had."""
    from gamesolver.solver.stochastic import _engine as kernels

    o, K, V0 = mini4
    n, R = K.state_count, len(o.dice.rolls)
    _, policy = greedy(K, V0)
    rng = np.random.default_rng(seed)
    subset = np.flatnonzero(rng.random(n) < share).astype(np.int64)
    before = (rng.random(n) * 2 - 1).astype(np.float32)
    want = before.astype(np.float64)
    p = [r.probability for r in o.dice.rolls]
    for s in subset:  # the slow reference: a plain Gauss-Seidel pass over the subset
        want[s] = sum(p[r] * (term(int(c), want) if c in (WIN, LOSS) else discount * term(int(c), want))
                      for r, c in enumerate(policy[s]))
    got = before.copy()
    mark = (rng.random(n) < 0.05).astype(np.uint8)
    had = mark.copy()
    change = kernels.evaluate(K, policy, got, threads=1, discount=discount, subset=subset, mark=mark, above=above,
                              ahead=ahead)
    assert np.abs(got.astype(np.float64) - want).max() < 1e-5
    outside = np.ones(n, dtype=bool)
    outside[subset] = False
    assert np.array_equal(got[outside], before[outside])
    moved = np.abs(got - before)  # float32, as the kernel compares
    assert change == (moved.max() if subset.size else 0.0)
    assert np.array_equal(mark, np.where(moved > np.float32(above), 1, had).astype(np.uint8))
    # the whole range with a mark: the same values as without one
    a, b = before.copy(), before.copy()
    assert kernels.evaluate(K, policy, a, threads=1, mark=np.zeros(n, dtype=np.uint8)) == \
        kernels.evaluate(K, policy, b, threads=1)
    assert np.array_equal(a, b)


def test_a_hot_set_must_be_increasing_ranks_and_a_mark_one_byte_a_state(mini4) -> None:
    from gamesolver.solver.stochastic import _engine as kernels

    _, K, V0 = mini4
    n = K.state_count
    _, policy = greedy(K, V0)
    V = V0.copy()
    for bad in ([3, 2], [1, 1], [-1, 4], [0, n]):
        with pytest.raises(ValueError, match="increasing ranks"):
            kernels.evaluate(K, policy, V, subset=np.array(bad, dtype=np.int64))
    long = np.arange(0, min(n, 30_000), 3, dtype=np.int64)  # one step down anywhere in a long set
    for at in (1, long.size // 2, long.size - 1):
        bad = long.copy()
        bad[at] = bad[at - 1]
        with pytest.raises(ValueError, match="increasing ranks"):
            kernels.evaluate(K, policy, V, subset=bad)
    assert np.array_equal(V, V0)
    kernels.evaluate(K, policy, V.copy(), subset=long)  # and the set itself is fine
    with pytest.raises(ValueError, match="mark array"):
        kernels.evaluate(K, policy, V, mark=np.zeros(n - 1, dtype=np.uint8))
    assert np.array_equal(V, V0)


def test_the_walk_with_hot_sets_solves_the_test_board_like_without(tmp_path, monkeypatch) -> None:
    """Hot-set rounds (the default) and the plain rounds end on the same values, both passing the
    endless check without a repair; the hot sets did sweep states. On one thread, where a walk
    takes the same course every time (on two its threads' timing orders the updates, see below)."""
    from gamesolver.games.ur.solve import solve
    from gamesolver.solver.stochastic import walk

    o = mini_options(tmp_path, 4)
    assert walk.WALK_HOT_SWEEPS > 0
    hot = solve(o, tmp_path / "hot", tolerance=1e-6, threads=1)
    monkeypatch.setattr(walk, "WALK_HOT_SWEEPS", 0)
    plain = solve(o, tmp_path / "plain", tolerance=1e-6, threads=1)
    for t in (hot, plain):
        assert t.meta["endless_check"]["flagged"] == 0 and t.meta["endless_repairs"] == 0
    assert hot.meta["hot_set_states"] > 0 and plain.meta["hot_set_states"] == 0
    assert np.abs(np.asarray(hot["value"]) - np.asarray(plain["value"])).max() < 2e-5


def test_two_threads_walks_end_on_the_one_thread_values_whatever_their_course(tmp_path, monkeypatch) -> None:
    """On two threads each sweep's updates land in the order the threads' timing gives, so two runs
    of one walk differ, and now and then (some 1 in 7 plain walks of this board, 1 in 50 with hot
    sets) the undiscounted stage settles on a false solution that the endless check flags and a
    local repair mends. What must hold whatever the course: every run ends passing the check, on
    the one-thread table's values."""
    from gamesolver.games.ur.solve import solve
    from gamesolver.solver.stochastic import walk

    o = mini_options(tmp_path, 4)
    one = np.asarray(solve(o, tmp_path / "one", tolerance=1e-6, threads=1)["value"])
    for hot in (walk.WALK_HOT_SWEEPS, 0):
        monkeypatch.setattr(walk, "WALK_HOT_SWEEPS", hot)
        for run in range(3):
            t = solve(o, tmp_path / f"two-{hot}-{run}", tolerance=1e-6, threads=2)
            assert t.meta["endless_check"]["flagged"] == 0 and t.meta["residual"] < 1e-6
            assert np.abs(np.asarray(t["value"]) - one).max() < 2e-5
            assert (t.meta["hot_set_states"] > 0) == (hot > 0)


def test_a_walk_stage_ends_once_its_change_stays_near_the_aim() -> None:
    """``Stall`` with ``near``: five changes in a row below twice the aim end a stage; one above
    starts the count again; without ``rounds`` only the halving rule applies (30 rounds)."""
    from gamesolver.solver.stochastic.walk import _STALL_SWEEPS, Stall

    near = Stall(0.5, near=2e-6, rounds=5)
    changes = [1e-2, 1e-4, 1.2e-6, 1.1e-6, 3e-6, 1.2e-6, 1.1e-6, 1.2e-6, 1.1e-6]
    assert not any(near(c) for c in changes)  # the 3e-6 broke the first run of four
    assert near(1.19e-6)  # the fifth in a row
    plain = Stall(0.5)
    assert not any(plain(c) for c in [1e-2] + [1.1e-6] * _STALL_SWEEPS)
    assert plain(1.1e-6)  # 30 rounds without halving 1.1e-6
