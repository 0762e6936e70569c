"""``solver ghosts ...``: combat odds, clearing Kish, Ambush, Nanna, movement and AVA defence.

A thin layer over games.ghosts.combat and games.ghosts.movement; every command prints a text
table, or ``--json`` / ``--csv``.
"""
from __future__ import annotations

import click

from gamesolver.games.ghosts import combat, movement
from gamesolver.solver.report import (
    Report,
    check_format,
    emit,
    example,
    fraction_text,
    non_negative,
    output_options,
    parse_int_list,
)
from gamesolver.games.ghosts.rules import REROLL_READINGS, defender_modifier, rules
from gamesolver.solver.errors import InputError
from gamesolver.solver.limits import check_at_most, check_cost, estimate_seconds
from gamesolver.solver.progress import progress


def _dice_options(func):
    func = click.option("--reroll", default="roll", show_default=True,
                        help=f"Anglean's reroll reading: {' or '.join(REROLL_READINGS)} "
                             "(die: each blank die once; roll: a total of 0 once).")(func)
    func = click.option("--anglean", is_flag=True, help="Anglean rolls: zeros on the Ur dice are rerolled.")(func)
    return func


def _probs_option(func):
    return click.option("--probs", default=None,
                        help="P(roll 0..4) for other dice, e.g. 1/16,1/4,3/8,1/4,1/16 (must sum to 1).")(func)


def _ambush_options(func):
    func = click.option("--bonus", type=int, default=0, show_default=True,
                        help="With --ambush-variant: the adventurer's total bonus in the Ambush fights.")(func)
    func = click.option("--ambush-variant", is_flag=True,
                        help="Variant: every third consecutive 2 needs an Ambush cleared, or the turn ends.")(func)
    return func


def _ambush_clear(variant: bool, bonus: int, anglean: bool, reroll: str):
    non_negative(bonus, "--bonus")
    return combat.ambush(bonus, False, anglean, reroll).card if variant else None


def _probs(text: str | None):
    return None if text is None else movement.parse_probabilities(text)


def _check_reroll(reroll: str) -> None:
    if reroll not in REROLL_READINGS:
        raise InputError(f"unknown reroll reading {reroll!r}; expected one of {', '.join(REROLL_READINGS)}")


# Work grows fast with these numbers (exact fractions); beyond the quick values a run needs
# --force. Cost references (value, seconds, exponent) were measured on a 2-core machine.
CLEAR_QUICK_KISH = 50
CLEAR_QUICK_STEPS = 2000
CLEAR_KISH_COST = (50, 3.0, 4.3)
CLEAR_STEPS_COST = (2000, 3.4, 2.5)
RACE_QUICK_DISTANCE = 100
RACE_COST = (100, 3.5, 2.8)
RACE_MAX_TURNS = 1000  # the rows listed at most; the tail beyond is reported
NANNA_MAX_ATTEMPTS = 1000


def _force_option(func):
    return click.option("--force", is_flag=True,
                        help="Run even when the estimate says it takes long (with a progress bar on a "
                             "terminal).")(func)


def _show_bar(seconds: float) -> bool | None:
    """A bar only for work that takes a while, and only on a terminal."""
    return None if seconds > 2 else False


def _tolerance(value: float) -> float:
    if not 0 < value < 1:
        raise InputError(f"tolerance is {value}; expected a number between 0 and 1")
    return value


@click.group(epilog=example("solver ghosts nanna --bonus 20"))
def ghosts() -> None:
    """Ghosts of Ur: d100 combat, Ur dice movement, Nanna."""


@ghosts.command("combat", epilog=example('solver ghosts combat --attacker-bonus 15 --defender ghost'))
@click.option("--attacker-bonus", "bonus", type=int, default=0, show_default=True,
              help="Attacker's bonus (skill, e.g. Anglean +15 in AVE), before equipment.")
@click.option("--defender", default="kish", show_default=True, help="kish, akkadian, ghost or nanna.")
@click.option("--emmer", is_flag=True, help="The defender stands on an Emmer Field (+10).")
@click.option("--equipment", default="", help="Equipment values the attacker holds, e.g. 10,5; "
              "added after seeing the roll, only when they change the odds.")
