# cython: language_level=3
"""Value iteration for two-player dice games with endless play, for any game that implements
``StochasticGame`` (see _engine.pxd): the engine never looks inside a game.

Every kernel works on a rank range, in place, in float32 or float64, with OpenMP threads: Gauss-Seidel
sweeps of the Bellman backup (optionally discounted, optionally recording both players' greedy
policy), cheap sweeps of a fixed policy, the policy's matrix-vector product for Krylov solvers,
one pass of the endless-play check and sweeps of certified bounds. A backup reads a state's
outcomes group by group: the best of each group once, then for each roll the best of the groups
it may use, summed over the rolls in roll order. The kernels that read outcomes are each written
once over an outcome source ("where a kernel reads a state's outcomes" below): the game's
generator, or a stored outcome graph that keeps the same groups, so that both give the same
values, sweep for sweep (``graph_sweep`` and its kin are those kernels given a stored graph).
"""
import numpy as np
cimport numpy as cnp
from cython.parallel cimport prange, threadid
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.math cimport nextafter, nextafterf, fma, fabs, floor, ceil, log2, exp2, INFINITY

cnp.import_array()

cdef extern from *:
    int __builtin_ctz(unsigned int) nogil
    void __builtin_prefetch(const void*) nogil

cdef extern from *:
    """
    #include <stdatomic.h>
    /* A sweep that skips (see "skipping a backup" below) publishes each thread's largest change so
       far before the value it stored, and reads every thread's after the values it read: a value
       seen new comes with a largest change that covers it. */
    static inline void sg_publish(void) { atomic_thread_fence(memory_order_release); }
    static inline double sg_moved(const double* moved, int nt, double base) {
        const volatile double* m = moved;
        double top = base;
        int t;
        atomic_thread_fence(memory_order_acquire);
        for (t = 0; t < nt; t++)
            if (m[t * 8] > top)
                top = m[t * 8];
        return top;
    }
    """
    void sg_publish() nogil
    double sg_moved(const double* moved, int nt, double base) nogil

ctypedef fused count_t:  # codes per group: int as generated, uint8_t as stored
    int
    uint8_t

# Values are float32 (the default: 4 bytes a state) or float64 (where float32 cannot reach the
# precision asked); every value kernel is compiled for both, the float32 one unchanged.
ctypedef fused real:
    float
    double

WIN = SG_WIN
LOSS = SG_LOSS
NOCODE = SG_NOCODE


cdef class StochasticGame:
    """Base of every dice game's move generator; a game overrides ``generate``."""

    cdef void set_rolls(self, probabilities, groups, int ngroups) except *:
        """Roll probabilities and, per roll, the outcome groups it may use (lists of group
        indices, not naming the pass, which is always the last of ``ngroups``)."""
        cdef int r
        if not 1 <= len(probabilities) <= SG_MAX_ROLLS or len(groups) != len(probabilities):
            raise ValueError(f"a game has 1..{SG_MAX_ROLLS} rolls, each with its groups")
        if not 1 <= ngroups <= SG_MAX_GROUPS:
            raise ValueError(f"a game has 1..{SG_MAX_GROUPS} outcome groups")
        self.nrolls = len(probabilities)
        self.ngroups = ngroups
        for r in range(self.nrolls):
            self.roll_p[r] = probabilities[r]
            self.roll_groups[r] = 0
            for g in groups[r]:
                if not 0 <= g < ngroups - 1:
                    raise ValueError(f"roll {r} names group {g}; groups are 0..{ngroups - 2} and the pass")
                self.roll_groups[r] |= (<uint32_t> 1) << g

    cdef void ready(self) except *:
        pass

    cdef int generate(self, int64_t rank, Outcomes* out) noexcept nogil:
        out.n = 0
        return 0

    cdef void block_keys(self, int64_t rank, int32_t* own, int32_t* other) noexcept nogil:
        own[0] = 0  # one block for every state: the bound per block is the global one
        other[0] = 0

    @property
    def block_count(self) -> int:
        """How many blocks ``block_keys`` numbers (1 where the game names none)."""
        return max(1, self.nblocks)

    def keys_of(self, int64_t start, int64_t stop):
        """(own, other) int32 block keys of ranks start..stop-1 (``block_keys``)."""
        self.ready()
        if not 0 <= start <= stop <= self.total:
            raise ValueError(f"ranks {start}..{stop} outside 0..{self.total}")
        own = np.empty(stop - start, dtype=np.int32)
        other = np.empty(stop - start, dtype=np.int32)
        cdef int32_t[::1] a = own, b = other
        cdef int64_t i
        with nogil:
            for i in range(stop - start):
                self.block_keys(start + i, &a[i], &b[i])
        return own, other

    @property
    def state_count(self) -> int:
        self.ready()
        return self.total

    @property
    def roll_count(self) -> int:
        return self.nrolls

    @property
    def roll_probabilities(self) -> list:
        return [float(self.roll_p[r]) for r in range(self.nrolls)]

    def roll_group_list(self, int roll) -> list:
        """The groups roll ``roll`` may use (the pass group, last, only when they are all empty)."""
        check_roll(self, roll)
        return [g for g in range(self.ngroups - 1) if self.roll_groups[roll] >> g & 1]

    def outcome_groups(self, int64_t rank) -> list:
        """The state's outcome codes as the game writes them, group by group."""
        check_rank(self, rank)
        cdef Outcomes* o = new_outcomes(1)
        try:
            self.generate(rank, o)
            return split_groups(o.codes, o.counts, self.ngroups)
        finally:
            free(o)

    # The engine's kernels as methods, so that ``game.sweep(V)`` reads as it means.
    def sweep(self, V, **kw):
        return sweep(self, V, **kw)

    def evaluate(self, policy, V, **kw):
        return evaluate(self, policy, V, **kw)

    def policy_apply(self, policy, x, out, **kw):
        return policy_apply(self, policy, x, out, **kw)

    def endless_pass(self, V, good, eps, **kw):
        return endless_pass(self, V, good, eps, **kw)

    def roll_values(self, V, int64_t rank):
        """Best value of each roll from the state (after the roll, before acting), undiscounted."""
        return roll_values(self, V, rank)

    def roll_outcomes(self, int64_t rank, int roll) -> set:
        """The codes roll ``roll`` offers in the state: the union of its groups, else the pass."""
        check_roll(self, roll)
        groups = self.outcome_groups(rank)
        out = set()
        for g in self.roll_group_list(roll):
            out |= set(groups[g])
        return out or set(groups[len(groups) - 1])


def roll_values(StochasticGame game, real[::1] V, int64_t rank):
    """``StochasticGame.roll_values``: float32 or float64 values."""
    check_rank(game, rank)
    if V.shape[0] != game.total:
        raise ValueError(f"value array has {V.shape[0]} entries, the state space {game.total}")
    cdef Outcomes* o = new_outcomes(1)
    cdef int32_t* policy = <int32_t*> malloc(game.nrolls * sizeof(int32_t))
    cdef int r
    cdef real one = 1.0
    out = []
    try:
        game.generate(rank, o)
        backup(game, o.codes, o.counts, &V[0], one, policy)
        for r in range(game.nrolls):
            out.append(float(term(policy[r], &V[0], one)))
        return out
    finally:
        free(o)
        free(policy)


cdef Outcomes* new_outcomes(int count) except NULL:
    cdef Outcomes* o = <Outcomes*> malloc(count * sizeof(Outcomes))
    cdef int i
    if o == NULL:
        raise MemoryError()
    for i in range(count):
        o[i].values = NULL
        o[i].shift = 0
    return o


cdef inline void hint_values(Outcomes* outs, int count, const void* V, int size) noexcept nogil:
    """Let the generator ask the cache for each code's value in ``V`` as it writes the code (``sg_hint``)."""
    cdef int t
    for t in range(count):
        outs[t].values = <const char*> V
        outs[t].shift = 3 if size == 8 else 2


cdef list split_groups(const int32_t* codes, const int* counts, int ngroups):
    out = []
    cdef int g, at = 0
    for g in range(ngroups):
        out.append([int(codes[at + i]) for i in range(counts[g])])
        at += counts[g]
    return out


cdef check_roll(StochasticGame game, int roll):
    if not 0 <= roll < game.nrolls:
        raise ValueError(f"roll {roll} outside 0..{game.nrolls - 1}")


cdef check_rank(StochasticGame game, int64_t rank):
    game.ready()
    if not 0 <= rank < game.total:
        raise ValueError(f"rank {rank} outside 0..{game.total - 1}")


cdef inline real absval(real x) noexcept nogil:
    return x if x >= 0 else -x


cdef inline real term(int32_t c, const real* V, real g) noexcept nogil:
    """The value of outcome code ``c`` for the side that chose it; ``SG_NOCODE`` (no action and no
    pass, which ``backup`` counts as the game ending 0, and records so in a policy) is 0."""
    if c >= 0:
        return g * V[c]
    if c <= SG_NOCODE:
        return 1.0 if c == SG_WIN else (-1.0 if c == SG_LOSS else 0.0)
    return -(g * V[-(<int64_t> c) - 1])


cdef inline int64_t target(int32_t c) noexcept nogil:
    """The state an outcome leads to, or -1 when it ends the game."""
    if c >= 0:
        return c
    if c == SG_WIN or c == SG_LOSS or c == SG_NOCODE:
        return -1
    return -(<int64_t> c) - 1


cdef inline void fetch_value(int32_t c, const real* V) noexcept nogil:
    """Ask the cache for the value outcome ``c`` will read (a hint: nothing is read or changed)."""
    cdef int64_t x = target(c)
    if x >= 0:
        __builtin_prefetch(V + x)


cdef int64_t check_subset(StochasticGame game, const int64_t[::1] subset, uint8_t[::1] mark) except -1:
    """The number of ranks in ``subset`` (0 for none), which must increase inside 0..N-1, and
    ``mark`` must have a byte a state."""
    if mark is not None and mark.shape[0] != game.total:
        raise ValueError(f"mark array has {mark.shape[0]} entries; expected one a state ({game.total})")
    if subset is None or subset.shape[0] == 0:
        return 0
    cdef int64_t m = subset.shape[0], i
    cdef bint bad = subset[0] < 0 or subset[m - 1] >= game.total
    cdef const int64_t* S = &subset[0]
    # a scan in place: a hot set is swept hundreds of times a round, and np.diff's copy of it (up to
    # 80 million ranks at seven pieces) made each of those sweeps 7% slower (five pieces, 12% of the states)
    with nogil:
        i = 1
        while not bad and i < m:
            bad = S[i] <= S[i - 1]
            i += 1
    if bad:
        raise ValueError(f"subset must be increasing ranks in 0..{game.total - 1}")
    return m


cdef check_ahead(int ahead):
    if ahead < 0:
        raise ValueError(f"prefetch distance {ahead} is negative; expected 0 (none) or more states")


# How many states ahead the sweeps over stored codes (a stored graph, a recorded policy) ask the
# cache for the values they will read: their successors are scattered over the value array, which
# from K = 4 on is larger than the cache. A hint only: the values are the same with any distance.
PREFETCH_GRAPH = 4
PREFETCH_POLICY = 32
PREFETCH_ROWS = 32  # a subset's policy rows asked for this many states before their values are
# ... and the products by a matrix in compressed rows, in entries: on the pair's matrix of the
# fort rules with four pieces (16.8 million rows, 3 entries a row; two threads) 64 halved a
# product's time (118 ms against 238, medians of eight), 32 gave 135 ms, 128 and 256 as 64
PREFETCH_MATRIX = 64


cdef inline int64_t summed(const int64_t* per_thread, int nt) noexcept nogil:
    """The sum of the per-thread counts ``per_thread[t * 8]`` (a cache line apart)."""
    cdef int64_t total = 0
    cdef int t
    for t in range(nt):
        total += per_thread[t * 8]
    return total


cdef inline real largest(const real* worst, int nt) noexcept nogil:
    """The largest of the per-thread maxima ``worst[t * 16]`` (a cache line apart)."""
    cdef real top = 0.0
    cdef int t
    for t in range(nt):
        if worst[t * 16] > top:
            top = worst[t * 16]
    return top


# ---- where a kernel reads a state's outcomes ---------------------------------------------------
#
# Every kernel that reads outcomes is written once over an outcome source: the game's generator
# (``Generated``: each state's outcomes made again in a buffer of the thread's own) or a stored
# graph (``Stored``: every state's codes kept once, state s's from F[s] to F[s + 1], its codes
# per group in N). A kernel's loop is a function fused over the source, so Cython compiles it
# once for each: the choice costs nothing per state. ``load`` and the ``*_at`` helpers run a
# state's work (a step of the endless check, a backup of the bounds) on its outcomes from either;
# the sweep's loop, the hottest, reads the source's arrays from locals instead (why:
# docs/design/engine.md). Both sources keep the same groups in the same order, so a kernel gives
# the same values from either.

cdef check_graph(StochasticGame game, const int64_t[::1] offsets, const uint8_t[:, ::1] counts,
                 const int32_t[::1] codes):
    if counts.shape[0] != game.total or counts.shape[1] != game.ngroups \
            or offsets.shape[0] != game.total + 1 or codes.shape[0] < offsets[game.total] \
            or codes.shape[0] == 0:
        raise ValueError("stored graph does not fit the state space")


cdef struct Generated:
    Outcomes* outs          # one buffer a thread


cdef struct Stored:
    const int32_t* C        # the codes
    const uint8_t* N        # codes per group, G a state
    const int64_t* F        # where each state's codes begin
    int G


ctypedef fused source_t:
    Generated
    Stored


cdef bint stored_graph(StochasticGame game, const int64_t[::1] offsets, const uint8_t[:, ::1] counts,
                       const int32_t[::1] codes) except -1:
    """Whether a kernel was given a stored graph (all three arrays, checked against the game)."""
    if offsets is None and counts is None and codes is None:
        return 0
    if offsets is None or counts is None or codes is None:
        raise ValueError("a stored graph is given by its offsets, counts and codes, all three")
    check_graph(game, offsets, counts, codes)
    return 1


cdef inline void stored_from(Stored* st, StochasticGame game, const int64_t[::1] offsets,
                             const uint8_t[:, ::1] counts, const int32_t[::1] codes) noexcept:
    st.C = &codes[0]
    st.N = &counts[0, 0]
    st.F = &offsets[0]
    st.G = game.ngroups


