"""Processing arithmetic against token-by-token processing and the rulebook's worked examples."""
from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.uluk.process import best_split, process_batch, process_table
from gamesolver.solver.errors import InputError

KINDS = ["x2", "2:3", "+1", "-1", "1:1"]


def tokens(kind: str, n: int) -> int:
    """Move the tokens one by one as a player would, then apply the per-batch change."""
    if n == 0:
        return 0
    out, left = 0, n
    if kind == "2:3":
        while left >= 2:
            left -= 2
            out += 3
        out += left  # a lone piece goes 1:1
        return out
    per = 2 if kind == "x2" else 1
    while left:
        left -= 1
        out += per
    return out + {"+1": 1, "-1": -1}.get(kind, 0)


def compositions(n: int, parts: int):
    if parts == 1:
        yield (n,)
        return
    for first in range(1, n - parts + 2):
        for rest in compositions(n - first, parts - 1):
            yield (first, *rest)


@given(st.sampled_from(KINDS), st.integers(0, 40))
@settings(max_examples=100, deadline=None)
def test_batch_matches_tokens(kind, n):
    assert process_batch(kind, n) == tokens(kind, n)


def test_rulebook_examples():
    assert process_batch("x2", 2) == 4      # two raw uluk -> four pickled uluk
    assert process_batch("2:3", 2) == 3     # two raw hlak -> three smoked hlak
    assert process_batch("2:3", 5) == 7     # twice 2:3 and a lone piece 1:1
    assert process_batch("+1", 1) == 2      # one raw tlon -> two roasted tlon
    assert process_batch("-1", 3) == 2      # three raw fnord -> two salted fnord
    assert all(process_batch("2:3", n) == 3 * n // 2 for n in range(30))


@given(st.sampled_from(KINDS), st.integers(0, 9), st.integers(0, 4), st.booleans())
@settings(max_examples=120, deadline=None)
def test_split_against_every_partition(kind, n, tribers, split):
    got, batches = best_split(kind, n, tribers, split)
    if n == 0 or tribers == 0:
        assert (got, batches) == (0, ())
        return
    most = 1 if not split else min(tribers, n)
    best = max(sum(tokens(kind, b) for b in comp) for k in range(1, most + 1) for comp in compositions(n, k))
    assert got == best
    assert sum(batches) == n and len(batches) <= most
    assert sum(tokens(kind, b) for b in batches) == got


def test_split_only_pays_for_plus_one():
    for n in range(1, 10):
        for t in range(1, 5):
            assert best_split("+1", n, t, True)[0] == n + min(n, t)
            for kind in ("x2", "2:3", "-1", "1:1"):
                assert best_split(kind, n, t, True)[0] == process_batch(kind, n)


def test_bad_input():
    for call in (lambda: process_batch("x3", 2), lambda: process_batch("x2", -1),
                 lambda: best_split("+1", 3, -1), lambda: process_table(["x2"], -2)):
        with pytest.raises(InputError):
            call()
    assert list(itertools.islice(compositions(3, 2), 5)) == [(1, 2), (2, 1)]


def test_processing_claim_is_registered_and_verified():
    from gamesolver.games.claims import find_claim

    claim = find_claim("uluk-processing-examples")
    result = claim.checker()()
    assert result.status == "verified" and len(result.evidence) == 5
