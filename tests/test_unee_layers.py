"""Ünee solved layer by layer (``solver.retrograde.layers``, ``games.unee.layers``): each layer's
moves built alone against the plain Python sowing, every rule's arrays against the whole-graph
solve, and the same on a local Ray cluster of two workers (``solver.backends.ray_tiers``)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.unee import _sow
from gamesolver.games.unee.graph import build_graph
from gamesolver.games.unee.layers import UneeLayers, solve_arrays_by_layers
from gamesolver.games.unee.rules import UneeOptions
from gamesolver.games.unee.solution import solve_arrays
from gamesolver.solver.cli import cli
from gamesolver.solver.retrograde import _retro
from gamesolver.solver.retrograde.layers import solve_tier
from tests.unee_ref import boards_in_rank_order, sow_ball_by_ball

try:
    import ray
except ImportError:  # the optional extra is not installed
    ray = None

needs_ray = pytest.mark.skipif(ray is None, reason='Ray is not installed (the optional extra: pip install '
                                                   '"gamesolver[ray]")')

RULES = ["uncounted", "draw", "split"]
variants = st.builds(
    UneeOptions,
    holes_per_row=st.integers(1, 3),
    balls_per_hole=st.integers(1, 3),
    skip_origin=st.booleans(),
    capture_rows=st.sampled_from(["own", "both"]),
)


@settings(max_examples=25, deadline=None)
@given(options=variants, data=st.data())
def test_a_layer_built_alone_is_the_plain_sowing_of_each_board(options, data):
    balls = data.draw(st.integers(0, options.max_balls), label="balls")
    layers: dict[int, list[tuple[int, ...]]] = {}
    for b in boards_in_rank_order(options.holes, balls):
        layers.setdefault(sum(b), []).append(b)
    boards = layers[balls]
    start = data.draw(st.integers(0, len(boards)), label="start")
    stop = data.draw(st.integers(start, len(boards)), label="stop")
    indptr, succ, hole, captured = _sow.build_layer_graph(
        options.holes_per_row, balls, start, stop, options.skip_origin, options.capture_both, 4)
    rank_in_layer = {b: i for layer in layers.values() for i, b in enumerate(layer)}
    assert indptr.shape[0] == stop - start + 1 and indptr[0] == 0
    for i, board in enumerate(boards[start:stop]):
        expect = []
        for h in range(options.holes_per_row):
            if board[h]:
                after, got = sow_ball_by_ball(board, h, options.skip_origin, options.capture_both)
                expect.append((h, rank_in_layer[tuple(after)], got))
        edges = range(indptr[i], indptr[i + 1])
        assert [(int(hole[k]), int(succ[k]), int(captured[k])) for k in edges] == expect


@pytest.mark.parametrize("options", [UneeOptions(3, 3), UneeOptions(2, 4, True, "both"), UneeOptions(3, 2, False, "both")],
                         ids=["3x3", "2x4-skip-both", "3x2-both"])
def test_the_layers_concatenated_are_the_whole_graph(options):
    g = build_graph(options)
    game = UneeLayers(options)
    for t in game.tiers():
        layer = game.tier_graph(t)
        lo, hi = int(g.offsets[t]), int(g.offsets[t + 1])
        e0, e1 = int(g.indptr[lo]), int(g.indptr[hi])
        assert game.tier_size(t) == hi - lo
        assert np.array_equal(layer.indptr, g.indptr[lo:hi + 1] - e0)
        assert np.array_equal(g.offsets[layer.target] + layer.succ, g.succ[e0:e1])
        assert np.array_equal(layer.label, g.hole[e0:e1]) and np.array_equal(layer.reward, g.captured[e0:e1])


@settings(max_examples=20, deadline=None)
@given(options=variants, rule=st.sampled_from(RULES))
def test_every_rule_solved_by_layers_equals_the_whole_graph_solve(options, rule):
    whole = solve_arrays(build_graph(options), rule)
    layered = solve_arrays_by_layers(options, rule)
    assert whole.keys() == layered.keys()
    for key in whole:
        assert whole[key].dtype == layered[key].dtype
        assert np.array_equal(whole[key], layered[key]), key


def test_the_standard_board_by_layers_equals_the_whole_graph_on_every_position():
    """The traditional game (10.5M boards): every array of every rule, state for state."""
    options = UneeOptions()
    graph = build_graph(options)
    for rule in RULES:
        whole = solve_arrays(graph, rule)
        layered = solve_arrays_by_layers(options, rule)
        for key in whole:
            assert np.array_equal(whole[key], layered[key]), (rule, key)
        del whole, layered


def test_a_layer_needs_the_layers_its_captures_reach():
    game = UneeLayers(UneeOptions(2, 3))
    with pytest.raises(ValueError, match="tier 4"):
        solve_tier(game, 8, "value", {})
    with pytest.raises(ValueError, match="mode must be"):
        solve_tier(game, 0, "best", {})


def test_a_result_array_given_to_the_kernel_is_checked():
    g = build_graph(UneeOptions(2, 1))
    rindptr, pred, _ = g.reverse()
    term = np.zeros(g.n_states, dtype=np.int8)
    args = (g.indptr, g.succ, g.captured, rindptr, pred, g.offsets, term, "value")
    with pytest.raises(ValueError, match="int8 array"):
        _retro.solve_tiers(*args, out=np.zeros(g.n_states, dtype=np.int16))
    with pytest.raises(ValueError, match="int8 array"):
        _retro.solve_tiers(*args, out=np.zeros(g.n_states - 1, dtype=np.int8))
    out = np.full(g.n_states, 99, dtype=np.int8)
    assert _retro.solve_tiers(*args, out=out) is out and np.array_equal(out, _retro.solve_tiers(*args))


def test_cli_layers_backend_writes_the_same_tables(tmp_path):
    runner = CliRunner()
    base = ["unee", "--holes", "2", "--balls", "3", "solve", "--rule", "all", "--json"]
    for backend in ("cpu", "layers"):
        result = runner.invoke(cli, base + ["--backend", backend, "--cache", str(tmp_path / backend)])
        assert result.exit_code == 0, result.output
    for rule in RULES:
        a = sorted((tmp_path / "cpu").glob(f"unee/*/{rule}/*.npy"))
        b = sorted((tmp_path / "layers").glob(f"unee/*/{rule}/*.npy"))
        assert [p.name for p in a] == [p.name for p in b] and a
        for x, y in zip(a, b):
            assert np.array_equal(np.load(x), np.load(y))


@pytest.mark.parametrize("args, words", [
    (["--workers", "2"], "--workers applies to --backend ray"),
    (["--address", "127.0.0.1:1"], "--address applies to --backend ray"),
    (["--backend", "ray", "--workers", "0"], "0"),
])
def test_cli_ray_options_without_ray_backend_are_one_line(tmp_path, args, words):
    result = CliRunner().invoke(cli, ["unee", "--holes", "2", "--balls", "1", "solve", "--cache", str(tmp_path)] + args)
    assert result.exit_code == 2 and words in result.output and "Traceback" not in result.output
    assert not list(tmp_path.rglob("*.npy"))


@pytest.fixture(scope="module")
def cluster():
    """One local Ray instance with two CPUs, i.e. two workers, for the module's Ray tests."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@needs_ray
