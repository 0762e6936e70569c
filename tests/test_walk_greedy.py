"""Greedy sweeps of the walk's hot set (``walk.greedy_sweeps`` in ``walk.hot_round``): they record the
swept states' policy rows, stop at their count and at the floor, hand the swept ranks to the skip to
forget (a row rewritten at other values than its recorded lead's must be generated again: the
deliberate break below keeps the lead and backs the state up by the wrong action), run only where
the round is topped up and its full sweep moved the values by ``WALK_GREEDY_ABOVE`` or more, and
leave the table the game's."""
from __future__ import annotations

import numpy as np
import pytest

from gamesolver.games.ur import kernel
from gamesolver.games.ur.solve import solve
from gamesolver.solver.stochastic import skip as skipmod
from gamesolver.solver.stochastic import walk
from gamesolver.solver.stochastic.outcomes import Regenerated
from tests.test_ur_reference import mini_options

G = float(np.float32(0.99))


class Recording:
    """An engine whose sweep only records what it was asked and halves a change."""

    subset_sweeps = True

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self.change = 1.0

    def sweep(self, V, threads=1, policy=None, discount=1.0, subset=None, **kw) -> float:
        self.calls.append({"policy": policy, "discount": discount, "subset": subset, **kw})
        self.change /= 2
        return self.change


def test_greedy_sweeps_stop_at_their_count_and_at_the_floor() -> None:
    policy, values, subset = np.zeros((4, 1), np.int32), np.zeros(4, np.float32), np.array([1, 3])
    K = Recording()
    assert walk.greedy_sweeps(K, policy, values, 1, G, 1e-9, subset, 5) == 5
    # every sweep backs up the subset alone, at the round's discount, recording the policy rows
    assert all(c["subset"] is subset and c["policy"] is policy and c["discount"] == G for c in K.calls)
    assert walk.greedy_sweeps(Recording(), policy, values, 1, G, 0.1, subset, 100) == 4  # 1/16 < 0.1
    assert walk.greedy_sweeps(Recording(), policy, values, 1, G, 0.1, subset, 0) == 0
    work = np.zeros(2, np.int64)
    K = Recording()
    walk.greedy_sweeps(K, policy, values, 1, G, 0.1, subset, 2, work)
    assert all(c["work"] is work for c in K.calls)


@pytest.fixture(scope="module")
def mini4(tmp_path_factory):
    return Regenerated(kernel(mini_options(tmp_path_factory.mktemp("mini"), 4)))


def _settled(K, sweeps: int = 40) -> np.ndarray:
    V = np.zeros(K.game.state_count, np.float32)
    for _ in range(sweeps):
        K.sweep(V, threads=1, discount=G)
    return V


def test_greedy_sweeps_record_the_swept_states_rows(mini4) -> None:
    K, n = mini4, mini4.game.state_count
    V = _settled(K)
    want = np.zeros((n, K.game.roll_count), np.int32)
    K.sweep(V.copy(), threads=1, policy=want, discount=G)  # every state's greedy rows at V
    rng = np.random.default_rng(5)
    subset = np.sort(rng.choice(n, 300, replace=False)).astype(np.int64)
    policy = np.zeros_like(want)
    got = V.copy()
    assert walk.greedy_sweeps(K, policy, got, 1, G, 0.0, subset, 1) == 1
    # a state's row is chosen before its value is written, from values that only the subset's
    # earlier states changed; the others' rows are untouched
    changed = np.flatnonzero(got != V)
    first = changed[0] if changed.size else n
    early = subset[subset <= first]
    assert early.size and np.array_equal(policy[early], want[early])
    rest = np.setdiff1d(np.arange(n), subset)
    assert not policy[rest].any()


def _full(K, V, policy, sk) -> float:
    return walk.full_sweep(K, V, 1, "t", False, policy, G, False, sk, sk.work)


@pytest.mark.parametrize("forget", [True, False], ids=["forgotten", "broken"])
def test_rows_the_greedy_sweeps_rewrote_are_generated_again(mini4, forget) -> None:
    """Leads recorded at values V, then every row rewritten by greedy sweeps at other values and the
    values put back (an excursion inside a round, which the skip's net movement does not see): a
    skipping full sweep after the skip forgot those states gives a plain sweep's values and rows;
    one that kept their leads (the break) backs states up by the rewritten rows, and differs."""
    K, n = mini4, mini4.game.state_count
    V = _settled(K)
    policy = np.zeros((n, K.game.roll_count), np.int32)
    sk = skipmod.Skip(n, np.float32)
    _full(K, V, policy, sk)
    _full(K, V, policy, sk)  # leads recorded, and read by the next sweep
    kept = V.copy()
    V[:] = -V  # other values: other choices
    everything = np.arange(n, dtype=np.int64)
    walk.greedy_sweeps(K, policy, V, 1, G, 0.0, everything, 1)
    if forget:
        sk.forget_states(everything)
    V[:] = kept
    plain, rows = V.copy(), np.zeros_like(policy)
    K.sweep(plain, threads=1, policy=rows, discount=G)
    _full(K, V, policy, sk)
    same = np.array_equal(V, plain) and np.array_equal(policy, rows)
    assert same == forget


def test_a_hot_round_hands_its_greedy_sweeps_ranks_to_forget(mini4) -> None:
    K, n = mini4, mini4.game.state_count
    V = np.zeros(n, np.float32)
    policy = np.zeros((n, K.game.roll_count), np.int32)
    K.sweep(V, threads=1, policy=policy, discount=G)
    mark = np.zeros(n, np.uint8)
    told: list[np.ndarray] = []
    work = np.zeros(2, np.int64)
    full, swept, _, greedy = walk.hot_round(K, policy, V, 1, G, 0.0, mark, 3, told.append, work)
    assert swept > 0 and greedy == 3 and len(told) == 1
    assert np.array_equal(told[0], np.flatnonzero(mark)) and work[0] == 3 * told[0].size
    # none asked: none made, nothing forgotten
    told.clear()
    assert walk.hot_round(K, policy, V, 1, G, 0.0, mark, 0, told.append)[3] == 0 and not told


