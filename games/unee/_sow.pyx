# cython: language_level=3
"""Sowing (mancala) move generation and whole-graph construction, in the mover-relative view.

A state is a board ``c[0..H-1]`` (H = 2 * holes per row) listed in sowing order starting with the
mover's first hole: ``c[0..n-1]`` is the mover's row, ``c[n..H-1]`` the opponent's. A move from
hole ``i < n`` lifts its balls and drops them one per hole from ``i+1`` on, around the ring
(skipping the origin when ``skip_origin``). If the last ball lands in a hole that then holds
exactly ``capture_count`` balls, in the mover's row (or in any row with ``capture_both``), those
balls are captured. The successor is seen from the opponent, who moves next: rotate by ``n``.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t
from libc.stdlib cimport malloc, free

from gamesolver.solver.encoding._comb cimport board_rank
from gamesolver.solver.encoding._boards import binomial_table, unrank_boards

cnp.import_array()

DEF MAXH = 64


cdef inline int sow(int* c, int holes, int i, bint skip_origin, bint capture_both, int capture_count) noexcept nogil:
    """Sow from hole ``i`` in place; return balls captured (0 or capture_count)."""
    cdef int n = holes // 2, k = c[i], ring, q, r, j, last, h
    c[i] = 0
    if skip_origin:
        ring = holes - 1
        q = k // ring
        r = k - q * ring
        if q:
            for j in range(holes):
                if j != i:
                    c[j] += q
        for j in range(1, r + 1):
            c[(i + j) % holes] += 1
        last = (i + r) % holes if r else (i + holes - 1) % holes
    else:
        q = k // holes
        r = k - q * holes
        if q:
            for j in range(holes):
                c[j] += q
        for j in range(1, r + 1):
            c[(i + j) % holes] += 1
        last = (i + k) % holes
    if (capture_both or last < n) and c[last] == capture_count:
        c[last] = 0
        return capture_count
    return 0


def sow_move(board, int hole, bint skip_origin=False, bint capture_both=False, int capture_count=4):
    """One move on a mover-relative board: returns (successor board seen by the opponent, captured)."""
    cdef int holes = len(board), n = holes // 2, j, got
    cdef int c[MAXH]
    if holes < 2 or holes % 2 or holes > MAXH:
        raise ValueError("a board has an even number of holes (2..64)")
    if not 0 <= hole < n:
        raise ValueError(f"hole {hole} is not in the mover's row (0..{n - 1})")
    for j in range(holes):
        c[j] = int(board[j])
    if c[hole] <= 0:
        raise ValueError(f"hole {hole} is empty")
    got = sow(c, holes, hole, skip_origin, capture_both, capture_count)
    return [c[(j + n) % holes] for j in range(holes)], got


cdef int64_t sow_range(int holes, int s, int64_t count, int* bars, const int64_t* bp, int stride,
                       bint skip_origin, bint capture_both, int capture_count, bint relative,
                       int64_t* ip, int32_t* sv, int8_t* hv, int8_t* cv, int64_t x, int64_t e) noexcept nogil:
    """Moves of ``count`` consecutive boards of the layer with ``s`` balls, from the one whose
    stars-and-bars positions are ``bars`` (advanced in place, colex order = rank order).

    Board ``x`` (x = the first index given, counting up) gets ``ip[x] = e``; each move writes the
    successor's rank (the global rank, or with ``relative`` the rank inside its own layer), the
    hole and the balls captured at edge ``e`` (counting up). Returns the next free edge."""
    cdef int n = holes // 2, i, j, prev, got, total
    cdef int c[MAXH]
    cdef int w[MAXH]
    cdef int rot[MAXH]
    cdef int64_t done = 0, r
    while done < count:
        prev = -1
        for i in range(holes - 1):
            c[i] = bars[i] - prev - 1
            prev = bars[i]
        c[holes - 1] = s + holes - 2 - prev
        ip[x] = e
        for i in range(n):
            if c[i] == 0:
                continue
            for j in range(holes):
                w[j] = c[j]
            got = sow(w, holes, i, skip_origin, capture_both, capture_count)
            for j in range(holes):
                rot[j] = w[(j + n) % holes]
            r = board_rank(bp, stride, rot, holes)
            if relative:
                total = s - got
                r -= bp[(total + holes - 1) * stride + holes] if total > 0 else 0
            sv[e] = <int32_t> r
            hv[e] = <int8_t> i
            cv[e] = <int8_t> got
            e += 1
        x += 1
        done += 1
        # colex successor of the bar positions (the last board of the layer has none)
        i = 0
        while i < holes - 1 and bars[i] + 1 == bars[i + 1]:
            i += 1
        if i >= holes - 1:
            break
        bars[i] += 1
        for j in range(i):
            bars[j] = j
    ip[x] = e
    return e


def build_sowing_graph(int holes_per_row, int max_balls, bint skip_origin=False, bint capture_both=False,
                       int capture_count=4):
    """Successor CSR of every board with up to ``max_balls`` balls.

    Returns ``(indptr int64[N+1], succ int32[E], hole int8[E], captured int8[E])``; the edges of
    state ``x`` are ``indptr[x]:indptr[x+1]``, in increasing hole order. A state with no edge is
    terminal (the mover's row is empty).
    """
    cdef int holes = 2 * holes_per_row, n = holes_per_row
    if holes_per_row < 1 or holes > MAXH:
        raise ValueError("holes per row must be 1..32")
    cdef cnp.ndarray[int64_t, ndim=2] bt = binomial_table(max_balls + holes, holes)
    cdef int64_t total = bt[max_balls + holes, holes]
    if total * n >= 2 ** 31 - 1:
        raise ValueError("state space too large for 32-bit successor ids")
    cdef const int64_t* bp = &bt[0, 0]
    cdef int stride = holes + 1
    cdef cnp.ndarray[int64_t, ndim=1] indptr = np.empty(total + 1, dtype=np.int64)
    cdef cnp.ndarray[int32_t, ndim=1] succ = np.empty(total * n, dtype=np.int32)
    cdef cnp.ndarray[int8_t, ndim=1] hole = np.empty(total * n, dtype=np.int8)
    cdef cnp.ndarray[int8_t, ndim=1] capt = np.empty(total * n, dtype=np.int8)
    cdef int bars[MAXH]
    cdef int s, i
    cdef int64_t x = 0, e = 0, size
    with nogil:
        for s in range(max_balls + 1):
            for i in range(holes - 1):
                bars[i] = i
            bars[holes - 1] = s + holes - 1
            size = bp[(s + holes - 1) * stride + holes - 1]  # boards with exactly s balls: C(s+H-1, H-1)
            e = sow_range(holes, s, size, bars, bp, stride, skip_origin, capture_both, capture_count, False,
                          &indptr[0], &succ[0], &hole[0], &capt[0], x, e)
            x += size
    return indptr, succ[:e].copy(), hole[:e].copy(), capt[:e].copy()


def build_layer_graph(int holes_per_row, int balls, int64_t start=0, int64_t stop=-1, bint skip_origin=False,
                      bint capture_both=False, int capture_count=4):
    """Successor CSR of the boards with exactly ``balls`` balls whose rank inside that layer is in
    ``start:stop`` (all of the layer by default), without building anything else.

    Returns ``(indptr int64[M+1], succ int32[E], hole int8[E], captured int8[E])`` with
    ``indptr`` counted from the range's first board and ``succ`` the successor's rank inside its
    own layer (``balls - captured`` balls), so a layer of a variant far too large for one
    machine's whole graph can be built alone, or in rank ranges on several machines.
    """
    cdef int holes = 2 * holes_per_row, n = holes_per_row, i, prev
    if holes_per_row < 1 or holes > MAXH:
        raise ValueError("holes per row must be 1..32")
    if balls < 0:
        raise ValueError("balls must be >= 0")
    cdef cnp.ndarray[int64_t, ndim=2] bt = binomial_table(balls + holes, holes)
    cdef const int64_t* bp = &bt[0, 0]
    cdef int stride = holes + 1
    cdef int64_t size = bt[balls + holes - 1, holes - 1]
    if stop < 0 or stop > size:
        stop = size
    if not 0 <= start <= stop:
        raise ValueError(f"rank range {start}:{stop} is not inside the layer (0..{size})")
    if size > 2 ** 31 - 1:
        raise ValueError("layer too large for 32-bit successor ids")
    cdef int64_t count = stop - start
    cdef cnp.ndarray[int64_t, ndim=1] indptr = np.empty(count + 1, dtype=np.int64)
    cdef cnp.ndarray[int32_t, ndim=1] succ = np.empty(max(count * n, 1), dtype=np.int32)
    cdef cnp.ndarray[int8_t, ndim=1] hole = np.empty(max(count * n, 1), dtype=np.int8)
    cdef cnp.ndarray[int8_t, ndim=1] capt = np.empty(max(count * n, 1), dtype=np.int8)
    cdef int bars[MAXH]
    cdef int c[MAXH]
    cdef int64_t e = 0
    indptr[0] = 0
    if count > 0:
        # the range's first board, unranked from the colex rank (largest bar first)
        offset = int(bt[balls + holes - 1, holes]) if balls > 0 else 0
        first = unrank_boards([offset + start], holes, balls)[0]
        prev = -1
        for i in range(holes - 1):
            c[i] = int(first[i])
            bars[i] = prev + c[i] + 1
            prev = bars[i]
        bars[holes - 1] = balls + holes - 1
        with nogil:
            e = sow_range(holes, balls, count, bars, bp, stride, skip_origin, capture_both, capture_count, True,
                          &indptr[0], &succ[0], &hole[0], &capt[0], 0, 0)
    return indptr, succ[:e].copy(), hole[:e].copy(), capt[:e].copy()