@click.option("--table", "whole", is_flag=True, help="Print the whole table by net modifier.")
@output_options
def combat_cmd(bonus: int, defender: str, emmer: bool, equipment: str, whole: bool, as_json: bool, as_csv: bool) -> None:
    """Exact chance that the attacker wins one combat (defender wins ties)."""
    non_negative(bonus, "--attacker-bonus")
    d = defender_modifier(defender, emmer)
    gear = sum(parse_int_list(equipment, "--equipment"))
    if whole:
        rows = [{"net": net, "p_attacker": p, "exact": fraction_text(p)} for net, p in combat.combat_table()]
        emit(Report("Attacker's win chance by net modifier (attacker's minus defender's)",
                    ["net", "p_attacker", "exact"], rows,
                    notes=["net <= -99 never wins; net >= 100 always wins"]), as_json, as_csv)
        return
    plan = combat.equipment_plan(bonus, d, gear)
    rows = [{"case": "without equipment", "p_attacker": plan.win_without, "exact": fraction_text(plan.win_without)}]
    if gear:
        rows.insert(0, {"case": "with equipment when it helps", "p_attacker": plan.win,
                        "exact": fraction_text(plan.win)})
    facts = {"defender": defender, "defender_modifier": d, "attacker_bonus": bonus, "equipment": gear,
             "net": bonus + gear - d, "p_attacker_wins": plan.win, "p_defender_wins": 1 - plan.win}
    if gear:
        facts.update({"p_auto_win_no_cards": plan.auto_win, "p_cards_used": plan.use_cards,
                      "p_hopeless": plan.hopeless,
                      "use_cards_on_rolls": None if plan.first_useful_roll is None
                      else f"{plan.first_useful_roll}-{plan.last_useful_roll}"})
    emit(Report(f"Combat against {defender}{' on an Emmer Field' if emmer else ''}", ["case", "p_attacker", "exact"],
                rows, facts), as_json, as_csv)


@ghosts.command("clear", epilog=example('solver ghosts clear --kish 3 --bonus 10'))
@click.option("--kish", type=int, required=True, help="Kish on the tile.")
@click.option("--bonus", type=int, default=0, show_default=True, help="Attacker's total bonus incl. equipment.")
@click.option("--emmer", is_flag=True, help="The tile is an Emmer Field (Kish get +10).")
@click.option("--steps", type=int, default=10, show_default=True, help="Attempts / rounds to tabulate.")
@click.option("--extra-after-retreat/--no-extra-after-retreat", default=True, show_default=True,
              help="A roll of 2 still gives the extra turn after losing a fight.")
@_force_option
@_dice_options
@output_options
def clear_cmd(kish: int, bonus: int, emmer: bool, steps: int, extra_after_retreat: bool, force: bool, anglean: bool,
              reroll: str, as_json: bool, as_csv: bool) -> None:
    """Clearing a tile of K Kish: in one attempt, by attempts, and by own rounds."""
    non_negative(kish, "--kish")
    non_negative(bonus, "--bonus")
    if steps < 1:
        raise InputError(f"--steps is {steps}; expected 1 or more")
    _check_reroll(reroll)
    seconds = (estimate_seconds(kish, *CLEAR_KISH_COST) + estimate_seconds(steps, *CLEAR_STEPS_COST)
               * max(1.0, kish / 2) ** 2)
    check_cost("--kish", kish, CLEAR_QUICK_KISH, seconds, force)
    check_cost("--steps", steps, CLEAR_QUICK_STEPS, seconds, force)
    with progress(steps, "rounds", enabled=_show_bar(seconds)) as bar:
        res = combat.clear_tile(kish, bonus, emmer, steps, anglean, reroll, extra_after_retreat, on_step=bar.update)
    rows = [{"turns": t, "p_at_attempt": a, "p_by_attempt": ca, "p_at_round": r, "p_by_round": cr}
            for (t, a, ca), (_, r, cr) in zip(res.by_attempts, res.by_rounds)]
    facts = {"kish": kish, "p_one_fight": res.p_fight, "p_clear_in_one_attempt": res.one_attempt,
             "exact_one_attempt": fraction_text(res.one_attempt),
             "expected_attempts": res.expected_attempts}
    emit(Report("Clearing a Kish tile (attempt = one turn reaching the tile; round = a turn with its extra turns)",
                list(rows[0]), rows, facts), as_json, as_csv)