def test_a_big_hot_set_gets_no_more_greedy_sweeps_than_the_budget(mini4, monkeypatch) -> None:
    """WALK_GREEDY_BUDGET: a hot round's greedy sweeps generate at most that many full sweeps'
    worth of states (the hot set's size times the sweeps made); with no budget the same round makes
    every sweep asked for."""
    K, n = mini4, mini4.game.state_count

    def greedy_round(budget: float) -> tuple[int, int]:
        monkeypatch.setattr(walk, "WALK_GREEDY_BUDGET", budget)
        V = np.zeros(n, np.float32)
        policy = np.zeros((n, K.game.roll_count), np.int32)
        K.sweep(V, threads=1, policy=policy, discount=G)
        mark, work = np.zeros(n, np.uint8), np.zeros(2, np.int64)
        made = walk.hot_round(K, policy, V, 1, G, 0.0, mark, 50, None, work)[3]
        return made, int(work[0])

    made, states = greedy_round(float("inf"))
    assert made == 50 and states > 0
    size = states // made
    budget = 3.5 * size / n  # three and a half hot sets' worth
    made, states = greedy_round(budget)
    assert made == 3 and states == 3 * size and states <= budget * n
    assert greedy_round(0.5 * size / n) == (0, 0)  # not one sweep within it


def _walk(tmp_path, name: str, greedy: int, **kw):
    said: list[str] = []
    o = mini_options(tmp_path, 4, **kw)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(walk, "WALK_HOT_GREEDY", greedy)
        table = solve(o, tmp_path / name, tolerance=1e-6, threads=1, graph="regenerate", log=said.append)
    return np.asarray(table["value"], dtype=np.float64).copy(), table.meta, said


def test_the_walk_with_greedy_sweeps_reaches_the_games_values(tmp_path) -> None:
    """Only rounds that moved the values by WALK_GREEDY_ABOVE or more get them, the log and the
    meta say what they made, and the table is the one without them, within the tolerance."""
    on, meta, said = _walk(tmp_path, "on", walk.WALK_HOT_GREEDY)
    off, ometa, _ = _walk(tmp_path, "off", 0)
    rounds = [s for s in said if s.startswith("sweep ") and "1 - discount 0)" not in s]
    greedy = [s for s in rounds if "greedy sweeps of the hot set" in s]
    assert greedy and all(float(s.split("largest change ")[1].split()[0]) >= walk.WALK_GREEDY_ABOVE for s in greedy)
    made = meta["full_sweeps_generated"]
    assert made["greedy_states"] > 0 and made["greedy_codes"] > made["greedy_states"]
    assert "greedy_states" not in ometa["full_sweeps_generated"]
    assert meta["endless_check"]["flagged"] == ometa["endless_check"]["flagged"] == 0
    assert np.abs(on - off).max() < 1e-5 and np.abs(on).max() > 0.1


def test_the_swapped_board_needs_fewer_full_sweeps_with_them(tmp_path) -> None:
    """On the swapped test board (one thread, where a walk's course is fixed) the greedy sweeps
    take the walk to its table in fewer full sweeps and no more endless-check repairs."""
    on, meta, _ = _walk(tmp_path, "on", walk.WALK_HOT_GREEDY, swapped=True)
    off, ometa, _ = _walk(tmp_path, "off", 0, swapped=True)
    assert meta["sweeps"] < ometa["sweeps"] and meta["endless_repairs"] <= ometa["endless_repairs"]
    assert meta["endless_check"]["flagged"] == ometa["endless_check"]["flagged"] == 0
    assert np.abs(on - off).max() < 1e-5


def test_a_walk_over_a_stored_graph_makes_none(tmp_path) -> None:
    """Where the round is not topped up (a stored graph's walk) the hot set gets no greedy sweeps."""
    said: list[str] = []
    solve(mini_options(tmp_path, 4), tmp_path / "s", tolerance=1e-6, threads=1, graph="store", log=said.append)
    assert any("of every state" in s for s in said) and not any("greedy sweeps" in s for s in said)


def test_status_says_the_last_rounds_greedy_sweeps() -> None:
    """``solve --status`` reads the rounds' rows: the last round's greedy sweeps are said with its
    policy sweeps, and a round without them says nothing of them."""
    from gamesolver.games.ur.family import rounds_lines

    row = {"sweep": 14, "stage": 0, "change": 0.217, "full_s": 1297.0, "round_s": 1500.0, "clock": 0.0,
           "generated": 1.0, "policy_sweeps": 20, "evaluated": 0.0021}
    ck = {"stage": 0, "stages": 4, "ends_at": 0.03, "discount_gap": 0.01, "tolerance": 1e-5}
    with_them = rounds_lines({**ck, "rounds": [{**row, "greedy": 100}]})[0]
    assert "20 policy sweeps of every state, 100 greedy sweeps of the hot set)" in with_them
    assert "greedy" not in rounds_lines({**ck, "rounds": [row]})[0]
    # a row of this build also says the hot set's size and the sweeps' seconds
    said = rounds_lines({**ck, "rounds": [{**row, "greedy": 100, "greedy_states": 47035, "greedy_s": 6.04}]})[0]
    assert "100 greedy sweeps of the hot set (47,035 states, 6.0 s))" in said
