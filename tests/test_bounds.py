"""Certified bounds (solver/stochastic/bounds.py, the bounds kernels of solver/stochastic/_engine.pyx): the backup of
the bounds against an exact rational reference on random states; the proven intervals contain an
independent slow value iteration's values; endless play is what the margin is about."""
from __future__ import annotations

import dataclasses
import json
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ur import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import solve
from gamesolver.solver.stochastic import _engine as kernels
from gamesolver.solver.stochastic.bounds import certify
from gamesolver.solver.errors import InputError
from tests.test_ur_reference import mini_options, ref_values


@pytest.fixture(scope="module")
def mini4(tmp_path_factory):
    return kernel(mini_options(tmp_path_factory.mktemp("bounds"), 4))


# few distinct values, so that ties and near-ties are common
NEAR_TIES = np.array([-0.5, -0.25, 0.0, 0.001, 0.25, 0.5], dtype=np.float32)


def graph_kw(game, stored: bool) -> dict:
    """The kernels' keyword arguments for reading ``game``'s stored outcome graph ({}: generate)."""
    if not stored:
        return {}
    from gamesolver.solver.stochastic.outcomes import build_graph

    g = build_graph(game)
    return {"offsets": g.offsets, "counts": g.counts, "codes": g.codes}


def code_value(c: int, V: np.ndarray) -> float:
    """What outcome code ``c`` is worth to the side that chose it, by the values ``V``."""
    ends = {kernels.WIN: 1.0, kernels.LOSS: -1.0, kernels.NOCODE: 0.0}
    if c in ends:
        return ends[c]
    return float(V[c]) if c >= 0 else -float(V[-c - 1])


def assert_holds_reference(o, game, cert, within: float = 1e-9) -> None:
    """The proven intervals hold a slow, plain value iteration in Python, run to 1e-10."""
    ref = ref_values(o, 1e-10)
    b = o.board
    ranks = game.rank([b.mask(m) for m, _ in ref], [b.mask(t) for _, t in ref])
    want = np.array(list(ref.values()))
    assert np.all(cert.lower[ranks] <= want + within) and np.all(want - within <= cert.upper[ranks])


def exact_backup(game, s: int, L: np.ndarray, U: np.ndarray) -> tuple[Fraction, Fraction]:
    """The bounds' backup at state s in exact rationals, from the game's own outcome lists."""
    lo = hi = Fraction(0)
    groups = game.outcome_groups(s)
    flat = [c for g in groups for c in g]
    if len(flat) == 1 and not any(groups[:-1]) and flat[0] in (kernels.WIN, kernels.LOSS):
        v = Fraction(1 if flat[0] == kernels.WIN else -1)
        return v, v

    def terms(c: int) -> tuple[Fraction, Fraction]:
        if c == kernels.WIN:
            return Fraction(1), Fraction(1)
        if c == kernels.LOSS:
            return Fraction(-1), Fraction(-1)
        if c >= 0:
            return Fraction(float(L[c])), Fraction(float(U[c]))
        t = -c - 1
        return -Fraction(float(U[t])), -Fraction(float(L[t]))

    for r, p in enumerate(game.roll_probabilities):
        codes = game.roll_outcomes(s, r)
        if codes:
            a = max(terms(c)[0] for c in codes)
            b = max(terms(c)[1] for c in codes)
        else:
            a = b = Fraction(0)
        lo += Fraction(float(np.float32(p))) * a
        hi += Fraction(float(np.float32(p))) * b
    return lo, hi


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), width=st.sampled_from([0.0, 1e-7, 1e-3, 0.5]))
def test_the_bounds_backup_is_the_exact_backup_rounded_outward(mini4, seed: int, width: float) -> None:
    rng = np.random.default_rng(seed)
    n = mini4.state_count
    mid = rng.uniform(-0.9, 0.9, n)
    L = np.clip(mid - width * rng.uniform(0, 1, n), -1, 1).astype(np.float32)
    U = np.clip(mid + width * rng.uniform(0, 1, n), -1, 1).astype(np.float32)
    for s in rng.integers(0, n, 20).tolist():
        want_lo, want_hi = exact_backup(mini4, s, L, U)
        for loosen in (False, True):
            L2, U2 = L.copy(), U.copy()
            # start the state itself at the far side, so the backup is stored whichever way it moves
            L2[s], U2[s] = (1.0, -1.0) if loosen else (-1.0, 1.0)
            kernels.bounds_sweep(mini4, L2, U2, start=s, stop=s + 1, loosen=loosen)
            lo, hi = Fraction(float(L2[s])), Fraction(float(U2[s]))
            assert lo <= want_lo and hi >= want_hi  # never across the exact backup
            assert want_lo - lo <= Fraction(1, 2**22) and hi - want_hi <= Fraction(1, 2**22)  # one float32 step
            if float(np.float32(float(want_lo))) == want_lo:
                assert lo == want_lo  # an exactly representable backup is stored exactly
            assert np.array_equal(np.delete(L2, s), np.delete(L, s))  # nothing else was touched


def test_bounds_refuse_arrays_of_the_wrong_size(mini4) -> None:
    L = np.zeros(3, dtype=np.float32)
    with pytest.raises(ValueError, match="bound arrays"):
        kernels.bounds_sweep(mini4, L, L.copy())


@pytest.mark.parametrize("pieces", [3, 4])
def test_proven_intervals_contain_the_independent_values(tmp_path, pieces: int) -> None:
    o = mini_options(tmp_path, pieces)
    game = kernel(o)
    table = solve(o, tmp_path / "t", tolerance=1e-6, threads=2)
    values = np.asarray(table["value"])
    cert = certify(game, values, 1e-6, threads=2, tighten_sweeps=60)
    assert_holds_reference(o, game, cert, within=1e-7)
    assert np.all(cert.lower <= values + cert.bound) and np.all(values - cert.bound <= cert.upper)
    if pieces == 3:  # nobody can win on this board with three pieces: everything is endless play
        assert not np.any(values) and cert.bound <= 1e-6
    else:
        assert np.abs(values).max() > 0.1  # a game someone can win: the bounds mean something
        assert cert.endless_margin == 0.0 and cert.gap < 2e-5 and cert.bound < 3e-5


def test_a_wrong_value_gets_a_bound_that_says_so(tmp_path) -> None:
    o = mini_options(tmp_path, 3)
    game = kernel(o)
    values = np.zeros(game.state_count, dtype=np.float32)  # the game's values: nobody can win
    values[123] = 0.01
    cert = certify(game, values, 1e-6, threads=2)
    assert cert.bound >= 0.01 - 1e-6
    assert cert.lower[123] <= 0.0 <= cert.upper[123]


def test_endless_play_is_priced_at_zero(tmp_path) -> None:
    # With three pieces nobody can hold four forts: the game goes on for ever from every position,
    # so the only proven value is 0, and a claimed advantage anywhere is caught.
    game = kernel(UrOptions(pieces=2))
    zero = np.zeros(game.state_count, dtype=np.float32)
    cert = certify(game, zero, 1e-6, threads=2)
    assert cert.bound <= 1e-6 and cert.endless_margin == 0.0
    assert cert.trapped == 2 * game.state_count  # every position, either side to move
    claimed = zero.copy()
    claimed[:] = 0.25  # a consistent-looking false solution: every side claims a quarter
    cert = certify(game, claimed, 1e-6, threads=2)
    assert cert.bound >= 0.25