@ghosts.command("ambush", epilog=example('solver ghosts ambush --bonus 10'))
@click.option("--bonus", type=int, default=0, show_default=True, help="Attacker's total bonus incl. equipment.")
@click.option("--emmer", is_flag=True, help="The adventurer stands on an Emmer Field (Kish get +10).")
@_dice_options
@output_options
def ambush_cmd(bonus: int, emmer: bool, anglean: bool, reroll: str, as_json: bool, as_csv: bool) -> None:
    """The Ambush card: Ur dice give the Kish; a card if all are beaten or none came."""
    non_negative(bonus, "--bonus")
    _check_reroll(reroll)
    res = combat.ambush(bonus, emmer, anglean, reroll)
    rows = [{"kish": n, "p_roll": pr, "p_all_beaten": pw} for n, pr, pw in res.rows]
    facts = {"p_one_fight": res.p_fight, "p_card": res.card, "exact_card": fraction_text(res.card),
             "p_retreat": res.retreat, "expected_kish_beaten": res.expected_kish_beaten}
    emit(Report("Ambush", ["kish", "p_roll", "p_all_beaten"], rows, facts), as_json, as_csv)


@ghosts.command("nanna", epilog=example('solver ghosts nanna --bonus 20'))
@click.option("--bonus", type=int, default=0, show_default=True, help="Attacker's total bonus incl. equipment.")
@click.option("--attempts", type=int, default=None, help=f"Fights allowed (rules: {rules().nanna_attempts}).")
@output_options
def nanna_cmd(bonus: int, attempts: int | None, as_json: bool, as_csv: bool) -> None:
    """Chance of defeating Nanna (+45) within the allowed attempts."""
    check_format(as_json, as_csv)
    non_negative(bonus, "--bonus")
    if attempts is not None:
        check_at_most("--attempts", attempts, NANNA_MAX_ATTEMPTS,
                      "the exact fractions grow by three digits an attempt and the chance is 1 long before")
    p, within = combat.nanna(bonus, attempts)
    rows = [{"attempt": i + 1, "p_by_attempt": q, "exact": fraction_text(q)} for i, q in enumerate(within)]
    if as_json:
        import json
        click.echo(json.dumps({"bonus": bonus, "attempts": len(within), "p_one_fight": float(p),
                               "probabilities": [float(q) for q in within],
                               "exact": [fraction_text(q) for q in within]}, indent=2))
        return
    emit(Report("Defeating Nanna", ["attempt", "p_by_attempt", "exact"], rows,
                {"bonus": bonus, "p_one_fight": p}), False, as_csv)


@ghosts.command("move", epilog=example('solver ghosts move --anglean'))
@click.option("--tolerance", type=float, default=1e-9, show_default=True,
              help="Stop listing when the exact probability of more squares is below this.")
@_probs_option
@_ambush_options
@_dice_options
@output_options
def move_cmd(tolerance: float, probs: str | None, ambush_variant: bool, bonus: int, anglean: bool, reroll: str,
             as_json: bool, as_csv: bool) -> None:
    """Squares one turn allows, counting the extra turns a roll of 2 gives (no limit)."""
    _check_reroll(reroll)
    dist = _probs(probs)
    clear = _ambush_clear(ambush_variant, bonus, anglean, reroll)
    rows, tail = movement.turn_squares(anglean, reroll, _tolerance(tolerance), probs=dist, ambush_clear=clear)
    dice = movement.ur_roll_distribution(anglean, reroll, dist)
    facts = {"roll_probabilities": list(dice), "p_extra_turn": dice[rules().extra_turn_roll],
             "expected_squares": movement.turn_mean(dice, clear),
             "expected_rolls": movement.turn_rolls_mean(dice, clear),
             "tail_left_off": tail}
    if clear is not None:
        facts["p_ambush_cleared"] = clear
    emit(Report("Squares allowed in one turn with its extra turns",
                ["squares", "p", "p_at_most"],
                [{"squares": s, "p": p, "p_at_most": c} for s, p, c in rows], facts), as_json, as_csv)


@ghosts.command("race", epilog=example('solver ghosts race --distance 12'))
@click.option("--distance", type=int, required=True, help="Squares to travel (open ground).")
@click.option("--count", default="rounds", show_default=True,
              help="rounds: a turn with its extra turns counts once; rolls: every roll counts.")
@click.option("--tolerance", type=float, default=1e-9, show_default=True,
              help="Stop listing when the exact probability of needing more turns is below this.")
