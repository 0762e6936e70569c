"""Uluk processing arithmetic: what one batch of each arrow kind gives (docs/rules.md section 5).

x2 doubles; 2:3 gives three for every two and one for a lone piece (floor(3n/2)); +1 / -1 add
or remove one piece per batch; 1:1 keeps the count.  With the same-product splitting option,
several tribers on one space may each process a separate batch, which only pays for +1.
"""
from __future__ import annotations

from functools import lru_cache

from gamesolver.games.uluk.rules import rules
from gamesolver.solver.errors import InputError


def check_kind(kind: str) -> str:
    if kind not in rules().arrow_kinds:
        raise InputError(f"unknown arrow kind {kind!r}; expected one of {', '.join(rules().arrow_kinds)}")
    return kind


def process_batch(kind: str, n: int) -> int:
    """Pieces of processed resource from one batch of ``n`` pieces (a batch of 0 gives 0)."""
    check_kind(kind)
    if n < 0:
        raise InputError(f"batch of {n} pieces; expected 0 or more")
    if n == 0:
        return 0
    if kind == "x2":
        return 2 * n
    if kind == "2:3":
        return 3 * (n // 2) + n % 2
    if kind == "+1":
        return n + 1
    if kind == "-1":
        return n - 1
    return n


def best_split(kind: str, n: int, tribers: int = 1, split: bool = False) -> tuple[int, tuple[int, ...]]:
    """Most pieces from ``n`` raw pieces with ``tribers`` on the space, and the batch sizes.

    Without splitting every triber past the first adds nothing for the same product, so it is
    one batch of ``n``.  With splitting, an exact DP over the number of batches (at most
    ``tribers``) and their sizes; ties keep the fewest batches.
    """
    check_kind(kind)
    if n < 0 or tribers < 0:
        raise InputError(f"pieces {n}, tribers {tribers}; expected numbers >= 0")
    if n == 0 or tribers == 0:
        return 0, ()
    if not split or tribers == 1:
        return process_batch(kind, n), (n,)
    return _split(kind, n, min(tribers, n))


@lru_cache(maxsize=None)
def _split(kind: str, n: int, t: int) -> tuple[int, tuple[int, ...]]:
    best: tuple[int, tuple[int, ...]] = (process_batch(kind, n), (n,))
    if t > 1:
        for first in range(1, n):
            rest, batches = _split(kind, n - first, t - 1)
            got = process_batch(kind, first) + rest
            if got > best[0]:
                best = (got, tuple(sorted((first, *batches), reverse=True)))
    return best


def process_table(kinds: list[str], max_n: int, tribers: int = 1, split: bool = False) -> list[dict]:
    """Rows n = 0..max_n with the best output of every kind asked for."""
    if max_n < 0:
        raise InputError(f"--max-n is {max_n}; expected 0 or more")
    rows = []
    for n in range(max_n + 1):
        row: dict = {"raw": n}
        for kind in kinds:
            out, batches = best_split(kind, n, tribers, split)
            row[kind] = out
            if split and tribers > 1:
                row[f"{kind} batches"] = "+".join(map(str, batches)) or "-"
        rows.append(row)
    return rows
