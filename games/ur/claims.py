"""Checks for the Ur (fort rules) claims in ``data/claims/ur.json``, read from solved tables.

The checks never solve: they open the tables already in the cache (``load_table(...,
build=False)``) and, for the start's value, the opening files shipped with the program. With fewer
than four pieces nobody can hold the four forts, so every value is 0 and says nothing about the
real game; a claim that needs a whole table of four or more pieces is "undetermined" until one is
solved, and says which command settles it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from gamesolver.games.claims import ClaimResult
from gamesolver.games.ur.generator import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import default_table_dir, load_table, state_interval, state_value
from gamesolver.solver.stochastic.iteration import check_eps
from gamesolver.solver.errors import MissingTableError, TableError
from gamesolver.solver.tables.table import Table
from gamesolver.games.ur import opening
from gamesolver.games.ur.provenance import of_table

FORTS_TO_WIN = 4  # a player wins holding all four forts, so fewer pieces can never win
SPECIAL_ROLES = ("ishtar", "marduk", "royal")
# whole-table measures run over every state up to this many (K = 4 has 16.7 million), above it
# over a seeded sample of this size, and say so
ALL_STATES_CAP = 20_000_000


@dataclass
class Solved:
    pieces: int
    options: UrOptions
    table: Table

    @property
    def tolerance(self) -> float:
        return float(self.table.meta.get("tolerance") or 1e-6)


def _options(pieces: int, board_file: str | None, dice_file: str | None, mirror: bool = True) -> UrOptions:
    """Rule options; ``mirror=False`` asks for the table that numbers every state, where the
    engine can fold the board's mirror at all (an engine that cannot always numbers every state)."""
    fold = {} if mirror or "mirror" not in UrOptions.__dataclass_fields__ else {"mirror": False}
    return UrOptions(pieces=pieces, board_file=board_file, dice_file=dice_file, **fold)


def _solved(pieces: Sequence[int], board_file: str | None, dice_file: str | None,
            cache: str | None, mirror: bool = True) -> tuple[list[Solved], list[str]]:
    """The tables in the cache for these piece counts (never solving), and notes on the others."""
    found, notes = [], []
    for k in sorted(set(pieces)):
        opts = _options(k, board_file, dice_file, mirror)
        try:
            found.append(Solved(k, opts, load_table(opts, default_table_dir(opts, cache), build=False)))
        except MissingTableError:
            continue
        except TableError as exc:
            notes.append(f"K = {k}: cached table unusable ({exc})")
    return found, notes


def _settle(board_file: str | None, dice_file: str | None, k: int = FORTS_TO_WIN) -> str:
    extra = (f" --board {board_file}" if board_file else "") + (f" --dice {dice_file}" if dice_file else "")
    return f"solver ur solve --pieces {k}{extra}"


def _need_real(found: list[Solved], notes: list[str], board_file: str | None, dice_file: str | None,
               what: str) -> ClaimResult | None:
    """'undetermined' with the settling command when no table of four or more pieces is cached."""
    if any(s.pieces >= FORTS_TO_WIN for s in found):
        return None
    have = ", ".join(str(s.pieces) for s in found) or "none"
    evidence = [f"cached tables: K = {have}; with fewer than {FORTS_TO_WIN} pieces every value is 0 (nobody can "
                f"hold four forts), so they cannot answer {what}", *notes]
    return ClaimResult("undetermined", f"needs a solved table with {FORTS_TO_WIN}+ pieces: run "
                                       f"'{_settle(board_file, dice_file)}'", evidence,
                       {"cached_pieces": [s.pieces for s in found], "settle": _settle(board_file, dice_file)})


