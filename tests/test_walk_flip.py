"""A value that flips sign every sweep: a position whose only sensible action on every roll passes
the turn to itself (with the mirror, its twin with the sides swapped is itself) has the equation
v = -v, worth 0, and a Gauss-Seidel sweep maps v to -v for ever. The walk's undiscounted stage and
plain sweeps damp the next sweep once the largest change stalls (``Flip`` in solver/stochastic/walk.py).
"""
from __future__ import annotations

import numpy as np
import pytest

from gamesolver.games.ur import kernel
from gamesolver.solver.stochastic import walk
from gamesolver.solver.stochastic.iteration import _iterate, range_graph
from gamesolver.solver.stochastic.schedule import WALK_DISCOUNTS
from gamesolver.solver.stochastic.walk import Flip, run_walk
from tests.test_engine import symmetric_options

WIN = 1 << 30  # this fake's code for a win of the side to move (a loss is -WIN)


class ThreeStates:
    """A hand-made engine with the sweep interface (codes as the engine's: c >= 0 the same side moves
    again in state c, c < 0 the turn passes to state -c-1, +-WIN the game ends), two rolls of one
    half each, swept in rank order:

    - state 0: roll 0 passes the turn to state 0 itself; on roll 1 the side may also move to state 1,
      the turn passing; state 1 is a win for whoever moves there, so the move is worth -1 and the
      side passes instead. Its value is 0, and v -> -v/2 + max(-v, -1)/2 = -v sweep after sweep.
    - state 1: a win on either roll (+1).
    - state 2: moves to state 0 keeping the turn (roll 0) or wins (roll 1): 0.5 + v0 / 2.
    """

    stored = False  # (its sweeps compute every outcome again)
    subset_sweeps = False
    hot_sets = False
    rolls = (([-1], [-1]), ([WIN], [WIN]), ([0], [WIN]))  # per state, per roll: the codes offered
    probability = (0.5, 0.5)

    def value(self, code: int, V: np.ndarray, g: float) -> float:
        if code == WIN:
            return 1.0
        if code == -WIN:
            return -1.0
        return g * V[code] if code >= 0 else -g * V[-code - 1]

    def backup(self, s: int, V: np.ndarray, g: float, policy: np.ndarray | None) -> float:
        total = 0.0
        for r, codes in enumerate(self.rolls[s]):
            offered = codes + ([-2] if s == 0 and r == 1 else [])  # the losing move from state 0
            best = max(offered, key=lambda c: self.value(c, V, g))
            if policy is not None:
                policy[s, r] = best
            total += self.probability[r] * self.value(best, V, g)
        return total

    def sweep(self, V: np.ndarray, threads: int = 1, start: int = 0, stop: int = -1, policy: np.ndarray | None = None,
              discount: float = 1.0, write: bool = True) -> float:
        stop = V.shape[0] if stop < 0 else stop
        worst = 0.0
        for s in range(start, stop):
            new = self.backup(s, V, discount, policy)
            worst = max(worst, float(abs(new - V[s])))
            if write:
                V[s] = new
        return worst

    def evaluate(self, policy: np.ndarray, V: np.ndarray, threads: int = 1, discount: float = 1.0) -> float:
        worst = 0.0
        for s in range(V.shape[0]):
            new = sum(p * self.value(int(policy[s, r]), V, discount) for r, p in enumerate(self.probability))
            worst = max(worst, float(abs(new - V[s])))
            V[s] = new
        return worst


def undiscounted_walk(tmp_path, values: np.ndarray, max_sweeps: int) -> tuple[float, int]:
    tmp_path.mkdir(exist_ok=True)  # where the walk checkpoints
    residual, sweeps, _, _, _ = run_walk(ThreeStates(), tmp_path, values, {}, 1e-6, 1, max_sweeps,
                                      np.zeros((3, 2), dtype=np.int32), 0, 0, 0, len(WALK_DISCOUNTS), 0.0, False, None)
    return residual, sweeps


def test_the_fake_engine_flips_without_damping() -> None:
    v = np.array([0.25, 1.0, 0.625])
    change = [ThreeStates().sweep(v) for _ in range(6)]
    assert change[1:] == [0.5] * 5 and abs(v[0]) == 0.25  # -0.25, +0.25, ... for ever


