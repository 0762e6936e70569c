"""The GPU backend (``solver/backends/gpu/driver.py``, ``solver/backends/gpu/cuda_kernels.py``, ``games/ur/gpu_fort.py``) where no GPU
is: the device generator compiled for the CPU (numba.njit) against ``FortGame``; the engine's kernels
on numba's CPU JIT against the Cython engine, bit for bit; the CUDA kernels themselves in numba's
CUDA simulator (a subprocess, since NUMBA_ENABLE_CUDASIM must be set before numba.cuda is imported)
and compiled to PTX for an H100 without one; the CLI's refusals. The same checks on a real GPU run
only where numba.cuda sees one."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from gamesolver.games.ur import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.stochastic import _engine as cy
from gamesolver.solver.cli import cli
from gamesolver.solver.stochastic.iteration import solve_values
from gamesolver.solver.stochastic import walk
from tests.test_ur_reference import mini_options

from gamesolver.solver.backends.gpu.driver import _numpy_for_numba

_numpy_for_numba()
try:
    import numba  # noqa: F401
    import numba_cuda  # noqa: F401
except ImportError:
    numba = None

needs_numba = pytest.mark.skipif(numba is None, reason='numba-cuda is not installed (the optional extra: '
                                                       'pip install "gamesolver[gpu]")')


def _has_gpu() -> bool:
    if numba is None or os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return False
    from numba import cuda

    return bool(cuda.is_available())


needs_gpu = pytest.mark.skipif(not _has_gpu(), reason="no CUDA GPU (numba.cuda.is_available() is False)")
HERE = Path(__file__).resolve().parent
SIM_SCRIPT = HERE / "gpu_sim_check.py"


def spec_of(options: UrOptions):
    from gamesolver.games.ur.gpu_fort import device_game

    return device_game(kernel(options))


def cpu_generate(spec):
    from gamesolver.solver.backends.gpu.driver import kernels

    return kernels(spec, "cpu")["generate"]


def groups_of(gen, spec, rank: int) -> list[list[int]]:
    codes = np.empty(spec.max_outcomes, dtype=np.int32)
    counts = np.zeros(spec.ngroups, dtype=np.int64)
    n = gen(spec.tables, rank, codes, counts, np.zeros(spec.scratch_size, dtype=np.int64))
    assert 0 < n <= spec.max_outcomes
    out, at = [], 0
    for c in counts.tolist():
        out.append(codes[at:at + c].tolist())
        at += c
    assert at == n
    return out


# The real board with the mirror for K = 3, 4 (its index takes seconds to build); K = 5..7 number
# every placement (mirror=False), since K = 7's index alone takes minutes on this machine.
BOARDS = [("real", 3, True), ("real", 4, True), ("real", 5, False), ("real", 6, False), ("real", 7, False),
          ("mini", 4, True), ("mini", 3, True)]


@pytest.fixture(scope="module")
def games(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("boards")
    out = {}
    for board, k, mirror in BOARDS:
        o = mini_options(tmp, k) if board == "mini" else UrOptions(pieces=k, mirror=mirror)
        out[(board, k, mirror)] = (kernel(o), spec_of(o))
    return out


@needs_numba
@pytest.mark.parametrize("which", BOARDS, ids=[f"{b}-k{k}{'-mirror' if m else ''}" for b, k, m in BOARDS])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_device_generator_writes_fortgames_codes_in_its_groups(games, which, data) -> None:
    game, spec = games[which]
    gen = cpu_generate(spec)
    # the top tiers hold most states and the most outcomes; draw across the whole space and near its end
    rank = data.draw(st.one_of(st.integers(0, spec.total - 1),
                               st.integers(max(0, spec.total - 5000), spec.total - 1)), label="rank")
    got = groups_of(gen, spec, rank)
    # the same codes in the same order (both generators walk the moves the same way), so every
    # roll, which reads the union of its groups or else the pass, sees the same outcomes
    assert got == game.outcome_groups(rank)
    for roll in range(game.roll_count):
        union = set().union(*(got[g] for g in game.roll_group_list(roll))) or set(got[-1])
        assert union == game.roll_outcomes(rank, roll)


@needs_numba
@pytest.mark.parametrize("which", [("real", 4, True), ("mini", 4, True), ("real", 7, False)])
def test_ranks_and_unranks_are_fortgames(games, which) -> None:
    game, spec = games[which]
    gen = cpu_generate(spec)
    ranks = np.random.default_rng(7).integers(0, spec.total, size=3000)
    ranks[:2] = (0, spec.total - 1)
    mine, theirs = game.unrank(ranks)
    for r, m, o in zip(ranks.tolist(), mine.tolist(), theirs.tolist()):
        assert gen.unrank1(spec.tables, r) == (m, o)
        assert gen.rank1(spec.tables, m, o) == r
        if spec.tables[0][3]:  # a board with the mirror (the 8-tile board has none): its image has the same number
            assert gen.rank1(spec.tables, flip(spec, m), flip(spec, o)) == r


def flip(spec, mask: int) -> int:
    """A tile mask's mirror image, from the exported byte tables."""
    fb = spec.tables[10]
    return int(fb[0, mask & 255] | fb[1, (mask >> 8) & 255] | fb[2, (mask >> 16) & 255] | fb[3, (mask >> 24) & 255])


def test_the_bound_on_outcomes_holds_where_states_write_the_most(games) -> None:
    for (board, k, _), (game, spec) in games.items():
        top = max(sum(len(g) for g in game.outcome_groups(r)) for r in range(max(0, spec.total - 3000), spec.total))
        assert top <= spec.max_outcomes, (board, k)


