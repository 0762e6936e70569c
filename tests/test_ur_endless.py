"""The endless check of Ur tables: the kernel against a plain Python attractor built on the slow
reference move generator, and the check's verdict on real solutions and on false ones."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ur import kernel
from gamesolver.games.ur.solve import solve
from gamesolver.solver.stochastic import iteration
from gamesolver.solver.stochastic.iteration import check_eps, endless_check
from gamesolver.solver.stochastic.schedule import DISCOUNTS
from gamesolver.solver.cli import cli
from gamesolver.solver.tables.table import write_table
from tests.test_ur_reference import mini_options, ref_outcomes, ref_values


def ref_flagged(opts, K, V: np.ndarray, eps: float) -> set[int]:
    """States left out of the attractor of the finished games, written out plainly.

    A finished state, or one worth at most eps either way, is in. A state whose mover is ahead
    (V > eps) joins when, for some roll, one of its actions within eps of that roll's best leads
    to a win or into the set; a state whose mover is behind joins when, for some roll, every
    action does. Repeat until nothing joins.
    """
    b = opts.board
    forts = frozenset(i for i in range(b.size) if "fort" in b.roles[i])
    n = K.state_count
    ms, ts = K.unrank(np.arange(n))
    tiles = [(frozenset(i for i in range(b.size) if int(ms[s]) >> i & 1),
              frozenset(i for i in range(b.size) if int(ts[s]) >> i & 1)) for s in range(n)]

    def rank(mine: frozenset, theirs: frozenset) -> int:
        return int(K.rank([b.mask(mine)], [b.mask(theirs)])[0])

    moves = {}
    for s, (m, t) in enumerate(tiles):
        rows = []
        for roll in opts.dice.rolls:
            row = []
            for m2, t2, flag in ref_outcomes(opts, m, t, roll):
                if flag == 2:
                    row.append((None, 1.0))
                elif flag == 1:
                    row.append((rank(m2, t2), None))
                else:
                    row.append((rank(t2, m2), "pass"))
            rows.append(row)
        moves[s] = rows

    def value(succ, how) -> float:
        if succ is None:
            return 1.0
        return float(V[succ]) if how is None else -float(V[succ])

    inside = {s for s, (m, t) in enumerate(tiles) if forts <= m or forts <= t or abs(V[s]) <= eps}
    grew = True
    while grew:
        grew = False
        for s in range(n):
            if s in inside:
                continue
            for row in moves[s]:
                if V[s] > 0:
                    best = max(value(*o) for o in row)
                    joins = any(value(*o) >= best - eps and (o[0] is None or o[0] in inside) for o in row)
                else:
                    joins = all(o[0] is None or o[0] in inside for o in row)
                if joins:
                    inside.add(s)
                    grew = True
                    break
    return set(range(n)) - inside


@pytest.fixture(scope="module")
def mini2(tmp_path_factory):
    o = mini_options(tmp_path_factory.mktemp("mini2"), 2)
    return o, kernel(o)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), eps=st.sampled_from([1e-6, 0.05, 0.3]),
       zeros=st.floats(0.0, 0.9))
def test_kernel_check_equals_the_plain_attractor(mini2, seed: int, eps: float, zeros: float) -> None:
    o, K = mini2
    rng = np.random.default_rng(seed)
    V = (rng.random(K.state_count) * 2 - 1).astype(np.float32)
    V[rng.random(K.state_count) < zeros] = 0.0
    expect = {s for s in ref_flagged(o, K, V, eps) if abs(V[s]) > eps}
    got = endless_check(K, V, eps, threads=2)
    assert set(got.states.tolist()) == expect
    assert got.flagged == len(expect) and set(got.examples) <= expect


def false_solution(K) -> np.ndarray:
    """A Bellman solution that is not the game's value: sweeps alternating with many cheap sweeps
    of the greedy policy lock advantages into cycles of recaptures on the entry."""
    V = np.zeros(K.state_count, dtype=np.float32)
    policy = np.empty((K.state_count, K.roll_count), dtype=np.int32)
    for _ in range(15):
        K.sweep(V, policy=policy)
        for _ in range(100):
            K.evaluate(policy, V)
    for _ in range(50):
        if K.sweep(V) == 0.0:
            break
    return V


@pytest.fixture(scope="module")
def mini4_solved(tmp_path_factory):
    d = tmp_path_factory.mktemp("mini4")
    o = mini_options(d, 4)
    table = solve(o, d / "table", tolerance=3e-7, threads=2)
    return o, kernel(o), table, d


def test_the_solution_passes_and_a_false_bellman_solution_fails(mini4_solved) -> None:
    o, K, table, _ = mini4_solved
    assert table.meta["endless_check"]["flagged"] == 0 and table.meta["endless_check"]["eps"] == check_eps(3e-7)
    values = np.array(table["value"])
    assert endless_check(K, values, 1e-6).passed
    fake = false_solution(K)
    assert K.sweep(fake.copy(), write=False) < 1e-6  # a Bellman solution...
    assert np.abs(fake - values).max() > 0.01  # ...far from the value...
    bad = endless_check(K, fake, 1e-6)
    assert bad.flagged > 0 and len(bad.examples) == min(10, bad.flagged)  # ...and the check says so
    assert np.abs(fake[list(bad.examples)]).min() > 1e-6
    # worked by hand: in X:B2 O:B1,C3 X (X on Ishtar; O on the entry and a fort, so O's piece on
    # the entry is not O's only one) X may spawn onto the entry capturing it, and O, now with one
    # piece on the board and X two, may spawn back capturing X's: the false solution keeps that
    # cycle at about +0.098 for X, the game is worth about +0.044, and the check names it
    b = o.board
    here = int(K.rank([b.mask({b.index("B2")})], [b.mask({b.index("B1"), b.index("C3")})])[0])
    back = int(K.rank([b.mask({b.index("C3")})], [b.mask({b.index("B1"), b.index("B2")})])[0])
    assert here in bad.states and back in bad.states
    assert abs(fake[here] - 0.0985) < 1e-3 and abs(values[here] - 0.0435) < 1e-3
    assert K.successors(b.mask({b.index("B2")}), b.mask({b.index("B1"), b.index("C3")}), 0)[0][:2] == (
        b.mask({b.index("B1"), b.index("B2")}), b.mask({b.index("C3")}))


def test_cli_check_passes_the_solution_and_fails_a_false_one(mini4_solved, tmp_path) -> None:
    o, K, table, d = mini4_solved
    board = str(d / "mini_board.json")
    runner = CliRunner()
    ok = runner.invoke(cli, ["ur", "check", "--pieces", "4", "--board", board, "--table", str(table.path)])
    assert ok.exit_code == 0, ok.output
    assert "passed" in ok.output
    fake = false_solution(K)
    write_table(tmp_path / "fake", game="ur", rule="fort", encoding=table.header["encoding"],
                encoding_version=table.header["encoding_version"], state_count=K.state_count,
                arrays={"value": fake, "tier_offsets": K.tier_offsets()}, options=o.header(),
                meta={"tolerance": 1e-7})
    bad = runner.invoke(cli, ["ur", "check", "--pieces", "4", "--board", board, "--table", str(tmp_path / "fake"),
                              "--json"])
    assert bad.exit_code == 1
    report = json.loads(bad.output)
    assert not report["passed"] and report["flagged"] > 0 and report["examples"]
    assert report["examples"][0]["position"].startswith("X:")
    text = runner.invoke(cli, ["ur", "check", "--pieces", "4", "--board", board, "--table", str(tmp_path / "fake")])
    assert text.exit_code == 1 and "FAILED" in text.output and "for example" in text.output
    wrong = runner.invoke(cli, ["ur", "check", "--pieces", "4", "--board", board, "--table", str(table.path),
                                "--eps", "0"])
    assert wrong.exit_code == 2 and "--eps must be between 0 and 1" in wrong.output


def test_sweeps_from_zero_can_settle_on_a_false_solution_and_the_solve_repairs_it(tmp_path, monkeypatch) -> None:
    """On the swapped test board, value iteration from zero (the slow float64 reference too)
    converges to a solution of the equations that fails the check; a plain-sweeps solve notices,
    walks a discount up (on the flagged states alone, or on every state) and stores values that
    pass, equal to the reference's discounted walk, and so does the default walk (at most after a local repair)."""
    o = mini_options(tmp_path, 4, swapped=True)
    K = kernel(o)
    b = o.board

    def as_array(ref: dict) -> np.ndarray:
        out = np.zeros(K.state_count, dtype=np.float32)
        out[K.rank([b.mask(m) for m, _ in ref], [b.mask(t) for _, t in ref])] = list(ref.values())
        return out

    plain = as_array(ref_values(o, 1e-9, max_sweeps=3000))
    assert K.sweep(plain.copy(), write=False) < 1e-5  # solves the equations (to float32)...
    assert endless_check(K, plain, 1e-4).flagged > 0  # ...but claims what endless play cannot give
    walked = as_array(ref_values(o, 1e-10, max_sweeps=20000, discounts=tuple(1 - d for d in DISCOUNTS)))
    assert endless_check(K, walked, 1e-5).passed
    table = solve(o, tmp_path / "t", tolerance=3e-7, threads=2, method="sweeps")
    # the flagged states (8, then 2) are repaired alone: a few hundred backups of those states
    # where the full descent sweeps every state several hundred times
    assert 1 <= table.meta["endless_repairs"] < iteration._MAX_REPAIRS
    assert 0 < table.meta["repair_backups"] < 100 * K.state_count
    assert table.meta["endless_check"]["flagged"] == 0
    values = np.array(table["value"])
    assert np.abs(values - walked).max() < 1e-4
    assert np.abs(values - plain).max() > 1e-4  # the repair changed something real
    monkeypatch.setattr(iteration, "LOCAL_REPAIR_SHARE", K.state_count + 1)  # no set is small enough
    full = solve(o, tmp_path / "full", tolerance=3e-7, threads=2, method="sweeps")
    assert full.meta["endless_repairs"] == 1 and full.meta["repair_backups"] == 0
    assert full.meta["endless_check"]["flagged"] == 0 and full.meta["sweeps"] > table.meta["sweeps"] + 300
    assert np.abs(np.array(full["value"]) - walked).max() < 1e-4
    # the default method walks the discount up from the start; its early stages end at a change of
    # 3e-2 and 1e-3 (WALK_EARLY_AIM), which on this board leaves a false solution; with no flagged set
    # small enough for a local repair (as set above) its repair is the walk again, every stage to
    # tolerance / 10 (51-86 full sweeps in all over 40 two-thread runs, each passing after it;
    # tests/test_walk_repair.py follows the local repairs too)
    walk = solve(o, tmp_path / "w", tolerance=3e-7, threads=2)
    assert walk.meta["method"] == "walk" and walk.meta["endless_repairs"] <= 1
    assert walk.meta["repair_backups"] == 0 and walk.meta["sweeps"] < 300
    assert walk.meta["endless_check"]["flagged"] == 0 and walk.meta["policy_sweeps"] > 0
    assert np.abs(np.array(walk["value"]) - walked).max() < 1e-4


