"""Greedy sweeps with their rows kept apart (``sweep(subset=, subset_rows=)``, ``walk.greedy_sweeps``):
the kernel writes the i-th state's greedy codes to row i of a small array instead of the policy's
row of its rank, and the walk copies the rows into the policy once after the last sweep. The
values and the policy are the same, bit for bit, as sweeps that write into the policy (one
thread); a copy left out (the deliberate break) leaves the policy stale, and a stop between two
sweeps still keeps the rows of the sweeps made."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ur import kernel
from gamesolver.solver.stochastic import _engine as kernels
from gamesolver.solver.stochastic import walk
from gamesolver.solver.stochastic.outcomes import Regenerated, build_graph
from tests.test_ur_reference import mini_options

G = float(np.float32(0.99))


@pytest.fixture(scope="module")
def mini4(tmp_path_factory):
    return Regenerated(kernel(mini_options(tmp_path_factory.mktemp("mini"), 4)))


@pytest.fixture(scope="module")
def stored4(mini4):
    return build_graph(mini4.game)


@pytest.fixture(scope="module")
def settled(mini4) -> np.ndarray:
    V = np.zeros(mini4.game.state_count, np.float32)
    for _ in range(30):
        mini4.sweep(V, threads=1, discount=G)
    return V


def _policy(K, V) -> np.ndarray:
    P = np.zeros((K.game.state_count, K.game.roll_count), np.int32)
    K.sweep(V.copy(), threads=1, policy=P, discount=G)
    return P


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(1, 400))
def test_a_subset_sweep_writes_each_states_row_to_its_place(mini4, stored4, settled, seed, size) -> None:
    """Row i of ``subset_rows`` is what the same sweep writes into the policy row of ``subset[i]``:
    the same values and codes (regenerated and from the stored graph), every other row untouched;
    on two threads too, where the values are held (``write=False``) so that the rows do not hang
    on the threads' order."""
    n = mini4.game.state_count
    rng = np.random.default_rng(seed)
    subset = np.sort(rng.choice(n, min(size, n), replace=False)).astype(np.int64)
    V0 = settled * np.float32(rng.uniform(0.5, 1.0))  # values a sweep moves
    for K in (mini4, stored4):
        policy = _policy(mini4, V0)
        before = policy.copy()
        a, b = V0.copy(), V0.copy()
        ca = K.sweep(a, threads=1, subset=subset, policy=policy, discount=G)
        rows = np.full((subset.size, policy.shape[1]), -7, np.int32)
        cb = K.sweep(b, threads=1, subset=subset, subset_rows=rows, discount=G)
        assert ca == cb and np.array_equal(a, b)
        assert np.array_equal(rows, policy[subset])
        rest = np.setdiff1d(np.arange(n), subset)
        assert np.array_equal(policy[rest], before[rest])
        held = np.zeros_like(policy)
        K.sweep(V0.copy(), threads=1, policy=held, discount=G, write=False)
        rows2 = np.full_like(rows, -7)
        K.sweep(V0.copy(), threads=2, subset=subset, subset_rows=rows2, discount=G, write=False)
        assert np.array_equal(rows2, held[subset])


