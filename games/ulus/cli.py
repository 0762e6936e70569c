"""``solver ulus``: shagai odds, the Naadam horse race and monster fights, as text, JSON or CSV."""
from __future__ import annotations

import json
from pathlib import Path
from fractions import Fraction
from typing import Any, Callable, Sequence

import click

from gamesolver.games.ulus import fight as fight_mod
from gamesolver.games.ulus import race as race_mod
from gamesolver.games.ulus.shagai import FACES, face_probabilities, preset_names, rules, shagai_report
from gamesolver.solver.errors import InputError
from gamesolver.solver.tables.paths import cache_dir
from gamesolver.solver.tables.table import prepare_table_dir
from gamesolver.solver.report import check_format, emit_csv, example, output_options


def _face_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--faces", metavar="H,C,S,G", help="Face probabilities Horse,Camel,Sheep,Goat (decimals or fractions); overrides --preset.")(f)
    f = click.option("--preset", type=click.Choice(preset_names()), default=None,
                     help=f"Face-probability preset (default {rules()['default_preset']}).")(f)
    return f


def _faces_text(probs: Sequence[Fraction]) -> str:
    return ", ".join(f"{name.capitalize()} {float(p):g}" for name, p in zip(FACES, probs))


def _source(preset: str | None, faces: str | None) -> str:
    return "custom faces" if faces is not None else f"preset {preset or rules()['default_preset']}"


def _int_list(text: str | None, what: str) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(t) for t in text.split(",")]
    except ValueError:
        raise InputError(f"{what} must be whole numbers separated by commas, got {text!r}") from None


def _race_table(cfg: race_mod.RaceConfig, cache: str | None, table_dir: str | None, out: str | None,
                save: bool) -> tuple[race_mod.RaceSolution, str]:
    """The solved race: read from --table, solved into --out, or through the cache."""
    if sum(x is not None for x in (cache, table_dir, out)) > 1:
        raise InputError("--table (read), --out (write) and --cache (cache root) name one place each; give one")
    if table_dir is not None:
        return race_mod.load_solution(Path(table_dir), cfg), f"opened {table_dir}"
    if out is not None:
        prepare_table_dir(out, create=False)  # refuse a bad place before the solve, not after it
        sol = race_mod.solve_race(cfg)
        return sol, f"solved now, saved to {race_mod.save_solution(sol, Path(out))}"
    return race_mod.solve_or_load(cfg, cache_dir(cache), save)


@click.group(epilog=example("solver ulus race --players 3 --no-save"))
def ulus() -> None:
    """Ulus: shagai odds, the horse race, monster fights."""


@ulus.command(epilog=example("solver ulus shagai --preset uniform --json"))
@_face_options
@click.option("--strength", type=int, default=None, help="Current strength: Tuul'ch losses stop at 0.")
@output_options
def shagai(preset: str | None, faces: str | None, strength: int | None, as_json: bool, as_csv: bool) -> None:
    """Exact odds of every four-shagai pattern and what it means."""
    check_format(as_json, as_csv)
    probs = face_probabilities(preset, faces)
    report = shagai_report(probs, strength)
    rows = report.rows()
    expected = report.expected_tuulch_change()
    if as_json:
        click.echo(json.dumps({
            "faces": dict(zip(FACES, (float(p) for p in probs))),
            "source": _source(preset, faces),
            "strength": strength,
            "patterns": rows,
            "expected_tuulch_change": float(expected),
            "expected_tuulch_change_fraction": str(expected),
        }, indent=2))
        return
    if as_csv:
        emit_csv(rows)
        return
    click.echo(f"Four shagai, {_source(preset, faces)}: {_faces_text(probs)}")
    click.echo(f"{'pattern':<22}{'probability':>12}  {'nomadic phase':<16}{'Tuulch':>7}  cards")
    for r in rows:
        click.echo(f"{r['pattern']:<22}{r['probability']:>12.6f}  {r['nomadic']:<16}{r['tuulch_strength']:>+7d}  {r['tuulch_cards']}")
    clamp = f" (strength {strength}, never below 0)" if strength is not None else ""
    click.echo(f"Expected strength change at Tuul'ch{clamp}: {float(expected):+.4f}")


