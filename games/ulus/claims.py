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
from gamesolver.games.ulus.fight import fight, hand_to_hand, make_setup
from gamesolver.games.ulus.race import RaceConfig, expected_rounds, make_config, sing_summary, solve_race
from gamesolver.games.ulus.shagai import (
    CAMEL, FACES, HORSE, PATTERNS, check_faces, classify, face_probabilities, rules, tuulch_change,
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
                  presets: Sequence[Preset] = DEFAULT_PRESETS, missed_turns: int = 2) -> ClaimResult:
    """Alun Gua's Horse Whispering (every opponent misses ``missed_turns`` turns, once) helps her:
    her win chance with the song against without, per seat, and when she should sing."""
    evidence, figures, gains = [], {}, []
    always_explained = True
    for preset in presets:
        name = _label(preset)
        p = float(_probs(preset)[HORSE])
        for n in players:
            parts = []
            for seat in range(n):
                cfg = replace(_race(n, length, p, alun_gua=seat + 1), missed_turns=missed_turns)
                sol = solve_race(cfg)
                w = float(sol.win(cfg.start(), 0, ability=True)[seat])
                wo = float(sol.win(cfg.start(), 0, ability=False)[seat])
                gains.append(w - wo)
                s = sing_summary(sol)
                always_explained &= s["only_before_opponent_in_reach"]
                figures[f"{name}/{n}p/seat{seat + 1}"] = {"with": w, "without": wo, **s}
                parts.append(f"seat {seat + 1} {wo:.3f}->{w:.3f}")
            evidence.append(f"{name}, {n} players: " + "; ".join(parts))
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
    return ClaimResult(status, summary, evidence, figures)


def fewest_assets_first(players: Sequence[int] = (2, 3, 4), length: int = 9,
                        presets: Sequence[Preset] = DEFAULT_PRESETS) -> ClaimResult:
    """The player with the fewest asset cards starts the race: read as a catch-up, the first seat
    must have the best chance. Win chance by seat without abilities."""
    evidence, figures, edges = [], {}, []
    for preset in presets:
        name = _label(preset)
        p = float(_probs(preset)[HORSE])
        for n in players:
            cfg = _race(n, length, p)
            win = solve_race(cfg).win(cfg.start(), 0, ability=False)
            edge = float(win[0] - win[1:].max())
            edges.append(edge)
            figures[f"{name}/{n}p"] = [float(x) for x in win]
            evidence.append(f"{name}, {n} players: " + ", ".join(f"seat {i + 1} {x:.3f}" for i, x in enumerate(win))
                            + f"  (even share {1 / n:.3f}; first seat's lead over the next best {edge:+.3f})")
    evidence.append(f"{length}-site track, first to reach the finish wins, overshoot allowed")
    lo = min(edges)
    if lo > 1e-12:
        return ClaimResult("verified", f"starting first is an edge in every case, {lo:+.3f} to {max(edges):+.3f} "
                                       "win chance over the next seat: a small catch-up", evidence, figures)
    return ClaimResult("refuted", f"the first seat is not always best (lead {lo:+.3f})", evidence, figures)


# ---------------------------------------------------------------- monsters