@pytest.mark.parametrize("rule", RULES)
def test_ray_two_workers_equal_the_whole_graph_solve(cluster, rule):
    from gamesolver.solver.backends.ray_tiers import TierEngine

    options = UneeOptions(3, 3, capture_rows="both")
    whole = solve_arrays(build_graph(options), rule)
    with TierEngine(workers=2) as engine:
        spread = solve_arrays_by_layers(options, rule, engine=engine)
        assert engine.workers == 2 and engine.rate() > 0
        assert sorted(s["tier"] for s in engine.stats) == list(range(options.max_balls + 1))
        assert len({s["pid"] for s in engine.stats}) == 2  # both workers solved layers
    for key in whole:
        assert np.array_equal(whole[key], spread[key]), key


@needs_ray
def test_cli_ray_backend_writes_the_same_table(cluster, tmp_path):
    runner = CliRunner()
    base = ["unee", "--holes", "2", "--balls", "3", "solve", "--rule", "split", "--json"]
    one = runner.invoke(cli, base + ["--out", str(tmp_path / "one")])
    spread = runner.invoke(cli, base + ["--backend", "ray", "--workers", "2", "--out", str(tmp_path / "ray")])
    assert one.exit_code == 0 and spread.exit_code == 0, spread.output
    assert json.loads(one.output)[0]["start"] == json.loads(spread.output)[0]["start"]
    for name in ("lower.npy", "upper.npy"):
        assert np.array_equal(np.load(tmp_path / "one" / name), np.load(tmp_path / "ray" / name))
    header = json.loads((tmp_path / "ray" / "header.json").read_text())
    assert header["meta"]["solved"] == "by layers on Ray"


