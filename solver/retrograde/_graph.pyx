# cython: language_level=3
"""Graph algorithms on the absolute game graph of an alternating game.

States are mover-relative; the absolute graph has a node ``2 * x + side`` per state and side to
move, and a move from ``(x, side)`` reaches ``(succ, 1 - side)``. These kernels work on that
graph implicitly, from the successor CSR, without building it.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t
from libc.stdlib cimport malloc, free

cnp.import_array()


def scc_alternating(const int64_t[::1] indptr, const int32_t[::1] succ):
    """Strongly connected components of the absolute graph (iterative Tarjan).

    Returns ``comp`` int32 over the 2*N absolute nodes; components are numbered in the order
    Tarjan completes them (a component's successors' components come first).
    """
    cdef int64_t n = indptr.shape[0] - 1
    cdef int64_t m = 2 * n
    cdef cnp.ndarray[int32_t, ndim=1] comp = np.full(m, -1, dtype=np.int32)
    cdef int32_t[::1] cv = comp
    cdef int32_t* index = <int32_t*> malloc(m * sizeof(int32_t))
    cdef int32_t* low = <int32_t*> malloc(m * sizeof(int32_t))
    cdef int64_t* cs_node = <int64_t*> malloc(m * sizeof(int64_t))
    cdef int64_t* cs_edge = <int64_t*> malloc(m * sizeof(int64_t))
    cdef int64_t* stack = <int64_t*> malloc(m * sizeof(int64_t))
    cdef uint8_t* onstack = <uint8_t*> malloc(m * sizeof(uint8_t))
    if index == NULL or low == NULL or cs_node == NULL or cs_edge == NULL or stack == NULL or onstack == NULL:
        free(index); free(low); free(cs_node); free(cs_edge); free(stack); free(onstack)
        raise MemoryError()
    cdef int64_t root, v, w, k, x, sp = 0, csp = 0, counter = 0
    cdef int32_t ncomp = 0
    cdef int side
    try:
        with nogil:
            for v in range(m):
                index[v] = -1
                onstack[v] = 0
            for root in range(m):
                if index[root] >= 0:
                    continue
                index[root] = <int32_t> counter
                low[root] = <int32_t> counter
                counter += 1
                stack[sp] = root
                sp += 1
                onstack[root] = 1
                cs_node[0] = root
                cs_edge[0] = indptr[root >> 1]
                csp = 1
                while csp > 0:
                    v = cs_node[csp - 1]
                    x = v >> 1
                    side = v & 1
                    k = cs_edge[csp - 1]
                    if k < indptr[x + 1]:
                        cs_edge[csp - 1] = k + 1
                        w = 2 * <int64_t> succ[k] + (1 - side)
                        if index[w] < 0:
                            index[w] = <int32_t> counter
                            low[w] = <int32_t> counter
                            counter += 1
                            stack[sp] = w
                            sp += 1
                            onstack[w] = 1
                            cs_node[csp] = w
                            cs_edge[csp] = indptr[w >> 1]
                            csp += 1
                        elif onstack[w] and index[w] < low[v]:
                            low[v] = index[w]
                        continue
                    # v is finished
                    if low[v] == index[v]:
                        while True:
                            sp -= 1
                            w = stack[sp]
                            onstack[w] = 0
                            cv[w] = ncomp
                            if w == v:
                                break
                        ncomp += 1
                    csp -= 1
                    if csp > 0:
                        w = cs_node[csp - 1]
                        if low[v] < low[w]:
                            low[w] = low[v]
    finally:
        free(index); free(low); free(cs_node); free(cs_edge); free(stack); free(onstack)
    return comp


def bfs_alternating(const int64_t[::1] indptr, const int32_t[::1] succ, int64_t start_node):
    """Shortest distances (plies) from one absolute node to every node, with BFS parents.

    Returns ``(dist int32[2N], parent int64[2N])``; -1 where unreachable / for the start.
    """
    cdef int64_t n = indptr.shape[0] - 1, m = 2 * n
    if not 0 <= start_node < m:
        raise ValueError("start outside the graph")
    cdef cnp.ndarray[int32_t, ndim=1] dist = np.full(m, -1, dtype=np.int32)
    cdef cnp.ndarray[int64_t, ndim=1] parent = np.full(m, -1, dtype=np.int64)
    cdef int32_t[::1] dv = dist
    cdef int64_t[::1] pv = parent
    cdef int64_t* queue = <int64_t*> malloc(m * sizeof(int64_t))
    cdef int64_t head = 0, tail = 0, v, w, k
    with nogil:
        dv[start_node] = 0
        queue[tail] = start_node
        tail += 1
        while head < tail:
            v = queue[head]
            head += 1
            for k in range(indptr[v >> 1], indptr[(v >> 1) + 1]):
                w = 2 * <int64_t> succ[k] + (1 - (v & 1))
                if dv[w] < 0:
                    dv[w] = dv[v] + 1
                    pv[w] = v
                    queue[tail] = w
                    tail += 1
    free(queue)
    return dist, parent


cdef class CycleFinder:
    """Shortest cycles through given nodes of the absolute graph, by BFS with reusable buffers."""

    cdef const int64_t[::1] indptr
    cdef const int32_t[::1] succ
    cdef int64_t m
    cdef int32_t[::1] stamp
    cdef int64_t[::1] parent
    cdef int64_t[::1] queue
    cdef int32_t[::1] depth
    cdef int32_t round

    def __init__(self, const int64_t[::1] indptr, const int32_t[::1] succ):
        self.indptr = indptr
        self.succ = succ
        self.m = 2 * (indptr.shape[0] - 1)
        self.stamp = np.zeros(self.m, dtype=np.int32)
        self.parent = np.zeros(self.m, dtype=np.int64)
        self.queue = np.zeros(self.m, dtype=np.int64)
        self.depth = np.zeros(self.m, dtype=np.int32)
        self.round = 0

    def shortest_cycle(self, int64_t node, int limit=1 << 30):
        """The shortest cycle through ``node`` with at most ``limit`` plies, as a node list
        starting and ending at ``node``; None if there is none that short."""
        if not 0 <= node < self.m:
            raise ValueError("node outside the graph")
        cdef int64_t head = 0, tail = 0, v, w, k
        cdef int64_t found = -1
        self.round += 1
        cdef int32_t r = self.round
        with nogil:
            self.stamp[node] = r
            self.depth[node] = 0
            self.queue[tail] = node
            tail += 1
            while head < tail and found < 0:
                v = self.queue[head]
                head += 1
                if self.depth[v] >= limit:
                    break
                for k in range(self.indptr[v >> 1], self.indptr[(v >> 1) + 1]):
                    w = 2 * <int64_t> self.succ[k] + (1 - (v & 1))
                    if w == node:
                        found = v
                        break
                    if self.stamp[w] != r:
                        self.stamp[w] = r
                        self.depth[w] = self.depth[v] + 1
                        self.parent[w] = v
                        self.queue[tail] = w
                        tail += 1
        if found < 0:
            return None
        path = [node]
        v = found
        while v != node:
            path.append(v)
            v = self.parent[v]
        path.append(node)
        path.reverse()
        return path


def reverse_csr(const int64_t[::1] indptr, const int32_t[::1] succ):
    """Predecessor CSR of a successor CSR: (rindptr, pred, edge) with ``edge`` the forward edge id."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, e = succ.shape[0], x, k, pos
    cdef cnp.ndarray[int64_t, ndim=1] rindptr = np.zeros(n + 1, dtype=np.int64)
    cdef cnp.ndarray[int32_t, ndim=1] pred = np.empty(e, dtype=np.int32)
    cdef cnp.ndarray[int64_t, ndim=1] edge = np.empty(e, dtype=np.int64)
    cdef int64_t[::1] ri = rindptr
    cdef int32_t[::1] pv = pred
    cdef int64_t[::1] ev = edge
    cdef int64_t* fill
    with nogil:
        for k in range(e):
            ri[succ[k] + 1] += 1
        for x in range(n):
            ri[x + 1] += ri[x]
    fill = <int64_t*> malloc((n + 1) * sizeof(int64_t))
    if fill == NULL:
        raise MemoryError()
    try:
        with nogil:
            for x in range(n + 1):
                fill[x] = ri[x]
            for x in range(n):
                for k in range(indptr[x], indptr[x + 1]):
                    pos = fill[succ[k]]
                    fill[succ[k]] += 1
                    pv[pos] = <int32_t> x
                    ev[pos] = k
    finally:
        free(fill)
    return rindptr, pred, edge


