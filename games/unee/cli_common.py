"""What every ``solver unee`` command shares: the group, the variant options (accepted before
the command or after it), the table options and how a query finds its table."""
from __future__ import annotations

import dataclasses
import functools
import json
from typing import Any, Callable

import click

from gamesolver.games.unee.rules import CAPTURE_ROWS, UneeOptions
from gamesolver.solver.progress import progress
from gamesolver.solver.report import example
from gamesolver.games.unee.solution import build_table, open_table, progress_steps, table_path
from gamesolver.solver.errors import MissingTableError
from gamesolver.solver.encoding import _boards


def emit_json(payload: Any) -> None:
    click.echo(json.dumps(payload, indent=2))


@click.group(epilog=example("solver unee --holes 2 --balls 4 graph"))
@click.option("--holes", "holes_per_row", type=int, default=3, show_default=True, help="Holes per row.")
@click.option("--balls", "balls_per_hole", type=int, default=6, show_default=True, help="Balls per hole at the start.")
@click.option("--skip-origin/--no-skip-origin", default=False, show_default=True, help="Laps skip the hole they started from.")
@click.option("--capture-rows", type=click.Choice(CAPTURE_ROWS), default="own", show_default=True,
              help="Rows where a last ball making four captures.")
@click.pass_context
def unee(ctx: click.Context, holes_per_row: int, balls_per_hole: int, skip_origin: bool, capture_rows: str) -> None:
    """Ünee Tugalluulax (2 x 3 holes, 36 balls). Positions are written 'N-row / S-row SIDE', e.g. '6 6 6 / 6 6 6 S'.

    The variant options may come before the command or after it, as in the other games."""
    ctx.obj = UneeOptions(holes_per_row, balls_per_hole, skip_origin, capture_rows)


# the variant options once more, on every command; given there, they override the group's
_VARIANT = {
    "holes_per_row": click.option("--holes", "holes_per_row", type=int, default=None,
                                  help="Holes per row (default 3)."),
    "balls_per_hole": click.option("--balls", "balls_per_hole", type=int, default=None,
                                   help="Balls per hole at the start (default 6)."),
    "skip_origin": click.option("--skip-origin/--no-skip-origin", default=None,
                                help="Laps skip the hole they started from."),
    "capture_rows": click.option("--capture-rows", type=click.Choice(CAPTURE_ROWS), default=None,
                                 help="Rows where a last ball making four captures (default own)."),
}


def variant_options(f: Callable[..., Any] | None = None, *, before_only: tuple[str, ...] = ()) -> Any:
    """Give the command the variant as its first argument ``options``: the group's, with any
    variant option given after the command taking its place (checked once, here).

    ``before_only`` names variant options that a command would use for something else; those are
    taken only before the command (none does now: every variant option means one thing)."""
    if f is None:
        return functools.partial(variant_options, before_only=before_only)
    accepted = [name for name in _VARIANT if name not in before_only]

    @functools.wraps(f)
    def run(*args: Any, **kwargs: Any) -> Any:
        options = click.get_current_context().find_object(UneeOptions) or UneeOptions()
        changes = {k: v for k in accepted if (v := kwargs.pop(k)) is not None}
        if changes:
            options = dataclasses.replace(options, **changes)
        return f(options, *args, **kwargs)

    for name in reversed(accepted):
        run = _VARIANT[name](run)
    return run


RULE_CHOICE = click.Choice(["uncounted", "draw", "split"])
RULE_HELP = "Repetition rule: uncounted (balls left count for nobody), draw (no result), split (own row)."


def cache_option(f: Any) -> Any:
    return click.option(
        "--cache", "cache", type=click.Path(file_okay=False), default=None,
        help="Table cache directory (default: $SOLVER_CACHE_DIR or ~/.cache/gamesolver).",
    )(f)


def table_option(f: Any) -> Any:
    return click.option(
        "--table", "table_dir", type=click.Path(file_okay=False), default=None,
        help="Use the table in this directory instead of the cache.",
    )(f)


def load_table(options: UneeOptions, rule: str, cache: str | None, table_dir: str | None) -> Any:
    """The solved table: an explicit directory, else the cache, solving it on first use."""
    if table_dir is not None:
        return open_table(table_dir, options, rule)
    path = table_path(options, rule, cache)
    try:
        return open_table(path, options, rule)
    except MissingTableError:
        pass

    n = _boards.board_count(options.holes, options.max_balls)
    click.echo(f"solving Ünee under the {rule} rule (first use; cached in {path})", err=True)
    with progress(n * progress_steps(rule), f"solve {rule}") as bar:
        build_table(options, rule, cache=cache, progress=bar.update)
    return open_table(path, options, rule)