@needs_ray
def test_more_workers_than_the_cluster_has_cpus_are_refused(cluster):
    from gamesolver.solver.backends.ray_tiers import TierEngine
    from gamesolver.solver.errors import InputError

    with pytest.raises(InputError, match="3 workers do not fit the Ray cluster's 2 CPUs"):
        TierEngine(workers=3)
    assert ray.is_initialized()  # the cluster this process joined before stays


def interrupt_after(layers: int):
    """A progress callback that stops the solve (as Ctrl-C would) once ``layers`` layers are done."""
    finished = []

    def progress(count: int) -> None:
        finished.append(count)
        if len(finished) == layers:
            raise KeyboardInterrupt

    return progress


@pytest.mark.parametrize("rule", RULES)
def test_a_stopped_layer_solve_resumes_with_the_layers_it_had(tmp_path, monkeypatch, rule):
    from gamesolver.solver.retrograde import layers as L

    options = UneeOptions(3, 2, capture_rows="both")
    whole = solve_arrays(build_graph(options), rule)
    folder = tmp_path / "ck"
    with pytest.raises(KeyboardInterrupt):
        solve_arrays_by_layers(options, rule, progress=interrupt_after(5), checkpoint=folder)
    assert sorted(int(p.stem) for p in folder.glob("*.npz")) == [0, 1, 2, 3, 4]
    (folder / "3.npz").write_bytes(b"not a layer")  # a damaged file: that layer is solved again
    solved = []
    real = L.solve_tier
    monkeypatch.setattr(L, "solve_tier", lambda game, t, *a, **k: solved.append(t) or real(game, t, *a, **k))
    lines = []
    again = solve_arrays_by_layers(options, rule, checkpoint=folder, log=lines.append)
    assert solved == [3] + list(range(5, options.max_balls + 1))
    assert lines == [f"resuming: 4 of {options.max_balls + 1} layers solved before, read from {folder}"]
    for key in whole:
        assert np.array_equal(whole[key], again[key]), key


def test_the_layer_checkpoint_is_removed_once_the_table_is_written(tmp_path):
    result = CliRunner().invoke(cli, ["unee", "--holes", "2", "--balls", "2", "solve", "--backend", "layers",
                                      "--out", str(tmp_path / "t")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "t" / "header.json").exists() and not (tmp_path / ".t.layers").exists()


@needs_ray
def test_ray_resumes_from_layers_solved_before(cluster, tmp_path):
    from gamesolver.solver.backends.ray_tiers import TierEngine

    options = UneeOptions(3, 2, capture_rows="both")
    whole = solve_arrays(build_graph(options), "uncounted")
    with pytest.raises(KeyboardInterrupt):
        solve_arrays_by_layers(options, "uncounted", progress=interrupt_after(6), checkpoint=tmp_path)
    with TierEngine(workers=2) as engine:
        again = solve_arrays_by_layers(options, "uncounted", engine=engine, checkpoint=tmp_path)
        assert sorted(s["tier"] for s in engine.stats) == list(range(6, options.max_balls + 1))
    for key in whole:
        assert np.array_equal(whole[key], again[key]), key
