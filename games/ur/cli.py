"""``solver ur``: the Ur commands, a thin layer over ``games.ur``.

graph (state counts per tier), solve (value iteration to a table), check (is a table the game's
value where endless play is possible), best-move, analyze, show, export. ``--rules`` picks the
fort rules (the default) or one of RoyalUr's rule sets, whose side lives in ``games.ur.royal_cli``
(with RoyalUr's ``.rgu`` table files).
"""
from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Callable

import click
import numpy as np

from gamesolver.games.ur.generator import kernel
from gamesolver.solver.stochastic.outcomes import GRAPH_CHOICES, Regenerated, scratch_graph, want_graph
from gamesolver.games.ur.notation import Position, diagram, format_position, parse
from gamesolver.games.ur.answers import (
    analyze_answer,
    answer_source,
    best_move_answer,
    missing_table_message,
    nobody_wins,
    outside_opening_message,
    proven_text,
    shipped_fallback,
    show_answer,
    source_line,
)
from gamesolver.games.ur.provenance import check_lines, of_table
from gamesolver.games.ur.rules import AUTO_BUILD_MAX_PIECES, MAX_PIECES, SOLVE_HINT, UrOptions
from gamesolver.games.ur.solve import (
    DEFAULT_TOLERANCE,
    DEFAULT_WIDTH,
    METHODS,
    POLICY_PLACES,
    check_eps,
    choices,
    default_table_dir,
    default_threads,
    proof_refused,
    endless_check,
    gpu_engine,
    load_table,
    ray_engine,
    record_proof,
    solve,
    state_interval,
    state_value,
    stored_index_matches,
    tier_counts,
)
from gamesolver.solver.stochastic.bounds import certify, check_certify_fits
from gamesolver.solver.errors import InputError, MissingTableError
from gamesolver.solver.tables.paths import file_kind
from gamesolver.solver.report import example

BACKENDS = ("cpu", "ray", "gpu")


def _options_decorator(default_pieces: int = MAX_PIECES) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        f = click.option("--dice", "dice_file", type=click.Path(dir_okay=False), help="Dice data file (JSON).")(f)
        f = click.option("--board", "board_file", type=click.Path(dir_okay=False), help="Board data file (JSON).")(f)
        f = click.option(
            "--pieces", type=int, default=default_pieces, show_default=True, help=f"Pieces per player (1-{MAX_PIECES})."
        )(f)
        return f

    return wrap


def _opts(pieces: int, board_file: str | None, dice_file: str | None) -> UrOptions:
    return UrOptions(pieces=pieces, board_file=board_file, dice_file=dice_file)


def _log(text: str) -> None:
    click.echo(text, err=True)


_rules_option = click.option(
    "--rules", "rules_name", default="fort", show_default=True,
    help="Rule set: fort (docs/ur.md) or one of RoyalUr's: finkel, blitz, masters (docs/royalur.md); "
         "their default --pieces is the rule set's own (7, 5, 7).")


def _royal(rules_name: str, pieces: int | None) -> Any:
    """RoyalUr's rule set named by --rules, or None for the fort rules. --pieces left at its
    default means the rule set's own piece count."""
    if rules_name.strip().lower() == "fort":
        return None
    from gamesolver.games.ur import royal

    given = click.get_current_context().get_parameter_source("pieces") != click.core.ParameterSource.DEFAULT
    return royal.load_ruleset(rules_name, pieces if given else None)


def _fort_only(rules: Any, **given: Any) -> None:
    """Options that belong to the fort rules only; refused with a RoyalUr rule set."""
    for name, value in given.items():
        if value is not None and value is not False:
            raise InputError(f"--{name} applies to the fort rules only, not to {rules.name}")


_cache_option = click.option("--cache", type=click.Path(file_okay=False), default=None,
                             help="Table cache directory (default: $SOLVER_CACHE_DIR or ~/.cache/gamesolver).")


def _table(options: UrOptions, table_dir: str | None, cache: str | None = None, as_json: bool = False,
           scattered: bool = False, solve_first: bool = False) -> Any:
    """The table a query reads. Without ``solve_first`` (``--solve``) a query never writes where
    ``--table`` points, and a large solve never starts as its side effect: only a small table
    missing from the cache is built. With it a missing table of any size is solved first, where
    ``--table`` points or in the cache, with its progress shown (a stopped solve resumes).
    ``scattered``: the caller reads a few values, not the whole table (``solve.read_scattered``)."""
    where = Path(table_dir) if table_dir is not None else default_table_dir(options, cache)
    if table_dir is not None and where.is_file():  # the user's mistake (exit 2), not a table to solve there
        raise InputError(f"--table {where} is {file_kind(where)}, not a table: a table is a folder holding "
                         f"header.json (one that 'solver ur solve --pieces {options.pieces} --out FOLDER' makes)")
    if (table_dir is not None or options.pieces > AUTO_BUILD_MAX_PIECES) and not solve_first:
        if not (where / "header.json").is_file():
            _missing_table(options, where, table_dir is not None, as_json)
    return load_table(options, where, log=_log, cache=cache, scattered=scattered)