cdef inline void load(StochasticGame game, source_t* src, int64_t s, int tid) noexcept nogil:
    """Make state ``s``'s outcomes readable by thread ``tid`` (generated; stored ones already are)."""
    if source_t is Generated:
        game.generate(s, &src.outs[tid])






cdef bint finished(int G, const int32_t* c, const count_t* cnt) noexcept nogil:
    """A finished state: its only code, in the pass group, is a win or a loss."""
    cdef int k
    for k in range(G - 1):
        if cnt[k]:
            return 0
    return cnt[G - 1] == 1 and (c[0] == SG_WIN or c[0] == SG_LOSS)


cdef real backup(StochasticGame game, const int32_t* c, const count_t* cnt, const real* V, real g,
                  int32_t* policy) noexcept nogil:
    """Expected value over the rolls of the best outcome: one Bellman backup from the state's
    outcome groups. With ``policy``, ``policy[r]`` receives the code of roll r's best outcome."""
    cdef int G = game.ngroups, k, i, r
    cdef real best[32]
    cdef int32_t code[32]
    cdef real v, w, total = 0.0
    cdef int32_t cv
    cdef uint32_t mask
    if finished(G, c, cnt):  # exactly +-1, whatever the roll probabilities add up to in float32
        if policy != NULL:
            for r in range(game.nrolls):
                policy[r] = c[0]
        return 1.0 if c[0] == SG_WIN else -1.0
    for k in range(G):
        v = -2.0
        cv = SG_NOCODE
        for i in range(cnt[k]):
            w = term(c[i], V, g)
            if w > v:
                v = w
                cv = c[i]
        best[k] = v
        code[k] = cv
        c += cnt[k]
    for r in range(game.nrolls):
        v = -2.0
        cv = SG_NOCODE
        mask = game.roll_groups[r]
        while mask:
            k = __builtin_ctz(mask)
            mask &= mask - 1
            if best[k] > v:
                v = best[k]
                cv = code[k]
        if v < -1.5:  # nothing legal for this roll: the pass
            v = best[G - 1]
            cv = code[G - 1]
            if v < -1.5:  # a game that offers no pass either: count it as the game ending 0
                v = 0.0
        total += game.roll_p[r] * v
        if policy != NULL:
            policy[r] = cv
    return total


# ---- skipping a backup whose choice cannot have changed --------------------------------------
#
# A full sweep can record, a byte a state, a lower bound on the state's smallest lead: over the
# rolls, the best outcome's value less the best value of any other outcome the roll offers. If
# every successor's value has moved by at most D since, and the lead exceeds 2 D (with room for
# rounding), the recorded choice is still the best of every roll, so backing the state up by its
# policy row gives the full backup's value to the bit. The byte: 0 (a tie, or a lead below
# LEAD_SCALE[1]), 1..LEAD_TOP (a lead of at least 2 ** ((q - LEAD_TOP) / 8)), LEAD_ALONE (no roll
# offers a second outcome: the choice never changes), LEAD_FINISHED (the game is over: +-1).
# ``stamp`` names the round of the state's last full backup (STAMP_NEVER: none). The caller gives,
# for each stamp, ``bounds``: how far any value can have moved from what that round's backup read
# to what this sweep started from (infinite: nothing is proven). This sweep's own changes so far
# are added, read from every thread after the row's values were read (sg_moved): a state is
# backed up from its row where LEAD_SCALE[byte] > slack * (bound + moved so far) + SKIP_ROUNDING,
# and from its outcomes otherwise (generated, or read from a stored graph).

cdef enum:
    LEAD_TOP_ = 253
    LEAD_ALONE_ = 254
    LEAD_FINISHED_ = 255
    STAMP_NEVER_ = 255

LEAD_TOP = LEAD_TOP_
LEAD_ALONE = LEAD_ALONE_
LEAD_FINISHED = LEAD_FINISHED_
STAMP_NEVER = STAMP_NEVER_

# float32 rounding of two outcomes' discounted values g * V, with room to spare
SKIP_ROUNDING = 2.5e-7
cdef double SKIP_ROUNDING_ = SKIP_ROUNDING
cdef double LEAD_SCALE[254]  # the smallest lead each finite byte stands for
LEAD_SCALE[0] = 0.0
for _q in range(1, LEAD_TOP_ + 1):
    LEAD_SCALE[_q] = exp2((_q - LEAD_TOP_) / 8.0)


def lead_scale():
    """The smallest lead each finite lead byte 0..LEAD_TOP stands for (0 for byte 0)."""
    return np.array([LEAD_SCALE[q] for q in range(LEAD_TOP_ + 1)])


cdef inline int level_down(double lead, const double* scale, int top, double steps) noexcept nogil:
    """The largest level 0..``top`` whose lead is at most ``lead`` (rounded down: a bound), on a scale
    of ``steps`` levels an octave up to ``scale[top]`` = 1 (``scale[0]`` = 0)."""
    cdef int q
    if not lead >= scale[1]:
        return 0
    if lead >= 1.0:
        return top
    q = <int> floor(steps * log2(lead)) + top
    if q < 1:
        q = 1
    if q > top:
        q = top
    while q > 1 and scale[q] > lead:
        q -= 1
    while q < top and scale[q + 1] <= lead:
        q += 1
    return q


cdef inline uint8_t lead_byte(double lead) noexcept nogil:
    """The largest finite byte whose lead is at most ``lead`` (rounded down: a bound)."""
    return <uint8_t> level_down(lead, LEAD_SCALE, LEAD_TOP_, 8.0)


def lead_of(double lead) -> int:
    """``lead_byte`` for Python: the byte a smallest lead of ``lead`` is recorded as."""
    return lead_byte(lead)


cdef real backup_lead(StochasticGame game, const int32_t* c, const count_t* cnt, const real* V, real g,
                      int32_t* policy, uint8_t* lead, double* gap_out=NULL) noexcept nogil:
    """``backup`` (the same value, the same policy row) that also writes the state's lead byte
    (and, where ``gap_out`` is given, the smallest lead itself: INFINITY where no roll has a choice).
    Over-counting a candidate for second best only lowers the lead: the byte stays a bound."""
    cdef int G = game.ngroups, k, i, r
    cdef real top[32]
    cdef real next_[32]
    cdef int32_t code[32]
    cdef real v, w, t, second, total = 0.0
    cdef int32_t cv, ci
    cdef uint32_t mask
    cdef double least = INFINITY, gap
    if finished(G, c, cnt):
        for r in range(game.nrolls):
            policy[r] = c[0]
        lead[0] = LEAD_FINISHED_
        if gap_out != NULL:
            gap_out[0] = -1.0
        return 1.0 if c[0] == SG_WIN else -1.0
    for k in range(G):  # each group's best, and the best of its other codes
        v = -2.0
        second = -2.0
        cv = SG_NOCODE
        for i in range(cnt[k]):
            ci = c[i]
            w = term(ci, V, g)
            if w > v:
                second = v
                v = w
                cv = ci
            elif w > second and ci != cv:  # a repeat of the best is no other choice
                second = w
        top[k] = v
        next_[k] = second
        code[k] = cv
        c += cnt[k]
    for r in range(game.nrolls):
        v = -2.0
        second = -2.0
        cv = SG_NOCODE
        mask = game.roll_groups[r]
        while mask:  # the first best group, as ``backup``; second: the best of every other code
            k = __builtin_ctz(mask)
            mask &= mask - 1
            t = top[k]
            if t > v:  # v's code differs from code[k] (its value does)
                if v > second:
                    second = v
                v = t
                cv = code[k]
                if next_[k] > second:
                    second = next_[k]
            elif t == v and code[k] == cv:  # the same best again: its group's others
                if next_[k] > second:
                    second = next_[k]
            elif t > second:
                second = t
        if v < -1.5:  # the pass
            v = top[G - 1]
            cv = code[G - 1]
            second = next_[G - 1]
            if v < -1.5:
                v = 0.0
        total += game.roll_p[r] * v
        policy[r] = cv
        if second > -1.5:
            gap = <double> v - <double> second
            if gap < least:
                least = gap
    if gap_out != NULL:
        gap_out[0] = least
    else:
        lead[0] = LEAD_ALONE_ if least == INFINITY else lead_byte(least)
    return total






cdef inline real row_sum(StochasticGame game, const int32_t* row, const real* V, real g) noexcept nogil:
    """A policy row's backup: each roll's chosen outcome, summed in roll order as ``backup`` sums."""
    cdef real acc = 0.0
    cdef int r
    for r in range(game.nrolls):
        acc = acc + game.roll_p[r] * term(row[r], V, g)
    return acc


cdef inline real row_backup(StochasticGame game, const int32_t* row, const real* V, real g, uint8_t lead) noexcept nogil:
    """The backup of a state whose recorded choice is proven: its policy row (a finished state's
    exact +-1, as ``backup`` gives it)."""
    if lead == LEAD_FINISHED_:
        return 1.0 if row[0] == SG_WIN else -1.0
    return row_sum(game, row, V, g)


cdef inline bint may_skip(uint8_t q, double bound, double slack) noexcept nogil:
    """Whether lead byte ``q`` proves the recorded choice against values moved by up to ``bound``."""
    return q >= LEAD_ALONE_ or (q > 0 and LEAD_SCALE[q] > slack * bound + SKIP_ROUNDING_)


# ---- carried leads (BlockSkip: a bound per block of states) ---------------------------------
#
# A state's lead is carried from round to round in two bytes: each round the walk takes off twice
# the largest movement of the blocks its successors lie in (read through the state's two block
# keys), rounded down, so the bytes hold what is left of the lead against the values at the
# sweep's start. Bit 15 says the lead was measured in the last full sweep (its movement during
# that sweep is still to be taken off); bits 0-14 a level, 1024 an octave from 2^-32 up to 1.

cdef enum:
    CARRY_TOP_ = 32764          # the level of a lead of 1 (or more)
    CARRY_ALONE_ = 0xFFFD       # no roll has a choice: the row is the backup
    CARRY_FINISHED_ = 0xFFFE    # a finished state
    CARRY_NEVER_ = 0xFFFF       # not backed up from its outcomes yet
    CARRY_FRESH_ = 0x8000

CARRY_TOP = CARRY_TOP_
CARRY_ALONE = CARRY_ALONE_
CARRY_FINISHED = CARRY_FINISHED_
CARRY_NEVER = CARRY_NEVER_
CARRY_FRESH = CARRY_FRESH_
cdef double CARRY_SCALE[32765]  # the smallest lead each level stands for (0 for level 0)
CARRY_SCALE[0] = 0.0
for _q in range(1, CARRY_TOP_ + 1):
    CARRY_SCALE[_q] = exp2((_q - CARRY_TOP_) / 1024.0)


def carry_scale():
    """The smallest lead each carried level 0..CARRY_TOP stands for."""
    return np.array([CARRY_SCALE[q] for q in range(CARRY_TOP_ + 1)])


cdef inline uint16_t carry_level(double lead) noexcept nogil:
    """The largest level whose lead is at most ``lead`` (rounded down: a bound)."""
    return <uint16_t> level_down(lead, CARRY_SCALE, CARRY_TOP_, 1024.0)


def carry_of(double lead) -> int:
    """``carry_level`` for Python."""
    return carry_level(lead)


cdef inline uint16_t carry_word(double least) noexcept nogil:
    """The two bytes a full backup records from its smallest lead (``backup_lead``'s gap)."""
    if least == INFINITY:
        return CARRY_ALONE_
    if least < 0.0:
        return CARRY_FINISHED_
    return carry_level(least) | CARRY_FRESH_


cdef inline void group_starts(int G, const int32_t* c, const count_t* cnt, const int32_t** start) noexcept nogil:
    """Where each of a state's outcome groups begins in its codes ``c``."""
    cdef int k
    for k in range(G):
        start[k] = c
        c += cnt[k]


cdef int reaches(StochasticGame game, const int32_t* c, const count_t* cnt, const real* V, real ahead,
                 const uint8_t* good, real eps) noexcept nogil:
    """1 when the state joins the set from which the game can be made to end (``endless_pass``)."""
    cdef int G = game.ngroups, r, k, i, inside, any_
    cdef const int32_t* start[32]
    cdef real top, w
    cdef int64_t t
    cdef uint32_t mask
    group_starts(G, c, cnt, start)
    for r in range(game.nrolls):
        mask = game.roll_groups[r]
        any_ = 0
        for k in range(G - 1):
            if (mask >> k & 1) and cnt[k]:
                any_ = 1
        if not any_:
            mask = (<uint32_t> 1) << (G - 1)
        top = -2.0
        inside = 1
        for k in range(G):
            if not (mask >> k & 1):
                continue
            for i in range(cnt[k]):
                w = term(start[k][i], V, 1.0)
                if w > top:
                    top = w
                t = target(start[k][i])
                if t >= 0 and not good[t]:
                    inside = 0
        if ahead > 0:  # the mover wants the game to end: one of its best outcomes must lead there
            for k in range(G):
                if not (mask >> k & 1):
                    continue
                for i in range(cnt[k]):
                    t = target(start[k][i])
                    if term(start[k][i], V, 1.0) >= top - eps and (t < 0 or good[t]):
                        return 1
        elif inside:  # the mover would rather play for ever: only a roll with no way out forces it
            return 1
    return 0


cdef inline bint finished_at(const source_t* src, int64_t s, int tid, int G) noexcept nogil:
    if source_t is Stored:
        return finished(G, src.C + src.F[s], src.N + s * src.G)
    else:
        return finished(G, src.outs[tid].codes, src.outs[tid].counts)


cdef inline int reaches_at(StochasticGame game, const source_t* src, int64_t s, int tid, const real* V, real ahead,
                           const uint8_t* good, real eps) noexcept nogil:
    if source_t is Stored:
        return reaches(game, src.C + src.F[s], src.N + s * src.G, V, ahead, good, eps)
    else:
        return reaches(game, src.outs[tid].codes, src.outs[tid].counts, V, ahead, good, eps)


cdef int64_t check_range(StochasticGame game, int64_t nvalues, int64_t start, int64_t stop,
                         double discount) except -1:
    """Check a sweep's value array, rank range and discount; returns ``stop`` (-1: the end)."""
    if not 0.0 < discount <= 1.0:
        raise ValueError("discount must be in (0, 1]")
    if nvalues != game.total:
        raise ValueError(f"value array has {nvalues} entries, the state space {game.total}")
    if stop < 0:
        stop = game.total
    if not 0 <= start <= stop <= game.total:
        raise ValueError(f"ranks {start}..{stop} outside the state space (0..{game.total})")
    return stop


