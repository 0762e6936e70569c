# cython: language_level=3
"""Ur (fort rules) kernels: placement ranking, the move generator and value iteration.

A state is mover-relative: ``M`` = tiles of the side to move, ``O`` = tiles of the other side,
both 32-bit tile masks. States are ranked tier by tier, a tier being (a, b) = (|M|, |O|), tiers
in order a = 0..k, then b = 0..k. Inside a tier:

    rank = offset[a][b] + colex(M) * C(n - a, b) + colex(O squeezed onto the n - a free tiles)

where colex(S) = sum_i C(t_i, i + 1) over the sorted tiles t_0 < t_1 < ... of S (the
combinatorial number system). Successor outcomes carry a flag: 0 the turn passes, 1 the mover
acts again (a piece moved onto a fort), 2 the mover won (holds every fort).
"""
import numpy as np
cimport numpy as cnp
from cython.parallel cimport prange, threadid
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.math cimport fabsf, fmaxf

cnp.import_array()

DEF MAXN = 32
DEF MAXDEG = 8
DEF MAXROLLS = 8
DEF MAXK = 8
DEF BUF = 8192
DEF WIN = -2147483647 - 1  # policy code: the outcome wins (+1)
DEF LOSS = -2147483647  # policy code: the state is lost (-1)
DEF NOCODE = -2147483647 + 1  # no outcome seen yet

cdef extern from *:
    int __builtin_popcount(unsigned int) nogil
    int __builtin_ctz(unsigned int) nogil

ctypedef struct Buf:
    uint32_t* m
    uint32_t* o
    uint8_t* f
    int n


cdef Buf* new_bufs(int count) noexcept:
    """``count`` outcome buffers (one per thread) of BUF outcomes each; release with free_bufs."""
    cdef Buf* bufs = <Buf*> malloc(count * sizeof(Buf))
    cdef int t
    for t in range(count):
        bufs[t].m = <uint32_t*> malloc(BUF * sizeof(uint32_t))
        bufs[t].o = <uint32_t*> malloc(BUF * sizeof(uint32_t))
        bufs[t].f = <uint8_t*> malloc(BUF)
        bufs[t].n = 0
    return bufs


cdef void free_bufs(Buf* bufs, int count) noexcept:
    cdef int t
    for t in range(count):
        free(bufs[t].m)
        free(bufs[t].o)
        free(bufs[t].f)
    free(bufs)


cdef inline float largest(const float* worst, int nt) noexcept nogil:
    """The largest of the per-thread maxima ``worst[t * 64]`` (one cache line apart)."""
    cdef float top = 0.0
    cdef int t
    for t in range(nt):
        if worst[t * 64] > top:
            top = worst[t * 64]
    return top


