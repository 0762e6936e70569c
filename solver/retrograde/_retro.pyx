# cython: language_level=3
"""Retrograde analysis of tiered, score-valued, alternating games with cycles.

The game is given as a successor CSR over mover-relative states (negamax form: the value of a
state is for its mover, and a move's payoff is ``reward - value(successor)``). States are split
into tiers (contiguous rank ranges); a move either stays in its tier with reward 0 or leaves it
for a lower tier that is already solved (for Ünee: a capture leaves the layer of balls on the
board). A state without moves ends the game with payoff ``terminal[x]`` for its mover.

Everything rests on one threshold sweep per tier. For a threshold ``u`` let A_u be the states
whose mover can force an outcome of at least ``u`` and B_u those whose mover can be held to at
most ``-u``. A_u is an attractor (some move reaches B_u or an exit worth >= u) and B_u a counted
attractor (every move reaches A_u or an exit worth <= -u). Both only grow as ``u`` falls, so a
single sweep from the highest threshold down touches every edge a bounded number of times:
``a[x]`` is the first (highest) ``u`` with x in A_u and ``b[x]`` the first with x in B_u.
What "outcome" means (endless play worth 0, or endless play never reaching the threshold)
is decided by the exit thresholds the drivers feed in.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t
from libc.stdlib cimport malloc, calloc, free

cnp.import_array()

cdef int64_t INF = 1099511627776  # 'no way found yet' for a minimising mover
cdef int64_t LOW32 = 4294967295

DEF NONE = -1000
DEF NONE8 = -128


cdef struct Tier:
    int64_t lo
    int64_t hi


cdef void sweep_tier(int64_t lo, int64_t hi,
                     const int64_t* rindptr, const int32_t* pred,
                     const int32_t* ea, int32_t* cnt,
                     const int32_t* b_state, const int32_t* b_value, int64_t nb,
                     int umin, int umax,
                     int32_t* a, int32_t* b) noexcept nogil:
    """Threshold sweep of one tier.

    ``ea[x - lo]``: highest threshold an exit of x reaches for A (NONE if none).
    ``cnt[x - lo]``: moves of x (exits included) not yet known to be held to <= -u.
    (``b_state[i]``, ``b_value[i]``): one entry per exit move: it counts for B_u when u <= b_value.
    Results ``a``/``b`` are indexed by ``x - lo``; NONE where never reached in [umin, umax].
    """
    cdef int64_t n = hi - lo, i, j, head = 0, tail = 0
    cdef int64_t span = umax - umin + 1
    cdef int u, k
    cdef int64_t x, w, p
    if span <= 0 or n <= 0:
        return
    # bucket the A seeds and the B exit entries by threshold (clipped into [umin, umax])
    cdef int64_t* astart = <int64_t*> calloc(span + 1, sizeof(int64_t))
    cdef int64_t* bstart = <int64_t*> calloc(span + 1, sizeof(int64_t))
    cdef int64_t* aitems = <int64_t*> malloc((n + 1) * sizeof(int64_t))
    cdef int64_t* bitems = <int64_t*> malloc((nb + 1) * sizeof(int64_t))
    cdef int64_t* queue = <int64_t*> malloc((2 * n + 1) * sizeof(int64_t))
    cdef int64_t* fill = <int64_t*> malloc((span + 1) * sizeof(int64_t))
    for i in range(n):
        if ea[i] >= umin:
            k = (ea[i] if ea[i] < umax else umax) - umin
            astart[k + 1] += 1
    for i in range(nb):
        if b_value[i] >= umin:
            k = (b_value[i] if b_value[i] < umax else umax) - umin
            bstart[k + 1] += 1
    for k in range(span):
        astart[k + 1] += astart[k]
        bstart[k + 1] += bstart[k]
    for k in range(span + 1):
        fill[k] = astart[k]
    for i in range(n):
        if ea[i] >= umin:
            k = (ea[i] if ea[i] < umax else umax) - umin
            aitems[fill[k]] = i
            fill[k] += 1
    for k in range(span + 1):
        fill[k] = bstart[k]
    for i in range(nb):
        if b_value[i] >= umin:
            k = (b_value[i] if b_value[i] < umax else umax) - umin
            bitems[fill[k]] = b_state[i]
            fill[k] += 1
    for i in range(n):
        a[i] = NONE
        b[i] = NONE
    for u in range(umax, umin - 1, -1):
        k = u - umin
        for j in range(astart[k], astart[k + 1]):
            i = aitems[j]
            if a[i] == NONE:
                a[i] = u
                queue[tail] = i << 1
                tail += 1
        for j in range(bstart[k], bstart[k + 1]):
            i = bitems[j]
            cnt[i] -= 1
            if cnt[i] == 0 and b[i] == NONE:
                b[i] = u
                queue[tail] = (i << 1) | 1
                tail += 1
        while head < tail:
            w = queue[head]
            head += 1
            x = (w >> 1) + lo
            if (w & 1) == 0:  # x entered A_u: each predecessor has one more move held to <= -u
                for j in range(rindptr[x], rindptr[x + 1]):
                    p = pred[j]
                    if p < lo or p >= hi:
                        continue
                    p -= lo
                    cnt[p] -= 1
                    if cnt[p] == 0 and b[p] == NONE:
                        b[p] = u
                        queue[tail] = (p << 1) | 1
                        tail += 1
            else:  # x entered B_u: each predecessor can force >= u by moving to x
                for j in range(rindptr[x], rindptr[x + 1]):
                    p = pred[j]
                    if p < lo or p >= hi:
                        continue
                    p -= lo
                    if a[p] == NONE:
                        a[p] = u
                        queue[tail] = p << 1
                        tail += 1
    free(astart)
    free(bstart)
    free(aitems)
    free(bitems)
    free(queue)
    free(fill)


cdef void largest_tier(const int64_t[::1] indptr, const int64_t[::1] tiers, int64_t* maxn, int64_t* maxe) noexcept:
    """The most states and the most moves any one tier has (to size the per-tier buffers)."""
    cdef int64_t t
    for t in range(tiers.shape[0] - 1):
        maxn[0] = max(maxn[0], tiers[t + 1] - tiers[t])
        maxe[0] = max(maxe[0], indptr[tiers[t + 1]] - indptr[tiers[t]])


cdef cnp.ndarray given(object array, int64_t n):
    """A caller's int8 result array of ``n`` entries, checked (it is filled in place)."""
    if not isinstance(array, np.ndarray) or array.dtype != np.int8 or array.ndim != 1 or array.shape[0] != n \
            or not array.flags.c_contiguous or not array.flags.writeable:
        raise ValueError(f"a result array must be a writable contiguous int8 array of {n} entries")
    return array