cdef int32_t* policy_rows(StochasticGame game, int32_t[:, ::1] policy) except? NULL:
    """The policy array's first row (NULL for None), checked to have a row per state."""
    if policy is None:
        return NULL
    if policy.shape[0] != game.total or policy.shape[1] != game.nrolls:
        raise ValueError(f"policy array must have shape ({game.total}, {game.nrolls})")
    return &policy[0, 0]


def sweep(StochasticGame game, real[::1] V, int threads=1, int64_t start=0, int64_t stop=-1,
          bint write=True, int32_t[:, ::1] policy=None, double discount=1.0, bint backwards=False,
          const int64_t[::1] subset=None, uint8_t[::1] lead=None, uint8_t[::1] stamp=None,
          const double[::1] bounds=None, double slack=2.0, double moved=0.0, int now=0,
          int64_t[::1] work=None, bint hint=True, const int64_t[::1] offsets=None,
          const uint8_t[:, ::1] counts=None, const int32_t[::1] codes=None, int ahead=PREFETCH_GRAPH,
          uint16_t[::1] carry=None, const double[:, ::1] kbounds=None, double dg=0.0,
          int32_t[:, ::1] subset_rows=None):
    """One Gauss-Seidel sweep in place over ranks start..stop-1, generating every state's
    outcomes (or reading them from a stored graph); returns the largest change (with ``write=False``: the Bellman residual, nothing
    written). ``policy`` (one row per state, a column per roll) receives the greedy codes.
    ``backwards`` visits the ranks from the top down.
    ``discount`` (at most 1) multiplies the value of every state reached without the game
    ending: the game stops, counted 0, with probability 1 - discount after each action.
    ``subset``: back up only these ranks (increasing), in that order, instead of ``start``/``stop``
    (a few states the endless check flagged, repaired alone while the rest stay put).
    ``subset_rows`` (a row for each of ``subset``'s states, in its order; instead of ``policy``):
    the greedy codes of ``subset[i]`` go to ``subset_rows[i]``. Sweeps that rewrite a few
    scattered rows many times then dirty a small array instead of pages all over a policy mapped
    from a file, and the caller copies the rows into the policy once (``walk.greedy_sweeps``).

    ``lead``, ``stamp``, ``bounds`` (256 float64), ``slack``, ``moved``, ``now`` (0..254): skip
    what cannot change (see "skipping a backup" above; needs ``policy``). ``moved``: the largest
    change of this sweep before this call (its earlier ranges). A state whose choice is proven is
    backed up by its policy row, without its outcomes; every other state from its outcomes, and its lead
    byte and its stamp (``now``) written. ``work`` (two int64), where given, receives the states
    backed up from their outcomes (generated, or read from the stored graph) and their outcome
    codes, added to what it holds.
    ``hint``: the generator asks the cache for each outcome's value as it writes the code, so that
    the backup finds the values on their way (a hint: the values are the same without it).
    ``offsets``, ``counts``, ``codes`` (``graph_build``'s): read every state's outcomes from this
    stored graph instead of generating them, the same values at the cost of one lookup per
    distinct outcome; ``ahead``: there, prefetch the values that the state this many ranks on
    will read (0: none; not with ``subset``).

    ``carry`` (two bytes a state), ``kbounds`` (4 rows of ``game.block_count``: the largest
    movement of the blocks reached from each own block and each other key, for a lead measured
    before the last full sweep and in it), ``dg`` (the change of discount since the last full
    sweep), ``slack``, ``moved``: skip with a bound per block and leads carried from round to
    round instead of stamps (solver/stochastic/skip.py, ``BlockSkip``; needs ``policy``): a state's
    carried lead less ``slack`` times its blocks' movement and ``dg`` is written back where it
    still proves the recorded choice against this sweep's changes so far, and a state backed up
    from its outcomes records its new lead."""
    game.ready()
    check_ahead(ahead)
    cdef bint from_graph = stored_graph(game, offsets, counts, codes)
    cdef real g = <real> discount
    stop = check_range(game, V.shape[0], start, stop, g)
    cdef int64_t m = check_subset(game, subset, None)
    cdef const int64_t* S = &subset[0] if m else NULL
    if subset is not None:
        start, stop, backwards = 0, m, False
    cdef int32_t* P = policy_rows(game, policy)
    cdef bint by_place = subset_rows is not None
    if by_place:
        if subset is None or policy is not None or lead is not None or carry is not None:
            raise ValueError("subset_rows takes a subset's rows instead of a policy, in a sweep that does not skip")
        if subset_rows.shape[0] != m or subset_rows.shape[1] != game.nrolls:
            raise ValueError(f"subset_rows must have shape ({m}, {game.nrolls}): a row for each state of the subset")
        P = &subset_rows[0, 0] if m else NULL
    cdef uint8_t* LD = NULL
    cdef uint8_t* ST = NULL
    cdef const double* BD = NULL
    if lead is not None:
        if P == NULL or stamp is None or bounds is None or subset is not None or not write:
            raise ValueError("skipping needs a policy, stamps and bounds, and a written sweep of a rank range")
        if lead.shape[0] != game.total or stamp.shape[0] != game.total or bounds.shape[0] != 256:
            raise ValueError(f"lead and stamp arrays need a byte a state ({game.total}), bounds 256 entries")
        if not 0 <= now < STAMP_NEVER_ or not bounds[STAMP_NEVER_] == INFINITY:
            raise ValueError(f"a stamp is 0..{STAMP_NEVER_ - 1}, and a state never backed up (stamp "
                             f"{STAMP_NEVER_}) has an infinite bound")
        if not (slack >= 0.0 and moved >= 0.0):
            raise ValueError("slack and moved must be at least 0")
        LD, ST, BD = &lead[0], &stamp[0], &bounds[0]
    cdef uint16_t* L2 = NULL
    cdef const double* KB = NULL
    cdef int64_t nb = max(1, game.nblocks)
    if carry is not None:
        if P == NULL or kbounds is None or lead is not None or subset is not None or not write:
            raise ValueError("carried leads need a policy and block bounds, no lead bytes, and a written "
                             "sweep of a rank range")
        if carry.shape[0] != game.total or kbounds.shape[0] != 4 or kbounds.shape[1] != nb:
            raise ValueError(f"carried leads need two bytes a state ({game.total}) and block bounds of "
                             f"shape (4, {nb})")
        if not (slack >= 0.0 and moved >= 0.0 and dg >= 0.0):
            raise ValueError("slack, moved and dg must be at least 0")
        L2, KB = &carry[0], &kbounds[0, 0]
    if work is not None and work.shape[0] != 2:
        raise ValueError("work array must have two entries: states generated, codes written")
    cdef int nt = max(1, threads), t
    cdef real* worst = <real*> malloc(nt * 16 * sizeof(real))
    cdef int64_t* made = <int64_t*> malloc(nt * 8 * sizeof(int64_t))
    cdef double* seen = <double*> malloc(nt * 8 * sizeof(double))  # each thread's largest change, published
    cdef real* Vp = &V[0]
    cdef uint8_t now_ = <uint8_t> now
    cdef int64_t gahead = ahead if subset is None else 0
    cdef int64_t lookahead = PREFETCH_POLICY
    cdef Generated gen
    cdef Stored st
    gen.outs = NULL
    for t in range(nt):
        worst[t * 16] = 0.0
        made[t * 8] = 0
        made[t * 8 + 1] = 0
        seen[t * 8] = 0.0
    try:
        if from_graph:
            stored_from(&st, game, offsets, counts, codes)
            with nogil:
                sweep_loop(game, &st, Vp, g, start, stop, backwards, write, S, P, by_place, LD, ST, BD, slack, moved,
                           now_, nt, worst, made, seen, gahead, lookahead, L2, KB, nb, dg)
        else:
            gen.outs = new_outcomes(nt)
            if hint:
                hint_values(gen.outs, nt, Vp, sizeof(real))
            with nogil:
                sweep_loop(game, &gen, Vp, g, start, stop, backwards, write, S, P, by_place, LD, ST, BD, slack, moved,
                           now_, nt, worst, made, seen, 0, lookahead, L2, KB, nb, dg)
        if work is not None:
            for t in range(nt):
                work[0] += made[t * 8]
                work[1] += made[t * 8 + 1]
        return largest(worst, nt)
    finally:
        free(gen.outs)
        free(worst)
        free(made)
        free(seen)


cdef inline void published_store(real* Vp, int64_t s, real v, real* worst, double* seen) noexcept nogil:
    """A skipping sweep's store of state ``s``'s new value: its change goes into the thread's
    largest (``worst``) and is published (``seen``) before the value, so that every thread that
    reads the value new also sees a largest change that covers it (``sg_moved``)."""
    cdef real d = absval(v - Vp[s])
    if d > worst[0]:
        worst[0] = d
        seen[0] = d
    sg_publish()
    Vp[s] = v


cdef void sweep_loop(StochasticGame game, source_t* src, real* Vp, real g, int64_t start, int64_t stop,
                     bint backwards, bint write, const int64_t* S, int32_t* P, bint by_place, uint8_t* LD, uint8_t* ST,
                     const double* BD, double slack, double moved, uint8_t now_, int nt, real* worst,
                     int64_t* made, double* seen, int64_t ahead, int64_t lookahead, uint16_t* L2,
                     const double* KB, int64_t nb, double dg) noexcept nogil:
    """``sweep``'s loop over one outcome source (``ahead``: the stored graph's prefetch distance;
    ``lookahead``: how far on the policy rows a skipping sweep will read are asked for;
    ``by_place``: ``P`` holds a row for each place in the subset, not for each rank)."""
    cdef int64_t s, i, j, y
    cdef int tid, r, R = game.nrolls, G = game.ngroups
    cdef real v, d
    cdef uint8_t q, qd
    cdef bint from_row
    cdef uint16_t w
    cdef int32_t k1, k2
    cdef double rem, least
    # the source's arrays as locals: read through ``src`` they would be read again after every
    # store of a value (the build does not let the compiler assume that stores of different types
    # do not overlap)
    cdef const int32_t* C = NULL
    cdef const uint8_t* N = NULL
    cdef const int64_t* F = NULL
    cdef Outcomes* outs = NULL
    if source_t is Stored:
        C, N, F = src.C, src.N, src.F
    else:
        outs = src.outs
    for i in prange(start, stop, schedule="dynamic", chunksize=4096, num_threads=nt):
        s = S[i] if S != NULL else (stop - 1 - (i - start)) if backwards else i
        tid = threadid()
        if source_t is Stored:
            if ahead:
                y = (s - ahead) if backwards else (s + ahead)
                if start <= y < stop:
                    for j in range(F[y], F[y + 1]):
                        fetch_value(C[j], Vp)
        if L2 != NULL:  # skipping what cannot change, with a bound per block and carried leads
            y = (s - lookahead) if backwards else (s + lookahead)
            if start <= y < stop and L2[y] != CARRY_NEVER_:
                for r in range(R):  # a later state that may be read from its row
                    fetch_value(P[y * R + r], Vp)
            w = L2[s]
            from_row = 0
            k1 = 0  # assigned here, so that each thread has its own (block_keys writes through pointers)
            k2 = 0
            least = 0.0
            qd = 0
            if w == CARRY_ALONE_ or w == CARRY_FINISHED_:
                v = row_backup(game, P + s * R, Vp, g, LEAD_FINISHED_ if w == CARRY_FINISHED_ else LEAD_ALONE_)
                from_row = 1
            elif w != CARRY_NEVER_ and CARRY_SCALE[w & ~CARRY_FRESH_] > slack * (moved + dg) + SKIP_ROUNDING_:
                # (a lead that this sweep's earlier changes alone outweigh cannot prove: no keys asked)
                game.block_keys(s, &k1, &k2)
                if w & CARRY_FRESH_:  # measured in the last full sweep: its movement then too
                    rem = KB[nb + k1] if KB[nb + k1] > KB[3 * nb + k2] else KB[3 * nb + k2]
                else:
                    rem = KB[k1] if KB[k1] > KB[2 * nb + k2] else KB[2 * nb + k2]
                rem = CARRY_SCALE[w & ~CARRY_FRESH_] - slack * (rem + dg)
                if rem > slack * moved + SKIP_ROUNDING_:  # then proven only if this sweep's changes allow
                    v = row_backup(game, P + s * R, Vp, g, 0)
                    from_row = rem > slack * sg_moved(seen, nt, moved) + SKIP_ROUNDING_
                    if from_row:
                        L2[s] = carry_level(rem)
            if not from_row:
                made[tid * 8] += 1
                if source_t is Stored:
                    made[tid * 8 + 1] += F[s + 1] - F[s]
                    v = backup_lead(game, C + F[s], N + s * G, Vp, g, P + s * R, &qd, &least)
                else:
                    game.generate(s, &outs[tid])
                    made[tid * 8 + 1] += outs[tid].n
                    v = backup_lead(game, outs[tid].codes, outs[tid].counts, Vp, g, P + s * R, &qd, &least)
                L2[s] = carry_word(least)
            published_store(Vp, s, v, worst + tid * 16, seen + tid * 8)
            continue
        if LD != NULL:  # skipping what cannot change
            y = (s - lookahead) if backwards else (s + lookahead)
            if start <= y < stop and may_skip(LD[y], BD[ST[y]], slack):
                for r in range(R):  # a later state that is likely to be read from its row
                    fetch_value(P[y * R + r], Vp)
            q = LD[s]
            from_row = 0
            if q >= LEAD_ALONE_:
                v = row_backup(game, P + s * R, Vp, g, q)
                from_row = 1
            elif may_skip(q, BD[ST[s]], slack):  # then proven only if this sweep's changes allow
                v = row_backup(game, P + s * R, Vp, g, q)
                from_row = may_skip(q, BD[ST[s]] + sg_moved(seen, nt, moved), slack)
            if not from_row:
                made[tid * 8] += 1
                if source_t is Stored:
                    made[tid * 8 + 1] += F[s + 1] - F[s]
                    v = backup_lead(game, C + F[s], N + s * G, Vp, g, P + s * R, LD + s)
                else:
                    game.generate(s, &outs[tid])
                    made[tid * 8 + 1] += outs[tid].n
                    v = backup_lead(game, outs[tid].codes, outs[tid].counts, Vp, g, P + s * R, LD + s)
                ST[s] = now_
            published_store(Vp, s, v, worst + tid * 16, seen + tid * 8)
            continue
        if source_t is Stored:
            made[tid * 8] += 1
            made[tid * 8 + 1] += F[s + 1] - F[s]
            v = backup(game, C + F[s], N + s * G, Vp, g, (P + (i if by_place else s) * R) if P != NULL else NULL)
        else:
            game.generate(s, &outs[tid])
            made[tid * 8] += 1
            made[tid * 8 + 1] += outs[tid].n
            v = backup(game, outs[tid].codes, outs[tid].counts, Vp, g,
                       (P + (i if by_place else s) * R) if P != NULL else NULL)
        d = absval(v - Vp[s])
        if d > worst[tid * 16]:
            worst[tid * 16] = d
        if write:
            Vp[s] = v