def marks_alike(one, other, V: np.ndarray) -> None:
    """Endless passes of two engines (``endless_pass(values, marks, eps, first=)``, one thread in
    rank order), pass after pass to the end, from values with some states near 0 and most not:
    every pass must mark the same states in both, and the end must mark some states, not all."""
    n = V.shape[0]
    half = np.where(np.abs(V) < 0.5, V * 0.01, V).astype(np.float32)
    ga, gb = np.zeros(n, dtype=np.uint8), np.zeros(n, dtype=np.uint8)
    first = True
    while True:
        xa = one(half, ga, 1e-3, first=first)
        xb = other(half, gb, 1e-3, first=first)
        assert xa == xb and np.array_equal(ga, gb)
        first = False
        if xa == 0:
            break
    assert 0 < ga.sum() < n


def _cpu_engine(spec, **kw):
    from gamesolver.solver.backends.gpu.driver import GpuEngine

    return GpuEngine(spec, target="cpu", **kw)


@needs_numba
def test_cpu_target_kernels_equal_the_cython_engine_bit_for_bit(tmp_path) -> None:
    # numba's CPU JIT runs the device kernels' logic in rank order on one thread: the Cython
    # engine's one-thread sweep, recorded policy, policy sweep and endless pass, exactly
    o = mini_options(tmp_path, 4)
    game, spec = kernel(o), spec_of(o)
    n, R = spec.total, spec.nrolls
    rng = np.random.default_rng(3)
    V = rng.uniform(-1, 1, n).astype(np.float32)
    eng = _cpu_engine(spec)
    for discount in (1.0, 0.99):
        a, b = V.copy(), V.copy()
        P = np.zeros((n, R), dtype=np.int32)
        ca = cy.sweep(game, a, threads=1, policy=P, discount=discount)
        cb = eng.sweep(b, policy=np.empty((0, R)), discount=discount)
        assert ca == cb and np.array_equal(a, b) and np.array_equal(eng.policy, P)
        assert ca > 0.1  # the sweep moved values: a test that can fail
        assert cy.evaluate(game, P, a, threads=1, discount=discount) == eng.evaluate(None, b, discount=discount)
        eng._sync_host(b)
        assert np.array_equal(a, b)
    # a hot set swept alone, marking what it changed; a subset backed up alone (the local repair)
    sub = np.flatnonzero(np.random.default_rng(4).random(n) < 0.1).astype(np.int64)
    ma, mb = np.zeros(n, dtype=np.uint8), np.zeros(n, dtype=np.uint8)
    ca = cy.evaluate(game, P, a, threads=1, discount=0.99, subset=sub, mark=ma, above=0.01)
    cb = eng.evaluate(None, b, discount=0.99, subset=sub, mark=mb, above=0.01)
    eng._sync_host(b)
    assert ca == cb and np.array_equal(a, b) and np.array_equal(ma, mb) and 0 < ma.sum() <= sub.size
    ca = cy.sweep(game, a, threads=1, subset=sub, discount=0.99)
    cb = eng.sweep(b, subset=sub, discount=0.99)
    assert ca == cb > 0 and np.array_equal(a, b)
    # the walk's hot set found by the engine itself (``hot_set``): the ranks its marking sweep of
    # every state changed by more than ``above``, increasing; not gathered past ``most``
    ha, hb, mh = V.copy(), V.copy(), np.zeros(n, dtype=np.uint8)
    ca = cy.evaluate(game, P, ha, threads=1, discount=0.99, mark=mh, above=0.01)
    cb, hot, size = eng.hot_set(None, hb, discount=0.99, above=0.01)
    eng._sync_host(hb)
    assert ca == cb and np.array_equal(ha, hb) and size == int(mh.sum()) > 0
    assert np.array_equal(hot.host(), np.flatnonzero(mh))
    assert eng.hot_set(None, V.copy(), discount=0.99, above=0.01, most=size - 1)[1:] == (None, size)
    marks_alike(lambda *x, **k: cy.endless_pass(game, *x, threads=1, **k), eng.endless_pass, V)


@needs_numba
def test_a_host_array_at_a_freed_arrays_address_is_not_the_one_the_device_mirrors(tmp_path) -> None:
    # the engine knows the host's values by their address: a new array given a freed one's address
    # must not pass for it (the device's newer values would be copied over the new array's)
    spec = spec_of(mini_options(tmp_path, 4))
    eng = _cpu_engine(spec)
    buf = bytearray(4 * spec.total)
    a = np.frombuffer(buf, dtype=np.float32)
    eng._values(a, upload=True)
    assert eng._mirrors(a) and eng._mirrors(a[:])  # the array itself, or a view of it
    del a
    b = np.frombuffer(buf, dtype=np.float32)  # the same address and shape, another array
    assert not eng._mirrors(b)


@needs_numba
@pytest.mark.parametrize("board", ["mini4", "real2"])
def test_cpu_target_solves_like_the_cpu_engine(tmp_path, monkeypatch, board) -> None:
    o = mini_options(tmp_path, 4) if board == "mini4" else UrOptions(pieces=2)
    game = kernel(o)
    # the regenerating CPU engine's rounds sweep their policy more (WALK_EVAL_MOST) and their hot
    # sets greedily (WALK_HOT_GREEDY), and a GPU's do not: without those both walk alike
    monkeypatch.setattr(walk, "WALK_EVAL_MOST", 0)
    monkeypatch.setattr(walk, "WALK_HOT_GREEDY", 0)
    # regenerating: the stored graph's sweeps give the same values, but its groups hold the codes
    # sorted, so where outcomes tie the greedy policy (and so the walk's policy sweeps) can differ
    one = solve_values(game, tmp_path / "cpu", o.header(), threads=1, graph="regenerate")
    with _cpu_engine(spec_of(o)) as eng:
        dev = solve_values(game, tmp_path / "gpu", o.header(), engine=eng)
    assert dev.meta["backend"] == "gpu" and dev.meta["endless_check"]["flagged"] == 0
    # the same walk, hot-set rounds included (the policy sweeps over the states that still change)
    for key in ("sweeps", "policy_sweeps", "hot_set_states"):
        assert dev.meta[key] == one.meta[key], key
    assert np.array_equal(dev.values, one.values)  # in rank order on one thread: the same arithmetic
    if board == "mini4":
        assert np.abs(one.values).max() > 0.1 and one.meta["hot_set_states"] > 0


