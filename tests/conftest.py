import os

import pytest


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Tests never touch the user's table cache."""
    monkeypatch.setenv("SOLVER_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
    yield
