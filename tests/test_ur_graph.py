"""The stored graph of Ur: its layout against the slow reference move generator, and its sweep and
endless-check kernels against the kernel's own (which regenerate every action), value for value."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ur import kernel
from gamesolver.solver.stochastic import _engine as kernels
from gamesolver.solver.stochastic.outcomes import (
    StoredGraph, build_graph, build_mapped_graph, estimate_bytes, load_graph, want_graph,
)
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import solve
from gamesolver.solver.cli import cli
from gamesolver.solver.errors import InputError
from tests.test_ur_reference import mini_options, ref_outcomes


@pytest.fixture(scope="module")
def boards(tmp_path_factory):
    """(options, kernel, stored graph) for the small test board (4 pieces, where wins happen), its
    role-swapped variant, and the real board with 2 pieces."""
    d = tmp_path_factory.mktemp("graph")
    out = {}
    for name, opts in [("mini4", mini_options(d, 4)), ("swapped4", mini_options(d, 4, swapped=True)),
                       ("real2", UrOptions(pieces=2))]:
        K = kernel(opts)
        out[name] = (opts, K, build_graph(K, threads=2))
    return out


def ref_codes(opts, K, rank: int, roll: int) -> set[int]:
    """Policy codes of every outcome of ``roll`` from state ``rank``, from the slow reference."""
    b = opts.board
    ms, ts = K.unrank([rank])
    mine = frozenset(i for i in range(b.size) if int(ms[0]) >> i & 1)
    theirs = frozenset(i for i in range(b.size) if int(ts[0]) >> i & 1)
    forts = frozenset(i for i in range(b.size) if "fort" in b.roles[i])
    if forts <= mine or forts <= theirs:
        return {-(2**31) if forts <= mine else -(2**31 - 1)}  # WIN / LOSS
    out = set()
    for m2, t2, flag in ref_outcomes(opts, mine, theirs, opts.dice.rolls[roll]):
        if flag == 2:
            out.add(-(2**31))
        elif flag == 1:
            out.add(int(K.rank([b.mask(m2)], [b.mask(t2)])[0]))
        else:  # the turn passes (flag 3, the pass itself, too)
            out.add(-int(K.rank([b.mask(t2)], [b.mask(m2)])[0]) - 1)
    return out


@settings(max_examples=40, deadline=None)
@given(which=st.sampled_from(["mini4", "swapped4", "real2"]), pick=st.integers(0, 2**62))
def test_stored_outcomes_are_the_reference_outcomes(boards, which: str, pick: int) -> None:
    opts, K, g = boards[which]
    rank = pick % K.state_count
    for roll in range(K.roll_count):
        assert g.roll_codes(rank, roll) == ref_codes(opts, K, rank, roll), (rank, roll)


def test_hand_worked_position_groups(boards) -> None:
    """X on Ishtar, O on the entry and a fort (the recapture cycle of docs/design/proof.md): the entry spawn
    captures O's piece and passes the turn; the move groups hold no outcome twice."""
    opts, K, g = boards["mini4"]
    b = opts.board
    mine, theirs = frozenset({b.index("B2")}), frozenset({b.index("B1"), b.index("C3")})
    rank = int(K.rank([b.mask(mine)], [b.mask(theirs)])[0])
    groups = g.groups(rank)
    entry = b.index("B1")
    after = int(K.rank([b.mask(theirs - {entry})], [b.mask(mine | {entry})])[0])
    assert groups[0] == [-after - 1]
    moves = [c for grp in groups[:4] for c in grp]  # the spawn groups may share tiles between rolls
    assert len(moves) == len(set(moves))
    for roll in range(K.roll_count):
        assert g.roll_codes(rank, roll) == ref_codes(opts, K, rank, roll)


@settings(max_examples=10, deadline=None)
@given(which=st.sampled_from(["mini4", "swapped4"]), seed=st.integers(0, 2**32 - 1),
       discount=st.sampled_from([1.0, 0.999, 0.9]))
