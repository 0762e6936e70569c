"""The Naadam horse race (and its Camel Race variant) solved exactly.

A state is the position of every horse (0 .. length-1; reaching ``length`` wins), whose turn
it is and whether Alun Gua still holds her ability. Positions pack into one mixed-radix index
``sum(pos[i] * length**i)``; the tables are numpy arrays indexed ``[position index, turn,
player]`` holding each player's win probability. Positions never go down, so states are solved
level by level (sum of positions) from the finish backwards; inside a level only rolls of zero
keep the state, which closes a cycle over the turns that is solved in closed form (no ability)
or by policy iteration (Alun Gua deciding when to sing).

Alun Gua's song makes every opponent miss their next two turns. Whenever she sings, the turns
that follow are exactly: she rolls twice with nobody else moving, then play resumes with the
player whose turn it was (when she sings before her own turn, that turn is the one that
resumes). So the pending skipped turns collapse to "two extra rolls for Alun Gua, now"; the
tests check this against a literal model that keeps a skip counter per player.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from fractions import Fraction
from math import comb
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from gamesolver.games.ulus.shagai import CAMEL, HORSE, face_probabilities, rules
from gamesolver.solver.errors import InputError, MissingTableError, TableError
from gamesolver.solver.tables.table import open_table, write_table

ENCODING = "ulus-race-mixed-radix"
ENCODING_VERSION = 1
# Alun Gua prefers to sing now when waiting is not better by more than this (ties are real:
# singing earlier is never worse, so they are broken towards singing).
TIE = 1e-12


@dataclass(frozen=True)
class RaceConfig:
    """One race: players in turn order (0-based here), track, the counted face's probability."""

    players: int
    length: int
    p: float  # probability that one shagai shows the counted face
    chinggis: int | None = None
    alun_gua: int | None = None
    face: str = "horse"
    shagai: int = 4
    head_start: int = 2
    missed_turns: int = 2

    @property
    def steps(self) -> np.ndarray:
        """Probability of moving 0..shagai sites in one roll."""
        n, p = self.shagai, self.p
        return np.array([comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)])

    def start(self) -> tuple[int, ...]:
        pos = [0] * self.players
        if self.chinggis is not None:
            pos[self.chinggis] = self.head_start
        return tuple(pos)

    def options(self) -> dict[str, Any]:
        return asdict(self)


def make_config(
    players: int,
    length: int | None = None,
    face_probs: Sequence[Fraction] | None = None,
    camel: bool = False,
    chinggis: int | None = None,
    alun_gua: int | None = None,
) -> RaceConfig:
    """Validate user options (players numbered from 1) and build a ``RaceConfig``."""
    r = rules()
    lo, hi = r["players"]["min"], r["players"]["max"]
    if not lo <= players <= hi:
        raise InputError(f"the horse race takes {lo} to {hi} players, got {players}")
    length = r["race"]["track_length"] if length is None else length
    if not 3 <= length <= 30:
        raise InputError(f"track length must be 3 to 30 sites, got {length}")
    for name, who in (("--chinggis", chinggis), ("--alun-gua", alun_gua)):
        if who is not None and not 1 <= who <= players:
            raise InputError(f"{name} must name a player from 1 to {players}, got {who}")
    if chinggis is not None and chinggis == alun_gua:
        raise InputError("Chinggis Khan and Alun Gua are different champions; give them different players")
    if length**players > 600_000:
        raise InputError(f"{players} players on a {length}-site track is too large a table; use a shorter --length")
    if face_probs is None:
        face_probs = face_probabilities()
    p = float(face_probs[CAMEL if camel else HORSE])
    if p <= 0:
        raise InputError(f"the {'camel' if camel else 'horse'} face has probability 0, so the race never ends; give it a positive probability")
    head = r["race"]["chinggis_head_start"]
    if head >= length:
        raise InputError(f"track length must be more than Chinggis Khan's head start of {head}")
    return RaceConfig(
        players=players,
        length=length,
        p=p,
        chinggis=None if chinggis is None else chinggis - 1,
        alun_gua=None if alun_gua is None else alun_gua - 1,
        face="camel" if camel else "horse",
        shagai=r["shagai_per_roll"],
        head_start=head,
        missed_turns=r["race"]["alun_gua_missed_turns"],
    )


def rank(pos: Sequence[int], length: int) -> int:
    """Mixed-radix index of a position vector."""
    return sum(int(x) * length**i for i, x in enumerate(pos))


