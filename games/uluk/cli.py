"""``solver uluk ...``: processing arithmetic and the exact Feeding phase plan.

A thin layer over games.uluk.process and games.uluk.feed; text tables, ``--json``, ``--csv``.
"""
from __future__ import annotations

from fractions import Fraction

import click

from gamesolver.solver.report import Report, emit, example, non_negative, output_options
from gamesolver.games.uluk.feed import FeedOptions, parse_have, solve_feed
from gamesolver.games.uluk.process import check_kind, process_table
from gamesolver.games.uluk.rules import load_board, load_feast, rules
from gamesolver.solver.errors import InputError
from gamesolver.solver.limits import check_at_most

MAX_RAW_PIECES = 100_000  # 1.5 s and 140 MB; the rows grow without bound with --max-n


@click.group(epilog=example("solver uluk process --max-n 4"))
def uluk() -> None:
    """Uluk: processing arithmetic and the feeding phase."""


@uluk.command("process", epilog=example("solver uluk process --kind 2:3 --max-n 10 --tribers 2"))
@click.option("--kind", default="all", show_default=True,
              help="Arrow kind: x2, 2:3, +1, -1, 1:1, or all.")
@click.option("--max-n", type=int, default=8, show_default=True, help="Largest number of raw pieces.")
@click.option("--tribers", type=int, default=1, show_default=True, help="Tribers on the processing space.")
@click.option("--split/--no-split", default=False, show_default=True,
              help="Several tribers may each process a separate batch of the same product.")
@click.option("--board", "board_file", default=None,
              help="Tribe board file (or 'example'): also list its arrows.")
@output_options
def process_cmd(kind: str, max_n: int, tribers: int, split: bool, board_file: str | None, as_json: bool,
                as_csv: bool) -> None:
    """Pieces obtained from n raw pieces for every arrow kind."""
    non_negative(max_n, "--max-n")
    non_negative(tribers, "--tribers")
    check_at_most("--max-n", max_n, MAX_RAW_PIECES, "a row per number of raw pieces; more is a table nobody reads "
                  "and memory without end")
    kinds = list(rules().arrow_kinds) if kind == "all" else [check_kind(kind)]
    rows = process_table(kinds, max_n, tribers, split)
    facts: dict = {"tribers": tribers, "splitting": split}
    notes = []
    if board_file is not None:
        board = load_board(board_file)
        facts["board"] = board.name
        facts["arrows"] = [f"{a.source} -> {a.target} ({a.kind})" for a in board.arrows]
        if board.example:
            notes.append("the board is an EXAMPLE: the printed boards were lost")
    emit(Report("Processing: pieces obtained from n raw pieces", list(rows[0]), rows, facts, notes),
         as_json, as_csv)


def _fraction(value: str, what: str) -> Fraction:
    try:
        v = Fraction(value)
    except (ValueError, ZeroDivisionError):
        raise InputError(f"{what}: {value!r} is not a number; expected e.g. 2 or 1.5") from None
    if v < 0:
        raise InputError(f"{what} is {value}; expected a number >= 0")
    return v


@uluk.command("feed", epilog=example("solver uluk feed --tribers 3 --have 'baked mgobu=3'"))
@click.option("--tribers", type=int, required=True, help="Tribers to feed.")
@click.option("--have", default="", help="Resources on the tribe board, e.g. 'baked mgobu=3,salted fnord=2'.")
@click.option("--board", "board_file", default=None, help="Tribe board file (default 'example': the shipped EXAMPLE).")
@click.option("--feast", "feast_file", default=None, help="Feast card file (default 'example': the shipped EXAMPLE).")
@click.option("--final", is_flag=True, help="Last season: the feast card scores, kept food is worth nothing.")
@click.option("--hunger", type=int, default=0, show_default=True, help="Hunger tokens already taken.")
@click.option("--triber-value", default="0", show_default=True, help="Happiness one new triber is worth to you.")
@click.option("--keep-value", default="0", show_default=True,
              help="Happiness per durable food piece kept for later (not in the last season).")
@click.option("--treat-on-reproduction", is_flag=True, help="Treats spent on reproduction also give +1.")
@output_options
def feed_cmd(tribers: int, have: str, board_file: str | None, feast_file: str | None, final: bool, hunger: int,
             triber_value: str, keep_value: str, treat_on_reproduction: bool, as_json: bool, as_csv: bool) -> None:
    """Best feeding / reproduction / celebration / treat plan at the end of a season."""
    non_negative(tribers, "--tribers")
    non_negative(hunger, "--hunger")
    if feast_file is not None and not final:
        raise InputError("--feast scores only in the last season; add --final, or leave --feast out")
    board = load_board(board_file)
    feast = load_feast(feast_file) if final else None
    opts = FeedOptions(final=final, hunger_before=hunger, triber_value=_fraction(triber_value, "--triber-value"),
                       keep_value=_fraction(keep_value, "--keep-value"), treat_on_reproduction=treat_on_reproduction)
    best, frontier = solve_feed(board, parse_have(have, board), tribers, opts, feast)
    rows = [{"new_tribers": p.new_tribers, "celebration": p.celebration, "treats": p.treats_eaten,
             "happiness": p.happiness, "feast": p.feast_points, "hunger": p.hunger_points,
             "kept_food": p.kept_food, "score": p.score,
             "eats": "; ".join(f"{k} {n}" for n, k in p.eaten.items()) or "-"} for p in frontier]
    facts = {"best_score": best.score, "happiness_now": best.happiness, "fed": best.fed, "unfed": best.unfed,
             "new_tribers": best.new_tribers, "celebration": best.celebration,
             "treats_eaten": best.treats_eaten, "extra_treats": best.extra_treats,
             "eaten": best.eaten or {}, "perishes": best.perished or {},
             "hunger_points": best.hunger_points, "feast_sets": best.feast_sets, "feast_points": best.feast_points,
             "keep_points": best.keep_points}
    notes = []
    if board.example:
        notes.append("tribe board is the EXAMPLE file: printed boards were lost; pass --board")
    if feast is not None and feast.example:
        notes.append("feast card is the EXAMPLE file: printed cards were lost; pass --feast")
    emit(Report("Feeding phase: best plan, and the best plan for each number of new tribers",
                list(rows[0]), rows, facts, notes), as_json, as_csv)