_solve_option = click.option(
    "--solve", "solve_first", is_flag=True,
    help="Solve a missing table first, however large (without --solve the message says how long it "
         "would take), with a progress bar, then answer; a stopped solve resumes with the same command.")

_opening_option = click.option(
    "--opening", "opening_file", type=click.Path(dir_okay=False), default=None,
    help="Answer from this opening file (solver ur opening build) instead of a table. Without --table "
         "or --opening, a missing table falls back on the opening file shipped for these options, if any.")


def _source(options: UrOptions, table_dir: str | None, cache: str | None, as_json: bool,
            opening_file: str | None, solve_first: bool = False) -> tuple[Any, Any]:
    """What a query reads, and the opening file it is (None for a table): ``--opening``; else the
    table; else, when no table was named and the cache has none, the shipped opening file (not
    with ``solve_first``, which solves the missing table instead: ``_table``)."""
    from gamesolver.games.ur import opening

    if opening_file is not None:
        if table_dir is not None or solve_first:
            raise InputError(f"give {'--table' if table_dir is not None else '--solve'} or --opening, not both")
        book: Any = opening.load(opening_file, options)
        return book, book
    book = shipped_fallback(options, cache) if table_dir is None and not solve_first else None
    if book is not None:
        return book, book
    return _table(options, table_dir, cache, as_json, scattered=True, solve_first=solve_first), None


def _outside_opening(options: UrOptions, book: Any, cache: str | None, as_json: bool) -> None:
    """``outside_opening_message`` as the CLI's error (exit 1; JSON with --json), with --solve's hint."""
    text, fields = outside_opening_message(options, book, cache)
    note, nl, rest = text.partition("\n")
    first, nl2, more = rest.partition("\n")
    text = f"{note}{nl}{first}; {SOLVE_HINT}{nl2}{more}"
    if as_json:
        click.echo(json.dumps({"error": text, **fields}))
        raise SystemExit(1)
    raise MissingTableError(text)


def _missing_table(options: UrOptions, where: Path, named: bool, as_json: bool) -> None:
    """Exit 1 with ``missing_table_message`` and, on the command line, that --solve would build
    it; with ``as_json`` as a JSON object."""
    text, fields = missing_table_message(options, where, named)
    first, nl, rest = text.partition("\n")
    text = f"{first}; {SOLVE_HINT}{nl}{rest}"
    if as_json:
        click.echo(json.dumps({"error": text, **fields}))
        raise SystemExit(1)
    raise MissingTableError(text)


@click.group(epilog=example("solver ur best-move start --roll gold+gold --pieces 2"))
def ur() -> None:
    """Ur: The Royal Game, fort rules: state graph and exact solution.

    Positions are written 'X:A1,B4 O:C7 X' (tiles of X, tiles of O, side to move) or 'start'.
    """


