"""``solver ur graph``, ``solve`` and ``check``: the state graph's size, solving (and proving) a
table on this machine, a Ray cluster or a GPU, and checking a table against endless play and,
with ``--bounds``, proving it afterwards.
"""
from __future__ import annotations

import contextlib
import json
from typing import Any

import click
import numpy as np

from gamesolver.games.ur.generator import kernel
from gamesolver.solver.stochastic.outcomes import GRAPH_CHOICES, Regenerated, scratch_graph, want_graph
from gamesolver.games.ur.notation import Position, format_position
from gamesolver.games.ur.answers import proven_text
from gamesolver.games.ur.provenance import check_lines, of_table
from gamesolver.games.ur.solve import (
    DEFAULT_TOLERANCE, DEFAULT_WIDTH, default_table_dir, gpu_engine, load_table, ray_engine, solve,
    state_interval, state_value, stored_index_matches, tier_counts,
)
from gamesolver.solver.stochastic.bounds import certify, check_certify_fits
from gamesolver.solver.stochastic.iteration import check_eps, endless_check
from gamesolver.solver.stochastic.planning import POLICY_PLACES, default_threads
from gamesolver.solver.stochastic.schedule import METHODS
from gamesolver.solver.stochastic.solve import Proof, record_proof
from gamesolver.solver.errors import InputError
from gamesolver.solver.report import example
from gamesolver.games.ur.cli_common import (
    BACKENDS, cache_option, fort_only, fort_options, log_line, options_decorator, royal_rules,
    rules_option, ur,
)


