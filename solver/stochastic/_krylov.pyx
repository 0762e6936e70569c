# cython: language_level=3
"""Fused vector steps of BiCGSTAB (``solver/stochastic/krylov.py``), float64, split across OpenMP threads.

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


cdef double total(const double* part, Py_ssize_t k, int stride) noexcept nogil:
    """The blocks' partial sums (every ``stride``-th entry), added in block order."""
    cdef double acc = 0.0
    cdef Py_ssize_t j
    for j in range(k):
        acc += part[j * stride]
    return acc


cdef double largest(const double* part, Py_ssize_t k, int stride) noexcept nogil:
    """The largest of the blocks' partial maxima; a NaN among them wins."""
    cdef double big = 0.0
    cdef Py_ssize_t j
    for j in range(k):
        if part[j * stride] > big or part[j * stride] != part[j * stride]:
            big = part[j * stride]
    return big


def dots(const double[::1] a, const double[::1] b, const double[::1] c=None, int threads=1) -> tuple:
    """``(a @ b, a @ c)`` in one pass (``a @ b`` alone without ``c``)."""
    cdef Py_ssize_t n = a.shape[0], k, i, j, lo
    check(n, b.shape[0], "b")
    cdef bint two = c is not None
    if two:
        check(n, c.shape[0], "c")
    k = nblocks(n)
    cdef double* part = partials(k, 2)
    cdef double ab, ac
    cdef int nt = max(1, threads)
    try:
        with nogil:
            for j in prange(k, schedule="static", num_threads=nt):
                lo = j * BLOCK
                ab = 0.0
                ac = 0.0
                for i in range(lo, min(n, lo + BLOCK)):
                    ab = ab + a[i] * b[i]
                    if two:
                        ac = ac + a[i] * c[i]
                part[2 * j] = ab
                part[2 * j + 1] = ac
        return total(part, k, 2), total(part + 1, k, 2)
    finally:
        free(part)


def dot(const double[::1] a, const double[::1] b, int threads=1) -> float:
    """``a @ b``."""
    return dots(a, b, None, threads=threads)[0]


def update(double[::1] out, const double[::1] a, double coef, const double[::1] b, double[::1] x=None,
           double alpha=0.0, const double[::1] p=None, const double[::1] r0=None, int threads=1) -> tuple:
    """``out = a - coef b``, and with ``x``: first ``x += alpha p`` then ``x += coef a``; returns
    ``(max |out|, r0 @ out)`` (0 for the second without ``r0``)."""
    cdef Py_ssize_t n = out.shape[0], k, i, j, lo
    check(n, a.shape[0], "a")
    check(n, b.shape[0], "b")
    cdef bint with_x = x is not None, with_r0 = r0 is not None
    if with_x:
        check(n, x.shape[0], "x")
        check(n, p.shape[0], "p")
    if with_r0:
        check(n, r0.shape[0], "r0")
    k = nblocks(n)
    cdef double* part = partials(k, 2)
    cdef double big, acc, w, xi
    cdef int nt = max(1, threads)
    try:
        with nogil:
            for j in prange(k, schedule="static", num_threads=nt):
                lo = j * BLOCK
                big = 0.0
                acc = 0.0
                for i in range(lo, min(n, lo + BLOCK)):
                    if with_x:
                        xi = x[i] + alpha * p[i]
                        x[i] = xi + coef * a[i]
                    w = a[i] - coef * b[i]
                    out[i] = w
                    if with_r0:
                        acc = acc + r0[i] * w
                    w = fabs(w)
                    if w > big or w != w:  # a NaN sticks, so that a breakdown is seen
                        big = w
                part[2 * j] = big
                part[2 * j + 1] = acc
        return largest(part, k, 2), total(part + 1, k, 2)
    finally:
        free(part)


def sub_scaled(const double[::1] r, double alpha, const double[::1] v, double[::1] out, int threads=1) -> float:
    """``out = r - alpha v``; returns ``max |out|``."""
    return update(out, r, alpha, v, threads=threads)[0]


def step(double[::1] x, double alpha, const double[::1] p, double omega, const double[::1] s,
         const double[::1] t, double[::1] r, const double[::1] r0, int threads=1) -> tuple:
    """The end of an iteration: ``x += alpha p`` then ``x += omega s``, ``r = s - omega t``;
    returns ``(max |r|, r0 @ r)``."""
    return update(r, s, omega, t, x, alpha, p, r0, threads=threads)


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
