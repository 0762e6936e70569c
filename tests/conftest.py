import os

import pytest

# Where the suite runs in parallel workers (pytest-xdist, ``-n auto --dist loadfile``; not the
# default, see pyproject.toml). The kernels' OpenMP threads then share the cores with
# the other worker's, and libgomp's default of spinning while it waits for work wastes the cores
# the other worker needs (the four-piece mirror test: 83 s spinning, 32 s passive, two workers on
# two cores). So a worker's threads sleep while they wait, unless the caller chose otherwise; it
# must be set before the first kernel loads libgomp, which reads it once, hence here. Subprocesses
# that the tests start inherit it.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's: harmless where it is not installed
def pytest_xdist_auto_num_workers(config):
    """``-n auto``: a worker a core, at most 4 (each worker's tests take a few GiB at their peak
    and most of them run two threads of their own)."""
    from gamesolver.solver.stochastic.planning import default_threads  # the cores the solver counts as its own

    return min(4, default_threads())


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Tests never touch the user's table cache."""
    monkeypatch.setenv("SOLVER_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
    yield