@ur.command(epilog=example("solver ur graph --pieces 3"))
@options_decorator()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@rules_option
def graph(pieces: int, board_file: str | None, dice_file: str | None, as_json: bool, rules_name: str) -> None:
    """State counts per tier (pieces on the board of the side to move, of the other side)."""
    rules = royal_rules(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_cli

        fort_only(rules, board=board_file, dice=dice_file)
        return royal_cli.graph_cmd(rules, as_json)
    options = fort_options(pieces, board_file, dice_file)
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
@options_decorator()
@click.option("--out", type=click.Path(file_okay=False), help="Table directory (default: the cache).")
@cache_option
@click.option("--tolerance", type=float, default=None,
              help=f"Stop when no value changes by more than this in a sweep (default {DEFAULT_TOLERANCE:g}; "
                   "RoyalUr rule sets, float64: 1e-12).")
@click.option("--threads", type=int, default=None, help="OpenMP threads (default: all cores).")
@click.option("--method", type=click.Choice(METHODS), default="walk", show_default=True,
              help="walk: full sweeps, each followed by cheap sweeps of the greedy policy, while a "
                   "discount walks up to 1 (fewest sweeps; 24 bytes a state more); sweeps: plain value "
                   "iteration from zero. Both end with the endless check and its repair (docs/design/walk.md).")
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
@rules_option
def solve_cmd(pieces: int, board_file: str | None, dice_file: str | None, out: str | None, cache: str | None,
              tolerance: float | None, threads: int | None, method: str, policy_place: str, graph: str,
              backend: str, address: str | None, workers: int | None, proof: bool | None, width: float | None,
              as_json: bool, rules_name: str) -> None:
    """Solve every state by value iteration, prove an interval around every value where the proof
    fits, and write the table (resumes a stopped run)."""
    if threads is not None and threads < 1:
        raise InputError("--threads must be at least 1")
    _check_backend(backend, address, workers)
    if policy_place != "auto" and (method != "walk" or backend != "cpu"):
        raise InputError("--walk-policy applies to the walk (--method walk) on --backend cpu; the GPU and Ray "
                         "engines keep the policy where they sweep")
    if width is not None and proof is False:
        raise InputError("--width is the proof's aim; drop --width, or drop --no-proof")
    if width is not None and not 0 < width < 1:
        raise InputError(f"--width must be between 0 and 1; got {width:g}")
    rules = royal_rules(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_cli

        fort_only(rules, board=board_file, dice=dice_file, cache=cache,
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
    options = fort_options(pieces, board_file, dice_file)
    tolerance = DEFAULT_TOLERANCE if tolerance is None else tolerance
    if out is not None and cache is not None:
        raise InputError("--out and --cache both say where the table goes; give one of them")
    if out is None and cache is not None:
        out = str(default_table_dir(options, cache))
    # no --proof/--no-proof: prove where it fits, and otherwise say so once, before the solve
    proving: Proof = "auto" if proof is None else proof
    width = DEFAULT_WIDTH if width is None else width
    if backend == "gpu":
        with gpu_engine(options, policy=method != "sweeps", log=log_line, graph=graph) as engine:
            table = solve(options, out, tolerance=tolerance, method=method, log=log_line, engine=engine,
                          proof=proving, width=width)
    elif backend == "ray":
        with ray_engine(options, address=address, workers=workers, threads=threads, log=log_line) as engine:
            table = solve(options, out, tolerance=tolerance, method=method, log=log_line, engine=engine,
                          proof=proving, width=width)
    else:
        table = solve(options, out, tolerance=tolerance, threads=threads, method=method, graph=graph, log=log_line,
                      proof=proving, width=width, policy_place=policy_place)
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


def _check_backend(backend: str, address: str | None, workers: int | None) -> None:
    """The backend options, checked before anything starts (Ray's start-up takes seconds)."""
    if backend != "ray":
        for name, value in (("address", address), ("workers", workers)):
            if value is not None:
                raise InputError(f"--{name} applies to --backend ray")
        if backend == "gpu":
            _check_gpu()
        return
    if workers is not None and workers < 1:
        raise InputError("--workers must be at least 1")
    if click.get_current_context().get_parameter_source("graph") != click.core.ParameterSource.DEFAULT:
        raise InputError("--graph applies to --backend cpu and gpu; the ray workers generate the outcomes in every "
                         "sweep")
    from gamesolver.solver.backends.ray import import_ray

    import_ray()  # without Ray: one line naming the extra


def _check_gpu() -> None:
    """--backend gpu's options, and numba-cuda and a GPU, checked before anything is built."""
    from gamesolver.solver.backends.gpu.driver import NO_GPU, import_cuda

    if not import_cuda().is_available():  # without numba-cuda: one line naming the extra
        raise InputError(NO_GPU)


@ur.command("check", epilog=example("solver ur check --pieces 3 --table ur-k3"))
@options_decorator()
@click.option("--table", "table_dir", type=click.Path(file_okay=False), help="Table directory (default: the cache).")
@cache_option
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
              help="With --bounds: while the widest interval is above the width aimed at, prove again up "
                   "to this many times from the middles of the intervals so far (each pass takes about as "
                   "long as the first) and keep what every pass proved.")
@click.option("--width", type=float, default=None,
              help="With --bounds: the widest interval to aim for (as solve's --width), and how near the best by "
                   "the table's values an action of the proven strategy must be (default: the table's "
                   "tolerance). A table solved to 1e-6 is proven below 1e-5 faster with '--width 1e-5' than "
                   "below 1e-6.")
@click.option("--record", is_flag=True,
              help="With --bounds: keep the proof in the table, as 'solve' does with its proof (where the intervals "
                   "are narrower than the values' own error, the values become their middles and analyze shows "
                   "each position's interval); the table is rewritten whole, never half.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@rules_option
def check_cmd(pieces: int, board_file: str | None, dice_file: str | None, table_dir: str | None, cache: str | None,
              eps: float | None, threads: int | None, graph: str, with_bounds: bool, bounds_sweeps: int,
              refine: int, width: float | None, record: bool, as_json: bool, rules_name: str) -> None:
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
    rules = royal_rules(rules_name, pieces)
    if rules is not None:
        from gamesolver.games.ur import royal_cli

        fort_only(rules, board=board_file, dice=dice_file, cache=cache, bounds=with_bounds, record=record,
                   width=width)
        return royal_cli.check_cmd(rules, table_dir, eps, threads, as_json)
    options = fort_options(pieces, board_file, dice_file)
    if bounds_sweeps < 1:
        raise InputError(f"--bounds-sweeps must be at least 1; got {bounds_sweeps}")
    if refine < 0:
        raise InputError(f"--refine must be at least 0; got {refine}")
    if width is not None and not with_bounds:
        raise InputError("--width applies with --bounds; add --bounds, or drop --width")
    if record and not with_bounds:
        raise InputError("--record keeps a proof in the table; add --bounds, or drop --record")
    if width is not None and not 0 < width < 1:
        raise InputError(f"--width must be between 0 and 1; got {width:g}")
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
            aim = tolerance if width is None else width
            cert = certify(K, values, aim, n_threads, show_progress=None, log=None if as_json else log_line,
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