@needs_numba
def test_gpu_engine_resumes_from_its_checkpoint(tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    game, spec = kernel(o), spec_of(o)
    with _cpu_engine(spec) as eng:
        with pytest.raises(RuntimeError, match="no convergence"):
            solve_values(game, tmp_path / "t", o.header(), engine=eng, max_sweeps=5)
    said: list[str] = []
    with _cpu_engine(spec) as eng:
        resumed = solve_values(game, tmp_path / "t", o.header(), engine=eng, log=said.append)
    assert any("resuming from the checkpoint after sweep 5" in s for s in said)
    assert resumed.meta["resumed_at_sweep"] == 5
    fresh = solve_values(game, tmp_path / "fresh", o.header(), threads=1)
    assert np.abs(resumed.values - fresh.values).max() < 1e-5


@needs_numba
def test_a_run_that_cannot_fit_on_the_device_is_refused_before_it_starts(tmp_path, monkeypatch) -> None:
    from gamesolver.solver.errors import InputError
    from gamesolver.solver.backends.gpu.driver import GpuEngine

    spec = spec_of(UrOptions(pieces=7, mirror=False))
    need = GpuEngine.bytes_needed(type("E", (), {"spec": spec, "n": spec.total, "R": spec.nrolls,
                                                 "resident_threads": lambda self: 1})(), True)
    # values, the walk's policy, its hot-set marks and hot set, the check's marks: 31 bytes a state
    assert need >= spec.total * 31
    monkeypatch.setattr(GpuEngine, "free_bytes", lambda self: need - 1)
    with pytest.raises(InputError, match=r"needs about .* GiB of device memory .* free on the GPU"):
        GpuEngine(spec, target="cpu")
    monkeypatch.setattr(GpuEngine, "free_bytes", lambda self: need - 1 - spec.total * 26)
    with pytest.raises(InputError):  # plain sweeps need no policy, but this is still too little
        GpuEngine(spec, target="cpu", policy=False)


@needs_numba
def test_only_the_small_grid_warning_is_silenced() -> None:
    # the engine launches small grids on purpose (hot sets, subsets, the repair's few states); on an
    # H200 numba warned at each one, a dozen lines in a six-piece solve's log: the engine silences
    # that warning alone, and other performance warnings still show
    import warnings

    from gamesolver.solver.backends.gpu.driver import quiet_small_grids

    try:
        from numba.cuda.core.errors import NumbaPerformanceWarning
    except ImportError:  # older numba-cuda: numba's own class
        from numba.core.errors import NumbaPerformanceWarning
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        quiet_small_grids()
        warnings.warn(NumbaPerformanceWarning("Grid size 20 will likely result in GPU under-utilization due to "
                                              "low occupancy."))
        warnings.warn(NumbaPerformanceWarning("Host array used in CUDA kernel will incur copy overhead"))
    # (numba wraps its messages in a terminal highlight)
    assert len(seen) == 1 and "Host array used in CUDA kernel" in str(seen[0].message)


@needs_numba
@settings(max_examples=60, deadline=None)
@given(start=st.integers(0, 50), size=st.integers(0, 3000), launch=st.integers(1, 700))
def test_a_subset_is_swept_in_ordered_launches_a_full_range_in_launch_sizes(start, size, launch) -> None:
    # a hot set fits one launch, whose threads would update it all at once (Jacobi, 109 full sweeps
    # of the four-piece walk against 76-87): it goes in at least SUBSET_PIECES launches in order
    from gamesolver.solver.backends.gpu.driver import SUBSET_PIECES, GpuEngine

    eng = GpuEngine.__new__(GpuEngine)
    eng.launch = launch
    stop = start + size
    assert eng._pieces(start, stop) == [(a, min(stop, a + launch)) for a in range(start, stop, launch)]
    pieces = eng._pieces(start, stop, indexed=True)
    # in order, end to end, over exactly the positions start..stop-1
    assert [p for piece in pieces for p in range(*piece)] == list(range(start, stop))
    assert len(pieces) == min(size, max(SUBSET_PIECES, -(-size // launch)))
    sizes = [b - a for a, b in pieces]
    assert all(0 < x <= launch for x in sizes) and (not sizes or max(sizes) - min(sizes) <= 1)


def _simulate(*args: str, timeout: int = 600) -> dict:
    return _simulate_each([args], timeout)[0]


def _simulate_each(runs: list[tuple[str, ...]], timeout: int = 600) -> list[dict]:
    """The simulator script once for each argument list, side by side (each is one Python thread
    simulating the device's, so two runs use a 2-core machine's both cores)."""
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    procs = [subprocess.Popen([sys.executable, str(SIM_SCRIPT), *args], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env, cwd=HERE.parent) for args in runs]
    out = []
    try:
        for p in procs:
            stdout, stderr = p.communicate(timeout=timeout)
            assert p.returncode == 0, stderr[-3000:]
            out.append(json.loads(stdout.strip().splitlines()[-1]))
    finally:
        for p in procs:
            p.kill()
    return out


@needs_numba
def test_cuda_kernels_in_the_simulator_equal_the_cython_engine() -> None:
    # the device kernels themselves (threads, blocks, shared-memory reductions, atomics, local
    # arrays), run as Python: a Jacobi sweep of a rank window against the Cython backup of the same
    # values, the recorded policy, a policy sweep, an endless pass and the generator on random states
    # two subprocesses of about equal length (each simulates a block's threads as Python threads, so
    # two use a 2-core machine's both cores): the test board's check, then the same on its two-piece
    # version with a stored graph built on the device (every state through the simulator twice);
    # the real board's check, then a whole hot set on the three-piece test board
    got = {k: v for part in _simulate_each([("kernels", "mini4", "stored:mini2"), ("kernels", "real2", "hot:mini3")])
           for k, v in part.items()}
    assert sorted(got) == ["hot:mini3", "mini4", "real2", "stored:mini2"]
    hot = got.pop("hot:mini3")
    for case in got.values():
        assert case["outcomes_equal"] and case["policy_equal"]
        assert case["jacobi_max_diff"] <= 1e-6 and case["change"] > 0.1
        assert case["change_diff"] <= 1e-6
        assert case["evaluate_max_diff"] <= 1e-6 and case["evaluate_change_diff"] <= 1e-6
        assert case["marks_equal"] and case["marked"] > 0
        # the walk's hot sets (a policy sweep of a list of ranks, marking changes) and the local
        # repair's subset sweep
        assert case["subset"] >= 10 and case["hot_marks_equal"] and case["hot_marked"] > 0
        assert case["hot_max_diff"] <= 1e-6 and case["hot_change_diff"] <= 1e-6
        assert case["subset_max_diff"] <= 1e-6 and case["subset_change_diff"] <= 1e-6 and case["subset_moved"] > 0
    # the stored graph, built by the device's kernels, and the sweeps that read it: the same
    # results as generating, bit for bit
    case = got["stored:mini2"]
    assert case["stored_graph"] and case["stored_groups_equal"] and case["stored_sweep_equal"]
    assert case["stored_marks_equal"] and case["stored_subset_equal"]
    assert "stored_graph" not in got["mini4"]
    # the walk's hot set gathered on the device (its kernels on random marks in chunks of 7 and 1024
    # ranks; a whole hot_set against the Cython engine's marks), then swept as a subset
    assert hot["device_hot_sets_equal"] == [True, True, True] and hot["device_hot_sweep_equal"]
    assert 0 < hot["device_hot_set_size"] < hot["states"]


@needs_numba
@pytest.mark.slow
@pytest.mark.parametrize("board", ["mini4", "real2"])
def test_whole_solve_in_the_simulator_equals_the_cpu_solve(board) -> None:
    # the first sweeps on numba's CPU target, the last two, their policy sweeps and the endless
    # check in the simulator from that checkpoint (all of it simulated took over an hour on mini4;
    # this 6-12 minutes)
    got = _simulate("solve", board, timeout=2400)
    assert got["resumed_at_sweep"] == got["stop"] >= 1 and got["sweeps"] == got["cpu_sweeps"] > got["stop"]
    assert got["flagged"] == 0 and got["max_diff"] <= 2e-5
    if board == "mini4":
        assert got["largest"] > 0.1  # a board where the values are not all 0


@needs_numba
def test_kernels_compile_for_an_h100_without_a_gpu() -> None:
    # numba-cuda compiles to PTX through NVVM without a device; where the CUDA toolkit's NVVM is not
    # installed (the [gpu] extra brings it) there is nothing to compile with
    done = subprocess.run([sys.executable, str(SIM_SCRIPT), "ptx"], capture_output=True, text=True,
                          timeout=900, cwd=HERE.parent, env={k: v for k, v in os.environ.items()
                                                             if k != "NUMBA_ENABLE_CUDASIM"})
    if done.returncode == 3:
        pytest.skip(done.stdout.strip().splitlines()[-1])
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(got) == {"sweep", "evaluate", "endless", "outcomes", "gather", "graph_rows", "sweep_stored",
                        "endless_stored"}
    assert all(size > 1_000 for size in got.values()) and got["sweep"] > 100_000  # the generator inlined


@needs_gpu
@pytest.mark.parametrize("k", [3, pytest.param(4, marks=pytest.mark.slow)])  # K = 4: minutes on each side
def test_gpu_solve_equals_the_cpu_solve(tmp_path, k) -> None:
    from gamesolver.games.ur.solve import gpu_engine

    o = UrOptions(pieces=k)
    game = kernel(o)
    tol = 1e-6 if k == 3 else 1e-5
    one = solve_values(game, tmp_path / "cpu", o.header(), tolerance=tol)
    with gpu_engine(o) as eng:
        dev = solve_values(game, tmp_path / "gpu", o.header(), tolerance=tol, engine=eng)
    assert dev.meta["endless_check"]["flagged"] == 0
    start = int(game.rank([0], [0])[0])  # the empty board, first side to move
    if k == 3:  # on an H200: within 1e-5 of each other
        assert np.abs(dev.values - one.values).max() <= 10 * tol
    else:
        # A stop at "no change above 1e-5" leaves errors far above 1e-5 where play mixes slowly: a CPU
        # K = 4 table solved so differs from the certified one by up to 1.6e-3. On an H200 (
        # through the CLI) the two solves differed by at most 2.4e-4 (1,638 states above 1e-4) and their
        # start values by 2.4e-7; a wrong kernel moves values by hundredths.
        assert np.abs(dev.values - one.values).max() <= 2e-3
        assert abs(float(dev.values[start]) - float(one.values[start])) <= 10 * tol


@needs_gpu
@pytest.mark.parametrize("k", [4, 7])
def test_device_generator_on_the_gpu_equals_fortgame(k) -> None:
    from gamesolver.games.ur.solve import gpu_engine

    o = UrOptions(pieces=k, mirror=k < 7)
    game = kernel(o)
    with gpu_engine(o, policy=False) as eng:
        ranks = np.random.default_rng(k).integers(0, game.state_count, size=20_000)
        got = eng.outcomes(ranks)
    for r, groups in zip(ranks.tolist(), got):
        assert groups == game.outcome_groups(r)


@needs_gpu
def test_gpu_mini_board_solve_and_a_jacobi_sweep(tmp_path) -> None:
    from gamesolver.games.ur.solve import gpu_engine

    o = mini_options(tmp_path, 4)
    game = kernel(o)
    n, R = game.state_count, game.roll_count
    with gpu_engine(o) as eng:
        V = np.random.default_rng(5).uniform(-1, 1, n).astype(np.float32)
        out = np.zeros(n, dtype=np.float32)
        eng.sweep(V, out=out, policy=np.empty((0, R)))
        P = np.zeros((n, R), dtype=np.int32)
        cy.sweep(game, V.copy(), threads=1, write=False, policy=P)
        assert np.array_equal(eng.policy.copy_to_host(), P)
        jac = np.array([sum(p * v for p, v in zip(game.roll_probabilities, game.roll_values(V, r))) for r in range(n)])
        assert np.abs(out - jac).max() <= 1e-6
        dev = solve_values(game, tmp_path / "gpu", o.header(), engine=eng)
    one = solve_values(game, tmp_path / "cpu", o.header(), threads=1)
    assert np.abs(dev.values - one.values).max() <= 2e-5


def test_cli_without_numba_cuda_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "numba_cuda", None)  # import fails as if not installed
    r = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "2", "--backend", "gpu"])
    assert r.exit_code == 2 and "Traceback" not in r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and 'pip install "gamesolver[gpu]"' in lines[0]


@pytest.mark.skipif(numba is None or _has_gpu(), reason="needs numba-cuda on a machine without a CUDA GPU")
def test_cli_without_a_gpu_says_so_and_names_the_backends_that_run(tmp_path) -> None:
    r = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "2", "--backend", "gpu", "--out", str(tmp_path / "t")])
    assert r.exit_code == 2 and "Traceback" not in r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "no CUDA GPU was found" in lines[0] and "--backend cpu" in lines[0] \
        and "--backend ray" in lines[0]
    assert not (tmp_path / "t").exists()