def _states(s: Solved, cap: int = ALL_STATES_CAP, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """The states a measure runs over: every state (ranks, tile masks), or a seeded sample of
    ``cap`` of them when the table is larger (then the last item is True)."""
    K = kernel(s.options)
    total = K.state_count
    sampled = total > cap
    ranks = (np.sort(np.random.default_rng(seed).choice(total, cap, replace=False)) if sampled
             else np.arange(total, dtype=np.int64))
    ms, os_ = K.unrank(ranks)
    return ranks, ms, os_, sampled


def _live(s: Solved, ms: np.ndarray, os_: np.ndarray) -> np.ndarray:
    """Unfinished states (nobody holds the four forts)."""
    forts = np.uint32(s.options.board.mask(s.options.board.forts))
    return ((ms & forts) != forts) & ((os_ & forts) != forts)


def _twin(s: Solved) -> tuple[int, ...] | None:
    """The tile permutation by which the table keeps one state of each mirrored pair, or None
    when it numbers every state (an engine or board without that symmetry)."""
    if not getattr(s.options, "uses_mirror", False):
        return None
    return getattr(s.options.board, "mirror", None)


def _weights(s: Solved, ms: np.ndarray, os_: np.ndarray) -> np.ndarray:
    """How many states of the game each listed state stands for: 2 for one of a mirrored pair
    the table keeps once, 1 otherwise. Weighting by it makes every average and count the same
    as over all states (a mirrored state has the mirrored tiles and the same value)."""
    twin = _twin(s)
    if twin is None:
        return np.ones(ms.size)
    mm, mo = np.zeros_like(ms), np.zeros_like(os_)
    for t, u in enumerate(twin):
        mm |= ((ms >> np.uint32(t)) & np.uint32(1)) << np.uint32(u)
        mo |= ((os_ >> np.uint32(t)) & np.uint32(1)) << np.uint32(u)
    return np.where((mm == ms) & (mo == os_), 1.0, 2.0)


def _tile_groups(s: Solved, role: str) -> list[tuple[int, ...]]:
    """The tiles of a role, twins together when the table folds the mirror (A4 and C4 are one
    measure then: a folded table cannot tell them apart, and by symmetry they are worth the same)."""
    tiles = sorted(s.options.board.with_role(role))
    twin = _twin(s)
    if twin is None:
        return [(t,) for t in tiles]
    return sorted({tuple(sorted({t, twin[t]})) for t in tiles})


# ---------------------------------------------------------------- the claims


def _start_evidence(pieces: Sequence[int], found: list[Solved]) -> list[tuple[int, Any, str]]:
    """Besides the cached tables, the opening files shipped for the standard board and dice (they
    hold the start): (pieces, table or file, where) for each requested count, the table first."""
    out: list[tuple[int, Any, str]] = [(s.pieces, s.table, "cached table") for s in found]
    have = {s.pieces for s in found}
    for k in sorted(set(pieces) - have):
        book = opening.shipped(UrOptions(pieces=k)) if k >= FORTS_TO_WIN else None
        if book is not None:
            out.append((k, book, "shipped opening file"))
    return sorted(out, key=lambda e: e[0])


def first_player_favoured(pieces: Sequence[int] = (1, 2, 3, 4, 5, 6, 7), board_file: str | None = None,
                          dice_file: str | None = None, cache: str | None = None,
                          mirror: bool = True) -> ClaimResult:
    """Who goes first is decided before the game, as if it mattered: the value of the start
    (first player to move, before rolling) per piece count, from the cached tables and, on the
    standard board and dice, the shipped opening files. The verdict rests on the smallest proven
    evidence that settles it (a start interval clear of 0); without one, on the largest table's
    value against its slack."""
    found, notes = _solved(pieces, board_file, dice_file, cache, mirror)
    standard = board_file is None and dice_file is None and mirror
    sources = _start_evidence(pieces, found) if standard else [(s.pieces, s.table, "cached table") for s in found]
    evidence = []
    figures: dict[str, Any] = {}
    settled = None
    for k, table, where in sources:
        opts = _options(k, board_file, dice_file, mirror)
        prov = of_table(table)
        v = state_value(opts, table, frozenset(), frozenset())
        fields = prov.fields(v, state_interval(opts, table, frozenset(), frozenset())) if k >= FORTS_TO_WIN else \
            {"proven": True, "lower": 0.0, "upper": 0.0}
        figures[str(k)] = {"start_value": v, "source": where, **fields}
        label = (f"proven in {fields['lower']:+.7f} .. {fields['upper']:+.7f}" if fields.get("proven")
                 else prov.text())
        evidence.append(f"K = {k}: start worth {v:+.6f} to the first player (P(win) - P(loss); {where}, {label})")
        if settled is None and k >= FORTS_TO_WIN and fields.get("proven") and (fields["lower"] > 0 or fields["upper"] < 0):
            settled = (k, fields)
    if settled is not None:
        k, f = settled
        who, status = ("first", "verified") if f["lower"] > 0 else ("second", "refuted")
        evidence += notes
        return ClaimResult(status, f"the {who} player is favoured: the start is proven worth {f['lower']:+.7f} .. "
                                   f"{f['upper']:+.7f} with K = {k}", evidence, figures)
    real = [(k, t) for k, t, w in sources if k >= FORTS_TO_WIN and w == "cached table"]
    waiting = None if real else _need_real(found, notes, board_file, dice_file, "who is favoured")
    if waiting is not None:
        waiting.evidence = evidence + waiting.evidence
        return waiting
    best = max((s for s in found if s.pieces >= FORTS_TO_WIN), key=lambda s: s.pieces)
    v = figures[str(best.pieces)]["start_value"]
    slack = check_eps(best.tolerance)
    evidence += notes
    if v > slack:
        return ClaimResult("verified", f"the first player is favoured: start worth {v:+.4f} with K = {best.pieces} "
                                       "(unproven)", evidence, figures)
    if v < -slack:
        return ClaimResult("refuted", f"the second player is favoured: start worth {v:+.4f} with K = {best.pieces} "
                                      "(unproven)", evidence, figures)
    return ClaimResult("undetermined", f"the start is worth {v:+.6f} with K = {best.pieces}, within the table's "
                                       f"slack {slack:g}", evidence, figures)


def ishtar_most_powerful(pieces: Sequence[int] = (4, 5, 6, 7), board_file: str | None = None,
                         dice_file: str | None = None, cache: str | None = None,
                         mirror: bool = True) -> ClaimResult:
    """"The Tile of Ishtar is the most powerful tile": for each special tile, the average gain of
    holding it over every state of the largest solved K where the mover holds it (value with
    the piece there, minus value with that piece back in the pool)."""
    found, notes = _solved(pieces, board_file, dice_file, cache, mirror)
    waiting = _need_real(found, notes, board_file, dice_file, "which tile is strongest")
    if waiting is not None:
        return waiting
    s = max((x for x in found if x.pieces >= FORTS_TO_WIN), key=lambda x: x.pieces)
    board = s.options.board
    K = kernel(s.options)
    ranks, ms, os_, sampled = _states(s)
    v = np.asarray(s.table["value"])
    live = _live(s, ms, os_)
    weight = _weights(s, ms, os_)
    gains: dict[str, dict[str, Any]] = {}
    for role in SPECIAL_ROLES:
        for group in _tile_groups(s, role):
            total = count = positive = 0.0
            for tile in group:
                bit = np.uint32(1 << tile)
                holds = np.flatnonzero(live & ((ms & bit) != 0))
                back = K.rank(ms[holds] & ~bit, os_[holds])
                g = v[ranks[holds]].astype(np.float64) - v[back]
                w = weight[holds]
                total += float(w @ g)
                count += float(w.sum())
                positive += float(w @ (g > 0))
            at_start = -state_value(s.options, s.table, frozenset(), frozenset({group[0]}))
            gains["/".join(board.names[t] for t in group)] = {
                "role": role, "mean_gain": total / count if count else 0.0, "states": int(round(count)),
                "share_positive": positive / count if count else 0.0, "spawn_at_start": at_start}
    order = sorted(gains, key=lambda t: -gains[t]["mean_gain"])
    over = f"a seeded sample of {ranks.size:,} states" if sampled else "every state"
    evidence = [f"K = {s.pieces}, {over} where the mover holds the tile (finished positions left out):"]
    for t in order:
        g = gains[t]
        evidence.append(f"  {t} ({g['role']}): mean gain {g['mean_gain']:+.4f} over {g['states']:,} states, "
                        f"positive in {100 * g['share_positive']:.1f} %; a spawn there from the start is worth "
                        f"{g['spawn_at_start']:+.4f}")
    evidence += notes
    top = order[0]
    ishtar = [t for t in order if gains[t]["role"] == "ishtar"]
    if gains[top]["role"] == "ishtar":
        return ClaimResult("verified", f"Ishtar's tile {top} gives the largest average gain "
                                       f"({gains[top]['mean_gain']:+.4f}, K = {s.pieces})", evidence, gains)
    rank = order.index(ishtar[0]) + 1 if ishtar else None
    return ClaimResult("refuted", f"{top} ({gains[top]['role']}) gains most ({gains[top]['mean_gain']:+.4f}); "
                                  f"Ishtar ranks {rank} of {len(order)} (K = {s.pieces})", evidence, gains)


def royal_realm_strong_start(pieces: Sequence[int] = (4, 5, 6, 7), roll: str = "gold+silver", sample: int = 20000,
                             seed: int = 0, board_file: str | None = None, dice_file: str | None = None,
                             cache: str | None = None, mirror: bool = True) -> ClaimResult:
    """"The Royal Realm gives strong starting positions": on a roll that allows it, how often is
    the best spawn on a Royal tile better than the entry spawn and every move? Over a seeded
    sample of the states where such a spawn is possible (all of them when fewer)."""
    found, notes = _solved(pieces, board_file, dice_file, cache, mirror)
    waiting = _need_real(found, notes, board_file, dice_file, "how strong the Royal Realm is")
    if waiting is not None:
        return waiting
    s = max((x for x in found if x.pieces >= FORTS_TO_WIN), key=lambda x: x.pieces)
    board = s.options.board
    K = kernel(s.options)
    r = s.options.dice.index(roll)
    ranks, ms, os_, _ = _states(s)
    v = np.asarray(s.table["value"])
    royal = np.uint32(board.mask(board.with_role("royal")))
    entry = np.uint32(1 << board.entry)
    pool = np.bitwise_count(ms) < s.pieces
    free_royal = (royal & ~(ms | os_)) != 0
    cand = np.flatnonzero(pool & free_royal & _live(s, ms, os_))
    rng = np.random.default_rng(seed)
    pick = cand if cand.size <= sample else np.sort(rng.choice(cand, sample, replace=False))
    weight = _weights(s, ms, os_)
    wins = 0.0
    margins = []
    for i in pick:
        m0, o0 = int(ms[i]), int(os_[i])
        outs = [(r, m1, o1, flag) for m1, o1, flag in K.successors(m0, o0, r) if flag != 3]
        val, _ = _outcome_values(K, v, outs)
        best = {"royal": -2.0, "entry": -2.0, "move": -2.0}
        for (_, m1, _, _), x in zip(outs, val):
            added = m1 & ~m0
            if bin(m1).count("1") > bin(m0).count("1"):
                kind = "royal" if added & int(royal) else ("entry" if added & int(entry) else "move")
            else:
                kind = "move"
            best[kind] = max(best[kind], x)
        other = max(best["entry"], best["move"])
        margin = best["royal"] - other
        margins.append(margin)
        wins += weight[i] * (margin > check_eps(s.tolerance))
    n = len(pick)
    total = float(weight[pick].sum()) if n else 0.0
    share = wins / total if total else 0.0
    z = 1.96
    lo, hi = _wilson(share, n, z)
    exact = n == cand.size
    start = [(board.names[t], -state_value(s.options, s.table, frozenset(), frozenset({t})))
             for t in sorted(board.with_role("royal"))]
    entry_start = -state_value(s.options, s.table, frozenset(), frozenset({board.entry}))
    evidence = [f"K = {s.pieces}, roll {roll}: {float(weight[cand].sum()):,.0f} states allow a Royal spawn (a piece "
                f"in the pool, a Royal tile empty); {'all' if exact else f'{n:,} sampled (seed {seed})'}"
                + (", a mirrored pair counted twice" if _twin(s) else ""),
                f"the best Royal spawn beats the entry spawn and every move in {wins:,.0f} of {total:,.0f} "
                f"({100 * share:.1f} %"
                + ("" if exact else f", 95 % interval {100 * lo:.1f}-{100 * hi:.1f} %") + ")",
                f"median margin over the best alternative {float(np.median(margins)):+.4f}",
                "at the start: " + ", ".join(f"Royal {t} {val:+.4f}" for t, val in start)
                + f"; entry spawn {entry_start:+.4f}"]
    evidence += notes
    figures = {"states": int(round(float(weight[cand].sum()))), "judged": n, "royal_best": wins, "share": share,
               "interval": [lo, hi],
               "start": dict(start), "entry_at_start": entry_start}
    unc = None if exact else {"method": f"Wilson 95 % interval of a seeded sample of {n} states", "interval": [lo, hi]}
    if lo > 0.5:
        status, verdict = "verified", "usually the best action"
    elif hi < 0.5:
        status, verdict = "refuted", "the best action in a minority of states"
    else:
        status, verdict = "undetermined", "the best action in about half the states"
    return ClaimResult(status, f"on {roll} a Royal spawn is {verdict} ({100 * share:.1f} %, K = {s.pieces})",
                       evidence, figures, unc)


def _outcome_values(K: Any, v: np.ndarray, outs: list[tuple[int, int, int, int]]) -> tuple[list[float], list[int]]:
    """Value for the side that acts of each outcome (roll, mine, theirs, flag), and the rank of
    the state that follows (-1 when the game is won). Flags: 0 the turn passes, 1 the mover
    goes again, 2 a win, 3 a pass (the board is unchanged and the turn passes)."""
    if not outs:
        return [], []
    m1 = np.array([o[1] for o in outs], dtype=np.uint32)
    o1 = np.array([o[2] for o in outs], dtype=np.uint32)
    flag = np.array([o[3] for o in outs])
    again = K.rank(m1, o1)
    passed = K.rank(o1, m1)
    val = np.where(flag == 1, v[again], -v[passed]).astype(np.float64)
    nxt = np.where(flag == 1, again, passed)
    val[flag == 2] = 1.0
    nxt[flag == 2] = -1
    return val.tolist(), nxt.tolist()


def _wilson(share: float, n: int, z: float) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    d = 1 + z * z / n
    c = (share + z * z / (2 * n)) / d
    h = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def endless_play(pieces: Sequence[int] = (1, 2, 3, 4, 5, 6, 7), board_file: str | None = None,
                 dice_file: str | None = None, cache: str | None = None, limit: int = 50_000,
                 mirror: bool = True) -> ClaimResult:
    """The five-repetitions draw presumes games that best play need not end. Per solved K: the
    states worth 0 (to the table's slack) are the only candidates, since endless play is worth
    0; among them, the largest set from which, on every roll, the side to move has a best action
    (within the slack) that stays in the set. From there both sides can play best for ever."""
    found, notes = _solved(pieces, board_file, dice_file, cache, mirror)
    evidence, figures = [], {}
    for s in found:
        ranks, ms, os_, sampled = _states(s)
        v = np.asarray(s.table["value"])
        live = _live(s, ms, os_)
        weight = _weights(s, ms, os_)
        zero = np.flatnonzero(live & (np.abs(v[ranks]) <= check_eps(s.tolerance)))
        n_live, n_zero = int(weight[live].sum()), int(weight[zero].sum())
        row: dict[str, Any] = {"states": n_live, "worth_zero": n_zero, "sampled": sampled}
        text = (f"K = {s.pieces}: {n_zero:,} of {n_live:,} unfinished states"
                f"{' (a seeded sample)' if sampled else ''} are worth 0")
        if s.pieces < FORTS_TO_WIN:
            row["endless"] = n_zero
            text += " (nobody can ever hold four forts: every game is endless)"
        elif not sampled and zero.size <= limit:
            closed = _closed_zero_set(s, ranks[zero], ms[zero], os_[zero], v)
            row["endless"] = int(weight[zero][np.isin(ranks[zero], closed)].sum())
            text += f"; best play can go on for ever from {row['endless']:,} of them"
        else:
            row["endless"] = None
            text += ("; the closure needs every state, not a sample" if sampled
                     else f"; more than {limit:,}, so the closure was not computed")
        figures[str(s.pieces)] = row
        evidence.append(text)
    waiting = _need_real(found, notes, board_file, dice_file, "whether real games can go on for ever")
    if waiting is not None:
        waiting.evidence = evidence + waiting.evidence
        return waiting
    best = max((s for s in found if s.pieces >= FORTS_TO_WIN), key=lambda s: s.pieces)
    n = figures[str(best.pieces)]["endless"]
    evidence += notes
    if n is None:
        return ClaimResult("undetermined", f"with K = {best.pieces} the states worth 0 were not tested for endless "
                                           "play (too many, or a sampled table)", evidence, figures)
    if n:
        return ClaimResult("verified", f"with K = {best.pieces}, best play can go on for ever from {n:,} states: "
                                       "the draw rule is needed", evidence, figures)
    return ClaimResult("refuted", f"with K = {best.pieces} best play always gives someone a chance to win: no state "
                                  "lets both sides play best for ever", evidence, figures)


def _closed_zero_set(s: Solved, zero: np.ndarray, ms: np.ndarray, os_: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The largest subset of the states ``zero`` (ranks, with their tile masks) closed under best
    play (see ``endless_play``); ``v`` is the whole value table."""
    K = kernel(s.options)
    eps = check_eps(s.tolerance)
    rolls = [r for r, roll in enumerate(s.options.dice.rolls) if roll.probability > 0]
    # per state and roll: the ranks best play may go to (outcomes ranked in one call per state)
    options: dict[int, list[list[int]]] = {}
    for z, m0, o0 in zip(zero.tolist(), ms.tolist(), os_.tolist()):
        outs = [(r, m1, o1, flag) for r in rolls for m1, o1, flag in K.successors(m0, o0, r)]
        val, nxt = _outcome_values(K, v, outs)
        per_roll = []
        for r in rolls:
            idx = [i for i, o in enumerate(outs) if o[0] == r]
            top = max(val[i] for i in idx)
            per_roll.append([nxt[i] for i in idx if val[i] >= top - eps and nxt[i] >= 0])
        options[z] = per_roll
    keep = set(options)
    changed = True
    while changed:
        changed = False
        for z in list(keep):
            if any(not any(rk in keep for rk in ranks) for ranks in options[z]):
                keep.discard(z)
                changed = True
    return np.array(sorted(keep), dtype=np.int64)
