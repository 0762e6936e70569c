"""BiCGSTAB for large non-symmetric systems given only a matrix-vector product.

Used to evaluate a fixed policy of a stochastic game exactly (V = c + A V, solved as
(I - A) V = c) where plain Gauss-Seidel sweeps would need thousands of passes because the games
last long. Written from van der Vorst's description (SIAM J. Sci. Stat. Comput. 13, 1992); the
vectors are float64 and updated in place, so the memory is eight vectors of the system's size.

The vector arithmetic of an iteration runs in fused passes (``solver/stochastic/_krylov.pyx``: one pass
over memory a step, split across ``threads``), and ``ops="numpy"`` runs the same steps in plain
NumPy, the slow reference the tests hold the kernels to.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from gamesolver.solver.stochastic import _krylov

MatVec = Callable[[np.ndarray, np.ndarray], None]  # matvec(x, out): out = M x


@dataclass(frozen=True)
class KrylovResult:
    x: np.ndarray
    initial: float  # max |b - M x0|
    residual: float  # max |b - M x|, recomputed from x at the end
    matvecs: int
    converged: bool


class NumpyOps:
    """The iteration's vector steps in plain NumPy (the reference for ``_krylov``)."""

    @staticmethod
    def dot(a: np.ndarray, b: np.ndarray, threads: int = 1) -> float:
        return float(a @ b)

    @staticmethod
    def dots(a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None, threads: int = 1) -> tuple[float, float]:
        return float(a @ b), (float(a @ c) if c is not None else 0.0)

    @staticmethod
    def sub_scaled(r: np.ndarray, alpha: float, v: np.ndarray, out: np.ndarray, threads: int = 1) -> float:
        np.subtract(r, alpha * v, out=out)
        return float(np.abs(out).max())

    @staticmethod
    def step(x: np.ndarray, alpha: float, p: np.ndarray, omega: float, s: np.ndarray, t: np.ndarray,
             r: np.ndarray, r0: np.ndarray, threads: int = 1) -> tuple[float, float]:
        x += alpha * p
        x += omega * s
        np.subtract(s, omega * t, out=r)
        return float(np.abs(r).max()), float(r0 @ r)

    @staticmethod
    def direction(p: np.ndarray, r: np.ndarray, v: np.ndarray, beta: float, omega: float, threads: int = 1) -> None:
        p -= omega * v
        p *= beta
        p += r

    @staticmethod
    def axpy(x: np.ndarray, alpha: float, p: np.ndarray, threads: int = 1) -> None:
        x += alpha * p


OPS: dict[str, Any] = {"fused": _krylov, "numpy": NumpyOps}  # the same steps, kernels or NumPy


def bicgstab(matvec: MatVec, b: np.ndarray, x0: np.ndarray, *, tol: float, maxiter: int = 1000,
             threads: int = 1, ops: str = "fused", stall: int = 0) -> KrylovResult:
    """Solve ``M x = b`` until the largest residual entry is below ``tol`` (max norm).

    Stops early, with ``converged=False``, on ``maxiter`` iterations or a breakdown (a zero
    inner product); the caller keeps whatever ``x`` reached, which is never worse than useless
    because the caller checks it independently. ``threads``: for the vector steps (the product
    has its own); ``ops``: ``fused`` (``solver/stochastic/_krylov.pyx``) or ``numpy`` (the reference).
    ``stall``: also stop (``converged=False``) when that many iterations have not halved the
    lowest residual seen before them (0: never): a system whose play almost never ends can
    stagnate for all of ``maxiter``.
    """
    if ops not in OPS:
        raise ValueError(f"ops must be one of {sorted(OPS)}; got {ops!r}")
    K = OPS[ops]
    nt = max(1, int(threads))
    x = np.array(x0, dtype=np.float64)
    b = np.ascontiguousarray(b, dtype=np.float64)
    r = np.empty_like(x)
    matvec(x, r)
    np.subtract(b, r, out=r)
    matvecs = 1
    r0 = r.copy()
    p = np.zeros_like(x)
    v = np.zeros_like(x)
    s = np.empty_like(x)
    t = np.empty_like(x)
    rho = alpha = omega = 1.0
    best = initial = float(np.abs(r).max())
    rho_new = K.dot(r0, r, threads=nt)
    lowest, mark, since = best, best, 0
    for _ in range(maxiter):
        if best < tol:
            break
        lowest = min(lowest, best)
        since += 1
        if stall and since > stall:
            if lowest > mark / 2:
                break
            mark, since = lowest, 0
        if rho_new == 0.0 or omega == 0.0:
            break
        beta = (rho_new / rho) * (alpha / omega)
        rho = rho_new
        K.direction(p, r, v, beta, omega, threads=nt)  # p = r + beta (p - omega v)
        matvec(p, v)
        matvecs += 1
        denom = K.dot(r0, v, threads=nt)
        if denom == 0.0:
            break
        alpha = rho / denom
        if K.sub_scaled(r, alpha, v, s, threads=nt) < tol:  # s = r - alpha v
            K.axpy(x, alpha, p, threads=nt)
            r[:] = s
            best = 0.0
            break
        matvec(s, t)
        matvecs += 1
        tt, ts = K.dots(t, t, s, threads=nt)
        omega = ts / tt if tt else 0.0
        best, rho_new = K.step(x, alpha, p, omega, s, t, r, r0, threads=nt)  # x += alpha p + omega s, r = s - omega t
    matvec(x, r)
    matvecs += 1
    np.subtract(b, r, out=r)
    residual = float(np.abs(r).max())
    return KrylovResult(x, initial, residual, matvecs, residual < tol)
