# cython: language_level=3
"""Fused vector steps of BiCGSTAB (``solver/krylov.py``), float64, split across OpenMP threads.

NumPy spends about twenty passes over memory on one BiCGSTAB iteration (every ``a * x`` makes
a temporary), on one core; on the pair of the certified bounds (2N rows) those passes cost more
than the two products. These kernels do each step's arithmetic in one pass. Every reduction
(dot products, largest magnitudes) sums fixed blocks of ``BLOCK`` entries first and then the
blocks in order, so a result does not depend on how many threads ran it.
"""
from cython.parallel cimport prange
from libc.math cimport fabs
from libc.stdlib cimport free, malloc

DEF BLOCK = 32768


cdef inline Py_ssize_t nblocks(Py_ssize_t n) noexcept nogil:
    return (n + BLOCK - 1) // BLOCK


cdef double* partials(Py_ssize_t k, int many) except NULL:
    cdef double* p = <double*> malloc((k * many + 1) * sizeof(double))
    if p == NULL:
        raise MemoryError()
    return p


cdef void check(Py_ssize_t n, Py_ssize_t m, str what) except *:
    if n != m:
        raise ValueError(f"{what} must have {n} entries like the first vector; got {m}")


def dot(const double[::1] a, const double[::1] b, int threads=1) -> float:
    """``a @ b``."""
    cdef Py_ssize_t n = a.shape[0], k, i, j, lo, hi
    check(n, b.shape[0], "b")
    k = nblocks(n)
    cdef double* part = partials(k, 1)
    cdef double acc, total = 0.0
    cdef int nt = max(1, threads)
    try:
        with nogil:
            for j in prange(k, schedule="static", num_threads=nt):
                lo = j * BLOCK
                hi = min(n, lo + BLOCK)
                acc = 0.0
                for i in range(lo, hi):
                    acc = acc + a[i] * b[i]
                part[j] = acc
            for j in range(k):
                total += part[j]
        return total
    finally:
        free(part)


def dots(const double[::1] t, const double[::1] s, int threads=1) -> tuple:
    """``(t @ t, t @ s)`` in one pass."""
    cdef Py_ssize_t n = t.shape[0], k, i, j, lo, hi
    check(n, s.shape[0], "s")
    k = nblocks(n)
    cdef double* part = partials(k, 2)
    cdef double tt, ts, sum_tt = 0.0, sum_ts = 0.0
    cdef int nt = max(1, threads)
    try:
        with nogil:
            for j in prange(k, schedule="static", num_threads=nt):
                lo = j * BLOCK
                hi = min(n, lo + BLOCK)
                tt = 0.0
                ts = 0.0
                for i in range(lo, hi):
                    tt = tt + t[i] * t[i]
                    ts = ts + t[i] * s[i]
                part[2 * j] = tt
                part[2 * j + 1] = ts
            for j in range(k):
                sum_tt += part[2 * j]
                sum_ts += part[2 * j + 1]
        return sum_tt, sum_ts
    finally:
        free(part)


def sub_scaled(const double[::1] r, double alpha, const double[::1] v, double[::1] out, int threads=1) -> float:
    """``out = r - alpha v``; returns ``max |out|``."""
    cdef Py_ssize_t n = r.shape[0], k, i, j, lo, hi
    check(n, v.shape[0], "v")
    check(n, out.shape[0], "out")
    k = nblocks(n)
    cdef double* part = partials(k, 1)
    cdef double big, w, total = 0.0
    cdef int nt = max(1, threads)
    try:
        with nogil:
            for j in prange(k, schedule="static", num_threads=nt):
                lo = j * BLOCK
                hi = min(n, lo + BLOCK)
                big = 0.0
                for i in range(lo, hi):
                    w = r[i] - alpha * v[i]
                    out[i] = w
                    w = fabs(w)
                    if w > big or w != w:  # a NaN sticks, so that a breakdown is seen
                        big = w
                part[j] = big
            for j in range(k):
                if part[j] > total or part[j] != part[j]:
                    total = part[j]
        return total
    finally:
        free(part)


def step(double[::1] x, double alpha, const double[::1] p, double omega, const double[::1] s,
         const double[::1] t, double[::1] r, const double[::1] r0, int threads=1) -> tuple:
    """The end of an iteration: ``x += alpha p`` then ``x += omega s``, ``r = s - omega t``;
    returns ``(max |r|, r0 @ r)``."""
    cdef Py_ssize_t n = x.shape[0], k, i, j, lo, hi
    check(n, p.shape[0], "p")
    check(n, s.shape[0], "s")
    check(n, t.shape[0], "t")
    check(n, r.shape[0], "r")
    check(n, r0.shape[0], "r0")
    k = nblocks(n)
    cdef double* part = partials(k, 2)
    cdef double big, acc, w, xi, total = 0.0, rho = 0.0
    cdef int nt = max(1, threads)
    try:
        with nogil:
            for j in prange(k, schedule="static", num_threads=nt):
                lo = j * BLOCK
                hi = min(n, lo + BLOCK)
                big = 0.0
                acc = 0.0
                for i in range(lo, hi):
                    xi = x[i] + alpha * p[i]
                    x[i] = xi + omega * s[i]
                    w = s[i] - omega * t[i]
                    r[i] = w
                    acc = acc + r0[i] * w
                    w = fabs(w)
                    if w > big or w != w:
                        big = w
                part[2 * j] = big
                part[2 * j + 1] = acc
            for j in range(k):
                if part[2 * j] > total or part[2 * j] != part[2 * j]:
                    total = part[2 * j]
                rho += part[2 * j + 1]
        return total, rho
    finally:
        free(part)


def direction(double[::1] p, const double[::1] r, const double[::1] v, double beta, double omega, int threads=1):
    """``p = r + beta (p - omega v)``."""
    cdef Py_ssize_t n = p.shape[0], i
    check(n, r.shape[0], "r")
    check(n, v.shape[0], "v")
    cdef int nt = max(1, threads)
    with nogil:
        for i in prange(n, schedule="static", num_threads=nt):
            p[i] = r[i] + beta * (p[i] - omega * v[i])


def axpy(double[::1] x, double alpha, const double[::1] p, int threads=1):
    """``x += alpha p``."""
    cdef Py_ssize_t n = x.shape[0], i
    check(n, p.shape[0], "p")
    cdef int nt = max(1, threads)
    with nogil:
        for i in prange(n, schedule="static", num_threads=nt):
            x[i] = x[i] + alpha * p[i]
