# The interface between a dice game and the value-iteration engine (solver/stochastic/_engine.pyx).
#
# A game is a cdef class deriving from StochasticGame: it numbers its states 0..total-1 and, for
# a state, writes its outcomes as int32 codes in groups. Code c >= 0: the same side moves again
# in state c (value V[c]); c < 0 other than the specials: the turn passes to the other side in
# state -c-1 (value -V[-c-1]); SG_WIN / SG_LOSS: the mover has won / lost (+1 / -1). Each roll r
# may use the groups in its static mask roll_groups[r]; the last group (the pass) is used by a
# roll only when all of its groups are empty. A finished state writes one SG_WIN or SG_LOSS in
# the pass group and nothing else. Groups let rolls share work: an action that several rolls
# allow is generated and looked up once per state.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

cdef extern from *:
    """
    #define SG_WIN ((int32_t)(-2147483647 - 1))
    #define SG_LOSS ((int32_t)(-2147483647))
    #define SG_NOCODE ((int32_t)(-2147483647 + 1))
    #define SG_MAX_ROLLS 16
    #define SG_MAX_GROUPS 32
    #define SG_MAX_OUTCOMES 8192
    """
    const int32_t SG_WIN
    const int32_t SG_LOSS
    const int32_t SG_NOCODE
    const int SG_MAX_ROLLS
    const int SG_MAX_GROUPS
    const int SG_MAX_OUTCOMES

ctypedef struct Outcomes:
    int n                       # codes written so far, over all groups
    int counts[32]              # codes per group (SG_MAX_GROUPS)
    const char* values          # the value array the codes will be looked up in, or NULL (see sg_hint)
    int shift                   # log2 of a value's bytes
    int32_t codes[8192]         # group after group (SG_MAX_OUTCOMES)


cdef extern from *:
    """
    /* A game may call this with each code as soon as it is made: the engine's lookup of the code's
       value then finds it on its way from memory while the rest of the state is generated. A hint
       only: nothing is read or changed, any code (a win, a loss) is fine, values NULL asks none. */
    static inline void sg_hint_(const char* values, int shift, int32_t c) {
        if (values) {
            int64_t x = c >= 0 ? (int64_t) c : -(int64_t) c - 1;
            __builtin_prefetch(values + (x << shift));
        }
    }
    """
    void sg_hint_(const char* values, int shift, int32_t c) nogil


cdef inline void sg_hint(const Outcomes* out, int32_t c) noexcept nogil:
    sg_hint_(out.values, out.shift, c)


cdef class StochasticGame:
    cdef readonly int64_t total          # number of states
    cdef readonly int nrolls             # number of rolls
    cdef readonly int ngroups            # number of outcome groups, the pass last
    cdef float roll_p[16]                # probability of each roll
    cdef uint32_t roll_groups[16]        # groups each roll may use (bit g = group g)
    cdef readonly int64_t nblocks        # the game's blocks for the skip's bounds (block_keys); 0: one

    cdef void set_rolls(self, probabilities, groups, int ngroups) except *
    cdef void ready(self) except *       # called before any kernel: a game may build lazy indexes
    cdef int generate(self, int64_t rank, Outcomes* out) noexcept nogil
    # the state's own block and its other key, both 0..nblocks-1 (see solver/stochastic/skip.py,
    # BlockSkip): every successor that keeps the turn lies in a block that the own block's states
    # reach, every one that passes it in a block that the other key's states reach
    cdef void block_keys(self, int64_t rank, int32_t* own, int32_t* other) noexcept nogil