cdef inline void policy_update(StochasticGame game, const int32_t* row, real* V, int64_t s, real g, real* worst,
                               uint8_t* mark, real above) noexcept nogil:
    """One state's update in a policy sweep: V[s] from its policy row (a code per roll, summed in
    roll order), keeping the largest change in ``worst`` and marking a change above ``above``."""
    cdef real acc = row_sum(game, row, V, g), d
    d = absval(acc - V[s])
    if d > worst[0]:
        worst[0] = d
    if mark != NULL and d > above:
        mark[s] = 1
    V[s] = acc


def evaluate(StochasticGame game, const int32_t[:, ::1] policy, real[::1] V, int threads=1,
             double discount=1.0, int64_t start=0, int64_t stop=-1, int ahead=PREFETCH_POLICY,
             const int64_t[::1] subset=None, uint8_t[::1] mark=None, double above=0.0,
             int rows=PREFETCH_ROWS):
    """One sweep of the fixed policy's equations V = c + A V, in place; returns the largest change.

    A handful of lookups a state instead of generating every action. The arithmetic is the full
    sweep's (float32, the rolls summed in the same order), so where the policy is the greedy one
    both sweeps have the same fixed point. ``start``/``stop``: only those ranks (a distributed
    worker's range; its policy rows elsewhere are never read).

    ``subset``: sweep only these ranks (increasing), in that order, instead of ``start``/``stop``:
    the states where a slow error lives (a hot set), swept many times at a fraction of the cost.
    ``mark``: a byte a state, set to 1 where this sweep changed the value by more than ``above``
    (and left alone elsewhere), to find those states. ``rows``: with a subset, whose states'
    policy rows lie far apart, also ask for the row (and the state's own value) of the state
    this many further on than ``ahead``, so that the values ``ahead`` asks for can be read
    from a row already in the cache (0: none; a hint like ``ahead``)."""
    game.ready()
    if V.shape[0] != game.total or policy.shape[0] != game.total or policy.shape[1] != game.nrolls:
        raise ValueError("value or policy array does not fit the state space")
    cdef real g = <real> discount
    if not 0.0 < g <= 1.0:
        raise ValueError("discount must be in (0, 1]")
    check_ahead(ahead)
    check_ahead(rows)
    stop = check_range(game, V.shape[0], start, stop, discount)
    cdef int64_t m = check_subset(game, subset, mark), i, y
    cdef const int64_t* S = &subset[0] if m else NULL
    cdef int nt = max(1, threads), t, r, tid, R = game.nrolls
    cdef real* worst = <real*> malloc(nt * 16 * sizeof(real))
    cdef int64_t s
    cdef real top, hot = <real> above
    cdef real* Vp = &V[0]
    cdef const int32_t* P = &policy[0, 0]
    cdef uint8_t* Mk = &mark[0] if mark is not None else NULL
    for t in range(nt):
        worst[t * 16] = 0.0
    if subset is not None:
        with nogil:
            for i in prange(m, schedule="static", chunksize=4096, num_threads=nt):
                tid = threadid()
                s = S[i]
                if rows and i + ahead + rows < m:
                    y = S[i + ahead + rows]
                    __builtin_prefetch(P + y * R)
                    __builtin_prefetch(P + y * R + R - 1)  # a row may straddle two lines
                    __builtin_prefetch(Vp + y)
                if ahead and i + ahead < m:
                    for r in range(R):
                        fetch_value(P[S[i + ahead] * R + r], Vp)
                policy_update(game, P + s * R, Vp, s, g, &worst[tid * 16], Mk, hot)
        top = largest(worst, nt)
        free(worst)
        return top
    with nogil:
        for s in prange(start, stop, schedule="static", chunksize=65536, num_threads=nt):
            tid = threadid()
            if ahead and s + ahead < stop:
                for r in range(R):
                    fetch_value(P[(s + ahead) * R + r], Vp)
            policy_update(game, P + s * R, Vp, s, g, &worst[tid * 16], Mk, hot)
    top = largest(worst, nt)
    free(worst)
    return top


def policy_apply(StochasticGame game, const int32_t[:, ::1] policy, const double[::1] x, double[::1] out,
                 bint constants=False, bint minus=False, int threads=1, double discount=1.0):
    """``out = A x`` (``c + A x`` with ``constants``, ``x - A x`` with ``minus``) for the fixed
    policy: a matrix-vector product for Krylov solvers, in float64."""
    game.ready()
    if x.shape[0] != game.total or out.shape[0] != game.total or policy.shape[0] != game.total \
            or policy.shape[1] != game.nrolls:
        raise ValueError("vector or policy array does not fit the state space")
    cdef int nt = max(1, threads), r, R = game.nrolls
    cdef int64_t s
    cdef int32_t c
    cdef double acc, tm
    cdef const int32_t* P = &policy[0, 0]
    cdef const double* X = &x[0]
    cdef int64_t ahead = PREFETCH_POLICY
    with nogil:
        for s in prange(game.total, schedule="static", chunksize=65536, num_threads=nt):
            if s + ahead < game.total:
                for r in range(R):
                    fetch_value(P[(s + ahead) * R + r], X)
            acc = 0.0
            for r in range(R):
                c = P[s * R + r]
                if c >= 0:
                    tm = discount * x[c]
                elif c == SG_WIN:
                    tm = 1.0 if constants else 0.0
                elif c == SG_LOSS or c == SG_NOCODE:
                    tm = -1.0 if (constants and c == SG_LOSS) else 0.0
                else:
                    tm = -(discount * x[-(<int64_t> c) - 1])
                acc = acc + game.roll_p[r] * tm
            out[s] = (x[s] - acc) if minus else acc


def endless_pass(StochasticGame game, const real[::1] V, uint8_t[::1] good, double eps, int threads=1,
                 bint first=False, int64_t start=0, int64_t stop=-1, bint hint=True,
                 const int64_t[::1] offsets=None, const uint8_t[:, ::1] counts=None,
                 const int32_t[::1] codes=None, int ahead=PREFETCH_GRAPH):
    """One in-place pass of the attractor of the finished games; returns the states it added.

    ``good`` marks the states from which the game can be brought to an end (with positive
    probability) against any resistance, given ``V``. The side ahead (V > eps for the mover) may
    use only actions within ``eps`` of its best, since any other gives value up; the side behind
    may use every action, since endless play (0) is better for it. ``first`` also marks the
    finished states and those worth at most ``eps`` either way. Repeat until a pass adds nothing:
    states left unmarked with |V| > eps claim an advantage only endless play could keep.
    ``start``/``stop``: mark only those ranks (a distributed worker's range). ``hint`` as in
    ``sweep``: the generator asks the cache for the values its codes will read. ``offsets``,
    ``counts``, ``codes``: read the outcomes from this stored graph, as ``sweep`` does; ``ahead``:
    there, prefetch what the state this many ranks on will read, if it is not marked yet."""
    game.ready()
    check_ahead(ahead)
    cdef bint from_graph = stored_graph(game, offsets, counts, codes)
    if V.shape[0] != game.total or good.shape[0] != game.total:
        raise ValueError("value or mark array does not fit the state space")
    stop = check_range(game, V.shape[0], start, stop, 1.0)
    cdef int nt = max(1, threads), t
    cdef int64_t* added = <int64_t*> malloc(nt * 8 * sizeof(int64_t))
    cdef int64_t total_added = 0
    cdef const real* Vp = &V[0]
    cdef real e = <real> eps
    cdef Generated gen
    cdef Stored st
    gen.outs = NULL
    for t in range(nt):
        added[t * 8] = 0
    try:
        if from_graph:
            stored_from(&st, game, offsets, counts, codes)
            with nogil:
                endless_loop(game, &st, Vp, &good[0], e, first, start, stop, ahead, nt, added)
        else:
            gen.outs = new_outcomes(nt)
            if hint:
                hint_values(gen.outs, nt, Vp, sizeof(real))
            with nogil:
                endless_loop(game, &gen, Vp, &good[0], e, first, start, stop, 0, nt, added)
        for t in range(nt):
            total_added += added[t * 8]
        return total_added
    finally:
        free(gen.outs)
        free(added)


cdef void endless_loop(StochasticGame game, source_t* src, const real* Vp, uint8_t* Gd, real e, bint first,
                       int64_t start, int64_t stop, int64_t ahead, int nt, int64_t* added) noexcept nogil:
    """``endless_pass``'s loop over one outcome source (``ahead``: the stored graph's prefetch)."""
    cdef int64_t s, y, k, x
    cdef int tid, G = game.ngroups
    cdef real v
    for s in prange(start, stop, schedule="dynamic", chunksize=4096, num_threads=nt):
        if source_t is Stored:
            y = s + ahead
            if ahead and y < stop and not Gd[y]:
                for k in range(src.F[y], src.F[y + 1]):
                    fetch_value(src.C[k], Vp)
                    x = target(src.C[k])
                    if x >= 0:
                        __builtin_prefetch(Gd + x)
        if Gd[s]:
            continue
        tid = threadid()
        load(game, src, s, tid)
        v = Vp[s]
        if first and (finished_at(src, s, tid, G) or absval(v) <= e):
            Gd[s] = 1
            added[tid * 8] += 1
        elif reaches_at(game, src, s, tid, Vp, v, Gd, e):
            Gd[s] = 1
            added[tid * 8] += 1


# ---- certified bounds -------------------------------------------------------------------------
#
# Two arrays, L <= V* <= U, swept together: one generation of a state's outcomes serves both.
# The mover's lower bound takes, for each roll, the best of its outcomes counted pessimistically
# (L of a state where it moves again, -U of one where the other side moves), the upper bound the
# best counted optimistically. The Bellman operator is monotone, so a backup of bounds is a bound,
# whatever order the states are visited in and whether a neighbour's bound is old or new.
#
# Rounding never carries a bound across the value: each backup is summed with its exact rounding
# errors (products by fma, sums by Knuth's two-sum), so where every step was exact (as in a region
# of equal values, with Ur's dice in sixteenths) the stored bound is the exact backup, and
# elsewhere it is rounded outward past the errors' own bound. A bound only ever moves outward when
# asked to (``loosen``) and inward otherwise.

ctypedef struct Sum:
    double s    # the float64 sum
    double e    # the sum of the exact rounding errors, in float64
    double a    # the sum of their magnitudes (bounds e's own rounding)


cdef inline void add_term(Sum* t, double p, double v) noexcept nogil:
    cdef double q = p * v
    cdef double qe = fma(p, v, -q)
    cdef double x = t.s + q
    cdef double z = x - t.s
    cdef double se = (t.s - (x - z)) + (q - z)
    t.s = x
    t.e += qe + se
    t.a += fabs(qe) + fabs(se)


cdef inline double sum_down(Sum* t) noexcept nogil:
    """A float64 number at most the exact sum."""
    if t.e == 0.0 and t.a == 0.0:
        return t.s
    cdef double x = (t.s + t.e) - t.a * 1.5e-14  # e's own error is below a * 64 * 2**-53
    return nextafter(nextafter(x, -INFINITY), -INFINITY)


cdef inline double sum_up(Sum* t) noexcept nogil:
    if t.e == 0.0 and t.a == 0.0:
        return t.s
    cdef double x = (t.s + t.e) + t.a * 1.5e-14
    return nextafter(nextafter(x, INFINITY), INFINITY)


cdef inline float down_f(double x) noexcept nogil:
    """The largest float32 at most x (and at least -1)."""
    if x <= -1.0:
        return -1.0
    cdef float r = <float> x
    if <double> r > x:
        r = nextafterf(r, -INFINITY)
    return r


cdef inline float up_f(double x) noexcept nogil:
    if x >= 1.0:
        return 1.0
    cdef float r = <float> x
    if <double> r < x:
        r = nextafterf(r, INFINITY)
    return r


cdef inline double clamp(double x) noexcept nogil:
    return -1.0 if x < -1.0 else (1.0 if x > 1.0 else x)


cdef inline double low_term(int32_t cc, const real* L, const real* U) noexcept nogil:
    """Outcome ``cc`` counted pessimistically for the side that chose it."""
    if cc >= 0:
        return L[cc]
    if cc == SG_WIN:
        return 1.0
    if cc == SG_LOSS:
        return -1.0
    if cc == SG_NOCODE:  # no action and no pass: the game ends 0
        return 0.0
    return -(<double> U[-(<int64_t> cc) - 1])


cdef void bounds_backup(StochasticGame game, const int32_t* c, const count_t* cnt, const real* L,
                        const real* U, double* lo, double* hi, const int32_t* pol) noexcept nogil:
    """The Bellman backup of the bounds (L, U) at one state: lo[0] at most the exact pessimistic
    backup, hi[0] at least the exact optimistic one. With ``pol`` (a code per roll) the
    pessimistic backup takes the policy's action instead of the best."""
    cdef int G = game.ngroups, k, i, r
    cdef double bl[32]
    cdef double bh[32]
    cdef double a, b, vl, vh
    cdef Sum sl, sh
    cdef uint32_t mask
    if finished(G, c, cnt):
        lo[0] = hi[0] = 1.0 if c[0] == SG_WIN else -1.0
        return
    sl.s = sl.e = sl.a = 0.0
    sh.s = sh.e = sh.a = 0.0
    for k in range(G):  # each group's best, counted optimistically (and pessimistically without a policy)
        vl = -2.0
        vh = -2.0
        for i in range(cnt[k]):
            b = low_term(c[i], U, L)  # the optimistic count: the pessimistic one with the bounds' roles swapped
            if b > vh:
                vh = b
            if pol == NULL:
                a = low_term(c[i], L, U)
                if a > vl:
                    vl = a
        bl[k] = vl
        bh[k] = vh
        c += cnt[k]
    for r in range(game.nrolls):
        vl = -2.0
        vh = -2.0
        mask = game.roll_groups[r]
        while mask:
            k = __builtin_ctz(mask)
            mask &= mask - 1
            if bl[k] > vl:
                vl = bl[k]
            if bh[k] > vh:
                vh = bh[k]
        if vh < -1.5:  # the pass, or (no pass either) the game ending 0
            vl = bl[G - 1] if bl[G - 1] > -1.5 else 0.0
            vh = bh[G - 1] if bh[G - 1] > -1.5 else 0.0
        if pol != NULL:
            vl = low_term(pol[r], L, U)
        add_term(&sl, game.roll_p[r], vl)
        add_term(&sh, game.roll_p[r], vh)
    lo[0] = sum_down(&sl)
    hi[0] = sum_up(&sh)


