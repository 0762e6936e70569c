# cython: language_level=3
"""RoyalUr.net's rule sets (Finkel, Blitz, Masters) as a ``StochasticGame``: rank, unrank, moves.

The numbering is ``games.ur.royal_encoding.Encoding``'s, rank for rank (tiers by pieces borne off, blocks
by pieces on the board and on shared tiles, four colexicographic subset ranks in a block); the
block table comes from that class, so the two cannot drift apart. A state in C is the mover's
pieces as a mask of path indices plus pieces borne off, and the same for the opponent along
their own path. Outcome groups: one per distinct non-zero roll (roll r moves pieces r tiles),
then the pass, written when some roll (a 0, or a roll with no legal move) has nothing to play.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint32_t
from libc.stdlib cimport malloc, free

from gamesolver.solver.stochastic._engine cimport Outcomes, SG_WIN, StochasticGame, sg_hint

cnp.import_array()

DEF MAXL = 16  # tiles on a path (Masters: 16)
DEF MAXROLL = 8

cdef extern from *:
    int __builtin_popcount(unsigned int) nogil
    int __builtin_ctz(unsigned int) nogil


cdef class RoyalGame(StochasticGame):
    """One rule set with its piece count, in C form (built by ``games.ur.royal_game``)."""

    cdef readonly int pieces, length
    cdef int nshared, nprivate
    cdef bint safe_rosettes, rosette_rolls, capture_rolls
    cdef uint32_t rosettes                 # path indices that are rosettes
    cdef int cross[MAXL]                   # mover's path index -> opponent's path index, -1 private
    cdef int my_slot[MAXL]                 # mover's path index -> shared slot, or -1
    cdef int my_priv[MAXL]                 # mover's path index -> place among private tiles, or -1
    cdef int their_slot[MAXL]              # opponent's path index -> shared slot, or -1
    cdef int their_priv[MAXL]              # opponent's path index -> place among their private tiles
    cdef int slot_mine[MAXL], slot_theirs[MAXL], priv_mine[MAXL], priv_theirs[MAXL]  # inverses
    cdef int64_t binom[MAXL + 1][MAXL + 1]
    cdef int nroll_values
    cdef int roll_value[MAXROLL]           # the steps of each engine roll (0: pass)
    # blocks, in rank order: start rank, then (mover scored, opponent scored, on board, on board,
    # shared of them, shared of them)
    cdef int64_t* block_start
    cdef int32_t* block_key
    cdef int64_t* block_at                 # [sm][so][bm][bo][a][b] -> start rank (-1: none)
    cdef int nblocks

    def __cinit__(self):
        self.block_start = NULL
        self.block_key = NULL
        self.block_at = NULL

    def __dealloc__(self):
        free(self.block_start)
        free(self.block_key)
        free(self.block_at)

    def __init__(self, int pieces, cross, rosettes, bint safe_rosettes, bint rosette_rolls, bint capture_rolls,
                 rolls, blocks, int64_t total):
        """``cross``: per mover's path index the opponent's index of the same tile (-1: private);
        ``rosettes``: rosette path indices; ``rolls``: (steps, probability) per roll; ``blocks``:
        (start rank, (mover scored, opponent scored), (mover on board, opponent on board, mover
        on shared tiles, opponent on shared tiles)) in rank order; ``total``: ranked states."""
        cdef int i, j, k, L = len(cross)
        if not 1 <= pieces <= 7 or not 1 <= L <= MAXL:
            raise ValueError("pieces 1..7 and a path of 1..16 tiles")
        if total >= 2**31 - 2:
            raise ValueError("too many states for int32 outcome codes")
        self.pieces = pieces
        self.length = L
        self.total = total
        self.safe_rosettes = safe_rosettes
        self.rosette_rolls = rosette_rolls
        self.capture_rolls = capture_rolls
        self.rosettes = 0
        for i in rosettes:
            self.rosettes |= (<uint32_t> 1) << i
        for i in range(MAXL + 1):
            for j in range(MAXL + 1):
                self.binom[i][j] = 0
            self.binom[i][0] = 1
            for j in range(1, i + 1):
                self.binom[i][j] = self.binom[i - 1][j - 1] + self.binom[i - 1][j]
        theirs_shared = {}
        self.nshared = self.nprivate = 0
        for i in range(L):
            self.cross[i] = cross[i]
            if cross[i] >= 0:
                self.my_slot[i] = self.nshared
                self.slot_mine[self.nshared] = i
                theirs_shared[cross[i]] = self.nshared
                self.nshared += 1
                self.my_priv[i] = -1
            else:
                self.my_slot[i] = -1
                self.my_priv[i] = self.nprivate
                self.priv_mine[self.nprivate] = i
                self.nprivate += 1
        k = 0
        for j in range(L):
            if j in theirs_shared:
                self.their_slot[j] = theirs_shared[j]
                self.slot_theirs[theirs_shared[j]] = j
                self.their_priv[j] = -1
            else:
                self.their_slot[j] = -1
                self.their_priv[j] = k
                self.priv_theirs[k] = j
                k += 1
        if k != self.nprivate:
            raise ValueError("the two paths must be mirror images (as many private tiles each)")
        self.nroll_values = len(rolls)
        if not 1 <= self.nroll_values <= MAXROLL:
            raise ValueError("1..8 rolls")
        steps = [int(r[0]) for r in rolls]
        nonzero = sorted(set(s for s in steps if s > 0))
        for i in range(self.nroll_values):
            self.roll_value[i] = steps[i]
        # one group per distinct number of steps, then the pass
        self.set_rolls([float(r[1]) for r in rolls],
                       [[nonzero.index(s)] if s > 0 else [] for s in steps], len(nonzero) + 1)
        self.nblocks = len(blocks)
        self.block_start = <int64_t*> malloc((self.nblocks + 1) * sizeof(int64_t))
        self.block_key = <int32_t*> malloc(self.nblocks * 6 * sizeof(int32_t))
        self.block_at = <int64_t*> malloc(8 ** 6 * sizeof(int64_t))
        if self.block_start == NULL or self.block_key == NULL or self.block_at == NULL:
            raise MemoryError()
        for i in range(8 ** 6):
            self.block_at[i] = -1
        for i, (start, tier, key) in enumerate(blocks):
            self.block_start[i] = start
            vals = tuple(tier) + tuple(key)
            for j in range(6):
                self.block_key[i * 6 + j] = vals[j]
            self.block_at[self.block_index(vals[0], vals[1], vals[2], vals[3], vals[4], vals[5])] = start
        self.block_start[self.nblocks] = total

    cdef inline int block_index(self, int sm, int so, int bm, int bo, int a, int b) noexcept nogil:
        return ((((sm * 8 + so) * 8 + bm) * 8 + bo) * 8 + a) * 8 + b

    cdef inline int64_t colex(self, uint32_t s) noexcept nogil:
        cdef int64_t r = 0
        cdef int k = 1
        while s:
            r += self.binom[__builtin_ctz(s)][k]
            k += 1
            s &= s - 1
        return r

    cdef inline uint32_t uncolex(self, int64_t r, int k) noexcept nogil:
        cdef uint32_t s = 0
        cdef int c
        while k > 0:
            c = k - 1
            while self.binom[c + 1][k] <= r:
                c += 1
            r -= self.binom[c][k]
            s |= (<uint32_t> 1) << c
            k -= 1
        return s

    cdef int64_t rank_of(self, uint32_t M, int sm, uint32_t O, int so) noexcept nogil:
        """Rank of the state: mover's path mask and score, opponent's path mask and score."""
        cdef uint32_t sh_m = 0, sh_o = 0, pr_m = 0, pr_o = 0, free_o = 0, x
        cdef int i, a, b, bm, bo, k, s = self.nshared, p = self.nprivate
        x = M
        while x:
            i = __builtin_ctz(x)
            x &= x - 1
            if self.my_slot[i] >= 0:
                sh_m |= (<uint32_t> 1) << self.my_slot[i]
            else:
                pr_m |= (<uint32_t> 1) << self.my_priv[i]
        x = O
        while x:
            i = __builtin_ctz(x)
            x &= x - 1
            if self.their_slot[i] >= 0:
                sh_o |= (<uint32_t> 1) << self.their_slot[i]
            else:
                pr_o |= (<uint32_t> 1) << self.their_priv[i]
        # the opponent's shared slots numbered among the slots the mover leaves free
        k = 0
        for i in range(s):
            if not (sh_m >> i & 1):
                if sh_o >> i & 1:
                    free_o |= (<uint32_t> 1) << k
                k += 1
        a = __builtin_popcount(sh_m)
        b = __builtin_popcount(sh_o)
        bm = a + __builtin_popcount(pr_m)
        bo = b + __builtin_popcount(pr_o)
        cdef int64_t idx = self.colex(sh_m)
        idx = idx * self.binom[s - a][b] + self.colex(free_o)
        idx = idx * self.binom[p][bm - a] + self.colex(pr_m)
        idx = idx * self.binom[p][bo - b] + self.colex(pr_o)
        return self.block_at[self.block_index(sm, so, bm, bo, a, b)] + idx

    cdef void unrank_to(self, int64_t r, uint32_t* M, int* sm, uint32_t* O, int* so) noexcept nogil:
        cdef int lo = 0, hi = self.nblocks - 1, mid, a, b, bm, bo, i, k, s = self.nshared, p = self.nprivate
        cdef int64_t w, q, rp_o, rp_m, rf_o
        cdef uint32_t sh_m, free_o, pr_m, pr_o, m = 0, o = 0
        while lo < hi:  # the last block starting at or before r
            mid = (lo + hi + 1) >> 1
            if self.block_start[mid] <= r:
                lo = mid
            else:
                hi = mid - 1
        cdef const int32_t* key = self.block_key + lo * 6
        sm[0] = key[0]
        so[0] = key[1]
        bm, bo, a, b = key[2], key[3], key[4], key[5]
        q = r - self.block_start[lo]
        w = self.binom[p][bo - b]
        rp_o = q % w
        q = q // w
        w = self.binom[p][bm - a]
        rp_m = q % w
        q = q // w
        w = self.binom[s - a][b]
        rf_o = q % w
        q = q // w
        sh_m = self.uncolex(q, a)
        free_o = self.uncolex(rf_o, b)
        pr_m = self.uncolex(rp_m, bm - a)
        pr_o = self.uncolex(rp_o, bo - b)
        k = 0
        for i in range(s):
            if sh_m >> i & 1:
                m |= (<uint32_t> 1) << self.slot_mine[i]
            else:
                if free_o >> k & 1:
                    o |= (<uint32_t> 1) << self.slot_theirs[i]
                k += 1
        for i in range(p):
            if pr_m >> i & 1:
                m |= (<uint32_t> 1) << self.priv_mine[i]
            if pr_o >> i & 1:
                o |= (<uint32_t> 1) << self.priv_theirs[i]
        M[0] = m
        O[0] = o

    cdef int moves_for(self, uint32_t M, int sm, uint32_t O, int so, int steps, int32_t* out) noexcept nogil:
        """The outcome codes of every legal move for ``steps``; returns how many."""
        cdef int n = 0, L = self.length, src, dest, victim, hand, sm2, lo
        cdef uint32_t M2, O2, bit
        cdef bint capture, extra
        if steps <= 0:
            return 0
        hand = self.pieces - sm - __builtin_popcount(M)
        lo = -1 if hand > 0 else 0
        for src in range(lo, L):
            if src >= 0 and not (M >> src & 1):
                continue
            dest = src + steps
            if dest > L:
                break
            capture = False
            M2 = M & ~((<uint32_t> 1) << src) if src >= 0 else M
            O2 = O
            sm2 = sm
            if dest == L:
                sm2 = sm + 1
                if sm2 == self.pieces:
                    out[n] = SG_WIN
                    n += 1
                    continue
            else:
                bit = (<uint32_t> 1) << dest
                if M & bit:
                    continue
                victim = self.cross[dest]
                if victim >= 0 and (O >> victim & 1):
                    if self.safe_rosettes and (self.rosettes & bit):
                        continue
                    capture = True
                    O2 = O & ~((<uint32_t> 1) << victim)
                M2 |= bit
            extra = dest < L and ((self.rosette_rolls and (self.rosettes >> dest & 1))
                                  or (self.capture_rolls and capture))
            if extra:
                out[n] = <int32_t> self.rank_of(M2, sm2, O2, so)
            else:
                out[n] = <int32_t> (-self.rank_of(O2, so, M2, sm2) - 1)
            n += 1
        return n

    cdef int generate(self, int64_t rank, Outcomes* out) noexcept nogil:
        cdef uint32_t M = 0, O = 0
        cdef int sm = 0, so = 0, r, g = 0, m, any_empty = 0, at = 0, i
        cdef int seen[MAXROLL + 1]
        self.unrank_to(rank, &M, &sm, &O, &so)
        for r in range(MAXROLL + 1):
            seen[r] = 0
        out.n = 0
        # groups follow the distinct non-zero rolls in increasing order (see __init__)
        for r in range(1, MAXROLL + 1):
            for m in range(self.nroll_values):
                if self.roll_value[m] == r:
                    seen[r] = 1
            if not seen[r]:
                continue
            m = self.moves_for(M, sm, O, so, r, out.codes + at)
            for i in range(at, at + m):  # the engine's lookups of these values start now
                sg_hint(out, out.codes[i])
            out.counts[g] = m
            at += m
            if m == 0:
                any_empty = 1
            g += 1
        for r in range(self.nroll_values):
            if self.roll_value[r] <= 0:
                any_empty = 1
        if any_empty:
            out.codes[at] = <int32_t> (-self.rank_of(O, so, M, sm) - 1)
            sg_hint(out, out.codes[at])
            out.counts[g] = 1
            at += 1
        else:
            out.counts[g] = 0
        out.n = at
        return at

    # ---- Python side, for tests, tables and queries -----------------------------------------

    def rank(self, int64_t mine, int mine_scored, int64_t theirs, int theirs_scored) -> int:
        """Rank of a state given as path masks (bit i: a piece at path index i) and scores."""
        if not (0 <= mine_scored < self.pieces and 0 <= theirs_scored < self.pieces):
            raise ValueError("a finished game has no rank")
        if mine >> self.length or theirs >> self.length or mine < 0 or theirs < 0:
            raise ValueError("path mask outside the path")
        if __builtin_popcount(<uint32_t> mine) + mine_scored > self.pieces or \
                __builtin_popcount(<uint32_t> theirs) + theirs_scored > self.pieces:
            raise ValueError("more pieces than the rule set has")
        return self.rank_of(<uint32_t> mine, mine_scored, <uint32_t> theirs, theirs_scored)

    def unrank(self, int64_t rank) -> tuple:
        """(mover's path mask, mover's score, opponent's path mask, opponent's score)."""
        if not 0 <= rank < self.total:
            raise ValueError(f"rank {rank} outside 0..{self.total - 1}")
        cdef uint32_t M = 0, O = 0
        cdef int sm = 0, so = 0
        self.unrank_to(rank, &M, &sm, &O, &so)
        return int(M), sm, int(O), so

    def unrank_many(self, ranks):
        """``unrank`` for an array of ranks: four arrays (masks uint32, scores int8)."""
        cdef cnp.ndarray[int64_t, ndim=1] r = np.ascontiguousarray(ranks, dtype=np.int64).reshape(-1)
        cdef Py_ssize_t i, m = r.shape[0]
        cdef cnp.ndarray[uint32_t, ndim=1] ms = np.empty(m, dtype=np.uint32)
        cdef cnp.ndarray[uint32_t, ndim=1] os_ = np.empty(m, dtype=np.uint32)
        cdef cnp.ndarray[cnp.int8_t, ndim=1] ss = np.empty(m, dtype=np.int8)
        cdef cnp.ndarray[cnp.int8_t, ndim=1] ts = np.empty(m, dtype=np.int8)
        cdef uint32_t M = 0, O = 0
        cdef int sm = 0, so = 0
        for i in range(m):
            if not 0 <= r[i] < self.total:
                raise ValueError(f"rank {r[i]} outside 0..{self.total - 1}")
            self.unrank_to(r[i], &M, &sm, &O, &so)
            ms[i] = M
            os_[i] = O
            ss[i] = sm
            ts[i] = so
        return ms, ss, os_, ts

    def successors(self, int64_t rank, int roll) -> list:
        """The outcome codes of roll ``roll`` (its number of steps) in the state, sorted: a
        move's code, or the pass's when nothing is legal (see _engine.pxd for codes)."""
        if not 0 <= rank < self.total:
            raise ValueError(f"rank {rank} outside 0..{self.total - 1}")
        cdef uint32_t M = 0, O = 0
        cdef int sm = 0, so = 0, n, i
        cdef int32_t buf[MAXL + 1]
        self.unrank_to(rank, &M, &sm, &O, &so)
        n = self.moves_for(M, sm, O, so, roll, buf)
        if n == 0:
            return [int(-self.rank_of(O, so, M, sm) - 1)]
        return sorted(int(buf[i]) for i in range(n))

    @property
    def roll_steps(self) -> list:
        return [int(self.roll_value[r]) for r in range(self.nroll_values)]