def test_check_bounds_from_the_command_line(tmp_path) -> None:
    import json

    from click.testing import CliRunner

    from gamesolver.solver.cli import cli

    runner = CliRunner()
    out = tmp_path / "k2"
    assert runner.invoke(cli, ["ur", "solve", "--pieces", "2", "--out", str(out)]).exit_code == 0
    res = runner.invoke(cli, ["ur", "check", "--pieces", "2", "--table", str(out), "--bounds", "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    lo, hi = got["bounds"]["start"]
    assert lo <= 0.0 <= hi and got["bounds"]["bound"] <= got["stop_residual"]
    assert got["bounds"]["aimed_at"] == got["stop_residual"]
    res = runner.invoke(cli, ["ur", "check", "--pieces", "2", "--table", str(out), "--bounds", "--width", "1e-3"])
    assert res.exit_code == 0 and "aimed at 0.001" in res.output, res.output
    for bad, why in ((["--width", "1e-3"], "--width applies with --bounds"),
                     (["--bounds", "--width", "2"], "--width must be between 0 and 1; got 2")):
        res = runner.invoke(cli, ["ur", "check", "--pieces", "2", "--table", str(out), *bad])
        assert res.exit_code == 2 and why in res.output and "Traceback" not in res.output, res.output


def test_stored_graph_bounds_equal_the_generated_ones(tmp_path) -> None:
    from gamesolver.solver.stochastic.outcomes import build_graph

    o = mini_options(tmp_path, 4)
    game = kernel(o)
    table = solve(o, tmp_path / "t", tolerance=1e-6, threads=2)
    values = np.asarray(table["value"])
    a = certify(game, values, 1e-6, threads=1, tighten_sweeps=5)
    b = certify(game, values, 1e-6, threads=1, tighten_sweeps=5, graph=build_graph(game))
    assert np.array_equal(a.lower, b.lower) and np.array_equal(a.upper, b.upper)


def test_solve_proof_records_the_bound_and_analyze_shows_it(tmp_path) -> None:
    import json

    from click.testing import CliRunner

    from gamesolver.solver.cli import cli

    o = mini_options(tmp_path, 4)
    common = ["--pieces", "4", "--board", o.board_file]
    out = tmp_path / "t"
    # one thread: the walk's course is fixed (its values 1.84e-6 from the proof's middles); on two, a
    # sweep's updates land in the threads' timing's order, and one fresh-clone run ended 4.8e-7 away
    res = CliRunner().invoke(cli, ["ur", "solve", *common, "--out", str(out), "--tolerance", "1e-6", "--proof",
                                   "--json", "--threads", "1"])
    assert res.exit_code == 0, res.output
    cert = json.loads(res.stdout)["certified"]
    assert cert["endless_margin"] == 0.0 and 0 < cert["bound"] < 1e-4
    # the strategy's intervals are far narrower than the solve's error: the table keeps their middles
    assert cert["values"] == "centred" and cert["bound"] < 1e-6 < cert["solved_values_bound"]
    res = CliRunner().invoke(cli, ["ur", "analyze", "start", *common, "--table", str(out), "--json"])
    got = json.loads(res.stdout)
    assert got["proven"] is True and "residual" not in got
    lo, hi = got["lower"], got["upper"]
    # the stored interval is the proven one rounded outward to float32: up to an ulp wider each side
    ulp = float(np.spacing(np.float32(max(abs(lo), abs(hi)))))
    assert got["source"]["bound"] == cert["bound"] and lo <= got["value"] <= hi and hi - lo <= 2 * cert["bound"] + 2 * ulp
    ref = ref_values(o, 1e-10)
    assert lo - 1e-9 <= ref[(frozenset(), frozenset())] <= hi + 1e-9  # the slow reference's start value
    res = CliRunner().invoke(cli, ["ur", "analyze", "start", *common, "--table", str(out)])
    assert res.exit_code == 0, res.output
    assert f"(proven between {lo:+.7f} and {hi:+.7f})" in res.output


def test_a_short_search_falls_back_to_the_trivial_pair_and_says_so(tmp_path) -> None:
    import json

    from click.testing import CliRunner

    from gamesolver.solver.cli import cli

    o = mini_options(tmp_path, 4)
    common = ["--pieces", "4", "--board", o.board_file]
    out = tmp_path / "t"
    assert CliRunner().invoke(cli, ["ur", "solve", *common, "--out", str(out), "--tolerance", "1e-6"]).exit_code == 0
    res = CliRunner().invoke(cli, ["ur", "check", *common, "--table", str(out), "--bounds", "--bounds-sweeps", "1",
                                   "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)["bounds"]
    # from -1 and +1 after one sweep: loose, still true, and not refined (a better strategy would not help)
    assert got["loosen_sweeps"] == 1 and got["bound"] > 0.5 and got["method"] == "trivial" and got["passes"] == 1
    assert got["why"].startswith("no consistent pair after 1 loosening sweeps")
    res = CliRunner().invoke(cli, ["ur", "check", *common, "--table", str(out), "--bounds", "--bounds-sweeps", "0"])
    assert res.exit_code == 2 and "--bounds-sweeps must be at least 1" in res.output
    res = CliRunner().invoke(cli, ["ur", "check", *common, "--table", str(out), "--bounds", "--refine", "-1"])
    assert res.exit_code == 2 and "--refine must be at least 0; got -1" in res.output
    res = CliRunner().invoke(cli, ["ur", "check", *common, "--table", str(out), "--bounds"])
    assert res.exit_code == 0 and "widest interval" in res.output and "1 pass)" in res.output, res.output


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), share=st.floats(0.0, 1.0), loosen=st.booleans(), backwards=st.booleans())
def test_a_bounds_sweep_over_a_subset_updates_those_states_one_by_one(mini4, seed: int, share: float,
                                                                      loosen: bool, backwards: bool) -> None:
    """``subset`` visits the listed states (backwards: in reverse) exactly as one-state sweeps in
    that order would, touches no other, and ``mark`` gains a 1 where a bound moved; the stored
    graph's sweep does the same, bit for bit."""
    game = mini4
    g, n, rng, L0, U0 = graph_and_bounds(game, seed)
    subset = np.flatnonzero(rng.random(n) < share).astype(np.int64)
    L1, U1 = L0.copy(), U0.copy()
    for s in (subset[::-1] if backwards else subset):  # the reference: one state at a time
        kernels.bounds_sweep(game, L1, U1, start=int(s), stop=int(s) + 1, loosen=loosen)
    had = (rng.random(n) < 0.05).astype(np.uint8)
    for how in ("generated", "stored"):
        L, U, mark = L0.copy(), U0.copy(), had.copy()
        kw = dict(threads=1, loosen=loosen, backwards=backwards, subset=subset, mark=mark)
        if how == "generated":
            kernels.bounds_sweep(game, L, U, **kw)
        else:
            kernels.graph_bounds_sweep(game, g.offsets, g.counts, g.codes, L, U, **kw)
        assert np.array_equal(L, L1) and np.array_equal(U, U1), how
        moved = (L != L0) | (U != U0)
        assert np.array_equal(mark, np.where(moved, 1, had).astype(np.uint8)), how
    with pytest.raises(ValueError, match="increasing ranks"):
        kernels.bounds_sweep(game, L0.copy(), U0.copy(), subset=np.array([2, 1], dtype=np.int64))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), loosen=st.booleans(), threads=st.sampled_from([1, 3]),
       backwards=st.booleans(), stored=st.booleans())
def test_a_jacobi_bounds_sweep_backs_every_state_up_from_the_bounds_it_started_from(
        mini4, seed: int, loosen: bool, threads: int, backwards: bool, stored: bool) -> None:
    """With ``L_from``/``U_from`` each state's new bounds are its one-state sweep from the bounds
    the sweep started with, whatever the order and the threads; without them the sweep reads
    what it wrote (Gauss-Seidel), which here differs."""
    from gamesolver.solver.stochastic.outcomes import build_graph

    game = mini4
    n = game.state_count
    rng = np.random.default_rng(seed)
    V = rng.random(n) * 1.6 - 0.8
    L0, U0 = V - rng.random(n) * 0.05, V + rng.random(n) * 0.05
    L1, U1 = L0.copy(), U0.copy()
    for s in range(n):  # the reference: each state from a fresh copy of the start
        a, b = L0.copy(), U0.copy()
        kernels.bounds_sweep(game, a, b, start=s, stop=s + 1, loosen=loosen, grid=2.0**40)
        L1[s], U1[s] = a[s], b[s]
    L, U = L0.copy(), U0.copy()
    kw = dict(threads=threads, loosen=loosen, backwards=backwards, grid=2.0**40, L_from=L0.copy(), U_from=U0.copy())
    if stored:
        g = build_graph(game)
        kernels.graph_bounds_sweep(game, g.offsets, g.counts, g.codes, L, U, **kw)
    else:
        kernels.bounds_sweep(game, L, U, **kw)
    assert np.array_equal(L, L1) and np.array_equal(U, U1)
    L, U = L0.copy(), U0.copy()
    kernels.bounds_sweep(game, L, U, loosen=loosen, backwards=backwards, grid=2.0**40)
    assert not (np.array_equal(L, L1) and np.array_equal(U, U1))
    with pytest.raises(ValueError, match="give both or neither"):
        kernels.bounds_sweep(game, L0.copy(), U0.copy(), L_from=L0)


def test_a_proof_on_several_threads_is_the_same_run_after_run(tmp_path) -> None:
    """Three threads on two cores interleave differently each time; the ranking passes and the
    tightening sweeps must not let that reach the intervals (with Gauss-Seidel tightening they
    differed here in most runs). A rough table needs tightening sweeps, hence its tolerance; the
    strategy's pair from it is already within 1e-4, so that proof aims lower, and the loosening
    method, which leaves the work to many tightening sweeps, runs too."""
    o = mini_options(tmp_path, 4)
    game = kernel(o)
    values = np.asarray(solve(o, tmp_path / "t", tolerance=1e-3, threads=1)["value"])  # the same table each run
    for method, gap in (("strategy", 3e-5), ("loosening", 1e-3)):
        first = certify(game, values, gap, threads=3, refine=0, method=method)
        assert first.method == method and first.tighten_sweeps > 0
        for _ in range(4):
            again = certify(game, values, gap, threads=3, refine=0, method=method)
            assert np.array_equal(again.lower, first.lower) and np.array_equal(again.upper, first.upper)