def test_cli_gpu_refuses_what_it_does_not_run() -> None:
    for extra, words in ((["--workers", "2"], "--workers"),):
        r = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "2", "--backend", "gpu", *extra])
        assert r.exit_code == 2 and words in r.output and len(r.output.strip().splitlines()) == 1


_DISTINCT: list = []


def _distinct():
    """``graph_functions``' ``distinct`` for three groups, compiled once."""
    if not _DISTINCT:
        import numba

        from gamesolver.solver.backends.gpu.arithmetic import graph_functions

        _DISTINCT.append(graph_functions(numba.njit, 3))
    return _DISTINCT[0]


@needs_numba
@settings(max_examples=200, deadline=None)
@given(groups=st.lists(st.lists(st.integers(-6, 6), max_size=7), min_size=3, max_size=3))
def test_distinct_drops_each_groups_repeats_in_place_keeping_first_occurrences(groups) -> None:
    distinct = _distinct()
    codes = np.array([c for g in groups for c in g] + [99] * 4, dtype=np.int32)
    counts = np.array([len(g) for g in groups], dtype=np.int64)
    m = distinct(codes, counts)
    want = [list(dict.fromkeys(g)) for g in groups]
    assert m == sum(len(g) for g in want) and counts.tolist() == [len(g) for g in want]
    assert codes[:m].tolist() == [c for g in want for c in g]


