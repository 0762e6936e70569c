"""Checks for the Ulus claims in ``data/claims/ulus.json``."""
from __future__ import annotations

from fractions import Fraction

from gamesolver.games.claims import ClaimResult
from gamesolver.games.ulus.race import expected_rounds, make_config, rounds_distribution
from gamesolver.games.ulus.shagai import face_probabilities, preset_names, rules


def camel_race_faster(players: int = 4, length: int = 9) -> ClaimResult:
    """The rulebook offers the Camel Race as the faster race: compare the expected number of
    rounds (and the median round) of the horse race and the camel race under every preset."""
    evidence: list[str] = []
    figures: dict[str, dict[str, float]] = {}
    faster: dict[str, int] = {}  # +1 camel faster, 0 same, -1 camel slower
    for name in preset_names():
        probs: tuple[Fraction, ...] = face_probabilities(name)
        horse = make_config(players, length, probs, camel=False)
        camel = make_config(players, length, probs, camel=True)
        eh, ec = expected_rounds(horse), expected_rounds(camel)
        mh = int((rounds_distribution(horse).cumsum() >= 0.5).argmax()) + 1
        mc = int((rounds_distribution(camel).cumsum() >= 0.5).argmax()) + 1
        faster[name] = 0 if abs(eh - ec) < 1e-9 else (1 if ec < eh else -1)
        word = {1: "camel race faster", 0: "the same race", -1: "camel race slower"}[faster[name]]
        evidence.append(
            f"{name}: horse face {float(probs[0]):g} -> {eh:.3f} rounds expected (median {mh}); "
            f"camel face {float(probs[1]):g} -> {ec:.3f} rounds (median {mc}): {word}"
        )
        figures[name] = {"horse_expected_rounds": eh, "camel_expected_rounds": ec,
                         "horse_median_round": mh, "camel_median_round": mc}
    default = rules()["default_preset"]
    if all(v == 1 for v in faster.values()):
        status, summary = "verified", "the camel race is faster under every preset"
    elif faster[default] == -1:
        status = "refuted"
        summary = (f"with the measured bones ({default}) camel faces are rarer than horse faces, so the camel "
                   f"race is slower ({figures[default]['camel_expected_rounds']:.2f} vs "
                   f"{figures[default]['horse_expected_rounds']:.2f} rounds); with equal faces it is the same race")
    else:
        status, summary = "undetermined", "the answer depends on the face probabilities"
    evidence.append(f"{players} players, {length}-site track, no champion abilities, overshoot allowed")
    return ClaimResult(status, summary, evidence, figures)