cdef inline void bounds_backup_at(StochasticGame game, const source_t* src, int64_t s, int tid, const real* L,
                                  const real* U, double* lo, double* hi, const int32_t* pol) noexcept nogil:
    if source_t is Stored:
        bounds_backup(game, src.C + src.F[s], src.N + s * src.G, L, U, lo, hi, pol)
    else:
        bounds_backup(game, src.outs[tid].codes, src.outs[tid].counts, L, U, lo, hi, pol)


cdef inline bint tighten(real* L, real* U, int64_t s, double lo, double hi, bint loosen, real* gap,
                         real* moved, double grid) noexcept nogil:
    """Store the outward-rounded backup (lo, hi) where it tightens the bounds (``loosen``: where
    it loosens them) and keep the range's largest gap and move; returns whether a bound moved.
    ``grid`` (float64 bounds only; 0 for none): round outward to multiples of 1 / grid instead."""
    cdef real a, b, d
    cdef bint changed = 0
    if real is float:
        a = down_f(lo)
        b = up_f(hi)
    elif grid > 0.0:
        a = clamp(floor(lo * grid) / grid)
        b = clamp(ceil(hi * grid) / grid)
    else:
        a = clamp(lo)
        b = clamp(hi)
    if (a < L[s]) if loosen else (a > L[s]):
        d = absval(a - L[s])
        if d > moved[0]:
            moved[0] = d
        L[s] = a
        changed = 1
    if (b > U[s]) if loosen else (b < U[s]):
        d = absval(U[s] - b)
        if d > moved[0]:
            moved[0] = d
        U[s] = b
        changed = 1
    if U[s] - L[s] > gap[0]:
        gap[0] = U[s] - L[s]
    return changed


cdef check_bounds(StochasticGame game, Py_ssize_t nl, Py_ssize_t nu):
    if nl != game.total or nu != game.total:
        raise ValueError(f"bound arrays must have {game.total} entries each")


cdef void read_from(StochasticGame game, const real[::1] L_from, const real[::1] U_from, const real* L,
                    const real* U, const real** Lr, const real** Ur) except *:
    """Where a bounds sweep reads (Lr, Ur): ``L_from`` and ``U_from`` when a Jacobi sweep gives
    them, else the bounds it writes (L, U)."""
    if (L_from is None) != (U_from is None):
        raise ValueError("L_from and U_from go together: give both or neither")
    if L_from is None:
        Lr[0], Ur[0] = L, U
        return
    check_bounds(game, L_from.shape[0], U_from.shape[0])
    Lr[0], Ur[0] = &L_from[0], &U_from[0]


def bounds_sweep(StochasticGame game, real[::1] L, real[::1] U, int threads=1, int64_t start=0,
                 int64_t stop=-1, bint backwards=False, bint loosen=False, int32_t[:, ::1] policy=None,
                 const int64_t[::1] subset=None, uint8_t[::1] mark=None, double grid=0.0,
                 const real[::1] L_from=None, const real[::1] U_from=None, const int64_t[::1] offsets=None,
                 const uint8_t[:, ::1] counts=None, const int32_t[::1] codes=None, int ahead=PREFETCH_GRAPH):
    """One Gauss-Seidel sweep of the bounds over ranks start..stop-1, generating every state's
    outcomes; returns (the largest gap U - L, the largest move) over the range.

    Tightening (the default) raises L and lowers U to their backups where that tightens them:
    from a consistent pair (L <= backup of L, U >= backup of U at every state, as -1 and +1 are)
    the pair stays consistent. ``loosen`` lowers L and raises U to their backups where that
    loosens them: repeated until nothing moves, it turns any pair into a consistent one.
    ``policy`` (a code per state and roll): L counts the policy's action, not the best (the
    bound the policy guarantees). ``subset``: only these ranks (increasing; visited in that
    order, or backwards), instead of start..stop-1. ``mark``: set to 1 where a bound moved.
    ``grid`` (float64 bounds): store multiples of 1 / grid (a power of two, so that with dice in
    sixteenths every backup of such bounds is exact and a cycle that play never leaves settles
    instead of creeping by an ulp a sweep), rounded outward. ``L_from``, ``U_from`` (both or
    neither, equal to L and U when the sweep starts): the backups read these and the sweep writes
    L and U, a Jacobi sweep instead of a Gauss-Seidel one, so what it computes depends neither on
    the order of the states nor on the threads' timing (after a subset sweep, copy the subset's
    new bounds into them before the next). ``offsets``, ``counts``, ``codes``: read the outcomes
    from this stored graph, as ``sweep`` does; ``ahead``: there, prefetch the bounds that the state
    this many places on in the sweep's order (of ``subset``'s states, where given) will read."""
    game.ready()
    check_ahead(ahead)
    cdef bint from_graph = stored_graph(game, offsets, counts, codes)
    check_bounds(game, L.shape[0], U.shape[0])
    stop = check_range(game, L.shape[0], start, stop, 1.0)
    cdef const real* Lr
    cdef const real* Ur
    read_from(game, L_from, U_from, &L[0], &U[0], &Lr, &Ur)
    cdef int64_t m = check_subset(game, subset, mark)
    cdef const int64_t* S = &subset[0] if m else NULL
    cdef uint8_t* Mk = &mark[0] if mark is not None else NULL
    if subset is not None:
        start, stop = 0, m
    cdef const int32_t* P = policy_rows(game, policy)
    cdef int nt = max(1, threads), t
    cdef real* stats = <real*> malloc(nt * 16 * sizeof(real))
    # per thread: a variable passed by address is not made private by prange
    cdef double* lohi = <double*> malloc(nt * 8 * sizeof(double))
    cdef Generated gen
    cdef Stored st
    gen.outs = NULL
    for t in range(nt):
        stats[t * 16] = 0.0
        stats[t * 16 + 1] = 0.0
    try:
        if from_graph:
            stored_from(&st, game, offsets, counts, codes)
            with nogil:
                bounds_loop(game, &st, &L[0], &U[0], Lr, Ur, start, stop, backwards, loosen, S, P, Mk, grid, nt,
                            stats, lohi, ahead)
        else:
            gen.outs = new_outcomes(nt)
            with nogil:
                bounds_loop(game, &gen, &L[0], &U[0], Lr, Ur, start, stop, backwards, loosen, S, P, Mk, grid, nt,
                            stats, lohi, 0)
        return largest(stats, nt), largest(stats + 1, nt)
    finally:
        free(gen.outs)
        free(stats)
        free(lohi)


cdef void bounds_loop(StochasticGame game, source_t* src, real* Lp, real* Up, const real* Lr, const real* Ur,
                      int64_t start, int64_t stop, bint backwards, bint loosen, const int64_t* S, const int32_t* P,
                      uint8_t* Mk, double grid, int nt, real* stats, double* lohi, int64_t ahead) noexcept nogil:
    """``bounds_sweep``'s loop over one outcome source (``ahead``: the stored graph's prefetch)."""
    cdef int64_t s, i, j, y, k
    cdef int tid, R = game.nrolls
    for i in prange(start, stop, schedule="dynamic", chunksize=4096, num_threads=nt):
        s = (stop - 1 - (i - start)) if backwards else i
        if S != NULL:
            s = S[s]
        if source_t is Stored:
            j = i + ahead
            if ahead and j < stop:
                y = (stop - 1 - (j - start)) if backwards else j
                if S != NULL:
                    y = S[y]
                for k in range(src.F[y], src.F[y + 1]):
                    fetch_value(src.C[k], Lr)
                    fetch_value(src.C[k], Ur)
        tid = threadid()
        load(game, src, s, tid)
        bounds_backup_at(game, src, s, tid, Lr, Ur, &lohi[tid * 8], &lohi[tid * 8 + 1],
                         (P + s * R) if P != NULL else NULL)
        if tighten(Lp, Up, s, lohi[tid * 8], lohi[tid * 8 + 1], loosen, &stats[tid * 16],
                   &stats[tid * 16 + 1], grid) and Mk != NULL:
            Mk[s] = 1


# ---- the certificate's strategy: progress toward the end among near-best actions ---------------
#
# Nodes are (state, side): RP[s] for the certified side to move in s, RQ[s] for its opponent. A
# pass removes the nodes from which play can be made to leave the set: a node of the certified
# side when, for some roll, one of its near-best actions ends the game or leads to a node removed
# already; an opponent's node when, for some roll, every action does. A removed node's rank is
# larger than the rank of every node that gave it a reason to leave (0: never removed). Passes
# repeat until one removes nothing: what stays holds every place where play can last for ever
# against the strategy that, at a removed node, takes for each roll a near-best action towards a
# smaller rank.
#
# A pass splits the states into one contiguous block per thread and visits each block in order.
# Within a pass a node counts as removed when an earlier pass removed it, or when its own block
# did (earlier in this pass, so with a smaller rank: ranks in a pass count up from the last
# rank given before it, one counter per block). What another block removes in the same pass is
# ignored until the next one, so the ranks depend on the thread count but never on the threads'
# timing: the same values give the same strategy and the same certificate, run after run.

cdef inline double value_term(int32_t cc, const real* V) noexcept nogil:
    return low_term(cc, V, V)


cdef inline int leaves_now(int32_t cc, const int32_t* Rsame, const int32_t* Rother, int32_t old,
                            int64_t lo, int64_t hi) noexcept nogil:
    """1 when outcome ``cc`` ends the game or leads to a node that counts as removed in this
    ranking pass: by an earlier pass (a rank up to ``old``) or by this block (states ``lo`` to
    ``hi``) earlier in this one. With an empty block, 1 for a rank up to ``old`` alone."""
    cdef int32_t r
    cdef int64_t t
    if cc == SG_WIN or cc == SG_LOSS or cc == SG_NOCODE:
        return 1
    if cc >= 0:
        t = cc
        r = Rsame[t]
    else:
        t = -(<int64_t> cc) - 1
        r = Rother[t]
    if r <= 0:
        return 0
    return 1 if r <= old or lo <= t < hi else 0


cdef int roll_codes(StochasticGame game, const int32_t* c, const count_t* cnt, int r, const int32_t** start,
                    int32_t* out) noexcept nogil:
    """The codes roll ``r`` offers (its pass when it has none) into ``out``; returns how many."""
    cdef int G = game.ngroups, k, i, n = 0
    cdef uint32_t mask = game.roll_groups[r]
    cdef int any_ = 0
    for k in range(G - 1):
        if (mask >> k & 1) and cnt[k]:
            any_ = 1
    if not any_:
        mask = (<uint32_t> 1) << (G - 1)
    for k in range(G):
        if mask >> k & 1:
            for i in range(cnt[k]):
                out[n] = start[k][i]
                n += 1
    return n


cdef inline uint32_t roll_mask(StochasticGame game, const count_t* cnt, int r) noexcept nogil:
    """The groups roll ``r`` reads (``roll_codes``): its own, or the pass when those are empty."""
    cdef int G = game.ngroups, k
    cdef uint32_t mask = game.roll_groups[r]
    for k in range(G - 1):
        if (mask >> k & 1) and cnt[k]:
            return mask
    return (<uint32_t> 1) << (G - 1)


cdef int rank_state(StochasticGame game, const int32_t* c, const count_t* cnt, const real* V, double eps,
                    int64_t s, int32_t* RP, int32_t* RQ, int32_t old, int64_t lo, int64_t hi,
                    int32_t* counter, const int32_t* pol, int32_t* buf, const uint8_t* allow) noexcept nogil:
    """One state's nodes in a ranking pass. Rolls share outcome groups, so each group's figures
    are found once, when a roll first needs them: its best value, the best value among its codes
    that leave (only codes within eps of the group's best can be within eps of a roll's best),
    and whether every code leaves; a roll then combines its groups' figures. ``old``, ``lo``,
    ``hi``: what counts as removed (``leaves_now``); ``counter``: the block's last rank given;
    ``allow`` (NULL: every state): the states whose certified side's node may be removed."""
    cdef int G = game.ngroups, g, i, r, removed = 0, out_p = 0, out_q = 0, all_leave, any_code
    cdef const int32_t* start[32]
    cdef double gbest[32]
    cdef double gleave[32]
    cdef int gall[32]  # -1: not found yet
    cdef uint32_t known = 0, mask
    cdef double best, lbest, w, top
    cdef int32_t code
    cdef bint need_p = RP[s] == 0 and (allow == NULL or allow[s] != 0), need_q = RQ[s] == 0
    group_starts(G, c, cnt, start)
    for g in range(G):
        gall[g] = -1
    for r in range(game.nrolls):
        if (out_p or not need_p) and (out_q or not need_q):
            break
        mask = roll_mask(game, cnt, r)
        any_code = 0
        for g in range(G):
            if (mask >> g & 1) and cnt[g]:
                any_code = 1
                break
        if need_p and not out_p:
            if pol != NULL:
                out_p = leaves_now(pol[r], RP, RQ, old, lo, hi)
            elif not any_code:  # nothing to do and no pass: the game ends
                out_p = 1
            else:
                best = -2.0
                lbest = -3.0
                for g in range(G):
                    if not (mask >> g & 1) or not cnt[g]:
                        continue
                    if not (known >> g & 1):
                        top = -2.0
                        for i in range(cnt[g]):
                            w = value_term(start[g][i], V)
                            if w > top:
                                top = w
                        gbest[g] = top
                        gleave[g] = -3.0
                        for i in range(cnt[g]):
                            code = start[g][i]
                            w = value_term(code, V)
                            if w >= top - eps and w > gleave[g] and leaves_now(code, RP, RQ, old, lo, hi):
                                gleave[g] = w
                        known |= (<uint32_t> 1) << g
                    if gbest[g] > best:
                        best = gbest[g]
                    if gleave[g] > lbest:
                        lbest = gleave[g]
                # lbest stays below -2.5 when no near-best action leaves: a wide slack must not pass it
                out_p = lbest > -2.5 and lbest >= best - eps
        if need_q and not out_q:
            all_leave = 1
            for g in range(G):
                if not (mask >> g & 1) or not cnt[g]:
                    continue
                if gall[g] < 0:
                    gall[g] = 1
                    for i in range(cnt[g]):
                        if not leaves_now(start[g][i], RQ, RP, old, lo, hi):
                            gall[g] = 0
                            break
                if not gall[g]:
                    all_leave = 0
                    break
            out_q = all_leave
    if out_p and RP[s] == 0:
        counter[0] += 1
        RP[s] = counter[0]
        removed += 1
    if out_q and RQ[s] == 0:
        counter[0] += 1
        RQ[s] = counter[0]
        removed += 1
    return removed


