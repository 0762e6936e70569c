"""The engine's per-state arithmetic as plain numba-compatible functions, compiled with whatever ``jit``
a caller passes (``cuda.jit(device=True)``, ``numba.njit``, the simulator's): the Bellman backup group
by group, the policy backup, a pass of the endless check, and the distinct codes of a stored row, in
the same order as the CPU engine's (``solver/stochastic/_engine.pyx``), float32 throughout. Imports
no other part of the engine and nothing of numba at import time."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

SG_WIN = -2147483648  # the outcome codes of solver/stochastic/_engine.pxd
SG_LOSS = -2147483647
SG_NOCODE = -2147483646
_F0 = np.float32(0.0)
_F1 = np.float32(1.0)
_FNONE = np.float32(-2.0)  # below every value: nothing seen yet


def state_functions(jit: Callable[[Any], Any], ngroups: int, nrolls: int) -> Any:
    """The engine's per-state arithmetic, compiled with ``jit``: (term, target, finished, backup,
    joins, settle, policy_backup), the same operations in the same order as ``_engine.pyx``'s
    (float32 throughout)."""
    G, R = int(ngroups), int(nrolls)

    @jit
    def term(c, V, g):
        """Outcome code ``c``'s value for the side that chose it."""
        if c >= 0:
            return g * V[c]
        if c == SG_WIN:
            return _F1
        if c == SG_LOSS:
            return -_F1
        if c == SG_NOCODE:  # no action and no pass: the game ends 0
            return _F0
        return -(g * V[-c - 1])

    @jit
    def target(c):
        if c >= 0:
            return c
        if c == SG_WIN or c == SG_LOSS or c == SG_NOCODE:
            return -1
        return -c - 1

    @jit
    def finished(codes, counts):
        for k in range(G - 1):
            if counts[k] > 0:
                return False
        return counts[G - 1] == 1 and (codes[0] == SG_WIN or codes[0] == SG_LOSS)

    @jit
    def backup(codes, counts, V, g, RP, RG, bestv, bestc, policy, s, record):
        """The Bellman backup of one state from its outcome groups; with ``record`` each roll's
        best code goes to ``policy[s, r]``."""
        if finished(codes, counts):
            if record:
                for r in range(R):
                    policy[s, r] = codes[0]
            return _F1 if codes[0] == SG_WIN else -_F1
        at = 0
        for k in range(G):
            v = _FNONE
            cv = SG_NOCODE
            for i in range(counts[k]):
                c = codes[at + i]
                w = term(c, V, g)
                if w > v:
                    v = w
                    cv = c
            bestv[k] = v
            bestc[k] = cv
            at += counts[k]
        total = _F0
        for r in range(R):
            v = _FNONE
            cv = SG_NOCODE
            mask = RG[r]
            for k in range(G - 1):
                if (mask >> k) & 1:
                    if bestv[k] > v:
                        v = bestv[k]
                        cv = bestc[k]
            if v < -1.5:  # nothing legal for this roll: the pass
                v = bestv[G - 1]
                cv = bestc[G - 1]
                if v < -1.5:
                    v = _F0
            total = total + RP[r] * v
            if record:
                policy[s, r] = cv
        return total

    @jit
    def reaches(codes, counts, V, ahead, good, eps, RG, starts):
        """1 when the state joins the states from which the game can be made to end (see
        ``_engine.endless_pass``)."""
        at = 0
        for k in range(G):
            starts[k] = at
            at += counts[k]
        for r in range(R):
            mask = RG[r]
            some = False
            for k in range(G - 1):
                if (mask >> k) & 1 and counts[k] > 0:
                    some = True
            if not some:
                mask = 1 << (G - 1)
            top = _FNONE
            inside = True
            for k in range(G):
                if (mask >> k) & 1:
                    for i in range(counts[k]):
                        c = codes[starts[k] + i]
                        w = term(c, V, _F1)
                        if w > top:
                            top = w
                        t = target(c)
                        if t >= 0 and good[t] == 0:
                            inside = False
            if ahead > 0:  # the mover wants the game to end: one of its best outcomes must lead there
                for k in range(G):
                    if (mask >> k) & 1:
                        for i in range(counts[k]):
                            c = codes[starts[k] + i]
                            t = target(c)
                            if term(c, V, _F1) >= top - eps and (t < 0 or good[t] != 0):
                                return 1
            elif inside:  # the mover would rather play for ever: only a roll with no way out forces it
                return 1
        return 0

    @jit
    def joins(codes, counts, V, v, good, eps, first, RG, starts):
        """1 when an endless pass marks a state not marked yet, whose value is ``v`` and whose
        outcome groups these are: on the first pass an ended game or a value within ``eps`` of 0,
        on every pass ``reaches``."""
        av = v if v >= 0 else -v
        if first and (finished(codes, counts) or av <= eps):
            return 1
        return reaches(codes, counts, V, v, good, eps, RG, starts)

    @jit
    def settle(v, V, dst, s, write):
        """How far the backup ``v`` moves state ``s``, writing it to ``dst[s]`` with ``write``."""
        d = v - V[s]
        if d < 0:
            d = -d
        if write:
            dst[s] = v
        return d

    @jit
    def policy_backup(policy, V, s, g, RP):
        """The fixed policy's backup of state ``s``: the rolls' chosen outcomes, summed in roll order."""
        acc = _F0
        for r in range(R):
            acc = acc + RP[r] * term(policy[s, r], V, g)
        return acc

    return term, target, finished, backup, joins, settle, policy_backup


def graph_functions(jit: Callable[[Any], Any], ngroups: int) -> Any:
    """``distinct(codes, counts)``, compiled with ``jit``: a state's outcome codes with each
    group's repeats dropped, in place, first occurrences kept in order; returns how many are left.
    (The mirror sends two moves to one canonical successor.) A group's best code is the first of
    its best, and a check asks only whether some code does something, so the backups read from
    the shorter lists are the same, bit for bit: the device's stored graph holds them."""
    G = int(ngroups)

    @jit
    def distinct(codes, counts):
        src = 0
        dst = 0
        for k in range(G):
            first = dst
            for i in range(counts[k]):
                c = codes[src + i]
                seen = False
                for j in range(first, dst):
                    if codes[j] == c:
                        seen = True
                        break
                if not seen:
                    codes[dst] = c
                    dst += 1
            src += counts[k]
            counts[k] = dst - first
        return dst

    return distinct
