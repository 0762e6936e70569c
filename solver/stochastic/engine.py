"""What the solve asks of an engine, the object that sweeps a dice game's values: the in-process
ones (``outcomes.Regenerated``, which generates every state's outcomes in each sweep, and
``outcomes.StoredGraph``, which reads them ranked once), ``backends.ray.RayEngine`` (rank ranges on
Ray actors) and ``backends.gpu.driver.GpuEngine`` (a CUDA device). Each module checks under
``TYPE_CHECKING`` that its engine implements ``Engine``, so mypy holds all four to one interface.

Beyond it an engine may say what more it can do, read with ``getattr(engine, NAME, False)``:
``skips`` (``sweep`` takes the skip test's arrays: ``solver.stochastic.skip``), ``subset_sweeps``
(``sweep`` takes ``subset=``: a list of ranks alone), ``subset_rows`` (such a sweep records the
subset's rows in an array of their own, ``subset_rows=``, instead of the policy), ``hot_sets`` (``evaluate`` takes ``subset``,
``mark`` and ``above``: the walk's hot rounds) and ``device_hot_sets`` (``hot_set``: the hot set
found where the values are).
"""
from __future__ import annotations

from typing import Any, Callable, Protocol

import numpy as np


Log = Callable[[str], None]  # where a solve says what it does, a line at a time


class Engine(Protocol):
    @property
    def stored(self) -> bool:
        """Whether the sweeps read a stored graph (the proof may then read it too)."""
        ...

    @property
    def nbytes(self) -> int:
        """Memory the engine holds for the graph, beside the values."""
        ...

    def sweep(self, V: np.ndarray, threads: int = ..., start: int = ..., stop: int = ..., write: bool = ...,
              policy: np.ndarray | None = ..., discount: float = ...) -> float:
        """A Gauss-Seidel sweep over ranks start..stop-1 (``write=False``: only the largest
        change, the residual), recording the greedy policy where ``policy`` is given; returns the
        largest change."""
        ...

    def evaluate(self, policy: np.ndarray, V: np.ndarray, threads: int = ..., discount: float = ...) -> float:
        """A sweep of the fixed ``policy``; returns the largest change."""
        ...

    def endless_pass(self, V: np.ndarray, good: np.ndarray, eps: float, threads: int = ...,
                     first: bool = ...) -> int:
        """One pass of the endless check over the marks ``good``; returns how many it changed."""
        ...

    def policy_apply(self, policy: np.ndarray, x: np.ndarray, out: np.ndarray, **kw: Any) -> None:
        """``out`` = the fixed policy's operator applied to ``x``."""
        ...


class SubsetSweeps(Engine, Protocol):
    """An engine whose ``sweep`` takes ``subset=`` (``subset_sweeps``): the ranks to back up alone."""

    def sweep(self, V: np.ndarray, threads: int = ..., start: int = ..., stop: int = ..., write: bool = ...,
              policy: np.ndarray | None = ..., discount: float = ..., *, subset: np.ndarray | None = ...) -> float:
        ...


class HotSets(Engine, Protocol):
    """An engine whose ``evaluate`` takes the walk's hot-set arrays (``hot_sets``): ``mark``
    receives the states it changed by more than ``above``; ``subset`` sweeps those alone."""

    def evaluate(self, policy: np.ndarray, V: np.ndarray, threads: int = ..., discount: float = ..., *,
                 subset: Any = ..., mark: np.ndarray | None = ..., above: float = ...) -> float:
        ...


class DeviceHotSets(HotSets, Protocol):
    """An engine that marks and gathers a hot set in its own memory (``device_hot_sets``): returns
    the sweep's largest change, the set (in the engine's form, for ``evaluate(subset=)``) and its
    size."""

    def hot_set(self, policy: np.ndarray, V: np.ndarray, threads: int = ..., discount: float = ...,
                above: float = ..., most: int | None = ...) -> tuple[float, Any, int]:
        ...