def rank_pass(StochasticGame game, const real[::1] V, double eps, int32_t[::1] RP, int32_t[::1] RQ,
              int32_t[::1] counter, int threads=1, int32_t[:, ::1] policy=None, bint backwards=False,
              const int64_t[::1] offsets=None, const uint8_t[:, ::1] counts=None, const int32_t[::1] codes=None,
              int blocks=0, const uint8_t[::1] allow=None, int ahead=PREFETCH_GRAPH):
    """One pass of the ranking above, in place; returns how many nodes it removed. ``counter``
    (one entry, 0 before the first pass) holds the last rank given. ``V``: the values that say
    which actions are near-best (within ``eps``); with ``policy`` the certified side's action is
    the policy's instead. ``backwards`` visits each block from its top; ``offsets``, ``counts``,
    ``codes``: a stored graph to read the outcomes from instead of generating them. ``blocks``:
    how many blocks (default: one a thread); the ranks depend on it but not on the threads or
    their timing. ``allow`` (a byte a state; None: every state): only where it is set may the
    certified side's node be removed. ``ahead``: with a stored graph, prefetch what the state
    this many places on in its block will read, if it is not ranked yet (0: none)."""
    check_ahead(ahead)
    cdef bint stored = codes is not None
    if stored:
        check_graph(game, offsets, counts, codes)
    game.ready()
    if V.shape[0] != game.total or RP.shape[0] != game.total or RQ.shape[0] != game.total:
        raise ValueError("value or rank array does not fit the state space")
    if counter.shape[0] != 1 or 2 * game.total >= 2147483647:
        raise ValueError("one counter, and fewer than 2**30 states")
    cdef const int32_t* P = policy_rows(game, policy)
    cdef int64_t n = game.total
    if allow is not None and allow.shape[0] != n:
        raise ValueError(f"allow has {allow.shape[0]} entries; expected one a state ({n})")
    cdef const uint8_t* Al = &allow[0] if allow is not None else NULL
    cdef int nt = <int> max(1, min(threads, n)), b, R = game.nrolls, tid
    cdef int nb = <int> max(1, min(blocks if blocks > 0 else nt, n))
    cdef int32_t old = counter[0]
    # per block: removed, last rank given (a cache line apart)
    cdef int64_t* removed = <int64_t*> malloc(nb * 8 * sizeof(int64_t))
    cdef int32_t* last = <int32_t*> malloc(nb * 16 * sizeof(int32_t))
    cdef Outcomes* outs = new_outcomes(nt)
    cdef int32_t* bufs = <int32_t*> malloc(nt * SG_MAX_OUTCOMES * sizeof(int32_t))
    cdef int64_t s, j, lo, hi, y, k, x
    cdef const real* Vp = &V[0]
    cdef int32_t* A = &RP[0]
    cdef int32_t* B = &RQ[0]
    cdef const int32_t* C = &codes[0] if stored else NULL
    cdef const uint8_t* N = &counts[0, 0] if stored else NULL
    cdef const int64_t* F = &offsets[0] if stored else NULL
    cdef int G = game.ngroups
    cdef int32_t top = old
    for b in range(nb):
        removed[b * 8] = 0
        last[b * 16] = old
    try:
        with nogil:
            for b in prange(nb, schedule="dynamic", chunksize=1, num_threads=nt):
                tid = threadid()
                lo = n * b // nb
                hi = n * (b + 1) // nb
                for j in range(hi - lo):
                    s = (hi - 1 - j) if backwards else (lo + j)
                    if stored and ahead and j + ahead < hi - lo:
                        y = (hi - 1 - (j + ahead)) if backwards else (lo + j + ahead)
                        if not (A[y] and B[y]):
                            for k in range(F[y], F[y + 1]):
                                fetch_value(C[k], Vp)
                                x = target(C[k])
                                if x >= 0:
                                    __builtin_prefetch(A + x)
                                    __builtin_prefetch(B + x)
                    if A[s] and B[s]:
                        continue
                    if stored:
                        removed[b * 8] += rank_state(game, C + F[s], N + s * G, Vp, eps, s, A, B, old, lo, hi,
                                                     last + b * 16, (P + s * R) if P != NULL else NULL,
                                                     bufs + tid * SG_MAX_OUTCOMES, Al)
                    else:
                        game.generate(s, &outs[tid])
                        removed[b * 8] += rank_state(game, outs[tid].codes, outs[tid].counts, Vp, eps, s, A, B, old,
                                                     lo, hi, last + b * 16, (P + s * R) if P != NULL else NULL,
                                                     bufs + tid * SG_MAX_OUTCOMES, Al)
        for b in range(nb):
            if last[b * 16] > top:
                top = last[b * 16]
        counter[0] = top
        return summed(removed, nb)
    finally:
        free(outs)
        free(bufs)
        free(removed)
        free(last)


cdef void policy_state(StochasticGame game, const int32_t* c, const count_t* cnt, const real* V, double eps,
                       const int32_t* A, const int32_t* B, int64_t s, int32_t* out, int32_t* buf,
                       bint every) noexcept nogil:
    """``attractor_policy`` for one state: its code per roll into ``out``."""
    cdef int G = game.ngroups, r, i, n, pick = -1
    cdef const int32_t* start[32]
    cdef int32_t code, leave, pick_code = SG_NOCODE
    cdef double best, w, lbest, loss, least = 1e300
    cdef bint free_ = 0
    group_starts(G, c, cnt, start)
    for r in range(game.nrolls):
        n = roll_codes(game, c, cnt, r, start, buf)
        if n == 0:  # the game ends on this roll
            out[r] = SG_NOCODE
            free_ = 1
            continue
        best = -2.0
        code = buf[0]
        for i in range(n):
            w = value_term(buf[i], V)
            if w > best:
                best = w
                code = buf[i]
        if A[s] > 0:
            lbest = -3.0
            leave = SG_NOCODE
            for i in range(n):
                w = value_term(buf[i], V)
                # towards a smaller rank than this node's
                if w >= best - eps and leaves_now(buf[i], A, B, A[s] - 1, 0, 0) and w > lbest:
                    lbest = w
                    leave = buf[i]
            if lbest >= best or (every and lbest > -2.5):  # a best action leads on: it costs nothing
                code = leave
                free_ = 1
            elif lbest > -2.5:  # one that costs: the roll where it costs least, below
                loss = game.roll_p[r] * (best - lbest)
                if loss < least:
                    least = loss
                    pick = r
                    pick_code = leave
        out[r] = code
    if not free_ and pick >= 0:
        out[pick] = pick_code


def attractor_policy(StochasticGame game, const real[::1] V, double eps, const int32_t[::1] RP,
                     const int32_t[::1] RQ, int32_t[:, ::1] policy, int threads=1,
                     const int64_t[::1] offsets=None, const uint8_t[:, ::1] counts=None, const int32_t[::1] codes=None, bint every=False):
    """The certified side's strategy from the ranks: the best action by ``V`` for every roll,
    except that a removed node must lead on with some chance. Where a roll's best action already
    ends the game or leads to a smaller rank (a roll with no action ends it), the node does so at
    no cost, and takes such a best action on every roll that has one. Otherwise, of the rolls
    with a near-best (within ``eps``) action that leads on, the one where that costs least
    (probability times the value given up; the first on a tie) takes its best such action, and
    the other rolls their best. One roll is enough: in a set that play under the strategy never
    leaves, the node of smallest rank would lead out of it. (Taking the leading action on every
    roll that has one, as before, gave up up to ``eps`` a move all through play: the widest proven
    interval on four pieces came out 6.7e-6 where this gives 4.0e-6.) ``every``: that older rule,
    a near-best leading action on every roll that has one (play ends sooner: ``certify`` falls
    back on it where the pair's equations do not solve). ``offsets``, ``counts``, ``codes``: a
    stored graph."""
    game.ready()
    if V.shape[0] != game.total or RP.shape[0] != game.total or RQ.shape[0] != game.total:
        raise ValueError("value or rank array does not fit the state space")
    cdef bint stored = codes is not None
    if stored:
        check_graph(game, offsets, counts, codes)
    cdef int32_t* P = policy_rows(game, policy)
    cdef int nt = max(1, threads), tid, R = game.nrolls, G = game.ngroups
    cdef Outcomes* outs = new_outcomes(nt)
    cdef int32_t* bufs = <int32_t*> malloc(nt * SG_MAX_OUTCOMES * sizeof(int32_t))
    cdef int64_t s
    cdef const real* Vp = &V[0]
    cdef const int32_t* A = &RP[0]
    cdef const int32_t* B = &RQ[0]
    cdef const int32_t* C = &codes[0] if stored else NULL
    cdef const uint8_t* N = &counts[0, 0] if stored else NULL
    cdef const int64_t* F = &offsets[0] if stored else NULL
    try:
        with nogil:
            for s in prange(game.total, schedule="dynamic", chunksize=4096, num_threads=nt):
                tid = threadid()
                if stored:
                    policy_state(game, C + F[s], N + s * G, Vp, eps, A, B, s, P + s * R,
                                 bufs + tid * SG_MAX_OUTCOMES, every)
                else:
                    game.generate(s, &outs[tid])
                    policy_state(game, outs[tid].codes, outs[tid].counts, Vp, eps, A, B, s, P + s * R,
                                 bufs + tid * SG_MAX_OUTCOMES, every)
    finally:
        free(outs)
        free(bufs)


# ---- the stored outcome graph ----------------------------------------------------------------
#
# Every state's outcome codes, ranked once: ``offsets[s]`` is the first code of state s,
# ``counts[s, g]`` the codes of its group g (at most 255). Inside a group the codes are sorted
# and distinct; a code is left out of group g when an earlier group h holds it and every roll
# that may use g may use h too (the backup's maxima, and each roll's outcome set, are unchanged).

cdef uint32_t implied_groups(StochasticGame game, int g) noexcept nogil:
    """The earlier groups that every roll using group ``g`` uses too (none for the pass)."""
    cdef uint32_t m = ((<uint32_t> 1) << g) - 1
    cdef int r, used = 0
    if g == game.ngroups - 1:
        return 0
    for r in range(game.nrolls):
        if game.roll_groups[r] >> g & 1:
            m &= game.roll_groups[r]
            used = 1
    return m if used else 0


cdef int compact(StochasticGame game, Outcomes* o, int32_t* out, int* counts, const uint32_t* implied) noexcept nogil:
    """The outcomes in ``o`` as stored: each group sorted and distinct, without the codes an
    implied earlier group holds; returns how many codes ``out`` received."""
    cdef int G = game.ngroups, k, h, i, j, x, n = 0, m, at = 0
    cdef int first[32]
    cdef int32_t cc
    cdef bint seen
    for k in range(G):
        first[k] = n
        m = 0
        for i in range(o.counts[k]):
            cc = o.codes[at + i]
            j = m  # insertion sort into out[first..], dropping duplicates
            while j > 0 and out[first[k] + j - 1] > cc:
                j -= 1
            if j > 0 and out[first[k] + j - 1] == cc:
                continue
            seen = 0
            for h in range(k):
                if implied[k] >> h & 1:
                    for x in range(counts[h]):
                        if out[first[h] + x] == cc:
                            seen = 1
                            break
                if seen:
                    break
            if seen:
                continue
            x = m
            while x > j:
                out[first[k] + x] = out[first[k] + x - 1]
                x -= 1
            out[first[k] + j] = cc
            m += 1
        at += o.counts[k]
        counts[k] = m
        n += m
    return n


cdef struct Build:
    # a graph build's per-thread work space: outcomes, their compacted codes, group sizes, and
    # the largest group seen (a cache line apart); and which groups each group's codes imply
    Outcomes* outs
    int32_t* scratch
    int* cnt
    int* top
    int nt
    uint32_t implied[32]


cdef Build new_build(StochasticGame game, int nt):
    cdef Build w
    cdef int g, t
    for g in range(game.ngroups):
        w.implied[g] = implied_groups(game, g)
    w.nt = nt
    w.outs = new_outcomes(nt)
    w.scratch = <int32_t*> malloc(nt * SG_MAX_OUTCOMES * sizeof(int32_t))
    w.cnt = <int*> malloc(nt * 64 * sizeof(int))
    w.top = <int*> malloc(nt * 16 * sizeof(int))
    for t in range(nt):
        w.top[t * 16] = 0
    return w


cdef inline int build_state(StochasticGame game, Build* w, int tid, int64_t s) noexcept nogil:
    """State ``s``'s stored codes into the thread's scratch; returns how many."""
    game.generate(s, &w.outs[tid])
    return compact(game, &w.outs[tid], w.scratch + tid * SG_MAX_OUTCOMES, w.cnt + tid * 64, w.implied)


cdef inline void keep_counts(Build* w, int G, int tid, uint8_t* row) noexcept nogil:
    """The thread's last state's group sizes into its row of the graph's counts (at most 255:
    the caller refuses more), and the largest into the thread's top."""
    cdef int g
    cdef const int* cnt = w.cnt + tid * 64
    for g in range(G):
        if cnt[g] > w.top[tid * 16]:
            w.top[tid * 16] = cnt[g]
        row[g] = <uint8_t> min(cnt[g], 255)


