"""The Ray backend (``solver.backends.ray.RayEngine``) on a local Ray cluster of two actors, against
the single-process engine and against the same Jacobi-between-ranges sweeps done in this process;
a worker killed mid-run; the CLI's backend options."""
from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from gamesolver.games.ur import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import ray_engine
from gamesolver.solver.stochastic import _engine as kernels
from gamesolver.solver.cli import cli
from gamesolver.solver.stochastic.iteration import solve_values
from tests.test_ur_reference import mini_options

try:
    import ray
except ImportError:  # the optional extra is not installed
    ray = None

needs_ray = pytest.mark.skipif(ray is None, reason='Ray is not installed (the optional extra: pip install '
                                                   '"gamesolver[ray]")')


@pytest.fixture(scope="module")
def cluster():
    """One local Ray instance with two CPUs for the whole module (its start-up takes seconds)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def jacobi_reference(game, V, ranges, step):
    """What the engine's actors compute together: each range swept from the same values on its own
    copy, the ranges' parts assembled."""
    out = V.copy()
    for a, b in ranges:
        local = V.copy()
        step(local, a, b)
        out[a:b] = local[a:b]
    return out


def single_and_ray(tmp_path, options, **kw):
    game = kernel(options)
    one = solve_values(game, tmp_path / "one", options.header(), threads=1, **kw)
    with ray_engine(options, workers=2, threads=1) as engine:
        assert len(engine.actors) == 2 and engine.ranges[0][1] == engine.ranges[1][0]
        spread = solve_values(game, tmp_path / "ray", options.header(), engine=engine, **kw)
    return one, spread


@needs_ray
@pytest.mark.parametrize("k", [2, 3])
def test_real_board_equals_the_single_process_solve(cluster, tmp_path, k: int) -> None:
    one, spread = single_and_ray(tmp_path, UrOptions(pieces=k))
    assert spread.meta["backend"] == "ray" and one.meta["backend"] == "cpu"
    assert spread.meta["endless_check"]["flagged"] == 0 and spread.meta["residual"] < 1e-6
    assert np.abs(spread.values - one.values).max() <= 1e-5


@needs_ray
def test_small_board_four_pieces_equals_the_single_process_solve(cluster, tmp_path) -> None:
    # the 8-tile board where four pieces can win: values far from 0, long play, a real walk
    one, spread = single_and_ray(tmp_path, mini_options(tmp_path, 4))
    assert np.abs(one.values).max() > 0.1
    assert spread.meta["endless_check"]["flagged"] == 0
    assert np.abs(spread.values - one.values).max() <= 2e-5  # Jacobi between ranges: a few ulps of tolerance


