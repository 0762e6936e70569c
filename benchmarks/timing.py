"""What the benchmarks share: a median wall time. The scripts run as ``python benchmarks/x.py``,
so this folder is on the path."""
from __future__ import annotations

import statistics
import time
from typing import Callable


def timed(fn: Callable[[], object], repeats: int) -> float:
    """The median wall time of ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
