# cython: language_level=3
"""Ur under the fort rules as a ``StochasticGame``: placement ranking and the move generator.

A state is mover-relative: ``M`` = tiles of the side to move, ``O`` = tiles of the other side,
both 32-bit tile masks. States are ranked tier by tier, a tier being (a, b) = (|M|, |O|), tiers
in order a = 0..k, then b = 0..k. Inside a tier:

    rank = offset[a][b] + colex(M) * C(n - a, b) + colex(O squeezed onto the n - a free tiles)

where colex(S) = sum_i C(t_i, i + 1) over the sorted tiles t_0 < t_1 < ... of S (the
combinatorial number system). Outcomes are written for the engine in groups that the rolls share
(``generate``): 0 the entry spawn, 1 one-step moves, 2 two-step moves (one piece two steps, or two
pieces one step each), 3 three-step moves while dominating Heaven, 4 + r roll r's colour spawns,
and last the pass, written only when some roll has nothing legal.
"""
import numpy as np
cimport cython
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memcpy
from cython.parallel cimport prange

from gamesolver.solver.stochastic._engine cimport (
    Outcomes, SG_LOSS, SG_MAX_OUTCOMES, SG_WIN, StochasticGame, sg_hint,
)

cnp.import_array()

DEF MAXN = 32
DEF MAXDEG = 8
DEF MAXROLLS = 8
DEF MAXK = 8
DEF BUF = 2048  # outcomes of one group of one state; K = 7 has at most a few hundred
DEF DEFER = 8192  # outcomes of one state, ranked before any is numbered (SG_MAX_OUTCOMES)

cdef extern from *:
    int __builtin_ctz(unsigned int) nogil
    int __builtin_clz(unsigned int) nogil
    int __builtin_ctzll(unsigned long long) nogil
    void __builtin_prefetch(const void*) nogil

# Without -mpopcnt, GCC turns __builtin_popcount on x86 into a call to libgcc's __popcountdi2,
# which was a fifth of the sweep's instructions. Where the CPU has the instruction (every x86-64
# since about 2008; checked at run time, so the module still runs without it) a tiny function
# compiled for it is called; otherwise the count is a few inline shifts and adds.
cdef extern from *:
    """
    #if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__POPCNT__)
    #define FORT_POPCNT_DISPATCH 1
    static int fort_has_popcnt = 0;
    __attribute__((target("popcnt"), noinline)) static int fort_pop32_hw(uint32_t x) { return __builtin_popcount(x); }
    __attribute__((target("popcnt"), noinline)) static int fort_pop64_hw(uint64_t x) { return __builtin_popcountll(x); }
    static void fort_detect_cpu(void) { __builtin_cpu_init(); fort_has_popcnt = __builtin_cpu_supports("popcnt") != 0; }
    #else
    static void fort_detect_cpu(void) {}
    #endif
    #if defined(__POPCNT__)
    #define FORT_POPCNT_INLINE 1
    #else
    #define FORT_POPCNT_INLINE 0
    #endif
    static inline int fort_pop32(uint32_t x) {
    #ifdef FORT_POPCNT_DISPATCH
        if (fort_has_popcnt)
            return fort_pop32_hw(x);
        x = x - ((x >> 1) & 0x55555555u);
        x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
        x = (x + (x >> 4)) & 0x0F0F0F0Fu;
        return (int)((x * 0x01010101u) >> 24);
    #else
        return __builtin_popcount(x);
    #endif
    }
    static inline int fort_pop64(uint64_t x) {
    #ifdef FORT_POPCNT_DISPATCH
        if (fort_has_popcnt)
            return fort_pop64_hw(x);
        x = x - ((x >> 1) & 0x5555555555555555ull);
        x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
        return (int)((x * 0x0101010101010101ull) >> 56);
    #else
        return __builtin_popcountll(x);
    #endif
    }
    """
    bint FORT_POPCNT_INLINE
    int fort_pop32(uint32_t) nogil
    int fort_pop64(uint64_t) nogil
    void fort_detect_cpu() nogil

fort_detect_cpu()

# The same source is compiled three times (setup.py): as this module, for any CPU of its
# architecture, and on x86-64 as ``_fort_popcnt`` with -mpopcnt, where a bit count is one instruction
# inline (not a call) and a from-scratch rank counts the other side's tiles by it
# (``colex_outside``), and as ``_fort_bmi2`` with -mpopcnt -mbmi2, where ``squeeze`` is one PEXT
# instead of a loop over the tiles it cuts out. ``games.ur.generator`` takes ``_fort_bmi2`` where
# ``fast_bmi2`` says this CPU runs it well, else ``_fort_popcnt`` where ``cpu_has("popcnt")``.
cdef extern from *:
    """
    #if defined(__BMI2__)
    #include <immintrin.h>
    #define FORT_PEXT 1
    static inline uint32_t fort_pext32(uint32_t y, uint32_t m) { return _pext_u32(y, m); }
    static inline uint32_t fort_pdep32(uint32_t y, uint32_t m) { return _pdep_u32(y, m); }
    static inline uint64_t fort_pdep64(uint64_t y, uint64_t m) { return _pdep_u64(y, m); }
    #else
    #define FORT_PEXT 0
    static inline uint32_t fort_pext32(uint32_t y, uint32_t m) { (void) y; (void) m; return 0; }
    static inline uint32_t fort_pdep32(uint32_t y, uint32_t m) { (void) y; (void) m; return 0; }
    static inline uint64_t fort_pdep64(uint64_t y, uint64_t m) { (void) y; (void) m; return 0; }
    #endif
    #if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
    #include <cpuid.h>
    static int fort_fast_bmi2(void) {
        unsigned int a, b, c, d, family;
        char vendor[13];
        __builtin_cpu_init();
        if (!__builtin_cpu_supports("popcnt") || !__builtin_cpu_supports("bmi2"))
            return 0;
        if (!__get_cpuid(0, &a, &b, &c, &d))
            return 0;
        __builtin_memcpy(vendor, &b, 4);
        __builtin_memcpy(vendor + 4, &d, 4);
        __builtin_memcpy(vendor + 8, &c, 4);
        vendor[12] = 0;
        if (!__get_cpuid(1, &a, &b, &c, &d))
            return 0;
        family = (a >> 8) & 0xf;
        if (family == 0xf)
            family += (a >> 20) & 0xff;
        /* AMD before Zen 3 (family 0x19) and Hygon run PEXT in microcode, tens to hundreds of cycles */
        if ((!__builtin_strcmp(vendor, "AuthenticAMD") && family < 0x19) || !__builtin_strcmp(vendor, "HygonGenuine"))
            return 0;
        return 1;
    }
    static int fort_cpu_has(int which) {
        __builtin_cpu_init();
        if (which == 1)
            return __builtin_cpu_supports("popcnt") != 0;
        return __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi2");
    }
    #else
    static int fort_fast_bmi2(void) { return 0; }
    static int fort_cpu_has(int which) { (void) which; return 0; }
    #endif
    """
    bint FORT_PEXT
    uint32_t fort_pext32(uint32_t, uint32_t) nogil
    uint32_t fort_pdep32(uint32_t, uint32_t) nogil
    uint64_t fort_pdep64(uint64_t, uint64_t) nogil
    int fort_fast_bmi2() nogil
    int fort_cpu_has(int) nogil


