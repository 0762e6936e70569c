"""What moved in one round of a large fort-rules solve, and whether best play from the states that
moved most ever ends.

    nice -n 19 python benchmarks/round_movers.py --pieces 7 BEFORE.npy AFTER.npy [--top 10] [--json]

BEFORE and AFTER are the values of two checkpoints of one solve (its ``checkpoint.npy``, copied
aside between rounds). Printed: how many states moved by each power of ten, and the ``--top``
states that moved most, each with its position, both values and its **closure**: the states that
play reaches from it when each side, on every roll, takes only the actions within ``--within`` of
its best at AFTER's values. A closure that reaches no end of the game (no win, no loss) is a set
of positions whose values only endless play keeps up: with endless play worth 0, neither side can
have the advantage those values claim, and only the discount (or, once the walk is over, the
endless check and its repair) brings them down. A closure larger than ``--most`` states is cut
there and said to be so.
"""
from __future__ import annotations

import argparse
import collections
import json
import sys

import numpy as np

from gamesolver.games.ur.generator import kernel
from gamesolver.games.ur.notation import Position, format_position
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.stochastic import _engine as E

CHUNK = 1 << 24
DECADES = 12  # movement histogram: [1e-1, 1), [1e-2, 1e-1), ... and the last bucket everything below


def outcome_value(c: int, V: np.ndarray) -> float:
    """An outcome code's value to the mover: its own value where it keeps the turn, the other
    side's turned round where it passes, the ends of the game exactly."""
    if c >= 0:
        return float(V[c])
    if c == E.WIN:
        return 1.0
    if c == E.LOSS:
        return -1.0
    if c == E.NOCODE:
        return 0.0
    return -float(V[-c - 1])


def movement(a: np.ndarray, b: np.ndarray, top: int) -> tuple[list[int], np.ndarray, np.ndarray]:
    """(states moved by each power of ten from 1 down, the last bucket also what did not move;
    the ``top`` ranks that moved most, largest first; their signed movements)."""
    n = a.shape[0]
    hist = np.zeros(DECADES, dtype=np.int64)
    ranks, moves = np.zeros(0, dtype=np.int64), np.zeros(0)
    for s in range(0, n, CHUNK):
        e = min(n, s + CHUNK)
        d = b[s:e].astype(np.float64) - a[s:e]
        ad = np.abs(d)
        decade = np.floor(-np.log10(np.maximum(ad, 1e-300)))
        hist += np.bincount(np.clip(decade, 0, DECADES - 1).astype(np.int64), minlength=DECADES)
        k = min(top, e - s)
        pick = np.argpartition(ad, e - s - k)[e - s - k:]
        ranks, moves = np.concatenate([ranks, pick + s]), np.concatenate([moves, d[pick]])
        keep = np.argsort(-np.abs(moves), kind="stable")[:top]
        ranks, moves = ranks[keep], moves[keep]
    return hist.tolist(), ranks, moves


def closure(K, V: np.ndarray, start: int, within: float, most: int) -> dict:
    """The states best play reaches from ``start`` (every roll's actions within ``within`` of the
    best, for both sides), the ends of the game it reaches, and whether it was cut at ``most``."""
    seen = {start}
    todo = collections.deque([start])
    ends = collections.Counter()
    while todo and len(seen) <= most:
        r = todo.popleft()
        for roll in range(K.roll_count):
            codes = {int(c) for c in K.roll_outcomes(r, roll)}
            best = max(outcome_value(c, V) for c in codes)
            for c in codes:
                if outcome_value(c, V) < best - within:
                    continue
                if c in (E.WIN, E.LOSS):
                    ends["win" if c == E.WIN else "loss"] += 1
                elif c != E.NOCODE:
                    t = c if c >= 0 else -c - 1
                    if t not in seen:
                        seen.add(t)
                        todo.append(t)
    values = np.abs(np.array([float(V[r]) for r in seen]))
    return {"states": len(seen), "cut": bool(todo), "wins": ends["win"], "losses": ends["loss"],
            "ends": bool(ends), "abs_values": [float(values.min()), float(values.max())]}


def position_text(K, options: UrOptions, rank: int) -> str:
    mine, theirs = K.unrank(np.array([rank], dtype=np.int64))
    tiles = [frozenset(i for i in range(32) if int(m[0]) >> i & 1) for m in (mine, theirs)]
    return format_position(Position.from_relative(tiles[0], tiles[1], "X"), options.board)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--pieces", type=int, default=7)
    ap.add_argument("--top", type=int, default=10, help="the states that moved most to show (default 10)")
    ap.add_argument("--within", type=float, default=1e-6,
                    help="a side's best actions: those within this of its best (default 1e-6)")
    ap.add_argument("--most", type=int, default=100_000, help="cut a closure at this many states (default 100,000)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = ap.parse_args(argv)
    if not 1 <= args.pieces <= 7 or args.top < 1 or args.most < 1 or args.within < 0:
        ap.error("--pieces must be 1-7, --top and --most at least 1, --within at least 0")
    options = UrOptions(pieces=args.pieces)
    K = kernel(options)
    n = K.state_count
    try:
        a, b = (np.load(f, mmap_mode="r") for f in (args.before, args.after))
    except (OSError, ValueError) as exc:
        ap.error(f"cannot read the value files: {exc}")
    if a.shape != (n,) or b.shape != (n,):
        ap.error(f"both value files must hold {n:,} values (the stored states of {args.pieces} pieces)")
    hist, ranks, moves = movement(a, b, args.top)
    rows = [{"rank": int(r), "position": position_text(K, options, int(r)), "before": float(a[r]),
             "after": float(b[r]), "moved": float(d), **closure(K, b, int(r), args.within, args.most)}
            for r, d in zip(ranks.tolist(), moves.tolist())]
    if args.json:
        print(json.dumps({"pieces": args.pieces, "states": n, "decades": hist, "top": rows}))
        return
    print(f"{args.pieces} pieces, {n:,} states; moved from {args.before} to {args.after}:")
    for k, count in enumerate(hist):
        span = f"below 1e-{k}" if k == DECADES - 1 else f"1e-{k + 1} .. 1e-{k}"
        print(f"  {span:>16}: {count:,}")
    print(f"the {len(rows)} that moved most, and where best play from each leads (actions within {args.within:g}):")
    for row in rows:
        reach = (f"ends ({row['wins']} wins, {row['losses']} losses reached)" if row["ends"]
                 else "no end reached before the cut" if row["cut"]
                 else "never ends: only endless play keeps these values")
        print(f"  {row['position']}  {row['before']:+.6f} -> {row['after']:+.6f} ({row['moved']:+.2e}); "
              f"closure {row['states']:,} states{' (cut)' if row['cut'] else ''}, |values| "
              f"{row['abs_values'][0]:.5f}..{row['abs_values'][1]:.5f}, {reach}")


if __name__ == "__main__":
    main(sys.argv[1:])
