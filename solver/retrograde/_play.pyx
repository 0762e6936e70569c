# cython: language_level=3
"""Monte Carlo games on a successor CSR of mover-relative states (the Ünee state graph).

An absolute position is (state, side to move); a move takes (x, side) to (succ[k], 1 - side).
A game ends when the mover has no move, or as soon as an absolute position occurs a second time
(the start counts as seen), or, as a safety stop, after ``max_plies`` plies. Each side follows a
policy: a uniformly random legal move, a uniformly random marked move (e.g. the moves that keep
the solved value) or the first marked move in edge order (deterministic, for tests).

Randomness: splitmix64, one stream per game derived from (seed, game index), so a game depends
only on the seed and its index: the first k games of a larger sample are the same k games.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, malloc, realloc, free
from libc.string cimport memcpy

cnp.import_array()

RANDOM = 0
RANDOM_MARKED = 1
FIRST_MARKED = 2
END_NO_MOVE = 0
END_REPETITION = 1
END_CAP = 2

DEF P_RANDOM = 0
DEF P_RANDOM_MARKED = 1
DEF P_FIRST_MARKED = 2
DEF E_NO_MOVE = 0
DEF E_REPETITION = 1
DEF E_CAP = 2


cdef inline uint64_t splitmix64(uint64_t* state) noexcept nogil:
    state[0] += <uint64_t> 0x9E3779B97F4A7C15
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * <uint64_t> 0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <uint64_t> 0x94D049BB133111EB
    return z ^ (z >> 31)


cdef inline int64_t below(uint64_t* state, int64_t m) noexcept nogil:
    """Uniform integer in [0, m) for small m (multiply-shift on 32 random bits; bias < m / 2**32)."""
    return <int64_t> (((splitmix64(state) >> 32) * <uint64_t> m) >> 32)


cdef inline uint64_t game_stream(uint64_t seed, int64_t game) noexcept nogil:
    """Start of game ``game``'s stream: two rounds of mixing decorrelate neighbouring indices."""
    cdef uint64_t s = seed
    cdef uint64_t a = splitmix64(&s)
    s = a ^ (<uint64_t> game * <uint64_t> 0xD1B54A32D192ED03)
    return splitmix64(&s)


def optimal_mask(const int64_t[::1] indptr, const int32_t[::1] succ, const int8_t[::1] captured,
                 const int8_t[::1] value):
    """uint8 per edge: 1 where the move keeps the mover's value (``captured - value[succ] == value``)."""
    cdef int64_t n = indptr.shape[0] - 1, x, k
    if value.shape[0] != n or succ.shape[0] != captured.shape[0] or indptr[n] != succ.shape[0]:
        raise ValueError("graph arrays and value table do not fit together")
    cdef cnp.ndarray[uint8_t, ndim=1] mask = np.zeros(succ.shape[0], dtype=np.uint8)
    cdef uint8_t[::1] m = mask
    with nogil:
        for x in range(n):
            for k in range(indptr[x], indptr[x + 1]):
                m[k] = (captured[k] - value[succ[k]]) == value[x]
    return mask