@needs_numba
@pytest.mark.parametrize("board", ["mini4", "real2"])
def test_stored_graph_on_the_device_reads_like_generating_bit_for_bit(tmp_path, board) -> None:
    # numba's CPU JIT builds the device's stored graph with the device kernels' logic; every sweep,
    # recorded policy and endless pass that reads it must equal the generating engine's exactly
    o = mini_options(tmp_path, 4) if board == "mini4" else UrOptions(pieces=2)
    game, spec = kernel(o), spec_of(o)
    n, R, G = spec.total, spec.nrolls, spec.ngroups
    gen = _cpu_engine(spec, graph="regenerate")
    said: list[str] = []
    sto = _cpu_engine(spec, graph="store", log=said.append)
    assert gen.graph_kind == "regenerated" and gen.nbytes == 0 and gen.CODES is None
    assert sto.graph_kind == "stored on the device" and any("stored graph of" in s for s in said)
    total = int(sto.OFF[-1])
    assert sto.nbytes == 8 * (n + 1) + G * n + 4 * total
    # every state's groups: FortGame's, each group's repeats dropped (the mirror sends two moves to
    # one canonical successor), first occurrences in order
    repeats = 0
    for r in range(n):
        groups = game.outcome_groups(r)
        want = [list(dict.fromkeys(g)) for g in groups]
        repeats += sum(len(g) for g in groups) - sum(len(g) for g in want)
        assert sto.stored_groups(r) == want, r
    if board == "real2":
        assert repeats > 0  # the mirror's repeats were there to drop: the dropping is exercised
    rng = np.random.default_rng(5)
    V = rng.uniform(-1, 1, n).astype(np.float32)
    for discount in (1.0, 0.99):
        a, b = V.copy(), V.copy()
        ca = gen.sweep(a, policy=np.empty((0, R)), discount=discount)
        cb = sto.sweep(b, policy=np.empty((0, R)), discount=discount)
        assert ca == cb > 0.1 and np.array_equal(a, b) and np.array_equal(gen.policy, sto.policy)
        ja, jb = np.zeros(n, dtype=np.float32), np.zeros(n, dtype=np.float32)
        assert gen.sweep(a, out=ja, discount=discount) == sto.sweep(b, out=jb, discount=discount)
        assert np.array_equal(ja, jb)
    sub = np.flatnonzero(rng.random(n) < 0.1).astype(np.int64)
    a, b = V.copy(), V.copy()
    assert gen.sweep(a, subset=sub, discount=0.99) == sto.sweep(b, subset=sub, discount=0.99)
    assert np.array_equal(a, b) and np.count_nonzero(a != V) > 0
    marks_alike(gen.endless_pass, sto.endless_pass, V)