@_probs_option
@_ambush_options
@_force_option
@_dice_options
@output_options
def race_cmd(distance: int, count: str, tolerance: float, probs: str | None, ambush_variant: bool, bonus: int,
             force: bool, anglean: bool, reroll: str, as_json: bool, as_csv: bool) -> None:
    """Distribution of the number of turns needed to travel a distance."""
    non_negative(distance, "--distance")
    _check_reroll(reroll)
    dist = _probs(probs)
    tolerance = _tolerance(tolerance)
    seconds = estimate_seconds(distance, *RACE_COST)
    check_cost("--distance", distance, RACE_QUICK_DISTANCE, seconds, force)
    clear = _ambush_clear(ambush_variant, bonus, anglean, reroll)
    # the bar follows the share of races already finished: the number of turns is not known ahead
    with progress(1000, "races finished", enabled=_show_bar(seconds)) as bar:
        shown = [0]

        def advance(done: float) -> None:
            now = round(done * 1000)
            bar.update(now - shown[0])
            shown[0] = now

        rows, tail = movement.race(distance, anglean, reroll, count, tolerance, max_turns=RACE_MAX_TURNS,
                                   probs=dist, ambush_clear=clear, on_turn=advance)
    mean = movement.race_mean(distance, anglean, reroll, count, probs=dist, ambush_clear=clear)
    emit(Report(f"Turns ({count}) to travel {distance} squares", ["turns", "p", "p_at_most"],
                [{"turns": t, "p": p, "p_at_most": c} for t, p, c in rows],
                {"expected_turns": mean, "tail_left_off": tail}), as_json, as_csv)


@ghosts.command("defend", epilog=example('solver ghosts defend --attacker-bonus 20 --defender-bonus 5'))
@click.option("--attacker-bonus", type=int, default=0, show_default=True, help="Attacker's total incl. equipment.")
@click.option("--defender-bonus", type=int, default=0, show_default=True, help="Defender's bonus incl. equipment.")
@click.option("--emmer", is_flag=True, help="The defender stands on an Emmer Field (+10).")
@click.option("--at-stake", type=int, default=6, show_default=True,
              help="Cards (and Player Tokens) the defender hands over if beaten.")
@click.option("--prize", type=int, default=6, show_default=True, help="Cards the defender takes if it wins.")
@click.option("--flee-cost", type=int, default=1, show_default=True, help="Cards fleeing costs (the Vanish Powder).")
@click.option("--flee-card/--no-flee-card", default=True, show_default=True, help="Whether a flee card is in hand.")
@click.option("--rows", "all_rows", is_flag=True, help="Text output: every attacker roll, not ranges.")
@output_options
def defend_cmd(attacker_bonus: int, defender_bonus: int, emmer: bool, at_stake: int, prize: int, flee_cost: int,
               flee_card: bool, all_rows: bool, as_json: bool, as_csv: bool) -> None:
    """AVA: after the attacker's total is shown, flee (Vanish Powder/Sandstorm) or fight?"""
    for value, name in ((attacker_bonus, "--attacker-bonus"), (defender_bonus, "--defender-bonus"),
                        (at_stake, "--at-stake"), (prize, "--prize"), (flee_cost, "--flee-cost")):
        non_negative(value, name)
    rows, summary = combat.defend_table(attacker_bonus, defender_bonus, at_stake, prize, flee_cost, emmer, flee_card)
    table = [{"attacker_roll": r.attacker_roll, "attacker_total": r.attacker_total, "need": r.need,
              "p_defender": r.fight_win, "fight_cards": r.fight_value, "flee_cards": r.flee_value,
              "choice": r.choice} for r in rows]
    flee_from = next((r.attacker_total for r in rows if r.choice == "flee"), None)
    facts = {"flee_when_attacker_total_at_least": flee_from, **summary}
    if not (as_json or as_csv or all_rows):
        table = _ranges(table)
    emit(Report("AVA defence: fight or flee, by the attacker's shown total", list(table[0]), table, facts),
         as_json, as_csv)


def _ranges(table: list[dict]) -> list[dict]:
    """Collapse consecutive rows with the same choice into one line per range."""
    out: list[dict] = []
    for row in table:
        if out and out[-1]["choice"] == row["choice"]:
            out[-1]["attacker_total"] = f"{out[-1]['_first']}-{row['attacker_total']}"
            out[-1]["p_defender"] = f"{float(out[-1]['_p0']):.4f}..{float(row['p_defender']):.4f}"
            continue
        out.append({"attacker_total": str(row["attacker_total"]), "p_defender": row["p_defender"],
                    "choice": row["choice"], "_first": row["attacker_total"], "_p0": row["p_defender"]})
    return [{k: v for k, v in r.items() if not k.startswith("_")} for r in out]