def cpu_has(build: str) -> bool:
    """Whether this CPU has the instructions that the build ``build`` ("popcnt": POPCNT; "bmi2":
    POPCNT and BMI2) is compiled for, so that its module runs here (fast or not: a microcoded PEXT
    runs ``_fort_bmi2`` correctly but slowly); "portable" runs anywhere."""
    if build == "portable":
        return True
    if build not in ("popcnt", "bmi2"):
        raise ValueError(f"unknown build {build!r}; the builds are portable, popcnt and bmi2")
    return bool(fort_cpu_has(1 if build == "popcnt" else 2))


def build_name() -> str:
    """Which build this module is: "bmi2" (``_fort_bmi2``), "popcnt" (``_fort_popcnt``) or
    "portable" (``_fort``)."""
    return "bmi2" if FORT_PEXT else ("popcnt" if FORT_POPCNT_INLINE else "portable")


def fast_bmi2() -> bool:
    """Whether this CPU has POPCNT and BMI2 and runs PEXT in hardware (not AMD before Zen 3, whose
    microcoded PEXT would make ``_fort_bmi2`` slower than this module)."""
    return bool(fort_fast_bmi2())


def uses_bmi2() -> bool:
    """Whether this module was compiled for POPCNT and BMI2 (``_fort_bmi2``)."""
    return bool(FORT_PEXT)

ctypedef struct Buf:
    uint32_t m[BUF]
    uint32_t o[BUF]
    uint8_t f[BUF]
    int n

ctypedef struct Word:  # 64 full ranks of the mirror's index: which are canonical, and how many before
    uint64_t bits
    int64_t before

ctypedef struct Parent:
    # What every outcome of one state shares, so that an outcome where the turn passes and
    # nothing is captured (the other side's pieces unchanged) is ranked from a few table reads:
    # the successor (O, M') has O's colex part as is, and M' squeezed onto the tiles free of O
    # differs from M squeezed only in the bits of the tiles that moved.
    uint32_t M, O, fM, fO       # the state and its mirror image
    int a, b                    # pieces of the mover, of the other side
    int flipO                   # 1: fO < O, so every such successor is ranked mirrored; 0: O < fO; -1: equal
    uint32_t sqM, sqfM          # M squeezed onto the tiles free of O; fM onto those free of fO
    int64_t colO, colfO         # colex(O), colex(fO)
    uint32_t sqO[MAXN]          # tile t -> bit of its place among the tiles free of O
    uint32_t sqfO[MAXN]         # tile t -> bit of its mirror twin's place among the tiles free of fO
    int64_t base[2]             # with PEXT: where the block of (O, a + i pieces) begins
    int64_t fbase[2]            # and of (fO, a + i pieces)


ctypedef struct Stager:  # outcomes ranked as they are made (``generate_masks``), instead of listed in a Buf
    const Parent* p             # the state they are outcomes of
    int64_t* v                  # ``out_rank`` of each, in order
    int n                       # how many so far

ctypedef fused Sink:  # where the move generator's one- and two-step moves go
    Buf
    Stager


