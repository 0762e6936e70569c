"""``solver unee atlas``: every variant in a range solved under the three repetition rules
(the work is in ``games.unee.atlas``; this is its click layer)."""
from __future__ import annotations

import time
from pathlib import Path

import click
from gamesolver.games.unee.cli_common import emit_json, unee
from gamesolver.games.unee.rules import CAPTURE_ROWS
from gamesolver.solver.report import example
from gamesolver.games.unee import atlas as A
from gamesolver.solver.errors import InputError
from gamesolver.solver.limits import duration_text
from gamesolver.solver.progress import progress
from gamesolver.solver.tables.atomic import atomic_path, check_writable

_GROUP_VARIANT = ("holes_per_row", "balls_per_hole", "skip_origin", "capture_rows")


@unee.command(epilog=example("solver unee atlas --holes 2 --max-balls 3 --out atlas"))
@click.option("--holes", "holes", default="2..4", show_default=True,
              help="Holes per row: a number or a range such as 2..4.")
@click.option("--max-balls", type=int, default=8, show_default=True, help="Balls per hole from --min-balls to this.")
@click.option("--min-balls", type=int, default=1, show_default=True, help="The fewest balls per hole.")
@click.option("--skip-origin/--no-skip-origin", default=None,
              help="Only the variants whose laps skip (or do not skip) their origin; both by default.")
@click.option("--capture-rows", type=click.Choice(CAPTURE_ROWS), multiple=True,
              help="Only these capture rows (repeat the option for both); both by default.")
@click.option("--out", "out", type=click.Path(file_okay=True), default="unee-atlas", show_default=True,
              help="Folder for the results: one JSON file a variant, summary.csv and summary.json.")
@click.option("--max-boards", type=click.IntRange(min=1), default=80_000_000, show_default=True,
              help="Leave out variants with more boards than this.")
@click.option("--max-gib", type=click.FloatRange(min=0.1), default=20.0, show_default=True,
              help="Leave out variants estimated to need more memory than this (GiB); refuse jobs that together do.")
@click.option("--max-minutes", type=click.FloatRange(min=0.0), default=90.0, show_default=True,
              help="Refuse a run estimated to take longer than this (wall clock).")
@click.option("--jobs", type=click.IntRange(min=1, max=64), default=1, show_default=True,
              help="Variants solved at once, each in its own process.")