# ---- the strategy's pair: a fixed strategy against its best answer ------------------------------

def pair_term_ref(c: int, X: np.ndarray, n: int, upper: bool) -> float:
    """Outcome c of a row of L (upper false) or U, read from X = [L; U] as the kernel's text says."""
    if c == kernels.WIN:
        return 1.0
    if c == kernels.LOSS:
        return -1.0
    if c == kernels.NOCODE:
        return 0.0
    if c >= 0:
        return X[n + c] if upper else X[c]
    t = -c - 1
    return -(X[t] if upper else X[n + t])


_OFFERED: dict[int, list[list[list[int]]]] = {}


def graph_and_bounds(game, seed: int):
    """The game's stored graph, its state count, a generator from ``seed`` and float32 bounds
    0.05 either side of random values."""
    from gamesolver.solver.stochastic.outcomes import build_graph

    rng = np.random.default_rng(seed)
    n = game.state_count
    V = (rng.random(n) * 1.6 - 0.8).astype(np.float32)
    return build_graph(game), n, rng, V - np.float32(0.05), V + np.float32(0.05)


def random_answers(game, rng) -> np.ndarray:
    """A code per state and roll, each one the roll offers (NOCODE where it offers none)."""
    n, R = game.state_count, game.roll_count
    if id(game) not in _OFFERED:
        _OFFERED[id(game)] = [[sorted(game.roll_outcomes(s, r)) for r in range(R)] for s in range(n)]
    offered = _OFFERED[id(game)]
    out = np.empty((n, R), dtype=np.int32)
    for s in range(n):
        for r in range(R):
            codes = offered[s][r]
            out[s, r] = codes[rng.integers(len(codes))] if codes else kernels.NOCODE
    return out


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), slack=st.sampled_from([0.0, 2.0**-30, 0.01]))
def test_the_pair_product_is_the_written_sum(mini4, seed: int, slack: float) -> None:
    rng = np.random.default_rng(seed)
    n, R = mini4.state_count, mini4.roll_count
    pol, tau = random_answers(mini4, rng), random_answers(mini4, rng)
    pinned = rng.integers(0, 3, 2 * n).astype(np.uint8)
    x = rng.uniform(-1, 1, 2 * n)
    small = slack / 64
    probs = mini4.roll_probabilities
    out, full, minus = np.empty(2 * n), np.empty(2 * n), np.empty(2 * n)
    kernels.pair_apply(mini4, pol, tau, pinned, x, out)
    kernels.pair_apply(mini4, pol, tau, pinned, x, full, constants=True, slack=slack, small=small, threads=2)
    kernels.pair_apply(mini4, pol, tau, pinned, x, minus, minus=True)
    for row in rng.integers(0, 2 * n, 60).tolist():
        upper, s = row >= n, row % n
        codes = (tau if upper else pol)[s]
        if pinned[row] == 1:
            want_a, want_c = 0.0, 0.0
        else:
            want_a = sum(p * pair_term_ref(int(c), x, n, upper) for p, c in zip(probs, codes)
                         if int(c) > kernels.NOCODE)
            want_c = sum(p * pair_term_ref(int(c), x, n, upper) for p, c in zip(probs, codes))
            give = slack if pinned[row] == 0 else small
            want_c += give if upper else -give
        assert out[row] == pytest.approx(want_a, abs=1e-12)
        assert full[row] == pytest.approx(want_c, abs=1e-12)
        assert minus[row] == pytest.approx(x[row] - want_a, abs=1e-12)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), threads=st.sampled_from([1, 3]), minus=st.booleans())
def test_the_pair_matrix_in_compressed_rows_gives_the_pair_product(mini4, seed: int, threads: int,
                                                                   minus: bool) -> None:
    """The products of the pair's equations read the matrix in compressed rows (``pair_matrix``,
    ``sparse_apply``): the same product as ``pair_apply`` (held to the written sum above) up to
    rounding, a row's repeated successors merged into one entry, pinned rows empty."""
    from gamesolver.solver.stochastic.bounds import pair_matrix

    rng = np.random.default_rng(seed)
    n, R = mini4.state_count, mini4.roll_count
    pol, tau = random_answers(mini4, rng), random_answers(mini4, rng)
    pinned = rng.integers(0, 3, 2 * n).astype(np.uint8)
    x = rng.uniform(-1, 1, 2 * n)
    matrix, why = pair_matrix(mini4, pol, tau, pinned, threads)
    assert matrix is not None and "in memory" in why
    indptr, indices, data = matrix
    counts = np.diff(indptr)
    assert counts.min() >= 0 and counts.max() <= R and not counts[pinned == 1].any()
    for row in rng.integers(0, 2 * n, 60).tolist():
        cols = indices[indptr[row]:indptr[row + 1]]
        assert len(set(cols.tolist())) == cols.size and np.all((cols >= 0) & (cols < 2 * n))
    want, got = np.empty(2 * n), np.empty(2 * n)
    kernels.pair_apply(mini4, pol, tau, pinned, x, want, minus=minus)
    kernels.sparse_apply(indptr, indices, data, x, got, minus=minus, threads=threads)
    assert np.abs(got - want).max() <= 1e-12
    with pytest.raises(ValueError, match="entries"):
        kernels.sparse_apply(indptr, indices, data, x[:-1], got)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), ahead=st.sampled_from([1, 4, 33, 10**9]), threads=st.sampled_from([1, 3]),
       loosen=st.booleans(), backwards=st.booleans(), subset=st.booleans())
def test_prefetching_changes_no_bound_and_no_product(mini4, seed: int, ahead: int, threads: int, loosen: bool,
                                                    backwards: bool, subset: bool) -> None:
    """The stored graph's bounds sweep and the product by the pair's matrix ask the cache for
    what they will read some states or entries on: a hint that must leave every bound, mark,
    returned change and product as without it, in either direction, over a subset, and near the
    end of the arrays (the prefetch never reads past them)."""
    from gamesolver.solver.stochastic.bounds import pair_matrix

    game = mini4
    g, n, rng, L0, U0 = graph_and_bounds(game, seed)
    some = np.flatnonzero(rng.random(n) < 0.3).astype(np.int64) if subset else None
    # on several threads in place a sweep reads what other threads wrote by then: Jacobi there
    jacobi = dict(L_from=L0.copy(), U_from=U0.copy()) if threads > 1 else {}
    got = []
    for a in (0, ahead):
        L, U, mark = L0.copy(), U0.copy(), np.zeros(n, dtype=np.uint8)
        moved = kernels.graph_bounds_sweep(game, g.offsets, g.counts, g.codes, L, U, threads=threads, loosen=loosen,
                                           backwards=backwards, subset=some, mark=mark, ahead=a, **jacobi)
        got.append((L, U, mark, moved))
    assert np.array_equal(got[0][0], got[1][0]) and np.array_equal(got[0][1], got[1][1])
    assert np.array_equal(got[0][2], got[1][2]) and got[0][3] == got[1][3]
    matrix, _ = pair_matrix(game, random_answers(game, rng), random_answers(game, rng),
                            rng.integers(0, 3, 2 * n).astype(np.uint8), threads)
    x = rng.uniform(-1, 1, 2 * n)
    plain, hinted = np.empty(2 * n), np.empty(2 * n)
    kernels.sparse_apply(*matrix, x, plain, minus=loosen, threads=threads, ahead=0)
    kernels.sparse_apply(*matrix, x, hinted, minus=loosen, threads=threads, ahead=ahead)
    assert np.array_equal(plain, hinted)
    with pytest.raises(ValueError, match="negative"):
        kernels.sparse_apply(*matrix, x, plain, ahead=-1)
    with pytest.raises(ValueError, match="negative"):
        kernels.graph_bounds_sweep(game, g.offsets, g.counts, g.codes, L0.copy(), U0.copy(), ahead=-1)


def test_sparse_apply_is_the_written_product() -> None:
    # rows: [2 at column 1, -1 at column 0], [nothing], [0.5 at column 2]
    indptr = np.array([0, 2, 2, 3], dtype=np.int64)
    indices = np.array([1, 0, 2], dtype=np.int32)
    data = np.array([2.0, -1.0, 0.5])
    x = np.array([3.0, 5.0, 7.0])
    out = np.empty(3)
    kernels.sparse_apply(indptr, indices, data, x, out)
    assert out.tolist() == [7.0, 0.0, 3.5]
    kernels.sparse_apply(indptr, indices, data, x, out, minus=True, threads=2)
    assert out.tolist() == [-4.0, 5.0, 3.5]


