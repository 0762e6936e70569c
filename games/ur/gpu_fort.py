"""The fort rules' move generator and ranking a second time, as plain numba-compatible functions:
the GPU backend's (``solver/backends/gpu/driver.py``) device code, also compiled with ``numba.njit`` so that the
tests compare it with ``FortGame`` (``_fort.pyx``) on the CPU.

It writes exactly what ``FortGame.generate`` writes: the same int32 codes, in the same order, in
the same groups (0 the entry spawn, 1 one-step moves, 2 two-step moves, 3 Heaven's three-step
moves, 4 + r roll r's colour spawns, the pass last). Ranks are the same numbers: the tables and the
mirror's index are ``FortGame``'s own, exported by ``FortGame.device_tables`` and built on the host.
Every number is an int64 that never overflows (tile masks below 2**32, the mirror's 64-bit bitmap
words kept as two 32-bit halves), so the same source gives the same results compiled for the
device, compiled for the CPU, and run as Python in numba's CUDA simulator.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from gamesolver.solver.backends.gpu.arithmetic import SG_LOSS, SG_WIN

# indices into the parameter array (the first of the tables)
_N, _K, _TOTAL, _MIRRORED, _HMAX, _FORTS, _EARTH, _HEAVEN, _ISHTAR, _ENTRY, _NROLLS, _NGROUPS = range(12)
_FRAME = 5  # one level of a piece's walk: masks, tile, next neighbour, fort entered


def pop32(x: int) -> int:
    """Set bits of x (0 <= x < 2**32)."""
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) >> 24) & 0xFF


def build(jit: Callable[[Any], Any]) -> Any:
    """The generator's functions compiled with ``jit`` (``numba.njit``, ``cuda.jit(device=True)``,
    or ``lambda f: f`` for plain Python); returns ``generate`` with the others as attributes."""
    pop = jit(pop32)

    @jit
    def ctz(x):  # x > 0
        return pop((x & -x) - 1)

    @jit
    def highbit(x):  # x > 0
        x = x | (x >> 1)
        x = x | (x >> 2)
        x = x | (x >> 4)
        x = x | (x >> 8)
        x = x | (x >> 16)
        return pop(x) - 1

    @jit
    def nth32(x, i):
        while i > 0:
            x = x & (x - 1)
            i -= 1
        return ctz(x)

    @jit
    def colex(T, S):
        cx = T[9]
        b0 = S & 255
        b1 = (S >> 8) & 255
        b2 = (S >> 16) & 255
        b3 = (S >> 24) & 255
        i1 = pop(b0)
        i2 = i1 + pop(b1)
        r = cx[0, b0, 0] + cx[1, b1, i1] + cx[2, b2, i2]
        if b3:
            r += cx[3, b3, i2 + pop(b2)]
        return r

    @jit
    def squeeze(Y, X):
        while X:
            low = (1 << highbit(X)) - 1
            Y = (Y & low) | ((Y >> 1) & ~low)
            X = X & low
        return Y

    @jit
    def rank_full(T, M, O):
        P = T[0]
        a = pop(M)
        b = pop(O)
        return T[8][a, b] + colex(T, M) * T[7][P[_N] - a, b] + colex(T, squeeze(O, M))

    @jit
    def unrank_full(T, r):
        P = T[0]
        off = T[8]
        binom = T[7]
        n = P[_N]
        k = P[_K]
        a = 0
        b = 0
        while a < k and off[a, k + 1] <= r:
            a += 1
        while b < k and off[a, b + 1] <= r:
            b += 1
        r -= off[a, b]
        width = binom[n - a, b]
        rm = r // width
        ro = r - rm * width
        m = 0
        o = 0
        t = n - 1
        for i in range(a, 0, -1):
            while binom[t, i] > rm:
                t -= 1
            m = m | (1 << t)
            rm -= binom[t, i]
            t -= 1
        t = n - a - 1
        for i in range(b, 0, -1):
            while binom[t, i] > ro:
                t -= 1
            ro -= binom[t, i]
            o = o | (1 << t)
            t -= 1
        freeset = m  # a gap at each of m's tiles, lowest first
        while freeset:
            low = (freeset & -freeset) - 1
            o = (o & low) | ((o & ~low) << 1)
            freeset = freeset & (freeset - 1)
        return m, o

    @jit
    def flip(T, m):
        fb = T[10]
        return fb[0, m & 255] | fb[1, (m >> 8) & 255] | fb[2, (m >> 16) & 255] | fb[3, (m >> 24) & 255]

    @jit
    def compact(T, r):
        if not T[0][_MIRRORED]:
            return r
        w = r >> 6
        j = r & 63
        if j < 32:
            return T[13][w] + pop(T[11][w] & ((1 << j) - 1))
        return T[13][w] + pop(T[11][w]) + pop(T[12][w] & ((1 << (j - 32)) - 1))

    @jit
    def select(T, i):
        lo = T[11]
        hi = T[12]
        r = T[14][i >> 6]
        w = r >> 6
        left = i & 63
        j = r & 63
        if j < 32:
            xl = lo[w] & ~((1 << j) - 1)
            xh = hi[w]
        else:
            xl = 0
            xh = hi[w] & ~((1 << (j - 32)) - 1)
        c = pop(xl) + pop(xh)
        while left >= c:
            left -= c
            w += 1
            xl = lo[w]
            xh = hi[w]
            c = pop(xl) + pop(xh)
        cl = pop(xl)
        if left < cl:
            return w * 64 + nth32(xl, left)
        return w * 64 + 32 + nth32(xh, left - cl)

    @jit
    def rank1(T, M, O):
        if not T[0][_MIRRORED]:
            return rank_full(T, M, O)
        fm = flip(T, M)
        fo = flip(T, O)
        if fm < M or (fm == M and fo < O):
            return compact(T, rank_full(T, fm, fo))
        return compact(T, rank_full(T, M, O))

    @jit
    def unrank1(T, r):
        if T[0][_MIRRORED]:
            return unrank_full(T, select(T, r))
        return unrank_full(T, r)

    @jit
    def code(T, M, O, again):
        """The engine's code of an outcome: a win, the mover again, or the other side to move."""
        forts = T[0][_FORTS]
        if (M & forts) == forts:
            return SG_WIN
        if again:
            return rank1(T, M, O)
        return -rank1(T, O, M) - 1

    @jit
    def put(codes, n, c):
        if n < codes.shape[0]:
            codes[n] = c
        return n + 1

    @jit
    def step(T, M, O, frm, to):
        """(-1, M, O) when illegal, else (1 when it captured else 0, M', O'); Ishtar protects the
        other side's forts."""
        P = T[0]
        bit = 1 << to
        if M & bit:
            return -1, M, O
        if O & bit:
            if (bit & P[_FORTS]) and (O & P[_ISHTAR]):
                return -1, M, O
            return 1, (M & ~(1 << frm)) | bit, O & ~bit
        return 0, (M & ~(1 << frm)) | bit, O

    @jit
    def walks(T, M, O, start, lo, hi, codes, n, st):
        """Moves of the piece on ``start`` of lo..hi steps, depth first in neighbour order (the
        order of ``FortGame.walks``), with an explicit stack in ``st``."""
        P = T[0]
        deg = T[1]
        nbr = T[2]
        forts = P[_FORTS]
        earth = P[_EARTH]
        d = 0
        st[0] = M
        st[1] = O
        st[2] = start
        st[3] = 0
        st[4] = 0
        while d >= 0:
            b = _FRAME * d
            here = st[b + 2]
            j = st[b + 3]
            if j >= deg[here]:
                d -= 1
                continue
            st[b + 3] = j + 1
            to = nbr[here, j]
            cap, M2, O2 = step(T, st[b], st[b + 1], here, to)
            if cap < 0:
                continue
            f2 = st[b + 4] | ((forts >> to) & 1)
            if d + 1 >= lo and to != start:
                n = put(codes, n, code(T, M2, O2, f2))
            if d + 1 < hi and not (cap == 1 and (M2 & earth) != earth):
                d += 1
                b = _FRAME * d
                st[b] = M2
                st[b + 1] = O2
                st[b + 2] = to
                st[b + 3] = 0
                st[b + 4] = f2
        return n

    @jit
    def one_piece(T, M, O, lo, hi, codes, n, st):
        s = M
        while s:
            p = ctz(s)
            s = s & (s - 1)
            n = walks(T, M, O, p, lo, hi, codes, n, st)
        return n

    @jit
    def two_pieces(T, M, O, codes, n):
        """Two different pieces one step each; of two orders that give the same result, the one
        with the lower tile first (``FortGame.two_pieces``)."""
        deg = T[1]
        nbr = T[2]
        forts = T[0][_FORTS]
        s = M
        while s:
            p = ctz(s)
            s = s & (s - 1)
            for j in range(deg[p]):
                to = nbr[p, j]
                c1, M1, O1 = step(T, M, O, p, to)
                if c1 < 0:
                    continue
                s2 = M1 & ~(1 << to)
                while s2:
                    q = ctz(s2)
                    s2 = s2 & (s2 - 1)
                    for j2 in range(deg[q]):
                        to2 = nbr[q, j2]
                        c2, M2, O2 = step(T, M1, O1, q, to2)
                        if c2 < 0:
                            continue
                        if p > q:
                            cq, Mq, Oq = step(T, M, O, q, to2)
                            if cq >= 0:
                                cp, Mq, Oq = step(T, Mq, Oq, p, to)
                                if cp >= 0:
                                    continue
                        n = put(codes, n, code(T, M2, O2, ((forts >> to) & 1) | ((forts >> to2) & 1)))
        return n

    @jit
    def adjacent(T, M):
        deg = T[1]
        nbr = T[2]
        out = 0
        s = M
        while s:
            p = ctz(s)
            s = s & (s - 1)
            for j in range(deg[p]):
                out = out | (1 << nbr[p, j])
        return out

    @jit
    def entry_legal(T, M, O):
        P = T[0]
        if pop(M) >= P[_K] or (M & P[_ENTRY]):
            return False
        return not ((O & P[_ENTRY]) and pop(O) == 1)  # a lone piece on the entry may not be taken

    @jit
    def generate(T, rank, codes, counts, st):
        """Write the outcomes of state ``rank`` as ``FortGame.generate`` does: codes into
        ``codes``, codes per group into ``counts``; returns how many, or -1 when ``codes`` is too
        short (nothing past its end is written). ``st``: scratch, ``scratch_size`` int64."""
        P = T[0]
        steps = T[3]
        heaven_steps = T[4]
        adj_spawn = T[5]
        spawn = T[6]
        G = P[_NGROUPS]
        R = P[_NROLLS]
        forts = P[_FORTS]
        entry = P[_ENTRY]
        heaven = P[_HEAVEN]
        M, O = unrank1(T, rank)
        for g in range(G):
            counts[g] = 0
        if (M & forts) == forts or (O & forts) == forts:
            codes[0] = SG_WIN if (M & forts) == forts else SG_LOSS
            counts[G - 1] = 1
            return 1
        n = 0
        if entry_legal(T, M, O):
            n = put(codes, n, code(T, M | entry, O & ~entry, 0))
            counts[0] = 1
        n0 = n
        n = one_piece(T, M, O, 1, 1, codes, n, st)
        counts[1] = n - n0
        n0 = n
        n = one_piece(T, M, O, 2, 2, codes, n, st)
        n = two_pieces(T, M, O, codes, n)
        counts[2] = n - n0
        if P[_HMAX] > 2 and (M & heaven) == heaven:
            n0 = n
            n = one_piece(T, M, O, 3, P[_HMAX], codes, n, st)
            counts[3] = n - n0
        if pop(M) < P[_K]:
            adj = adjacent(T, M)
            for r in range(R):
                tiles = spawn[r]
                if adj_spawn[r]:
                    tiles = tiles | adj
                tiles = tiles & ~(M | O)
                while tiles:
                    t = ctz(tiles)
                    tiles = tiles & (tiles - 1)
                    n = put(codes, n, code(T, M | (1 << t), O, 0))
                    counts[4 + r] += 1
        for r in range(R):
            has = counts[0] > 0 or counts[4 + r] > 0 or (steps[r] >= 1 and counts[1] > 0) or (
                steps[r] >= 2 and (counts[2] > 0 or (heaven_steps[r] > 2 and counts[3] > 0)))
            if not has:
                n = put(codes, n, code(T, M, O, 0))
                counts[G - 1] = 1
                break
        if n > codes.shape[0]:
            return -1
        return n

    generate.rank1 = rank1
    generate.unrank1 = unrank1
    return generate


