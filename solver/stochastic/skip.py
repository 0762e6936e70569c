"""Full sweeps that generate only what can change: the walk's action elimination.

A full sweep generates every action of every state to find each roll's best one, yet late in a
stage the values move so little that for most states the best action cannot have changed. The
classic test of value iteration (MacQueen's; Puterman, "Markov Decision Processes", section 6.7),
here for both players: a full backup records, a byte a state, a lower bound on its smallest lead
(each roll's best outcome over the best other one). If every value has moved by at most D since
then, each outcome's value moved by at most D, so a lead above 2 D (with room for float32
rounding) keeps the same action best on every roll, and the recorded policy row gives the full
backup's value to the bit. Such a state is backed up from its row, at a policy sweep's cost.

The bound D. Let W_j be the values when the walk's full sweep j starts and F_j(x) the value
full sweep j wrote at x; during that sweep a state reads each successor either before its
update (W_j) or after it (F_j). So a state backed up fully in sweep j and looked at again in
sweep k read values within

    D = |F_j - W_j|max + sum_{i=j}^{k-1} |W_{i+1} - W_i|max + |g_k - g_j| + (sweep k's changes so far)

of those it reads now (the third term where the walk's discount g changed in between: an
outcome's value is g V, and |V| <= 1). The first two are measured here, the second from a copy
of the values kept at each full sweep's start (the net movement of a round: a hot set's 800
sweeps move a state by what they move it, not by the sum of 800 largest changes); they are
``bounds[stamp]``. The last is the largest change of the running sweep up to the moment, which
the kernel reads from every thread after reading the row's values (``_engine.sg_moved``). Every
decision is proven, and one thread gives the same values as a walk that never skips, bit for
bit (``tests/test_walk_skip.py``).

The stamp of a state's last full backup is a byte (the round, modulo 255): a state is generated
again at least every ``AGE_MAX`` rounds so that no stamp is ever read as a later round.
Memory: two bytes a state and a copy of the values (seven pieces: 1.19 + 2.38 GiB); where the walk
maps its policy from a file, the copy is mapped from a file beside it too (``path``), read and
written once a round, so that the system can page it out for the policy's sake.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from gamesolver.solver.stochastic import _engine as kernels

LEAD_TOP = kernels.LEAD_TOP
STAMP_NEVER = kernels.STAMP_NEVER
# the bound is D times this: 2 (the best action's value can fall by D while another's rises by D);
# tests set a smaller one to show that an unsound bound changes the values
SLACK = 2.0
AGE_MAX = 200  # a state is generated again at least every this many rounds (stamps are a byte)
_CHUNK = 1 << 22
BYTES_PER_STATE = 2  # lead and stamp, besides the copy of the values


class Skip:
    """The lead and stamp bytes of every state, the copy of the values at the last full sweep's
    start, and each round's movement; hands a full sweep its ``bounds`` (``kwargs``)."""

    def __init__(self, n: int, dtype: np.dtype, path: Path | None = None) -> None:
        self.lead = np.zeros(n, dtype=np.uint8)
        self.stamp = np.full(n, STAMP_NEVER, dtype=np.uint8)
        self.path = path
        self.copy = (np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=(n,)) if path is not None
                     else np.empty(n, dtype=dtype))
        self.work = np.zeros(2, dtype=np.int64)  # states generated, codes written
        self.bounds = np.full(256, np.inf)
        self.round = -1  # the full sweep now running (or last run)
        self.full: dict[int, float] = {}  # full sweep j's largest change
        self.moved: dict[int, float] = {}  # round j's largest net movement, W_{j+1} - W_j
        self.discount: dict[int, float] = {}  # the discount of full sweep j
        self.log: list[dict[str, float]] = []  # a row a full sweep: round, share generated, change

    def begin(self, values: np.ndarray, discount: float) -> None:
        """A full sweep with this discount starts: measure the last round's movement, copy the
        values, and set each stamp's bound."""
        if self.round >= 0:
            self.moved[self.round] = _moved_and_copy(self.copy, values)
        else:
            self.copy[:] = values
        self.round += 1
        k = self.round
        self.discount[k] = discount
        self.bounds[:] = np.inf
        now = k % STAMP_NEVER
        moved_since = 0.0  # the rounds' movements from round j to k - 1
        for age in range(1, min(AGE_MAX, k) + 1):
            j = k - age
            if j not in self.moved or j not in self.full:
                break
            moved_since += self.moved[j]
            self.bounds[(now - age) % STAMP_NEVER] = self.full[j] + moved_since + abs(discount - self.discount[j])

    def kwargs(self) -> dict:
        return {"lead": self.lead, "stamp": self.stamp, "bounds": self.bounds, "slack": SLACK,
                "now": self.round % STAMP_NEVER, "work": self.work}

    def close(self) -> None:
        """Drop the copy (and its file, where it has one)."""
        self.copy = np.empty(0, dtype=self.copy.dtype)
        if self.path is not None:
            self.path.unlink(missing_ok=True)

    def end(self, values: np.ndarray, change: float, generated: int) -> None:
        """The sweep ended with largest change ``change``, having generated ``generated`` states."""
        self.full[self.round] = change
        self.log.append({"round": self.round, "generated": generated / values.shape[0], "change": change})


def _moved_and_copy(copy: np.ndarray, values: np.ndarray) -> float:
    """The largest |values - copy| (in float64: exact), then ``copy`` := ``values``, a chunk at a time."""
    top = 0.0
    for a in range(0, values.shape[0], _CHUNK):
        b = min(values.shape[0], a + _CHUNK)
        here = values[a:b]
        top = max(top, float(np.max(np.abs(here.astype(np.float64) - copy[a:b]), initial=0.0)))
        copy[a:b] = here
    return top
