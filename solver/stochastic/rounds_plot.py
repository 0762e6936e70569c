"""A picture of a walk's rounds from its checkpoint's history (``walk.round_row``): the largest
change of each round on a log scale, coloured by stage, with the change each stage ends at; below
it, what each round took and the share of states its full sweep generated. For a long solve read
beside it (``solver ur solve --status --plot FILE``): how fast each stage falls, where time goes.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gamesolver.solver.errors import InputError
from gamesolver.solver.stochastic import checkpoint, schedule
from gamesolver.solver.tables.atomic import atomic_path


def stage_name(stage: int, discounts: list[float]) -> str:
    """A stage as the plot's legend names it: its number and its discount."""
    d = discounts[stage] if stage < len(discounts) else 0.0
    return f"stage {stage + 1}: " + (f"1 - discount {d:g}" if d else "undiscounted")


def plot_rounds(rows: list[dict[str, Any]], discounts: list[float], tolerance: float | None,
                path: str | os.PathLike[str], title: str, aims: list[float] | None = None) -> Path:
    """Draw ``rows`` (a checkpoint's rounds, oldest first) to a PNG at ``path``, written whole or
    not at all; ``discounts``: the walk's stages' 1 - discount, ``tolerance``: the solve's (for
    where each stage ends; None leaves the ends out), ``aims``: the early stages' aims the solve ran
    with (None: this run's, ``schedule.early_aims``). InputError where there are no rows."""
    if not rows:
        raise InputError("the checkpoint keeps no rounds to draw (it was written before checkpoints kept "
                         "them, or before the first round ended)")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6.5), dpi=100, sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    try:
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        unit, per = ("minutes", 60.0) if max(r["round_s"] for r in rows) >= 120 else ("seconds", 1.0)
        # a repair's walk (rows marked "repair") runs the stages again: drawn apart, hollow; a stage's
        # rounds after a local repair start again from the repaired values: drawn apart too
        for repair, repairs, stage in sorted({(repair, n, stage) for stage, repair, n in map(checkpoint.row_walk, rows)}):
            mine = [r for r in rows if checkpoint.row_walk(r) == (stage, repair, repairs)]
            x = [r["sweep"] for r in mine]
            colour = colours[stage % len(colours)]
            which = (" (the repair's walk)" if repair
                     else f" ({checkpoint.walk_words(False, repairs).strip()})" if repairs else "")
            top.semilogy(x, [max(r["change"], 1e-12) for r in mine], "o-", markersize=3, color=colour,
                         label=stage_name(stage, discounts) + which, markerfacecolor="none" if repair else colour)
            if tolerance is not None and stage <= len(discounts):
                end = (schedule.stage_end(stage, tolerance, not repair, tuple(aims) if aims else None)
                       if stage < len(discounts) else tolerance)
                top.hlines(end, x[0] - 0.5, x[-1] + 0.5, colors=colour, linestyles="--", linewidth=1)
            bottom.bar(x, [r["round_s"] / per for r in mine], color=colour, alpha=0.35, width=0.8)
            bottom.bar(x, [r["full_s"] / per for r in mine], color=colour, width=0.5)
        top.set_ylabel("largest change in the round's full sweep")
        top.set_title(f"{title}: the walk's rounds (dashed: the change each stage ends at)", fontsize=10)
        top.legend(fontsize=8)
        top.grid(True, which="major", alpha=0.3)
        bottom.set_ylabel(f"{unit} a round (dark: its full sweep)")
        bottom.set_xlabel("full sweep")
        shares = [(r["sweep"], r["generated"]) for r in rows if r["generated"] is not None]
        if shares:
            right = bottom.twinx()
            right.plot([s for s, _ in shares], [100 * g for _, g in shares], "k.", markersize=3)
            right.set_ylabel("% of states generated (dots)")
            right.set_ylim(0, 105)
        fig.tight_layout()
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format="png")
    finally:
        plt.close(fig)
    return Path(path)