@ulus.command(epilog=example("solver ulus race --players 3 --alun-gua 2 --no-save"))
@click.option("--players", type=int, required=True, help="Number of players, 2 to 6.")
@click.option("--chinggis", type=int, default=None, help="Player (1 = first to roll) who is Chinggis Khan: starts 2 sites ahead.")
@click.option("--alun-gua", type=int, default=None, help="Player who is Alun Gua: once, all opponents miss two turns.")
@click.option("--camel", is_flag=True, help="Camel Race variant: count Camel faces.")
@click.option("--length", type=int, default=None, help="Track length in sites (default 9).")
@click.option("--from", "from_pos", metavar="P1,P2,..", default=None, help="Start from these positions (sites moved).")
@click.option("--turn", type=int, default=None, help="Player to roll next (with --from; default 1).")
@click.option("--ability-used", is_flag=True, help="Alun Gua has already sung (with --from).")
@click.option("--rounds", "show_rounds", is_flag=True, help="Show (or export) the whole race-length distribution.")
@click.option("--cache", type=click.Path(file_okay=False), default=None,
              help="Table cache directory (default: $SOLVER_CACHE_DIR or ~/.cache/gamesolver).")
@click.option("--table", "table_dir", type=click.Path(file_okay=False), default=None,
              help="Read the solved table in this directory (never written).")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Solve and write the table here.")
@click.option("--save/--no-save", default=True, show_default=True, help="Save the solved table in the cache.")
@_face_options
@output_options
def race(players: int, chinggis: int | None, alun_gua: int | None, camel: bool, length: int | None,
         from_pos: str | None, turn: int | None, ability_used: bool, show_rounds: bool, cache: str | None,
         table_dir: str | None, out: str | None, save: bool, preset: str | None, faces: str | None, as_json: bool,
         as_csv: bool) -> None:
    """Win probabilities in the Naadam horse race, solved exactly."""
    check_format(as_json, as_csv)
    if from_pos is None and (turn is not None or ability_used):
        given = "--turn" if turn is not None else "--ability-used"
        raise InputError(f"{given} describes a race under way; give the positions with --from P1,P2,..")
    probs = face_probabilities(preset, faces)
    cfg = race_mod.make_config(players, length, probs, camel, chinggis, alun_gua)
    pos = cfg.start() if from_pos is None else tuple(_int_list(from_pos, "--from") or ())
    turn = 1 if turn is None else turn
    if ability_used and cfg.alun_gua is None:
        raise InputError("--ability-used needs --alun-gua")
    sol, where = _race_table(cfg, cache, table_dir, out, save)
    base = sol.win(pos, turn - 1, ability=False)
    have = cfg.alun_gua is not None and not ability_used
    best = sol.win(pos, turn - 1, ability=True) if have else None
    roles = {cfg.chinggis: "Chinggis Khan", cfg.alun_gua: "Alun Gua"}
    rows = []
    for i in range(players):
        row: dict[str, Any] = {"player": i + 1, "role": roles.get(i, ""), "position": pos[i], "win": float(base[i])}
        if best is not None:
            row["win_alun_gua_sings"] = float(best[i])
        rows.append(row)
    dist = race_mod.rounds_distribution(cfg)
    expected = float((dist * range(1, dist.size + 1)).sum())
    summary = race_mod.sing_summary(sol) if cfg.alun_gua is not None else None
    if as_csv:
        emit_csv([{"round": r + 1, "probability": float(p)} for r, p in enumerate(dist)] if show_rounds else rows)
        return
    if as_json:
        answer: dict[str, Any] = {
            "players": players, "length": cfg.length, "face": cfg.face, "face_probability": cfg.p,
            "source": _source(preset, faces), "sites_per_roll": [float(x) for x in cfg.steps],
            "position": list(pos), "turn": turn, "win": rows,
            "expected_rounds": expected, "rounds_distribution": [float(x) for x in dist],
            "table": where,
        }
        if summary is not None:
            answer["alun_gua"] = summary
        click.echo(json.dumps(answer, indent=2))
        return
    click.echo(f"{cfg.face.capitalize()} race: {players} players, track {cfg.length} sites, {_source(preset, faces)} "
               f"({cfg.face} face {cfg.p:g} per shagai)")
    click.echo("Sites per roll: " + "  ".join(f"{k}: {q:.4f}" for k, q in enumerate(cfg.steps)))
    click.echo(f"From positions {','.join(map(str, pos))}, player {turn} to roll")
    head = f"{'player':<8}{'role':<15}{'win':>9}"
    if best is not None:
        head += f"{'win, Alun Gua sings':>22}"
    click.echo(head)
    for row in rows:
        line = f"{row['player']:<8}{row['role']:<15}{row['win']:>9.4f}"
        if best is not None:
            line += f"{row['win_alun_gua_sings']:>22.4f}"
        click.echo(line)
    if best is not None and summary is not None:
        a = cfg.alun_gua
        assert a is not None
        click.echo(f"Alun Gua's song is worth {best[a] - base[a]:+.4f} to her ({base[a]:.4f} -> {best[a]:.4f}).")
        click.echo(
            f"Best moment: at once. Waiting is never better ({summary['waiting_better']} of {summary['states']} states); "
            f"in {summary['must_sing_now']} states waiting one more turn costs her up to {summary['max_cost_of_waiting']:.4f}"
            + (", all of them just before an opponent within reach of the finish rolls." if summary["only_before_opponent_in_reach"] else ".")
        )
    cum = dist.cumsum()
    half = int((cum >= 0.5).argmax()) + 1
    ninety = int((cum >= 0.9).argmax()) + 1
    click.echo(f"Race length from the start, no song: expected {expected:.3f} rounds; median round {half}; 90% by round {ninety}.")
    if show_rounds:
        for r, p in enumerate(dist):
            if p >= 1e-6:
                click.echo(f"  round {r + 1:>3}: {p:.6f}")
    click.echo(f"Table: {where} ({sol.seconds:.2f} s to solve).")