@dataclass(frozen=True)
class DeviceFort:
    """What ``solver.backends.gpu.driver.GpuEngine`` needs of a game: its numba-compilable ``generate`` (see
    ``build``: the plain Python function; the engine compiles it), its tables (a tuple of numpy
    arrays, copied to the device once) and its sizes."""

    tables: tuple[np.ndarray, ...]
    total: int
    nrolls: int
    ngroups: int
    roll_p: np.ndarray  # float32, the game's own roll probabilities
    roll_groups: np.ndarray  # int64, bit g: the roll may use group g
    max_outcomes: int  # an upper bound on the codes one state writes
    scratch_size: int
    name: str = "ur-fort"

    @staticmethod
    def build(jit: Callable[[Any], Any]) -> Any:
        return build(jit)


def device_game(game: Any) -> DeviceFort:
    """The device twin of ``game`` (a ``FortGame``), with its tables and, with the mirror, the
    mirror's index exported from it (built on the host, once)."""
    t = game.device_tables()
    R = len(t["roll_p"])
    G = int(game.ngroups)
    params = np.zeros(12, dtype=np.int64)
    params[[_N, _K, _TOTAL, _MIRRORED, _HMAX, _FORTS, _EARTH, _HEAVEN, _ISHTAR, _ENTRY, _NROLLS, _NGROUPS]] = [
        t["n"], t["k"], t["total"], int(t["mirrored"]), t["hmax"], t["forts"], t["earth"], t["heaven"],
        t["ishtar"], t["entry"], R, G]
    tables = (params, t["deg"], t["nbr"], t["roll_steps"], t["roll_heaven"], t["roll_adjacent"], t["roll_spawn"],
              t["binom"], t["off"], t["cx"], t["flip_byte"], t["words_lo"], t["words_hi"], t["words_before"],
              t["sample"])
    n, k = int(t["n"]), int(t["k"])
    deg = int(t["deg"].max()) if n else 0
    hmax = max(2, int(t["hmax"]))
    # every piece's walks of up to hmax steps, every ordered pair of pieces one step each, every
    # roll's spawn on any tile, the entry and the pass: more than any state writes (rounded up to
    # a power of two, so that games of a few sizes share one compiled kernel)
    walks = sum(deg ** s for s in range(1, hmax + 1))
    bound = k * walks + k * deg * max(0, k - 1) * deg + R * n + 2
    return DeviceFort(tables=tables, total=int(t["total"]), nrolls=R, ngroups=G,
                      roll_p=np.asarray(t["roll_p"], dtype=np.float32), roll_groups=t["roll_groups"],
                      max_outcomes=1 << max(6, (int(bound) - 1).bit_length()), scratch_size=_FRAME * (hmax + 1))
