"""The digest that lets a GPU session use a wheel built beforehand (benchmarks/source_digest.py):
what a build makes leaves it alone, any change to a source moves it."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("source_digest", ROOT / "benchmarks" / "source_digest.py")
source_digest = importlib.util.module_from_spec(spec)
spec.loader.exec_module(source_digest)


def tree(root: Path) -> Path:
    for name, text in {"setup.py": "setup()", "pyproject.toml": "[project]", "solver/a.py": "x = 1",
                       "solver/k.pyx": "cdef int y", "games/ur/b.py": "z = 2", "data/c.json": "{}",
                       "games/web/static/index.html": "<p>"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_build_outputs_leave_the_digest_alone_and_sources_move_it(tmp_path) -> None:
    root = tree(tmp_path)
    first = source_digest.digest(root)
    for made in ("solver/k.c", "solver/k.cpython-312-x86_64-linux-gnu.so", "solver/__pycache__/a.cpython-312.pyc",
                 "solver/k.html", "build/lib/x.py", "README.md"):
        (root / made).parent.mkdir(parents=True, exist_ok=True)
        (root / made).write_text("built")
    assert source_digest.digest(root) == first
    changes = [lambda: (root / "solver/a.py").write_text("x = 2"),            # a source's text
               lambda: (root / "solver/a.py").rename(root / "solver/a2.py"),  # its name
               lambda: (root / "data/d.json").write_text("{}"),               # a new data file
               lambda: (root / "games/web/static/index.html").write_text("<b>")]  # the page (an .html kept)
    seen = {first}
    for change in changes:
        change()
        now = source_digest.digest(root)
        assert now not in seen
        seen.add(now)


def test_the_repositorys_digest_is_stable() -> None:
    assert source_digest.digest() == source_digest.digest() and len(source_digest.digest()) == 64
