# cython: language_level=3
"""Ball-count boards packed into one integer, and back (vectorized).

Board encoding (used by every Ünee table, version 1). A board is a vector of ``H`` ball counts
``c[0..H-1]`` with total ``s``. Boards are ordered first by ``s`` (all boards with fewer balls
come first: there are C(s+H-1, H) of them), then inside the layer by the colexicographic rank of
the stars-and-bars positions ``p_i = c_0 + ... + c_i + i`` (i = 0..H-2):

    rank(c) = C(s+H-1, H) + sum_{i=0}^{H-2} C(p_i, i+1)

so the boards with at most ``B`` balls are exactly the ranks 0 .. C(B+H, H)-1 and each layer
(balls on the board) is one contiguous range.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t
from libc.stdlib cimport malloc, free

from gamesolver.solver.encoding._comb cimport board_rank

cnp.import_array()


def binomial_table(int nmax, int kmax):
    """``binom[n, k] = C(n, k)`` for 0 <= n <= nmax, 0 <= k <= kmax, as int64 (C order)."""
    cdef cnp.ndarray[int64_t, ndim=2] b = np.zeros((nmax + 1, kmax + 1), dtype=np.int64)
    cdef int n, k
    for n in range(nmax + 1):
        b[n, 0] = 1
        for k in range(1, min(n, kmax) + 1):
            b[n, k] = b[n - 1, k - 1] + (b[n - 1, k] if k <= n - 1 else 0)
    return b


def board_count(int holes, int max_balls):
    """Number of boards of ``holes`` holes holding 0..max_balls balls: C(max_balls+holes, holes)."""
    return int(binomial_table(max_balls + holes, holes)[max_balls + holes, holes])


def layer_offsets(int holes, int max_balls):
    """``off[s]`` = first rank of the layer with ``s`` balls; ``off[max_balls+1]`` = board count."""
    b = binomial_table(max_balls + holes, holes)
    return np.array([b[s + holes - 1, holes] if s > 0 else 0 for s in range(max_balls + 2)], dtype=np.int64)


def rank_boards(counts, int max_balls):
    """Ranks of boards given as an (M, H) integer array of ball counts (vectorized)."""
    cdef cnp.ndarray[int64_t, ndim=2] c = np.ascontiguousarray(counts, dtype=np.int64)
    cdef Py_ssize_t m = c.shape[0], j
    cdef int holes = c.shape[1], i, total, bad = 0
    if holes < 2:
        raise ValueError("a board needs at least 2 holes")
    cdef cnp.ndarray[int64_t, ndim=2] b = binomial_table(max_balls + holes, holes)
    cdef int stride = holes + 1
    cdef const int64_t* bp = &b[0, 0]
    cdef cnp.ndarray[int64_t, ndim=1] out = np.empty(m, dtype=np.int64)
    cdef int* row = <int*> malloc(holes * sizeof(int))
    try:
        with nogil:
            for j in range(m):
                total = 0
                for i in range(holes):
                    if c[j, i] < 0:
                        bad = 1
                    row[i] = <int> c[j, i]
                    total += row[i]
                if bad or total > max_balls:
                    bad = 1
                    break
                out[j] = board_rank(bp, stride, row, holes)
    finally:
        free(row)
    if bad:
        raise ValueError(f"board outside the encoding (negative count or more than {max_balls} balls)")
    return out


def unrank_boards(ranks, int holes, int max_balls):
    """Ball counts (M, H) int16 of the given ranks (vectorized inverse of ``rank_boards``)."""
    cdef cnp.ndarray[int64_t, ndim=1] r = np.ascontiguousarray(ranks, dtype=np.int64).reshape(-1)
    cdef cnp.ndarray[int64_t, ndim=2] b = binomial_table(max_balls + holes, holes)
    cdef int64_t total_boards = b[max_balls + holes, holes]
    if r.shape[0] and (r.min() < 0 or r.max() >= total_boards):
        raise ValueError(f"rank outside 0..{total_boards - 1}")
    cdef Py_ssize_t m = r.shape[0], j
    cdef cnp.ndarray[int16_t, ndim=2] out = np.empty((m, holes), dtype=np.int16)
    cdef int s, i, p, prev
    cdef int64_t rest
    cdef int* bars = <int*> malloc(holes * sizeof(int))
    try:
        with nogil:
            for j in range(m):
                rest = r[j]
                s = 0
                while s < max_balls and b[s + holes, holes] <= rest:
                    s += 1
                if s > 0:
                    rest -= b[s + holes - 1, holes]
                p = s + holes - 2
                for i in range(holes - 2, -1, -1):
                    while b[p, i + 1] > rest:
                        p -= 1
                    bars[i] = p
                    rest -= b[p, i + 1]
                    p -= 1
                prev = -1
                for i in range(holes - 1):
                    out[j, i] = bars[i] - prev - 1
                    prev = bars[i]
                out[j, holes - 1] = s + holes - 2 - prev
    finally:
        free(bars)
    return out
