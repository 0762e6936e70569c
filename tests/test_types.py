"""mypy over the package: solver/ and games/ type-check clean under pyproject's [tool.mypy].

The source tree installs as ``gamesolver.solver`` and ``gamesolver.games`` (setup.py maps the
folders), so mypy reads it through a ``gamesolver/`` folder of links made for the run."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_is_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    api = pytest.importorskip("mypy.api", reason="mypy is in the test extra: pip install -e '.[test]'")
    package = tmp_path / "gamesolver"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for top in ("solver", "games", "data"):
        (package / top).symlink_to(ROOT / top, target_is_directory=True)
    monkeypatch.chdir(tmp_path)  # mypy finds the package where it runs
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache"),
                                "--no-error-summary", "-p", "gamesolver.solver", "-p", "gamesolver.games"])
    assert status == 0, out + err