@needs_ray
def test_sweeps_policy_sweeps_and_endless_passes_are_jacobi_between_ranges(cluster, tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    game = kernel(o)
    n, R = game.state_count, game.roll_count
    rng = np.random.default_rng(7)
    V = rng.uniform(-1, 1, n).astype(np.float32)
    with ray_engine(o, workers=2, threads=1) as engine:
        ranges = engine.ranges
        policy = np.zeros((n, R), dtype=np.int32)  # the reference's; the engine's stays in its actors
        want = jacobi_reference(game, V, ranges, lambda W, a, b: kernels.sweep(
            game, W, threads=1, start=a, stop=b, policy=policy, discount=float(np.float32(0.99))))
        got = V.copy()
        engine.sweep(got, policy=np.zeros((0, R), dtype=np.int32), discount=float(np.float32(0.99)))
        assert np.array_equal(got, want)
        want = jacobi_reference(game, want, ranges, lambda W, a, b: kernels.evaluate(
            game, policy, W, threads=1, start=a, stop=b))
        engine.evaluate(None, got)
        assert np.array_equal(got, want)
        marks = np.zeros(n, dtype=np.uint8)
        good = np.zeros(n, dtype=np.uint8)
        first = True
        while True:
            ref = good.copy()
            added_ref = 0
            for a, b in ranges:
                local = good.copy()
                added_ref += kernels.endless_pass(game, got, local, 1e-3, threads=1, first=first, start=a, stop=b)
                ref[a:b] = local[a:b]
            good = ref
            added = engine.endless_pass(got, marks, 1e-3, first=first)
            assert added == added_ref and np.array_equal(marks, good)
            first = False
            if not added:
                break


@needs_ray
def test_real_board_four_pieces_short_run_equals_the_reference(cluster, tmp_path) -> None:
    o = UrOptions(pieces=4)
    game = kernel(o)
    rng = np.random.default_rng(3)
    V = rng.uniform(-0.5, 0.5, game.state_count).astype(np.float32)
    g = float(np.float32(0.999))
    with ray_engine(o, workers=2, threads=1) as engine:
        ranges = engine.ranges
        cut = ranges[0][1]
        start, stop = cut - 60_000, cut + 60_000  # three sweeps of a part that both workers hold
        got = V.copy()
        want = V.copy()
        for _ in range(3):
            change = engine.sweep(got, start=start, stop=stop, discount=g)
            before = want.copy()
            want = jacobi_reference(game, want, [(max(a, start), min(b, stop)) for a, b in ranges],
                                    lambda W, a, b: kernels.sweep(game, W, threads=1, start=a, stop=b, discount=g))
            assert np.array_equal(got, want)
            assert change == pytest.approx(float(np.abs(want - before).max()), abs=0)
        assert np.array_equal(got[:start], V[:start]) and np.array_equal(got[stop:], V[stop:])
        assert not np.array_equal(got[start:stop], V[start:stop])


@needs_ray
def test_a_killed_worker_costs_its_range_not_the_run(cluster, tmp_path) -> None:
    o = mini_options(tmp_path, 4)
    game = kernel(o)
    one = solve_values(game, tmp_path / "one", o.header(), threads=1)
    lines: list[str] = []
    with ray_engine(o, workers=2, threads=1, log=lines.append) as engine:
        sweep, evaluate = engine.sweep, engine.evaluate
        calls = {"sweep": 0, "evaluate": 0}

        def killing_sweep(*a, **kw):
            calls["sweep"] += 1
            if calls["sweep"] == 3:
                ray.kill(engine.actors[0], no_restart=True)
            return sweep(*a, **kw)

        def killing_evaluate(*a, **kw):
            calls["evaluate"] += 1
            if calls["evaluate"] == 40:  # the new actor has no policy: it records one first
                ray.kill(engine.actors[1], no_restart=True)
            return evaluate(*a, **kw)

        engine.sweep, engine.evaluate = killing_sweep, killing_evaluate
        spread = solve_values(game, tmp_path / "ray", o.header(), engine=engine)
        assert engine.replaced == 2
    assert sum("lost" in line for line in lines) == 2
    assert any("recorded its policy again" in line for line in lines)
    assert spread.meta["endless_check"]["flagged"] == 0
    assert np.abs(spread.values - one.values).max() <= 2e-5


@needs_ray
def test_cli_solve_with_the_ray_backend(cluster, tmp_path) -> None:
    r = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "2", "--backend", "ray", "--workers", "2", "--threads", "1",
                                 "--out", str(tmp_path / "t"), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["start_value"] == 0 and out["states"] == kernel(UrOptions(pieces=2)).state_count
    header = json.loads((tmp_path / "t" / "header.json").read_text())
    assert header["meta"]["backend"] == "ray"


@pytest.mark.parametrize("args, words", [
    (["--method", "policy"], "'policy' is not one of 'walk', 'sweeps'"),  # the experimental method is gone
    (["--address", "10.0.0.1:6379"], "--address applies to --backend ray"),
    (["--workers", "2"], "--workers applies to --backend ray"),
])
def test_cli_backend_errors(tmp_path, args, words) -> None:
    r = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "1", "--out", str(tmp_path / "t"), *args])
    assert r.exit_code == 2 and words in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "t").exists()


def test_cli_ray_backend_without_ray_names_the_extra(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # 'import ray' now fails as if it were not installed
    r = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "1", "--backend", "ray", "--out", str(tmp_path / "t")])
    assert r.exit_code == 2 and 'pip install "gamesolver[ray]"' in r.output
    assert len(r.output.strip().splitlines()) == 1 and not (tmp_path / "t").exists()


@needs_ray
def test_workers_that_do_not_fit_the_cluster_are_refused(cluster) -> None:
    from gamesolver.solver.errors import InputError

    with pytest.raises(InputError, match="do not fit the Ray cluster's CPUs"):
        ray_engine(UrOptions(pieces=1), workers=3, threads=1)  # two CPUs: a third actor would wait for ever
    with pytest.raises(InputError, match="do not fit"):
        ray_engine(UrOptions(pieces=1), workers=1, threads=4)
    assert ray.is_initialized()  # the module's instance is not this engine's to stop


def test_an_address_where_no_cluster_listens_is_one_line_at_once() -> None:
    import socket

    from gamesolver.solver.backends.ray import reachable
    from gamesolver.solver.errors import InputError

    with socket.socket() as server:  # a port that listens, then one that surely does not
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        reachable(f"127.0.0.1:{port}")
    with pytest.raises(InputError, match="cannot reach the Ray cluster"):
        reachable(f"127.0.0.1:{port}")
    with pytest.raises(InputError, match="is not HOST:PORT"):
        reachable("head:port")
    reachable(None)
    reachable("auto")