@needs_numba
def test_a_solve_over_the_device_graph_equals_the_generating_one(tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    game, spec = kernel(o), spec_of(o)
    with _cpu_engine(spec, graph="regenerate") as eng:
        one = solve_values(game, tmp_path / "gen", o.header(), engine=eng)
    with _cpu_engine(spec) as eng:  # auto: the simulated device reports no memory, so it stores
        dev = solve_values(game, tmp_path / "sto", o.header(), engine=eng)
    assert one.meta["graph"] == "regenerated" and dev.meta["graph"] == "stored on the device"
    assert dev.meta["bytes_per_state"]["graph"] > 20 and one.meta["bytes_per_state"]["graph"] == 0
    # the device graph's build counts in the run's time (a six-piece solve's meta said 0.0 for its 20 s)
    assert dev.meta["graph_build_seconds"] > 0 and one.meta["graph_build_seconds"] == 0
    for key in ("sweeps", "policy_sweeps", "hot_set_states"):
        assert dev.meta[key] == one.meta[key], key
    assert np.array_equal(dev.values, one.values) and dev.meta["endless_check"]["flagged"] == 0


@needs_numba
def test_the_device_graph_is_kept_only_where_it_fits(tmp_path, monkeypatch) -> None:
    from gamesolver.solver.errors import InputError
    from gamesolver.solver.backends.gpu.driver import GpuEngine

    o = mini_options(tmp_path, 4)
    spec = spec_of(o)
    size = _cpu_engine(spec, graph="store").nbytes
    need = GpuEngine.bytes_needed(type("E", (), {"spec": spec, "n": spec.total, "R": spec.nrolls,
                                                 "resident_threads": lambda self: 1})(), True)
    monkeypatch.setattr(GpuEngine, "free_bytes", lambda self: need + size - 1)
    with pytest.raises(InputError, match=r"^the stored graph needs .* free on the GPU; use --graph regenerate"):
        GpuEngine(spec, target="cpu", graph="store")
    said: list[str] = []
    eng = GpuEngine(spec, target="cpu", log=said.append)  # auto: regenerates, and says why
    assert eng.CODES is None and eng.graph_kind == "regenerated"
    assert any("every sweep regenerates the outcomes" in s for s in said)
    monkeypatch.setattr(GpuEngine, "free_bytes", lambda self: need + size)
    assert GpuEngine(spec, target="cpu").nbytes == size
    with pytest.raises(InputError, match="unknown graph choice"):
        GpuEngine(spec, target="cpu", graph="disk")


@given(sizes=st.lists(st.integers(0, 90), min_size=1, max_size=60), step=st.integers(1, 20),
       groups=st.integers(1, 6), budget=st.integers(0, 6000))
def test_the_graphs_prefix_is_the_most_whole_launches_that_fit(sizes, step, groups, budget) -> None:
    from gamesolver.solver.backends.gpu.driver import graph_bytes, graph_prefix

    n = len(sizes)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    m = graph_prefix(offsets, groups, step, budget)
    ends = [e for e in range(step, n, step)] + [n]  # whole launches, or every state
    fitting = [e for e in ends if 8 * (e + 1) + groups * e + 4 * sum(sizes[:e]) <= budget]
    assert m == (max(fitting) if fitting else 0)
    assert m == 0 or graph_bytes(offsets, groups, m) <= budget


@needs_numba
@pytest.mark.parametrize("host", [False, True])
def test_a_graph_stored_for_a_prefix_of_the_states_sweeps_like_generating(tmp_path, monkeypatch, host) -> None:
    # seven pieces' graph (about 204 GiB) fits no GPU; the device stores it for the ranks that fit,
    # the host's memory (``host``) for the next ones, copied in a launch at a time, and the others
    # generate their outcomes: every sweep, pass and solve as the generating engine's, bit for bit
    from gamesolver.solver.errors import InputError
    from gamesolver.solver.backends.gpu.driver import PARTIAL_GRAPH_HEADROOM, GpuEngine, graph_bytes, graph_prefix

    o = mini_options(tmp_path, 4)
    game, spec = kernel(o), spec_of(o)
    n, R, G = spec.total, spec.nrolls, spec.ngroups
    whole = _cpu_engine(spec, graph="store", launch_states=256)
    offsets = np.asarray(whole.OFF)
    need = GpuEngine.bytes_needed(whole, True)
    half = graph_bytes(offsets, G, n // 2)
    monkeypatch.setattr(GpuEngine, "free_bytes", lambda self: need + half)
    said: list[str] = []
    room = graph_bytes(offsets, G, n) // 4 if host else 0  # the host's part: about a quarter of the states
    part = _cpu_engine(spec, launch_states=256, log=said.append, host_graph=room)
    gen = _cpu_engine(spec, graph="regenerate", launch_states=256)
    m, h = part.stored_states, part.host_states  # the most whole launches that fit, some room left
    assert m == graph_prefix(offsets, G, 256, half - int((need + half) * PARTIAL_GRAPH_HEADROOM))
    assert m % 256 == 0 and n // 4 < m < n // 2 and part.nbytes == graph_bytes(offsets, G, m)
    assert any(f"stored for ranks below {m:,}" in x for x in said)
    kind = f"stored on the device for {m / n:.0%} of the states"
    if host:
        assert h == m + graph_prefix(offsets[m:] - offsets[m], G, 256, room) and m < h < n and (h - m) % 256 == 0
        assert part.host_nbytes <= room and any(f"graph of ranks {m:,} to {h:,}" in x for x in said)
        kind += f", in the host's memory for {(h - m) / n:.0%}"
    else:
        assert h == 0 and part.H is None
    assert part.graph_kind == kind
    assert part.stored_groups(m - 1) == whole.stored_groups(m - 1)
    with pytest.raises(RuntimeError, match="no stored graph"):
        part.stored_groups(m)
    with pytest.raises(InputError, match="the stored graph needs"):  # ``store`` wants all of it
        _cpu_engine(spec, graph="store", launch_states=256)
    rng = np.random.default_rng(8)
    V = rng.uniform(-1, 1, n).astype(np.float32)
    a, b = V.copy(), V.copy()
    assert gen.sweep(a, policy=np.empty((0, R)), discount=0.99) == part.sweep(b, policy=np.empty((0, R)),
                                                                              discount=0.99) > 0.1
    assert np.array_equal(a, b) and np.array_equal(gen.policy, part.policy)
    for edge in (m, max(m, h)):  # Jacobi windows across each edge, starting inside a launch
        ja, jb = np.zeros(n, dtype=np.float32), np.zeros(n, dtype=np.float32)
        assert gen.sweep(a, start=edge - 300, stop=edge + 300, out=ja) == part.sweep(b, start=edge - 300,
                                                                                    stop=edge + 300, out=jb)
        assert np.array_equal(ja, jb) and np.abs(ja[edge - 300:edge + 300]).max() > 0
    sub = np.flatnonzero(rng.random(n) < 0.2)  # a subset on both sides of the edge
    assert gen.sweep(a, subset=sub, discount=0.99) == part.sweep(b, subset=sub, discount=0.99)
    assert np.array_equal(a, b) and 0 < np.searchsorted(sub, m) < sub.size
    ga, gb = np.zeros(n, dtype=np.uint8), np.zeros(n, dtype=np.uint8)
    first = True
    while gen.endless_pass(V, ga, 1e-3, first=first) or first:
        first = False
    first = True
    while part.endless_pass(V, gb, 1e-3, first=first) or first:
        first = False
    assert np.array_equal(ga, gb) and 0 < ga.sum() < n
    # a whole solve, whose hot sets fall on both sides of the edge
    sides: list[tuple[int, int]] = []
    found = part.hot_set

    def hot_set(*args, **kw):
        got = found(*args, **kw)
        if got[1] is not None:
            sides.append((got[1].below, got[1].size))
        return got
    part.hot_set = hot_set
    one = solve_values(game, tmp_path / "gen", o.header(), engine=gen)
    two = solve_values(game, tmp_path / "part", o.header(), engine=part)
    assert two.meta["graph"] == part.graph_kind and two.meta["hot_set_states"] > 0
    assert any(0 < below < size for below, size in sides)
    for key in ("sweeps", "policy_sweeps", "hot_set_states"):
        assert two.meta[key] == one.meta[key], key
    assert np.array_equal(one.values, two.values)


class _Queues:
    """CUDA's streams and events as queues that run only at a synchronize, in an order as hostile
    as the events allow: one stream runs as far as it can before the other moves (``ahead``)."""

    def __init__(self, ahead: int) -> None:
        self.streams: list = []
        self.ahead = ahead
        q = self

        class Event:
            def __init__(self) -> None:
                self.queued = self.done = False

            def record(self, stream) -> None:
                self.queued = True
                stream.ops.append(("record", self))

            def wait(self, stream) -> None:
                assert self.queued, "a wait on an event never recorded is no wait in CUDA"
                stream.ops.append(("wait", self))

        class Stream:
            def __init__(self) -> None:
                self.ops: list = []
                q.streams.append(self)

            def synchronize(self) -> None:
                q.run()

        self.event, self.stream = Event, Stream

    def run(self) -> None:
        while any(s.ops for s in self.streams):
            order = self.streams[self.ahead:] + self.streams[:self.ahead]
            for s in order:
                if s.ops and (s.ops[0][0] != "wait" or s.ops[0][1].done):
                    what, x = s.ops.pop(0)
                    if what == "record":
                        x.done = True
                    elif what == "run":
                        x()
                    break
            else:
                raise AssertionError("the streams wait on each other")


@needs_numba
@pytest.mark.parametrize("ahead", [0, 1])
def test_the_host_parts_pieces_are_copied_in_beside_the_kernels_without_a_race(tmp_path, monkeypatch,
                                                                              ahead) -> None:
    # ``_launches`` on a GPU: the host part's pieces copied into two staging sets on a second stream
    # while the kernel stream sweeps. Streams played by queues that run only when the sweep ends,
    # kernels far ahead of the copies (ahead 0) or copies far ahead of the kernels (1): every
    # kernel of a host piece must find exactly that piece's offsets, group sizes and codes
    from gamesolver.solver.backends.gpu.driver import DEVICE, GENERATE, HOST, GpuEngine, graph_bytes

    o = mini_options(tmp_path, 4)
    spec = spec_of(o)
    n, G = spec.total, spec.ngroups
    whole = _cpu_engine(spec, graph="store", launch_states=128)
    offsets = np.asarray(whole.OFF)
    need = GpuEngine.bytes_needed(whole, True)
    monkeypatch.setattr(GpuEngine, "free_bytes", lambda self: need + graph_bytes(offsets, G, n // 2))
    eng = _cpu_engine(spec, launch_states=128, host_graph=graph_bytes(offsets, G, n) // 3)
    m, h = eng.stored_states, eng.host_states
    assert (h - m) // 128 >= 6  # several pieces, each set used three times or more
    queues = _Queues(ahead)
    eng.target, eng.cuda = "cuda", queues  # only ``_launches`` and ``_staged`` run: no kernel does
    eng.stage2 = tuple(np.zeros_like(a) for a in eng.stage)

    def copy(dev, host, stream) -> None:
        stream.ops.append(("run", lambda: dev.__setitem__(Ellipsis, host)))
    eng._copy_in_async = copy
    Hoff, Hcnt, Hcodes = eng.H
    seen: list[tuple[int, int, int]] = []
    for start, stop in ((0, n), (m + 50, h - 70)):  # a whole sweep, and one from inside a piece to inside another
        parts = eng._parts(start, stop)
        order = []
        for a, b, kind, graph, stream in eng._launches(parts):
            order.append((a, b, kind))
            assert stream is queues.streams[0]  # every kernel on one stream, in order
            if kind == HOST:
                OFF, CNT, CODES, base = graph
                assert base == a

                def kernel(a=a, b=b, OFF=OFF, CNT=CNT, CODES=CODES) -> None:
                    c0, c1 = int(Hoff[a - m] - Hoff[0]), int(Hoff[b - m] - Hoff[0])
                    ok = (np.array_equal(OFF[:b - a + 1], Hoff[a - m:b - m + 1])
                          and np.array_equal(CNT[:b - a], Hcnt[a - m:b - m])
                          and np.array_equal(CODES[:c1 - c0], Hcodes[c0:c1]))
                    seen.append((a, b, int(ok)))
                stream.ops.append(("run", kernel))
            else:
                assert (graph is None) == (kind == GENERATE) and (kind != DEVICE or graph[0] is eng.OFF)
        assert order == parts and not any(s.ops for s in queues.streams)  # all ran by the sweep's end
    assert len(seen) == sum(1 for start, stop in ((0, n), (m + 50, h - 70))
                            for _, _, kind in eng._parts(start, stop) if kind == HOST)
    assert all(ok for _, _, ok in seen)
    # the check can fail: without the wait before a copy overwrites a set, copies running ahead
    # overwrite a piece its kernel has not read yet
    if ahead == 1:
        class NoWait(queues.event):
            def wait(self, stream) -> None:
                if stream is queues.streams[0]:
                    super().wait(stream)
        queues.event = NoWait
        seen.clear()
        for a, b, kind, graph, stream in eng._launches(eng._parts(0, n)):
            if kind == HOST:
                OFF = graph[0]
                stream.ops.append(("run", lambda a=a, b=b, OFF=OFF: seen.append(
                    (a, b, int(np.array_equal(OFF[:b - a + 1], Hoff[a - m:b - m + 1]))))))
        assert not all(ok for _, _, ok in seen)


@needs_gpu
def test_stored_graph_on_the_gpu_equals_generating(monkeypatch) -> None:
    # four pieces: the graph built by the device's kernels holds FortGame's distinct codes, and a
    # Jacobi sweep (every value from the old ones, so the threads' order cannot matter) and an
    # endless pass read from it give the generating kernels' values, policy and marks exactly; so
    # does a graph stored for a prefix of the ranks (the device's free memory faked to hold about
    # half of it), the rest generating, and one with the next quarter in the host's page-locked
    # memory, copied in launch by launch on a second stream while the kernels run (``host``)
    from gamesolver.games.ur.solve import gpu_engine
    from gamesolver.solver.backends.gpu.driver import GpuEngine

    o = UrOptions(pieces=4)
    game = kernel(o)
    n, R = game.state_count, game.roll_count
    V = np.random.default_rng(9).uniform(-1, 1, n).astype(np.float32)
    got = {}
    for graph in ("regenerate", "store", "part", "host"):
        if graph == "part":
            free = GpuEngine.free_bytes
            monkeypatch.setattr(GpuEngine, "free_bytes",
                                lambda self, free=free, extra=half_graph: min(free(self), self.bytes_needed() + extra))
        kw = {"host_graph": half_graph // 2, "launch_states": 1 << 18} if graph == "host" else {}
        with gpu_engine(o, graph="store" if graph == "store" else "auto" if graph != "regenerate" else graph,
                        **kw) as eng:
            if graph == "store":
                half_graph = eng.nbytes // 2
            if graph in ("part", "host"):
                assert 0 < eng.stored_states < n and eng.graph_kind.startswith("stored on the device for")
            if graph == "host":  # several launches of the host's part, copied in beside the kernels
                assert eng.host_states - eng.stored_states > 4 * (1 << 18) and eng.stage2 is not None
            out = np.zeros(n, dtype=np.float32)
            change = eng.sweep(V, out=out, policy=np.empty((0, R)), discount=0.999)
            # the endless check to its end: a pass's marks depend on the order the threads run in,
            # the set the passes end at does not
            good = np.zeros(n, dtype=np.uint8)
            half = np.where(np.abs(V) < 0.3, V * 0.001, V).astype(np.float32)
            added = first = eng.endless_pass(half, good, 1e-3, first=True)
            while added:
                added = eng.endless_pass(half, good, 1e-3)
            got[graph] = (out, change, eng.policy.copy_to_host(), first, good)
            if graph == "store":
                assert eng.graph_kind == "stored on the device" and eng.nbytes > 100 * n
                for r in np.random.default_rng(1).integers(0, n, size=2000).tolist():
                    assert eng.stored_groups(r) == [list(dict.fromkeys(g)) for g in game.outcome_groups(r)]
    (oa, ca, pa, xa, ga) = got["regenerate"]
    for other in ("store", "part", "host"):
        (ob, cb, pb, xb, gb) = got[other]
        assert np.array_equal(oa, ob) and ca == cb > 0.1 and np.array_equal(pa, pb)
        assert xa > 0 and xb > 0 and np.array_equal(ga, gb) and 0 < ga.sum() < n