def play_games(const int64_t[::1] indptr, const int32_t[::1] succ, const int8_t[::1] captured,
               int64_t start, int start_side, int64_t games, uint64_t seed,
               int south_policy, int north_policy, const uint8_t[::1] marked=None,
               int64_t max_plies=100_000_000, bint record=False):
    """Play ``games`` games from (``start``, ``start_side``) (side 0 = South, 1 = North).

    Returns a dict of arrays, one entry per game: ``plies`` (int64), ``end`` (int8: END_NO_MOVE,
    END_REPETITION, END_CAP), ``south_captured`` / ``north_captured`` (int32, balls captured by
    moves, not the balls a game end hands out), ``final_state`` (int64) and ``final_side`` (int8);
    ``unmarked_visits``: how often a marked policy met a state with moves but none marked (it
    then chose among all moves). With ``record`` also ``edges`` (int64 edge ids of every move,
    all games concatenated) and ``offsets`` (int64[games + 1]).
    """
    cdef int64_t n = indptr.shape[0] - 1
    if n <= 0 or indptr[n] != succ.shape[0] or captured.shape[0] != succ.shape[0]:
        raise ValueError("malformed successor CSR")
    if not 0 <= start < n or start_side not in (0, 1):
        raise ValueError("start state or side out of range")
    if games < 0 or max_plies < 0:
        raise ValueError("games and max_plies must be >= 0")
    if games >= 2 ** 31 - 1:
        raise ValueError("too many games in one call")
    for p in (south_policy, north_policy):
        if p not in (P_RANDOM, P_RANDOM_MARKED, P_FIRST_MARKED):
            raise ValueError(f"unknown policy {p}")
        if p != P_RANDOM and marked is None:
            raise ValueError("a marked-move policy needs the edge mask")
    if marked is not None and marked.shape[0] != succ.shape[0]:
        raise ValueError("the edge mask needs one entry per edge")

    cdef cnp.ndarray[int64_t, ndim=1] plies_arr = np.zeros(games, dtype=np.int64)
    cdef cnp.ndarray[int8_t, ndim=1] end_arr = np.zeros(games, dtype=np.int8)
    cdef cnp.ndarray[int32_t, ndim=1] cs_arr = np.zeros(games, dtype=np.int32)
    cdef cnp.ndarray[int32_t, ndim=1] cn_arr = np.zeros(games, dtype=np.int32)
    cdef cnp.ndarray[int64_t, ndim=1] fx_arr = np.zeros(games, dtype=np.int64)
    cdef cnp.ndarray[int8_t, ndim=1] fs_arr = np.zeros(games, dtype=np.int8)
    cdef cnp.ndarray[int64_t, ndim=1] off_arr = np.zeros(games + 1, dtype=np.int64)
    cdef int64_t[::1] plies_v = plies_arr
    cdef int8_t[::1] end_v = end_arr
    cdef int32_t[::1] cs_v = cs_arr
    cdef int32_t[::1] cn_v = cn_arr
    cdef int64_t[::1] fx_v = fx_arr
    cdef int8_t[::1] fs_v = fs_arr
    cdef int64_t[::1] off_v = off_arr
    cdef const uint8_t* mk = &marked[0] if marked is not None and marked.shape[0] else NULL
    cdef const int64_t* ip = &indptr[0]
    cdef const int32_t* sc = &succ[0] if succ.shape[0] else NULL
    cdef const int8_t* cp = &captured[0] if captured.shape[0] else NULL

    # seen-stamps over every absolute position: game g marks with g + 1, so no clearing between games
    cdef int32_t* stamp = <int32_t*> calloc(2 * n, sizeof(int32_t))
    cdef int64_t cap_edges = 1 << 16
    cdef int64_t n_edges = 0
    cdef int64_t* edges = <int64_t*> malloc(cap_edges * sizeof(int64_t)) if record else NULL
    cdef int64_t* grown
    if stamp == NULL or (record and edges == NULL):
        free(stamp)
        free(edges)
        raise MemoryError()

    cdef int64_t g, x, lo, hi, k, j, m, r, plies, unmarked = 0
    cdef int side, policy, end
    cdef int32_t mark
    cdef int32_t caps[2]
    cdef uint64_t rng
    cdef bint oom = False
    with nogil:
        for g in range(games):
            rng = game_stream(seed, g)
            mark = <int32_t> (g + 1)
            x = start
            side = start_side
            stamp[2 * x + side] = mark
            plies = 0
            caps[0] = 0
            caps[1] = 0
            while True:
                lo = ip[x]
                hi = ip[x + 1]
                if hi == lo:
                    end = E_NO_MOVE
                    break
                if plies >= max_plies:
                    end = E_CAP
                    break
                policy = south_policy if side == 0 else north_policy
                k = -1
                if policy != P_RANDOM:
                    m = 0
                    for j in range(lo, hi):
                        m += mk[j]
                    if m == 0:
                        unmarked += 1
                    elif policy == P_FIRST_MARKED:
                        for j in range(lo, hi):
                            if mk[j]:
                                k = j
                                break
                    else:
                        r = below(&rng, m)
                        for j in range(lo, hi):
                            if mk[j]:
                                if r == 0:
                                    k = j
                                    break
                                r -= 1
                if k < 0:
                    k = lo + below(&rng, hi - lo)
                caps[side] += cp[k]
                if record:
                    if n_edges == cap_edges:
                        grown = <int64_t*> realloc(edges, 2 * cap_edges * sizeof(int64_t))
                        if grown == NULL:
                            oom = True
                            break
                        edges = grown
                        cap_edges *= 2
                    edges[n_edges] = k
                    n_edges += 1
                x = sc[k]
                side ^= 1
                plies += 1
                if stamp[2 * x + side] == mark:
                    end = E_REPETITION
                    break
                stamp[2 * x + side] = mark
            if oom:
                break
            plies_v[g] = plies
            end_v[g] = <int8_t> end
            cs_v[g] = caps[0]
            cn_v[g] = caps[1]
            fx_v[g] = x
            fs_v[g] = <int8_t> side
            off_v[g + 1] = n_edges
    free(stamp)
    if oom:
        free(edges)
        raise MemoryError("out of memory while recording moves")
    out = {
        "plies": plies_arr,
        "end": end_arr,
        "south_captured": cs_arr,
        "north_captured": cn_arr,
        "final_state": fx_arr,
        "final_side": fs_arr,
        "unmarked_visits": int(unmarked),
    }
    if record:
        rec = np.empty(n_edges, dtype=np.int64)
        if n_edges:
            memcpy(<void*> cnp.PyArray_DATA(rec), edges, n_edges * sizeof(int64_t))
        free(edges)
        out["edges"] = rec
        out["offsets"] = off_arr
    return out