@ulus.command(name="fight", epilog=example("solver ulus fight --strength 6 --multiplier 2 --players 3"))
@click.option("--strength", type=int, required=True, help="The champion's strength.")
@click.option("--multiplier", type=int, required=True, help="The monster's printed multiplier (the X number).")
@click.option("--players", type=int, required=True, help="Number of players (power = multiplier x players).")
@click.option("--season", default="summer", show_default=True, help="Season of the site: summer, autumn, winter, spring.")
@click.option("--second-multiplier", default=None, metavar="M[,M..]",
              help="Multiplier(s) of the monster three goats bring, equally likely (default: same as the first).")
@click.option("--asset-value", type=int, default=10, show_default=True, help="Points the asset is worth to you.")
@click.option("--with-monster", "others", type=int, multiple=True, metavar="M",
              help="Another monster already in this fight (Uureg Lake's second card, monster-whispering); repeatable.")
@_face_options
@output_options
def fight_cmd(strength: int, multiplier: int, players: int, season: str, second_multiplier: str | None,
              asset_value: int, others: tuple[int, ...], preset: str | None, faces: str | None,
              as_json: bool, as_csv: bool) -> None:
    """Exact outcomes of a monster fight, with and without rolling the shagai."""
    check_format(as_json, as_csv)
    setup = fight_mod.make_setup(strength, multiplier, players, season,
                                 _int_list(second_multiplier, "--second-multiplier"), asset_value, others)
    probs = face_probabilities(preset, faces)
    choices = fight_mod.fight(setup, probs)
    best = fight_mod.verdict(setup, choices)
    rows = [
        {"choice": c.name, "outcome": o.name, "probability": float(o.probability), "fraction": str(o.probability),
         "asset": o.asset, "strength_after": o.strength}
        for c in choices.values() for o in c.outcomes
    ]
    totals = {
        c.name: {"p_asset": float(c.p_asset), "expected_strength": float(c.expected_strength),
                 "expected_points": float(c.expected_points(asset_value))}
        for c in choices.values()
    }
    if as_csv:
        emit_csv(rows)
        return
    if as_json:
        click.echo(json.dumps({
            "strength": strength, "multiplier": multiplier, "with_monsters": list(others), "players": players,
            "season": setup.season,
            "power": setup.power, "second_monster_powers": setup.second_powers(), "asset_value": asset_value,
            "faces": dict(zip(FACES, (float(p) for p in probs))), "outcomes": rows, "totals": totals,
            "better": best,
        }, indent=2))
        return
    winter = " +1 for winter" if setup.winter else ""
    more = "".join(f" + {m}X" for m in others)
    click.echo(f"Strength {strength} against a {multiplier}X{more} monster{'s' if others else ''}{winter}, "
               f"{players} players: power {setup.power}; "
               f"{_source(preset, faces)}")
    click.echo(f"{'choice':<8}{'outcome':<22}{'probability':>12}  {'asset':<6}{'strength after':>14}")
    for r in rows:
        click.echo(f"{r['choice']:<8}{r['outcome']:<22}{r['probability']:>12.6f}  {'yes' if r['asset'] else 'no':<6}{r['strength_after']:>14d}")
    click.echo(f"{'':<8}{'P(asset)':>10}{'E[strength]':>13}{'E[points]':>11}  (asset worth {asset_value})")
    for name, t in totals.items():
        click.echo(f"{name:<8}{t['p_asset']:>10.4f}{t['expected_strength']:>13.4f}{t['expected_points']:>11.4f}")
    click.echo(f"Better by expected points: {best['by_points']}; by chance of the asset: {best['by_asset']}.")
