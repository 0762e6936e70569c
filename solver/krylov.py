"""BiCGSTAB for large non-symmetric systems given only a matrix-vector product.

Used to evaluate a fixed policy of a stochastic game exactly (V = c + A V, solved as
(I - A) V = c) where plain Gauss-Seidel sweeps would need thousands of passes because the games
last long. Written from van der Vorst's description (SIAM J. Sci. Stat. Comput. 13, 1992); the
vectors are float64 and updated in place, so the memory is eight vectors of the system's size.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

MatVec = Callable[[np.ndarray, np.ndarray], None]  # matvec(x, out): out = M x


@dataclass(frozen=True)
class KrylovResult:
    x: np.ndarray
    initial: float  # max |b - M x0|
    residual: float  # max |b - M x|, recomputed from x at the end
    matvecs: int
    converged: bool


def bicgstab(matvec: MatVec, b: np.ndarray, x0: np.ndarray, *, tol: float, maxiter: int = 1000) -> KrylovResult:
    """Solve ``M x = b`` until the largest residual entry is below ``tol`` (max norm).

    Stops early, with ``converged=False``, on ``maxiter`` iterations or a breakdown (a zero
    inner product); the caller keeps whatever ``x`` reached, which is never worse than useless
    because the caller checks it independently.
    """
    x = np.array(x0, dtype=np.float64)
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
    for _ in range(maxiter):
        if best < tol:
            break
        rho_new = float(r0 @ r)
        if rho_new == 0.0 or omega == 0.0:
            break
        beta = (rho_new / rho) * (alpha / omega)
        rho = rho_new
        # p = r + beta (p - omega v)
        p -= omega * v
        p *= beta
        p += r
        matvec(p, v)
        matvecs += 1
        denom = float(r0 @ v)
        if denom == 0.0:
            break
        alpha = rho / denom
        x += alpha * p
        np.subtract(r, alpha * v, out=s)
        if float(np.abs(s).max()) < tol:
            r[:] = s
            best = 0.0
            break
        matvec(s, t)
        matvecs += 1
        tt = float(t @ t)
        omega = float(t @ s) / tt if tt else 0.0
        x += omega * s
        np.subtract(s, omega * t, out=r)
        best = float(np.abs(r).max())
    matvec(x, r)
    matvecs += 1
    np.subtract(b, r, out=r)
    residual = float(np.abs(r).max())
    return KrylovResult(x, initial, residual, matvecs, residual < tol)