def test_stored_sweeps_equal_kernel_sweeps(boards, which: str, seed: int, discount: float) -> None:
    """From random values, sweep for sweep: the same values bit for bit (one thread, so the same
    Gauss-Seidel order) and the same largest change."""
    _, K, g = boards[which]
    rng = np.random.default_rng(seed)
    a = (rng.random(K.state_count) * 2 - 1).astype(np.float32)
    b = a.copy()
    pa = np.zeros((K.state_count, K.roll_count), dtype=np.int32)
    pb = pa.copy()
    for _ in range(4):
        assert K.sweep(a, policy=pa, discount=discount) == g.sweep(b, policy=pb, discount=discount)
        assert np.array_equal(a, b)
    assert K.sweep(a.copy(), write=False) == g.sweep(b.copy(), write=False)
    # ties may pick other outcomes than the kernel's; every recorded outcome is one the roll offers
    for s in rng.integers(0, K.state_count, 300).tolist():
        for r in range(K.roll_count):
            assert int(pb[s, r]) in g.roll_codes(s, r)


@settings(max_examples=15, deadline=None)
@given(which=st.sampled_from(["mini4", "swapped4", "real2"]), seed=st.integers(0, 2**32 - 1),
       share=st.floats(0.0, 1.0), discount=st.sampled_from([1.0, 0.99]))
def test_a_subset_sweep_backs_up_those_states_alone_in_order(boards, which: str, seed: int, share: float,
                                                             discount: float) -> None:
    """``sweep(subset=...)``, regenerating or stored, on one thread, is the one-state sweeps of the listed ranks
    one after the other (each from the values as they stand) and touches nothing else; its
    largest change and the policy rows it records are theirs."""
    _, K, g = boards[which]
    n = K.state_count
    rng = np.random.default_rng(seed)
    subset = np.flatnonzero(rng.random(n) < share).astype(np.int64)
    before = (rng.random(n) * 2 - 1).astype(np.float32)
    want, pw = before.copy(), np.zeros((n, K.roll_count), dtype=np.int32)
    worst = 0.0
    for s in subset.tolist():  # the plain reading: one state at a time
        worst = max(worst, K.sweep(want, start=s, stop=s + 1, policy=pw, discount=discount))
    for engine in (K, g):
        got, pg = before.copy(), np.zeros_like(pw)
        assert engine.sweep(got, threads=1, subset=subset, policy=pg, discount=discount) == worst
        assert np.array_equal(got, want)
        if engine is K:  # the stored graph may record another of two tied outcomes
            assert np.array_equal(pg, pw)
    with pytest.raises(ValueError, match="increasing ranks"):
        K.sweep(before, subset=np.array([1, 1], dtype=np.int64))


@settings(max_examples=15, deadline=None)
@given(which=st.sampled_from(["mini4", "swapped4", "real2"]), seed=st.integers(0, 2**32 - 1),
       ahead=st.sampled_from([1, 4, 33, 10**9]), cut=st.floats(0.0, 1.0), rows=st.sampled_from([1, 5, 32, 10**9]))