@click.option("--force", is_flag=True, help="Run even when the estimate passes --max-minutes or --max-gib.")
@click.option("--redo", is_flag=True, help="Solve again the variants whose results are in --out already.")
@click.option("--plan", "plan_only", is_flag=True, help="Say what would be solved, its size and estimates; solve nothing.")
@click.option("--split-effort", type=click.IntRange(min=0), default=1_000_000, show_default=True,
              help="Positions the exact split-rule search from the start may visit (0: bounds only).")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None,
              help="Draw the start values of every variant in --out to this picture (.png, .svg).")
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False), default=None,
              help="Write the atlas of every variant in --out as a Markdown table to this file.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def atlas(ctx: click.Context, holes: str, max_balls: int, min_balls: int, skip_origin: bool | None,
          capture_rows: tuple[str, ...], out: str, max_boards: int, max_gib: float, max_minutes: float, jobs: int,
          force: bool, redo: bool, plan_only: bool, split_effort: int, plot_path: str | None,
          markdown_path: str | None, as_json: bool) -> None:
    """Solve every variant in a range (holes per row, balls per hole, both sowing options) under
    the three repetition rules: sizes, reachable part, cycles, and the start's value and best play.

    Each variant's result is a small JSON file in --out, so a stopped run resumes where it was.
    The sizes, memory and time are estimated before any work; variants beyond --max-boards or
    --max-gib are left out and named."""
    group = ctx.parent
    if group is not None:
        given = [name for name in _GROUP_VARIANT
                 if group.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE]
        if given:
            raise InputError("the atlas takes its own ranges after the command (--holes 2..4 --max-balls 8 ...), "
                             "not the variant options before it")
    hole_list = A.parse_range(holes, "--holes", 1, 8)
    if not 1 <= min_balls <= max_balls <= 12:
        raise InputError(f"--min-balls {min_balls} and --max-balls {max_balls}: expected 1 <= min <= max <= 12")
    for path in (plot_path, markdown_path):
        if path is not None:
            check_writable(path)
    if plot_path is not None and Path(plot_path).suffix.lower() not in (".png", ".svg", ".pdf"):
        raise InputError(f"--plot {plot_path}: expected a .png, .svg or .pdf file name")
    chosen = A.variants(hole_list, range(min_balls, max_balls + 1),
                        (False, True) if skip_origin is None else (skip_origin,),
                        capture_rows or CAPTURE_ROWS)
    budget = A.Budget(max_boards, max_gib, max_minutes, jobs)
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--out {out}: it is a file; give a folder for the atlas")
    plan = A.make_plan(chosen, folder, budget, redo)
    if not plan_only:
        A.check_plan(plan, force)
    todo = plan.todo
    head = (f"atlas: {len(plan.items)} variants, {len(plan.done)} done already, {len(todo)} to solve"
            + (f" (largest {A.label(max(todo, key=lambda it: it.boards).options)}: "
               f"{max(it.boards for it in todo):,} boards, about {plan.peak_memory / 2**30:.1f} GiB), "
               f"{duration_text(plan.seconds)} with {budget.jobs} job{'s' if budget.jobs > 1 else ''}" if todo else ""))
    if plan_only:
        if as_json:
            emit_json({"plan": plan.as_dict(), "items": [it.as_dict() for it in plan.items]})
            return
        click.echo(head)
        for it in plan.items:
            state = "done" if it.done else (f"left out: {it.left_out}" if it.left_out else
                                             f"about {it.memory / 2**30:.2f} GiB, {duration_text(it.seconds)}")
            click.echo(f"  {A.label(it.options):<26} {it.boards:>13,} boards {it.moves:>14,} moves  {state}")
        return
    A.prepare_out(folder)
    click.echo(head, err=True)
    for it in plan.left_out:
        click.echo(f"left out: {A.label(it.options)} ({it.left_out})", err=True)
    t0 = time.perf_counter()
    scale = 10  # progress steps a second of estimated work
    with progress(max(1, int(sum(it.seconds for it in todo) * scale)), "atlas") as bar:
        made = A.run_plan(plan, split_effort, on_start=lambda it: bar.note(f"atlas {A.label(it.options)}"),
                          on_done=lambda it, _r: bar.update(int(it.seconds * scale)))
    wall = time.perf_counter() - t0
    csv_path, json_path, _ = A.write_summary(folder)
    results = [r for it in plan.items if (r := A.load_result(folder, it.options)) is not None]
    everything = A.all_results(folder)
    if plot_path is not None:
        A.plot(everything, plot_path)
    if markdown_path is not None:
        with atomic_path(markdown_path) as tmp:
            Path(tmp).write_text(A.markdown_table(everything), encoding="utf-8")
    if as_json:
        emit_json({"plan": plan.as_dict(), "solved": [r["variant"] for r in made], "seconds": round(wall, 3),
                   "summary_csv": str(csv_path), "summary_json": str(json_path), "plot": plot_path,
                   "markdown": markdown_path, "rows": [A.summary_row(r) for r in results]})
        return
    for line in A.text_lines(results):
        click.echo(line)
    click.echo(f"solved {len(made)} variant{'s' if len(made) != 1 else ''} in {wall:.1f} s; "
               f"summary of the {len(everything)} in {out}: {csv_path.name}, {json_path.name}"
               + (f"; picture: {plot_path}" if plot_path else "") + (f"; table: {markdown_path}" if markdown_path else ""))