def test_a_proof_without_room_for_the_pair_matrix_reads_the_codes(tmp_path, monkeypatch) -> None:
    """Where the compressed matrix would not fit, each product reads the strategies' codes
    (``pair_apply``): the same proof, up to the solves' rounding. The fit is decided on the
    matrix's exact size, counted first, with BiCGSTAB's seven vectors beside it."""
    from gamesolver.solver.stochastic import bounds

    o = mini_options(tmp_path, 4)
    game = kernel(o)
    values = np.asarray(solve(o, tmp_path / "t", tolerance=1e-6, threads=1)["value"])
    asked, lines = [], []
    real = bounds._matrix_fits
    monkeypatch.setattr(bounds, "_matrix_fits", lambda nbytes, vectors, available: asked.append(
        (nbytes, vectors)) or real(nbytes, vectors, available))
    fast = certify(game, values, 1e-6, threads=2, log=lines.append)
    n2 = 2 * game.state_count
    assert asked and all(v == 7 * n2 * 8 for _, v in asked)
    # the count: 8 bytes of row pointer a row, 12 an entry, at most one entry a roll
    assert all(8 * (n2 + 1) < b <= 8 * (n2 + 1) + 12 * n2 * game.roll_count for b, _ in asked)
    assert any("products by the pair's matrix in memory" in line for line in lines)
    monkeypatch.setattr(bounds, "_matrix_fits", lambda nbytes, vectors, available: False)
    lines.clear()
    slow = certify(game, values, 1e-6, threads=2, log=lines.append)
    assert any("products read the strategies' codes" in line and "would not fit" in line for line in lines)
    assert fast.method == slow.method == "strategy"
    assert fast.gap < 1e-6 and slow.gap < 1e-6
    assert np.all(fast.lower <= slow.upper) and np.all(slow.lower <= fast.upper)
    assert np.abs(fast.lower - slow.lower).max() < 1e-7 and np.abs(fast.upper - slow.upper).max() < 1e-7


def test_available_memory_is_read_from_the_kernel(monkeypatch) -> None:
    """``available_bytes``: MemAvailable where /proc/meminfo has it, at most the machine's memory,
    and an eighth of the memory where it cannot be read."""
    from gamesolver.solver.stochastic import outcomes

    total = outcomes.memory_bytes()
    got = outcomes.available_bytes()
    assert 0 < got <= total
    real_open = open

    def no_proc(path, *a, **k):
        if str(path) == "/proc/meminfo":
            raise OSError("no /proc here")
        return real_open(path, *a, **k)

    monkeypatch.setattr("builtins.open", no_proc)
    assert outcomes.available_bytes() == total // 8


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), tie=st.sampled_from([0.0, 1e-3, 0.1]), stored=st.booleans(),
       ahead=st.sampled_from([0, 1, 4, 10**9]))
def test_the_best_answer_is_best_and_keeps_near_ties(mini4, seed: int, tie: float, stored: bool,
                                                     ahead: int) -> None:
    # ``ahead``: a prefetch distance (over the stored graph), which must change nothing
    rng = np.random.default_rng(seed)
    n, R = mini4.state_count, mini4.roll_count
    x = rng.uniform(-1, 1, 2 * n)
    tau0 = random_answers(mini4, rng)
    strict = (rng.random(n) < 0.3).astype(np.uint8)
    tau = tau0.copy()
    kw = graph_kw(mini4, stored)
    changed = kernels.best_response(mini4, x, tau, tie=tie, strict=strict, strict_tie=0.0, threads=2, ahead=ahead,
                                    **kw)
    assert changed == int(np.count_nonzero(tau != tau0))
    for s in rng.integers(0, n, 40).tolist():
        t = 0.0 if strict[s] else tie
        for r in range(R):
            codes = mini4.roll_outcomes(s, r)
            if not codes:
                assert tau[s, r] == kernels.NOCODE
                continue
            best = max(pair_term_ref(c, x, n, True) for c in codes)
            assert int(tau[s, r]) in codes
            assert pair_term_ref(int(tau[s, r]), x, n, True) >= best - t
            if pair_term_ref(int(tau0[s, r]), x, n, True) >= best - t:
                assert tau[s, r] == tau0[s, r]  # a near-tie keeps the answer it had
            else:  # a new answer is the first of the roll's best codes
                assert tau[s, r] == next(c for c in codes if pair_term_ref(c, x, n, True) == best)


def test_grid_bounds_are_outward_multiples(mini4) -> None:
    rng = np.random.default_rng(7)
    n = mini4.state_count
    V = rng.uniform(-0.8, 0.8, n)
    grid = 2.0**40
    for loosen in (False, True):
        L, U = V - 0.01, V + 0.01
        L2, U2 = L.copy(), U.copy()
        kernels.bounds_sweep(mini4, L2, U2, loosen=loosen, grid=grid)
        moved_l, moved_u = L2 != L, U2 != U
        assert np.all(L2[moved_l] * grid == np.floor(L2[moved_l] * grid))
        assert np.all(U2[moved_u] * grid == np.floor(U2[moved_u] * grid))
        assert np.all((L2 <= L) if loosen else (L2 >= L)) and np.all((U2 >= U) if loosen else (U2 <= U))


