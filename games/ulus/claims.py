"""Checks for the Ulus claims in ``data/claims/ulus.json``.

Every check takes the claim's options as keyword arguments. Face probabilities come from named
presets (or four numbers); where a preset was measured, its throw counts (``throws``) give a
posterior over the face probabilities (flat Dirichlet prior, fixed seed), and a verdict that
hangs on measured numbers is "undetermined" when the posterior interval straddles the claim.
"""
from __future__ import annotations

import itertools
from dataclasses import replace
from fractions import Fraction
from math import factorial
from typing import Any, Sequence

import numpy as np

from gamesolver.games.claims import ClaimResult, dirichlet_draws, interval, verdict_from_interval
from gamesolver.games.ulus.fight import hand_to_hand
from gamesolver.games.ulus.race import RaceConfig, expected_rounds, make_config, sing_summary, solve_race
from gamesolver.games.ulus.shagai import (
    CAMEL, FACES, HORSE, NOMADIC, PATTERNS, check_faces, classify, face_probabilities, rules, tuulch_change,
)
from gamesolver.solver.errors import InputError

Preset = str | Sequence[float]
DEFAULT_PRESETS = ("uniform", "gmit-2018", "narrow-10")


def _probs(preset: Preset) -> tuple[Fraction, ...]:
    if isinstance(preset, str):
        return face_probabilities(preset)
    return check_faces([Fraction(str(x)) for x in preset])


def _label(preset: Preset) -> str:
    return preset if isinstance(preset, str) else "faces " + "/".join(str(x) for x in preset)


def _measured(presets: Sequence[Preset], throws: dict[str, Sequence[int]] | None) -> dict[str, Sequence[int]]:
    throws = throws or {}
    for name, counts in throws.items():
        if len(counts) != len(FACES):
            raise InputError(f"throws for {name} must be {len(FACES)} counts ({', '.join(FACES)}), got {list(counts)}")
    return {p: throws[p] for p in presets if isinstance(p, str) and p in throws}


def _throws_line(name: str, counts: Sequence[int]) -> str:
    return (f"{name}: {sum(counts)} throws measured: " + ", ".join(f"{f} {c}" for f, c in zip(FACES, counts))
            + " (flat Dirichlet prior, posterior Dirichlet(counts + 1))")