def test_the_undiscounted_walk_settles_a_value_that_flips(tmp_path, monkeypatch) -> None:
    values = np.array([0.25, 1.0, 0.625])
    residual, sweeps = undiscounted_walk(tmp_path, values, 50)
    assert residual < 1e-6 and sweeps < 10
    assert values.tolist() == [0.0, 1.0, 0.5]  # the exact values: averaging took v0 to 0 at once
    monkeypatch.setattr(walk, "WALK_FLIP_ROUNDS", 0)  # no damping: the flip never ends
    with pytest.raises(RuntimeError, match="no convergence"):
        undiscounted_walk(tmp_path / "off", np.array([0.25, 1.0, 0.625]), 50)


def test_plain_sweeps_settle_a_value_that_flips(tmp_path, monkeypatch) -> None:
    values = np.array([0.25, 1.0, 0.625])
    residual, sweeps, _ = _iterate(ThreeStates(), tmp_path, values, {}, 1e-6, 1, 50, 0, 0.0, False, None)
    assert residual < 1e-6 and sweeps < 10 and values.tolist() == [0.0, 1.0, 0.5]
    monkeypatch.setattr(walk, "WALK_FLIP_ROUNDS", 0)
    (tmp_path / "off").mkdir()
    with pytest.raises(RuntimeError, match="no convergence"):
        _iterate(ThreeStates(), tmp_path / "off", np.array([0.25, 1.0, 0.625]), {}, 1e-6, 1, 50, 0, 0.0,
                 False, None)


def test_flip_detector() -> None:
    f = Flip(3, 1.01)
    assert [f(c) for c in (1e-3, 1e-3, 1e-3)] == [False, False, True]
    # a damped sweep that worked (the next change cut to a tenth): counted again from there
    assert not f(1e-3, damped=True) and not f(1e-4) and not f(1e-4)
    assert f(0.995e-4)  # within 1%
    # one that did not (the next change more than half the damped one's): no flip, no more damping
    assert not f(1e-4, damped=True) and not f(0.9e-4)
    assert not any(f(0.9e-4) for _ in range(10))
    g = Flip(3, 1.01)
    assert not any(g(1e-3 * 0.98 ** k) for k in range(20))  # a change falling 2% a sweep is progress
    rising = Flip(3, 1.01)
    assert not any(rising(c) for c in (1e-3, 1.1e-3, 1.3e-3, 1.2e-3))  # the policy still moving: no flip
    rate = Flip(3, 1.01)
    assert [rate(1e-3 * 0.9 ** k, 0.9) for k in range(3)] == [False, False, True]  # at the discount's rate
    h = Flip(3, 1.01)
    assert not any(h(c) for c in (0.0, 0.0, 0.0))  # nothing changed: nothing to damp
    off = Flip(0, 1.01)
    assert not any(off(1e-3) for _ in range(5))


def test_the_mirror_makes_such_positions_on_the_test_board(tmp_path) -> None:
    """Why it matters: with the mirror a pass can lead to the position itself (its twin with the sides
    swapped), which without the mirror is a pair of positions that a sweep settles at once."""
    for mirror, expected in ((True, True), (False, False)):
        o = symmetric_options(tmp_path, 4, mirror=mirror)
        game = kernel(o)
        g = range_graph(game, 0, game.state_count, 1)
        found = any(-(s + 1) in g.roll_codes(s, r) for s in range(game.state_count) for r in range(len(o.dice.rolls)))
        assert found is expected


def test_a_discounted_stage_damps_a_flip_that_only_the_discount_shrinks(tmp_path, monkeypatch) -> None:
    """From the first stage (1 - discount 0.01): the flip shrinks by 0.99 a sweep, exactly the rate
    that nothing but the discount explains, so the walk damps it there too and the stage ends at once;
    without the damping the first stage runs until 0.99 to the power of its sweeps has done it."""

    def first_stage(root, on: bool) -> list[str]:
        root.mkdir()
        monkeypatch.setattr(walk, "WALK_FLIP_ROUNDS", 3 if on else 0)
        said: list[str] = []
        try:
            run_walk(ThreeStates(), root, np.array([0.25, 1.0, 0.625]), {}, 1e-6, 1, 300, np.zeros((3, 2), dtype=np.int32),
                  0, 0, 0, 0, 0.0, False, said.append)
        except RuntimeError:
            assert not on  # without damping the undiscounted stage never ends
        return [line for line in said if "(1 - discount 0.01)" in line]

    damped, plain = first_stage(tmp_path / "on", True), first_stage(tmp_path / "off", False)
    assert any("damped" in line for line in damped) and not any("damped" in line for line in plain)
    assert 2 * len(damped) < len(plain)  # 9 rounds against 29