def reachable_alternating(const int64_t[::1] indptr, const int32_t[::1] succ, int64_t start, int start_side):
    """Absolute positions reachable from (start, start_side) when every move passes the turn.

    States are mover-relative, so a move from (x, side) reaches (succ, 1 - side). Returns a
    uint8 array over states: bit 0 set if (x, side 0) is reachable, bit 1 if (x, side 1) is.
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1
    if start < 0 or start >= n or start_side not in (0, 1):
        raise ValueError("start outside the state space")
    cdef cnp.ndarray[uint8_t, ndim=1] seen = np.zeros(n, dtype=np.uint8)
    cdef uint8_t[::1] sv = seen
    cdef cnp.ndarray[int64_t, ndim=1] queue = np.empty(2 * n, dtype=np.int64)
    cdef int64_t[::1] q = queue
    cdef Py_ssize_t head = 0, tail = 0, k
    cdef int64_t item, x, y
    cdef int side, other
    with nogil:
        sv[start] = <uint8_t> (1 << start_side)
        q[tail] = start * 2 + start_side
        tail += 1
        while head < tail:
            item = q[head]
            head += 1
            x = item >> 1
            side = <int> (item & 1)
            other = 1 - side
            for k in range(indptr[x], indptr[x + 1]):
                y = succ[k]
                if not (sv[y] >> other) & 1:
                    sv[y] |= <uint8_t> (1 << other)
                    q[tail] = y * 2 + other
                    tail += 1
    return seen