def test_the_rows_are_the_codes_of_a_hand_checked_state(mini4, settled) -> None:
    """A state's row from the subset sweep holds, roll by roll, one of the codes that roll offers:
    the best by the values it was backed up at (``roll_codes``, the slow reading)."""
    K = mini4
    n = K.game.state_count
    subset = np.array([n // 3, n // 2, n - 5], np.int64)
    V = settled.copy()
    rows = np.zeros((3, K.game.roll_count), np.int32)
    K.sweep(V.copy(), threads=1, subset=subset, subset_rows=rows, discount=G)
    for i, s in enumerate(subset.tolist()):
        for r in range(K.game.roll_count):
            assert int(rows[i, r]) in K.roll_codes(s, r)


def test_bad_subset_rows_are_refused(mini4) -> None:
    K, n = mini4, mini4.game.state_count
    V = np.zeros(n, np.float32)
    subset = np.array([1, 5, 9], np.int64)
    R = K.game.roll_count
    with pytest.raises(ValueError, match="subset_rows must have shape"):
        K.sweep(V, subset=subset, subset_rows=np.zeros((2, R), np.int32))
    with pytest.raises(ValueError, match="instead of a policy"):
        K.sweep(V, subset=subset, subset_rows=np.zeros((3, R), np.int32), policy=np.zeros((n, R), np.int32))
    with pytest.raises(ValueError, match="instead of a policy"):
        K.sweep(V, subset_rows=np.zeros((3, R), np.int32))


def _greedy(K, V, subset, most, monkeypatch, apart: bool, floor: float = 0.0) -> tuple[np.ndarray, np.ndarray, int]:
    """``greedy_sweeps`` from the settled values' policy, the rows apart or written in place."""
    monkeypatch.setattr(walk, "WALK_GREEDY_ROWS_MOST", 16 if apart else 10**12)
    policy = _policy(K, V * np.float32(0.5))
    values = V.copy()
    done = walk.greedy_sweeps(K, policy, values, 1, G, floor, subset, most)
    return values, policy, done


@pytest.mark.parametrize("engine", ["regenerated", "stored"])
def test_greedy_sweeps_with_rows_apart_match_sweeps_in_place(mini4, stored4, settled, monkeypatch, engine) -> None:
    K = mini4 if engine == "regenerated" else stored4
    n = K.game.state_count
    rng = np.random.default_rng(11)
    subset = np.sort(rng.choice(n, n // 20, replace=False)).astype(np.int64)
    calls: list[dict] = []
    real = K.sweep

    def spy(V, **kw):
        if kw.get("subset") is not None:
            calls.append(kw)
        return real(V, **kw)

    monkeypatch.setattr(K, "sweep", spy)
    a, pa, da = _greedy(K, settled, subset, 6, monkeypatch, apart=True)
    assert len(calls) == 6 and all("subset_rows" in c and c.get("policy") is None for c in calls)  # kept apart
    calls.clear()
    b, pb, db = _greedy(K, settled, subset, 6, monkeypatch, apart=False)
    assert len(calls) == 6 and all("subset_rows" not in c for c in calls)
    assert da == db == 6
    assert np.array_equal(a, b) and np.array_equal(pa, pb)
    # the floor ends both alike
    a, pa, da = _greedy(K, settled, subset, 100, monkeypatch, apart=True, floor=1e-4)
    b, pb, db = _greedy(K, settled, subset, 100, monkeypatch, apart=False, floor=1e-4)
    assert 1 < da == db < 100 and np.array_equal(a, b) and np.array_equal(pa, pb)


def test_rows_apart_left_uncopied_leave_a_stale_policy(mini4, settled, monkeypatch) -> None:
    """The deliberate break: the rows kept apart but never copied into the policy."""
    K, n = mini4, mini4.game.state_count
    subset = np.arange(0, n, 40, dtype=np.int64)
    _, good, _ = _greedy(K, settled, subset, 4, monkeypatch, apart=False)

    class NoCopy(np.ndarray):
        def __setitem__(self, key, value):  # the walk's one write to the policy: dropped
            pass

    monkeypatch.setattr(walk, "WALK_GREEDY_ROWS_MOST", 16)
    policy = _policy(K, settled * np.float32(0.5)).view(NoCopy)
    values = settled.copy()
    walk.greedy_sweeps(K, policy, values, 1, G, 0.0, subset, 4)
    assert not np.array_equal(np.asarray(policy)[subset], good[subset])


def test_a_stop_between_sweeps_keeps_the_rows_of_the_sweeps_made(mini4, settled, monkeypatch) -> None:
    """Ctrl-C after the third sweep: the policy holds the third sweep's rows, as sweeps in place
    would have left it."""
    K, n = mini4, mini4.game.state_count
    subset = np.arange(3, n, 30, dtype=np.int64)
    want_values, want_policy, _ = _greedy(K, settled, subset, 3, monkeypatch, apart=False)

    class Stopped(Regenerated):
        made = 0

        def sweep(self, V, **kw):
            if self.made == 3:
                raise KeyboardInterrupt
            self.made += 1
            return super().sweep(V, **kw)

    S = Stopped(K.game)
    monkeypatch.setattr(walk, "WALK_GREEDY_ROWS_MOST", 16)
    policy = _policy(K, settled * np.float32(0.5))
    values = settled.copy()
    with pytest.raises(KeyboardInterrupt):
        walk.greedy_sweeps(S, policy, values, 1, G, 0.0, subset, 10)
    assert np.array_equal(values, want_values) and np.array_equal(policy, want_policy)


def test_a_big_hot_set_writes_in_place(mini4, settled, monkeypatch) -> None:
    """A hot set of more than 1/WALK_GREEDY_ROWS_MOST of the states (its rows would take that much
    of the policy's memory again), or a single sweep, writes into the policy as before."""
    K, n = mini4, mini4.game.state_count
    calls: list[dict] = []
    real = K.sweep
    monkeypatch.setattr(K, "sweep", lambda V, **kw: (calls.append(kw) if kw.get("subset") is not None else None)
                        or real(V, **kw))
    monkeypatch.setattr(walk, "WALK_GREEDY_ROWS_MOST", 16)
    policy = _policy(K, settled)
    walk.greedy_sweeps(K, policy, settled.copy(), 1, G, 0.0, np.arange(n // 15, dtype=np.int64), 2)
    walk.greedy_sweeps(K, policy, settled.copy(), 1, G, 0.0, np.arange(n // 17, dtype=np.int64), 1)
    assert calls and all("subset_rows" not in c for c in calls)
    calls.clear()
    walk.greedy_sweeps(K, policy, settled.copy(), 1, G, 0.0, np.arange(n // 17, dtype=np.int64), 2)
    assert calls and all("subset_rows" in c for c in calls)


def test_a_walk_is_the_same_with_its_rows_apart(tmp_path, monkeypatch) -> None:
    """A whole walk (four pieces of the test board, one thread): the same table bit for bit, and
    its log says each greedy round's hot set and seconds."""
    from gamesolver.games.ur.solve import solve

    rows: list[dict] = []
    real_row = walk.round_row

    def keep(*a, **kw):
        rows.append(real_row(*a, **kw))
        return rows[-1]

    def run(name: str, most: int) -> tuple[np.ndarray, list[str], int]:
        said: list[str] = []
        apart = 0
        real = walk.greedy_sweeps

        def count(K, policy, values, threads, g, floor, subset, n, work=None):
            nonlocal apart
            apart += int(subset.size * walk.WALK_GREEDY_ROWS_MOST <= policy.shape[0] and n > 1)
            return real(K, policy, values, threads, g, floor, subset, n, work)

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(walk, "WALK_GREEDY_ROWS_MOST", most)
            mp.setattr(walk, "greedy_sweeps", count)
            mp.setattr(walk, "round_row", keep)
            table = solve(mini_options(tmp_path, 4), tmp_path / name, tolerance=1e-6, threads=1,
                          graph="regenerate", log=said.append)
        return np.asarray(table["value"]).copy(), said, apart

    a, said, apart = run("apart", 16)
    b, _, never = run("in-place", 10**12)
    assert apart > 0 and never == 0
    assert np.array_equal(a, b)
    greedy = [s for s in said if "greedy sweeps of the hot set (" in s]
    assert greedy and all(" states, " in s and s.split(" states, ")[1].split(" s)")[0].replace(".", "").isdigit()
                          for s in greedy)
    # the checkpoint's rows keep the same: each greedy round's hot set and seconds, as its log line says
    kept = [r for r in rows if r.get("greedy")]
    assert kept and all(r["greedy_states"] > 0 and r["greedy_s"] >= 0 for r in kept)
    first = kept[0]
    assert any(f"with {first['greedy']} greedy sweeps of the hot set ({first['greedy_states']:,} states, " in s
               for s in said)
