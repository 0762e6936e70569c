"""``solver verify``: run every claim in the registry and print a readable report."""
from __future__ import annotations

import inspect
import json
import os
import time
from pathlib import Path
from typing import Any

import click

from gamesolver.games.claims import ClaimResult, find_claim, load_claims
from gamesolver.solver.errors import InputError

MARK = {"verified": "VERIFIED", "refuted": "REFUTED", "undetermined": "UNDETERMINED"}


def run_claim(claim: Any, plots: Path | None) -> tuple[ClaimResult, float]:
    check = claim.checker()
    kwargs = {}
    if plots is not None and "plots_dir" in inspect.signature(check).parameters:
        kwargs["plots_dir"] = plots
    t0 = time.perf_counter()
    result = check(**kwargs)
    return result, time.perf_counter() - t0


@click.command()
@click.option("--claim", "names", multiple=True, help="Check only this claim (repeatable).")
@click.option("--game", "games", multiple=True, help="Check only the claims about this game (repeatable).")
@click.option("--plots", "plots", type=click.Path(file_okay=False), default=None,
              help="Write the pictures (histograms, cycles) into this directory.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def verify(names: tuple[str, ...], games: tuple[str, ...], plots: str | None, as_json: bool) -> None:
    """Check every historical or rulebook claim against the solved tables, with the evidence."""
    claims = [find_claim(n) for n in names] if names else load_claims()
    if games:
        known = {c.game for c in load_claims()}
        for g in games:
            if g not in known:
                raise InputError(f"no claims about game {g!r}; games with claims: {', '.join(sorted(known))}")
        claims = [c for c in claims if c.game in games]
    plots_dir = None
    if plots is not None:
        plots_dir = Path(plots)
        try:
            plots_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create the plots directory {plots}: {exc.strerror}") from None
        if not os.access(plots_dir, os.W_OK):
            raise InputError(f"cannot write into the plots directory {plots}")
    report = []
    for claim in claims:
        result, seconds = run_claim(claim, plots_dir)
        report.append((claim, result, seconds))
        if not as_json:
            click.echo(f"{MARK[result.status]:<13} {claim.name}  ({claim.game}, {seconds:.1f} s)")
            click.echo(f"  claim:  {claim.claim}")
            click.echo(f"  source: {claim.source}")
            if claim.options:
                click.echo("  rules:  " + ", ".join(f"{k}={v}" for k, v in claim.options.items()))
            click.echo(f"  result: {result.summary}")
            for line in result.evidence:
                click.echo(f"    {line}")
            click.echo()
    if as_json:
        click.echo(json.dumps([
            {"name": c.name, "game": c.game, "source": c.source, "claim": c.claim, "options": c.options,
             "status": r.status, "summary": r.summary, "evidence": r.evidence, "figures": r.figures,
             "seconds": round(s, 3)}
            for c, r, s in report
        ], indent=2, default=str))
        return
    counts = {s: sum(1 for _, r, _ in report if r.status == s) for s in MARK}
    click.echo(f"{len(report)} claims: {counts['verified']} verified, {counts['refuted']} refuted, "
               f"{counts['undetermined']} undetermined")