def test_the_strategy_pair_certifies_at_once_where_loosening_takes_long(tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    game = kernel(o)
    values = np.asarray(solve(o, tmp_path / "t", tolerance=1e-6, threads=2)["value"])
    fast = certify(game, values, 1e-6, threads=2)
    slow = certify(game, values, 1e-6, threads=2, method="loosening", tighten_sweeps=60)
    assert fast.method == "strategy" and slow.method == "loosening"
    assert fast.loosen_sweeps < 20 < slow.loosen_sweeps  # a handful of sweeps to settle rounding, not ~160
    assert fast.gap < 1e-6 and fast.endless_margin == 0.0 and fast.trapped > 0
    # both are proofs, so the intervals overlap everywhere, and the values lie within each bound
    assert np.all(fast.lower <= slow.upper) and np.all(slow.lower <= fast.upper)
    assert np.all(np.abs(values - fast.lower) <= fast.bound) and np.all(np.abs(fast.upper - values) <= fast.bound)
    assert_holds_reference(o, game, fast)
    with pytest.raises(ValueError, match="method must be"):
        certify(game, values, 1e-6, method="guess")


def test_refining_certifies_again_from_the_middles_and_keeps_what_both_prove(tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    game = kernel(o)
    # one thread throughout: the same rough table and the same first pass every run (with two, the
    # first pass fell back to -1 and +1 in one CI run; 50 runs here did not do it again)
    rough = np.asarray(solve(o, tmp_path / "rough", tolerance=1e-3, threads=1)["value"])
    once = certify(game, rough, 1e-6, threads=1, refine=0)
    twice = certify(game, rough, 1e-6, threads=1, refine=1)
    assert once.method == twice.method == "strategy" and once.passes == 1 and twice.passes == 2, once.why
    assert "why" not in twice.summary()
    assert once.gap > 1e-6  # a strategy chosen by rough values loses more than the tolerance ...
    assert twice.gap < once.gap / 10  # ... one chosen by the first intervals' middles does not
    assert twice.proven
    assert_holds_reference(o, game, twice)
    # the bound still speaks of the values given, not of the middles
    assert twice.bound == pytest.approx(max((rough - twice.lower).max(), (twice.upper - rough).max()))
    assert twice.bound > 1e-4 and twice.summary()["passes"] == 2
    # values already good enough are certified once
    good = np.asarray(solve(o, tmp_path / "good", tolerance=1e-6, threads=2)["value"])
    assert certify(game, good, 1e-6, threads=2, refine=3).passes == 1
    with pytest.raises(ValueError, match="refine must be"):
        certify(game, good, 1e-6, refine=-1)


def test_a_second_pass_starts_its_solves_from_what_the_first_proved(tmp_path, monkeypatch) -> None:
    """The pair's slow error is what a pass's first solve spends its products on; the second pass
    starts from the first one's intervals instead of its middles, and a pair started near its own
    solution (only the first answers, taken from the values, differ) needs under a third of the
    products."""
    from gamesolver.solver.stochastic import bounds

    o = mini_options(tmp_path, 4)
    game = kernel(o)
    rough = np.asarray(solve(o, tmp_path / "rough", tolerance=1e-3, threads=1)["value"])
    once = certify(game, rough, 1e-6, threads=1, refine=0)
    calls = []
    real = bounds.strategy_pair

    events = []
    sweep = kernels.bounds_sweep

    def spy(*args, **kw):
        pair = real(*args, **kw)
        calls.append((args, kw, pair))
        events.append("pair")
        return pair

    def sweep_spy(*args, **kw):
        events.append("loosen" if kw.get("loosen") else "tighten")
        return sweep(*args, **kw)

    monkeypatch.setattr(bounds, "strategy_pair", spy)
    monkeypatch.setattr(kernels, "bounds_sweep", sweep_spy)
    twice = certify(game, rough, 1e-6, threads=1, refine=1)
    assert twice.passes == 2 and len(calls) == 2 and calls[0][1]["start"] is None
    # the first pair, wider than the tolerance, only chose the second strategy: it was not proven
    # (no loosening sweep before the second pair), and only the second pass's intervals count
    assert events[:2] == ["pair", "pair"] and "loosen" in events
    start, first = calls[1][1]["start"], calls[0][2]
    assert np.array_equal(start[0], first.lower) and np.array_equal(start[1], first.upper)
    assert np.abs(first.lower - once.lower).max() < 1e-7  # the first pass's pair, before its proof (loosened)
    args, kw, pair = calls[1]
    again = real(*args, **{**kw, "start": (pair.lower, pair.upper)})
    assert again.settled and again.matvecs * 3 < pair.matvecs
    # both solve the same equations, each to a residual of slack * _KRYLOV_TOL (max norm)
    near = 10 * bounds._SLACK * bounds._KRYLOV_TOL
    assert np.abs(again.lower - pair.lower).max() < near and np.abs(again.upper - pair.upper).max() < near


def test_solve_certify_proves_over_the_graph_the_solve_stored(tmp_path, monkeypatch) -> None:
    from gamesolver.solver.stochastic import solve as engine_solve

    seen = []
    real = engine_solve.certify

    def spy(*args, **kw):
        seen.append(kw.get("graph"))
        return real(*args, **kw)

    monkeypatch.setattr(engine_solve, "certify", spy)
    o = mini_options(tmp_path, 4)
    stored = solve(o, tmp_path / "s", tolerance=1e-6, threads=2, graph="store", proof=True)
    regenerated = solve(o, tmp_path / "r", tolerance=1e-6, threads=2, graph="regenerate", proof=True)
    assert seen[0] is not None and seen[0].stored and seen[0].codes.size > 0  # no second generation of outcomes
    assert seen[1] is None
    assert stored.meta["certified"]["gap"] < 1e-6 and regenerated.meta["certified"]["gap"] < 1e-6


def test_solve_proof_aims_at_the_width_asked_for(tmp_path) -> None:
    import json

    from click.testing import CliRunner

    from gamesolver.solver.cli import cli

    o = mini_options(tmp_path, 4)
    common = ["ur", "solve", "--pieces", "4", "--board", o.board_file, "--out", str(tmp_path / "t")]
    res = CliRunner().invoke(cli, [*common, "--tolerance", "1e-6", "--proof", "--width", "1e-5", "--json"])
    assert res.exit_code == 0, res.output
    cert = json.loads(res.stdout)["certified"]
    assert cert["aimed_at"] == 1e-5 and cert["gap"] <= 1e-5 and cert["method"] == "strategy"
    res = CliRunner().invoke(cli, [*common, "--width", "1e-5", "--no-proof"])
    assert res.exit_code == 2 and "--width is the proof's aim" in res.output
    res = CliRunner().invoke(cli, [*common[:-2], "--out", str(tmp_path / "u"), "--tolerance", "1e-6", "--proof",
                                   "--width", "1e-5"])
    assert res.exit_code == 0, res.output
    assert "(proven between" in res.output and "proof: every interval at most" in res.output
    assert "1 pass, method strategy" in res.output
    res = CliRunner().invoke(cli, [*common, "--proof", "--width", "0"])
    assert res.exit_code == 2 and "--width must be between 0 and 1; got 0" in res.output
    res = CliRunner().invoke(cli, [*common, "--certify"])  # the old hidden name is gone: click's one line
    assert res.exit_code == 2 and "No such option '--certify'" in res.output


def test_a_proof_that_cannot_fit_is_refused_before_anything_is_solved(tmp_path, monkeypatch) -> None:
    """``--proof`` (and ``check --bounds``, and ``certify`` itself) on a machine whose memory
    cannot hold the proof: one line naming what it needs, exit 2, no table folder, no solve."""
    from click.testing import CliRunner

    from gamesolver.solver.stochastic import bounds
    from gamesolver.solver.cli import cli

    o = mini_options(tmp_path, 4)
    game = kernel(o)
    need = bounds.certify_bytes(game.state_count, game.roll_count)
    assert need == game.state_count * (3 * 4 * game.roll_count + 10 * 16 + 36)
    common = ["ur", "solve", "--pieces", "4", "--board", o.board_file, "--tolerance", "1e-5"]
    solved = CliRunner().invoke(cli, [*common, "--out", str(tmp_path / "t")])  # for check, below
    assert solved.exit_code == 0, solved.output
    monkeypatch.setattr(bounds, "memory_bytes", lambda: need - 1)
    res = CliRunner().invoke(cli, [*common, "--out", str(tmp_path / "u"), "--proof"])
    assert res.exit_code == 2 and not (tmp_path / "u").exists()
    line = res.output.strip()
    assert "\n" not in line and "Traceback" not in line
    assert f"needs about {need / 2**30:.1f} GiB" in line and "solve with --no-proof" in line
    # without --proof the solve goes on unproven and says so in one line first
    res = CliRunner().invoke(cli, [*common, "--out", str(tmp_path / "v"), "--json"])
    assert res.exit_code == 0 and "solving without it, so the values will be labelled unproven" in res.stderr
    assert json.loads(res.stdout)["proven"] is False
    res = CliRunner().invoke(cli, ["ur", "check", "--pieces", "4", "--board", o.board_file, "--table",
                                   str(tmp_path / "t"), "--bounds"])
    assert res.exit_code == 2 and "the proof of" in res.output
    with pytest.raises(InputError, match="needs about"):
        certify(game, np.zeros(game.state_count, dtype=np.float32), 1e-5)
    monkeypatch.setattr(bounds, "memory_bytes", lambda: need)
    assert bounds.check_certify_fits(game.state_count, game.roll_count) == need


@pytest.mark.slow
def test_four_pieces_are_proven_below_a_gap_of_1e_5(tmp_path) -> None:
    # the real board with four pieces (8,403,425 stored states): 8-15 minutes on two cores
    from gamesolver.solver.stochastic.iteration import solve_values

    o = UrOptions(pieces=4)
    game = kernel(o)
    solved = solve_values(game, tmp_path / "t", o.header(), tolerance=1e-6, threads=2)
    cert = certify(game, solved.values, 1e-5, threads=2, graph=solved.graph)
    assert cert.method == "strategy" and cert.endless_margin == 0.0 and cert.gap <= 1e-5, cert.summary()
    start = int(game.rank([0], [0])[0])
    lo, hi = cert.lower[start], cert.upper[start]
    assert hi - lo < 2e-6 and 0.05 < lo  # the first player is proven ahead, to six decimals
    # the solve's own start value agrees with the proof to within the gap asked for
    assert lo - 1e-5 <= solved.values[start] <= hi + 1e-5


def rank_pass_ref(game, V: np.ndarray, eps: float, RP: np.ndarray, RQ: np.ndarray, counter: np.ndarray,
                  policy: np.ndarray | None = None, backwards: bool = False, blocks: int = 1) -> int:
    """One pass of the certificate's ranking (``_engine.rank_pass``), written out plainly, one
    state at a time in rank order, on the game's own outcome lists for each roll. The states fall
    into ``blocks`` contiguous blocks (one a thread), each visited in order with its own count of
    ranks from the last one given before the pass; a node removed in this pass counts as removed
    only within its own block."""
    ends = (kernels.WIN, kernels.LOSS, kernels.NOCODE)
    old = int(counter[0])

    def value(c: int) -> float:
        return code_value(c, V)

    removed = 0
    n = game.state_count
    top = old
    for b in range(blocks):
        lo, hi = n * b // blocks, n * (b + 1) // blocks
        last = old

        def leaves(c: int, same: np.ndarray, other: np.ndarray) -> bool:
            if c in ends:
                return True
            t, R_ = (c, same) if c >= 0 else (-c - 1, other)
            return 0 < R_[t] <= old or (R_[t] > 0 and lo <= t < hi)

        for s in (range(hi - 1, lo - 1, -1) if backwards else range(lo, hi)):
            if RP[s] and RQ[s]:
                continue
            out_p = out_q = False
            for r in range(game.roll_count):
                codes = game.roll_outcomes(s, r) or [kernels.NOCODE]
                if not RP[s] and not out_p:
                    if policy is not None:
                        out_p = leaves(int(policy[s, r]), RP, RQ)
                    else:  # some action within eps of the roll's best leaves
                        best = max(value(c) for c in codes)
                        out_p = any(value(c) >= best - eps and leaves(c, RP, RQ) for c in codes)
                if not RQ[s] and not out_q:  # every action leaves
                    out_q = all(leaves(c, RQ, RP) for c in codes)
            for R_, out in ((RP, out_p), (RQ, out_q)):
                if out and not R_[s]:
                    last += 1
                    R_[s] = last
                    removed += 1
        top = max(top, last)
    counter[0] = top
    return removed


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), eps=st.sampled_from([0.0, 1e-3, 0.25, 2.5]), with_policy=st.booleans(),
       stored=st.booleans(), backwards=st.booleans(), done=st.sampled_from([0.0, 0.3, 0.9]),
       split=st.sampled_from([(1, 0), (2, 0), (3, 0), (1, 2), (2, 3)]), ahead=st.sampled_from([0, 1, 4, 10**9]))