# the multinomial face counts of four shagai and their pattern, for vectorised pattern odds
_COUNTS = [c for c in itertools.product(range(5), repeat=4) if sum(c) == 4]
_WAYS = np.array([factorial(4) // np.prod([factorial(x) for x in c]) for c in _COUNTS], dtype=float)
_PATTERN_OF = np.array([PATTERNS.index(classify(c)) for c in _COUNTS])


def pattern_matrix(probs: np.ndarray) -> np.ndarray:
    """P(pattern) for each row of face probabilities (rows x patterns), in floating point."""
    probs = np.atleast_2d(probs)
    c = np.array(_COUNTS, dtype=float)
    per = _WAYS * np.prod(probs[:, None, :] ** c[None, :, :], axis=2)
    out = np.zeros((probs.shape[0], len(PATTERNS)))
    for j in range(len(PATTERNS)):
        out[:, j] = per[:, _PATTERN_OF == j].sum(axis=1)
    return out


def _race(players: int, length: int, p_face: float, camel: bool = False, **kw: Any) -> RaceConfig:
    """A race whose counted face has probability ``p_face``: ``make_config`` checks the players,
    track and champions; the probability is set afterwards because posterior draws are floats
    that need not come from a named preset."""
    probs = [Fraction(1, 4)] * 4
    cfg = make_config(players, length, probs, camel=camel, **kw)
    return replace(cfg, p=float(p_face))


# ---------------------------------------------------------------- the camel race


def camel_race_faster(players: int = 4, length: int = 9, presets: Sequence[Preset] = DEFAULT_PRESETS,
                      throws: dict[str, Sequence[int]] | None = None, draws: int = 2000, seed: int = 0,
                      level: float = 0.95) -> ClaimResult:
    """The rulebook offers the Camel Race as the faster race (Horse being hard to throw).

    Exact expected rounds of both races under each preset; for measured presets, the posterior
    interval of (horse rounds - camel rounds). The verdict rests on the measured presets (the
    others are assumptions, shown beside them); without one, on every preset agreeing."""
    evidence: list[str] = []
    figures: dict[str, Any] = {}
    unc: dict[str, Any] = {}
    verdicts = []
    measured = _measured(presets, throws)
    for preset in presets:
        probs = _probs(preset)
        name = _label(preset)
        eh = expected_rounds(_race(players, length, float(probs[HORSE])))
        ec = expected_rounds(_race(players, length, float(probs[CAMEL])))
        word = "the same race" if abs(eh - ec) < 1e-9 else ("camel race faster" if ec < eh else "camel race slower")
        figures[name] = {"p_horse": float(probs[HORSE]), "p_camel": float(probs[CAMEL]),
                         "horse_expected_rounds": eh, "camel_expected_rounds": ec}
        line = (f"{name}: horse face {float(probs[HORSE]):g} -> {eh:.2f} rounds expected; camel face "
                f"{float(probs[CAMEL]):g} -> {ec:.2f} rounds: {word}")
        if name in measured:
            post = dirichlet_draws(measured[name], draws, seed)
            grid = np.linspace(max(1e-3, post[:, [HORSE, CAMEL]].min()), post[:, [HORSE, CAMEL]].max(), 120)
            e = np.array([expected_rounds(_race(players, length, p)) for p in grid])
            saved = np.interp(post[:, HORSE], grid, e) - np.interp(post[:, CAMEL], grid, e)
            lo, hi = interval(saved, level)
            p_faster = float(np.mean(post[:, CAMEL] > post[:, HORSE]))
            v = verdict_from_interval(lo, hi)
            verdicts.append(v)
            line += (f"; rounds saved by the camel race, {level:.0%} interval {lo:+.2f} .. {hi:+.2f}, "
                     f"P(camel face more likely than horse) = {p_faster:.2f} -> {v}")
            evidence.append(_throws_line(name, measured[name]))
            unc[name] = {"throws": dict(zip(FACES, measured[name])), "rounds_saved_interval": [lo, hi],
                         "p_camel_faster": p_faster, "level": level}
        evidence.append(line)
    evidence.append(f"{players} players, {length}-site track, overshoot allowed, no champion abilities; "
                    "a race is faster when its expected number of rounds is smaller")
    if verdicts:
        status = ("verified" if all(v == "verified" for v in verdicts)
                  else "refuted" if all(v == "refuted" for v in verdicts) else "undetermined")
        first = next(iter(unc))
        lo, hi = unc[first]["rounds_saved_interval"]
        summary = (f"the measured throws ({first}: horse {measured[first][HORSE]}, camel {measured[first][CAMEL]} "
                   f"of {sum(measured[first])}) cannot tell: rounds saved {lo:+.2f} .. {hi:+.2f}"
                   if status == "undetermined" else
                   f"with the measured bones the camel race is {'faster' if status == 'verified' else 'slower'} "
                   f"(rounds saved {lo:+.2f} .. {hi:+.2f}, {level:.0%})")
        uncertainty = {"method": f"Dirichlet posterior over face probabilities from throw counts, {draws} draws, "
                                 f"seed {seed}, central {level:.0%} interval", **unc}
    else:
        faster = [figures[_label(p)]["camel_expected_rounds"] < figures[_label(p)]["horse_expected_rounds"] - 1e-9
                  for p in presets]
        status = "verified" if all(faster) else "refuted" if not any(faster) else "undetermined"
        summary = {"verified": "the camel race is faster under every preset",
                   "refuted": "the camel race is not faster under any preset",
                   "undetermined": "the answer depends on the face probabilities"}[status]
        uncertainty = None
    return ClaimResult(status, summary, evidence, figures, uncertainty)


# ---------------------------------------------------------------- champions in the race


def _horse_interval(preset: Preset, measured: dict[str, Sequence[int]], draws: int, seed: int,
                    level: float) -> list[float]:
    """The horse-face probabilities to evaluate: the preset's, and for a measured preset also
    the ends of the posterior interval (the race depends on nothing else)."""
    p = float(_probs(preset)[HORSE])
    if isinstance(preset, str) and preset in measured:
        lo, hi = interval(dirichlet_draws(measured[preset], draws, seed)[:, HORSE], level)
        return [p, lo, hi]
    return [p]


def chinggis_head_start(players: Sequence[int] = (2, 3, 4), length: int = 9,
                        presets: Sequence[Preset] = DEFAULT_PRESETS, head_start: int = 2,
                        throws: dict[str, Sequence[int]] | None = None, draws: int = 2000, seed: int = 0,
                        level: float = 0.95) -> ClaimResult:
    """Chinggis Khan's Horsemanship (starting ``head_start`` sites ahead) is an advantage: his win
    chance with the head start against without it, in every seat, player count and preset."""
    measured = _measured(presets, throws)
    evidence, rows = [], {}
    gains = []
    for preset in presets:
        name = _label(preset)
        for n in players:
            parts = []
            for seat in range(n):
                g_all = []
                for p in _horse_interval(preset, measured, draws, seed, level):
                    cfg = replace(_race(n, length, p, chinggis=seat + 1), head_start=head_start)
                    plain = replace(cfg, chinggis=None)
                    with_ = solve_race(cfg).win(cfg.start(), 0, ability=False)[seat]
                    without = solve_race(plain).win(plain.start(), 0, ability=False)[seat]
                    g_all.append((float(with_), float(without)))
                w, wo = g_all[0]
                gain_range = [a - b for a, b in g_all]
                gains.extend(gain_range)
                rows[f"{name}/{n}p/seat{seat + 1}"] = {"with": w, "without": wo, "gain_range": gain_range}
                rng = f" [{min(gain_range):+.3f}..{max(gain_range):+.3f}]" if len(g_all) > 1 else ""
                parts.append(f"seat {seat + 1} {wo:.3f}->{w:.3f}{rng}")
            evidence.append(f"{name}, {n} players: " + "; ".join(parts))
    for m, counts in measured.items():
        evidence.append(_throws_line(m, counts) + "; [..] = gain at the ends of the horse face's interval")
    evidence.append(f"{length}-site track, head start {head_start} sites, seats in turn order, no other ability")
    lo = min(gains)
    if lo > 1e-12:
        status, summary = "verified", (f"the head start raises his win chance in every seat, player count and preset "
                                       f"(by {lo:+.3f} at the least, {max(gains):+.3f} at most)")
    elif max(gains) < -1e-12:
        status, summary = "refuted", "the head start lowers his win chance everywhere"
    else:
        status = "refuted"
        summary = f"the head start does not help everywhere (gain from {lo:+.3f} to {max(gains):+.3f})"
    unc = ({"method": f"win chances at the ends of the {level:.0%} posterior interval of the horse face "
                      f"(Dirichlet, {draws} draws, seed {seed})", "throws": {k: list(v) for k, v in measured.items()}}
           if measured else None)
    return ClaimResult(status, summary, evidence, {"win": rows}, unc)


def alun_gua_song(players: Sequence[int] = (2, 3, 4), length: int = 9,
                  presets: Sequence[Preset] = DEFAULT_PRESETS, missed_turns: int = 2,
                  throws: dict[str, Sequence[int]] | None = None, draws: int = 2000, seed: int = 0,
                  level: float = 0.95) -> ClaimResult:
    """Alun Gua's Horse Whispering (every opponent misses ``missed_turns`` turns, once) helps her:
    her win chance with the song against without, per seat, and when she should sing. A measured
    preset is also solved at the ends of the horse face's posterior interval."""
    measured = _measured(presets, throws)
    evidence: list[str] = []
    figures: dict[str, Any] = {}
    gains: list[float] = []
    always_explained = True
    for preset in presets:
        name = _label(preset)
        for n in players:
            parts = []
            for seat in range(n):
                seat_gains = []
                for k, p in enumerate(_horse_interval(preset, measured, draws, seed, level)):
                    cfg = replace(_race(n, length, p, alun_gua=seat + 1), missed_turns=missed_turns)
                    sol = solve_race(cfg)
                    w = float(sol.win(cfg.start(), 0, ability=True)[seat])
                    wo = float(sol.win(cfg.start(), 0, ability=False)[seat])
                    seat_gains.append(w - wo)
                    sung = sing_summary(sol)
                    always_explained &= sung["only_before_opponent_in_reach"]
                    if k == 0:
                        figures[f"{name}/{n}p/seat{seat + 1}"] = {"with": w, "without": wo, **sung}
                        text = f"seat {seat + 1} {wo:.3f}->{w:.3f}"
                gains.extend(seat_gains)
                if len(seat_gains) > 1:
                    text += f" [{min(seat_gains):+.3f}..{max(seat_gains):+.3f}]"
                figures[f"{name}/{n}p/seat{seat + 1}"]["gain_range"] = [min(seat_gains), max(seat_gains)]
                parts.append(text)
            evidence.append(f"{name}, {n} players: " + "; ".join(parts))
    for m, counts in measured.items():
        evidence.append(_throws_line(m, counts) + "; [..] = gain at the ends of the horse face's interval")
    moment = ("she should hold the song until an opponent about to roll can finish with that roll, and sing "
              "then; earlier or later is never better" if always_explained else
              "the best moment is not always 'just before an opponent who can finish'")
    evidence.append(f"best moment (exact optimal stopping over every state): {moment}")
    evidence.append(f"{length}-site track, song = every opponent misses {missed_turns} turns, used at most once")
    lo = min(gains)
    if lo > 1e-12:
        status = "verified"
        summary = (f"the song raises her win chance in every seat (by {lo:+.3f} to {max(gains):+.3f}); "
                   + moment.split(";")[0])
    else:
        status = "refuted"
        summary = f"the song does not help in every seat (gain {lo:+.3f} to {max(gains):+.3f})"
    figures["best_moment_is_before_an_opponent_in_reach"] = always_explained
    unc = ({"method": f"win chances at the ends of the {level:.0%} posterior interval of the horse face "
                      f"(Dirichlet, {draws} draws, seed {seed})", "throws": {k: list(v) for k, v in measured.items()}}
           if measured else None)
    return ClaimResult(status, summary, evidence, figures, unc)


def fewest_assets_first(players: Sequence[int] = (2, 3, 4), length: int = 9,
                        presets: Sequence[Preset] = DEFAULT_PRESETS, throws: dict[str, Sequence[int]] | None = None,
                        draws: int = 2000, seed: int = 0, level: float = 0.95) -> ClaimResult:
    """The player with the fewest asset cards starts the race: read as a catch-up, the first seat
    must have the best chance. Win chance by seat without abilities; a measured preset is also
    solved at the ends of the horse face's posterior interval."""
    measured = _measured(presets, throws)
    evidence, figures, edges = [], {}, []
    for preset in presets:
        name = _label(preset)
        for n in players:
            seat_edges = []
            for k, p in enumerate(_horse_interval(preset, measured, draws, seed, level)):
                cfg = _race(n, length, p)
                win = solve_race(cfg).win(cfg.start(), 0, ability=False)
                seat_edges.append(float(win[0] - win[1:].max()))
                if k == 0:
                    figures[f"{name}/{n}p"] = [float(x) for x in win]
                    text = (f"{name}, {n} players: " + ", ".join(f"seat {i + 1} {x:.3f}" for i, x in enumerate(win))
                            + f"  (even share {1 / n:.3f}; first seat's lead over the next best {seat_edges[0]:+.3f}")
            edges.extend(seat_edges)
            if len(seat_edges) > 1:
                text += f", {min(seat_edges):+.3f}..{max(seat_edges):+.3f} over the horse face's interval"
            evidence.append(text + ")")
    for m, counts in measured.items():
        evidence.append(_throws_line(m, counts))
    evidence.append(f"{length}-site track, first to reach the finish wins, overshoot allowed")
    unc = ({"method": f"win chances at the ends of the {level:.0%} posterior interval of the horse face "
                      f"(Dirichlet, {draws} draws, seed {seed})", "throws": {k: list(v) for k, v in measured.items()}}
           if measured else None)
    lo = min(edges)
    if lo > 1e-12:
        return ClaimResult("verified", f"starting first is an edge in every case, {lo:+.3f} to {max(edges):+.3f} "
                                       "win chance over the next seat: a small catch-up", evidence, figures, unc)
    return ClaimResult("refuted", f"the first seat is not always best (lead {lo:+.3f})", evidence, figures, unc)


# ---------------------------------------------------------------- monsters


def nomadic_outcomes(strength: int, power: int, second_power: int) -> tuple[np.ndarray, np.ndarray]:
    """For a champion who rolls for help first: per pattern (``PATTERNS`` order) whether the asset
    is won (1/0) and the strength left. Immunity and the automatic win keep the strength; the
    fight patterns fight the monster; three or more goats add a second monster of
    ``second_power``. ``fight`` gives the same in exact fractions; this form lets a whole
    posterior of face probabilities be scored at once (``pattern_matrix(draws) @ outcomes``)."""
    won, left = hand_to_hand(strength, power)
    won2, left2 = hand_to_hand(strength, power + second_power)
    asset: list[float] = []
    after: list[float] = []
    for name in PATTERNS:
        meaning = NOMADIC[name]
        if meaning in ("immune", "automatic win"):
            gain, kept = 1.0, float(strength)
        elif meaning == "fight":
            gain, kept = float(won), float(left)
        else:
            gain, kept = float(won2), float(left2)
        asset.append(gain)
        after.append(kept)
    return np.array(asset), np.array(after)


def _face_rows(presets: Sequence[Preset], measured: dict[str, Sequence[int]], draws: int,
               seed: int) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """Per preset: its pattern probabilities (1 row) and, if measured, the posterior's (draws rows)."""
    out = {}
    for preset in presets:
        name = _label(preset)
        point = pattern_matrix(np.array([float(x) for x in _probs(preset)]))
        post = pattern_matrix(dirichlet_draws(measured[name], draws, seed)) if name in measured else None
        out[name] = (point, post)
    return out


def roll_for_help(strengths: Sequence[int] = tuple(range(0, 31)), multipliers: Sequence[int] = (1, 2, 3, 4),
                  players: Sequence[int] = (2, 3, 4, 5, 6), presets: Sequence[Preset] = DEFAULT_PRESETS,
                  asset_value: int = 10, throws: dict[str, Sequence[int]] | None = None, draws: int = 2000,
                  seed: int = 0, level: float = 0.95) -> ClaimResult:
    """Asking the god for help (rolling four shagai before a fight) pays for a champion who would
    lose the fight alone; where the champion would win alone, when it still pays.

    "Pays" = more expected points (asset value x P(asset) + strength left, as scored at the end).
    For a measured preset the smallest gain over the losing cases gets a posterior interval."""
    measured = _measured(presets, throws)
    cases = [(st, m * n) for st in strengths for m in multipliers for n in players]
    if not cases:
        raise InputError("the grid of strengths, multipliers and players is empty")
    worth = np.array([asset_value * a + b for a, b in (nomadic_outcomes(st, pw, pw) for st, pw in cases)]).T
    alone = np.array([st > pw for st, pw in cases])
    fight_points = np.array([asset_value + st - pw if st > pw else 0.0 for st, pw in cases])
    margin_at = np.array([st - pw for st, pw in cases])
    evidence, figures, unc, verdicts = [], {}, {}, []
    for name, (point, post) in _face_rows(presets, measured, draws, seed).items():
        gain = (point @ worth - fight_points)[0]
        pays = gain > 1e-12
        lose_roll, win_roll = int(pays[~alone].sum()), int(pays[alone].sum())
        largest = int(margin_at[alone & pays].max()) if (alone & pays).any() else None
        figures[name] = {"losing_cases": int((~alone).sum()), "roll_pays_losing": lose_roll,
                         "winning_cases": int(alone.sum()), "roll_pays_winning": win_roll,
                         "largest_margin_where_rolling_pays": largest,
                         "smallest_gain_losing": float(gain[~alone].min()) if (~alone).any() else None}
        line = (f"{name}: would lose alone in {int((~alone).sum())} cases, rolling pays in {lose_roll}; would win "
                f"alone in {int(alone.sum())}, rolling still pays in {win_roll}"
                + (f" (up to a strength margin of {largest})" if largest is not None else ""))
        verdict = "verified" if lose_roll == (~alone).sum() else "refuted"
        if post is not None and (~alone).any():
            least = (post @ worth - fight_points)[:, ~alone].min(axis=1)
            lo, hi = interval(least, level)
            verdict = verdict_from_interval(lo, hi, 1e-12) if verdict == "verified" else verdict
            unc[name] = {"smallest_gain_losing_interval": [lo, hi], "throws": dict(zip(FACES, measured[name]))}
            line += f"; smallest gain when losing alone, {level:.0%} interval {lo:+.3f} .. {hi:+.3f} points"
            evidence.append(_throws_line(name, measured[name]))
        verdicts.append(verdict)
        evidence.append(line)
    evidence.append(f"grid: strength {min(strengths)}-{max(strengths)}, monster multiplier {list(multipliers)}, "
                    f"players {list(players)}, summer, asset worth {asset_value}; a second monster (three or more "
                    "goats) has the first one's multiplier")
    uncertainty = ({"method": f"Dirichlet posterior from throw counts, {draws} draws, seed {seed}", **unc}
                   if unc else None)
    status = "refuted" if "refuted" in verdicts else ("undetermined" if "undetermined" in verdicts else "verified")
    if status == "verified":
        won = "; ".join(f"{k} {v['roll_pays_winning']}/{v['winning_cases']}" for k, v in figures.items())
        summary = ("whenever the fight alone is lost, rolling for help gives more expected points under every "
                   f"preset; with a win in hand it still pays in ({won}) cases")
    elif status == "undetermined":
        summary = "the measured throws leave it open whether rolling pays in every lost-alone fight"
    else:
        summary = "there are lost-alone fights where rolling for help does not pay"
    return ClaimResult(status, summary, evidence, figures, uncertainty)


def monsters_stronger(players: Sequence[int] = (2, 3, 4, 5, 6), multipliers: Sequence[int] = (1, 2, 3, 4, 5),
                      strength: int = 10, winter_bonus: int | None = None,
                      presets: Sequence[Preset] = ("gmit-2018",), throws: dict[str, Sequence[int]] | None = None,
                      draws: int = 2000, seed: int = 0) -> ClaimResult:
    """More players and Winter make monsters stronger: a champion's chance of taking the asset
    (choosing the better of fighting alone and rolling first) never rises as players are added
    or in Winter, and falls somewhere, for a monster whose multiplier is drawn evenly from
    ``multipliers``. For a measured preset it must hold in every posterior draw."""
    wb = int(rules()["winter_multiplier_bonus"]) if winter_bonus is None else winter_bonus
    if any(m + wb < 1 for m in multipliers):
        raise InputError(f"winter_bonus {wb} makes a monster of multiplier {min(multipliers)} powerless")
    measured = _measured(presets, throws)

    def chance(pm: np.ndarray, bonus: int) -> np.ndarray:
        """P(asset) per row of pattern probabilities and per player count (rows x players)."""
        out = np.zeros((pm.shape[0], len(players)))
        for j, n in enumerate(players):
            for m in multipliers:
                power = (m + bonus) * n
                asset, _ = nomadic_outcomes(strength, power, power)
                out[:, j] += np.maximum(float(strength > power), pm @ asset)
        return out / len(multipliers)

    def judge(pm: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s, w = chance(pm, 0), chance(pm, wb)
        rise = np.maximum(np.diff(s, axis=1).max(axis=1, initial=-1), np.diff(w, axis=1).max(axis=1, initial=-1))
        winter_rise = (w - s).max(axis=1)
        strict = (np.diff(s, axis=1) < -1e-12).any(axis=1) & ((w - s) < -1e-12).any(axis=1)
        return np.maximum(rise, winter_rise) <= 1e-12, strict, s

    evidence, figures, unc = [], {}, {}
    holds_all = True
    for name, (point, post) in _face_rows(presets, measured, draws, seed).items():
        ok, strict, _ = judge(point)
        s, w = chance(point, 0)[0], chance(point, wb)[0]
        figures[name] = {"summer": s.tolist(), "winter": w.tolist()}
        holds_all &= bool(ok[0] and strict[0])
        evidence.append(f"{name}: P(asset) by players {list(players)}: summer "
                        + " ".join(f"{x:.3f}" for x in s) + "; winter " + " ".join(f"{x:.3f}" for x in w))
        if post is not None:
            ok_p, strict_p, _ = judge(post)
            share = float(np.mean(ok_p & strict_p))
            holds_all &= share == 1.0
            unc[name] = {"share_of_draws_where_it_holds": share, "throws": dict(zip(FACES, measured[name]))}
            evidence.append(_throws_line(name, measured[name]) + f"; holds in {100 * share:.1f} % of {draws} draws")
    evidence.append(f"champion strength {strength}; monster multiplier drawn evenly from {list(multipliers)}; "
                    f"power = multiplier x players, Winter adds {wb} to the multiplier; the better of rolling and "
                    "fighting alone")
    uncertainty = ({"method": f"Dirichlet posterior from throw counts, {draws} draws, seed {seed}", **unc}
                   if unc else None)
    if holds_all:
        steps = sum(int(np.sum(np.diff(np.array(t["summer"])) < -1e-12)) for t in figures.values())
        every = sum(len(players) - 1 for _ in figures)
        return ClaimResult("verified", f"more players and Winter never make a monster easier; an added player lowers "
                                       f"the chance of the asset in {steps} of {every} steps, Winter at every count",
                           evidence, figures, uncertainty)
    return ClaimResult("refuted", "more players or Winter do not always make monsters stronger", evidence, figures,
                       uncertainty)


# ---------------------------------------------------------------- Tuul'ch


def tuulch_decides_fate(presets: Sequence[Preset] = DEFAULT_PRESETS, throws: dict[str, Sequence[int]] | None = None,
                        strength: int = 10, draws: int = 2000, seed: int = 0, level: float = 0.95) -> ClaimResult:
    """Tuul'ch's encounter "may decide their fate": read as "two champions level before Tuul'ch
    are more likely than not to leave apart" (strength counts as points at the end)."""
    measured = _measured(presets, throws)
    deltas = np.array([tuulch_change(p, strength) for p in PATTERNS], dtype=float)
    values = sorted(set(deltas.tolist()))
    evidence, figures, unc = [], {}, {}
    verdicts = []
    for preset in presets:
        name = _label(preset)
        probs = np.array([float(x) for x in _probs(preset)])
        dist = _change_distribution(pattern_matrix(probs), deltas, values)[0]
        apart = 1 - float(np.sum(dist**2))
        mean = float(dist @ np.array(values))
        figures[name] = {"distribution": dict(zip(map(str, values), dist.tolist())), "p_apart": apart, "mean": mean}
        line = (f"{name}: strength change " + ", ".join(f"{v:+g}: {q:.3f}" for v, q in zip(values, dist))
                + f"; mean {mean:+.2f}; two level champions end apart with P = {apart:.3f}")
        if name in measured:
            post = dirichlet_draws(measured[name], draws, seed)
            d = _change_distribution(pattern_matrix(post), deltas, values)
            lo, hi = interval(1 - np.sum(d**2, axis=1), level)
            v = verdict_from_interval(lo, hi, 0.5)
            verdicts.append(v)
            line += f" ({level:.0%} interval {lo:.3f}-{hi:.3f}) -> {v}"
            evidence.append(_throws_line(name, measured[name]))
            unc[name] = {"p_apart_interval": [lo, hi], "throws": dict(zip(FACES, measured[name]))}
        else:
            verdicts.append("verified" if apart > 0.5 else "refuted")
        evidence.append(line)
    evidence.append(f"starting strength {strength} (strength never drops below 0); a swing of up to "
                    f"{max(values) - min(values):g} points between two champions, plus asset swaps and discards")
    status = verdicts[0] if len(set(verdicts)) == 1 else "undetermined"
    summary = {"verified": "under every preset Tuul'ch more likely than not separates two level champions",
               "refuted": "Tuul'ch more often leaves two level champions level",
               "undetermined": "whether Tuul'ch separates two level champions depends on the face "
                               "probabilities"}[status]
    uncertainty = ({"method": f"Dirichlet posterior from throw counts, {draws} draws, seed {seed}", **unc}
                   if unc else None)
    return ClaimResult(status, summary, evidence, figures, uncertainty)


def _change_distribution(pm: np.ndarray, deltas: np.ndarray, values: list[float]) -> np.ndarray:
    return np.stack([pm[:, deltas == v].sum(axis=1) for v in values], axis=1)



# ---------------------------------------------------------------- the rulebook's worked examples

# (what, players, multiplier, champion strengths, strength the rulebook says each has left)
COMBAT_EXAMPLES = [
    ("Almas, 3-player game, one champion", 3, 3, (14,), (5,)),
    ("Atai Ulan, 5-player game, two champions together", 5, 4, (19, 16), (9, 6)),
]
SCORE_EXAMPLE = {"assets": 35, "strength": 22, "blue_sky_cards": 1, "total": 77}


def worked_examples(blue_sky_points: int = 20) -> ClaimResult:
    """Do the rulebook's combat and scoring examples follow from its own rules? Power is the
    multiplier times the players; champions who fight together add their strength and each
    loses half the power; the final score adds assets, strength and the Eternal Blue Sky cards."""
    evidence, ok = [], True
    for what, n, m, strengths, said in COMBAT_EXAMPLES:
        power = m * n
        won, _ = hand_to_hand(sum(strengths), power)
        left = tuple(s - power // len(strengths) for s in strengths) if won else tuple(0 for _ in strengths)
        ok &= won and left == said
        evidence.append(f"{what}: power {m}X x {n} = {power}; strength {'+'.join(map(str, strengths))} "
                        f"{'wins' if won else 'loses'}; left {left}, rulebook {said}")
    e = SCORE_EXAMPLE
    total = e["assets"] + e["strength"] + e["blue_sky_cards"] * blue_sky_points
    ok &= total == e["total"]
    evidence.append(f"final score: {e['assets']} asset points + {e['strength']} strength + {e['blue_sky_cards']} "
                    f"Eternal Blue Sky card x {blue_sky_points} = {total}, rulebook {e['total']}")
    if ok:
        return ClaimResult("verified", "both combat examples and the scoring example follow from the rules", evidence,
                           {"examples": len(COMBAT_EXAMPLES) + 1})
    return ClaimResult("refuted", "a worked example disagrees with the rules as written", evidence,
                       {"examples": len(COMBAT_EXAMPLES) + 1})