def solve_tiers(const int64_t[::1] indptr, const int32_t[::1] succ, const int8_t[::1] reward,
                const int64_t[::1] rindptr, const int32_t[::1] pred,
                const int64_t[::1] tiers, const int8_t[::1] terminal, str mode, progress=None, out=None):
    """Solve every tier bottom-up.

    ``mode='value'``: endless play is worth 0 to both; returns ``value`` int8 (best future score
    difference for the mover). ``mode='termination'``: only a game that ends without repetition
    counts; returns ``(a, b)`` int8 where ``a[x]`` is the highest u such that the mover can force
    the game to end with a future difference >= u, and ``b[x]`` the highest u such that the
    opponent can force it to end with the mover's future difference <= -u (-128: never).
    ``progress``, if given, is called with the number of states finished after each tier.
    ``out``, if given, is the result to fill in place (``value``, or ``(a, b)``), its entries for the
    states below the first tier already solved: a layer solved alone reads its exits from there.
    """
    cdef bint value_mode
    if mode == "value":
        value_mode = True
    elif mode == "termination":
        value_mode = False
    else:
        raise ValueError("mode must be 'value' or 'termination'")
    cdef int64_t n = indptr.shape[0] - 1, t, lo, hi, x, k, y, nb, i
    cdef int64_t ntiers = tiers.shape[0] - 1
    cdef cnp.ndarray[int8_t, ndim=1] out_v
    cdef cnp.ndarray[int8_t, ndim=1] out_a
    cdef cnp.ndarray[int8_t, ndim=1] out_b
    if out is None:
        out_v = np.zeros(n, dtype=np.int8)
        out_a = np.full(n, NONE8, dtype=np.int8)
        out_b = np.full(n, NONE8, dtype=np.int8)
    elif value_mode:
        out_v = given(out, n)
        out_a = out_b = out_v
    else:
        out_a = given(out[0], n)
        out_b = given(out[1], n)
        out_v = out_a
    cdef int8_t[::1] V = out_v
    cdef int8_t[::1] A = out_a
    cdef int8_t[::1] B = out_b
    cdef int64_t maxn = 0, maxe = 0
    largest_tier(indptr, tiers, &maxn, &maxe)
    cdef int32_t* ea = <int32_t*> malloc((maxn + 1) * sizeof(int32_t))
    cdef int32_t* cnt = <int32_t*> malloc((maxn + 1) * sizeof(int32_t))
    cdef int32_t* ra = <int32_t*> malloc((maxn + 1) * sizeof(int32_t))
    cdef int32_t* rb = <int32_t*> malloc((maxn + 1) * sizeof(int32_t))
    cdef int32_t* bs = <int32_t*> malloc((maxe + maxn + 1) * sizeof(int32_t))
    cdef int32_t* bv = <int32_t*> malloc((maxe + maxn + 1) * sizeof(int32_t))
    cdef int pa, pb, umin, umax, have
    try:
        for t in range(ntiers):
            lo = tiers[t]
            hi = tiers[t + 1]
            with nogil:
                nb = 0
                umin = 127
                umax = -127
                have = 0
                for x in range(lo, hi):
                    i = x - lo
                    ea[i] = NONE
                    cnt[i] = <int32_t> (indptr[x + 1] - indptr[x])
                    if cnt[i] == 0:
                        cnt[i] = 1
                        pa = terminal[x]
                        pb = -terminal[x]
                        ea[i] = pa
                        bs[nb] = <int32_t> i
                        bv[nb] = pb
                        nb += 1
                        umin = min(umin, min(pa, pb))
                        umax = max(umax, max(pa, pb))
                        have = 1
                        continue
                    for k in range(indptr[x], indptr[x + 1]):
                        y = succ[k]
                        if lo <= y < hi:
                            continue
                        if value_mode:
                            pa = reward[k] - V[y]
                            pb = -pa
                        else:
                            pa = reward[k] + B[y] if B[y] != NONE8 else NONE
                            pb = A[y] - reward[k] if A[y] != NONE8 else NONE
                        if pa > ea[i]:
                            ea[i] = pa
                        bs[nb] = <int32_t> i
                        bv[nb] = pb
                        nb += 1
                        if pa != NONE:
                            umin = min(umin, pa)
                            umax = max(umax, pa)
                            have = 1
                        if pb != NONE:
                            umin = min(umin, pb)
                            umax = max(umax, pb)
                            have = 1
                if value_mode:
                    umin = max(umin, 1)
                if have and umax >= umin:
                    sweep_tier(lo, hi, &rindptr[0], &pred[0], ea, cnt, bs, bv, nb, umin, umax, ra, rb)
                else:
                    for x in range(hi - lo):
                        ra[x] = NONE
                        rb[x] = NONE
                for x in range(lo, hi):
                    i = x - lo
                    if value_mode:
                        if ra[i] >= 1:
                            V[x] = <int8_t> ra[i]
                        elif rb[i] >= 1:
                            V[x] = <int8_t> (-rb[i])
                        else:
                            V[x] = 0
                    else:
                        A[x] = <int8_t> (ra[i] if ra[i] != NONE else NONE8)
                        B[x] = <int8_t> (rb[i] if rb[i] != NONE else NONE8)
            if progress is not None:
                progress(hi - lo)
    finally:
        free(ea)
        free(cnt)
        free(ra)
        free(rb)
        free(bs)
        free(bv)
    if value_mode:
        return out_v
    return out_a, out_b