def test_a_rank_pass_is_the_written_ranking(mini4, seed: int, eps: float, with_policy: bool, stored: bool,
                                            backwards: bool, done: float, split: tuple[int, int], ahead: int) -> None:
    # (threads, blocks): one block a thread by default; the blocks alone decide the ranks; ``ahead``:
    # a prefetch distance (over the stored graph), which must change nothing
    threads, blocks = split
    rng = np.random.default_rng(seed)
    n = mini4.state_count
    V = rng.choice(NEAR_TIES, n)
    # some nodes ranked already, as after earlier passes
    RP = np.where(rng.random(n) < done, rng.integers(1, 1000, n), 0).astype(np.int32)
    RQ = np.where(rng.random(n) < done, rng.integers(1, 1000, n), 0).astype(np.int32)
    policy = random_answers(mini4, rng) if with_policy else None
    kw = graph_kw(mini4, stored)
    got = [RP.copy(), RQ.copy(), np.array([1000], dtype=np.int32)]
    want = [RP.copy(), RQ.copy(), np.array([1000], dtype=np.int32)]
    removed = kernels.rank_pass(mini4, V, eps, *got, threads=threads, policy=policy, backwards=backwards,
                                blocks=blocks, ahead=ahead, **kw)
    assert removed == rank_pass_ref(mini4, V, eps, *want, policy=policy, backwards=backwards,
                                    blocks=blocks or threads)
    for a, b in zip(got, want):
        assert np.array_equal(a, b)


def check_attractor_policy(game, V: np.ndarray, eps: float, RP: np.ndarray, RQ: np.ndarray,
                           policy: np.ndarray, every: bool = False) -> None:
    """``_engine.attractor_policy``'s rule, written out: the best action by V on every roll,
    except at a ranked node where no roll's best action leads on (ends the game or goes to a
    smaller rank): there the roll where a near-best leading action gives up least (probability
    times value given up, the first such roll on a tie) takes its best leading action. ``every``:
    the older rule, where at a ranked node every roll with a near-best leading action takes its
    best one."""
    ends = (kernels.WIN, kernels.LOSS, kernels.NOCODE)
    p = np.asarray(game.roll_probabilities, dtype=np.float32)

    def value(c: int) -> float:
        return code_value(c, V)

    for s in range(game.state_count):
        rows = [game.roll_outcomes(s, r) or [kernels.NOCODE] for r in range(game.roll_count)]
        chosen = [int(c) for c in policy[s]]
        best = [max(value(c) for c in codes) for codes in rows]
        assert all(c in codes for c, codes in zip(chosen, rows))

        def leads(c: int) -> bool:
            if c in ends:
                return True
            t, R_ = (c, RP) if c >= 0 else (-c - 1, RQ)
            return 0 < R_[t] <= RP[s] - 1

        if not RP[s]:
            assert [value(c) for c in chosen] == best
            continue
        leading = [[value(c) for c in codes if value(c) >= b - eps and leads(c)] for codes, b in zip(rows, best)]
        if every:
            for c, w, b in zip(chosen, leading, best):
                assert (leads(c) and value(c) == max(w)) if w else value(c) == b
            continue
        free = [bool(w) and max(w) >= b for w, b in zip(leading, best)]
        if any(free):
            assert [value(c) for c in chosen] == best
            assert all(leads(c) for c, f in zip(chosen, free) if f)
            continue
        costs = [float(p[r]) * (best[r] - max(w)) if w else np.inf for r, w in enumerate(leading)]
        pick = int(np.argmin(costs)) if np.isfinite(min(costs)) else -1
        for r, c in enumerate(chosen):
            if r == pick:
                assert leads(c) and value(c) == max(leading[r])
            else:
                assert value(c) == best[r]


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), eps=st.sampled_from([0.0, 1e-3, 0.25]), stored=st.booleans(),
       threads=st.sampled_from([1, 3]), done=st.sampled_from([0.3, 0.9]), every=st.booleans())
def test_the_attractor_strategy_leads_on_where_it_must_at_the_least_cost(
        mini4, seed: int, eps: float, stored: bool, threads: int, done: float, every: bool) -> None:
    rng = np.random.default_rng(seed)
    n = mini4.state_count
    V = rng.choice(NEAR_TIES, n)
    RP = np.where(rng.random(n) < done, rng.integers(1, 1000, n), 0).astype(np.int32)
    RQ = np.where(rng.random(n) < done, rng.integers(1, 1000, n), 0).astype(np.int32)
    kw = graph_kw(mini4, stored)
    policy = np.full((n, mini4.roll_count), 12345, dtype=np.int32)
    kernels.attractor_policy(mini4, V, eps, RP, RQ, policy, threads=threads, every=every, **kw)
    check_attractor_policy(mini4, V, eps, RP, RQ, policy, every)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), eps=st.sampled_from([0.0, 1e-3, 0.25]), stored=st.booleans(),
       threads=st.sampled_from([1, 2, 3]), every=st.booleans(), wider=st.booleans())
def test_the_strategy_can_last_for_ever_exactly_where_the_ranking_left_nodes(
        mini4, seed: int, eps: float, stored: bool, threads: int, every: bool, wider: bool) -> None:
    check_the_strategys_ranking(mini4, seed, eps, stored, threads, every, wider)


def check_the_strategys_ranking(mini4, seed: int, eps: float, stored: bool, threads: int, every: bool,
                                wider: bool) -> None:
    """``certify`` takes the nodes the strategy's ranking never removed as those where play can
    last for ever against the strategy, without ranking again with the strategy fixed (as it did
    before): the ranking with the strategy fixed leaves exactly the same nodes. ``wider``: the
    ranking goes on at ten times ``eps`` in some states only (``allow``), as ``certify`` does where
    play is kept for ever far from 0, and the strategy is chosen with that slack: then the
    strategy's ranking leaves at most those nodes (fewer where a small-valued node it kept leads
    on anyway), which is what the proof needs."""
    from gamesolver.solver.stochastic import bounds
    rng = np.random.default_rng(seed)
    n = mini4.state_count
    V = rng.choice(NEAR_TIES, n)
    kw = graph_kw(mini4, stored)
    RP, RQ, _ = bounds._ranks(mini4, V, eps, threads, None, False, "", kw)
    slack = eps
    if wider and eps:
        NP, NQ, top = RP.copy(), RQ.copy(), max(RP.max(), RQ.max())
        allow = (rng.random(n) < 0.5).astype(np.uint8)
        slack = 10 * eps
        RP, RQ, _ = bounds._ranks(mini4, V, slack, threads, None, False, "", kw, ranks=(RP, RQ), allow=allow)
        # the new stage only adds nodes, ranked above every one before; the certified side's only where allowed
        assert np.all(RP[NP > 0] == NP[NP > 0]) and np.all(RQ[NQ > 0] == NQ[NQ > 0])
        assert np.all(RP[(NP == 0) & (RP > 0)] > top) and np.all(RQ[(NQ == 0) & (RQ > 0)] > top)
        assert not np.any((NP == 0) & (RP > 0) & (allow == 0))
    policy = np.empty((n, mini4.roll_count), dtype=np.int32)
    kernels.attractor_policy(mini4, V, slack, RP, RQ, policy, threads=threads, every=every, **kw)
    check_attractor_policy(mini4, V, slack, RP, RQ, policy, every)
    SP, SQ, _ = bounds._ranks(mini4, V, eps, threads, policy, False, "", kw)
    if wider and eps:
        assert np.all((SP == 0) <= (RP == 0)) and np.all((SQ == 0) <= (RQ == 0))
    else:
        assert np.array_equal(SP == 0, RP == 0) and np.array_equal(SQ == 0, RQ == 0)
    assert 0 < np.count_nonzero(RP == 0) + np.count_nonzero(RQ == 0) < 2 * n or eps == 0.25