cdef int end_build(Build* w) noexcept:
    """Frees the work space; returns the largest group any thread saw."""
    cdef int t, best = 0
    for t in range(w.nt):
        if w.top[t * 16] > best:
            best = w.top[t * 16]
    free(w.outs)
    free(w.scratch)
    free(w.cnt)
    free(w.top)
    return best


def graph_build(StochasticGame game, int64_t[::1] offsets, uint8_t[:, ::1] counts, int32_t[::1] codes,
                int threads=1, int64_t start=0, int64_t stop=-1):
    """The stored graph, in two calls per rank range: with an empty ``codes`` fill ``counts`` and
    return the largest group (above 255 it cannot be stored: the caller checks); with ``codes``
    sized by the cumulative ``offsets``, fill the codes."""
    game.ready()
    cdef int G = game.ngroups, nt = max(1, threads), tid, n
    stop = check_range(game, game.total, start, stop, 1.0)
    if counts.shape[0] != game.total or counts.shape[1] != G or offsets.shape[0] != game.total + 1:
        raise ValueError("offsets or counts do not fit the state space")
    cdef bint fill = codes.shape[0] > 0
    if fill and codes.shape[0] < offsets[game.total]:
        raise ValueError("code array shorter than the offsets say")
    cdef Build w = new_build(game, nt)
    cdef int64_t s, i
    cdef int32_t* C = &codes[0] if fill else NULL
    with nogil:
        for s in prange(start, stop, schedule="dynamic", chunksize=4096, num_threads=nt):
            tid = threadid()
            n = build_state(game, &w, tid, s)
            keep_counts(&w, G, tid, &counts[s, 0])
            if fill:
                for i in range(n):
                    C[offsets[s] + i] = w.scratch[tid * SG_MAX_OUTCOMES + i]
    return end_build(&w)


def graph_build_blocks(StochasticGame game, uint8_t[:, ::1] counts, int32_t[::1] buf, int64_t[::1] used,
                       int threads=1, int64_t start=0, int64_t stop=-1):
    """The stored graph over the ranks ``start..stop-1`` in one pass, for a caller that does not
    know the offsets yet: the range is cut into ``len(used)`` blocks of nearly equal state count,
    block b owns ``buf[b * cap:(b + 1) * cap]`` (cap = ``len(buf) // len(used)``) and writes its
    states' codes there in rank order, as ``graph_build`` would place them, then ``used[b]``:
    how many it wrote, or -1 where they did not fit (that block stops; call again with a larger
    ``buf``). ``counts`` as ``graph_build`` fills them. Returns the largest group (above 255 it
    cannot be stored)."""
    game.ready()
    cdef int G = game.ngroups, nt = max(1, threads), tid, n
    cdef int64_t nb = used.shape[0]
    stop = check_range(game, game.total, start, stop, 1.0)
    if counts.shape[0] != game.total or counts.shape[1] != G:
        raise ValueError("counts do not fit the state space")
    if nb < 1 or buf.shape[0] < nb:
        raise ValueError(f"{nb} blocks and a buffer of {buf.shape[0]} codes: expected at least one block "
                         "and a code a block")
    cdef Build w = new_build(game, nt)
    cdef int64_t s, i, b, lo, hi, at, cap = buf.shape[0] // nb, m = stop - start
    cdef int32_t* C = &buf[0]
    cdef int64_t* U = &used[0]
    with nogil:
        for b in prange(nb, schedule="dynamic", chunksize=1, num_threads=nt):
            tid = threadid()
            lo = start + m * b // nb
            hi = start + m * (b + 1) // nb
            at = 0
            for s in range(lo, hi):
                n = build_state(game, &w, tid, s)
                if at + n > cap:
                    at = -1
                    break
                keep_counts(&w, G, tid, &counts[s, 0])
                for i in range(n):
                    C[b * cap + at + i] = w.scratch[tid * SG_MAX_OUTCOMES + i]
                at = at + n
            U[b] = at
    return end_build(&w)


def graph_codes(StochasticGame game, int64_t rank):
    """How many codes the stored graph keeps for the state ``rank`` (to estimate its size)."""
    check_rank(game, rank)
    cdef Build w = new_build(game, 1)
    cdef int n = build_state(game, &w, 0, rank)
    end_build(&w)
    return n


def graph_sweep(StochasticGame game, offsets, counts, codes, V, int threads=1, int64_t start=0, int64_t stop=-1,
                bint write=True, policy=None, double discount=1.0, int ahead=PREFETCH_GRAPH, subset=None):
    """``sweep`` over the stored graph (``offsets``, ``counts``, ``codes``)."""
    return sweep(game, V, threads, start, stop, write, policy, discount, subset=subset, offsets=offsets,
                 counts=counts, codes=codes, ahead=ahead)


def graph_endless_pass(StochasticGame game, offsets, counts, codes, V, good, double eps, int threads=1,
                       bint first=False, int ahead=PREFETCH_GRAPH):
    """``endless_pass`` over the stored graph (``offsets``, ``counts``, ``codes``)."""
    return endless_pass(game, V, good, eps, threads, first, offsets=offsets, counts=counts, codes=codes,
                        ahead=ahead)


def graph_bounds_sweep(StochasticGame game, offsets, counts, codes, L, U, int threads=1, int64_t start=0,
                       int64_t stop=-1, bint backwards=False, bint loosen=False, policy=None, subset=None,
                       mark=None, double grid=0.0, L_from=None, U_from=None, int ahead=PREFETCH_GRAPH):
    """``bounds_sweep`` over the stored graph (``offsets``, ``counts``, ``codes``)."""
    return bounds_sweep(game, L, U, threads, start, stop, backwards, loosen, policy, subset, mark, grid, L_from,
                        U_from, offsets=offsets, counts=counts, codes=codes, ahead=ahead)


# ---- a fixed strategy against its best response: bounds by policy iteration --------------------
#
# The certified side keeps a strategy ``pol`` (a code per state and roll); its opponent answers
# with ``tau``. Both sides' values sit in one float64 vector X = [L; U] of 2N entries: L[s] is
# the certified side's value when it moves in s, U[s] the opponent's value when the opponent
# moves in s (each from the mover's point of view). For fixed (pol, tau) they solve the linear
# system X = c + A X; ``best_response`` improves tau. Where the opponent can keep play going for
# ever against pol (the trapped nodes), endless play is worth 0: ``pinned`` 2 marks a trapped row
# (a much smaller slack there: a cycle must not gain much by it), 1 a row fixed at 0 (play under
# the pair never ends from it), 0 every other row.

cdef inline int64_t pair_column(int32_t c, int64_t n, bint upper) noexcept nogil:
    """The entry of X = [L; U] that outcome ``c`` (not a win, a loss or NOCODE) of a row of L
    (``upper`` false) or of U reads: the same side moving again reads its own half, the turn
    passing the other half (negated: ``c < 0``)."""
    cdef int64_t t
    if c >= 0:
        return (n + c) if upper else c
    t = -(<int64_t> c) - 1
    return t if upper else n + t


cdef inline double pair_term(int32_t c, const double* X, int64_t n, bint upper, bint constants) noexcept nogil:
    """Outcome ``c`` of a row of L (``upper`` false) or of U, read from X = [L; U]."""
    if c >= 0:
        return X[pair_column(c, n, upper)]
    if c == SG_WIN:
        return 1.0 if constants else 0.0
    if c == SG_LOSS:
        return -1.0 if constants else 0.0
    if c == SG_NOCODE:
        return 0.0
    return -X[pair_column(c, n, upper)]


cdef check_pair(StochasticGame game, int32_t[:, ::1] pol, int32_t[:, ::1] tau, Py_ssize_t npinned,
                Py_ssize_t nx, Py_ssize_t nout):
    policy_rows(game, pol)
    policy_rows(game, tau)
    if npinned != 2 * game.total or nx != 2 * game.total or nout != 2 * game.total:
        raise ValueError(f"pinned marks and vectors must have 2 x {game.total} entries (L then U)")


def pair_apply(StochasticGame game, int32_t[:, ::1] pol, int32_t[:, ::1] tau, const uint8_t[::1] pinned,
               const double[::1] x, double[::1] out, bint constants=False, bint minus=False,
               double slack=0.0, double small=0.0, int threads=1):
    """``out = A x`` for the pair (pol, tau) over X = [L; U] (``c + A x`` with ``constants``,
    ``x - A x`` with ``minus``), float64. ``constants`` adds the wins and losses, and ``slack``
    taken from every row of L and added to every row of U (so that the solution is strictly
    consistent by that much a move) that ``pinned`` marks 0, ``small`` from or to a row marked 2;
    a row marked 1 is 0."""
    game.ready()
    check_pair(game, pol, tau, pinned.shape[0], x.shape[0], out.shape[0])
    cdef int64_t n = game.total, row, s
    cdef int nt = max(1, threads), r, R = game.nrolls
    cdef bint upper
    cdef double acc
    cdef const int32_t* PL = &pol[0, 0]
    cdef const int32_t* PU = &tau[0, 0]
    cdef const int32_t* P
    cdef const double* X = &x[0]
    cdef const uint8_t* Pin = &pinned[0]
    with nogil:
        for row in prange(2 * n, schedule="static", chunksize=65536, num_threads=nt):
            upper = row >= n
            s = row - n if upper else row
            if Pin[row] == 1:
                acc = 0.0
            else:
                P = (PU if upper else PL) + s * R
                acc = 0.0
                for r in range(R):
                    acc = acc + game.roll_p[r] * pair_term(P[r], X, n, upper, constants)
                if constants:
                    acc = acc + ((slack if Pin[row] == 0 else small) if upper else -(slack if Pin[row] == 0 else small))
            out[row] = (X[row] - acc) if minus else acc


cdef inline int pair_row(StochasticGame game, const int32_t* P, int64_t n, bint upper, int32_t* col,
                         double* coef) noexcept nogil:
    """The product's row as distinct columns of X = [L; U] with their summed coefficients, in
    the order the rolls first name them (the wins and losses are constants, not entries)."""
    cdef int r, j, m = 0
    cdef int32_t c
    cdef int64_t t
    cdef double w
    for r in range(game.nrolls):
        c = P[r]
        if c == SG_WIN or c == SG_LOSS or c == SG_NOCODE:
            continue
        t = pair_column(c, n, upper)
        w = game.roll_p[r] if c >= 0 else -game.roll_p[r]
        for j in range(m):
            if col[j] == t:
                coef[j] += w
                break
        else:
            col[m] = <int32_t> t
            coef[m] = w
            m += 1
    return m


def pair_matrix(StochasticGame game, int32_t[:, ::1] pol, int32_t[:, ::1] tau, const uint8_t[::1] pinned,
                int64_t[::1] indptr, int32_t[::1] indices=None, double[::1] data=None, int threads=1):
    """The matrix A of ``pair_apply`` (without its constants) in compressed rows: a row's
    outcomes that name the same entry of X are summed into one coefficient (the rolls of a state
    name about three distinct successors among six), so a product reads half as much. Without
    ``indices``, it writes each row's entry count to ``indptr[row + 1]`` (for a cumulative sum);
    with them, it fills ``indices`` and ``data`` from ``indptr``. Rows ``pinned`` 1 are empty."""
    game.ready()
    check_pair(game, pol, tau, pinned.shape[0], 2 * game.total, 2 * game.total)
    cdef int64_t n = game.total, row, s
    if 2 * n >= 2 ** 31:
        raise ValueError("pair_matrix numbers columns in int32; this game has too many states")
    if indptr.shape[0] != 2 * n + 1:
        raise ValueError(f"indptr must have 2 x {n} + 1 entries")
    cdef bint fill = indices is not None
    if fill and (data is None or indices.shape[0] != indptr[2 * n] or data.shape[0] != indptr[2 * n]):
        raise ValueError("indices and data must have indptr[-1] entries each")
    cdef int nt = max(1, threads), R = game.nrolls, m, j, tid
    cdef bint upper
    # per thread: a C array declared here would be shared by prange's threads
    cdef int32_t* col = <int32_t*> malloc(nt * 32 * sizeof(int32_t))
    cdef double* coef = <double*> malloc(nt * 32 * sizeof(double))
    cdef const int32_t* PL = &pol[0, 0]
    cdef const int32_t* PU = &tau[0, 0]
    cdef const uint8_t* Pin = &pinned[0]
    cdef int64_t* IP = &indptr[0]
    cdef int32_t* I = &indices[0] if fill and indices.shape[0] else NULL
    cdef double* D = &data[0] if fill and data.shape[0] else NULL
    if col == NULL or coef == NULL:
        free(col)
        free(coef)
        raise MemoryError()
    with nogil:
        for row in prange(2 * n, schedule="static", chunksize=65536, num_threads=nt):
            tid = threadid()
            if Pin[row] == 1:
                m = 0
            else:
                upper = row >= n
                s = row - n if upper else row
                m = pair_row(game, (PU if upper else PL) + s * R, n, upper, col + 32 * tid, coef + 32 * tid)
            if not fill:
                IP[row + 1] = m
            else:
                for j in range(m):
                    I[IP[row] + j] = col[32 * tid + j]
                    D[IP[row] + j] = coef[32 * tid + j]
    free(col)
    free(coef)


def sparse_apply(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
                 const double[::1] x, double[::1] out, bint minus=False, int threads=1,
                 int ahead=PREFETCH_MATRIX):
    """``out = A x`` for A in compressed rows (``x - A x`` with ``minus``), float64, each row's
    entries summed in their stored order (so the result never depends on the threads).
    ``ahead``: prefetch the entry of ``x`` that the entry this many on will read (0: none)."""
    check_ahead(ahead)
    cdef int64_t rows = indptr.shape[0] - 1, row, k, a, entries
    if x.shape[0] != rows or out.shape[0] != rows:
        raise ValueError(f"x and out must have {rows} entries")
    if indices.shape[0] < indptr[rows] or data.shape[0] < indptr[rows]:
        raise ValueError("indices and data must have indptr[-1] entries")
    entries = indptr[rows]
    cdef int nt = max(1, threads)
    cdef double acc
    cdef const int64_t* IP = &indptr[0]
    cdef const int32_t* I = &indices[0] if indices.shape[0] else NULL
    cdef const double* D = &data[0] if data.shape[0] else NULL
    cdef const double* X = &x[0] if rows else NULL
    with nogil:
        for row in prange(rows, schedule="static", chunksize=65536, num_threads=nt):
            acc = 0.0
            for k in range(IP[row], IP[row + 1]):
                a = k + ahead
                if ahead and a < entries:
                    __builtin_prefetch(X + I[a])
                acc = acc + D[k] * X[I[k]]
            out[row] = (X[row] - acc) if minus else acc


