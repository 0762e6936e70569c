# cython: language_level=3
"""Certified bounds for tiered games where endless play is scored by the position it repeats.

Setting as in ``_retro.pyx`` (mover-relative states, tiers solved bottom-up, in-tier moves
have reward 0), plus ``delta[x]``: what the mover of ``x`` scores, relative to the opponent,
if the game ends because ``x`` repeats (for Ünee's split rule: own row minus opposite row).

For a threshold ``u`` the root player P plays a co-Büchi game on nodes (state, who moves):
P wins by reaching an exit worth >= u to P, or by keeping play forever among positions whose
split is >= u for P. With every cycle closed under P's winning positional strategy made of
such positions, the first repetition is worth >= u too, so ``lower[x]`` (the highest such u
from x with P to move) is a certified lower bound of the first-repetition value. Reading the
same games from the nodes where the opponent moves gives the upper bound for the opponent's
positions: ``upper[y] = 1 - (lowest u that P loses from (y, opponent to move))``.

Each co-Büchi game is solved by the classical loop (opponent attractor to bad positions,
P attractor to the rest). Thresholds are visited by bisection and a node whose outcome is
already implied by a higher or lower threshold is a fixed sink, so each node takes part in
about log2(range) games instead of all of them.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t
from libc.stdlib cimport malloc, free

cnp.import_array()

DEF ACTIVE = 0
DEF WIN = 1
DEF LOSE = 2
DEF BIG = 1000


cdef struct TierData:
    int64_t lo
    int64_t hi
    int64_t m                  # nodes: 2 * (hi - lo); node 2*i is (lo+i, P to move), 2*i+1 (lo+i, O to move)
    const int64_t* indptr
    const int32_t* succ
    const int64_t* rindptr
    const int32_t* pred
    const int8_t* delta
    int16_t* wmax              # highest threshold known won by P
    int16_t* lmin              # lowest threshold known lost by P
    int16_t* ex                # P node: best exit for P (-BIG none); O node: worst exit for P (+BIG none)
    uint8_t* st
    uint8_t* inA
    uint8_t* flag              # P node: has a winning move outside G; O node: has a losing one
    int32_t* cnt
    int64_t* active
    int64_t* queue


cdef inline int node_status(TierData* d, int64_t n, int u) noexcept nogil:
    if u <= d.wmax[n]:
        return WIN
    if u >= d.lmin[n]:
        return LOSE
    return ACTIVE


cdef int64_t attract(TierData* d, int64_t tail, uint8_t mark, int one_edge_role) noexcept nogil:
    """Backward attractor inside the active nodes: spreads ``mark`` (in ``d.inA``) from the
    nodes queued in ``d.queue[:tail]``. A node of role ``one_edge_role`` joins through any one
    move into the marked set; a node of the other role joins when all its active moves lead
    there (``d.cnt`` counts the others down) and it has no flagged way out. Returns the new tail.
    """
    cdef int64_t head = 0, n, x, j, p, q
    cdef int role
    while head < tail:
        n = d.queue[head]
        head += 1
        x = (n >> 1) + d.lo
        role = n & 1
        for j in range(d.rindptr[x], d.rindptr[x + 1]):
            p = d.pred[j]
            if p < d.lo or p >= d.hi:
                continue
            q = ((p - d.lo) << 1) | (1 - role)
            if d.st[q] != ACTIVE or d.inA[q] == mark:
                continue
            if (q & 1) == one_edge_role:
                d.inA[q] = mark
                d.queue[tail] = q
                tail += 1
            else:
                d.cnt[q] -= 1
                if d.cnt[q] == 0 and not d.flag[q]:
                    d.inA[q] = mark
                    d.queue[tail] = q
                    tail += 1
    return tail


cdef void solve_threshold(TierData* d, int u) noexcept nogil:
    cdef int64_t nact = 0, n, x, i, k, y, j, tail, nleft, q
    cdef int role, good
    for n in range(d.m):
        d.st[n] = node_status(d, n, u)
        if d.st[n] == ACTIVE:
            d.active[nact] = n
            nact += 1
    if nact == 0:
        return
    while True:
        # A: nodes from which the opponent forces a bad position or a losing exit for P
        tail = 0
        nleft = 0
        for q in range(nact):
            n = d.active[q]
            if d.st[n] != ACTIVE:
                continue
            nleft += 1
            d.inA[n] = 0
            x = (n >> 1) + d.lo
            role = n & 1
            good = d.delta[x] >= u if role == 0 else -d.delta[x] >= u
            d.cnt[n] = 0
            if role == 0:
                d.flag[n] = d.ex[n] >= u
            else:
                d.flag[n] = d.ex[n] < u
            for k in range(d.indptr[x], d.indptr[x + 1]):
                y = d.succ[k]
                if y < d.lo or y >= d.hi:
                    continue
                j = ((y - d.lo) << 1) | (1 - role)
                if d.st[j] == ACTIVE:
                    d.cnt[n] += 1
                elif role == 0 and d.st[j] == WIN:
                    d.flag[n] = 1
                elif role == 1 and d.st[j] == LOSE:
                    d.flag[n] = 1
            if not good or (role == 1 and d.flag[n]) or (role == 0 and not d.flag[n] and d.cnt[n] == 0):
                d.inA[n] = 1
                d.queue[tail] = n
                tail += 1
        if nleft == 0:
            break
        tail = attract(d, tail, 1, 1)
        # B: P's attractor to the rest (from there P avoids bad positions forever or exits well),
        # and to every winning move out of the game left (which A may include)
        tail = 0
        for q in range(nact):
            n = d.active[q]
            if d.st[n] != ACTIVE:
                continue
            role = n & 1
            if not d.inA[n] or (role == 0 and d.flag[n]):
                d.inA[n] = 2
                d.queue[tail] = n
                tail += 1
            elif role == 1:
                # recount: moves into G that are not yet attracted to B
                x = (n >> 1) + d.lo
                d.cnt[n] = 0
                for k in range(d.indptr[x], d.indptr[x + 1]):
                    y = d.succ[k]
                    if y < d.lo or y >= d.hi:
                        continue
                    j = ((y - d.lo) << 1) | 0
                    if d.st[j] == ACTIVE:
                        d.cnt[n] += 1
                if not d.flag[n] and d.cnt[n] == 0:
                    d.inA[n] = 2
                    d.queue[tail] = n
                    tail += 1
        tail = attract(d, tail, 2, 0)
        if tail == 0:
            break  # P can force nothing more: the opponent wins everything left
        for q in range(tail):
            d.st[d.queue[q]] = WIN
    for q in range(nact):
        n = d.active[q]
        if d.st[n] == WIN:
            d.wmax[n] = u
        else:
            d.lmin[n] = u


cdef void set_graph(TierData* d, const int64_t[::1] indptr, const int32_t[::1] succ,
                    const int64_t[::1] rindptr, const int32_t[::1] pred, const int8_t[::1] delta):
    d.indptr = &indptr[0]
    d.succ = &succ[0] if succ.shape[0] else NULL
    d.rindptr = &rindptr[0]
    d.pred = &pred[0] if pred.shape[0] else NULL
    d.delta = &delta[0]


cdef int alloc_tier(TierData* d, int64_t m) noexcept:
    d.wmax = <int16_t*> malloc(m * sizeof(int16_t))
    d.lmin = <int16_t*> malloc(m * sizeof(int16_t))
    d.ex = <int16_t*> malloc(m * sizeof(int16_t))
    d.st = <uint8_t*> malloc(m * sizeof(uint8_t))
    d.inA = <uint8_t*> malloc(m * sizeof(uint8_t))
    d.flag = <uint8_t*> malloc(m * sizeof(uint8_t))
    d.cnt = <int32_t*> malloc(m * sizeof(int32_t))
    d.active = <int64_t*> malloc(m * sizeof(int64_t))
    d.queue = <int64_t*> malloc(m * sizeof(int64_t))
    return not (d.wmax and d.lmin and d.ex and d.st and d.inA and d.flag and d.cnt and d.active and d.queue)


cdef void free_tier(TierData* d) noexcept:
    free(d.wmax)
    free(d.lmin)
    free(d.ex)
    free(d.st)
    free(d.inA)
    free(d.flag)
    free(d.cnt)
    free(d.active)
    free(d.queue)


cdef void init_tier(TierData* d, int64_t lo, int64_t hi, const int8_t* terminal, const int8_t* reward,
                    const int8_t* L, const int8_t* U, int s) noexcept nogil:
    """Every node of the tier ``lo:hi`` open between -s and s, terminal states fixed, and each
    node's best (P moving) or worst (the opponent moving) exit for P from the bounds below."""
    cdef int64_t x, k, y, i
    cdef int pay, tv
    d.lo = lo
    d.hi = hi
    d.m = 2 * (hi - lo)
    for x in range(lo, hi):
        i = 2 * (x - lo)
        if d.indptr[x + 1] == d.indptr[x]:
            tv = terminal[x]
            d.wmax[i] = tv
            d.lmin[i] = tv + 1
            d.wmax[i + 1] = -tv
            d.lmin[i + 1] = -tv + 1
            d.ex[i] = -BIG
            d.ex[i + 1] = BIG
            continue
        d.wmax[i] = -s
        d.lmin[i] = s + 1
        d.wmax[i + 1] = -s
        d.lmin[i + 1] = s + 1
        d.ex[i] = -BIG
        d.ex[i + 1] = BIG
        for k in range(d.indptr[x], d.indptr[x + 1]):
            y = d.succ[k]
            if lo <= y < hi:
                continue
            pay = reward[k] - U[y]  # P moves at x, the opponent is optimistic at y
            if pay > d.ex[i]:
                d.ex[i] = pay
            pay = L[y] - reward[k]  # the opponent moves at x, P is pessimistic at y
            if pay < d.ex[i + 1]:
                d.ex[i + 1] = pay


