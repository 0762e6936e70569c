"""The horse race solver against (1) a literal model with a skip counter per player solved by
plain value iteration, (2) independent finishing times (no ability), (3) forward enumeration of
the race length, and (4) seeded Monte Carlo games played turn by turn."""
from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ulus.race import (
    RaceConfig,
    expected_rounds,
    load_solution,
    make_config,
    rank,
    rounds_distribution,
    save_solution,
    sing_summary,
    solve_or_load,
    solve_race,
)
from gamesolver.games.ulus.shagai import face_probabilities
from gamesolver.solver.errors import InputError


def steps(p: float, n: int = 4) -> list[float]:
    return [comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


# ---------------------------------------------------------------- literal reference model
def literal_values(cfg: RaceConfig, tol: float = 1e-14) -> dict:
    """Value iteration over (positions, turn, song used, skips left per player).

    Before every turn Alun Gua (if playing and the song is unused) may sing: every opponent's
    skip counter becomes ``missed_turns``. A player whose counter is positive loses the turn
    (counter - 1); otherwise rolls."""
    N, L, a = cfg.players, cfg.length, cfg.alun_gua
    q = steps(cfg.p, cfg.shagai)
    states = []
    for pos in itertools.product(range(L), repeat=N):
        for t in range(N):
            for used in ((False, True) if a is not None else (True,)):
                skip_sets = [(0,) * N] if not used else itertools.product(range(cfg.missed_turns + 1), repeat=N)
                for sk in skip_sets:
                    if a is not None and sk[a]:
                        continue
                    states.append((pos, t, used, tuple(sk)))
    V = {s: np.zeros(N) for s in states}

    def play(pos, t, used, sk):
        """Value once the decision before turn t is made."""
        nt = (t + 1) % N
        if sk[t] > 0:
            sk2 = list(sk)
            sk2[t] -= 1
            return V[(pos, nt, used, tuple(sk2))]
        out = np.zeros(N)
        for k, qk in enumerate(q):
            if pos[t] + k >= L:
                out[t] += qk
            else:
                p2 = list(pos)
                p2[t] += k
                out += qk * V[(tuple(p2), nt, used, sk)]
        return out

    for _ in range(5000):
        delta = 0.0
        for s in states:
            pos, t, used, sk = s
            v = play(pos, t, used, sk)
            if not used:
                sung = tuple(cfg.missed_turns if i != a else 0 for i in range(N))
                v_sing = play(pos, t, True, sung)
                if v_sing[a] >= v[a] - 1e-9:
                    v = v_sing
            delta = max(delta, float(np.abs(v - V[s]).max()))
            V[s] = v
        if delta < tol:
            return V
    raise AssertionError("reference value iteration did not converge")


def compare_with_literal(cfg: RaceConfig) -> None:
    sol = solve_race(cfg)
    ref = literal_values(cfg)
    zero = (0,) * cfg.players
    for (pos, t, used, sk), v in ref.items():
        if sk != zero:
            continue
        got = sol.win(pos, t, ability=not used)
        np.testing.assert_allclose(got, v, atol=1e-9, err_msg=f"{pos} turn {t} used {used}")


@pytest.mark.parametrize(
    "players,length,p,chinggis,alun",
    [
        (2, 3, 0.135, None, 1),
        (2, 4, 0.25, 0, 1),
        (2, 5, 0.1, 1, 0),
        (3, 3, 0.25, 2, 0),
        (3, 4, 0.135, 0, 1),
        (3, 4, 0.095, None, None),
    ],
)
def test_solver_matches_literal_model(players, length, p, chinggis, alun) -> None:
    cfg = RaceConfig(players=players, length=length, p=p, chinggis=chinggis, alun_gua=alun, head_start=2)
    compare_with_literal(cfg)


@settings(max_examples=8, deadline=None)
@given(
    length=st.integers(3, 5),
    p=st.floats(0.1, 0.6),
    roles=st.permutations([0, 1, None, None]),
)
def test_solver_matches_literal_model_random(length, p, roles) -> None:
    chinggis = roles.index(0) if 0 in roles[:2] else None
    alun = roles.index(1) if 1 in roles[:2] else None
    cfg = RaceConfig(players=2, length=length, p=p, chinggis=chinggis, alun_gua=alun)
    compare_with_literal(cfg)


# ---------------------------------------------------------------- independent finishing times
def finish_cdf(p: float, need: int, r: int, n: int = 4) -> float:
    """P(a horse needing ``need`` sites has finished within r of its own turns)."""
    if need <= 0:
        return 1.0
    return 1.0 - sum(comb(n * r, k) * p**k * (1 - p) ** (n * r - k) for k in range(min(need, n * r + 1)))


def win_by_finish_times(cfg: RaceConfig, pos: tuple[int, ...]) -> np.ndarray:
    """Player 0 rolls first. Player i wins in round r iff it finishes on its r-th turn, players
    before it have not finished after r turns and players after it not after r - 1 turns."""
    N = cfg.players
    out = np.zeros(N)
    for r in range(1, 3000):
        for i in range(N):
            need = cfg.length - pos[i]
            pr = finish_cdf(cfg.p, need, r) - finish_cdf(cfg.p, need, r - 1)
            for j in range(N):
                if j != i:
                    pr *= 1.0 - finish_cdf(cfg.p, cfg.length - pos[j], r if j < i else r - 1)
            out[i] += pr
    return out


@pytest.mark.parametrize("players,preset,camel,chinggis", [(2, "gmit-2018", False, 0), (4, "uniform", True, 2),
                                                           (5, "narrow-10", False, None)])
def test_no_ability_matches_finishing_times(players, preset, camel, chinggis) -> None:
    probs = face_probabilities(preset)
    cfg = make_config(players, 9, probs, camel, None if chinggis is None else chinggis + 1)
    sol = solve_race(cfg)
    np.testing.assert_allclose(sol.win(cfg.start(), 0, ability=False), win_by_finish_times(cfg, cfg.start()), atol=1e-10)
    rng = np.random.default_rng(7)
    for _ in range(5):
        pos = tuple(int(x) for x in rng.integers(0, 9, players))
        np.testing.assert_allclose(sol.win(pos, 0, ability=False), win_by_finish_times(cfg, pos), atol=1e-10)


# ---------------------------------------------------------------- race length
def rounds_by_enumeration(cfg: RaceConfig, rounds: int) -> list[float]:
    """Push the probability of every position vector forward round by round."""
    q = steps(cfg.p, cfg.shagai)
    alive = {cfg.start(): 1.0}
    ended = []
    for _ in range(rounds):
        nxt: dict[tuple[int, ...], float] = {}
        done = 0.0
        for pos, pr in alive.items():
            for ks in itertools.product(range(len(q)), repeat=cfg.players):
                w = pr
                for k in ks:
                    w *= q[k]
                new = tuple(x + k for x, k in zip(pos, ks))
                if max(new) >= cfg.length:
                    done += w
                else:
                    nxt[new] = nxt.get(new, 0.0) + w
        alive = nxt
        ended.append(done)
    return ended


@pytest.mark.parametrize("players,length,p,chinggis", [(2, 4, 0.135, 0), (3, 3, 0.25, None), (2, 6, 0.4, 1)])
def test_rounds_distribution_matches_enumeration(players, length, p, chinggis) -> None:
    cfg = RaceConfig(players=players, length=length, p=p, chinggis=chinggis)
    dist = rounds_distribution(cfg)
    enum = rounds_by_enumeration(cfg, 6)
    np.testing.assert_allclose(dist[:6], enum, atol=1e-12)
    assert dist.sum() == pytest.approx(1.0, abs=1e-12)


# ---------------------------------------------------------------- Monte Carlo, turn by turn
def simulate(cfg: RaceConfig, games: int, seed: int, sing_at_start: bool) -> tuple[np.ndarray, float]:
    """Play games literally (skip counters); return win frequencies and mean number of rounds."""
    rng = np.random.default_rng(seed)
    N, L, a = cfg.players, cfg.length, cfg.alun_gua
    wins = np.zeros(N)
    total_rounds = 0
    for _ in range(games):
        pos = list(cfg.start())
        skips = [0] * N
        if sing_at_start and a is not None:
            skips = [cfg.missed_turns if i != a else 0 for i in range(N)]
        turn, rnd = 0, 1
        while True:
            if skips[turn]:
                skips[turn] -= 1
            else:
                pos[turn] += int(rng.binomial(cfg.shagai, cfg.p))
                if pos[turn] >= L:
                    wins[turn] += 1
                    break
            turn = (turn + 1) % N
            rnd += turn == 0
        total_rounds += rnd
    return wins / games, total_rounds / games


def test_monte_carlo_with_song() -> None:
    cfg = make_config(4, 9, face_probabilities("gmit-2018"), chinggis=1, alun_gua=3)
    sol = solve_race(cfg)
    n = 20_000
    freq, _ = simulate(cfg, n, seed=2024, sing_at_start=True)
    exact = sol.win(cfg.start(), 0, ability=True)
    tol = 5 * np.sqrt(exact * (1 - exact) / n)
    assert np.all(np.abs(freq - exact) <= tol), (freq, exact)


def test_monte_carlo_race_length() -> None:
    cfg = make_config(3, 9, face_probabilities("uniform"), camel=True, chinggis=2)
    n = 20_000
    freq, mean_rounds = simulate(cfg, n, seed=99, sing_at_start=False)
    dist = rounds_distribution(cfg)
    r = np.arange(1, dist.size + 1)
    sd = np.sqrt((dist * r**2).sum() - expected_rounds(cfg) ** 2)
    assert abs(mean_rounds - expected_rounds(cfg)) <= 5 * sd / np.sqrt(n)
    exact = solve_race(cfg).win(cfg.start(), 0, ability=False)
    assert np.all(np.abs(freq - exact) <= 5 * np.sqrt(exact * (1 - exact) / n))


# ---------------------------------------------------------------- properties and the table
def test_singing_early_is_never_worse() -> None:
    """Waiting is never strictly better; singing is urgent only before a finishing-range opponent."""
    for players in (2, 3, 4):
        cfg = make_config(players, 9, face_probabilities("narrow-10"), chinggis=1, alun_gua=players)
        s = sing_summary(solve_race(cfg))
        assert s["waiting_better"] == 0
        assert s["must_sing_now"] > 0
        assert s["only_before_opponent_in_reach"]


def test_win_probabilities_sum_to_one_and_headstart_helps() -> None:
    cfg = make_config(3, 9, face_probabilities("gmit-2018"), chinggis=3, alun_gua=1)
    sol = solve_race(cfg)
    assert np.allclose(sol.free.sum(axis=2), 1.0)
    assert sol.held is not None and np.allclose(sol.held.sum(axis=2), 1.0)
    plain = solve_race(make_config(3, 9, face_probabilities("gmit-2018")))
    assert sol.win(cfg.start(), 0, False)[2] > plain.win((0, 0, 0), 0, False)[2]


def test_rank_is_mixed_radix() -> None:
    assert rank((1, 2, 3), 9) == 1 + 2 * 9 + 3 * 81


def test_table_round_trip(tmp_path) -> None:
    cfg = make_config(3, 6, face_probabilities("uniform"), chinggis=1, alun_gua=2)
    sol, where = solve_or_load(cfg, tmp_path, save=True)
    assert "saved" in where
    again, where2 = solve_or_load(cfg, tmp_path, save=True)
    assert where2.startswith("opened")
    for name in ("free", "held", "sing_value", "wait_value"):
        np.testing.assert_array_equal(getattr(sol, name), getattr(again, name))
    other = make_config(3, 6, face_probabilities("uniform"), chinggis=2, alun_gua=1)
    with pytest.raises(Exception):
        load_solution(save_solution(sol, tmp_path / "t"), other)


@pytest.mark.parametrize(
    "kwargs",
    [dict(players=7), dict(players=1), dict(players=3, chinggis=4), dict(players=3, chinggis=2, alun_gua=2),
     dict(players=2, length=2), dict(players=3, face_probs=(Fraction(0), Fraction(0), Fraction(1, 2), Fraction(1, 2)))],
)
def test_bad_race_options(kwargs) -> None:
    with pytest.raises(InputError):
        make_config(**kwargs)
