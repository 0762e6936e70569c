"""BiCGSTAB's fused vector steps (solver/stochastic/_krylov.pyx) against the plain NumPy steps they replace,
on random vectors of lengths that end inside a block, and the whole solve both ways."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.solver.stochastic import _krylov
from gamesolver.solver.stochastic.krylov import NumpyOps, bicgstab

# lengths around the kernels' block of 32,768 entries: one block, a part block, several blocks
LENGTHS = st.sampled_from([1, 2, 7, 1000, 32767, 32768, 32769, 100_003])
SCALARS = st.floats(-3.0, 3.0, allow_nan=False)


def vectors(seed: int, n: int, k: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(n) * rng.choice([1e-9, 1.0, 1e3]) for _ in range(k)]


def close(a: float, b: float, scale: float) -> bool:
    return abs(a - b) <= 1e-12 * scale + 1e-300


def near(a: np.ndarray, b: np.ndarray, *terms: np.ndarray) -> bool:
    """Equal up to a few roundings of the terms summed (a compiler may fuse a multiply-add)."""
    return bool(np.all(np.abs(a - b) <= 4 * np.finfo(float).eps * sum(np.abs(t) for t in terms)))


@settings(max_examples=40, deadline=None)
@given(LENGTHS, st.integers(0, 2**32 - 1), SCALARS, SCALARS, st.integers(1, 3))
def test_fused_steps_equal_numpy(n: int, seed: int, alpha: float, omega: float, threads: int) -> None:
    a, b, c, d, e = vectors(seed, n, 5)
    # dot products: equal up to the rounding of a different summation order
    scale = float(np.abs(a) @ np.abs(b))
    assert close(_krylov.dot(a, b, threads=threads), NumpyOps.dot(a, b), scale)
    tt, ts = _krylov.dots(a, a, b, threads=threads)
    rt, rs = NumpyOps.dots(a, a, b)
    assert close(tt, rt, float(a @ a)) and close(ts, rs, scale)
    # elementwise steps: the same arithmetic in the same order
    s1, s2 = np.empty(n), np.empty(n)
    m1 = _krylov.sub_scaled(a, alpha, b, s1, threads=threads)
    m2 = NumpyOps.sub_scaled(a, alpha, b, s2)
    assert near(s1, s2, a, alpha * b) and m1 == float(np.abs(s1).max()) and close(m1, m2, m2)
    x1, x2 = c.copy(), c.copy()
    r1, r2 = np.empty(n), np.empty(n)
    big1, rho1 = _krylov.step(x1, alpha, a, omega, b, d, r1, e, threads=threads)
    big2, rho2 = NumpyOps.step(x2, alpha, a, omega, b, d, r2, e)
    assert near(x1, x2, c, alpha * a, omega * b) and near(r1, r2, b, omega * d)
    assert big1 == float(np.abs(r1).max()) and close(big1, big2, big2)
    assert close(rho1, rho2, float(np.abs(e) @ (np.abs(b) + np.abs(omega * d))))
    p1, p2 = a.copy(), a.copy()
    _krylov.direction(p1, b, c, alpha, omega, threads=threads)
    NumpyOps.direction(p2, b, c, alpha, omega)
    assert near(p1, p2, b, alpha * a, alpha * omega * c)
    y1, y2 = c.copy(), c.copy()
    _krylov.axpy(y1, alpha, a, threads=threads)
    NumpyOps.axpy(y2, alpha, a)
    assert near(y1, y2, c, alpha * a)


def test_reductions_do_not_depend_on_the_thread_count() -> None:
    a, b, c, d, e = vectors(7, 100_003, 5)
    assert len({_krylov.dot(a, b, threads=t) for t in (1, 2, 3, 5)}) == 1
    assert len({_krylov.dots(a, a, b, threads=t) for t in (1, 2, 3, 5)}) == 1
    got = set()
    for t in (1, 2, 3, 5):
        x, r = c.copy(), np.empty_like(c)
        got.add(_krylov.step(x, 0.3, a, -0.7, b, d, r, e, threads=t))
    assert len(got) == 1


def test_largest_magnitude_sees_nan() -> None:
    a = np.zeros(40_000)
    a[35_000] = np.nan
    out = np.empty_like(a)
    assert np.isnan(_krylov.sub_scaled(a, 1.0, np.zeros_like(a), out))


def test_mismatched_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="entries"):
        _krylov.dot(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="ops must be one of"):
        bicgstab(lambda x, out: None, np.zeros(2), np.zeros(2), tol=1e-9, ops="blas")


@settings(max_examples=15, deadline=None)
@given(st.integers(2, 80), st.integers(0, 2**32 - 1), st.integers(1, 2))
def test_fused_and_numpy_solves_agree(size: int, seed: int, threads: int) -> None:
    rng = np.random.default_rng(seed)
    A = rng.random((size, size)) * (rng.random((size, size)) < 0.3) * rng.choice([-1, 1], (size, size))
    A *= 0.95 / np.maximum(np.abs(A).sum(axis=1, keepdims=True), 1e-12)
    M = np.eye(size) - A
    b = rng.random(size) * 2 - 1
    exact = np.linalg.solve(M, b)
    for ops in ("fused", "numpy"):
        res = bicgstab(lambda x, out: np.matmul(M, x, out=out), b, np.zeros(size), tol=1e-11, maxiter=500,
                       threads=threads, ops=ops)
        assert res.converged, ops
        assert np.allclose(res.x, exact, atol=1e-9), ops


def test_a_stagnating_solve_stops_after_the_stall_window() -> None:
    """A singular system with no solution (a closed loop of two states that hand each other all
    their value, and a constant that asks for a gain): the residual never halves again, and with
    ``stall`` the solve gives up after that many iterations instead of running to ``maxiter``."""
    size = 40
    rng = np.random.default_rng(3)
    A = rng.random((size, size)) * 0.9 / size
    A[:2] = 0.0
    A[0, 1] = A[1, 0] = 1.0
    M = np.eye(size) - A
    b = rng.random(size)
    b[:2] = 1.0
    mv = lambda x, out: np.matmul(M, x, out=out)  # noqa: E731
    slow = bicgstab(mv, b, np.zeros(size), tol=1e-12, maxiter=3000)
    quick = bicgstab(mv, b, np.zeros(size), tol=1e-12, maxiter=3000, stall=50)
    assert not slow.converged and not quick.converged
    assert quick.matvecs < 200 < slow.matvecs
    # a solvable system is untouched by the same window
    A[0, 1] = A[1, 0] = 0.5
    M = np.eye(size) - A
    ok = bicgstab(lambda x, out: np.matmul(M, x, out=out), b, np.zeros(size), tol=1e-11, maxiter=3000, stall=50)
    assert ok.converged and np.allclose(M @ ok.x, b, atol=1e-9)