def split_tiers(const int64_t[::1] indptr, const int32_t[::1] succ, const int8_t[::1] reward,
                const int64_t[::1] rindptr, const int32_t[::1] pred,
                const int64_t[::1] tiers, const int8_t[::1] terminal, const int8_t[::1] delta,
                const int8_t[::1] bound, progress=None, out=None):
    """Lower and upper bounds (int8) of every state's value; ``bound[t]`` caps |value| in tier t.
    ``out``, if given, is ``(lower, upper)`` to fill in place, with the entries of the states below
    the first tier already solved."""
    cdef int64_t n = indptr.shape[0] - 1, ntiers = tiers.shape[0] - 1, t, lo, hi, x, i
    cdef cnp.ndarray[int8_t, ndim=1] out_l
    cdef cnp.ndarray[int8_t, ndim=1] out_u
    if out is None:
        out_l = np.zeros(n, dtype=np.int8)
        out_u = np.zeros(n, dtype=np.int8)
    else:
        out_l, out_u = out
        if out_l.shape[0] != n or out_u.shape[0] != n:
            raise ValueError(f"the result arrays must have {n} entries")
    cdef int8_t[::1] L = out_l
    cdef int8_t[::1] U = out_u
    cdef int64_t maxn = 1
    for t in range(ntiers):
        maxn = max(maxn, tiers[t + 1] - tiers[t])
    cdef TierData d
    set_graph(&d, indptr, succ, rindptr, pred, delta)
    cdef int64_t* stack = <int64_t*> malloc(512 * sizeof(int64_t))
    cdef int s, a, b, mid, sp
    try:
        if alloc_tier(&d, 2 * maxn) or stack == NULL:
            raise MemoryError("no memory for the split bounds' work arrays")
        for t in range(ntiers):
            lo = tiers[t]
            hi = tiers[t + 1]
            s = bound[t]
            with nogil:
                init_tier(&d, lo, hi, &terminal[0], &reward[0] if reward.shape[0] else NULL, &L[0], &U[0], s)
                # bisect the thresholds -s+1 .. s
                stack[0] = -s + 1
                stack[1] = s
                sp = 2
                while sp > 0:
                    sp -= 2
                    a = <int> stack[sp]
                    b = <int> stack[sp + 1]
                    if a > b:
                        continue
                    mid = (a + b) >> 1 if a + b >= 0 else -((-(a + b) + 1) >> 1)
                    solve_threshold(&d, mid)
                    stack[sp] = a
                    stack[sp + 1] = mid - 1
                    stack[sp + 2] = mid + 1
                    stack[sp + 3] = b
                    sp += 4
                for x in range(lo, hi):
                    i = 2 * (x - lo)
                    L[x] = <int8_t> d.wmax[i]
                    U[x] = <int8_t> (1 - d.lmin[i + 1])
            if progress is not None:
                progress(hi - lo)
    finally:
        free_tier(&d)
        free(stack)
    return out_l, out_u