cdef int respond_state(StochasticGame game, const int32_t* c, const count_t* cnt, const double* X, int64_t n,
                       double tie, int32_t* row, int32_t* buf) noexcept nogil:
    """``best_response`` at one state; returns how many rolls changed their answer. Each group's
    best answer (the first of its best codes) is found once, when a roll first reads the group;
    a roll takes the first of its groups' bests, as a scan of its codes in order would."""
    cdef int G = game.ngroups, g, r, i, changed = 0, any_code
    cdef const int32_t* start[32]
    cdef double gbest[32]
    cdef int32_t gcode[32]
    cdef uint32_t known = 0, mask
    cdef double best, w, keep, top
    cdef int32_t code, cur, pick
    group_starts(G, c, cnt, start)
    for r in range(game.nrolls):
        mask = roll_mask(game, cnt, r)
        any_code = 0
        best = -3.0
        code = SG_NOCODE
        for g in range(G):
            if not (mask >> g & 1) or not cnt[g]:
                continue
            any_code = 1
            if not (known >> g & 1):
                top = -3.0
                pick = start[g][0]
                for i in range(cnt[g]):
                    w = pair_term(start[g][i], X, n, 1, 1)
                    if w > top:
                        top = w
                        pick = start[g][i]
                gbest[g] = top
                gcode[g] = pick
                known |= (<uint32_t> 1) << g
            if gbest[g] > best:
                best = gbest[g]
                code = gcode[g]
        if not any_code:
            if row[r] != SG_NOCODE:
                row[r] = SG_NOCODE
                changed += 1
            continue
        cur = row[r]
        keep = -3.0
        for g in range(G):
            if not (mask >> g & 1):
                continue
            for i in range(cnt[g]):
                if start[g][i] == cur:
                    keep = pair_term(cur, X, n, 1, 1)
                    break
        if keep < best - tie:  # the answer held so far is not among the roll's or is worse
            row[r] = code
            changed += 1
    return changed


def best_response(StochasticGame game, const double[::1] x, int32_t[:, ::1] tau, double tie=0.0,
                  int threads=1, const uint8_t[::1] strict=None, double strict_tie=0.0,
                  const int64_t[::1] offsets=None, const uint8_t[:, ::1] counts=None,
                  const int32_t[::1] codes=None, int ahead=PREFETCH_GRAPH):
    """Improve the opponent's answers ``tau`` in place from X = [L; U]: for each state and roll
    the action best for the opponent by X (the turn passing reads L negated, the opponent moving
    again reads U), kept as it is unless another is better by more than ``tie`` (``strict_tie``
    in the states that ``strict`` marks). Returns how many (state, roll) answers changed.
    ``offsets``, ``counts``, ``codes``: a stored graph; ``ahead``: with one, prefetch what the
    state this many ranks on will read (0: none)."""
    check_ahead(ahead)
    game.ready()
    policy_rows(game, tau)
    if x.shape[0] != 2 * game.total:
        raise ValueError(f"X must have 2 x {game.total} entries (L then U)")
    if strict is not None and strict.shape[0] != game.total:
        raise ValueError(f"strict marks must have {game.total} entries")
    cdef const uint8_t* St = &strict[0] if strict is not None else NULL
    cdef bint stored = codes is not None
    if stored:
        check_graph(game, offsets, counts, codes)
    cdef int nt = max(1, threads), t, tid, R = game.nrolls, G = game.ngroups
    cdef Outcomes* outs = new_outcomes(nt)
    cdef int32_t* bufs = <int32_t*> malloc(nt * SG_MAX_OUTCOMES * sizeof(int32_t))
    cdef int64_t* changed = <int64_t*> malloc(nt * 8 * sizeof(int64_t))
    cdef int64_t s, n = game.total, y, k, v
    cdef const double* X = &x[0]
    cdef int32_t* T = &tau[0, 0]
    cdef const int32_t* C = &codes[0] if stored else NULL
    cdef const uint8_t* N = &counts[0, 0] if stored else NULL
    cdef const int64_t* F = &offsets[0] if stored else NULL
    for t in range(nt):
        changed[t * 8] = 0
    try:
        with nogil:
            for s in prange(n, schedule="dynamic", chunksize=4096, num_threads=nt):
                tid = threadid()
                if stored:
                    y = s + ahead
                    if ahead and y < n:
                        for k in range(F[y], F[y + 1]):
                            v = target(C[k])
                            if v >= 0:
                                __builtin_prefetch(X + ((n + v) if C[k] >= 0 else v))
                    changed[tid * 8] += respond_state(game, C + F[s], N + s * G, X, n,
                                                      strict_tie if St != NULL and St[s] else tie, T + s * R,
                                                      bufs + tid * SG_MAX_OUTCOMES)
                else:
                    game.generate(s, &outs[tid])
                    changed[tid * 8] += respond_state(game, outs[tid].codes, outs[tid].counts, X, n,
                                                      strict_tie if St != NULL and St[s] else tie,
                                                      T + s * R, bufs + tid * SG_MAX_OUTCOMES)
        return summed(changed, nt)
    finally:
        free(outs)
        free(bufs)
        free(changed)


# ---- the blocks each key reaches (skip.BlockSkip) ----------------------------------------------
#
# Every state's outcomes are generated once; each successor's own block, with the state's own
# block (a successor that keeps the turn) or its other key (one that passes it), is put in a set
# of 64-bit words shared by the threads: open addressing, a compare-and-swap into an empty slot.
# A thread first asks a small cache of its own, since consecutive states share their own block
# and reach the same blocks again and again.

cdef extern from *:
    """
    static inline int sg_cas64(uint64_t* p, uint64_t expect, uint64_t value) {
        return __atomic_compare_exchange_n(p, &expect, value, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    }
    static inline uint64_t sg_load64(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
    """
    bint sg_cas64(uint64_t* p, uint64_t expect, uint64_t value) nogil
    uint64_t sg_load64(const uint64_t* p) nogil

PAIR_EMPTY = 0xFFFFFFFFFFFFFFFF
cdef uint64_t PAIR_EMPTY_ = 0xFFFFFFFFFFFFFFFF
DEF PAIR_CACHE = 512


cdef inline uint64_t pair_hash(uint64_t x) noexcept nogil:
    x = x * <uint64_t> 0x9E3779B97F4A7C15
    return x ^ (x >> 29)


cdef inline int pair_insert(uint64_t* T, uint64_t mask, uint64_t x) noexcept nogil:
    """Put ``x`` in the set ``T`` (mask + 1 slots); 1 where it is new, 0 where it was there."""
    cdef uint64_t i = pair_hash(x) & mask, cur
    while True:
        cur = sg_load64(&T[i])
        if cur == x:
            return 0
        if cur == PAIR_EMPTY_:
            if sg_cas64(&T[i], PAIR_EMPTY_, x):
                return 1
            continue  # another thread filled the slot just now: look at it again
        i = (i + 1) & mask


cdef check_pair_table(uint64_t[::1] table):
    cdef int64_t size = table.shape[0]
    if size < 2 or size & (size - 1):
        raise ValueError(f"a pair table has a power of two of slots, not {size}")


cdef inline int64_t run_at(const int64_t* starts, const int64_t* first, int shift, int64_t y) noexcept nogil:
    """The run of ranks holding rank ``y`` (``run_index`` built ``first`` and ``shift``): a binary search among the few runs that
    y's chunk of 2^shift ranks overlaps, from the run holding the chunk's first rank to the one
    holding the next chunk's."""
    cdef int64_t j = y >> shift, lo = first[j], hi = first[j + 1], mid
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if starts[mid] <= y:
            lo = mid
        else:
            hi = mid - 1
    return lo


def run_index(const int64_t[::1] starts, int64_t n):
    """(first, shift) for ``run_at`` over the runs beginning at ``starts`` (sorted, the first 0) of
    ``n`` ranks: shift makes about as many chunks of 2^shift ranks as there are runs, and
    first[j] is the run holding rank j << shift (the last entry, past the last chunk, the last run)."""
    cdef int64_t runs = starts.shape[0]
    if runs == 0 or starts[0] != 0 or n <= 0:
        raise ValueError("runs of ranks begin at rank 0 and cover at least one rank")
    cdef int shift = 0
    while (n >> (shift + 1)) >= runs:
        shift += 1
    chunks = ((n - 1) >> shift) + 1
    at = np.arange(chunks + 1, dtype=np.int64) << shift
    first = np.searchsorted(np.asarray(starts), np.minimum(at, n - 1), side="right").astype(np.int64) - 1
    return first, shift


def runs_of(const int64_t[::1] starts, const int64_t[::1] first, int shift, const int64_t[::1] ranks):
    """The run holding each of ``ranks`` (``run_at``; tests hold it to a search of ``starts``)."""
    cdef Py_ssize_t i, m = ranks.shape[0]
    out = np.empty(m, dtype=np.int64)
    cdef int64_t[::1] o = out
    cdef int64_t top = (<int64_t> (first.shape[0] - 1)) << shift
    for i in range(m):
        if not 0 <= ranks[i] < top:
            raise ValueError(f"rank {ranks[i]} outside the runs' chunks")
        o[i] = run_at(&starts[0], &first[0], shift, ranks[i])
    return out


def block_pairs(StochasticGame game, uint64_t[::1] table, int64_t room, const int64_t[::1] run_starts=None,
                const int64_t[::1] run_keys=None, const int64_t[::1] run_first=None, int shift=0, int threads=1,
                int64_t start=0, int64_t stop=-1):
    """Put in ``table`` (a set of words, every empty slot PAIR_EMPTY, a power of two of them) a
    word for each (kind, key, block) that ranks ``start..stop-1`` show: kind 0, the state's own
    block and the own block of a successor that keeps the turn; kind 1, the state's other key and
    the own block of a successor that passes it (``StochasticGame.block_keys``). Returns how many
    words were new, or -1 where that would pass ``room`` (the table's free slots the caller
    allows, at most half of them: a full table would never end a search): then some of the range
    is in, and the caller grows the table (``pair_rehash``) and puts the range in again.

    A successor's own block is read from the runs of ranks sharing one (``run_starts``,
    ``run_keys``: ``skip.block_runs``; ``run_first``, ``shift``: ``run_index``) where they are
    given; without them, from its tiles (``block_keys``), which unranks every outcome: the slow
    way, which tests and ``benchmarks/bench_block_pairs.py`` hold the runs to."""
    game.ready()
    check_pair_table(table)
    if not 0 <= room < table.shape[0]:
        raise ValueError(f"room for {room} new words in a table of {table.shape[0]}")
    stop = check_range(game, game.total, start, stop, 1.0)
    if max(1, game.nblocks) >= (<int64_t> 1) << 31:
        raise ValueError("a pair word holds block numbers below 2^31")
    cdef bint by_runs = run_starts is not None
    cdef const int64_t* RS = NULL
    cdef const int64_t* RK = NULL
    cdef const int64_t* RF = NULL
    if by_runs:
        if run_keys is None or run_first is None or run_starts.shape[0] == 0 or \
                run_keys.shape[0] != run_starts.shape[0] or (<int64_t> (run_first.shape[0] - 1)) << shift < game.total:
            raise ValueError("the runs of ranks (run_starts, run_keys, run_first) do not cover the game's states")
        RS, RK, RF = &run_starts[0], &run_keys[0], &run_first[0]
    cdef int nt = max(1, threads), tid, i, t
    cdef int64_t s, y
    cdef uint64_t mask = table.shape[0] - 1, x, slot
    cdef uint64_t* T = &table[0]
    cdef int32_t k1, k2, b, unused
    cdef int32_t c
    cdef Outcomes* outs = new_outcomes(nt)
    cdef uint64_t* cache = <uint64_t*> malloc(nt * PAIR_CACHE * sizeof(uint64_t))
    cdef int64_t* added = <int64_t*> malloc(nt * 8 * sizeof(int64_t))
    cdef int64_t total = 0, budget = room // nt
    try:
        if cache == NULL or added == NULL:
            raise MemoryError()
        for t in range(nt * PAIR_CACHE):
            cache[t] = PAIR_EMPTY_
        for t in range(nt):
            added[t * 8] = 0
        with nogil:
            for s in prange(start, stop, schedule="dynamic", chunksize=4096, num_threads=nt):
                tid = threadid()
                k1 = 0  # assigned here, so that each thread has its own (block_keys writes through pointers)
                k2 = 0
                b = 0
                unused = 0
                if added[tid * 8] > budget - SG_MAX_OUTCOMES:  # a state adds at most that many
                    added[tid * 8] = budget + 1
                    continue
                game.generate(s, &outs[tid])
                game.block_keys(s, &k1, &k2)
                for i in range(outs[tid].n):
                    c = outs[tid].codes[i]
                    if c >= 0:
                        y = c
                        x = (<uint64_t> k1) << 31
                    elif c == SG_WIN or c == SG_LOSS or c == SG_NOCODE:
                        continue
                    else:
                        y = -(<int64_t> c) - 1
                        x = ((<uint64_t> 1) << 62) | ((<uint64_t> k2) << 31)
                    if by_runs:
                        x = x | <uint64_t> RK[run_at(RS, RF, shift, y)]
                    else:
                        game.block_keys(y, &b, &unused)
                        x = x | <uint64_t> b
                    slot = tid * PAIR_CACHE + (pair_hash(x) & (PAIR_CACHE - 1))
                    if cache[slot] == x:
                        continue
                    cache[slot] = x
                    added[tid * 8] += pair_insert(T, mask, x)
        for t in range(nt):
            if added[t * 8] > budget:
                return -1
            total += added[t * 8]
        return total
    finally:
        free(outs)
        free(cache)
        free(added)


def pair_rehash(uint64_t[::1] table, const uint64_t[::1] words) -> int:
    """Put ``words`` (none PAIR_EMPTY) in ``table``, as ``block_pairs`` does; returns how many were new."""
    check_pair_table(table)
    cdef uint64_t mask = table.shape[0] - 1
    cdef int64_t i, total = 0
    with nogil:
        for i in range(words.shape[0]):
            total += pair_insert(&table[0], mask, words[i])
    return total
