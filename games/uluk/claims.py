"""Checks for the Uluk entries of the claims registry (``data/claims/uluk.json``)."""
from __future__ import annotations

from fractions import Fraction

from gamesolver.games.claims import ClaimResult
from gamesolver.games.uluk.process import process_batch
from gamesolver.games.uluk.rules import Board, load_board
from gamesolver.solver.errors import InputError
from gamesolver.games.uluk.feed import FeedOptions, solve_feed

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


# ---------------------------------------------------------------- seats and feeding

def _board_from_rulebook(board_file: str | None) -> Board:
    """The tribe board; the checks use only resources whose symbols the rulebook's text states."""
    return load_board(board_file)


def seat_compensation(start_food: dict[str, int], tribers: dict[str, int], food: str = "baked mgobu",
                      expert: bool = False, board_file: str | None = None) -> ClaimResult:
    """Later seats start with more baked mgobu (1, 2, 2, 3): what the rules themselves fix of its
    worth. Baked mgobu is food and perishes at the end of the season, so it counts only in the
    first Feeding phase: with no other food it spares Hunger tokens (one is forgiven at the end).
    Compensation holds if a later seat's start is never worth less than an earlier one's."""
    board = _board_from_rulebook(board_file)
    if food not in board.resources or not board.resources[food].food:
        raise InputError(f"{food!r} is not a food on the tribe board")
    evidence, figures = [], {}
    monotone, gains = True, False
    for n_players, t in sorted(tribers.items(), key=lambda kv: int(kv[0])):
        n = int(n_players)
        seats = [max(0, int(start_food[str(s)]) - (1 if expert else 0)) for s in range(1, n + 1)]
        worth = []
        for k in seats:
            plan, _ = solve_feed(board, {food: k}, int(t), FeedOptions())
            worth.append(plan.score)
        base, _ = solve_feed(board, {}, int(t), FeedOptions())
        value = [w - base.score for w in worth]
        monotone &= all(a <= b for a, b in zip(value, value[1:]))
        gains |= value[-1] > value[0]
        figures[str(n)] = {"food": seats, "worth": [str(v) for v in value], "tribers": int(t)}
        evidence.append(f"{n} players, {t} tribers each: starting {food} by seat {seats} -> worth "
                        + ", ".join(f"{float(v):+g}" for v in value) + " Happiness in the first Feeding phase "
                        "(against no food)")
    evidence.append("worth = Hunger tokens spared (3 Happiness each at the end, one token forgiven) when nothing "
                    "else is harvested; after a good first harvest the pieces can only go to reproduction, and "
                    "the rules put no price on moving first, so whether the seats come out even is open")
    if monotone and gains:
        return ClaimResult("verified", "a later seat's starting food is never worth less, and the last seat's is "
                                       "worth more, than the first seat's (in spared Hunger, first season only)",
                           evidence, figures)
    return ClaimResult("refuted", "a later seat's starting food is worth less than an earlier one's", evidence,
                       figures)


def last_season_no_reproduction(tribers: list[int], plain_food: list[int], treats: list[int],
                                food: str = "roasted tlon", treat: str = "salted fnord",
                                triber_value: int = 0, board_file: str | None = None) -> ClaimResult:
    """New tribers arrive only for the next season, so in the sixth (last) season food is never
    better spent on reproduction than on treats; every holding of the grid is solved exactly."""
    board = _board_from_rulebook(board_file)
    for name in (food, treat):
        if name not in board.resources:
            raise InputError(f"{name!r} is not on the tribe board")
    opts = FeedOptions(final=True, triber_value=Fraction(triber_value))
    cases = breeding = 0
    example = None
    for t in tribers:
        for u in plain_food:
            for k in treats:
                best, _ = solve_feed(board, {food: u, treat: k}, t, opts)
                cases += 1
                if best.new_tribers:
                    breeding += 1
                    example = example or (t, u, k, best.new_tribers)
    evidence = [f"{cases} holdings solved: tribers {tribers}, {food} {plain_food[0]}-{plain_food[-1]}, "
                f"{treat} {treats[0]}-{treats[-1]}; a new triber valued at {triber_value} Happiness",
                f"best plans that reproduce: {breeding}"
                + (f" (e.g. {example[0]} tribers, {example[1]} {food}, {example[2]} {treat}: "
                   f"{example[3]} new)" if example else "")]
    figures = {"cases": cases, "reproducing": breeding}
    if breeding == 0:
        return ClaimResult("verified", f"in all {cases} last-season holdings the best plan makes no new triber",
                           evidence, figures)
    return ClaimResult("refuted", f"{breeding} of {cases} last-season holdings are best spent on reproduction",
                       evidence, figures)