def test_tolerance_below_float32_resolution_is_refused(tmp_path) -> None:
    result = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "1", "--tolerance", "1e-8", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "tolerance must be at least 2.5e-07" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "header.json").exists()


def test_cli_check_never_solves_a_missing_table(tmp_path) -> None:
    result = CliRunner().invoke(cli, ["ur", "check", "--pieces", "2", "--table", str(tmp_path / "none")])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert not (tmp_path / "none").exists()
    # it says what solving the table would take, and the command that makes it there
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: no solved table for pieces=2")
    assert f"'solver ur solve --pieces 2 --out {tmp_path / 'none'}'" in lines[0] and "--solve" not in lines[0]
    as_json = CliRunner().invoke(cli, ["ur", "check", "--pieces", "2", "--cache", str(tmp_path / "c"), "--json"])
    assert as_json.exit_code == 1
    refused = json.loads(as_json.stdout)
    assert refused["error"].startswith("no solved table") and refused["commands"][0] == "solver ur solve --pieces 2"
    assert not (tmp_path / "c").exists()


def test_queries_never_start_a_large_solve_for_a_missing_table(tmp_path) -> None:
    result = CliRunner().invoke(cli, ["ur", "analyze", "start", "--pieces", "4", "--table", str(tmp_path / "none")])
    assert result.exit_code == 1 and "no solved table for pieces=4" in result.output
    assert not (tmp_path / "none").exists()