# ---------------------------------------------------------------- remoteness

cdef inline void heap_push(int64_t* heap, int64_t* size, int64_t key) noexcept nogil:
    cdef int64_t i = size[0], parent
    size[0] += 1
    while i > 0:
        parent = (i - 1) >> 1
        if heap[parent] <= key:
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = key


cdef inline int64_t heap_pop(int64_t* heap, int64_t* size) noexcept nogil:
    cdef int64_t top = heap[0], last, i = 0, child
    size[0] -= 1
    last = heap[size[0]]
    while True:
        child = 2 * i + 1
        if child >= size[0]:
            break
        if child + 1 < size[0] and heap[child + 1] < heap[child]:
            child += 1
        if heap[child] >= last:
            break
        heap[i] = heap[child]
        i = child
    heap[i] = last
    return top


def remoteness_tiers(const int64_t[::1] indptr, const int32_t[::1] succ, const int8_t[::1] reward,
                     const int64_t[::1] rindptr, const int32_t[::1] pred, const int64_t[::1] pedge,
                     const int64_t[::1] tiers, const int8_t[::1] value, progress=None, out=None):
    """Plies to the end of the game under optimal play, for a ``value``-mode solution.

    Only value-preserving moves are played. A mover with a positive value ends the game as fast
    as possible, one with a negative value as late as possible, and at value 0 the shortest way
    to an end is taken. States from which value-0 play can never reach an end cycle: they follow
    their first value-0 move and the game ends when an absolute position (board and side to
    move) repeats. Returns ``(remoteness int32, cycling uint8, choice int8)``: for cycling
    states the remoteness counts the plies until the repeated position appears, and ``choice``
    is the move followed (index into the state's edge list; -1 for a state without moves).
    ``out``, if given, is ``(remoteness, cycling, choice)`` to fill in place, with the entries of
    the states below the first tier already solved.
    """
    cdef int64_t n = indptr.shape[0] - 1, ntiers = tiers.shape[0] - 1
    cdef cnp.ndarray[int32_t, ndim=1] out_r
    cdef cnp.ndarray[uint8_t, ndim=1] out_c
    cdef cnp.ndarray[int8_t, ndim=1] out_k
    if out is None:
        out_r = np.full(n, -1, dtype=np.int32)
        out_c = np.zeros(n, dtype=np.uint8)
        out_k = np.full(n, -1, dtype=np.int8)
    else:
        out_r, out_c, out_k = out
        given(out_k, n)
        if out_r.shape[0] != n or out_c.shape[0] != n:
            raise ValueError(f"the result arrays must have {n} entries")
    cdef int32_t[::1] R = out_r
    cdef uint8_t[::1] C = out_c
    cdef int8_t[::1] K = out_k
    cdef int64_t maxn = 0, maxe = 0, t
    largest_tier(indptr, tiers, &maxn, &maxe)
    cdef int64_t* best = <int64_t*> malloc((maxn + 1) * sizeof(int64_t))
    cdef uint8_t* bestc = <uint8_t*> malloc((maxn + 1) * sizeof(uint8_t))
    cdef int64_t* bestk = <int64_t*> malloc((maxn + 1) * sizeof(int64_t))
    cdef int32_t* remaining = <int32_t*> malloc((maxn + 1) * sizeof(int32_t))
    cdef uint8_t* done = <uint8_t*> malloc((maxn + 1) * sizeof(uint8_t))
    cdef int64_t* heap = <int64_t*> malloc((maxe + 2 * maxn + 1) * sizeof(int64_t))
    cdef int64_t* nxt = <int64_t*> malloc((maxn + 1) * sizeof(int64_t))
    cdef int64_t* stack = <int64_t*> malloc((maxn + 1) * sizeof(int64_t))
    cdef int64_t* mark = <int64_t*> malloc((maxn + 1) * sizeof(int64_t))
    cdef int64_t lo, hi, x, i, k, y, j, p, pi, hsize, key, r, cand, depth, cyc_len, cyc_plies, z
    cdef int v
    try:
        for t in range(ntiers):
            lo = tiers[t]
            hi = tiers[t + 1]
            with nogil:
                hsize = 0
                for x in range(lo, hi):
                    i = x - lo
                    done[i] = 0
                    v = value[x]
                    best[i] = -1 if v < 0 else INF
                    bestc[i] = 0
                    bestk[i] = -1
                    remaining[i] = 0
                    if indptr[x + 1] == indptr[x]:
                        best[i] = 0
                        heap_push(heap, &hsize, i)
                        continue
                    for k in range(indptr[x], indptr[x + 1]):
                        y = succ[k]
                        if reward[k] - value[y] != v:
                            continue
                        if lo <= y < hi:
                            remaining[i] += 1
                            continue
                        cand = 1 + R[y]
                        if v < 0:
                            if cand > best[i]:
                                best[i] = cand
                                bestc[i] = C[y]
                                bestk[i] = k
                        elif cand < best[i]:
                            best[i] = cand
                            bestc[i] = C[y]
                            bestk[i] = k
                    if v < 0:
                        if remaining[i] == 0:
                            heap_push(heap, &hsize, (best[i] << 32) | i)
                    elif best[i] < INF:
                        heap_push(heap, &hsize, (best[i] << 32) | i)
                while hsize > 0:
                    key = heap_pop(heap, &hsize)
                    i = key & LOW32
                    r = key >> 32
                    if done[i]:
                        continue
                    done[i] = 1
                    x = i + lo
                    R[x] = <int32_t> r
                    C[x] = bestc[i]
                    K[x] = <int8_t> (bestk[i] - indptr[x]) if bestk[i] >= 0 else -1
                    for j in range(rindptr[x], rindptr[x + 1]):
                        p = pred[j]
                        if p < lo or p >= hi:
                            continue
                        pi = p - lo
                        if done[pi] or value[p] != -value[x]:
                            continue
                        k = pedge[j]
                        if reward[k] != 0:
                            continue
                        cand = r + 1
                        if value[p] < 0:
                            if cand > best[pi]:
                                best[pi] = cand
                                bestc[pi] = C[x]
                                bestk[pi] = k
                            remaining[pi] -= 1
                            if remaining[pi] == 0:
                                heap_push(heap, &hsize, (best[pi] << 32) | pi)
                        elif cand < best[pi]:
                            best[pi] = cand
                            bestc[pi] = C[x]
                            bestk[pi] = k
                            heap_push(heap, &hsize, (cand << 32) | pi)
                # the rest cycle: follow the first value-preserving move inside the tier
                for x in range(lo, hi):
                    i = x - lo
                    nxt[i] = -1
                    mark[i] = -1
                    if done[i]:
                        continue
                    for k in range(indptr[x], indptr[x + 1]):
                        y = succ[k]
                        if lo <= y < hi and not done[y - lo] and reward[k] - value[y] == value[x]:
                            nxt[i] = y - lo
                            K[x] = <int8_t> (k - indptr[x])
                            break
                for x in range(lo, hi):
                    i = x - lo
                    if done[i]:
                        continue
                    # walk until a finished state or a state on the current walk
                    depth = 0
                    z = i
                    while z >= 0 and not done[z] and mark[z] < 0:
                        mark[z] = depth
                        stack[depth] = z
                        depth += 1
                        z = nxt[z]
                    if z >= 0 and not done[z]:
                        # closed a new cycle at stack position mark[z]
                        cyc_len = depth - mark[z]
                        cyc_plies = cyc_len if cyc_len % 2 == 0 else 2 * cyc_len
                        for j in range(mark[z], depth):
                            R[stack[j] + lo] = <int32_t> cyc_plies
                            C[stack[j] + lo] = 1
                            done[stack[j]] = 1
                        depth = mark[z]
                        r = cyc_plies
                    elif z >= 0:
                        r = R[z + lo]
                    else:
                        r = 0  # no move inside the tier (cannot happen for a consistent solution)
                    # states on the tail: one ply more each, ending in the same repetition
                    while depth > 0:
                        depth -= 1
                        z = stack[depth]
                        r += 1
                        R[z + lo] = <int32_t> r
                        C[z + lo] = 1
                        done[z] = 1
            if progress is not None:
                progress(hi - lo)
    finally:
        free(best)
        free(bestc)
        free(bestk)
        free(remaining)
        free(done)
        free(heap)
        free(nxt)
        free(stack)
        free(mark)
    return out_r, out_c, out_k