def unrank(index: int, length: int, players: int) -> tuple[int, ...]:
    return tuple((index // length**i) % length for i in range(players))


@dataclass
class RaceSolution:
    """Win probabilities ``[position index, turn, player]`` without (``free``) and, when Alun Gua
    plays, with her ability still unused (``held``), plus her policy ``sing[index, turn]``."""

    config: RaceConfig
    free: np.ndarray
    held: np.ndarray | None = None
    sing_value: np.ndarray | None = None  # her win probability if she sings now
    wait_value: np.ndarray | None = None  # ... if she waits (and plays best later)
    seconds: float = 0.0

    def win(self, pos: Sequence[int], turn: int = 0, ability: bool = True) -> np.ndarray:
        """Each player's win probability from a position (player ``turn`` to roll)."""
        cfg = self.config
        if len(pos) != cfg.players or any(not 0 <= x < cfg.length for x in pos):
            raise InputError(
                f"positions must be {cfg.players} numbers from 0 to {cfg.length - 1} (a horse at {cfg.length} has won)"
            )
        if not 0 <= turn < cfg.players:
            raise InputError(f"turn must name a player from 1 to {cfg.players}")
        table = self.held if (ability and self.held is not None) else self.free
        return np.array(table[rank(pos, cfg.length), turn])


def _digits(cfg: RaceConfig) -> np.ndarray:
    idx = np.arange(cfg.length**cfg.players)
    return (idx[:, None] // (cfg.length ** np.arange(cfg.players))) % cfg.length


def _continuation(cfg: RaceConfig, rows: np.ndarray, digits: np.ndarray, table: np.ndarray) -> np.ndarray:
    """c[row, t, :]: value from the rolls of one or more sites by player t, moving to turn t+1."""
    N, L = cfg.players, cfg.length
    q = cfg.steps
    c = np.zeros((rows.size, N, N))
    for t in range(N):
        nxt = (t + 1) % N
        for k in range(1, q.size):
            moved = digits[rows, t] + k
            won = moved >= L
            c[won, t, t] += q[k]
            stay = ~won
            c[stay, t, :] += q[k] * table[rows[stay] + k * L**t, nxt, :]
    return c


def _close_cycle(c: np.ndarray, q0: float) -> np.ndarray:
    """Solve V[t] = c[t] + q0 * V[t+1] around the cycle of turns (closed form)."""
    n, N, _ = c.shape
    v = np.zeros_like(c)
    acc = np.zeros((n, N))
    for j in range(N):
        acc += q0**j * c[:, j, :]
    v[:, 0, :] = acc / (1.0 - q0**N)
    for t in range(N - 1, 0, -1):
        v[:, t, :] = c[:, t, :] + q0 * v[:, (t + 1) % N, :]
    return v


def _sing_now(cfg: RaceConfig, rows: np.ndarray, digits: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Value of singing before turn t: Alun Gua rolls ``missed_turns`` times alone, then turn t
    is played with the ability spent."""
    N, L, a = cfg.players, cfg.length, cfg.alun_gua
    assert a is not None, "only Alun Gua sings"
    q = cfg.steps
    # distribution of her total advance over the extra rolls, stopping once she has won
    dist = {0: 1.0}
    for _ in range(cfg.missed_turns):
        nd: dict[int, float] = {}
        for d, pr in dist.items():
            for k, qk in enumerate(q):
                nd[d + k] = nd.get(d + k, 0.0) + pr * qk
        dist = nd
    out = np.zeros((rows.size, N, N))
    base = digits[rows, a]
    # sequential rolls stop at the finish, but the total advance decides the same thing:
    # she has won iff the total reaches the finish (moves are never negative)
    for d, pr in dist.items():
        fin = base + d >= L
        out[fin, :, a] += pr
        stay = ~fin
        out[stay] += pr * free[rows[stay] + d * L**a]
    return out


def solve_race(cfg: RaceConfig) -> RaceSolution:
    """Solve the whole race exactly (both with and without Alun Gua's ability)."""
    t0 = time.perf_counter()
    N, L = cfg.players, cfg.length
    q0 = float(cfg.steps[0])
    digits = _digits(cfg)
    level = digits.sum(axis=1)
    order = np.argsort(-level, kind="stable")
    bounds = np.flatnonzero(np.diff(level[order])) + 1
    groups = np.split(order, bounds)
    size = L**N
    free = np.zeros((size, N, N))
    held: np.ndarray | None = None
    sing_v: np.ndarray | None = None
    wait_v: np.ndarray | None = None
    a = cfg.alun_gua
    if a is not None:
        held = np.zeros((size, N, N))
        sing_v = np.zeros((size, N))
        wait_v = np.zeros((size, N))
    for rows in groups:
        free[rows] = _close_cycle(_continuation(cfg, rows, digits, free), q0)
        if a is None:
            continue
        assert held is not None and sing_v is not None and wait_v is not None
        sing = _sing_now(cfg, rows, digits, free)
        c = _continuation(cfg, rows, digits, held)
        v, wait = _optimal_stopping(c, sing, q0, a)
        held[rows] = v
        sing_v[rows] = sing[:, :, a]
        wait_v[rows] = wait[:, :, a]
    return RaceSolution(cfg, free, held, sing_v, wait_v, time.perf_counter() - t0)


def _optimal_stopping(c: np.ndarray, sing: np.ndarray, q0: float, a: int) -> tuple[np.ndarray, np.ndarray]:
    """Alun Gua's choice before each turn of the cycle: sing now, or let turn t be played.

    Policy iteration: evaluate a policy exactly, switch wherever the other choice is better
    for her, repeat until nothing changes (at most a few rounds for a cycle of N turns)."""
    n, N, _ = c.shape
    nouse = _close_cycle(c, q0)
    use = np.asarray(sing[:, :, a] >= nouse[:, :, a] - TIE)
    for _ in range(4 * N + 8):
        v = nouse.copy()
        has = np.asarray(use.any(axis=1))
        # two backward sweeps propagate every waiting turn from the next singing turn
        for _sweep in range(2):
            for t in range(N - 1, -1, -1):
                cont = c[:, t, :] + q0 * v[:, (t + 1) % N, :]
                v[:, t, :] = np.where(use[:, t, None], sing[:, t, :], np.where(has[:, None], cont, v[:, t, :]))
        wait = c + q0 * np.roll(v, -1, axis=1)
        new = np.asarray(sing[:, :, a] >= wait[:, :, a] - TIE)
        if np.array_equal(new, use):
            return v, wait
        use = new
    raise RuntimeError("policy iteration for Alun Gua's song did not settle")  # pragma: no cover


def rounds_distribution(cfg: RaceConfig, tail: float = 1e-13) -> np.ndarray:
    """P(the race ends in round r) for r = 1, 2, ... (no ability used).

    After r turns a horse has moved Binomial(shagai * r, p) sites, and horses move
    independently, so P(nobody has finished after r rounds) is a product of binomial tails."""
    start = cfg.start()
    n, p = cfg.shagai, cfg.p
    survive = [1.0]
    r = 0
    while survive[-1] > tail and r < 100_000:
        r += 1
        s = 1.0
        for x in start:
            need = cfg.length - x  # sites still to go
            s *= sum(comb(n * r, k) * p**k * (1 - p) ** (n * r - k) for k in range(min(need, n * r + 1)))
        survive.append(s)
    surv = np.array(survive)
    return surv[:-1] - surv[1:]


def expected_rounds(cfg: RaceConfig) -> float:
    dist = rounds_distribution(cfg)
    return float(np.sum(np.arange(1, dist.size + 1) * dist))


def sing_summary(sol: RaceSolution) -> dict[str, Any]:
    """When must Alun Gua sing? States (ability unused) where singing now beats waiting."""
    cfg = sol.config
    assert sol.sing_value is not None and sol.wait_value is not None
    gain = sol.sing_value - sol.wait_value
    must = gain > TIE
    digits = _digits(cfg)
    a = cfg.alun_gua
    reach = cfg.length - cfg.shagai  # a horse at or past this can finish in one roll
    # is every "must sing now" state one where the next roller is an opponent who can finish?
    explained = True
    idx, turns = np.nonzero(must)
    if idx.size:
        opp = turns != a
        near = digits[idx, turns] >= reach
        explained = bool(np.all(opp & near))
    return {
        "states": int(gain.size),
        "must_sing_now": int(must.sum()),
        "waiting_better": int((gain < -TIE).sum()),
        "max_cost_of_waiting": float(gain.max(initial=0.0)),
        "only_before_opponent_in_reach": explained,
    }


def table_path(cache: Path, cfg: RaceConfig) -> Path:
    who = lambda x: "-" if x is None else str(x + 1)  # noqa: E731
    return cache / "ulus" / (
        f"race-{cfg.face}-n{cfg.players}-l{cfg.length}-p{cfg.p!r}-c{who(cfg.chinggis)}-a{who(cfg.alun_gua)}"
    )


def save_solution(sol: RaceSolution, path: Path) -> Path:
    cfg = sol.config
    arrays: dict[str, Any] = {"free": sol.free}
    if sol.held is not None:
        arrays.update(held=sol.held, sing_value=sol.sing_value, wait_value=sol.wait_value)
    return write_table(
        path,
        game="ulus",
        encoding=ENCODING,
        encoding_version=ENCODING_VERSION,
        state_count=cfg.length**cfg.players * cfg.players,
        arrays=arrays,
        options=cfg.options(),
        rule="race",
        meta={"layout": "[position index = sum(pos[i]*length**i), turn, player] -> win probability"},
        seconds=sol.seconds,
    )


def load_solution(path: Path, cfg: RaceConfig) -> RaceSolution:
    table = open_table(
        path,
        expect={"game": "ulus", "rule": "race", "encoding": ENCODING, "encoding_version": ENCODING_VERSION,
                "options": cfg.options()},
    )
    arr = table.arrays
    return RaceSolution(cfg, arr["free"], arr.get("held"), arr.get("sing_value"), arr.get("wait_value"),
                        float(table.header["created"]["seconds"] or 0.0))


def solve_or_load(cfg: RaceConfig, cache: Path | None, save: bool) -> tuple[RaceSolution, str]:
    """Open the cached table for ``cfg`` if there is a good one, else solve (and save if asked)."""
    if cache is not None:
        path = table_path(cache, cfg)
        try:
            return load_solution(path, cfg), f"opened {path}"
        except MissingTableError:
            pass
        except TableError:
            pass  # a stale or broken table is solved again and replaced below
    sol = solve_race(cfg)
    where = "solved now"
    if cache is not None and save:
        where = f"solved now, saved to {save_solution(sol, table_path(cache, cfg))}"
    return sol, where
