"""Checks for the Uluk entries of the claims registry (``data/claims/uluk.json``)."""
from __future__ import annotations

from gamesolver.games.claims import ClaimResult
from gamesolver.games.uluk.process import process_batch

# the rulebook's worked examples: (resource, arrow kind, raw pieces, pieces it says you get)
PROCESSING_EXAMPLES = [
    ("uluk -> pickled uluk", "x2", 2, 4),
    ("hlak -> smoked hlak", "2:3", 2, 3),
    ("hlak -> smoked hlak", "2:3", 5, 7),
    ("tlon -> roasted tlon", "+1", 1, 2),
    ("fnord -> salted fnord", "-1", 3, 2),
]


def processing_examples() -> ClaimResult:
    """Do the rulebook's processing examples follow from its own arrow arithmetic?"""
    evidence = []
    ok = True
    for what, kind, raw, said in PROCESSING_EXAMPLES:
        got = process_batch(kind, raw)
        ok &= got == said
        evidence.append(f"{what} ({kind}): {raw} raw -> rulebook {said}, arithmetic {got}")
    return ClaimResult(
        "verified" if ok else "refuted",
        "every worked example matches x2 / 2:3 with a 1:1 remainder / +1 / -1 per batch"
        if ok else "a worked example disagrees with the arrow arithmetic",
        evidence,
        {"examples": len(PROCESSING_EXAMPLES)},
    )
