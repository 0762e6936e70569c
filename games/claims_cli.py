"""``solver verify``: run every claim in the registry; one line a claim and the tally, then, with
``--details`` (or for claims named one by one with ``--claim``), each claim's evidence."""
from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import click

from gamesolver.games.claims import Claim, ClaimResult, RegistryError, check_registry, find_claim, load_claims
from gamesolver.solver.errors import InputError
from gamesolver.solver.tables.atomic import writable_folder

MARK = {"verified": "VERIFIED", "refuted": "REFUTED", "undetermined": "UNDETERMINED"}


def run_claim(claim: Claim, plots: Path | None) -> tuple[ClaimResult, float]:
    t0 = time.perf_counter()
    result = claim.run(plots_dir=plots)
    return result, time.perf_counter() - t0


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def summary_table(report: list[tuple[Claim, ClaimResult, float]], width: int) -> list[str]:
    """One row per claim: name, verdict, the one-line evidence cut to the terminal's width (the
    whole line follows in the claim's own block)."""
    wide = max(len(c.name) for c, _, _ in report)
    room = max(40, width - wide - 16)
    lines = [f"{'claim':<{wide}}  {'verdict':<12}  evidence", f"{'-' * wide}  {'-' * 12}  {'-' * 8}"]
    for c, r, _ in report:
        lines.append(f"{c.name:<{wide}}  {r.status:<12}  {_fit(r.summary, room)}")
    return lines


def show_progress() -> bool:
    """Progress lines go to stderr only on a terminal, never into a pipe or a file."""
    return sys.stderr.isatty()


@click.command()
@click.option("--claim", "names", multiple=True, help="Check only this claim (repeatable).")
@click.option("--game", "games", multiple=True, help="Check only the claims about this game (repeatable).")
@click.option("--details", is_flag=True,
              help="Also print each claim's evidence: its source, options, figures and long listings "
                   "(claims named with --claim show theirs, without the long listings, anyway).")
@click.option("--plots", "plots", type=click.Path(file_okay=False), default=None,
              help="Write the pictures (histograms, cycles) into this directory.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: per claim its source, options, verdict, "
              "evidence figures and uncertainty.")
def verify(names: tuple[str, ...], games: tuple[str, ...], details: bool, plots: str | None, as_json: bool) -> None:
    """Check every claim of the rulebooks and sources against exact calculations, with the evidence."""
    everything = load_claims()
    try:
        check_registry(everything)
    except RegistryError as exc:
        raise click.ClickException(str(exc)) from None
    claims = [find_claim(n) for n in names] if names else everything
    if games:
        known = {c.game for c in everything}
        for g in games:
            if g not in known:
                raise InputError(f"no claims about game {g!r}; games with claims: {', '.join(sorted(known))}")
        claims = [c for c in claims if c.game in games]
    if not claims:
        raise click.ClickException("no claim matches both --claim and --game")
    plots_dir = None
    if plots is not None:
        plots_dir = writable_folder(plots, "--plots: the plots directory")
    show = show_progress()
    report = []
    t_all = time.perf_counter()
    for i, claim in enumerate(claims, 1):
        if show:
            click.echo(f"\r[{i}/{len(claims)}] {claim.name} ...\x1b[K", err=True, nl=False)
        result, seconds = run_claim(claim, plots_dir)
        report.append((claim, result, seconds))
    if show:
        click.echo(f"\r{len(claims)} claims checked in {time.perf_counter() - t_all:.1f} s\x1b[K", err=True)
    if as_json:
        click.echo(json.dumps([_record(c, r, s) for c, r, s in report], indent=2, default=str))
        return
    for line in summary_table(report, shutil.get_terminal_size((160, 24)).columns):
        click.echo(line)
    counts = {s: sum(1 for _, r, _ in report if r.status == s) for s in MARK}
    named = bool(names) and not details
    click.echo(f"{len(report)} claim{'s' if len(report) != 1 else ''}: {counts['verified']} verified, "
               f"{counts['refuted']} refuted, {counts['undetermined']} undetermined"
               + ("" if details or named else "  (the evidence behind each verdict: --details)"))
    if not (details or named):
        return
    click.echo()
    for c, r, s in report:
        click.echo(f"{MARK[r.status]:<13} {c.name}  ({c.game}, {s:.1f} s)")
        click.echo(f"  claim:   {c.claim}")
        click.echo(f"  source:  {c.source}")
        if c.options:
            click.echo("  options: " + "; ".join(f"{k}={_show(v)}" for k, v in c.options.items()))
        click.echo(f"  verdict: {r.summary}")
        for line in r.evidence:
            click.echo(f"    {line}" if line else "")
        if r.uncertainty:
            click.echo("  uncertainty: " + _show(r.uncertainty.get("method", "")))
        if details and r.details:
            click.echo("  details:")
            for line in r.details:
                click.echo(f"    {line}")
        click.echo()


def _show(v: Any) -> str:
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(", ", ": "), default=str)
    return str(v)


def _record(c: Claim, r: ClaimResult, seconds: float) -> dict[str, Any]:
    return {"name": c.name, "game": c.game, "source": c.source, "claim": c.claim, "options": c.options,
            "verdict": r.status, "summary": r.summary, "evidence": r.evidence, "figures": r.figures,
            "uncertainty": r.uncertainty, "details": r.details, "seconds": round(seconds, 3)}