@cython.final  # no subclass: the move generator's methods are called directly, not through a table
cdef class FortGame(StochasticGame):
    """Board geometry, dice and piece count in C form."""

    cdef int n, k
    cdef int deg[MAXN]
    cdef int nbr[MAXN][MAXDEG]  # each tile's neighbours, ascending: the order of its bits in ``nbm``
    cdef uint32_t nbm[MAXN]  # tile -> the mask of its neighbours
    cdef uint32_t forts, earth, heaven, ishtar, entry
    cdef int roll_steps[MAXROLLS]
    cdef int roll_heaven[MAXROLLS]
    cdef int roll_adjacent[MAXROLLS]
    cdef uint32_t roll_spawn[MAXROLLS]
    cdef int hmax
    cdef int64_t binom[MAXN + 1][MAXN + 1]
    cdef int64_t off[MAXK + 1][MAXK + 2]
    cdef int64_t full  # states without the mirror
    cdef int64_t soff[MAXK + 2]  # tile sets of fewer than j tiles: where the sets of j begin in ``block_keys``
    # the board's left-right mirror: tile permutation by bytes, and the canonical states' index
    cdef readonly bint mirrored
    cdef bint indexed  # the mirror's index is built on first use (move generation needs none)
    cdef object mirror_perm
    cdef int index_threads
    cdef uint32_t flip_byte[4][256]
    cdef int mir[MAXN]  # tile t -> its mirror twin
    cdef uint32_t mirbit[MAXN]  # tile t -> the bit of its mirror twin
    # bit r of words[r >> 6].bits: full rank r is canonical (the smaller of the pair by mask key);
    # the count before it sits in the same 16 bytes, so compacting a rank reads one cache line
    cdef Word* words
    cdef int64_t* sample  # full rank of canonical index 64 j
    cdef bint owns_index  # words and sample were allocated here, not lent by ``use_index``
    cdef object index_source  # the arrays ``use_index`` lent (a table's memory maps), kept alive
    # colex by bytes: colex(S) = sum over bytes c of cx[c][byte c of S][pieces of S below byte c]
    cdef uint32_t cx[4][256][MAXK + 1]
    cdef uint8_t pc8[256]

    def __cinit__(self):
        self.words = NULL
        self.sample = NULL
        self.owns_index = True

    def __dealloc__(self):
        if self.owns_index:
            free(self.words)
            free(self.sample)

    def __init__(self, int n, int k, neighbours, uint32_t forts, uint32_t earth, uint32_t heaven,
                 uint32_t ishtar, uint32_t entry, rolls, mirror=None, int threads=1):
        """``neighbours``: list of tile-index lists; ``rolls``: list of
        (probability, steps, heaven_steps, adjacent_spawn, spawn_mask); ``mirror``: None, or the
        tile permutation of a symmetry of the board and the rules (tile i <-> mirror[i]), under
        which only one state of each mirrored pair is numbered and solved."""
        cdef int i, j, a, b, R, tile
        if not 1 <= n <= MAXN or not 0 <= k <= MAXK or k > n or not 1 <= len(rolls) <= MAXROLLS:
            raise ValueError("board, pieces or rolls outside the kernel's limits")
        self.n, self.k = n, k
        for i in range(n):
            if len(neighbours[i]) > MAXDEG:
                raise ValueError(f"tile {i} has more than {MAXDEG} neighbours")
            self.deg[i] = len(neighbours[i])
            self.nbm[i] = 0
            for j, tile in enumerate(sorted(neighbours[i])):
                self.nbr[i][j] = tile
                self.nbm[i] |= (<uint32_t> 1) << tile
        self.forts, self.earth, self.heaven, self.ishtar, self.entry = forts, earth, heaven, ishtar, entry
        R = len(rolls)
        self.hmax = 0
        groups = []
        for i, (p, steps, hsteps, adj, mask) in enumerate(rolls):
            self.roll_steps[i] = steps
            self.roll_heaven[i] = hsteps
            self.roll_adjacent[i] = adj
            self.roll_spawn[i] = mask
            self.hmax = max(self.hmax, hsteps)
            g = [0, 4 + i]
            if steps >= 1:
                g.append(1)
            if steps >= 2:
                g.append(2)
                if hsteps > 2:
                    g.append(3)
            groups.append(sorted(g))
        self.set_rolls([r[0] for r in rolls], groups, R + 5)
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
        self.full = self.total
        self.soff[0] = 0
        for a in range(k + 1):
            self.soff[a + 1] = self.soff[a] + self.binom[n][a]
        self.nblocks = (k + 1) * self.soff[k + 1]
        self.colex_tables()
        self.mirrored = mirror is not None
        self.indexed = not self.mirrored
        self.mirror_perm = mirror
        self.index_threads = threads
        if self.mirrored and (len(mirror) != self.n or sorted(mirror) != list(range(self.n))):
            raise ValueError("mirror must be a permutation of the tiles")
        if self.mirrored:
            self.mirror_tables(mirror)

    cdef void ready(self) except *:
        if not self.indexed:
            self.index_mirror(self.mirror_perm, self.index_threads)
            self.indexed = True

    def tier_offsets(self, bint full=False):
        """(k+1, k+2) int64: ``off[a, b]`` first rank of tier (a, b); ``off[a, k+1]`` its row's end
        (with ``full``, in the numbering without the mirror)."""
        if not full:
            self.ready()
        out = np.zeros((self.k + 1, self.k + 2), dtype=np.int64)
        for a in range(self.k + 1):
            for b in range(self.k + 2):
                out[a, b] = self.off[a][b] if full else self.compact(self.off[a][b])
        return out

    @property
    def full_state_count(self) -> int:
        """States without the mirror (each mirrored pair counted twice)."""
        return self.full

    # ---- the mirror ------------------------------------------------------------------------

    cdef void mirror_tables(self, mirror) except *:
        cdef int i, b, byte
        cdef uint32_t m
        for byte in range(4):
            for b in range(256):
                m = 0
                for i in range(8):
                    if b >> i & 1 and byte * 8 + i < self.n:
                        m |= (<uint32_t> 1) << mirror[byte * 8 + i]
                self.flip_byte[byte][b] = m
        for i in range(self.n):
            self.mir[i] = mirror[i]
            self.mirbit[i] = (<uint32_t> 1) << mirror[i]

    cdef void index_mirror(self, mirror, int threads) except *:
        cdef int64_t words = (self.full >> 6) + 1, w, r, j, seen = 0
        cdef int nt = max(1, threads)
        cdef uint64_t x, packed
        cdef uint32_t M = 0, O = 0
        self.words = <Word*> calloc(words, sizeof(Word))
        if self.words == NULL:
            raise MemoryError()
        with nogil:
            for w in prange(words, schedule="static", num_threads=nt):
                x = 0
                for j in range(64):
                    r = w * 64 + j
                    if r < self.full:
                        packed = self.unrank_full_packed(r)  # plain assignments: private per thread
                        M = <uint32_t> packed
                        O = <uint32_t> (packed >> 32)
                        if self.key(M, O) <= self.key(self.flip(M), self.flip(O)):
                            x = x | ((<uint64_t> 1) << j)
                self.words[w].bits = x
        for w in range(words):
            self.words[w].before = seen
            seen += fort_pop64(self.words[w].bits)
        self.total = seen
        self.sample = <int64_t*> malloc(((seen >> 6) + 1) * sizeof(int64_t))
        if self.sample == NULL:
            raise MemoryError()
        for w in range(words):  # the full rank of every 64th canonical state
            j = (self.words[w].before + 63) >> 6 << 6  # the first multiple of 64 at or after before
            x = self.words[w].bits
            while j < self.words[w].before + fort_pop64(x):
                self.sample[j >> 6] = w * 64 + self.nth_bit(x, j - self.words[w].before)
                j += 64

    cdef uint64_t canonical_bits(self, int64_t w) noexcept nogil:
        """Bits of word ``w`` of the mirror's index, computed from the ranks (as ``index_mirror`` does)."""
        cdef uint64_t x = 0, packed
        cdef int64_t r
        cdef int j
        cdef uint32_t M, O
        for j in range(64):
            r = w * 64 + j
            if r < self.full:
                packed = self.unrank_full_packed(r)
                M = <uint32_t> packed
                O = <uint32_t> (packed >> 32)
                if self.key(M, O) <= self.key(self.flip(M), self.flip(O)):
                    x = x | ((<uint64_t> 1) << j)
        return x

    def index_arrays(self):
        """The mirror's index as arrays to store beside a table's values and hand back to
        ``use_index``: ``words`` uint64 (full ranks / 64 + 1, 2), per 64 full ranks the bits of
        the canonical ones and the count of canonical ranks before them; ``sample`` int64, the
        full rank of canonical state 64 j for every j."""
        if not self.mirrored:
            raise ValueError("this game numbers every state: it has no mirror index")
        self.ready()
        cdef int64_t nw = (self.full >> 6) + 1, ns = (self.total + 63) >> 6
        words = np.empty((nw, 2), dtype=np.uint64)
        sample = np.empty(ns, dtype=np.int64)
        cdef uint64_t[:, ::1] wv = words
        cdef int64_t[::1] sv = sample
        memcpy(&wv[0, 0], self.words, nw * sizeof(Word))
        if ns:
            memcpy(&sv[0], self.sample, ns * sizeof(int64_t))
        return words, sample

    def use_index(self, words, sample, int64_t expected_total, int spot_checks=64):
        """Use the mirror's index in ``words`` and ``sample`` (as ``index_arrays`` made them, e.g.
        memory-mapped from a table) instead of building it; the arrays are kept, not copied, so a
        query reads only the pages it needs. Refused (ValueError, nothing changed) when their
        shapes do not fit this board and piece count, their counts do not end at
        ``expected_total``, or words and samples recomputed here at ``spot_checks`` places spread
        over the index differ: an index made for another board or other rules is not used.
        Returns False when the index was already there (nothing taken)."""
        if not self.mirrored:
            raise ValueError("this game numbers every state: it has no mirror index")
        if self.indexed:
            return False
        cdef int64_t nw = (self.full >> 6) + 1, ns = (expected_total + 63) >> 6
        if not isinstance(words, np.ndarray) or words.dtype != np.uint64 or words.shape != (nw, 2):
            raise ValueError(f"mirror index words: expected uint64 ({nw}, 2), got "
                             f"{getattr(words, 'dtype', type(words).__name__)} {getattr(words, 'shape', '')}")
        if not isinstance(sample, np.ndarray) or sample.dtype != np.int64 or sample.shape != (ns,):
            raise ValueError(f"mirror index samples: expected int64 ({ns},), got "
                             f"{getattr(sample, 'dtype', type(sample).__name__)} {getattr(sample, 'shape', '')}")
        if not words.flags.c_contiguous or not sample.flags.c_contiguous:
            raise ValueError("mirror index arrays must be C-contiguous")
        cdef const uint64_t[:, ::1] wv = words
        cdef const int64_t[::1] sv = sample
        cdef Word* W = <Word*> &wv[0, 0]
        cdef int64_t* S = <int64_t*> &sv[0] if ns else NULL
        cdef int64_t i, w, j, r, c
        cdef uint64_t tail = ~(((<uint64_t> 1) << (self.full & 63)) - 1)
        if W[nw - 1].before + fort_pop64(W[nw - 1].bits) != expected_total or (W[nw - 1].bits & tail):
            raise ValueError(f"mirror index counts {W[nw - 1].before + fort_pop64(W[nw - 1].bits)} states, "
                             f"expected {expected_total}")
        for i in range(spot_checks + 2):
            # the first and last word, and others spread by a fixed stride (a multiplicative hash)
            w = 0 if i == 0 else (nw - 1 if i == 1 else <int64_t> ((<uint64_t> i * 0x9E3779B97F4A7C15ULL) % <uint64_t> nw))
            if W[w].bits != self.canonical_bits(w) or W[w].before < 0 or (
                    w + 1 < nw and W[w + 1].before != W[w].before + fort_pop64(W[w].bits)):
                raise ValueError(f"mirror index word {w} differs from the board's (another board or rules?)")
            if ns:
                j = 0 if i == 0 else (ns - 1 if i == 1 else <int64_t> ((<uint64_t> i * 0x9E3779B97F4A7C15ULL) % <uint64_t> ns))
                r = S[j]
                if r < 0 or r >= self.full or not (W[r >> 6].bits >> (r & 63)) & 1:
                    raise ValueError(f"mirror index sample {j} is not a canonical rank")
                c = W[r >> 6].before + fort_pop64(W[r >> 6].bits & (((<uint64_t> 1) << (r & 63)) - 1))
                if c != 64 * j:
                    raise ValueError(f"mirror index sample {j} points at canonical state {c}, not {64 * j}")
        self.words = W
        self.sample = S
        self.owns_index = False
        self.index_source = (words, sample)
        self.total = expected_total
        self.indexed = True
        return True

    cdef inline uint64_t unrank_full_packed(self, int64_t r) noexcept nogil:
        cdef uint32_t m = 0, o = 0
        self.unrank_full(r, &m, &o)
        return (<uint64_t> m) | ((<uint64_t> o) << 32)

    cdef inline uint32_t flip(self, uint32_t m) noexcept nogil:
        return (self.flip_byte[0][m & 255] | self.flip_byte[1][(m >> 8) & 255]
                | self.flip_byte[2][(m >> 16) & 255] | self.flip_byte[3][m >> 24])

    cdef inline uint64_t key(self, uint32_t M, uint32_t O) noexcept nogil:
        return ((<uint64_t> M) << 32) | O

    cdef inline int nth_bit(self, uint64_t x, int64_t i) noexcept nogil:
        """The position of set bit number ``i`` (from 0, lowest first) of ``x``."""
        if FORT_PEXT:  # deposit a single bit at the i-th set bit of x
            return __builtin_ctzll(fort_pdep64((<uint64_t> 1) << i, x))
        while i > 0:
            x &= x - 1
            i -= 1
        return __builtin_ctzll(x)

    cdef inline int64_t compact(self, int64_t r) noexcept nogil:
        """The index of full rank ``r`` among the canonical states below it."""
        if not self.mirrored:
            return r
        cdef Word* w = &self.words[r >> 6]
        return w.before + fort_pop64(w.bits & (((<uint64_t> 1) << (r & 63)) - 1))

    cdef inline int64_t select(self, int64_t i) noexcept nogil:
        """The full rank of canonical state number ``i``."""
        cdef int64_t r = self.sample[i >> 6], w = r >> 6, left = i & 63
        cdef uint64_t x = self.words[w].bits & ~(((<uint64_t> 1) << (r & 63)) - 1)
        cdef int c = fort_pop64(x)
        while left >= c:
            left -= c
            w += 1
            x = self.words[w].bits
            c = fort_pop64(x)
        return w * 64 + self.nth_bit(x, left)

    cdef inline int64_t rank_canon(self, uint32_t M, uint32_t O) noexcept nogil:
        """The full rank of the state or, with the mirror, of its canonical twin (``compact`` numbers it)."""
        cdef uint32_t fm, fo
        if not self.mirrored:
            return self.rank_full(M, O)
        fm = self.flip(M)
        fo = self.flip(O)
        if self.key(fm, fo) < self.key(M, O):  # a choice of masks, not of calls: conditional moves
            M = fm
            O = fo
        return self.rank_full(M, O)

    cdef inline int64_t rank1(self, uint32_t M, uint32_t O) noexcept nogil:
        """The state's number: its full rank, or with the mirror its canonical twin's index."""
        return self.compact(self.rank_canon(M, O))

    cdef inline void unrank1(self, int64_t r, uint32_t* M, uint32_t* O) noexcept nogil:
        self.unrank_full(self.select(r) if self.mirrored else r, M, O)

    # ---- ranking -------------------------------------------------------------------------

    cdef void colex_tables(self) noexcept:
        cdef int c, byte, i, j, t
        cdef uint32_t v
        for byte in range(256):
            self.pc8[byte] = fort_pop32(byte)
        for c in range(4):
            for byte in range(256):
                for i in range(MAXK + 1):
                    v = 0
                    j = i
                    for t in range(8):
                        if byte >> t & 1:
                            j += 1
                            if 8 * c + t < self.n:
                                v += <uint32_t> self.binom[8 * c + t][j]
                    self.cx[c][byte][i] = v

    cdef inline int64_t colex(self, uint32_t S) noexcept nogil:
        """sum_i C(t_i, i + 1) over the sorted tiles t_0 < t_1 < ... of ``S`` (at most MAXK)."""
        cdef uint32_t b0 = S & 255, b1 = (S >> 8) & 255, b2 = (S >> 16) & 255, b3 = S >> 24
        cdef int i1, i2
        if FORT_POPCNT_INLINE:  # the counts below each byte by the instruction: no table read to wait on
            i1 = fort_pop32(S & 255)
            i2 = fort_pop32(S & 0xFFFF)
        else:
            i1 = self.pc8[b0]
            i2 = i1 + self.pc8[b1]
        cdef int64_t r = <int64_t> self.cx[0][b0][0] + self.cx[1][b1][i1] + self.cx[2][b2][i2]
        if b3:
            r += self.cx[3][b3][i2 + self.pc8[b2]]
        return r

    cdef inline uint32_t squeeze(self, uint32_t Y, uint32_t X) noexcept nogil:
        """``Y`` renumbered on the tiles outside ``X`` (disjoint from Y): each tile of X, highest
        first, is cut out and the bits above it move down one."""
        cdef uint32_t low
        if FORT_PEXT:  # the bits of Y at the tiles outside X, packed down: what the loop does
            return fort_pext32(Y, ~X)
        while X:
            low = ((<uint32_t> 1) << (31 - __builtin_clz(X))) - 1
            Y = (Y & low) | ((Y >> 1) & ~low)
            X &= low
        return Y

    cdef inline int64_t colex_outside(self, uint32_t Y, uint32_t X) noexcept nogil:
        """``colex(squeeze(Y, X))`` without squeezing: each tile of ``Y``, lowest first, counted at
        its place among the tiles outside ``X`` (its tile less the tiles of X below it). Each step
        stands alone, where the squeeze's loop over X's tiles is one chain of dependent shifts; it
        pays where a bit count is one instruction inline and PEXT is not there to squeeze."""
        cdef int64_t r = 0
        cdef int i = 1, t
        while Y:
            t = __builtin_ctz(Y)
            r += self.binom[t - fort_pop32(X & (((<uint32_t> 1) << t) - 1))][i]
            i += 1
            Y &= Y - 1
        return r

    cdef inline int64_t block_start(self, int a, int b, int64_t col) noexcept nogil:
        """The first full rank of the block of states whose mover has ``a`` pieces with colex
        rank ``col`` and whose other side has ``b``."""
        return self.off[a][b] + col * self.binom[self.n - a][b]

    cdef inline int64_t rank_full(self, uint32_t M, uint32_t O) noexcept nogil:
        cdef int a = fort_pop32(M), b = fort_pop32(O)
        if FORT_PEXT or not FORT_POPCNT_INLINE:
            return self.block_start(a, b, self.colex(M)) + self.colex(self.squeeze(O, M))
        return self.block_start(a, b, self.colex(M)) + self.colex_outside(O, M)

    cdef inline void unrank_full(self, int64_t r, uint32_t* M, uint32_t* O) noexcept nogil:
        cdef int a = 0, b = 0, i, t
        cdef int64_t width, rm, ro
        cdef uint32_t m = 0, o = 0, freeset, low
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
            o |= (<uint32_t> 1) << t  # numbered among the tiles free of m, spread out below
            t -= 1
        # undo ``squeeze``: o's bits spread over the tiles outside m, in order
        if FORT_PEXT:
            o = fort_pdep32(o, ~m)
        else:
            freeset = m  # a gap at each of m's tiles, lowest first
            while freeset:
                low = (freeset & (0 - freeset)) - 1
                o = (o & low) | ((o & ~low) << 1)
                freeset &= freeset - 1
        M[0] = m
        O[0] = o

    cdef void block_keys(self, int64_t rank, int32_t* own, int32_t* other) noexcept nogil:
        """A block is a side's tile set and the other side's piece count: the state's own block
        is (its mover's tiles, the other side's count), its other key (the other side's tiles, the
        mover's count). A successor that keeps the turn has the mover's new tiles; one that passes
        it has the other side's tiles, less what the move captured, with the mover's new count
        (each in its stored orientation), so the blocks each key's states reach are few."""
        cdef uint32_t m = 0, o = 0
        cdef int a, b
        self.unrank1(rank, &m, &o)
        a = fort_pop32(m)
        b = fort_pop32(o)
        own[0] = <int32_t> (b * self.soff[self.k + 1] + self.soff[a] + self.colex(m))
        other[0] = <int32_t> (a * self.soff[self.k + 1] + self.soff[b] + self.colex(o))

    cdef inline uint64_t unrank_packed(self, int64_t r) noexcept nogil:
        cdef uint32_t m = 0, o = 0
        self.unrank1(r, &m, &o)
        return (<uint64_t> m) | ((<uint64_t> o) << 32)

    def rank(self, mine, theirs):
        """Ranks of states given as arrays of tile masks (vectorized)."""
        self.ready()
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
        self.ready()
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

    cdef void one_piece(self, Buf* buf, uint32_t M, uint32_t O, int lo, int hi) noexcept nogil:
        """Moves of one piece of lo..hi steps, piece after piece (the path's walk, for the moves
        of three or more steps while dominating Heaven; ``one_step`` and ``two_steps`` are the
        same for one and two steps, by masks)."""
        cdef uint32_t s = M
        cdef int p
        while s:
            p = __builtin_ctz(s)
            s &= s - 1
            self.walks(buf, M, O, p, p, 0, lo, hi, 0)

    cdef inline uint32_t guarded(self, uint32_t O) noexcept nogil:
        """The other side's pieces that cannot be captured: those on forts while it holds Ishtar."""
        return (O & self.forts) if (O & self.ishtar) else 0

    cdef inline void put(self, Sink* out, uint32_t M, uint32_t O, int fort) noexcept nogil:
        """One outcome into a list (``emit``) or ranked straight away (``stage``); ``fort``: it
        landed on or passed a fort."""
        if Sink is Buf:
            self.emit(out, M, O, fort)
        else:
            self.stage(out.p, out.v, &out.n, M, O, fort)  # a win is told by its masks, not by the flag

    cdef void one_step(self, Sink* buf, uint32_t M, uint32_t O) noexcept nogil:
        """``one_piece(buf, M, O, 1, 1)`` by masks: each piece's legal steps are its neighbours
        outside its own side and the guarded pieces, in the same order (piece, then tile)."""
        cdef uint32_t blocked = M | self.guarded(O), s = M, d, base, b
        cdef int p, to
        while s:
            p = __builtin_ctz(s)
            s &= s - 1
            d = self.nbm[p] & ~blocked
            base = M & ~((<uint32_t> 1) << p)
            while d:
                to = __builtin_ctz(d)
                d &= d - 1
                b = (<uint32_t> 1) << to
                self.put(buf, base | b, O & ~b, (self.forts >> to) & 1)

    cdef void two_steps(self, Sink* buf, uint32_t M, uint32_t O) noexcept nogil:
        """``one_piece(buf, M, O, 2, 2)`` by masks: a piece's first step, then (unless it captured
        while its side does not hold all of Earth) a second to a tile other than where it began."""
        cdef uint32_t blocked = M | self.guarded(O), s = M, d, d2, M1, O1, base, b, b2, bp
        cdef int p, to, to2, f1
        while s:
            p = __builtin_ctz(s)
            s &= s - 1
            bp = (<uint32_t> 1) << p
            d = self.nbm[p] & ~blocked
            while d:
                to = __builtin_ctz(d)
                d &= d - 1
                b = (<uint32_t> 1) << to
                M1 = (M & ~bp) | b
                O1 = O & ~b
                if (O & b) and (M1 & self.earth) != self.earth:
                    continue  # a capture ends the move
                f1 = (self.forts >> to) & 1
                d2 = self.nbm[to] & ~(M1 | self.guarded(O1) | bp)
                base = M1 & ~b
                while d2:
                    to2 = __builtin_ctz(d2)
                    d2 &= d2 - 1
                    b2 = (<uint32_t> 1) << to2
                    self.put(buf, base | b2, O1 & ~b2, f1 | ((self.forts >> to2) & 1))

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

    cdef void two_pieces(self, Sink* buf, uint32_t M, uint32_t O) noexcept nogil:
        """Two different pieces one step each, by masks. Both orders give the same result when both
        are legal, so the order with the higher tile first is kept only when the other is illegal.
        A step is legal onto a tile outside the mover's side and the other side's guarded pieces,
        as they stand when it is taken."""
        cdef uint32_t blocked = M | self.guarded(O), s = M, s2, d, d2, M1, O1, blocked1, b, b2, bp, bq
        cdef int p, q, to, to2
        while s:
            p = __builtin_ctz(s)
            s &= s - 1
            bp = (<uint32_t> 1) << p
            d = self.nbm[p] & ~blocked
            while d:
                to = __builtin_ctz(d)
                d &= d - 1
                b = (<uint32_t> 1) << to
                M1 = (M & ~bp) | b
                O1 = O & ~b
                blocked1 = M1 | self.guarded(O1)
                s2 = M & ~bp
                while s2:
                    q = __builtin_ctz(s2)
                    s2 &= s2 - 1
                    bq = (<uint32_t> 1) << q
                    d2 = self.nbm[q] & ~blocked1
                    if q < p:
                        # Kept only where q first is illegal. When q's step is legal first, p's step
                        # stays legal after it: q cannot land on p's target (p's step after it
                        # would then be the pair q-to, p-to, which p first never makes), and a
                        # capture only shrinks the guarded pieces. So q first is illegal exactly
                        # where q's step was blocked before p moved (p's old tile, or a guard p's
                        # capture of the Ishtar piece lifted).
                        d2 &= blocked
                    while d2:
                        to2 = __builtin_ctz(d2)
                        d2 &= d2 - 1
                        b2 = (<uint32_t> 1) << to2
                        self.put(buf, (M1 & ~bq) | b2, O1 & ~b2,
                                  ((self.forts >> to) & 1) | ((self.forts >> to2) & 1))

    cdef void spawns(self, Buf* buf, uint32_t M, uint32_t O, uint32_t tiles) noexcept nogil:
        cdef uint32_t s = tiles & ~(M | O)
        cdef int t
        while s:
            t = __builtin_ctz(s)
            s &= s - 1
            self.emit(buf, M | ((<uint32_t> 1) << t), O, 0)

    cdef inline uint32_t adjacent(self, uint32_t M) noexcept nogil:
        cdef uint32_t s = M, out = 0
        cdef int p
        while s:
            p = __builtin_ctz(s)
            s &= s - 1
            out |= self.nbm[p]
        return out

    cdef inline int entry_legal(self, uint32_t M, uint32_t O) noexcept nogil:
        if fort_pop32(M) >= self.k or (M & self.entry):
            return 0
        # an opponent's lone piece on the entry may not be captured by a spawn
        return not ((O & self.entry) and fort_pop32(O) == 1)

    cdef int roll_spawn_tiles(self, uint32_t M, uint32_t O, int r, uint32_t* tiles) noexcept nogil:
        if fort_pop32(M) >= self.k:
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
            self.one_step(buf, M, O)
        if self.roll_steps[r] >= 2:
            self.two_steps(buf, M, O)
            self.two_pieces(buf, M, O)
        if self.roll_heaven[r] > self.roll_steps[r] and (M & self.heaven) == self.heaven:
            self.one_piece(buf, M, O, self.roll_steps[r] + 1, self.roll_heaven[r])
        if buf.n == 0:
            self.emit(buf, M, O, 0)
            buf.f[0] = 3  # pass: flag 3 keeps it apart from a real action
        return buf.n

    # ---- the engine's interface -------------------------------------------------------------

    cdef inline int32_t code(self, uint32_t M, uint32_t O, int flag) noexcept nogil:
        """The engine's code of an outcome: a win, the mover again (flag 1), or the other side."""
        if (M & self.forts) == self.forts:
            return SG_WIN
        if flag == 1:
            return <int32_t> self.rank1(M, O)
        return <int32_t> (-self.rank1(O, M) - 1)

    cdef inline void parent(self, Parent* p, uint32_t M, uint32_t O) noexcept nogil:
        """Fill ``p`` for the outcomes of state (M, O), once a state. With the mirror, such a
        successor is ranked in the orientation where O's key is the smaller, the same for all of
        them unless O is its own mirror image; only the parts that orientation reads are made."""
        cdef int t, free = 0
        cdef uint32_t place[MAXN]
        p.M = M
        p.O = O
        p.a = fort_pop32(M)
        p.b = fort_pop32(O)
        p.flipO = 0
        if self.mirrored:
            p.fM = self.flip(M)
            p.fO = self.flip(O)
            p.flipO = 1 if p.fO < O else (0 if O < p.fO else -1)
        # with PEXT out_rank squeezes in one instruction and needs only where the blocks begin
        # (for a move and for a spawn); without, the squeeze tables it updates tile by tile
        if p.flipO != 1:
            p.colO = self.colex(O)
            if FORT_PEXT:
                p.base[0] = self.block_start(p.b, p.a, p.colO)
                p.base[1] = self.block_start(p.b, p.a + 1, p.colO)
            else:
                for t in range(self.n):
                    p.sqO[t] = (<uint32_t> 1) << free
                    free += 1 - <int> ((O >> t) & 1)
                p.sqM = self.squeeze(M, O)
        if p.flipO != 0:
            p.colfO = self.colex(p.fO)
            if FORT_PEXT:
                p.fbase[0] = self.block_start(p.b, p.a, p.colfO)
                p.fbase[1] = self.block_start(p.b, p.a + 1, p.colfO)
                return
            p.sqfM = self.squeeze(p.fM, p.fO)
            free = 0
            for t in range(self.n):
                place[t] = (<uint32_t> 1) << free
                free += 1 - <int> ((p.fO >> t) & 1)
            for t in range(self.n):
                p.sqfO[t] = place[self.mir[t]]

    cdef inline int64_t out_rank(self, const Parent* p, uint32_t M2, uint32_t O2, int flag) noexcept nogil:
        """An outcome of the state in ``p`` before ``compact`` numbers it: -1 for a win, else twice
        the full rank of the canonical successor, plus 1 where the turn passes (``finish`` makes the
        code). Cheaper than ``code`` where the turn passes and nothing was captured (``parent``
        says how)."""
        cdef uint32_t d, sq, fsq, fm
        cdef int t, a2
        cdef int64_t r
        if (M2 & self.forts) == self.forts:
            return -1
        if flag == 1:
            return 2 * self.rank_canon(M2, O2)
        if O2 != p.O:
            return 2 * self.rank_canon(O2, M2) + 1
        if FORT_PEXT:  # squeezed in one instruction: no loop over the tiles that moved
            a2 = fort_pop32(M2) - p.a  # 0 for a move, 1 for a spawn
            if p.flipO == 0:
                r = p.base[a2] + self.colex(fort_pext32(M2, ~p.O))
            else:
                fm = self.flip(M2)
                if p.flipO == 1 or fm < M2:
                    r = p.fbase[a2] + self.colex(fort_pext32(fm, ~p.fO))
                else:
                    r = p.base[a2] + self.colex(fort_pext32(M2, ~p.O))
            return 2 * r + 1
        d = M2 ^ p.M
        a2 = p.a
        if p.flipO == 0:
            sq = p.sqM
            while d:
                t = __builtin_ctz(d)
                d &= d - 1
                sq ^= p.sqO[t]
                a2 += 2 * <int> ((M2 >> t) & 1) - 1
            r = self.block_start(p.b, a2, p.colO) + self.colex(sq)
            return 2 * r + 1
        fsq = p.sqfM
        if p.flipO == 1:
            while d:
                t = __builtin_ctz(d)
                d &= d - 1
                fsq ^= p.sqfO[t]
                a2 += 2 * <int> ((M2 >> t) & 1) - 1
            r = self.block_start(p.b, a2, p.colfO) + self.colex(fsq)
            return 2 * r + 1
        sq = p.sqM  # O is its own mirror image: M' decides, as in ``key``
        fm = p.fM
        while d:
            t = __builtin_ctz(d)
            d &= d - 1
            sq ^= p.sqO[t]
            fsq ^= p.sqfO[t]
            fm ^= self.mirbit[t]
            a2 += 2 * <int> ((M2 >> t) & 1) - 1
        if fm < M2:
            r = self.block_start(p.b, a2, p.colfO) + self.colex(fsq)
        else:
            r = self.block_start(p.b, a2, p.colO) + self.colex(sq)
        return 2 * r + 1

    cdef inline int32_t finish(self, int64_t v) noexcept nogil:
        """The engine's code of ``out_rank``'s ``v``."""
        if v < 0:
            return SG_WIN
        # -c - 1 is ~c: the turn's sign without a branch on it
        return <int32_t> self.compact(v >> 1) ^ (-<int32_t> (v & 1))

    cdef int generate(self, int64_t rank, Outcomes* out) noexcept nogil:
        cdef uint64_t packed = self.unrank_packed(rank)
        return self.generate_masks(<uint32_t> packed, <uint32_t> (packed >> 32), out)

    cdef inline void stage(self, const Parent* p, int64_t* v, int* n, uint32_t M2, uint32_t O2, int flag) noexcept nogil:
        """Rank one outcome now and ask for its word of the mirror's index; ``finish`` numbers it later.
        Beyond DEFER outcomes (none of this board's states comes near) the rest are not kept."""
        cdef int64_t x
        if n[0] >= DEFER:
            return
        x = self.out_rank(p, M2, O2, flag)
        if self.mirrored and x >= 0:
            __builtin_prefetch(&self.words[x >> 7])
        v[n[0]] = x
        n[0] += 1

    cdef inline int stage_all(self, const Parent* p, int64_t* v, int* n, const Buf* buf) noexcept nogil:
        """``stage`` every outcome of one group in ``buf``; returns how many it holds."""
        cdef int i
        for i in range(buf.n):
            self.stage(p, v, n, buf.m[i], buf.o[i], buf.f[i])
        return buf.n

    cdef int generate_masks(self, uint32_t M, uint32_t O, Outcomes* out) noexcept nogil:
        """Every outcome of the state, group after group. All are ranked first (``stage``), each
        asking the cache for its 16-byte word of the mirror's index (320 MB for K = 7, read at
        random), and only then numbered (``finish``), so that the reads of a whole state overlap
        instead of waiting group by group; each code's value is then asked for (``sg_hint``)."""
        cdef int G = self.ngroups, g, r, t, has, i, n = 0
        cdef uint32_t tiles, adj = 0
        cdef Buf buf
        cdef Parent p
        cdef int64_t v[DEFER]
        cdef Stager sk
        out.n = 0
        for g in range(G):
            out.counts[g] = 0
        if (M & self.forts) == self.forts or (O & self.forts) == self.forts:
            out.codes[0] = SG_WIN if (M & self.forts) == self.forts else SG_LOSS
            out.counts[G - 1] = 1
            out.n = 1
            return 1
        self.parent(&p, M, O)
        if self.entry_legal(M, O):
            self.stage(&p, v, &n, M | self.entry, O & ~self.entry, 0)
            out.counts[0] = 1
        sk.p = &p  # the one- and two-step moves ranked as they are made
        sk.v = v
        sk.n = n
        self.one_step(&sk, M, O)
        out.counts[1] = sk.n - n
        n = sk.n
        self.two_steps(&sk, M, O)
        self.two_pieces(&sk, M, O)
        out.counts[2] = sk.n - n
        n = sk.n
        if self.hmax > 2 and (M & self.heaven) == self.heaven:
            buf.n = 0
            self.one_piece(&buf, M, O, 3, self.hmax)
            out.counts[3] = self.stage_all(&p, v, &n, &buf)
        if p.a < self.k:
            adj = self.adjacent(M)
            for r in range(self.nrolls):
                tiles = (self.roll_spawn[r] | (adj if self.roll_adjacent[r] else 0)) & ~(M | O)
                while tiles:
                    t = __builtin_ctz(tiles)
                    tiles &= tiles - 1
                    self.stage(&p, v, &n, M | ((<uint32_t> 1) << t), O, 0)
                    out.counts[4 + r] += 1
        for r in range(self.nrolls):
            has = out.counts[0] or out.counts[4 + r] or (self.roll_steps[r] >= 1 and out.counts[1]) or (
                self.roll_steps[r] >= 2 and (out.counts[2] or (self.roll_heaven[r] > 2 and out.counts[3])))
            if not has:
                self.stage(&p, v, &n, M, O, 0)
                out.counts[G - 1] = 1
                break
        for i in range(n):  # every word was asked for above: now number the outcomes
            out.codes[i] = self.finish(v[i])
            sg_hint(out, out.codes[i])
        out.n = n
        return n


    def successors(self, uint32_t mine, uint32_t theirs, int roll):
        """Outcomes of ``roll`` from the state: list of (mine, theirs, flag); flag 3 = pass."""
        if not 0 <= roll < self.nrolls:
            raise ValueError("roll index out of range")
        cdef Buf* buf = <Buf*> malloc(sizeof(Buf))
        try:
            self.gen_roll(buf, mine, theirs, roll)
            return [(int(buf.m[i]), int(buf.o[i]), int(buf.f[i])) for i in range(buf.n)]
        finally:
            free(buf)

    def device_tables(self):
        """The generator's numbers as numpy arrays (copies), for a second implementation of the same
        moves and ranks (the GPU backend's, ``games/ur/gpu_fort.py``): board, dice, binomials, tier
        offsets, colex byte tables and, with the mirror, its index: the bitmap of canonical full
        ranks in 32-bit halves of each 64-bit word (bits 0-31, bits 32-63), the canonical states
        before each word, and every 64th canonical state's full rank."""
        self.ready()
        cdef int64_t words = (self.full >> 6) + 1 if self.mirrored else 1, w
        cdef int64_t samples = ((self.total >> 6) + 1) if self.mirrored else 1
        cdef cnp.ndarray[int64_t, ndim=1] lo = np.zeros(words, dtype=np.int64)
        cdef cnp.ndarray[int64_t, ndim=1] hi = np.zeros(words, dtype=np.int64)
        cdef cnp.ndarray[int64_t, ndim=1] before = np.zeros(words, dtype=np.int64)
        cdef cnp.ndarray[int64_t, ndim=1] sample = np.zeros(samples, dtype=np.int64)
        if self.mirrored:
            with nogil:
                for w in range(words):
                    lo[w] = <int64_t> (self.words[w].bits & 0xFFFFFFFFu)
                    hi[w] = <int64_t> (self.words[w].bits >> 32)
                    before[w] = self.words[w].before
                for w in range(samples):
                    sample[w] = self.sample[w]
        R = self.nrolls
        return {
            "n": self.n, "k": self.k, "total": self.total, "full": self.full, "mirrored": bool(self.mirrored),
            "hmax": self.hmax, "forts": self.forts, "earth": self.earth, "heaven": self.heaven,
            "ishtar": self.ishtar, "entry": self.entry,
            "deg": np.array([self.deg[i] for i in range(self.n)], dtype=np.int64),
            "nbr": np.array([[self.nbr[i][j] if j < self.deg[i] else -1 for j in range(MAXDEG)]
                             for i in range(self.n)], dtype=np.int64).reshape(self.n, MAXDEG),
            "roll_p": np.array([self.roll_p[r] for r in range(R)], dtype=np.float32),
            "roll_groups": np.array([self.roll_groups[r] for r in range(R)], dtype=np.int64),
            "roll_steps": np.array([self.roll_steps[r] for r in range(R)], dtype=np.int64),
            "roll_heaven": np.array([self.roll_heaven[r] for r in range(R)], dtype=np.int64),
            "roll_adjacent": np.array([self.roll_adjacent[r] for r in range(R)], dtype=np.int64),
            "roll_spawn": np.array([self.roll_spawn[r] for r in range(R)], dtype=np.int64),
            "binom": np.array([[self.binom[i][j] for j in range(MAXN + 1)] for i in range(MAXN + 1)],
                              dtype=np.int64),
            "off": np.array([[self.off[a][b] for b in range(self.k + 2)] for a in range(self.k + 1)],
                            dtype=np.int64),
            "cx": np.array([[[self.cx[c][b][i] for i in range(MAXK + 1)] for b in range(256)] for c in range(4)],
                           dtype=np.int64),
            "flip_byte": np.array([[self.flip_byte[c][b] if self.mirrored else 0 for b in range(256)]
                                   for c in range(4)], dtype=np.int64),
            "words_lo": lo, "words_hi": hi, "words_before": before, "sample": sample,
        }

    def roll_moves(self, int roll):
        """(steps, heaven steps) of roll ``roll``."""
        if not 0 <= roll < self.nrolls:
            raise ValueError("roll index out of range")
        return self.roll_steps[roll], self.roll_heaven[roll]