def test_prefetching_changes_no_value(boards, which: str, seed: int, ahead: int, cut: float, rows: int) -> None:
    """The stored-graph sweep and the policy sweep ask the cache for values some states ahead: a
    hint that must leave every value, recorded policy and change as without it, over a whole sweep
    and over a rank range that stops anywhere (the prefetch never reads past the range's codes);
    and over a hot set (a subset, marking what changed), with its policy rows asked for ``rows``
    further on too."""
    _, K, g = boards[which]
    n = K.state_count
    rng = np.random.default_rng(seed)
    a = (rng.random(n) * 2 - 1).astype(np.float32)
    b = a.copy()
    pa = np.zeros((n, K.roll_count), dtype=np.int32)
    pb = pa.copy()
    stop = max(1, int(cut * n))
    for kwargs in ({}, {"start": stop // 3, "stop": stop}):
        assert kernels.graph_sweep(K, g.offsets, g.counts, g.codes, a, policy=pa, discount=0.999, ahead=0,
                                   **kwargs) == \
            kernels.graph_sweep(K, g.offsets, g.counts, g.codes, b, policy=pb, discount=0.999, ahead=ahead, **kwargs)
        assert np.array_equal(a, b) and np.array_equal(pa, pb)
        assert kernels.evaluate(K, pa, a, discount=0.999, ahead=0, **kwargs) == \
            kernels.evaluate(K, pb, b, discount=0.999, ahead=ahead, **kwargs)
        assert np.array_equal(a, b)
    subset = np.flatnonzero(rng.random(n) < rng.choice([0.02, 0.3, 1.0])).astype(np.int64)[:stop]
    ma, mb = np.zeros(n, dtype=np.uint8), np.zeros(n, dtype=np.uint8)
    assert kernels.evaluate(K, pa, a, discount=0.999, ahead=0, rows=0, subset=subset, mark=ma, above=1e-3) == \
        kernels.evaluate(K, pb, b, discount=0.999, ahead=ahead, rows=rows, subset=subset, mark=mb, above=1e-3)
    assert np.array_equal(a, b) and np.array_equal(ma, mb)
    with pytest.raises(ValueError, match="negative"):
        kernels.graph_sweep(K, g.offsets, g.counts, g.codes, a, ahead=-1)
    with pytest.raises(ValueError, match="negative"):
        kernels.evaluate(K, pa, a, ahead=-1)
    with pytest.raises(ValueError, match="negative"):
        kernels.evaluate(K, pa, a, rows=-1, subset=subset)


@settings(max_examples=10, deadline=None)
@given(which=st.sampled_from(["mini4", "swapped4", "real2"]), seed=st.integers(0, 2**32 - 1),
       eps=st.sampled_from([1e-6, 0.05, 0.3]), ahead=st.sampled_from([0, 1, 4, 10**9]))
def test_stored_endless_pass_equals_kernel_pass(boards, which: str, seed: int, eps: float, ahead: int) -> None:
    # ``ahead``: the stored pass's prefetch distance, which must change nothing
    _, K, g = boards[which]
    rng = np.random.default_rng(seed)
    V = (rng.random(K.state_count) * 2 - 1).astype(np.float32)
    V[rng.random(K.state_count) < 0.3] = 0.0
    ga = np.zeros(K.state_count, dtype=np.uint8)
    gb = ga.copy()
    for first in (True, False, False, False):
        assert K.endless_pass(V, ga, eps, first=first) == \
            kernels.graph_endless_pass(K, g.offsets, g.counts, g.codes, V, gb, eps, first=first, ahead=ahead)
        assert np.array_equal(ga, gb)
    with pytest.raises(ValueError, match="negative"):
        kernels.graph_endless_pass(K, g.offsets, g.counts, g.codes, V, gb, eps, ahead=-1)


def test_solve_gives_the_same_table_with_and_without_the_graph(tmp_path) -> None:
    opts = mini_options(tmp_path, 4, swapped=True)
    stored = solve(opts, tmp_path / "stored", tolerance=3e-7, threads=1, graph="store", method="sweeps")
    regen = solve(opts, tmp_path / "regen", tolerance=3e-7, threads=1, graph="regenerate", method="sweeps")
    assert stored.meta["graph"] == "stored" and regen.meta["graph"] == "regenerated"
    assert 0 < stored.meta["graph_build_seconds"] <= stored.meta["solve_seconds_this_run"]
    assert regen.meta["graph_build_seconds"] == 0
    assert stored.meta["sweeps"] == regen.meta["sweeps"]
    assert np.array_equal(stored["value"], regen["value"])


def test_estimate_and_choices(boards) -> None:
    _, K, g = boards["real2"]
    est = estimate_bytes(K)
    assert abs(est - g.nbytes) < 0.05 * g.nbytes
    assert want_graph(K, "regenerate") is False
    assert want_graph(K, "auto") is True
    with pytest.raises(InputError, match="unknown graph choice"):
        want_graph(K, "sometimes")
    assert estimate_bytes(kernel(UrOptions(pieces=7, mirror=False))) > 300 * 2**30  # 1.28 billion states: regenerate
    assert isinstance(g, StoredGraph)


def test_a_graph_that_does_not_fit_is_refused_before_anything_is_written(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("gamesolver.solver.stochastic.outcomes.memory_bytes", lambda: 1 << 20)
    K = kernel(UrOptions(pieces=2))
    assert want_graph(K, "auto") is False
    with pytest.raises(InputError, match="stored graph needs"):
        want_graph(K, "store")
    out = tmp_path / "t"
    result = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "2", "--graph", "store", "--out", str(out)])
    assert result.exit_code == 2 and "--graph regenerate" in result.output and "Traceback" not in result.output
    assert not out.exists()


def test_a_graph_built_into_a_file_is_mapped_and_equals_the_one_in_memory(boards, tmp_path) -> None:
    _, K, g = boards["mini4"]
    key = {"what": "mini4"}
    mapped = build_mapped_graph(K, tmp_path, key, threads=2)
    assert isinstance(mapped.codes, np.memmap)  # the page cache holds it, not the process
    for name in ("offsets", "counts", "codes"):
        assert np.array_equal(getattr(mapped, name), getattr(g, name))
    assert not (tmp_path / "graph.tmp").exists()
    again = load_graph(K, tmp_path, key)  # what a resumed run maps
    assert again is not None and np.array_equal(again.codes, g.codes)
    assert load_graph(K, tmp_path, {"what": "else"}) is None


@settings(max_examples=15, deadline=None)
@given(which=st.sampled_from(["mini4", "real2"]), cut=st.floats(0, 1), width=st.floats(0, 1),
       blocks=st.integers(1, 9), room=st.integers(1, 80), threads=st.sampled_from([1, 2, 3]))
def test_a_one_pass_block_holds_what_the_two_pass_build_places_there(boards, which: str, cut: float, width: float,
                                                                     blocks: int, room: int, threads: int) -> None:
    """``graph_build_blocks`` on any rank range, split into any number of blocks with any room a
    block: each block that fits holds exactly the codes the two-pass build stored for its states,
    and the counts agree; a block without room says so (-1) and nothing else is wrong."""
    _, K, g = boards[which]
    n = K.state_count
    start = int(cut * n)
    stop = start + int(width * (n - start))
    counts = np.zeros_like(g.counts)
    used = np.zeros(blocks, dtype=np.int64)
    buf = np.full(blocks * room, -7, dtype=np.int32)
    largest = kernels.graph_build_blocks(K, counts, buf, used, threads=threads, start=start, stop=stop)
    assert largest <= int(g.counts.max())
    m = stop - start
    for b in range(blocks):
        lo, hi = start + m * b // blocks, start + m * (b + 1) // blocks
        want = g.codes[g.offsets[lo]:g.offsets[hi]]
        if want.size > room:
            assert used[b] == -1
            continue
        assert used[b] == want.size
        assert np.array_equal(buf[b * room:b * room + want.size], want)
        assert np.array_equal(counts[lo:hi], g.counts[lo:hi])


@settings(max_examples=15, deadline=None)
@given(which=st.sampled_from(["mini4", "real2"]), cut=st.floats(0, 1), width=st.floats(0, 1),
       chunk=st.sampled_from([7, 97, 1 << 20]))
def test_a_range_graph_holds_that_ranges_rows_alone(boards, which: str, cut: float, width: float,
                                                   chunk: int) -> None:
    """A graph built over a rank range (a tier's) in chunks of any size: inside the range each state
    holds the whole graph's codes and counts, outside it none, and the offsets run on unbroken."""
    from gamesolver.solver.stochastic import outcomes
    _, K, g = boards[which]
    n = K.state_count
    start = int(cut * n)
    stop = start + int(width * (n - start))
    saved, outcomes._CHUNK = outcomes._CHUNK, chunk
    try:
        r = build_graph(K, threads=2, start=start, stop=stop)
    finally:
        outcomes._CHUNK = saved
    assert np.array_equal(r.counts[start:stop], g.counts[start:stop])
    assert not r.counts[:start].any() and not r.counts[stop:].any()
    assert np.array_equal(np.diff(r.offsets), np.where((np.arange(n) >= start) & (np.arange(n) < stop),
                                                       np.diff(g.offsets), 0))
    assert np.array_equal(r.codes[:r.offsets[-1]], g.codes[g.offsets[start]:g.offsets[stop]])
    with pytest.raises(ValueError, match="holds every state"):
        build_graph(K, folder=Path("unused"), start=1)


def test_the_one_pass_build_refuses_bad_arguments(boards) -> None:
    _, K, g = boards["mini4"]
    counts = np.zeros_like(g.counts)
    with pytest.raises(ValueError, match="outside the state space"):
        kernels.graph_build_blocks(K, counts, np.zeros(8, np.int32), np.zeros(2, np.int64), start=5, stop=4)
    with pytest.raises(ValueError, match="at least one block and a code a block"):
        kernels.graph_build_blocks(K, counts, np.zeros(1, np.int32), np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="counts do not fit"):
        kernels.graph_build_blocks(K, counts[1:], np.zeros(8, np.int32), np.zeros(2, np.int64))


def test_a_file_built_in_many_small_chunks_that_overflow_equals_the_one_in_memory(boards, tmp_path,
                                                                                   monkeypatch) -> None:
    """The one-pass build with chunks far smaller than a board and a buffer too small at first
    (every chunk retries with a larger one) writes the same graph as the two passes in memory."""
    from gamesolver.solver.stochastic import outcomes
    monkeypatch.setattr(outcomes, "_CHUNK", 97)
    monkeypatch.setattr(outcomes, "_CODES_GUESS", 1)
    for name in ("mini4", "real2"):
        _, K, g = boards[name]
        (tmp_path / name).mkdir()
        mapped = build_mapped_graph(K, tmp_path / name, {"what": name}, threads=2)
        for array in ("offsets", "counts", "codes"):
            assert np.array_equal(getattr(mapped, array), getattr(g, array)), (name, array)


def test_a_build_stopped_half_way_leaves_no_folder(boards, tmp_path, monkeypatch) -> None:
    """A state with more than 255 outcomes in a group, found only part of the way through the
    one pass, stops the build with the one-line error, and the half-written folder goes."""
    from gamesolver.solver.stochastic import outcomes
    _, K, g = boards["mini4"]
    real = kernels.graph_build_blocks
    calls = []

    def late_overflow(*args, **kw):
        calls.append(1)
        out = real(*args, **kw)
        return 300 if len(calls) == 3 else out
    monkeypatch.setattr(outcomes, "_CHUNK", 97)
    monkeypatch.setattr(outcomes.kernels, "graph_build_blocks", late_overflow)
    with pytest.raises(InputError, match="300 outcomes in one group"):
        build_mapped_graph(K, tmp_path, {"what": "mini4"}, threads=2)
    assert len(calls) == 3 and list(tmp_path.iterdir()) == []


def test_store_may_use_most_of_the_memory_auto_only_half(monkeypatch) -> None:
    K = kernel(UrOptions(pieces=2))
    need = estimate_bytes(K)
    monkeypatch.setattr("gamesolver.solver.stochastic.outcomes.memory_bytes", lambda: int(need * 1.5))
    assert want_graph(K, "auto") is False and want_graph(K, "store") is True
    monkeypatch.setattr("gamesolver.solver.stochastic.outcomes.memory_bytes", lambda: int(need * 1.1))
    with pytest.raises(InputError, match="more than 85% of this machine's"):
        want_graph(K, "store")


def test_kernel_rejects_a_graph_of_another_size(boards) -> None:
    _, K, _ = boards["mini4"]
    _, _, other = boards["swapped4"]
    _, _, small = boards["real2"]
    V = np.zeros(K.state_count, dtype=np.float32)
    with pytest.raises(ValueError, match="does not fit"):
        kernels.graph_sweep(K, small.offsets, small.counts, small.codes, V)
    assert kernels.graph_sweep(K, other.offsets, other.counts, other.codes, V) >= 0.0  # same size: accepted
    for kernel_call in (lambda: kernels.graph_sweep(K, other.offsets, other.counts, other.codes, V,
                                                    stop=K.state_count + 1),
                        lambda: K.sweep(V, start=5, stop=4),
                        lambda: kernels.graph_build(K, other.offsets, other.counts, other.codes, start=-1)):
        with pytest.raises(ValueError, match="outside the state space"):
            kernel_call()


def test_cli_graph_option(tmp_path) -> None:
    runner = CliRunner()
    bad = runner.invoke(cli, ["ur", "solve", "--pieces", "1", "--graph", "sometimes", "--out", str(tmp_path / "t")])
    assert bad.exit_code == 2 and "sometimes" in bad.output and "Traceback" not in bad.output
    ok = runner.invoke(cli, ["ur", "solve", "--pieces", "1", "--graph", "regenerate", "--out", str(tmp_path / "t")])
    assert ok.exit_code == 0, ok.output
    check = runner.invoke(cli, ["ur", "check", "--pieces", "1", "--graph", "store", "--table", str(tmp_path / "t")])
    assert check.exit_code == 0 and "passed" in check.output


def _picked(V: np.ndarray, pol: np.ndarray, discount: float) -> np.ndarray:
    """The value of each recorded outcome code for the side that chose it (as the engine counts it)."""
    c = pol.astype(np.int64)
    same = np.where(c >= 0, c, 0)
    other = np.where(c < 0, -c - 1, 0).clip(0, V.shape[0] - 1)
    out = np.where(c >= 0, np.float32(discount) * V[same], -(np.float32(discount) * V[other]))
    out = np.where(c == kernels.WIN, 1.0, out)
    out = np.where(c == kernels.LOSS, -1.0, out)
    return np.where(c == kernels.NOCODE, 0.0, out)


@settings(max_examples=10, deadline=None)
@given(which=st.sampled_from(["mini4", "swapped4", "real2"]), seed=st.integers(0, 2**32 - 1),
       discount=st.sampled_from([1.0, 0.999]))
def test_stored_policy_rows_pick_outcomes_of_the_same_value(boards, which: str, seed: int, discount: float) -> None:
    """Where two outcomes of a group tie, the stored graph (a group's codes sorted) may record the
    other one: a sweep that writes nothing records every row against the same values from either
    source, and the rows pick outcomes of equal value (the codes may differ only there)."""
    _, K, g = boards[which]
    n, R = K.state_count, K.roll_count
    V0 = (np.random.default_rng(seed).random(n) * 2 - 1).astype(np.float32)
    pa, pb = np.zeros((n, R), np.int32), np.zeros((n, R), np.int32)
    assert kernels.sweep(K, V0.copy(), policy=pa, write=False, discount=discount) == \
        kernels.graph_sweep(K, g.offsets, g.counts, g.codes, V0.copy(), policy=pb, write=False, discount=discount)
    assert np.array_equal(_picked(V0, pa, discount), _picked(V0, pb, discount))
    assert (pa == pb).mean() > 0.5  # the same codes nearly everywhere: the comparison reads real rows


def _stored(g) -> dict:
    return {"offsets": g.offsets, "counts": g.counts, "codes": g.codes}


@settings(max_examples=12, deadline=None)
@given(which=st.sampled_from(["mini4", "swapped4", "real2"]), seed=st.integers(0, 2**32 - 1),
       backwards=st.booleans(), cut=st.floats(0.0, 1.0), discount=st.sampled_from([1.0, 0.999, 0.9]))
def test_each_kernel_reads_either_source_alike(boards, which: str, seed: int, backwards: bool, cut: float,
                                               discount: float) -> None:
    """Each kernel is one loop over an outcome source: the generator or a stored graph. Given the
    graph's arrays (``offsets``, ``counts``, ``codes``) it must give the values, policy rows, lead
    bytes, stamps, counts and marks it gives generating, in what only the one loop offers over a
    graph too: a backwards sweep of a rank range, a sweep that skips what cannot change, an
    endless pass over a worker's rank range, and a backwards sweep of the bounds."""
    _, K, g = boards[which]
    n, R = K.state_count, K.roll_count
    rng = np.random.default_rng(seed)
    V0 = (rng.random(n) * 2 - 1).astype(np.float32)
    lo, hi = sorted(int(x) for x in rng.integers(0, n + 1, 2))
    noise = rng.uniform(-cut * 1e-3, cut * 1e-3, n).astype(np.float32)
    runs = []
    for source in ({}, _stored(g)):
        V, pol = V0.copy(), np.zeros((n, R), np.int32)
        change = kernels.sweep(K, V, policy=pol, start=lo, stop=hi, discount=discount, backwards=backwards,
                               **source)
        lead, stamp = np.zeros(n, np.uint8), np.zeros(n, np.uint8)
        recorded = kernels.sweep(K, V, policy=pol, discount=discount, lead=lead, stamp=stamp,
                                 bounds=np.full(256, np.inf), now=0, **source)
        bounds = np.full(256, np.inf)
        bounds[0] = recorded
        work = np.zeros(2, np.int64)
        moved = (V + noise).clip(-1, 1)
        skipped = kernels.sweep(K, moved, policy=pol, discount=discount, lead=lead, stamp=stamp, bounds=bounds,
                                now=1, work=work, backwards=backwards, **source)
        good = np.zeros(n, np.uint8)
        added = [kernels.endless_pass(K, V, good, 0.05, first=first, start=lo, stop=hi, **source)
                 for first in (True, False)]
        L, U = np.full(n, -1.0, np.float32), np.full(n, 1.0, np.float32)
        mark = np.zeros(n, np.uint8)
        gap = kernels.bounds_sweep(K, L, U, start=lo, stop=hi, backwards=backwards, mark=mark, **source)
        # work[1], the codes read, differs: the generator writes a code once for each way to reach it,
        # the graph keeps each group's distinct codes
        runs.append((change, V, recorded, skipped, moved, lead, stamp, int(work[0]), added, good, gap, L, U, mark))
    names = ("change", "V", "recorded", "skipped", "moved", "lead", "stamp", "backed up", "added", "good", "gap", "L",
             "U", "mark")
    for name, a, b in zip(names, *runs):
        assert (np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b), name
    assert runs[0][7] <= n  # states the skipping sweep backed up from their outcomes
    # the policy rows: where two outcomes of a group tie, either may be recorded (the stored graph
    # keeps a group's codes sorted), so a sweep that writes nothing records each row against the same
    # values from either source, and the rows must pick outcomes of equal value
    rows = []
    for source in ({}, _stored(g)):
        pol = np.zeros((n, R), np.int32)
        kernels.sweep(K, V0.copy(), policy=pol, write=False, discount=discount, **source)
        rows.append(_picked(V0, pol, discount))
    assert np.array_equal(rows[0], rows[1])


def test_a_stored_graph_is_given_whole(boards) -> None:
    _, K, g = boards["real2"]
    V = np.zeros(K.state_count, np.float32)
    with pytest.raises(ValueError, match="offsets, counts and codes, all three"):
        kernels.sweep(K, V, offsets=g.offsets, codes=g.codes)
    with pytest.raises(ValueError, match="negative"):
        kernels.bounds_sweep(K, V.copy(), V.copy(), ahead=-1)