def tier_wins_with_sinks(const int64_t[::1] indptr, const int32_t[::1] succ, const int8_t[::1] reward,
                         const int64_t[::1] rindptr, const int32_t[::1] pred, int64_t lo, int64_t hi,
                         const int8_t[::1] terminal, const int8_t[::1] delta, int s,
                         const int8_t[::1] lower, const int8_t[::1] upper,
                         const int64_t[::1] sink_node, const int16_t[::1] sink_value, int u):
    """One co-Büchi game of the tier ``lo:hi`` at threshold ``u``, some of its nodes made sinks.

    Node ``2*(x-lo)`` is state x with P to move, ``2*(x-lo)+1`` x with the opponent to move;
    ``sink_node[j]`` ends the game with ``sink_value[j]`` for P when play reaches it (a position
    already on the path: repeating it scores it). States below the tier are read from
    ``lower``/``upper``. Returns, per node, whether P certainly gets at least ``u`` from it (uint8;
    a sink's entry says whether its value is at least u).
    """
    cdef int64_t m = 2 * (hi - lo), j, i
    if lo < 0 or hi > indptr.shape[0] - 1 or lo >= hi:
        raise ValueError(f"the tier {lo}:{hi} is not a range of the graph's states")
    if sink_node.shape[0] != sink_value.shape[0]:
        raise ValueError("sink_node and sink_value must have the same length")
    for j in range(sink_node.shape[0]):
        if not 0 <= sink_node[j] < m:
            raise ValueError(f"sink node {sink_node[j]} is outside the tier's {m} nodes")
    out = np.empty(m, dtype=np.uint8)
    cdef uint8_t[::1] o = out
    cdef TierData d
    set_graph(&d, indptr, succ, rindptr, pred, delta)
    try:
        if alloc_tier(&d, m):
            raise MemoryError("no memory for the tier's work arrays")
        with nogil:
            init_tier(&d, lo, hi, &terminal[0], &reward[0] if reward.shape[0] else NULL, &lower[0], &upper[0], s)
            for j in range(sink_node.shape[0]):
                i = sink_node[j]
                d.wmax[i] = sink_value[j]
                d.lmin[i] = sink_value[j] + 1
            solve_threshold(&d, u)
            for i in range(m):
                o[i] = d.wmax[i] >= u
    finally:
        free_tier(&d)
    return out
