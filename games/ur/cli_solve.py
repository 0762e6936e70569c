"""``solver ur graph``, ``solve`` and ``check``: the state graph's size, solving (and proving) a
table on this machine, a Ray cluster or a GPU, and checking a table against endless play and,
with ``--bounds``, proving it afterwards.
"""
from __future__ import annotations

import click

from gamesolver.games.ur.cli_common import (
    BACKENDS, ask, cache_option, emit, log_line, options_decorator, pick, rules_option, ur,
)
from gamesolver.games.ur.family import CheckAsk, SolveAsk
from gamesolver.games.ur.solve import DEFAULT_TOLERANCE, DEFAULT_WIDTH
from gamesolver.solver.errors import InputError
from gamesolver.solver.report import example
from gamesolver.solver.stochastic.outcomes import GRAPH_CHOICES
from gamesolver.solver.stochastic.planning import POLICY_PLACES
from gamesolver.solver.stochastic.schedule import METHODS, early_aims
from gamesolver.solver.stochastic.walk import skips_by_blocks


@ur.command(epilog=example("solver ur graph --pieces 3"))
@options_decorator()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@rules_option
def graph(pieces: int, board_file: str | None, dice_file: str | None, as_json: bool, rules_name: str) -> None:
    """State counts per tier (pieces on the board of the side to move, of the other side)."""
    emit(pick(rules_name, pieces, board_file, dice_file).graph(), as_json)


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
@click.option("--local-repairs", type=int, default=None,
              help="How many times the endless check's flagged states are repaired alone before the repair "
                   "of every state (default 2). More suits a solve whose checks flag fewer states each time "
                   "and whose repair of every state takes hours (docs/design/endless.md, \"Repairs\").")
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
@click.option("--status", is_flag=True,
              help="Solve nothing: say what the table's folder holds (whether a solve is running there, its "
                   "checkpoint's stage, round, largest change and hours) and how to go on; safe beside a "
                   "running solve.")
@click.option("--plot", "plot", type=click.Path(dir_okay=False), default=None,
              help="With --status: draw the rounds its checkpoint keeps to this PNG (the largest change of "
                   "each round by stage, with where each stage ends; what each round took and the share of "
                   "states it generated).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the progress log stays on stderr).")
@rules_option
def solve_cmd(pieces: int, board_file: str | None, dice_file: str | None, out: str | None, cache: str | None,
              tolerance: float | None, threads: int | None, method: str, policy_place: str, local_repairs: int | None,
              graph: str,
              backend: str, address: str | None, workers: int | None, proof: bool | None, width: float | None,
              status: bool, plot: str | None, as_json: bool, rules_name: str) -> None:
    """Solve every state by value iteration, prove an interval around every value where the proof
    fits, and write the table (resumes a stopped run; --status says where a solve stands)."""
    if status:
        fam = pick(rules_name, pieces, board_file, dice_file)
        emit(fam.solve_status(out, cache, plot), as_json)
        return
    if plot is not None:
        raise InputError("--plot draws a solve's rounds beside --status; add --status")
    if threads is not None and threads < 1:
        raise InputError("--threads must be at least 1")
    if local_repairs is not None and local_repairs < 0:
        raise InputError(f"--local-repairs must be 0 or more; got {local_repairs}")
    _check_backend(backend, address, workers)
    skips_by_blocks()  # (SOLVER_WALK_SKIP and SOLVER_WALK_AIMS checked before anything starts)
    early_aims()
    if policy_place != "auto" and (method != "walk" or backend != "cpu"):
        raise InputError("--walk-policy applies to the walk (--method walk) on --backend cpu; the GPU and Ray "
                         "engines keep the policy where they sweep")
    if width is not None and proof is False:
        raise InputError("--width is the proof's aim; drop --width, or drop --no-proof")
    if width is not None and not 0 < width < 1:
        raise InputError(f"--width must be between 0 and 1; got {width:g}")
    fam = pick(rules_name, pieces, board_file, dice_file)
    method_given = click.get_current_context().get_parameter_source("method") != click.core.ParameterSource.DEFAULT
    emit(fam.solve(SolveAsk(out, cache, tolerance, threads, method, method_given, policy_place, graph, backend,
                            address, workers, proof, width, log_line, local_repairs)), as_json)


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
    fam = pick(rules_name, pieces, board_file, dice_file)
    emit(ask(lambda: fam.check(CheckAsk(table_dir, cache, eps, threads, graph, with_bounds, bounds_sweeps, refine,
                                        width, record, as_json, log_line)), as_json), as_json)
