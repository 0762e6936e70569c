"""What the benchmarks share: a median wall time, and a scratch copy of the committed tree built
beside a reference's code. The scripts run as ``python benchmarks/x.py``, so this folder is on
the path."""
from __future__ import annotations

import importlib.util
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent


def timed(fn: Callable[[], object], repeats: int) -> float:
    """The median wall time of ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def scratch_build(scratch: Path, patch: Callable[[Path], None]) -> Path:
    """Unpack the committed tree (``git archive HEAD``) under ``scratch``, let ``patch`` add the
    reference's code to it (given the copy's root), build it in place (a minute or two on 2 cores)
    and return a folder to put on PYTHONPATH, whose ``gamesolver`` is that copy."""
    if importlib.util.find_spec("Cython") is None:  # (pip builds the project in an isolated environment)
        sys.exit("this benchmark builds a scratch copy of the project and needs Cython here: pip install cython")
    src = scratch / "src"
    src.mkdir()
    archive = scratch / "head.tar"
    subprocess.run(["git", "-C", str(REPO), "archive", "-o", str(archive), "HEAD"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(src, filter="data")
    patch(src)
    print("building the scratch copy (a minute or two) ...", file=sys.stderr)
    done = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=src, capture_output=True,
                          text=True)
    if done.returncode:
        sys.exit(f"the scratch copy did not build:\n{done.stderr[-4000:]}")
    pkg = scratch / "pkg" / "gamesolver"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for top in ("solver", "games", "data"):
        (pkg / top).symlink_to(src / top)
    return pkg.parent