cdef class UrKernel:
    """Board geometry, dice and piece count in C form; every kernel works on it."""

    cdef int n, k, nrolls
    cdef int deg[MAXN]
    cdef int nbr[MAXN][MAXDEG]
    cdef uint32_t forts, earth, heaven, ishtar, entry
    cdef int roll_steps[MAXROLLS]
    cdef int roll_heaven[MAXROLLS]
    cdef int roll_adjacent[MAXROLLS]
    cdef uint32_t roll_spawn[MAXROLLS]
    cdef float roll_p[MAXROLLS]
    cdef int64_t binom[MAXN + 1][MAXN + 1]
    cdef int64_t off[MAXK + 1][MAXK + 2]
    cdef int64_t total
    cdef float gamma  # discount on the value of the next turn (1: none); set by each value kernel

    def __init__(self, int n, int k, neighbours, uint32_t forts, uint32_t earth, uint32_t heaven,
                 uint32_t ishtar, uint32_t entry, rolls):
        """``neighbours``: list of tile-index lists; ``rolls``: list of
        (probability, steps, heaven_steps, adjacent_spawn, spawn_mask)."""
        cdef int i, j, a, b
        if not 1 <= n <= MAXN or not 0 <= k <= MAXK or k > n or len(rolls) > MAXROLLS:
            raise ValueError("board, pieces or rolls outside the kernel's limits")
        self.n, self.k = n, k
        for i in range(n):
            if len(neighbours[i]) > MAXDEG:
                raise ValueError(f"tile {i} has more than {MAXDEG} neighbours")
            self.deg[i] = len(neighbours[i])
            for j in range(self.deg[i]):
                self.nbr[i][j] = neighbours[i][j]
        self.forts, self.earth, self.heaven, self.ishtar, self.entry = forts, earth, heaven, ishtar, entry
        self.nrolls = len(rolls)
        self.gamma = 1.0
        for i, (p, steps, hsteps, adj, mask) in enumerate(rolls):
            self.roll_p[i] = p
            self.roll_steps[i] = steps
            self.roll_heaven[i] = hsteps
            self.roll_adjacent[i] = adj
            self.roll_spawn[i] = mask
        for i in range(MAXN + 1):
            for j in range(MAXN + 1):
                self.binom[i][j] = 0
            self.binom[i][0] = 1
            for j in range(1, i + 1):
                self.binom[i][j] = self.binom[i - 1][j - 1] + self.binom[i - 1][j]
        self.total = 0
        for a in range(k + 1):
            for b in range(k + 1):
                self.off[a][b] = self.total
                if a + b <= n:
                    self.total += self.binom[n][a] * self.binom[n - a][b]
            self.off[a][k + 1] = self.total

    @property
    def state_count(self) -> int:
        return self.total

    @property
    def roll_count(self) -> int:
        return self.nrolls

    def tier_offsets(self):
        """(k+1, k+2) int64: ``off[a, b]`` first rank of tier (a, b); ``off[a, k+1]`` its row's end."""
        out = np.zeros((self.k + 1, self.k + 2), dtype=np.int64)
        for a in range(self.k + 1):
            for b in range(self.k + 2):
                out[a, b] = self.off[a][b]
        return out

    # ---- ranking -------------------------------------------------------------------------

    cdef inline int64_t rank1(self, uint32_t M, uint32_t O) noexcept nogil:
        cdef int a = __builtin_popcount(M), b = __builtin_popcount(O), i, t
        cdef int64_t rm = 0, ro = 0
        cdef uint32_t s = M
        i = 0
        while s:
            t = __builtin_ctz(s)
            i += 1
            rm += self.binom[t][i]
            s &= s - 1
        s = O
        i = 0
        while s:
            t = __builtin_ctz(s)
            i += 1
            # squeeze: index of tile t among the tiles not in M
            ro += self.binom[t - __builtin_popcount(M & ((<uint32_t> 1 << t) - 1))][i]
            s &= s - 1
        return self.off[a][b] + rm * self.binom[self.n - a][b] + ro

    cdef inline void unrank1(self, int64_t r, uint32_t* M, uint32_t* O) noexcept nogil:
        cdef int a = 0, b = 0, i, t, j
        cdef int64_t width, rm, ro
        cdef uint32_t m = 0, o = 0, freeset
        while a < self.k and self.off[a][self.k + 1] <= r:
            a += 1
        while b < self.k and self.off[a][b + 1] <= r:
            b += 1
        r -= self.off[a][b]
        width = self.binom[self.n - a][b]
        rm = r // width
        ro = r - rm * width
        t = self.n - 1
        for i in range(a, 0, -1):
            while self.binom[t][i] > rm:
                t -= 1
            m |= (<uint32_t> 1) << t
            rm -= self.binom[t][i]
            t -= 1
        t = self.n - a - 1
        for i in range(b, 0, -1):
            while self.binom[t][i] > ro:
                t -= 1
            ro -= self.binom[t][i]
            # the t-th free tile (counting from 0) among tiles not in m
            freeset = ~m
            for j in range(t):
                freeset &= freeset - 1
            o |= (<uint32_t> 1) << __builtin_ctz(freeset)
            t -= 1
        M[0] = m
        O[0] = o

    cdef inline uint64_t unrank_packed(self, int64_t r) noexcept nogil:
        cdef uint32_t m = 0, o = 0
        self.unrank1(r, &m, &o)
        return (<uint64_t> m) | ((<uint64_t> o) << 32)

    def rank(self, mine, theirs):
        """Ranks of states given as arrays of tile masks (vectorized)."""
        cdef cnp.ndarray[uint32_t, ndim=1] ms = np.ascontiguousarray(mine, dtype=np.uint32).reshape(-1)
        cdef cnp.ndarray[uint32_t, ndim=1] os_ = np.ascontiguousarray(theirs, dtype=np.uint32).reshape(-1)
        if ms.shape[0] != os_.shape[0]:
            raise ValueError("mine and theirs differ in length")
        outside = np.uint32(0xFFFFFFFF ^ ((1 << self.n) - 1))
        if ms.shape[0] and (
            np.any(ms & os_) or np.any(ms & outside) or np.any(os_ & outside)
            or np.any(np.bitwise_count(ms) > self.k) or np.any(np.bitwise_count(os_) > self.k)
        ):
            raise ValueError("state outside the encoding (overlap, unknown tile or too many pieces)")
        cdef Py_ssize_t i, m = ms.shape[0]
        cdef cnp.ndarray[int64_t, ndim=1] out = np.empty(m, dtype=np.int64)
        with nogil:
            for i in range(m):
                out[i] = self.rank1(ms[i], os_[i])
        return out

    def unrank(self, ranks):
        """(mine, theirs) uint32 tile masks of the given ranks (vectorized)."""
        cdef cnp.ndarray[int64_t, ndim=1] r = np.ascontiguousarray(ranks, dtype=np.int64).reshape(-1)
        if r.shape[0] and (r.min() < 0 or r.max() >= self.total):
            raise ValueError(f"rank outside 0..{self.total - 1}")
        cdef Py_ssize_t i, m = r.shape[0]
        cdef cnp.ndarray[uint32_t, ndim=1] ms = np.empty(m, dtype=np.uint32)
        cdef cnp.ndarray[uint32_t, ndim=1] os_ = np.empty(m, dtype=np.uint32)
        cdef uint32_t a, b
        with nogil:
            for i in range(m):
                self.unrank1(r[i], &a, &b)
                ms[i] = a
                os_[i] = b
        return ms, os_

    # ---- move generation -----------------------------------------------------------------

    cdef inline void emit(self, Buf* buf, uint32_t M, uint32_t O, int fort) noexcept nogil:
        if buf.n >= BUF:
            return  # cannot happen within MAXK/MAXDEG; guarded so memory stays safe
        buf.m[buf.n] = M
        buf.o[buf.n] = O
        buf.f[buf.n] = 2 if (M & self.forts) == self.forts else (1 if fort else 0)
        buf.n += 1

    cdef inline int step(self, uint32_t M, uint32_t O, int frm, int to, uint32_t* M2, uint32_t* O2) noexcept nogil:
        """-1 illegal; else 0, or 1 when the step captured. Ishtar protects the other side's forts."""
        cdef uint32_t bit = (<uint32_t> 1) << to
        if M & bit:
            return -1
        if O & bit:
            if (bit & self.forts) and (O & self.ishtar):
                return -1
            M2[0] = (M & ~((<uint32_t> 1) << frm)) | bit
            O2[0] = O & ~bit
            return 1
        M2[0] = (M & ~((<uint32_t> 1) << frm)) | bit
        O2[0] = O
        return 0

    cdef void walks(self, Buf* buf, uint32_t M, uint32_t O, int start, int here, int done, int lo, int hi,
                    int fort) noexcept nogil:
        """Moves of one piece (from ``start``, now on ``here`` after ``done`` steps) of lo..hi steps."""
        cdef int j, to, cap, f2
        cdef uint32_t M2 = 0, O2 = 0
        for j in range(self.deg[here]):
            to = self.nbr[here][j]
            cap = self.step(M, O, here, to, &M2, &O2)
            if cap < 0:
                continue
            f2 = fort | (((self.forts >> to) & 1) != 0)
            if done + 1 >= lo and to != start:
                self.emit(buf, M2, O2, f2)
            if done + 1 < hi and not (cap and (M2 & self.earth) != self.earth):
                self.walks(buf, M2, O2, start, to, done + 1, lo, hi, f2)

    cdef void one_piece(self, Buf* buf, uint32_t M, uint32_t O, int lo, int hi) noexcept nogil:
        cdef uint32_t s = M
        cdef int p
        while s:
            p = __builtin_ctz(s)
            s &= s - 1
            self.walks(buf, M, O, p, p, 0, lo, hi, 0)

    cdef void two_pieces(self, Buf* buf, uint32_t M, uint32_t O) noexcept nogil:
        """Two different pieces one step each. Both orders give the same result when both are
        legal, so the order with the higher tile first is kept only when the other is illegal."""
        cdef uint32_t s = M, s2, M1 = 0, O1 = 0, M2 = 0, O2 = 0, Mq = 0, Oq = 0
        cdef int p, q, j, j2, to, to2
        while s:
            p = __builtin_ctz(s)
            s &= s - 1
            for j in range(self.deg[p]):
                to = self.nbr[p][j]
                if self.step(M, O, p, to, &M1, &O1) < 0:
                    continue
                s2 = M1 & ~((<uint32_t> 1) << to)
                while s2:
                    q = __builtin_ctz(s2)
                    s2 &= s2 - 1
                    for j2 in range(self.deg[q]):
                        to2 = self.nbr[q][j2]
                        if self.step(M1, O1, q, to2, &M2, &O2) < 0:
                            continue
                        if p > q and self.step(M, O, q, to2, &Mq, &Oq) >= 0 and self.step(Mq, Oq, p, to, &Mq, &Oq) >= 0:
                            continue
                        self.emit(buf, M2, O2, ((self.forts >> to) & 1) | ((self.forts >> to2) & 1))

    cdef void spawns(self, Buf* buf, uint32_t M, uint32_t O, uint32_t tiles) noexcept nogil:
        cdef uint32_t s = tiles & ~(M | O)
        cdef int t
        while s:
            t = __builtin_ctz(s)
            s &= s - 1
            self.emit(buf, M | ((<uint32_t> 1) << t), O, 0)

    cdef inline uint32_t adjacent(self, uint32_t M) noexcept nogil:
        cdef uint32_t s = M, out = 0
        cdef int p, j
        while s:
            p = __builtin_ctz(s)
            s &= s - 1
            for j in range(self.deg[p]):
                out |= (<uint32_t> 1) << self.nbr[p][j]
        return out

    cdef inline int entry_legal(self, uint32_t M, uint32_t O) noexcept nogil:
        if __builtin_popcount(M) >= self.k or (M & self.entry):
            return 0
        # an opponent's lone piece on the entry may not be captured by a spawn
        return not ((O & self.entry) and __builtin_popcount(O) == 1)

    cdef int roll_spawn_tiles(self, uint32_t M, uint32_t O, int r, uint32_t* tiles) noexcept nogil:
        if __builtin_popcount(M) >= self.k:
            tiles[0] = 0
            return 0
        tiles[0] = self.roll_spawn[r] | (self.adjacent(M) if self.roll_adjacent[r] else 0)
        return 1

    cdef int gen_roll(self, Buf* buf, uint32_t M, uint32_t O, int r) noexcept nogil:
        """Every outcome of roll ``r`` (the pass when nothing is legal)."""
        cdef uint32_t tiles = 0
        buf.n = 0
        if self.entry_legal(M, O):
            self.emit(buf, M | self.entry, O & ~self.entry, 0)
        if self.roll_spawn_tiles(M, O, r, &tiles):
            self.spawns(buf, M, O, tiles)
        if self.roll_steps[r] >= 1:
            self.one_piece(buf, M, O, 1, 1)
        if self.roll_steps[r] >= 2:
            self.one_piece(buf, M, O, 2, 2)
            self.two_pieces(buf, M, O)
        if self.roll_heaven[r] > self.roll_steps[r] and (M & self.heaven) == self.heaven:
            self.one_piece(buf, M, O, self.roll_steps[r] + 1, self.roll_heaven[r])
        if buf.n == 0:
            self.emit(buf, M, O, 0)
            buf.f[0] = 3  # pass: flag 3 keeps it apart from a real action
        return buf.n

    def successors(self, uint32_t mine, uint32_t theirs, int roll):
        """Outcomes of ``roll`` from the state: list of (mine, theirs, flag); flag 3 = pass."""
        if not 0 <= roll < self.nrolls:
            raise ValueError("roll index out of range")
        cdef Buf* buf = new_bufs(1)
        try:
            self.gen_roll(buf, mine, theirs, roll)
            return [(int(buf.m[i]), int(buf.o[i]), int(buf.f[i])) for i in range(buf.n)]
        finally:
            free_bufs(buf, 1)

    # ---- values ----------------------------------------------------------------------------

    cdef inline float best(self, Buf* buf, const float* V, int32_t* code) noexcept nogil:
        """Best value among the outcomes in ``buf``; ``code`` receives its policy code."""
        cdef int i
        cdef int64_t r
        cdef float v, top = -2.0
        code[0] = NOCODE
        for i in range(buf.n):
            if buf.f[i] == 2:
                code[0] = WIN
                return 1.0
            if buf.f[i] == 1:
                r = self.rank1(buf.m[i], buf.o[i])
                v = self.gamma * V[r]
            else:
                r = self.rank1(buf.o[i], buf.m[i])
                v = -(self.gamma * V[r])
                r = -r - 1
            if v > top:
                top = v
                code[0] = <int32_t> r
        return top

    cdef inline float outcome_value(self, uint32_t M, uint32_t O, int flag, const float* V,
                                    int32_t* code) noexcept nogil:
        cdef int64_t r
        if (M & self.forts) == self.forts:
            code[0] = WIN
            return 1.0
        if flag == 1:
            r = self.rank1(M, O)
            code[0] = <int32_t> r
            return self.gamma * V[r]
        r = self.rank1(O, M)
        code[0] = <int32_t> (-r - 1)
        return -(self.gamma * V[r])

    cdef float backup(self, Buf* buf, uint32_t M, uint32_t O, const float* V, int32_t* codes) noexcept nogil:
        """Expected value over the rolls of the best action: one Bellman backup.

        Rolls share their parts (entry spawn, one-step moves, two-step moves, three-step moves
        while dominating Heaven), so each part is generated once per state, not once per roll.
        When ``codes`` is not NULL, ``codes[r]`` receives the policy code of roll r's best
        outcome: rank ``c`` (the mover acts again, value V[c]), ``-c - 1`` (the turn passes,
        value -V[c]), WIN (+1) or LOSS (-1).
        """
        cdef int r, t, hmax = 0
        cdef float total = 0.0, v, entry = -2.0, a1, a2, a3, w
        cdef int32_t centry = NOCODE, c1, c2, c3, cw, cv
        cdef uint32_t adj = 0, tiles
        cdef bint pool = __builtin_popcount(M) < self.k
        if (M & self.forts) == self.forts or (O & self.forts) == self.forts:
            cv = WIN if (M & self.forts) == self.forts else LOSS
            if codes != NULL:
                for r in range(self.nrolls):
                    codes[r] = cv
            return 1.0 if cv == WIN else -1.0
        if self.entry_legal(M, O):
            entry = self.outcome_value(M | self.entry, O & ~self.entry, 0, V, &centry)
        buf.n = 0
        self.one_piece(buf, M, O, 1, 1)
        a1 = self.best(buf, V, &c1)
        buf.n = 0
        self.one_piece(buf, M, O, 2, 2)
        self.two_pieces(buf, M, O)
        a2 = self.best(buf, V, &c2)
        if a1 > a2:
            a2 = a1
            c2 = c1
        a3 = a2
        c3 = c2
        for r in range(self.nrolls):
            if self.roll_heaven[r] > hmax:
                hmax = self.roll_heaven[r]
        if hmax > 2 and (M & self.heaven) == self.heaven:
            buf.n = 0
            self.one_piece(buf, M, O, 3, hmax)
            w = self.best(buf, V, &cw)
            if w > a3:
                a3 = w
                c3 = cw
        if pool:
            adj = self.adjacent(M)
        for r in range(self.nrolls):
            v = entry
            cv = centry
            if self.roll_steps[r] >= 1 and a1 > v:
                v = a1
                cv = c1
            if self.roll_steps[r] >= 2:
                if self.roll_heaven[r] > 2 and (M & self.heaven) == self.heaven:
                    w = a3
                    cw = c3
                else:
                    w = a2
                    cw = c2
                if w > v:
                    v = w
                    cv = cw
            if pool:
                tiles = (self.roll_spawn[r] | (adj if self.roll_adjacent[r] else 0)) & ~(M | O)
                while tiles:
                    t = __builtin_ctz(tiles)
                    tiles &= tiles - 1
                    w = self.outcome_value(M | ((<uint32_t> 1) << t), O, 0, V, &cw)
                    if w > v:
                        v = w
                        cv = cw
            if v < -1.5:  # nothing legal: pass
                v = self.outcome_value(M, O, 0, V, &cv)
            total += self.roll_p[r] * v
            if codes != NULL:
                codes[r] = cv
        return total

    def sweep(self, float[::1] V, int threads=1, int64_t start=0, int64_t stop=-1, bint write=True,
              bint backwards=False, int32_t[:, ::1] policy=None, float discount=1.0):
        """One Gauss-Seidel sweep in place over ranks start..stop-1; returns the largest change.

        With ``policy`` (int32, one row per state, one column per roll), each visited state's
        row receives the policy codes of its best outcomes (see ``backup``).

        ``backwards`` visits the ranks from the top down (states with many pieces on the board
        first, where the wins are).
        With ``write=False`` nothing is written and the result is the Bellman residual.
        ``discount`` (at most 1) multiplies the value of every position reached without winning:
        the game stops, counted 0, with probability 1 - discount after each action.
        """
        stop = self.sweep_range(V, start, stop, discount)
        self.gamma = discount
        cdef int nt = max(1, threads), t
        cdef float* worst
        cdef Buf* bufs
        cdef int64_t s, i
        cdef uint32_t M = 0, O = 0
        cdef uint64_t packed
        cdef float v, d, top = 0.0
        cdef float* Vp = &V[0]
        cdef int tid
        cdef int32_t* P = self.policy_rows(policy)
        cdef int R = self.nrolls
        worst = <float*> malloc(nt * 64 * sizeof(float))
        bufs = new_bufs(nt)
        for t in range(nt):
            worst[t * 64] = 0.0
        try:
            with nogil:
                for i in prange(start, stop, schedule="dynamic", chunksize=4096, num_threads=nt):
                    s = (stop - 1 - (i - start)) if backwards else i
                    tid = threadid()
                    # plain assignments, so that prange makes M and O private to each thread
                    packed = self.unrank_packed(s)
                    M = <uint32_t> packed
                    O = <uint32_t> (packed >> 32)
                    v = self.backup(&bufs[tid], M, O, Vp, (P + s * R) if P != NULL else NULL)
                    d = fabsf(v - Vp[s])
                    if d > worst[tid * 64]:
                        worst[tid * 64] = d
                    if write:
                        Vp[s] = v
            return largest(worst, nt)
        finally:
            free_bufs(bufs, nt)
            free(worst)

    cdef int64_t sweep_range(self, float[::1] V, int64_t start, int64_t stop, float discount) except -1:
        """Check a sweep's value array, rank range and discount; returns ``stop`` (-1: the end)."""
        if not 0.0 < discount <= 1.0:
            raise ValueError("discount must be in (0, 1]")
        if V.shape[0] != self.total:
            raise ValueError(f"value array has {V.shape[0]} entries, the state space {self.total}")
        if stop < 0:
            stop = self.total
        if not 0 <= start <= stop <= self.total:
            raise ValueError(f"ranks {start}..{stop} outside the state space (0..{self.total})")
        return stop

    cdef int32_t* policy_rows(self, int32_t[:, ::1] policy) except *:
        """The policy array's first row (NULL for None), checked to have a row per state."""
        if policy is None:
            return NULL
        if policy.shape[0] != self.total or policy.shape[1] != self.nrolls:
            raise ValueError(f"policy array must have shape ({self.total}, {self.nrolls})")
        return &policy[0, 0]

    def roll_values(self, float[::1] V, uint32_t mine, uint32_t theirs):
        """Best value of each roll from the state (after the roll, before acting), undiscounted."""
        self.gamma = 1.0
        cdef int r
        cdef int32_t code
        cdef Buf* buf = new_bufs(1)
        out = []
        try:
            for r in range(self.nrolls):
                self.gen_roll(buf, mine, theirs, r)
                out.append(float(self.best(buf, &V[0], &code)))
            return out
        finally:
            free_bufs(buf, 1)

    # ---- a fixed policy ----------------------------------------------------------------------

    cdef inline float policy_term(self, int32_t c, const float* V, float g) noexcept nogil:
        if c >= 0:
            return g * V[c]
        if c == WIN:
            return 1.0
        if c == LOSS:
            return -1.0
        return -(g * V[-(<int64_t> c) - 1])

    def evaluate(self, const int32_t[:, ::1] policy, float[::1] V, int threads=1, float discount=1.0):
        """One Gauss-Seidel sweep of the fixed policy's equations V = c + A V, in place.

        Costs a handful of lookups a state instead of generating every action, so many of these
        sweeps fit in the time of one full backup. The arithmetic is the full sweep's (float32,
        the rolls summed in the same order), so where the policy is still the greedy one both
        sweeps have the same fixed point. Returns the largest change.
        """
        if V.shape[0] != self.total or policy.shape[0] != self.total or policy.shape[1] != self.nrolls:
            raise ValueError("value or policy array does not fit the state space")
        if not 0.0 < discount <= 1.0:
            raise ValueError("discount must be in (0, 1]")
        cdef int nt = max(1, threads), t, r, tid
        cdef float* worst = <float*> malloc(nt * 64 * sizeof(float))
        cdef int64_t s
        cdef float acc, d, top = 0.0
        cdef float* Vp = &V[0]
        cdef const int32_t* P = &policy[0, 0]
        cdef int R = self.nrolls
        for t in range(nt):
            worst[t * 64] = 0.0
        with nogil:
            for s in prange(self.total, schedule="static", chunksize=65536, num_threads=nt):
                tid = threadid()
                acc = 0.0
                for r in range(R):  # float32, summed in backup's order: the same fixed point
                    acc = acc + self.roll_p[r] * self.policy_term(P[s * R + r], Vp, discount)
                d = fabsf(acc - Vp[s])
                if d > worst[tid * 64]:
                    worst[tid * 64] = d
                Vp[s] = acc
        top = largest(worst, nt)
        free(worst)
        return top

    def policy_apply(self, const int32_t[:, ::1] policy, const double[::1] x, double[::1] out,
                     bint constants=False, bint minus=False, int threads=1, double discount=1.0):
        """``out = A x`` (or ``c + A x`` with ``constants``, ``x - A x`` with ``minus``) for the
        fixed policy: a matrix-vector product for Krylov solvers, in float64."""
        if x.shape[0] != self.total or out.shape[0] != self.total or policy.shape[0] != self.total \
                or policy.shape[1] != self.nrolls:
            raise ValueError("vector or policy array does not fit the state space")
        cdef int nt = max(1, threads), r
        cdef int64_t s
        cdef int32_t c
        cdef double acc, term
        cdef const int32_t* P = &policy[0, 0]
        cdef int R = self.nrolls
        with nogil:
            for s in prange(self.total, schedule="static", chunksize=65536, num_threads=nt):
                acc = 0.0
                for r in range(R):
                    c = P[s * R + r]
                    if c >= 0:
                        term = discount * x[c]
                    elif c == WIN:
                        term = 1.0 if constants else 0.0
                    elif c == LOSS:
                        term = -1.0 if constants else 0.0
                    else:
                        term = -(discount * x[-(<int64_t> c) - 1])
                    acc = acc + self.roll_p[r] * term
                out[s] = (x[s] - acc) if minus else acc

    # ---- endless play: can the side ahead force the game to end? ------------------------------

    cdef inline int64_t outcome_target(self, Buf* buf, int i, const float* V, float* v) noexcept nogil:
        """Successor rank of outcome ``i`` (-1 for a win) and, in ``v``, its value for the mover."""
        cdef int64_t c
        if buf.f[i] == 2:
            v[0] = 1.0
            return -1
        if buf.f[i] == 1:
            c = self.rank1(buf.m[i], buf.o[i])
            v[0] = V[c]
            return c
        c = self.rank1(buf.o[i], buf.m[i])
        v[0] = -V[c]
        return c

    cdef int reaches(self, Buf* buf, uint32_t M, uint32_t O, const float* V, float ahead,
                     const uint8_t* good, float eps) noexcept nogil:
        """1 when the state joins the set that can be made to end (see ``endless_pass``)."""
        cdef int r, i, inside
        cdef float v = 0.0, top
        cdef int64_t c
        for r in range(self.nrolls):
            self.gen_roll(buf, M, O, r)
            if ahead > 0:  # the mover wants the game to end: one of its best outcomes must lead there
                top = -2.0
                for i in range(buf.n):
                    self.outcome_target(buf, i, V, &v)
                    if v > top:
                        top = v
                for i in range(buf.n):
                    c = self.outcome_target(buf, i, V, &v)
                    if v >= top - eps and (c < 0 or good[c]):
                        return 1
            else:  # the mover would rather play for ever: only a roll with no way out forces it
                inside = 1
                for i in range(buf.n):
                    c = self.outcome_target(buf, i, V, &v)
                    if c >= 0 and not good[c]:
                        inside = 0
                        break
                if inside:
                    return 1
        return 0

    def endless_pass(self, const float[::1] V, uint8_t[::1] good, float eps, int threads=1,
                     bint first=False):
        """One in-place pass of the attractor of the finished games; returns the states it added.

        ``good`` marks the states from which the game can be brought to an end (with positive
        probability) against any resistance, given the values ``V``. The side ahead (V > eps for
        the mover) may use only actions within ``eps`` of its best, since any other action gives
        up value; the side behind may use every action, since endless play (0) is better for it.
        ``first`` also marks the finished positions and those worth at most ``eps`` either way
        (there endless play is consistent with the value). Repeat until a pass adds nothing; the
        states left unmarked with |V| > eps are where ``V`` cannot be the game's value: the side
        ahead cannot make the game end by best play, and endless play counts 0, not V.
        """
        if V.shape[0] != self.total or good.shape[0] != self.total:
            raise ValueError("value or mark array does not fit the state space")
        cdef int nt = max(1, threads), t, tid
        cdef int64_t* added = <int64_t*> malloc(nt * 8 * sizeof(int64_t))
        cdef Buf* bufs = new_bufs(nt)
        cdef int64_t s, total_added = 0
        cdef uint32_t M = 0, O = 0
        cdef uint64_t packed
        cdef const float* Vp = &V[0]
        cdef uint8_t* G = &good[0]
        cdef float v
        for t in range(nt):
            added[t * 8] = 0
        try:
            with nogil:
                for s in prange(self.total, schedule="dynamic", chunksize=4096, num_threads=nt):
                    if G[s]:
                        continue
                    tid = threadid()
                    packed = self.unrank_packed(s)
                    M = <uint32_t> packed
                    O = <uint32_t> (packed >> 32)
                    v = Vp[s]
                    if first and ((M & self.forts) == self.forts or (O & self.forts) == self.forts
                                  or fabsf(v) <= eps):
                        G[s] = 1
                        added[tid * 8] += 1
                    elif self.reaches(&bufs[tid], M, O, Vp, v, G, eps):
                        G[s] = 1
                        added[tid * 8] += 1
            for t in range(nt):
                total_added += added[t * 8]
            return total_added
        finally:
            free_bufs(bufs, nt)
            free(added)

    # ---- a stored graph: every state's outcomes, ranked once ----------------------------------
    #
    # A full sweep spends most of its time generating and ranking outcomes (165 a state for
    # K = 4, 48 of them distinct). Stored once, as policy codes grouped the way ``backup`` shares
    # them, a sweep costs one lookup per distinct outcome. Groups per state (GROUPS = nrolls + 5):
    #   0: the entry spawn, 1: one-step moves, 2: two-step moves not already in 1,
    #   3: three-step moves while dominating Heaven not already in 1 or 2,
    #   4 + r: roll r's colour spawns, 4 + nrolls: the pass (only when some roll has nothing
    #   legal) or, alone, WIN / LOSS for a finished position.

    def roll_moves(self, int roll):
        """(steps, heaven steps) of roll ``roll``."""
        if not 0 <= roll < self.nrolls:
            raise ValueError("roll index out of range")
        return self.roll_steps[roll], self.roll_heaven[roll]

    @property
    def graph_groups(self) -> int:
        return self.nrolls + 5

    cdef inline int32_t out_code(self, uint32_t M, uint32_t O, int flag) noexcept nogil:
        if (M & self.forts) == self.forts:
            return WIN
        if flag == 1:
            return <int32_t> self.rank1(M, O)
        return <int32_t> (-self.rank1(O, M) - 1)

    cdef int buf_codes(self, Buf* buf, int32_t* out, const int32_t* skip, int nskip) noexcept nogil:
        """The outcomes in ``buf`` as sorted distinct codes in ``out``, leaving out those in the
        sorted ``skip``; returns how many."""
        cdef int i, j, n = 0, x
        cdef int32_t c
        for i in range(buf.n):
            c = WIN if buf.f[i] == 2 else self.out_code(buf.m[i], buf.o[i], buf.f[i])
            j = n  # insertion sort, dropping duplicates
            while j > 0 and out[j - 1] > c:
                j -= 1
            if j > 0 and out[j - 1] == c:
                continue
            x = n
            while x > j:
                out[x] = out[x - 1]
                x -= 1
            out[j] = c
            n += 1
        if nskip == 0:
            return n
        j = 0
        x = 0
        for i in range(n):
            while x < nskip and skip[x] < out[i]:
                x += 1
            if x < nskip and skip[x] == out[i]:
                continue
            out[j] = out[i]
            j += 1
        return j

    cdef int state_groups(self, Buf* buf, uint32_t M, uint32_t O, int32_t* codes, int32_t* tmp,
                          int* counts) noexcept nogil:
        """Fill ``codes`` with the state's outcome codes, group after group, and ``counts`` with
        the size of each group; returns the total."""
        cdef int G = self.nrolls + 5, g, r, n = 0, n1, n12, hmax = 0, t, has
        cdef uint32_t tiles, adj = 0
        for g in range(G):
            counts[g] = 0
        if (M & self.forts) == self.forts or (O & self.forts) == self.forts:
            codes[0] = WIN if (M & self.forts) == self.forts else LOSS
            counts[G - 1] = 1
            return 1
        if self.entry_legal(M, O):
            codes[n] = self.out_code(M | self.entry, O & ~self.entry, 0)
            counts[0] = 1
            n += 1
        buf.n = 0
        self.one_piece(buf, M, O, 1, 1)
        counts[1] = self.buf_codes(buf, codes + n, NULL, 0)
        n1 = n
        n += counts[1]
        buf.n = 0
        self.one_piece(buf, M, O, 2, 2)
        self.two_pieces(buf, M, O)
        counts[2] = self.buf_codes(buf, codes + n, codes + n1, counts[1])
        n += counts[2]
        for r in range(self.nrolls):
            if self.roll_heaven[r] > hmax:
                hmax = self.roll_heaven[r]
        if hmax > 2 and (M & self.heaven) == self.heaven:
            # skip list: groups 1 and 2 together, sorted
            n12 = self.merge(codes + n1, counts[1], codes + n1 + counts[1], counts[2], tmp)
            buf.n = 0
            self.one_piece(buf, M, O, 3, hmax)
            counts[3] = self.buf_codes(buf, codes + n, tmp, n12)
            n += counts[3]
        if __builtin_popcount(M) < self.k:
            adj = self.adjacent(M)
            for r in range(self.nrolls):
                tiles = (self.roll_spawn[r] | (adj if self.roll_adjacent[r] else 0)) & ~(M | O)
                while tiles:
                    t = __builtin_ctz(tiles)
                    tiles &= tiles - 1
                    codes[n] = self.out_code(M | ((<uint32_t> 1) << t), O, 0)
                    n += 1
                    counts[4 + r] += 1
        for r in range(self.nrolls):
            has = counts[0] or counts[4 + r] or (self.roll_steps[r] >= 1 and counts[1]) or (
                self.roll_steps[r] >= 2 and (counts[2] or (self.roll_heaven[r] > 2 and counts[3])))
            if not has:
                codes[n] = self.out_code(M, O, 0)
                n += 1
                counts[G - 1] = 1
                break
        return n

    cdef int merge(self, const int32_t* a, int na, const int32_t* b, int nb, int32_t* out) noexcept nogil:
        cdef int i = 0, j = 0, n = 0
        while i < na or j < nb:
            if j >= nb or (i < na and a[i] <= b[j]):
                out[n] = a[i]
                i += 1
            else:
                out[n] = b[j]
                j += 1
            n += 1
        return n

    def graph_codes(self, int64_t rank):
        """How many codes the stored graph keeps for the state ``rank`` (to estimate its size)."""
        if not 0 <= rank < self.total:
            raise ValueError("rank out of range")
        cdef Buf* buf = new_bufs(1)
        cdef int32_t* scratch = <int32_t*> malloc(2 * BUF * sizeof(int32_t))
        cdef int cnt[MAXROLLS + 5]
        cdef uint64_t packed = self.unrank_packed(rank)
        try:
            return self.state_groups(buf, <uint32_t> packed, <uint32_t> (packed >> 32), scratch, scratch + BUF, cnt)
        finally:
            free_bufs(buf, 1)
            free(scratch)

    def graph_build(self, int64_t[::1] offsets, uint8_t[:, ::1] counts, int32_t[::1] codes,
                    int threads=1, int64_t start=0, int64_t stop=-1):
        """Stored graph, in two calls: without ``codes`` (an empty array) fill ``counts`` (one row
        per state, ``graph_groups`` columns) for ranks start..stop-1 and return the largest group;
        with ``codes`` (sized by the cumulative ``offsets``, ``offsets[s]`` = first code of state
        s) fill the codes of those ranks. A group above 255 outcomes cannot be stored (returned
        as is: the caller must check)."""
        cdef int G = self.nrolls + 5, nt = max(1, threads), g, tid, t, n
        if stop < 0:
            stop = self.total
        if not 0 <= start <= stop <= self.total:
            raise ValueError(f"ranks {start}..{stop} outside the state space (0..{self.total})")
        if counts.shape[0] != self.total or counts.shape[1] != G or offsets.shape[0] != self.total + 1:
            raise ValueError("offsets or counts do not fit the state space")
        cdef bint fill = codes.shape[0] > 0
        if fill and codes.shape[0] < offsets[self.total]:
            raise ValueError("code array shorter than the offsets say")
        cdef Buf* bufs = new_bufs(nt)
        cdef int32_t* scratch = <int32_t*> malloc(nt * 2 * BUF * sizeof(int32_t))
        cdef int* cnt = <int*> malloc(nt * 64 * sizeof(int))
        cdef int* top = <int*> malloc(nt * 16 * sizeof(int))
        cdef int64_t s, i
        cdef uint64_t packed
        cdef uint32_t M = 0, O = 0
        cdef int32_t* C = &codes[0] if fill else NULL
        cdef int best = 0
        for t in range(nt):
            top[t * 16] = 0
        try:
            with nogil:
                for s in prange(start, stop, schedule="dynamic", chunksize=4096, num_threads=nt):
                    tid = threadid()
                    packed = self.unrank_packed(s)
                    M = <uint32_t> packed
                    O = <uint32_t> (packed >> 32)
                    n = self.state_groups(&bufs[tid], M, O, scratch + tid * 2 * BUF,
                                          scratch + tid * 2 * BUF + BUF, cnt + tid * 64)
                    for g in range(G):
                        if cnt[tid * 64 + g] > top[tid * 16]:
                            top[tid * 16] = cnt[tid * 64 + g]
                        counts[s, g] = <uint8_t> min(cnt[tid * 64 + g], 255)
                    if fill:
                        for i in range(n):
                            C[offsets[s] + i] = scratch[tid * 2 * BUF + i]
            for t in range(nt):
                if top[t * 16] > best:
                    best = top[t * 16]
            return best
        finally:
            free_bufs(bufs, nt)
            free(scratch)
            free(cnt)
            free(top)

    cdef inline bint finished(self, const int32_t* c, const uint8_t* cnt) noexcept nogil:
        """A finished position: its only code, in the last group, is WIN or LOSS."""
        cdef int g
        if not cnt[self.nrolls + 4] or not (c[0] == WIN or c[0] == LOSS):
            return 0
        for g in range(self.nrolls + 4):
            if cnt[g]:
                return 0
        return 1

    cdef inline float group_best(self, const int32_t* c, int n, const float* V, float g, float v,
                                 int32_t* code) noexcept nogil:
        """max(v, the best of the n codes); ``code`` follows the best."""
        cdef int i
        cdef float w
        for i in range(n):
            w = self.policy_term(c[i], V, g)
            if w > v:
                v = w
                code[0] = c[i]
        return v

    cdef float graph_backup(self, const int32_t* c, const uint8_t* cnt, const float* V, float g,
                            int32_t* codes) noexcept nogil:
        """``backup`` from stored codes: the same arithmetic in the same order, so the same value."""
        cdef int G = self.nrolls + 5, r
        cdef const int32_t* p
        cdef float e = -2.0, a1, a2, a3, v, total = 0.0
        cdef int32_t ce = NOCODE, c1 = NOCODE, c2, c3, cv
        cdef const int32_t* spawn
        cdef const int32_t* last
        if self.finished(c, cnt):
            if codes != NULL:
                for r in range(self.nrolls):
                    codes[r] = c[0]
            return 1.0 if c[0] == WIN else -1.0
        p = c
        e = self.group_best(p, cnt[0], V, g, e, &ce)
        p += cnt[0]
        a1 = self.group_best(p, cnt[1], V, g, -2.0, &c1)
        p += cnt[1]
        c2 = c1
        a2 = self.group_best(p, cnt[2], V, g, a1, &c2)
        p += cnt[2]
        c3 = c2
        a3 = self.group_best(p, cnt[3], V, g, a2, &c3)
        p += cnt[3]
        spawn = p
        last = p
        for r in range(self.nrolls):
            last += cnt[4 + r]
        for r in range(self.nrolls):
            v = e
            cv = ce
            if self.roll_steps[r] >= 1 and a1 > v:
                v = a1
                cv = c1
            if self.roll_steps[r] >= 2:
                if self.roll_heaven[r] > 2 and a3 > v:
                    v = a3
                    cv = c3
                elif self.roll_heaven[r] <= 2 and a2 > v:
                    v = a2
                    cv = c2
            v = self.group_best(spawn, cnt[4 + r], V, g, v, &cv)
            spawn += cnt[4 + r]
            if v < -1.5:  # nothing legal: the pass, stored last
                cv = last[0] if cnt[G - 1] else NOCODE
                v = self.policy_term(cv, V, g)
            total += self.roll_p[r] * v
            if codes != NULL:
                codes[r] = cv
        return total

    def graph_sweep(self, const int64_t[::1] offsets, const uint8_t[:, ::1] counts,
                    const int32_t[::1] codes, float[::1] V, int threads=1, int64_t start=0,
                    int64_t stop=-1, bint write=True, int32_t[:, ::1] policy=None,
                    float discount=1.0):
        """``sweep`` over the stored graph (see ``graph_build``): the same values, sweep for
        sweep, at the cost of one lookup per distinct outcome."""
        self.check_graph(offsets, counts, codes)
        stop = self.sweep_range(V, start, stop, discount)
        cdef int nt = max(1, threads), t, tid, G = self.nrolls + 5, R = self.nrolls
        cdef int32_t* P = self.policy_rows(policy)
        cdef float* worst = <float*> malloc(nt * 64 * sizeof(float))
        cdef int64_t s
        cdef float v, d, top = 0.0
        cdef float* Vp = &V[0]
        cdef const int32_t* C = &codes[0]
        cdef const uint8_t* N = &counts[0, 0]
        cdef const int64_t* F = &offsets[0]
        for t in range(nt):
            worst[t * 64] = 0.0
        with nogil:
            for s in prange(start, stop, schedule="dynamic", chunksize=4096, num_threads=nt):
                tid = threadid()
                v = self.graph_backup(C + F[s], N + s * G, Vp, discount, (P + s * R) if P != NULL else NULL)
                d = fabsf(v - Vp[s])
                if d > worst[tid * 64]:
                    worst[tid * 64] = d
                if write:
                    Vp[s] = v
        top = largest(worst, nt)
        free(worst)
        return top

    cdef check_graph(self, const int64_t[::1] offsets, const uint8_t[:, ::1] counts, const int32_t[::1] codes):
        if counts.shape[0] != self.total or counts.shape[1] != self.nrolls + 5 \
                or offsets.shape[0] != self.total + 1 or codes.shape[0] < offsets[self.total] \
                or codes.shape[0] == 0:
            raise ValueError("stored graph does not fit the state space")

    cdef int graph_reaches(self, const int32_t* c, const uint8_t* cnt, const float* V, float ahead,
                           const uint8_t* good, float eps) noexcept nogil:
        """``reaches`` over the stored graph: roll r's outcomes are the entry spawn, the moves of
        the groups its steps allow, its colour spawns, or else the pass."""
        cdef int G = self.nrolls + 5, r, g, i, inside
        cdef const int32_t* grp[MAXROLLS + 5]
        cdef int use[MAXROLLS + 5]
        cdef float top
        cdef int32_t x
        cdef int64_t tgt
        cdef const int32_t* p = c
        for g in range(G):
            grp[g] = p
            p += cnt[g]
        for r in range(self.nrolls):
            # the groups roll r may use
            for g in range(G):
                use[g] = 0
            use[0] = 1
            use[1] = self.roll_steps[r] >= 1
            use[2] = self.roll_steps[r] >= 2
            use[3] = self.roll_steps[r] >= 2 and self.roll_heaven[r] > 2
            use[4 + r] = 1
            use[G - 1] = 1
            for g in range(G - 1):
                if use[g] and cnt[g]:
                    use[G - 1] = 0  # the pass only when the roll offers nothing else
            top = -2.0
            inside = 1
            for g in range(G):
                for i in range(cnt[g] if use[g] else 0):
                    x = grp[g][i]
                    top = fmaxf(top, self.policy_term(x, V, 1.0))
                    tgt = -1 if x == WIN else (x if x >= 0 else -(<int64_t> x) - 1)
                    if tgt >= 0 and not good[tgt]:
                        inside = 0
            if ahead > 0:
                for g in range(G):
                    for i in range(cnt[g] if use[g] else 0):
                        x = grp[g][i]
                        tgt = -1 if x == WIN else (x if x >= 0 else -(<int64_t> x) - 1)
                        if self.policy_term(x, V, 1.0) >= top - eps and (tgt < 0 or good[tgt]):
                            return 1
            elif inside:
                return 1
        return 0

    def graph_endless_pass(self, const int64_t[::1] offsets, const uint8_t[:, ::1] counts,
                           const int32_t[::1] codes, const float[::1] V, uint8_t[::1] good, float eps,
                           int threads=1, bint first=False):
        """``endless_pass`` over the stored graph."""
        self.check_graph(offsets, counts, codes)
        if V.shape[0] != self.total or good.shape[0] != self.total:
            raise ValueError("value or mark array does not fit the state space")
        cdef int nt = max(1, threads), t, tid, G = self.nrolls + 5
        cdef int64_t* added = <int64_t*> malloc(nt * 8 * sizeof(int64_t))
        cdef int64_t s, total_added = 0
        cdef const float* Vp = &V[0]
        cdef uint8_t* Gd = &good[0]
        cdef const int32_t* C = &codes[0]
        cdef const uint8_t* N = &counts[0, 0]
        cdef const int64_t* F = &offsets[0]
        cdef float v
        for t in range(nt):
            added[t * 8] = 0
        with nogil:
            for s in prange(self.total, schedule="dynamic", chunksize=4096, num_threads=nt):
                if Gd[s]:
                    continue
                tid = threadid()
                v = Vp[s]
                if first and (self.finished(C + F[s], N + s * G) or fabsf(v) <= eps):
                    Gd[s] = 1
                    added[tid * 8] += 1
                elif self.graph_reaches(C + F[s], N + s * G, Vp, v, Gd, eps):
                    Gd[s] = 1
                    added[tid * 8] += 1
        for t in range(nt):
            total_added += added[t * 8]
        free(added)
        return total_added