def test_the_wider_ranking_counterexample_that_ci_found(mini4) -> None:
    """Found by hypothesis in a fresh CI run: seed 4227, eps 0.25,
    the wider stage at slack 2.5. The ranking removed the certified side's node at state 863
    though no action on some roll leads on: "no such action" was a sentinel of -3.0, and with a
    slack of 2.5 below a best of -0.5 it counted as near-best. The strategy then found nothing to
    lead on with, and its ranking kept that node and 4 opponent nodes. Real proofs use slacks
    of 1e-4 and below, where the sentinel never passed."""
    check_the_strategys_ranking(mini4, seed=4227, eps=0.25, stored=False, threads=1, every=False, wider=True)


def staying_ref(game, policy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where play can stay for ever with the strategy ``policy`` kept, written out: start from
    every node and drop, until nothing drops, a strategy node whose chosen outcome on some roll
    ends the game or leaves the set, and an opponent node with a roll where every action does."""
    n, R = game.state_count, game.roll_count
    rows = [[game.roll_outcomes(s, r) or [kernels.NOCODE] for r in range(R)] for s in range(n)]
    ends = (kernels.WIN, kernels.LOSS, kernels.NOCODE)
    inP, inQ = np.ones(n, dtype=bool), np.ones(n, dtype=bool)

    def stays(c: int, same: np.ndarray, other: np.ndarray) -> bool:
        return c not in ends and bool(same[c] if c >= 0 else other[-c - 1])

    while True:
        dropP = [s for s in range(n) if inP[s] and not all(stays(int(policy[s, r]), inP, inQ) for r in range(R))]
        dropQ = [s for s in range(n) if inQ[s] and not all(any(stays(c, inQ, inP) for c in rows[s][r])
                                                           for r in range(R))]
        if not dropP and not dropQ:
            return inP, inQ
        inP[dropP] = False
        inQ[dropQ] = False


def widened_ranks(game, V: np.ndarray, eps: float, rng, kw: dict, threads: int = 1):
    """The certificate's ranks with the wider slack at about half the states (``allow``), as
    ``certify`` ranks them where play was kept far from 0, and the strategy chosen from them."""
    from gamesolver.solver.stochastic import bounds

    n = game.state_count
    RP, RQ, _ = bounds._ranks(game, V, eps, threads, None, False, "", kw)
    allow = (rng.random(n) < 0.5).astype(np.uint8)
    RP, RQ, _ = bounds._ranks(game, V, bounds._WIDER * eps, threads, None, False, "", kw, ranks=(RP, RQ),
                              allow=allow)
    policy = np.empty((n, game.roll_count), dtype=np.int32)
    kernels.attractor_policy(game, V, bounds._WIDER * eps, RP, RQ, policy, threads=threads, **kw)
    return RP, RQ, policy


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), eps=st.sampled_from([1e-3, 0.25]), stored=st.booleans(),
       threads=st.sampled_from([1, 3]))
def test_the_endless_margin_counts_only_where_play_can_stay_with_the_strategy_kept(
        mini4, seed: int, eps: float, stored: bool, threads: int) -> None:
    """The margin's nodes, found by ranking on from the certificate's ranks, are the written-out
    largest set where play can stay for ever with the strategy kept, a part of the nodes the
    ranking left; and the margin is the largest claim over them alone."""
    from gamesolver.solver.stochastic import bounds

    rng = np.random.default_rng(seed)
    n = mini4.state_count
    V = rng.choice(NEAR_TIES, n)
    kw = graph_kw(mini4, stored)
    RP, RQ, policy = widened_ranks(mini4, V, eps, rng, kw, threads)
    ZP, ZQ = RP == 0, RQ == 0
    L = rng.uniform(-1, 1, n)
    U = np.minimum(L + rng.uniform(0, 0.5, n), 1)
    m, stay, _ = bounds._endless_margin(mini4, V, policy, RP, RQ, L, U, threads, kw)
    inP, inQ = staying_ref(mini4, policy)
    assert np.array_equal(RP == 0, inP) and np.array_equal(RQ == 0, inQ)
    assert np.all(inP <= ZP) and np.all(inQ <= ZQ) and stay == inP.sum() + inQ.sum()
    assert m == max([0.0, *L[inP], *(-U[inQ])])


@pytest.mark.parametrize("seed", [1, 22])
def test_a_node_the_ranking_kept_that_the_strategy_leads_on_from_claims_no_margin(mini4, seed: int) -> None:
    """Where the strategy was chosen with the wider slack, some nodes the ranking kept lead on
    anyway (on five pieces, one worth +0.36 made the margin over every kept node 0.361 and proved
    nothing): however much such a node claims, the margin does not count it."""
    from gamesolver.solver.stochastic import bounds

    rng = np.random.default_rng(seed)
    n = mini4.state_count
    V = rng.choice(NEAR_TIES, n)
    RP, RQ, policy = widened_ranks(mini4, V, 1e-3, rng, {})
    inP, inQ = staying_ref(mini4, policy)
    leads = (RP == 0) & ~inP
    assert leads.any()  # these seeds have such nodes
    L = np.where(leads, 0.5, -0.5)
    U = np.full(n, 0.5)
    m, stay, _ = bounds._endless_margin(mini4, V, policy, RP, RQ, L, U, 1, {})
    assert m == 0.0 and stay == inP.sum() + inQ.sum()


def far_either_side(values: np.ndarray, states: np.ndarray, tol: float) -> np.ndarray:
    """Of ``states``, those worth ten times ``tol`` or more to either side."""
    from gamesolver.solver.stochastic import bounds

    return states[np.abs(values[states]) >= bounds._WIDER * tol]


def far_closing(values: np.ndarray, tol: float, n: int, active=lambda: True):
    """A stand-in for ``bounds._closed`` (returned with the list it fills): besides the rows the
    real one finds, it says play never leaves the strategy's rows at the trapped states worth ten
    times ``tol`` or more to either side (fixed at its first active call), while they stay trapped
    (where the strategy leads on, play can end), and only while ``active()``. The test board's
    pairs close no such rows themselves."""
    from gamesolver.solver.stochastic import bounds

    real = bounds._closed
    far: list[np.ndarray] = []

    def closed(policy, tau, trapped_rows, n_):
        rows = real(policy, tau, trapped_rows, n_)
        if not active():
            return rows
        if not far:
            kept = trapped_rows[trapped_rows < n]
            far.append(far_either_side(values, kept, tol))
        return np.union1d(rows, np.intersect1d(far[0], trapped_rows))

    return closed, far


def widen_either_side(monkeypatch) -> None:
    """``certify`` widens only the closed states where the strategy's side is ahead (``_far``); on
    the test board every state the ranking keeps has that side behind (it is the side that wants
    play to go on), so tests of how widening goes on widen either side instead."""
    from gamesolver.solver.stochastic import bounds

    monkeypatch.setattr(bounds, "_far", far_either_side)


def test_only_states_where_the_strategy_is_ahead_are_widened(tmp_path) -> None:
    """Of the closed states, ``_far`` picks those worth ten times the tolerance or more to the
    strategy's side; on the test board's own kept states that is none (all are behind: the side
    to move there is the one that wants play to go on)."""
    from gamesolver.solver.stochastic import bounds

    values = np.array([0.5, -0.5, 1e-3, 9.9e-3, 1e-2, -1e-2, 0.0], dtype=np.float32)
    assert list(bounds._far(values, np.arange(7), 1e-3)) == [0, 4]
    assert list(bounds._far(values, np.array([1, 3, 4]), 1e-3)) == [4]
    o = mini_options(tmp_path, 4)
    game = kernel(o)
    v = np.asarray(solve(o, tmp_path / "t", tolerance=1e-3, threads=1)["value"])
    RP, RQ, _ = bounds._ranks(game, v, 1e-3, 1, None, False, "", {})
    kept = np.flatnonzero(RP == 0)
    assert kept.size and not bounds._far(v, kept, 1e-3).size and np.all(v[kept] < 0)


def test_where_the_pair_keeps_play_far_from_0_the_strategy_leads_on_with_a_wider_slack(
        tmp_path, monkeypatch) -> None:
    """Where the strategy's pair never ends play (rows pinned at 0) yet the values there are ten
    times the tolerance or more, ``certify`` goes on ranking those states with a slack ten times
    the tolerance, and the pair goes on with the strategy that now leads on there, in the round
    where those rows appeared (on five pieces of the real board, pass 2's first round closed such
    a cycle; waiting for the answers to settle let the 0 pinned there spread until the pair was
    0.325 wide). The proof still holds. The test board's pairs close no such rows, so a spy says
    play never leaves the strategy's rows at its trapped states worth that much, from the first
    answers on."""
    from gamesolver.solver.stochastic import bounds

    o = mini_options(tmp_path, 4)
    game = kernel(o)
    n, tol = game.state_count, 1e-3
    values = np.asarray(solve(o, tmp_path / "t", tolerance=1e-3, threads=1)["value"])
    real_closed, real_pair = bounds._closed, bounds.strategy_pair
    closed, far = far_closing(values, tol, n)
    calls = []

    def spy(game, values, policy, trapped, *args, **kw):
        before = policy.copy(), trapped.copy()
        pair = real_pair(game, values, policy, trapped, *args, **kw)
        calls.append((before, (policy.copy(), trapped.copy()), pair))
        return pair

    monkeypatch.setattr(bounds, "_closed", closed)
    widen_either_side(monkeypatch)
    monkeypatch.setattr(bounds, "strategy_pair", spy)
    said: list[str] = []
    cert = certify(game, values, tol, threads=1, refine=0, log=said.append)
    (policy0, trapped0), (policy1, trapped1), pair = calls[0]
    assert far[0].size
    assert len(calls) == 1 and pair.settled  # one pair: its rounds went on with the new strategy
    assert trapped1.sum() < trapped0.sum()  # fewer positions where play can last for ever
    assert not np.array_equal(policy0, policy1)  # a strategy that leads on there
    lead = next(i for i, s in enumerate(said) if "more positions lead on" in s)
    assert lead < next(i for i, s in enumerate(said) if "round 1:" in s)  # before the first solve
    assert cert.trapped == int(trapped1.sum())
    assert np.array_equal(cert.widened, far[0])  # what the next pass widens from its start
    assert_holds_reference(o, game, cert)
    # the next pass ranks those states with the wider slack before its first pair: the fewer
    # positions where play can last for ever from the start, and nothing more to widen
    monkeypatch.setattr(bounds, "_closed", real_closed)
    calls.clear()
    said.clear()
    again = bounds._certify_once(game, values, tol, 1, False, said.append, bounds._TIGHTEN_SWEEPS, None,
                                 bounds._LOOSEN_SWEEPS, "strategy", bounds._ROUNDS, widen=cert.widened)
    assert len(calls) == 1 and int(calls[0][0][1].sum()) == cert.trapped == again.trapped
    assert not any("more positions lead on" in s for s in said)
    assert np.array_equal(again.widened, cert.widened)
    assert_holds_reference(o, game, again)


def test_where_the_pair_does_not_solve_the_proof_tries_the_strategy_that_leads_on_every_roll(
        tmp_path, monkeypatch) -> None:
    """A pair whose equations do not solve (stagnating play) gets one more try, with the older
    strategy that leads on with every roll that can, and the proof goes on from that pair."""
    from gamesolver.solver.stochastic import bounds

    o = mini_options(tmp_path, 4)
    game = kernel(o)
    values = np.asarray(solve(o, tmp_path / "t", tolerance=1e-3, threads=1)["value"])
    real = bounds.strategy_pair
    policies = []

    def flaky(game, values, policy, *args, **kw):
        policies.append(policy.copy())
        pair = real(game, values, policy, *args, **kw)
        if len(policies) == 1:
            return dataclasses.replace(pair, settled=False, why="stagnated (made up by the test)")
        return pair

    monkeypatch.setattr(bounds, "strategy_pair", flaky)
    cert = certify(game, values, 1e-3, threads=1, refine=0)
    assert len(policies) == 2 and cert.method == "strategy" and cert.gap < 1e-2
    RP, RQ, _ = bounds._ranks(game, values, 1e-3, 1, None, False, "", {})
    every = np.empty_like(policies[0])
    kernels.attractor_policy(game, values, 1e-3, RP, RQ, every, every=True)
    assert np.array_equal(policies[1], every) and not np.array_equal(policies[0], every)
    assert_holds_reference(o, game, cert)


def test_where_the_fallback_strategy_widens_it_still_leads_on_with_every_roll(tmp_path, monkeypatch) -> None:
    """Where the first pair does not solve, the proof tries the strategy that leads on with every
    roll that can; where that one's pair then closes far rows (a spy says so, as in the test
    above), the widened strategy it goes on with leads on with every roll that can too."""
    from gamesolver.solver.stochastic import bounds

    o = mini_options(tmp_path, 4)
    game = kernel(o)
    n, tol = game.state_count, 1e-3
    values = np.asarray(solve(o, tmp_path / "t", tolerance=1e-3, threads=1)["value"])
    real_pair = bounds.strategy_pair
    policies: list[np.ndarray | None] = []
    closed, far = far_closing(values, tol, n, active=lambda: len(policies) >= 2)  # the fallback's pair only

    def flaky(game, values, policy, *args, **kw):
        policies.append(None)
        pair = real_pair(game, values, policy, *args, **kw)
        policies[-1] = policy.copy()  # as the pair left it
        if len(policies) == 1:
            return dataclasses.replace(pair, settled=False, why="stagnated (made up by the test)")
        return pair

    monkeypatch.setattr(bounds, "_closed", closed)
    widen_either_side(monkeypatch)
    monkeypatch.setattr(bounds, "strategy_pair", flaky)
    cert = certify(game, values, tol, threads=1, refine=0)
    assert len(policies) == 2 and far and far[0].size and np.array_equal(cert.widened, far[0])
    RP, RQ, _ = bounds._ranks(game, values, tol, 1, None, False, "", {})
    assert bounds._widen(game, values, tol, RP, RQ, far[0], 1, False, {})[1] > 0  # some lead on
    every, one = np.empty_like(policies[1]), np.empty_like(policies[1])
    kernels.attractor_policy(game, values, bounds._WIDER * tol, RP, RQ, every, every=True)
    kernels.attractor_policy(game, values, bounds._WIDER * tol, RP, RQ, one)
    assert np.array_equal(policies[1], every) and not np.array_equal(policies[1], one)
    assert_holds_reference(o, game, cert)


def test_check_record_keeps_the_proof_a_solve_would_have_kept(tmp_path) -> None:
    # 'check --bounds --record' proves a finished table and rewrites it with the proof: the same
    # arrays and figures as 'solve --proof' from the same values (one thread: the same values),
    # the stored graph mapped from a scratch folder that is gone afterwards
    import json

    from click.testing import CliRunner

    from gamesolver.solver.cli import cli
    from gamesolver.solver.tables.table import open_table

    o = mini_options(tmp_path, 4)
    common = ["--pieces", "4", "--board", o.board_file]
    solve = ["ur", "solve", *common, "--tolerance", "1e-3", "--threads", "1"]
    later, at_once = tmp_path / "later", tmp_path / "at-once"
    assert CliRunner().invoke(cli, [*solve, "--out", str(later), "--no-proof"]).exit_code == 0
    assert CliRunner().invoke(cli, [*solve, "--out", str(at_once), "--width", "1e-3"]).exit_code == 0
    before = open_table(later)
    assert "lower" not in before.arrays and "certified" not in before.meta
    res = CliRunner().invoke(cli, ["ur", "check", *common, "--table", str(later), "--bounds"])
    assert res.exit_code == 0 and "recorded" not in res.output
    assert "lower" not in open_table(later).arrays  # without --record nothing is written
    res = CliRunner().invoke(cli, ["ur", "check", *common, "--table", str(later), "--bounds", "--record",
                                   "--graph", "store", "--threads", "1", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["bounds"]["recorded"]["values"] == "centred"
    after, reference = open_table(later), open_table(at_once)
    for name in ("value", "lower", "upper", "tier_offsets"):
        assert np.array_equal(after[name], reference[name]), name
    assert np.array_equal(before["tier_offsets"], after["tier_offsets"])
    kept = after.meta["certified"]
    assert kept["proven_after_solving"] is True and kept["values"] == "centred"
    assert kept["bound"] == reference.meta["certified"]["bound"] and kept["gap"] == reference.meta["certified"]["gap"]
    assert after.meta["sweeps"] == before.meta["sweeps"]  # the solve's own figures stay
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no scratch graph left
    res = CliRunner().invoke(cli, ["ur", "analyze", "start", *common, "--table", str(later)])
    assert res.exit_code == 0 and "proven between" in res.output, res.output
    res = CliRunner().invoke(cli, ["ur", "check", *common, "--table", str(later), "--record"])
    assert res.exit_code == 2 and "--record keeps a proof in the table; add --bounds" in res.output