@ur.command(epilog=example("solver ur graph --pieces 3"))
@_options_decorator()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_rules_option
def graph(pieces: int, board_file: str | None, dice_file: str | None, as_json: bool, rules_name: str) -> None:
    """State counts per tier (pieces on the board of the side to move, of the other side)."""
    rules = _royal(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_cli

        _fort_only(rules, board=board_file, dice=dice_file)
        return royal_cli.graph_cmd(rules, as_json)
    options = _opts(pieces, board_file, dice_file)
    tiers = tier_counts(options)
    K = kernel(options)
    total, stored = K.full_state_count, K.state_count
    if as_json:
        click.echo(json.dumps({
            "pieces": pieces,
            "tiles": options.board.size,
            "states": total,
            "stored_states": stored,
            "mirror": options.uses_mirror,
            "tiers": [{"mine": a, "theirs": b, "states": c} for (a, b), c in tiers.items()],
        }))
        return
    click.echo(f"Ur, fort rules: {options.board.size} tiles, {pieces} pieces a side")
    click.echo("states per tier (rows: pieces of the side to move on the board; columns: the other side's)")
    click.echo("      " + "".join(f"{b:>12}" for b in range(pieces + 1)))
    for a in range(pieces + 1):
        click.echo(f"{a:>6}" + "".join(f"{tiers[a, b]:>12,}" for b in range(pieces + 1)))
    click.echo(f"states (mover-relative; the same count for either side to move): {total:,}")
    if options.uses_mirror:
        click.echo(f"stored and solved: {stored:,} (one of each pair of mirror images, columns A and C swapped)")


_GRAPH_HELP = ("store: rank every state's outcomes once into a file beside the checkpoint and map it (1.6 GiB "
               "for 4 pieces, 15 GiB for 5; sweeps about 13 times faster; up to 85% of the memory); regenerate: "
               "generate every action in every sweep (4 bytes a state); auto: store when it fits in half of the "
               "memory. The values are the same.")
_graph_option = click.option("--graph", type=click.Choice(GRAPH_CHOICES), default="auto", show_default=True,
                             help=_GRAPH_HELP)
_solve_graph_option = click.option(
    "--graph", type=click.Choice(GRAPH_CHOICES), default="auto", show_default=True,
    help=_GRAPH_HELP + " With --backend gpu the graph is kept in the GPU's memory (6 pieces: about 73 GiB), "
                       "auto: where it fits beside the rest of the solve (7 pieces: for the ranks that fit, "
                       "the rest regenerating), store: refused where all of it does not.")


@ur.command("solve", epilog=example("solver ur solve --pieces 3 --out ur-k3"))
@_options_decorator()
@click.option("--out", type=click.Path(file_okay=False), help="Table directory (default: the cache).")
@_cache_option
@click.option("--tolerance", type=float, default=None,
              help=f"Stop when no value changes by more than this in a sweep (default {DEFAULT_TOLERANCE:g}; "
                   "RoyalUr rule sets, float64: 1e-12).")
@click.option("--threads", type=int, default=None, help="OpenMP threads (default: all cores).")
@click.option("--method", type=click.Choice(METHODS), default="walk", show_default=True,
              help="walk: full sweeps, each followed by cheap sweeps of the greedy policy, while a "
                   "discount walks up to 1 (fewest sweeps; 24 bytes a state more); sweeps: plain value "
                   "iteration from zero; policy (experimental): Krylov evaluations of the greedy policy. "
                   "Every method ends with the endless check and its repair (docs/design/walk.md).")
@click.option("--walk-policy", "policy_place", type=click.Choice(POLICY_PLACES), default="auto",
              show_default=True,
              help="Where the walk keeps its policy (24 bytes a state): memory; disk, a file in the table's "
                   "folder that the system pages (removed when the solve ends); auto: memory when it fits in "
                   "half of it beside the rest, else disk (seven pieces on a 24 GiB machine).")
@_solve_graph_option
@click.option("--backend", type=click.Choice(BACKENDS), default="cpu", show_default=True,
              help="cpu: this process's threads; ray: each sweep split by rank range across the workers of "
                   "a Ray cluster (pip install \"gamesolver[ray]\"; docs/ur.md shows how to start one); gpu: "
                   "sweeps on a CUDA GPU (pip install \"gamesolver[gpu]\").")
@click.option("--address", default=None,
              help="With --backend ray: the cluster to join (e.g. 10.0.0.1:6379, or 'auto' for the one "
                   "'ray start' began here); default: a local Ray on this machine.")
@click.option("--workers", type=int, default=None,
              help="With --backend ray: Ray actors, each sweeping one rank range with --threads threads "
                   "(default: one per node, with the smallest node's CPUs as threads).")
@click.option("--proof/--no-proof", "proof", default=None,
              help="Prove an interval around every value and keep it in the table (analyze and best-move "
                   "show it). Default: prove when the proof fits this machine's memory (checked before the "
                   "solve starts), else solve without it and say so; --no-proof gives a table whose values "
                   "are labelled unproven, with the residual of its last sweep.")
@click.option("--width", type=float, default=None,
              help=f"The widest proven interval to aim for (default {DEFAULT_WIDTH:g}). Four pieces: solved "
                   "and proven to 1e-5 in minutes on two cores (docs/ur.md).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the progress log stays on stderr).")
@_rules_option
def solve_cmd(pieces: int, board_file: str | None, dice_file: str | None, out: str | None, cache: str | None,
              tolerance: float | None, threads: int | None, method: str, policy_place: str, graph: str,
              backend: str, address: str | None, workers: int | None, proof: bool | None, width: float | None,
              as_json: bool, rules_name: str) -> None:
    """Solve every state by value iteration, prove an interval around every value where the proof
    fits, and write the table (resumes a stopped run)."""
    if threads is not None and threads < 1:
        raise InputError("--threads must be at least 1")
    _check_backend(backend, address, workers, method)
    if policy_place != "auto" and (method != "walk" or backend != "cpu"):
        raise InputError("--walk-policy applies to the walk (--method walk) on --backend cpu; the GPU and Ray "
                         "engines keep the policy where they sweep")
    if width is not None and proof is False:
        raise InputError("--width is the proof's aim; drop --width, or drop --no-proof")
    if width is not None and not 0 < width < 1:
        raise InputError(f"--width must be between 0 and 1; got {width:g}")
    rules = _royal(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_cli

        _fort_only(rules, board=board_file, dice=dice_file, cache=cache,
                   backend=None if backend == "cpu" else backend)
        method_given = click.get_current_context().get_parameter_source("method") != click.core.ParameterSource.DEFAULT
        given = [name for name, on in (("--method", method_given), ("--walk-policy", policy_place != "auto")) if on]
        if given:
            raise InputError(f"{' and '.join(given)} appl{'y' if len(given) > 1 else 'ies'} to the fort rules; "
                             "RoyalUr's rule sets are solved by plain "
                             "float64 sweeps, tier group after tier group")
        if proof or width is not None:
            raise InputError("--proof and --width apply to the fort rules; RoyalUr's rule sets are solved tier by "
                             "tier in float64, where play never returns (docs/royalur.md says what their residual means)")
        return royal_cli.solve_cmd(rules, out, tolerance, threads, graph, as_json)
    options = _opts(pieces, board_file, dice_file)
    tolerance = DEFAULT_TOLERANCE if tolerance is None else tolerance
    if out is not None and cache is not None:
        raise InputError("--out and --cache both say where the table goes; give one of them")
    if out is None and cache is not None:
        out = str(default_table_dir(options, cache))
    if proof is None:  # prove where it fits; otherwise say so once, before the solve
        why = proof_refused(options)
        proof = why is None
        if why is not None:
            _log(f"{why}: solving without it, so the values will be labelled unproven (--no-proof says so "
                 "without this note)")
    certified, certify_gap = proof, (DEFAULT_WIDTH if width is None else width) if proof else None
    if backend == "gpu":
        with gpu_engine(options, policy=method != "sweeps", log=_log, graph=graph) as engine:
            table = solve(options, out, tolerance=tolerance, method=method, log=_log, engine=engine,
                          certified=certified, certify_gap=certify_gap)
    elif backend == "ray":
        with ray_engine(options, address=address, workers=workers, threads=threads, log=_log) as engine:
            table = solve(options, out, tolerance=tolerance, method=method, log=_log, engine=engine,
                          certified=certified, certify_gap=certify_gap)
    else:
        table = solve(options, out, tolerance=tolerance, threads=threads, method=method, graph=graph, log=_log,
                      certified=certified, certify_gap=certify_gap, policy_place=policy_place)
    start = state_value(options, table, frozenset(), frozenset())
    m = table.meta
    prov = of_table(table)
    start_fields = prov.fields(start, state_interval(options, table, frozenset(), frozenset()))
    if as_json:
        keys = ("sweeps", "method", "residual", "policy_products", "policy_sweeps", "endless_check",
                "endless_repairs", "graph", "policy_place", "bytes_per_state", "solve_seconds_this_run",
                "certified")
        click.echo(json.dumps({"pieces": pieces, "states": table.state_count, "table": str(table.path),
                               "start_value": start, "start": start_fields, "proven": prov.proven,
                               "stop_residual": m.get("tolerance"), **{k: m[k] for k in keys if k in m}},
                              default=str))
        return
    products = f" and {m['policy_products']:,} policy products" if m.get("policy_products") else ""
    products += f" and {m['policy_sweeps']:,} policy sweeps" if m.get("policy_sweeps") else ""
    click.echo(f"solved pieces={pieces}: {table.state_count:,} states, {m['sweeps']} sweeps{products} "
               f"({m['method']}), stopped at residual {m['residual']:.2g} (below {m['tolerance']:g})")
    check = m["endless_check"]
    repaired = f" after {m['endless_repairs']} discounted repair" if m.get("endless_repairs") else ""
    click.echo(f"endless check (eps {check['eps']:g}): "
               + ("passed" if check["flagged"] == 0 else f"FAILED in {check['flagged']:,} states") + repaired)
    cert = m.get("certified", {})
    click.echo(f"value of start for the first player: {start:+.6f}"
               + (proven_text(start_fields) or f", {prov.text()}"))
    if cert:
        passes = cert.get("passes", 1)
        click.echo(f"proof: every interval at most {cert['gap']:.2g} wide, aimed at {cert.get('aimed_at', 0):.2g} "
                   f"({passes} pass{'es' if passes > 1 else ''}, method {cert['method']}, {cert['seconds']:.0f} s)")
    click.echo(f"table: {table.path}")


def _check_backend(backend: str, address: str | None, workers: int | None, method: str) -> None:
    """The backend options, checked before anything starts (Ray's start-up takes seconds)."""
    if backend != "ray":
        for name, value in (("address", address), ("workers", workers)):
            if value is not None:
                raise InputError(f"--{name} applies to --backend ray")
        if backend == "gpu":
            _check_gpu(method)
        return
    if workers is not None and workers < 1:
        raise InputError("--workers must be at least 1")
    if method == "policy":
        raise InputError("--backend ray runs the walk and plain sweeps; --method policy is not distributed")
    if click.get_current_context().get_parameter_source("graph") != click.core.ParameterSource.DEFAULT:
        raise InputError("--graph applies to --backend cpu and gpu; the ray workers generate the outcomes in every "
                         "sweep")
    from gamesolver.solver.backends.ray import import_ray

    import_ray()  # without Ray: one line naming the extra


def _check_gpu(method: str) -> None:
    """--backend gpu's options, and numba-cuda and a GPU, checked before anything is built."""
    if method == "policy":
        raise InputError("--backend gpu runs the walk and plain sweeps; --method policy is not on the GPU")
    from gamesolver.solver.backends.gpu.driver import NO_GPU, import_cuda

    if not import_cuda().is_available():  # without numba-cuda: one line naming the extra
        raise InputError(NO_GPU)


@ur.command("check", epilog=example("solver ur check --pieces 3 --table ur-k3"))
@_options_decorator()
@click.option("--table", "table_dir", type=click.Path(file_okay=False), help="Table directory (default: the cache).")
@_cache_option
@click.option("--eps", type=float, default=None,
              help="Slack for 'best action' and 'worth 0' (default: 10 x the table's tolerance).")
@click.option("--threads", type=int, default=None, help="OpenMP threads (default: all cores).")
@_graph_option
@click.option("--bounds", "with_bounds", is_flag=True,
              help="Also prove an interval around every value (certified bounds; as long as a solve).")
@click.option("--bounds-sweeps", type=int, default=300, show_default=True,
              help="With --bounds: sweeps to look for a consistent pair near the values (then it starts "
                   "from -1 and +1: sound, but loose) and, as many again at most, to tighten it.")
@click.option("--refine", type=int, default=2, show_default=True,
              help="With --bounds: while the widest interval is above the gap aimed at, prove again up "
                   "to this many times from the middles of the intervals so far (each pass takes about as "
                   "long as the first) and keep what every pass proved.")
@click.option("--gap", type=float, default=None,
              help="With --bounds: the widest interval to aim for, and how near the best by the table's values "
                   "an action of the proven strategy must be (default: the table's tolerance). A table solved "
                   "to 1e-6 is proven below 1e-5 faster with '--gap 1e-5' than below 1e-6.")
@click.option("--record", is_flag=True,
              help="With --bounds: keep the proof in the table, as 'solve' does with its proof (where the intervals "
                   "are narrower than the values' own error, the values become their middles and analyze shows "
                   "each position's interval); the table is rewritten whole, never half.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_rules_option
def check_cmd(pieces: int, board_file: str | None, dice_file: str | None, table_dir: str | None, cache: str | None,
              eps: float | None, threads: int | None, graph: str, with_bounds: bool, bounds_sweeps: int,
              refine: int, gap: float | None, record: bool, as_json: bool, rules_name: str) -> None:
    """Check a solved table against endless play (exit 1 when it fails).

    Passes when the table solves the Bellman equations and, from every state where a side is
    ahead, that side's best actions can bring the game to an end; values that only endless
    play could keep are not the game's values. It also recomputes every checksum and compares the
    mirror index stored with the table with one built now. With one of RoyalUr's rule sets
    (--rules), the same check of their table (its checksums, residual and endless play; no proof).
    """
    if eps is not None and not 0 < eps < 1:
        raise InputError("--eps must be between 0 and 1")
    if threads is not None and threads < 1:
        raise InputError("--threads must be at least 1")
    rules = _royal(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_cli

        _fort_only(rules, board=board_file, dice=dice_file, cache=cache, bounds=with_bounds, record=record,
                   gap=gap)
        return royal_cli.check_cmd(rules, table_dir, eps, threads, as_json)
    options = _opts(pieces, board_file, dice_file)
    if bounds_sweeps < 1:
        raise InputError(f"--bounds-sweeps must be at least 1; got {bounds_sweeps}")
    if refine < 0:
        raise InputError(f"--refine must be at least 0; got {refine}")
    if gap is not None and not with_bounds:
        raise InputError("--gap applies with --bounds; add --bounds, or drop --gap")
    if record and not with_bounds:
        raise InputError("--record keeps a proof in the table; add --bounds, or drop --record")
    if gap is not None and not 0 < gap < 1:
        raise InputError(f"--gap must be between 0 and 1; got {gap:g}")
    if threads is not None and threads < 1:
        raise InputError("--threads must be at least 1")
    where = table_dir if table_dir is not None else default_table_dir(options, cache)
    # checking never solves (a missing table is an error), and it recomputes every checksum
    table = load_table(options, where, build=False, verify=True, cache=cache)
    K = kernel(options)
    if with_bounds:  # refused before the work starts
        check_certify_fits(K.state_count, K.roll_count)
    values = np.ascontiguousarray(table["value"], dtype=np.float32)
    tolerance = float(table.meta.get("tolerance", DEFAULT_TOLERANCE))
    eps = eps if eps is not None else check_eps(tolerance)
    n_threads = threads or default_threads()
    with contextlib.ExitStack() as stack:  # a stored graph is mapped from a scratch folder, removed after
        engine = (stack.enter_context(scratch_graph(K, table.path, n_threads, show_progress=None))
                  if want_graph(K, graph) else Regenerated(K))
        residual = float(engine.sweep(values.copy(), threads=n_threads, write=False))
        result = endless_check(engine, values, eps, n_threads, show_progress=None)
        index = {None: "not stored", True: "matches", False: "differs"}[stored_index_matches(options, table)]
        ok = result.passed and residual < tolerance and index != "differs"
        bounds: dict[str, Any] | None = None
        if with_bounds:
            aim = tolerance if gap is None else gap
            cert = certify(K, values, aim, n_threads, show_progress=None, log=None if as_json else _log,
                           graph=engine, loosen_sweeps=bounds_sweeps, tighten_sweeps=bounds_sweeps, refine=refine)
            start_rank = int(K.rank([0], [0])[0])
            bounds = {**cert.summary(), "aimed_at": aim,
                      "start": [float(cert.lower[start_rank]), float(cert.upper[start_rank])]}
    if record:  # with --bounds, so there is a proof
        assert bounds is not None
        table = record_proof(table, cert, aim)
        bounds["recorded"] = {"table": str(table.path), "values": table.meta["certified"].get("values", "solved")}
    examples = []
    for r in result.examples:
        ms, ts = K.unrank([r])
        mine = frozenset(i for i in range(options.board.size) if int(ms[0]) >> i & 1)
        theirs = frozenset(i for i in range(options.board.size) if int(ts[0]) >> i & 1)
        examples.append({"position": format_position(Position.from_relative(mine, theirs, "X"), options.board),
                         "value": float(values[r])})
    if as_json:
        click.echo(json.dumps({"table": str(table.path), "states": table.state_count, "stop_residual": tolerance,
                               "residual": residual, "eps": eps, "passes": result.passes,
                               "flagged": result.flagged, "examples": examples, "mirror_index": index,
                               "passed": ok,
                               **({"bounds": bounds} if bounds else {})}))
    else:
        click.echo(f"table {table.path}: {table.state_count:,} states, solved until the residual fell below "
                   f"{tolerance:g}; {of_table(table).text()}")
        lines = check_lines(residual, tolerance, result, "actions")
        if not result.passed:
            lines[-1] += "; for example"
            lines += [f"    {e['position']}  {e['value']:+.6f}" for e in examples]
        for line in lines:
            click.echo(line)
        if index == "matches":
            click.echo("  mirror index stored with the table: equal to one built now")
        elif index == "differs":
            click.echo("  mirror index stored with the table: DIFFERS from one built now (delete the table and "
                       "solve again)")
        if bounds and "recorded" in bounds:
            kept = ("the intervals' middles as its values, and the intervals" if bounds["recorded"]["values"] == "centred"
                    else "its own values, and the proof's figures")
            click.echo(f"  recorded in the table: {kept}")
        if bounds:
            lo, hi = bounds["start"]
            click.echo(f"  proven: every value lies within {bounds['bound']:.2g} of the table's (the start: "
                       f"{lo:+.6f} .. {hi:+.6f}; endless play could be worth up to {bounds['endless_margin']:.2g} "
                       f"where it can last for ever; widest interval {bounds['gap']:.2g}, aimed at "
                       f"{bounds['aimed_at']:g}, {bounds['passes']} pass{'es' if bounds['passes'] > 1 else ''})")
        click.echo("passed: these are the game's values" if ok else "FAILED: not the game's values")
    if not ok:
        raise SystemExit(1)


def _roll_index(options: UrOptions, roll: str) -> int:
    return options.dice.index(roll)


@ur.command("best-move", epilog=example("solver ur best-move start --roll gold+gold --pieces 2"))
@click.argument("position")
@click.option("--roll", required=True,
              help="blank+blank, blank+gold, blank+silver, gold+silver, gold+gold, silver+silver; with a "
                   "RoyalUr rule set the number rolled (0-4)")
@_options_decorator()
@click.option("--table", "table_dir", type=click.Path(),
              help="Table directory (default: the cache); with a RoyalUr rule set also a RoyalUr .rgu file.")
@_cache_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_rules_option
@_opening_option
@_solve_option
def best_move(position: str, roll: str, pieces: int, board_file: str | None, dice_file: str | None,
              table_dir: str | None, cache: str | None, as_json: bool, rules_name: str,
              opening_file: str | None, solve_first: bool) -> None:
    """The best action for ROLL in POSITION (or 'start') and its value for the side to move."""
    from gamesolver.games.ur.opening import OutsideOpening

    rules = _royal(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_cli

        _fort_only(rules, board=board_file, dice=dice_file, cache=cache, opening=opening_file)
        return royal_cli.best_move_cmd(rules, position, roll, table_dir, as_json, solve_first)
    options = _opts(pieces, board_file, dice_file)
    pos = parse(position, options)
    r = _roll_index(options, roll)
    table, book = _source(options, table_dir, cache, as_json, opening_file, solve_first)
    try:
        ranked = choices(options, table, pos, r)
    except OutsideOpening:
        return _outside_opening(options, book, cache, as_json)
    best = ranked[0]
    board = options.board
    draw = nobody_wins(options)
    if draw is not None and not as_json:  # every value is 0: no action is best, and the answer says why
        click.echo(f"{pos.to_move} to move, roll {options.dice.rolls[r].name}: {len(ranked)} legal "
                   f"action{'s' if len(ranked) != 1 else ''}, all worth the same ({best.value:g})")
        click.echo(draw)
        return
    answer = best_move_answer(options, pos, r, ranked, table)
    if as_json:
        answer["source"] = answer_source(table, book, opening_file)
        click.echo(json.dumps(answer))
        return
    click.echo(f"{pos.to_move} to move, roll {options.dice.rolls[r].name}: {best.action.describe(board)}")
    click.echo(f"value for {pos.to_move}: {best.value:+.6f}{proven_text(answer)}  (P(win) - P(loss))")
    click.echo(source_line(table, book, opening_file))


@ur.command(epilog=example('solver ur analyze "X:A1,B4 O:C7 X" --pieces 3'))
@click.argument("position")
@_options_decorator()
@click.option("--table", "table_dir", type=click.Path(),
              help="Table directory (default: the cache); with a RoyalUr rule set also a RoyalUr .rgu file.")
@_cache_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_rules_option
@_opening_option
@_solve_option
def analyze(position: str, pieces: int, board_file: str | None, dice_file: str | None, table_dir: str | None,
            cache: str | None, as_json: bool, rules_name: str, opening_file: str | None, solve_first: bool) -> None:
    """The value of POSITION before the roll, and each roll's best action and value."""
    from gamesolver.games.ur.opening import OutsideOpening

    rules = _royal(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_cli

        _fort_only(rules, board=board_file, dice=dice_file, cache=cache, opening=opening_file)
        return royal_cli.analyze_cmd(rules, position, table_dir, as_json, solve_first)
    options = _opts(pieces, board_file, dice_file)
    pos = parse(position, options)
    table, book = _source(options, table_dir, cache, as_json, opening_file, solve_first)
    try:
        answer = analyze_answer(options, table, pos)
    except OutsideOpening:
        return _outside_opening(options, book, cache, as_json)
    answer["source"] = answer_source(table, book, opening_file)
    if answer.get("winnable") is False and not as_json:
        click.echo(f"{answer['position']}: a draw whatever is rolled or played (value {answer['value']:g})")
        click.echo(answer["note"])
        return
    if as_json:
        click.echo(json.dumps(answer))
        return
    click.echo(f"{answer['position']}: value for {pos.to_move} before rolling {answer['value']:+.6f}"
               f"{proven_text(answer)}")
    for row in answer["rolls"]:
        click.echo(f"  {row['roll']:<14} p={row['probability']:<7g} {row['value']:+.6f}  {row['best']}")
    click.echo(source_line(table, book, opening_file))


@ur.command(epilog=example('solver ur show "X:A1,B4 O:C7 X"'))
@click.argument("position")
@_options_decorator()
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the tiles each side holds and the side to move.")
@_rules_option
def show(position: str, pieces: int, board_file: str | None, dice_file: str | None, as_json: bool,
         rules_name: str) -> None:
    """Draw POSITION (or 'start') on the board."""
    rules = _royal(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_cli

        _fort_only(rules, board=board_file, dice=dice_file)
        return royal_cli.show_cmd(rules, position, as_json)
    options = _opts(pieces, board_file, dice_file)
    pos = parse(position, options)
    if as_json:
        click.echo(json.dumps(show_answer(options, pos)))
        return
    click.echo(diagram(pos, options))


@ur.command("export", epilog=example("solver ur export --pieces 3 --format csv --out k3.csv"))
@_options_decorator()
@click.option("--table", "table_dir", type=click.Path(file_okay=False), help="Table directory (default: the cache).")
@_cache_option
@click.option("--format", "fmt", type=click.Choice(["csv", "npy", "rgu"]), default="csv", show_default=True,
              help="csv: position, side, pieces of each side, value; npy: a structured array (x, o: tile masks, "
                   "bit i = tile i of the board file; value); rgu: RoyalUr's lookup-table file (with --rules "
                   "finkel, blitz or masters).")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Output file (csv: default standard output).")
@click.option("--reachable", is_flag=True, help="Only positions reachable from the start (needs the stored graph's memory).")
@click.option("--threads", type=int, default=None, help="OpenMP threads (default: all cores).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the file written and how many positions (needs --out).")
@_rules_option
@click.option("--value-type", default="percent16", show_default=True,
              help="With --format rgu: the stored values, percent16, f32 (float32) or f64 (float64).")
@_solve_option
def export_cmd(pieces: int, board_file: str | None, dice_file: str | None, table_dir: str | None,
               cache: str | None, fmt: str, out: str | None, reachable: bool, threads: int | None,
               as_json: bool, rules_name: str, value_type: str, solve_first: bool) -> None:
    """Write every position of a solved table with its value (X to move; both mirror images), or a
    RoyalUr rule set's table as RoyalUr's .rgu file (written whole or not at all)."""
    from gamesolver.games.ur.export import write_csv, write_npy
    from gamesolver.solver.tables.atomic import atomic_path

    rules = _royal(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_cli

        _fort_only(rules, board=board_file, dice=dice_file, cache=cache, reachable=reachable, json=as_json)
        if out is None:
            raise InputError("--format rgu needs --out FILE")
        return royal_cli.export_cmd(rules, fmt, table_dir, out, value_type, solve_first)
    if fmt == "rgu":
        raise InputError("--format rgu writes RoyalUr's rule sets (--rules finkel, blitz or masters), "
                         "not the fort rules")
    options = _opts(pieces, board_file, dice_file)
    if fmt == "npy" and out is None:
        raise InputError("--format npy needs --out FILE")
    if as_json and out is None:
        raise InputError("--json reports the file written with --out FILE; without --out the CSV goes to standard output")
    if threads is not None and threads < 1:
        raise InputError("--threads must be at least 1")
    table = _table(options, table_dir, cache, solve_first=solve_first)
    n_threads = threads or default_threads()
    if out is None:
        write_csv(options, table, click.get_text_stream("stdout"), reachable, n_threads)
        return
    with atomic_path(out) as tmp:
        if fmt == "npy":
            count = write_npy(options, table, tmp, reachable, n_threads)
        else:
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                count = write_csv(options, table, f, reachable, n_threads)
    if as_json:
        click.echo(json.dumps({"out": out, "format": fmt, "positions": count, "reachable_only": reachable}))
    else:
        click.echo(f"wrote {count:,} positions to {out}", err=True)


@ur.group("opening", epilog=example("solver ur opening build --pieces 4 --turns 5 --out k4.npz"))
def opening_group() -> None:
    """Opening files: the values near the start, for answering without the full table."""


@opening_group.command("build", epilog=example("solver ur opening build --pieces 4 --turns 5 --out k4.npz"))
@_options_decorator()
@click.option("--turns", type=int, required=True,
              help="Keep every position reachable from the start within this many turns (1-8; an extra "
                   "turn from a fort counts as one), and their successors' values.")
@click.option("--out", type=click.Path(dir_okay=False), required=True, help="The file to write (.npz).")
@click.option("--table", "table_dir", type=click.Path(file_okay=False), help="Table directory (default: the cache).")
@_cache_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the file written and its counts.")
@_rules_option
def opening_build(pieces: int, board_file: str | None, dice_file: str | None, turns: int, out: str,
                  table_dir: str | None, cache: str | None, as_json: bool, rules_name: str) -> None:
    """Write the opening file of a solved table (written whole or not at all). With a RoyalUr rule
    set a turn is one move (a roll and what is done with it)."""
    from gamesolver.games.ur import opening

    if not 1 <= turns <= opening.MAX_TURNS:
        raise InputError(f"--turns must be from 1 to {opening.MAX_TURNS}; got {turns}")
    rules = _royal(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_opening
        from gamesolver.games.ur.royal_table import load_royal_table

        _fort_only(rules, board=board_file, dice=dice_file, cache=cache)
        table = load_royal_table(rules, table_dir, build=False)
        arrays, header = royal_opening.build(rules, table, turns)
        royal_opening.write(out, arrays, header)
    else:
        options = _opts(pieces, board_file, dice_file)
        table = _table(options, table_dir, cache, as_json)
        arrays, header = opening.build(options, table, turns)
        opening.write(out, arrays, header)
    size = Path(out).stat().st_size
    if as_json:
        click.echo(json.dumps({"out": out, "bytes": size, "turns": turns,
                               "positions_answered": header["positions_answered"],
                               "positions_stored": header["positions_stored"],
                               "table_values_sha256": header["table"]["values_sha256"]}))
        return
    click.echo(f"{out}: {header['positions_answered']:,} positions within {turns} turns of the start answered, "
               f"{header['positions_stored']:,} values stored, {size:,} bytes; from table "
               f"{header['table']['values_sha256'][:16]} at {table.path}")


@opening_group.command("info", epilog=example("solver ur opening info k4.npz"))
@click.argument("file", type=click.Path(dir_okay=False))
@_options_decorator()
@click.option("--json", "as_json", is_flag=True, help="Print the file's header as JSON.")
@_rules_option
@click.pass_context
def opening_info(ctx: click.Context, file: str, pieces: int, board_file: str | None, dice_file: str | None,
                 as_json: bool, rules_name: str) -> None:
    """What an opening file holds and which table it was built from. The file records its rule
    set and piece count, which are taken from it unless --rules or --pieces is given (then the
    file is checked against them, as are --board and --dice)."""
    from gamesolver.games.ur import opening

    found = opening.read_header(Path(file), "solver ur opening build")
    given = {name for name in ("pieces", "rules_name")
             if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT}
    if "rules_name" not in given and found.get("format") == "gamesolver-royalur-opening" and found.get("rules"):
        rules_name = str(found["rules"])
    recorded = found.get("pieces") if found.get("format") == "gamesolver-royalur-opening" else \
        (found.get("options") or {}).get("pieces")
    if "pieces" not in given and isinstance(recorded, int):
        pieces = recorded
        given.add("pieces")
    rules = _royal(rules_name, pieces)
    if rules is not None and "pieces" in given:
        from gamesolver.games.ur import royal

        rules = royal.load_ruleset(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_opening

        _fort_only(rules, board=board_file, dice=dice_file)
        book: Any = royal_opening.load(file, rules)
    else:
        book = opening.load(file, _opts(pieces, board_file, dice_file))
    if as_json:
        click.echo(json.dumps(book.header))
        return
    h, t = book.header, book.header["table"]
    if rules is not None:
        click.echo(f"{file}: RoyalUr {rules.name}, pieces={rules.pieces}, settings {h['settings_sha256'][:16]}")
        click.echo(f"  {h['positions_answered']:,} positions within {h['turns']} moves of the start answered, "
                   f"{h['positions_stored']:,} values stored")
        click.echo(f"  from table {t['values_sha256']} ({book.provenance.text()})")
        return
    click.echo(f"{file}: Ur (fort rules), pieces={h['options']['pieces']}, board {h['options']['board_sha256'][:16]}, "
               f"dice {h['options']['dice_sha256'][:16]}")
    click.echo(f"  {h['positions_answered']:,} positions within {h['turns']} turns of the start answered, "
               f"{h['positions_stored']:,} values stored")
    click.echo(f"  from table {t['values_sha256']} ({t['state_count']:,} states; {book.provenance.text()})")