def roll_for_help(strengths: Sequence[int] = tuple(range(0, 31)), multipliers: Sequence[int] = (1, 2, 3, 4),
                  players: Sequence[int] = (2, 3, 4, 5, 6), presets: Sequence[Preset] = DEFAULT_PRESETS,
                  asset_value: int = 10) -> ClaimResult:
    """Asking the god for help (rolling four shagai before a fight) pays for a champion who would
    lose the fight alone; where the champion would win alone, when it still pays.

    "Pays" = more expected points (asset value x P(asset) + strength left, as scored at the end)."""
    evidence, figures = [], {}
    losing_ok = True
    for preset in presets:
        probs = _probs(preset)
        name = _label(preset)
        lose_cases = lose_roll = win_cases = win_roll = 0
        margins: dict[str, list[int]] = {"roll": [], "fight": []}
        for s in strengths:
            for m in multipliers:
                for n in players:
                    setup = make_setup(s, m, n, "summer", asset_value=asset_value)
                    ch = fight(setup, probs)
                    roll = ch["roll"].expected_points(asset_value) > ch["fight"].expected_points(asset_value)
                    won, _ = hand_to_hand(s, setup.power)
                    if won:
                        win_cases += 1
                        win_roll += roll
                        margins["roll" if roll else "fight"].append(s - setup.power)
                    else:
                        lose_cases += 1
                        lose_roll += roll
        losing_ok &= lose_roll == lose_cases
        largest = max(margins["roll"], default=None)
        figures[name] = {"losing_cases": lose_cases, "roll_pays_losing": lose_roll,
                         "winning_cases": win_cases, "roll_pays_winning": win_roll,
                         "largest_margin_where_rolling_pays": largest}
        evidence.append(f"{name}: would lose alone in {lose_cases} cases, rolling pays in {lose_roll}; would win alone "
                        f"in {win_cases}, rolling still pays in {win_roll}"
                        + (f" (up to a strength margin of {largest})" if largest is not None else ""))
    evidence.append(f"grid: strength {min(strengths)}-{max(strengths)}, monster multiplier {list(multipliers)}, "
                    f"players {list(players)}, summer, asset worth {asset_value}; a second monster (three or more "
                    "goats) has the first one's multiplier")
    if losing_ok:
        won = "; ".join(f"{k} {v['roll_pays_winning']}/{v['winning_cases']}" for k, v in figures.items())
        return ClaimResult("verified", "whenever the fight alone is lost, rolling for help gives more expected points "
                                       f"under every preset; with a win in hand it still pays in ({won}) cases",
                           evidence, figures)
    return ClaimResult("refuted", "there are lost-alone fights where rolling for help does not pay", evidence, figures)


def monsters_stronger(players: Sequence[int] = (2, 3, 4, 5, 6), multipliers: Sequence[int] = (1, 2, 3, 4, 5),
                      strength: int = 10, winter_bonus: int | None = None,
                      presets: Sequence[Preset] = ("gmit-2018",)) -> ClaimResult:
    """More players and Winter make monsters stronger: a champion's chance of taking the asset
    (choosing the better of fighting alone and rolling first) falls as players are added and in
    Winter, for a monster whose multiplier is drawn evenly from ``multipliers``."""
    wb = int(rules()["winter_multiplier_bonus"]) if winter_bonus is None else winter_bonus
    evidence, figures = [], {}
    ok_players = ok_winter = True
    strict = False
    for preset in presets:
        probs = _probs(preset)
        name = _label(preset)
        table: dict[str, list[float]] = {}
        for season, bonus in (("summer", 0), ("winter", wb)):
            row = []
            for n in players:
                total = Fraction(0)
                for m in multipliers:
                    if m + bonus < 1:
                        raise InputError(f"winter_bonus {wb} makes a {m}X monster powerless")
                    ch = fight(make_setup(strength, m + bonus, n, "summer"), probs)
                    total += max(ch["fight"].p_asset, ch["roll"].p_asset)
                row.append(float(total / len(multipliers)))
            table[season] = row
        s, w = np.array(table["summer"]), np.array(table["winter"])
        ok_players &= bool(np.all(np.diff(s) <= 1e-12) and np.all(np.diff(w) <= 1e-12))
        ok_winter &= bool(np.all(w <= s + 1e-12))
        strict |= bool(np.any(np.diff(s) < -1e-12)) and bool(np.any(w < s - 1e-12))
        figures[name] = table
        evidence.append(f"{name}: P(asset) by players {list(players)}: summer "
                        + " ".join(f"{x:.3f}" for x in s) + "; winter " + " ".join(f"{x:.3f}" for x in w))
    evidence.append(f"champion strength {strength}; monster multiplier drawn evenly from {list(multipliers)}; "
                    f"power = multiplier x players, Winter adds {wb} to the multiplier; the better of rolling and "
                    "fighting alone")
    if ok_players and ok_winter and strict:
        steps = sum(int(np.sum(np.diff(np.array(t["summer"])) < -1e-12)) for t in figures.values())
        every = sum(len(players) - 1 for _ in figures)
        return ClaimResult("verified", f"more players and Winter never make a monster easier; an added player lowers "
                                       f"the chance of the asset in {steps} of {every} steps, Winter at every count",
                           evidence, figures)
    what = [w for w, ok in (("more players", ok_players), ("Winter", ok_winter and strict)) if not ok]
    return ClaimResult("refuted", f"{' and '.join(what) or 'the options'} do not make monsters stronger", evidence,
                       figures)


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
