"""Solving a two-player dice game with endless play by value iteration, for any game that
implements ``StochasticGame`` (solver/stochastic/_engine.pxd).

The values are V = P(win) - P(loss) for the side to move, before the roll, endless play worth 0.
They are found by Gauss-Seidel sweeps (float32, in place) until a full sweep changes no value by
more than the tolerance and the Bellman residual is below it too. Sweeps read a stored outcome
graph (``solver.stochastic.outcomes``) where it fits in memory, and regenerate the outcomes otherwise; the
values are the same.

Endless play gives the Bellman equations false solutions, in which a side claims an advantage
that only a never-ending cycle keeps; sweeps from zero can converge to one. So the default
``walk`` solves discounted games whose discount walks up to 1 (each has one solution), every
solve ends with the endless check (``endless_check``), and values that fail it are repaired by
``discounted_descent`` before a second check. Runs checkpoint after every sweep and resume.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from gamesolver.solver.errors import InputError, Interrupted, TableWriteError
from gamesolver.solver.stochastic.krylov import bicgstab
from gamesolver.solver.limits import duration
from gamesolver.solver.stochastic.outcomes import (
    GRAPH_DIR, Regenerated, StoredGraph, build_graph, build_mapped_graph, estimate_bytes, load_graph, memory_bytes, want_graph,
)
from gamesolver.solver.progress import progress
from gamesolver.solver.stochastic.skip import BYTES_PER_STATE as SKIP_BYTES, Skip
from gamesolver.solver.tables.table import CHECKPOINT_FORMAT, existing_ancestor, prepare_table_dir

DEFAULT_TOLERANCE = 1e-6
MIN_TOLERANCE = 2.5e-7  # two float32 ulps at 1: two threads can flip a value by that much for ever
MIN_TOLERANCE_FLOAT64 = 1e-14  # the same for float64 values, with room for summing rounding
DTYPES = ("float32", "float64")
CHECKPOINT = "checkpoint.npy"
CHECKPOINT_INFO = "checkpoint.json"
# beside a checkpoint: the walk's policy, mapped from this file when it does not fit in half the
# memory (see place_policy); removed when the solve ends, rewritten by a resumed run
POLICY_FILE = "walk-policy.npy"
COPY_FILE = "walk-copy.npy"  # ... and beside it the skipping walk's copy of the values (solver.stochastic.skip)
POLICY_PLACES = ("auto", "memory", "disk")
_CHUNK = 1 << 18  # states per progress update
_SMALL_TIER = 1 << 16  # tiers with fewer states are swept on one thread
METHODS = ("walk", "sweeps", "policy")
WALK_POLICY_SWEEPS = 30  # cheap sweeps of the greedy policy after each full sweep (walk)
WALK_POLISH_SWEEPS = 5  # the same in the walk's last, undiscounted stage
WALK_STAGE_FACTOR = 10  # a discounted stage of the walk ends at a change of tolerance / this
# ... except the stages before the last discounted one, which end at a change of this (when larger):
# the next stage's first sweeps move values by 1e-3 to 0.2 anyway (0: every stage to tolerance / 10).
# Once tried only on engines that find their own hot sets (a GPU's): a CPU solve to 3e-7
# with it had hung in its undiscounted stage, on a value flipping sign (damped since: _Flip)
WALK_EARLY_AIM = 1e-4
WALK_PROGRESS = 0.5  # ... or once 30 rounds have not halved its smallest change (see _Stall)
WALK_NEAR = 2.0  # ... or once WALK_NEAR_ROUNDS rounds in a row changed nothing by this times that aim
WALK_NEAR_ROUNDS = 5  # (0: never; on K = 4 the last stage's tail near the aim had taken 20-30 rounds)
# walk: sweeps of the greedy policy over the hot set a round (0: none; see _hot_round); with the
# budget below, K = 4 took 79-87 full sweeps against 106-109 with 200 and 5.0, for as many policy
# sweeps (docs/design/walk.md, "Longer hot sets, and a stage's tail cut")
WALK_HOT_SWEEPS = 800
WALK_HOT_FULL = 5  # ... after this many policy sweeps of every state, the last of which picks the hot set
WALK_HOT_SHARE = 10  # ... the states that sweep changed by more than its largest change / this
WALK_HOT_BUDGET = 20.0  # ... and at most this many sweeps of every state's worth of them (a big hot set gets fewer)
WALK_HOT_MOST = 8  # ... a hot set of more than 1/this of the states is no hot set: plain policy sweeps instead
# the walk and plain sweeps: once each of the last WALK_FLIP_ROUNDS rounds' largest changes fell at
# the rate the discount alone explains (undiscounted: not at all), within WALK_FLIP_SPREAD, the
# next sweep is averaged with the values it started from (see _Flip): a value that flips sign every
# sweep (a position whose every roll passes the turn back to itself, worth 0) never settles
# otherwise (0: never)
WALK_FLIP_ROUNDS = 3
WALK_FLIP_SPREAD = 1.01
WALK_FLIP_GAIN = 0.5  # ... and where the sweep after a damped one did not halve its change, no more of them
# walk: full sweeps back up from its recorded policy row every state whose choice is proven unchanged
# (solver.stochastic.skip), on engines that can (a regenerating one); the values are the same
WALK_SKIP = True
# bytes a state for the policy method: int32 codes per roll, plus eight float64 Krylov vectors
# and two temporaries
_POLICY_BYTES_PER_ROLL = 4
_KRYLOV_BYTES = 10 * 8
_SETTLE_SWEEPS = 20
CHECK_EPS_FACTOR = 10
_MAX_REPAIRS = 3  # discounted repairs before the solve gives up and stores what it has, flagged
LOCAL_REPAIR_SHARE = 100  # a repair of the flagged states alone while they are at most 1/this of all
DISCOUNTS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6)  # 1 - discount, stage by stage
# the walk's discounted stages (a checkpoint names them): on K = 4 of the fort rules, 1e-2, 1e-4,
# 1e-6 took 111-117 full sweeps against 205 for every power of ten, to the same values within
# 2.2e-4; ending at 1e-5 instead left values up to 4.4e-3 away (docs/design/walk.md, "Three discount stages")
WALK_DISCOUNTS = (1e-2, 1e-4, 1e-6)
CHECKPOINT_SHARE = 0.05  # the walk checkpoints every round unless that takes more than this share of the run
_STAGE_TOLERANCE = 1e-8
_STALL_SWEEPS = 30
_STAGE_MAX_SWEEPS = 5000


def default_threads() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))



@dataclass
class Solved:
    """What ``solve_values`` found: the values and the figures a table header records."""

    values: np.ndarray
    meta: dict[str, Any]
    seconds: float
    # the stored outcome graph the sweeps used (mapped from the table's folder), for work that
    # follows on the same game, such as certifying the values; None where they regenerated
    graph: Any = None
    # a row for each of the walk's full sweeps where they skip (solver.stochastic.skip.Skip.log)
    rounds: list[dict[str, float]] = field(default_factory=list)


def _resumable(solve: Callable[..., "Solved"]) -> Callable[..., "Solved"]:
    """A solve stopped by Ctrl-C or SIGTERM (``KeyboardInterrupt``) ends as ``Interrupted``, which
    says what it left in its folder and that the same command resumes it."""

    @functools.wraps(solve)
    def run(game: Any, root: Path, *args: Any, **kwargs: Any) -> "Solved":
        try:
            return solve(game, root, *args, **kwargs)
        except Interrupted:
            raise
        except KeyboardInterrupt:
            raise Interrupted(stopped_message(Path(root))) from None

    return run


@_resumable
def solve_values(
    game: Any,
    root: Path,
    header: dict[str, Any],
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    threads: int | None = None,
    max_sweeps: int = 100_000,
    method: str = "walk",
    graph: str = "auto",
    show_progress: bool | None = None,
    log: Callable[[str], None] | None = None,
    dtype: str = "float32",
    tiers: list[tuple[int, int]] | None = None,
    engine: Any = None,
    policy_place: str = "auto",
) -> Solved:
    """Solve ``game`` in the folder ``root`` (checkpoints go there; a stopped run with the same
    ``header`` resumes); returns the values and the run's figures. Every choice is checked, and
    ``root`` too (``prepare_table_dir``), before anything is written.

    ``method``: ``walk`` (the default: modified policy iteration while a discount walks up to
    1, see ``_walk``; 4 bytes a state and roll more), ``sweeps`` (plain value iteration from zero)
    or ``policy`` (experimental: BiCGSTAB evaluations of the greedy policy). Every method's values
    end checked against endless play and repaired when they fail.

    ``graph``: ``auto`` stores every state's outcomes once when that fits in half of this
    machine's memory, ``store`` insists, ``regenerate`` never stores; the values are the same.

    ``dtype``: ``float32`` (the default, 4 bytes a state) or ``float64`` (8 bytes a state, for
    tolerances float32 cannot reach).

    ``tiers``: rank ranges ``[(start, stop), ...]`` in solving order that together cover every
    state once, each reaching only itself and ranges solved before it (as play never re-enters a
    range it left). Each range is swept alone until converged, then the next; a checkpoint
    follows every finished range, and a stopped run resumes at the range it was in. Tiers use
    plain sweeps (``method="sweeps"``). Without tiers the whole space is swept together.

    ``engine``: where the sweeps run instead of this process's threads, e.g.
    ``solver.backends.ray.RayEngine`` (each sweep split by rank range across Ray actors). It keeps
    the walk's policy itself, so none is allocated here; it regenerates (no stored graph), and
    takes the ``walk`` and ``sweeps`` methods without tiers.

    ``policy_place``: where the walk keeps its policy (``place_policy``): ``auto`` (in memory
    where it fits in half of it beside the walk's other arrays, else mapped from POLICY_FILE in
    ``root``), ``memory`` or ``disk``. The disk must hold the checkpoint twice and a mapped
    policy (``check_disk``).
    """
    if dtype not in DTYPES:
        raise InputError(f"unknown value type {dtype!r}; expected one of {', '.join(DTYPES)}")
    least = MIN_TOLERANCE if dtype == "float32" else MIN_TOLERANCE_FLOAT64
    if not least <= tolerance < 1:
        raise InputError(f"tolerance must be at least {least:g} (values are {dtype}: below that a "
                         f"sweep can flip values by an ulp for ever) and below 1; got {tolerance:g}")
    n = game.state_count
    nrolls = game.roll_count
    method = choose_method(method, n, nrolls, policy_here=engine is None, place=policy_place)
    on_disk = engine is None and method == "walk" and place_policy(policy_place, n, nrolls) == "disk"
    check_disk(root, n * np.dtype(dtype).itemsize,
               n * (nrolls * _POLICY_BYTES_PER_ROLL + (np.dtype(dtype).itemsize if WALK_SKIP else 0)) if on_disk else 0)
    if engine is not None and (tiers is not None or method == "policy"):
        raise InputError(f"the {getattr(engine, 'name', 'given')} engine runs the walk and plain sweeps "
                         "without tiers; use method 'walk' or 'sweeps'")
    if tiers is not None:
        tiers = check_tiers(tiers, n)
        if method != "sweeps":
            raise InputError(f"tiers are solved by plain sweeps, range after range; use method 'sweeps', "
                             f"not {method!r}")
    if tiers is not None:  # one tier's graph at a time: the largest range decides
        use_graph = want_graph(game, graph, share=max(b - a for a, b in tiers) / max(1, n))
    else:
        use_graph = want_graph(game, graph,
                               other_bytes=extra_bytes(n, nrolls, method, policy_on_disk=on_disk))
    use_graph = use_graph and engine is None
    threads = threads or default_threads()
    prepare_table_dir(root)  # after the choices: a run refused leaves nothing behind
    if log:
        line = estimate(game, method, use_graph, threads, dtype=dtype, tiers=tiers, policy_on_disk=on_disk,
                        skipping=engine is None and tiers is None)
        if engine is not None:  # the sweep was timed on this process's threads, not where it will run
            line += f" (timed on this machine's CPU; the {getattr(engine, 'name', 'given')} engine sweeps elsewhere)"
        log(line)
    values, sweeps, started, products, stage, cheap, tier, hot = _resume(
        root, header, n, method, log, dtype, tiers is not None)
    policy = None  # mapped inside the try below when on disk, so a stop while it is made still cleans up
    if not on_disk:
        policy = np.empty((n if engine is None else 0, nrolls), dtype=np.int32) if method in ("policy", "walk") \
            else None
    # seconds spent building the stored graph (not in the sweeps' "so far"); an engine given here
    # (the GPU's) built its own before the solve began
    built = float(getattr(engine, "graph_seconds", 0.0)) if engine is not None else 0.0
    engine = Regenerated(game) if engine is None else engine
    graph_bytes = 0  # the largest tier's stored graph, with tiers
    if use_graph and tiers is None:
        t0 = time.perf_counter()
        kept = load_graph(game, root, header)
        if kept is None and not sweeps:
            # a sweep-0 checkpoint first: a run stopped while the graph is built (half an hour
            # for K = 5) leaves a folder the next run takes up, mapping the graph if it was finished
            _checkpoint(root, values, {"sweeps": 0, "products": 0, "policy_sweeps": 0, "stage": 0,
                                       "method": method, "options": header, "tolerance": tolerance})
            if log:  # the build is one regenerating pass and more, silent until it ends
                log(f"building the stored graph ({estimate_bytes(game) / 2**30:,.2f} GiB) in {root / GRAPH_DIR}; "
                    "a run stopped now maps it when resumed if it was finished")
        # written beside the checkpoint as it is built, and mapped: a resumed run maps it again
        engine = kept or build_mapped_graph(game, root, header, threads, show_progress)
        built = time.perf_counter() - t0
        if log:
            how = "mapped from the stopped run" if kept is not None else "built"
            log(f"stored graph: {engine.codes.size:,} outcomes, {engine.nbytes / 2**30:.2f} GiB ({how} in "
                f"{built:.1f} s)")
    eps = check_eps(tolerance)
    spent = 0.0
    if sweeps and log:
        log(f"resuming from the checkpoint after sweep {sweeps}")
    repairs = repaired = 0
    generated: dict[str, int] = {}  # what the walk's full sweeps generated, where they skip
    rounds: list[dict[str, float]] = []  # ... and a row a full sweep
    try:
        if on_disk:  # file-backed: under memory pressure the system writes its pages out instead of failing
            policy = np.lib.format.open_memmap(root / POLICY_FILE, mode="w+", dtype=np.int32, shape=(n, nrolls))
            if log:
                log(f"the walk's policy ({policy.nbytes / 2**30:,.2f} GiB) is mapped from {root / POLICY_FILE}, "
                    f"not held in memory")
        while True:
            if tiers is not None:  # after a repair, every range is swept again from the repaired values
                residual, sweeps, spent, check, tier_built, tier_bytes = _tiered(
                    game, use_graph, root, values, header, tolerance, threads, max_sweeps, tiers,
                    0 if repairs else tier, sweeps, spent, eps, show_progress, log)
                built += tier_built
                graph_bytes = max(graph_bytes, tier_bytes)
            elif method == "walk" and policy is not None:
                walked: dict[str, Any] = {}
                residual, sweeps, cheap, hot, spent = _walk(
                    engine, root, values, header, tolerance, threads, max_sweeps, policy, sweeps, cheap, hot, stage,
                    spent, show_progress, log, walked)
                for key in ("generated_states", "generated_codes"):
                    generated[key] = generated.get(key, 0) + walked.get(key, 0)
                rounds += walked.get("rounds", [])
            else:
                residual, sweeps, products, spent = _iterate(
                    engine, root, values, header, tolerance, threads, max_sweeps, policy, sweeps, products, spent,
                    show_progress, log)
            if tiers is None:
                t0 = time.perf_counter()
                check = endless_check(engine, values, eps, threads, show_progress)
                spent += time.perf_counter() - t0
                if log:
                    log(f"endless check at eps {eps:g}: {check.passes} passes, {check.flagged:,} states flagged "
                        f"({time.perf_counter() - t0:.1f} s)")
            if check.passed or repairs >= _MAX_REPAIRS:
                break
            # A false solution: somewhere a side claims an advantage that only endless play keeps.
            # Discounting makes the solution unique; walk the discount up to almost 1 (on the flagged
            # states alone while they are few, the last time on every state), then sweep every state
            # to the tolerance and check again.
            repairs += 1
            schedule = ", ".join(f"{d:g}" for d in DISCOUNTS)
            t0 = time.perf_counter()
            if (repairs < _MAX_REPAIRS and getattr(engine, "subset_sweeps", False)
                    and check.flagged * LOCAL_REPAIR_SHARE <= n):
                if log:
                    log(f"endless check: {check.flagged:,} states claim an advantage that only endless play keeps; "
                        f"solving discounted games (1 - discount = {schedule}) on those states alone")
                repaired += local_repair(engine, values, check.states, threads, log)
                stage = len(WALK_DISCOUNTS)  # the walk goes on in its undiscounted stage, its policy kept
            else:
                policy = None
                if log:
                    log(f"endless check: {check.flagged:,} states claim an advantage that only endless play keeps; "
                        f"solving discounted games (1 - discount = {schedule}) from here")
                sweeps += discounted_descent(engine, values, threads, show_progress, log)
            spent += time.perf_counter() - t0
    finally:  # a stopped or finished run leaves no mapped policy behind (a resumed run rewrites it)
        had_policy, policy = policy is not None, None
        if on_disk:
            (root / POLICY_FILE).unlink(missing_ok=True)
    if not check.passed and log:
        log(f"warning: {check.flagged:,} states still fail the endless check")
    meta = {
        "tolerance": tolerance,
        "residual": float(residual),
        "sweeps": sweeps,
        "method": method,
        "graph": (("stored per tier" if use_graph else "regenerated") if tiers is not None
                  else getattr(engine, "graph_kind", "stored" if engine.stored else "regenerated")),
        "policy_products": products,
        "policy_sweeps": cheap,
        "hot_set_states": hot,  # states swept by the walk's hot-set sweeps, all of them together
        "policy_sweep_equivalents": round(cheap + hot / max(1, n), 1),
        "value": "P(win) - P(loss) for the side to move, before rolling; endless play counts 0",
        "solve_seconds_this_run": round(spent + built, 3),
        "graph_build_seconds": round(built, 3),
        "resumed_at_sweep": started,
        "endless_check": check.summary(),
        "endless_repairs": repairs,
        "repair_backups": repaired,  # states backed up by local repairs, all of them together
        "value_dtype": dtype,
        "backend": getattr(engine, "name", "cpu"),
        "tiers": len(tiers) if tiers is not None else 0,
        "policy_place": ("disk" if on_disk else "memory") if had_policy else None,  # the walk's policy
        "bytes_per_state": {"values": values.itemsize, "policy": 4 * nrolls if had_policy else 0,
                            "graph": round(max(engine.nbytes, graph_bytes) / n, 1)},
    }
    if generated:  # what the walk's full sweeps generated this run (where the engine counts)
        meta["full_sweeps_generated"] = generated
    return Solved(values, meta, spent + built, engine if tiers is None and getattr(engine, "stored", False) else None,
                  rounds)


# full sweeps (each with its policy sweeps) the walk takes on the fort rules: the walk 72-87 on
# K = 4, the walk before its longer hot sets 150 on K = 5 and 247 on its first, partly older, run
TYPICAL_SWEEPS = (100, 250)
# The walk's policy sweeps between two full sweeps (its hot sets included), in thread-seconds a
# state: they read only the policy and the values, so they cost the same whether full sweeps
# regenerate or read a stored graph, and they wait on memory, not on the move generator. Measured
# from the solve's round log (docs/design/backends.md, "Six and seven pieces"), two threads, a state and
# thread a round: K = 4, stored graph, 68-81 s over 69-72 rounds (about 250 ns); K = 5, stored
# graph, 2,510 s over 122 rounds (about 660 ns, on a slower machine and
# partly beside test runs); K = 6's first stage, regenerating, 12-14 s a round (about 100 ns).
# Before that this was a quarter of a regenerating full sweep, which fits K = 4 but priced
# the K = 6 run's rounds' policy sweeps at five times what they took.
POLICY_ROUND_SECONDS = 4.5e-7
# A full sweep over the stored graph against a regenerating one, two threads, K = 4 on this
# project's 2-core machine (docs/design/walk.md: 0.43-0.48 s against 3.78-4.81 s, ten runs)
STORED_SWEEP_SPEEDUP = 9.0
# The walk's regenerating full sweeps with skipping (WALK_SKIP) against without, over a whole walk:
# four pieces, two threads, 292 s against 393 s (benchmarks/bench_walk_skip.py; the later rounds
# of a stage generate a tenth of the states, its first ones all of them)
SKIP_SWEEP_SPEEDUP = 1.35
_SAMPLE_RUNS = 48
_SAMPLE_RUN = 1024


def seconds_per_state(game: Any, chunks: int = _SAMPLE_RUNS, chunk: int = _SAMPLE_RUN, seed: int = 0) -> float:
    """Seconds one thread takes to sweep a state (regenerating its outcomes), timed on ``chunks``
    runs of ``chunk`` consecutive ranks spread at random over the whole space (the tiers differ
    several times in cost, so the top states alone would overstate it, and a contiguous block
    understates what scattered value reads cost once the values outgrow the cache: the fort rules'
    top 20,000 states said 174-210 s for a K = 6 sweep that takes 280 s)."""
    n = game.state_count
    chunk = max(1, min(chunk, n))
    V = np.zeros(n, dtype=np.float32)  # untouched pages cost nothing: reads see zeros
    starts = np.sort(np.random.default_rng(seed).integers(0, n - chunk + 1, size=chunks))
    game.sweep(V, threads=1, start=0, stop=1, write=False)  # the game's lazy indexes, not timed
    t0 = time.perf_counter()
    for a in starts.tolist():
        game.sweep(V, threads=1, start=a, stop=a + chunk, write=False)
    return (time.perf_counter() - t0) / (chunks * chunk)


def estimate(game: Any, method: str, stored: bool, threads: int, dtype: str = "float32",
             tiers: list[tuple[int, int]] | None = None, policy_on_disk: bool = False, skipping: bool = False) -> str:
    """One line before a solve: memory by part (``policy_on_disk``: the walk maps its policy from a
    file), and the time of one full sweep on this machine, timed on a sample of states
    (``seconds_per_state``, regenerating, one thread, times the threads; a stored graph's sweep
    STORED_SWEEP_SPEEDUP times faster), with the walk's rounds priced at a full sweep plus its
    policy sweeps (``round_seconds``).
    With tiers the stored graph holds one tier's codes at a time: the largest tier's are counted."""
    n, nrolls = game.state_count, game.roll_count
    policy = n * nrolls * _POLICY_BYTES_PER_ROLL if method != "sweeps" else 0
    history = extra_bytes(n, nrolls, method, policy_on_disk=policy_on_disk) - (0 if policy_on_disk else policy) \
        if method == "walk" else 0
    graph = estimate_bytes(game) if stored else 0
    if graph and tiers:
        index = n * (8 + game.ngroups)
        graph = index + int((graph - index) * max(b - a for a, b in tiers) / max(1, n))
    regenerating = seconds_per_state(game) * n / max(1, threads)  # threads scale about linearly
    sweep = regenerating / (STORED_SWEEP_SPEEDUP if stored else 1)
    # ``skipping``: the walk's regenerating full sweeps skip what cannot change; a round is priced at their mean
    skipping = skipping and WALK_SKIP and not stored and method == "walk"
    walk_sweep = sweep / SKIP_SWEEP_SPEEDUP if skipping else sweep
    lo, hi = TYPICAL_SWEEPS
    if method == "walk":
        round_ = round_seconds(walk_sweep, n, threads)
        what = "a full sweep, skipping what cannot change, and its policy sweeps" if skipping else \
            "a full sweep and its policy sweeps"
        time_line = (f"; a round of the walk ({what}) about {round_:,.1f} s; "
                     f"{lo}-{hi} rounds would take {span(lo * round_, hi * round_)}")
    elif method == "sweeps":
        time_line = (f"; {lo}-{hi} full sweeps (the walk's count; plain sweeps need several times as many) would "
                     f"take {span(lo * sweep, hi * sweep)}")
    else:
        time_line = f"; {lo}-{hi} full sweeps would take {span(lo * sweep, hi * sweep)} plus the Krylov products"
    return (f"estimate: {n:,} states; memory {np.dtype(dtype).itemsize * n / 2**20:,.0f} MiB of values"
            + (f", {policy / 2**20:,.0f} MiB of policy" + (" (mapped from disk)" if policy_on_disk else "")
               if policy else "")
            + (f", {history / 2**20:,.0f} MiB of hot-set marks"
               + (" and skip bytes" if WALK_SKIP and not stored else "") if history else "")
            + (f", {graph / 2**30:,.2f} GiB of stored graph" if graph else "")
            + f"; one full sweep about {sweep:,.1f} s here ({'stored graph' if stored else 'regenerating'}, "
            f"{threads} threads)" + time_line)


def round_seconds(sweep: float, states: int, threads: float) -> float:
    """One round of the walk: a full sweep taking ``sweep`` seconds, and its policy sweeps over
    ``states`` states on ``threads`` threads (POLICY_ROUND_SECONDS a state and thread)."""
    return sweep + POLICY_ROUND_SECONDS * states / max(1.0, threads)


def span(lo: float, hi: float) -> str:
    """A range of durations as a reader wants it: "5.8 hours to 15 hours", or one figure."""
    a, b = duration(lo), duration(hi)
    return a if a == b else f"{a} to {b}"


def _iterate(K: Any, root: Path, values: np.ndarray, header: dict[str, Any], tolerance: float, threads: int,
             max_sweeps: int, policy: np.ndarray | None, sweeps: int, products: int, spent: float,
             show_progress: bool | None, log: Any) -> tuple[float, int, int, float]:
    """Sweep (and, with ``policy``, evaluate greedy policies) until change and residual are below
    ``tolerance``; checkpoints after every sweep. Returns (residual, sweeps, products, seconds)."""
    flip, damp = _Flip(), False
    while sweeps < max_sweeps:
        t0 = time.perf_counter()
        last = _sweep(K, values, threads, f"sweep {sweeps + 1}", show_progress, policy, damp=damp)
        spent += time.perf_counter() - t0
        sweeps += 1
        info = {"sweeps": sweeps, "products": products, "change": last, "options": header, "tolerance": tolerance,
                "method": "sweeps" if policy is None else "policy"}
        _checkpoint(root, values, info)
        if log:
            log(f"sweep {sweeps}{' damped' if damp else ''}: largest change {last:.3g} ({spent:.1f} s so far)")
        if last < tolerance:
            residual = K.sweep(values, threads=threads, write=False)
            if residual < tolerance:
                return residual, sweeps, products, spent
        damped, damp = damp, flip(last, damped=damp)
        if policy is not None and not damped:
            t0 = time.perf_counter()
            res = evaluate_policy(K, policy, values, max(last * 0.01, tolerance / 10), threads)
            spent += time.perf_counter() - t0
            products += res.matvecs
            _checkpoint(root, values, {**info, "products": products})
            if log:
                log(f"  policy of sweep {sweeps} evaluated: {res.matvecs} products, residual "
                    f"{res.initial:.2g} -> {res.residual:.2g} ({spent:.1f} s so far)")
    raise RuntimeError(f"no convergence to {tolerance} within {max_sweeps} sweeps")


def check_tiers(tiers: Any, n: int) -> list[tuple[int, int]]:
    """The tier ranges as int pairs, checked to cover 0..n-1 each rank once (in any order)."""
    try:
        out = [(int(a), int(b)) for a, b in tiers]
    except (TypeError, ValueError):
        raise InputError("tiers must be (start, stop) rank pairs") from None
    if any(not 0 <= a <= b <= n for a, b in out):
        raise InputError(f"a tier range lies outside the state space 0..{n}")
    at = 0
    for a, b in sorted(out):
        if a != at:
            raise InputError(f"tier ranges must cover every rank once; rank {min(a, at)} is "
                             f"{'missed' if a > at else 'in two ranges'}")
        at = b
    if at != n:
        raise InputError(f"tier ranges must cover every rank once; ranks {at}..{n - 1} are missed")
    return out


def _tiered(game: Any, store: bool, root: Path, values: np.ndarray, header: dict[str, Any], tolerance: float,
            threads: int, max_sweeps: int, tiers: list[tuple[int, int]], tier: int, sweeps: int, spent: float,
            eps: float, show_progress: bool | None,
            log: Any) -> tuple[float, int, float, EndlessCheck, float, int]:
    """Sweep each tier range, from ``tier`` on, until a sweep changes no value of it by more than
    ``tolerance`` and its Bellman residual is below it too; then check the range against endless
    play, and checkpoint. With ``store`` each range's outcomes are ranked once (``range_graph``)
    and dropped after it. Returns (largest residual of the ranges solved in this run, sweeps,
    seconds, the endless check of every range, those of a resumed run's earlier ranges counted
    as the checkpoint recorded them, seconds spent building graphs, the largest graph's bytes)."""
    residual = 0.0
    built, largest = 0.0, 0
    passes, flagged = 0, 0
    bad: list[np.ndarray] = []
    info_file = root / CHECKPOINT_INFO
    if tier and info_file.exists():
        earlier = json.loads(info_file.read_text())
        passes, flagged = int(earlier.get("check_passes", 0)), int(earlier.get("check_flagged", 0))
    for i in range(tier, len(tiers)):
        start, stop = tiers[i]
        # waking threads costs more than a small tier's sweep, on a busy machine many times more
        threads_here = threads if stop - start >= _SMALL_TIER else 1
        used = 0
        t0 = time.perf_counter()
        K: Any = range_graph(game, start, stop, threads_here) if store and start < stop else Regenerated(game)
        built += time.perf_counter() - t0
        largest = max(largest, K.nbytes)
        t0 = time.perf_counter()
        last = 0.0
        while start < stop:
            if sweeps >= max_sweeps:
                raise RuntimeError(f"no convergence to {tolerance} within {max_sweeps} sweeps")
            last = _sweep(K, values, threads_here, f"tier {i + 1}/{len(tiers)}, sweep {used + 1}", show_progress,
                          start=start, stop=stop)
            sweeps += 1
            used += 1
            if last < tolerance:
                res = K.sweep(values, threads=threads_here, start=start, stop=stop, write=False)
                if res < tolerance:
                    residual = max(residual, res)
                    break
        # the endless check inside the range: every earlier range passed it, so its states count as
        # ways out (good); later ranges cannot be reached from this one
        good = np.ones(values.shape[0], dtype=np.uint8)
        good[start:stop] = 0
        added, first = 1, True
        while added and start < stop:
            added = K.endless_pass(values, good, eps, threads=threads_here, first=first)
            first = False
            passes += 1
        here = start + np.flatnonzero((good[start:stop] == 0) & (np.abs(values[start:stop]) > eps))
        flagged += int(here.size)
        bad.append(here)
        del good, K
        spent += time.perf_counter() - t0
        _checkpoint(root, values, {"sweeps": sweeps, "products": 0, "tier": i + 1, "tiers": len(tiers),
                                   "change": last, "options": header, "tolerance": tolerance, "method": "sweeps",
                                   "check_passes": passes, "check_flagged": flagged})
        if log:
            verdict = "passed" if not here.size else f"flagged {here.size:,} states"
            log(f"tier {i + 1}/{len(tiers)} ({stop - start:,} states): {used} sweeps, endless check {verdict} "
                f"({spent + built:.1f} s so far)")
    states = np.concatenate(bad) if bad else np.zeros(0, np.int64)
    worst = states[np.argsort(-np.abs(values[states]), kind="stable")[:10]]
    return (residual, sweeps, spent, EndlessCheck(eps, passes, flagged, tuple(int(r) for r in worst), states),
            built, largest)


def range_graph(game: Any, start: int, stop: int, threads: int) -> StoredGraph:
    """The stored outcome graph of the ranks start..stop-1 only (the other states hold no codes):
    one tier's outcomes, ranked once, for that tier's sweeps."""
    return build_graph(game, threads, start=start, stop=stop)


class _Pacer:
    """The walk's checkpoints: after every round, unless writing one takes more than
    CHECKPOINT_SHARE of the run (six pieces on a GPU: a round of about a second, a checkpoint of
    1 GB), then once that share of the time has passed since the last; and when the walk ends
    or is stopped."""

    def __init__(self, root: Path, values: np.ndarray) -> None:
        self.root, self.values = root, values
        self.info: dict[str, Any] | None = None  # the last round's, written or not
        self.cost = 0.0
        self.last = time.perf_counter()

    def round(self, info: dict[str, Any], force: bool = False) -> None:
        self.info = info
        if force or time.perf_counter() - self.last >= self.cost / CHECKPOINT_SHARE:
            self.write()

    def write(self) -> None:
        if self.info is None:
            return
        t0 = time.perf_counter()
        _checkpoint(self.root, self.values, self.info)
        self.last = time.perf_counter()
        self.cost = self.last - t0


def _walk(K: Any, root: Path, values: np.ndarray, header: dict[str, Any], tolerance: float, threads: int,
          max_sweeps: int, policy: np.ndarray, sweeps: int, cheap: int, hot: int, stage: int, spent: float,
          show_progress: bool | None, log: Any, work: dict[str, Any] | None = None,
          ) -> tuple[float, int, int, int, float]:
    """The ``walk`` method: modified policy iteration while a discount walks up to 1.

    Stage by stage, 1 - discount = WALK_DISCOUNTS (1e-2, 1e-4, 1e-6) and finally 0: each round
    is one full sweep, which also records both players' greedy policy, then up to
    WALK_POLICY_SWEEPS cheap float32 sweeps of that policy (WALK_POLISH_SWEEPS in the last stage;
    in the discounted stages, where the engine can, a few of them and many over the hot set
    instead: ``_hot_round``). The last discounted stage ends when a full sweep changes no value by
    more than ``tolerance / 10``, the ones before it at WALK_EARLY_AIM (1e-4: the next stage's first
    sweeps move values by far more) (or 30 rounds have not halved the smallest change: float32
    rounding and near-ties; or five rounds in a row stayed below twice that aim: see ``_Stall``), so
    that cycles kept up only by endless play have decayed below the check's slack. A sweep is
    damped once the largest change falls at the rate the discount alone explains (``_Flip``).
    Each stage starts from the last, so the undiscounted stage starts next to the game's value, not in the basin of
    a false solution. Returns (residual, sweeps, policy sweeps, states swept in hot sets, seconds);
    checkpoints after every round (less often where writing one would take more than
    CHECKPOINT_SHARE of the time: ``_Pacer``), with the stage, and when stopped, so a stopped run
    resumes in it.

    Where the engine can (``skips``: a regenerating one) and WALK_SKIP is on, a full sweep backs
    up from its policy row every state whose best actions are proven unchanged since its last full
    backup (``solver.stochastic.skip``): the same values at a policy sweep's cost. ``work``, where
    given, receives what the full sweeps generated (``_skip_figures``).
    """
    stages = WALK_DISCOUNTS + (0.0,)
    can_skip = getattr(K, "skips", False)
    # the copy of the values goes beside a policy mapped from a file, so that it pages as the policy does
    copy_file = root / COPY_FILE if isinstance(policy, np.memmap) else None
    skip = Skip(values.shape[0], values.dtype, copy_file) if WALK_SKIP and can_skip else None
    # the states and codes the full sweeps generated, where the engine counts them
    counted = skip.work if skip is not None else np.zeros(2, dtype=np.int64) if can_skip else None
    aim = tolerance / WALK_STAGE_FACTOR  # where a discounted stage ends
    hot_rounds = bool(WALK_HOT_SWEEPS) and getattr(K, "hot_sets", False)
    # the hot sets' marks: a byte a state here, unless the engine finds its hot sets itself (a GPU's)
    mark = np.zeros(values.shape[0], dtype=np.uint8) if hot_rounds and not _finds_hot_sets(K) else None
    pacer = _Pacer(root, values)
    try:
        while stage < len(stages):
            d = stages[stage]
            g = float(np.float32(1.0 - d))
            end = max(aim, WALK_EARLY_AIM) if stage < len(WALK_DISCOUNTS) - 1 else aim
            stalled = _Stall(WALK_PROGRESS, WALK_NEAR * end, WALK_NEAR_ROUNDS)
            flip, damp = _Flip(), False
            between = 0  # sweeps of every state since the last full sweep, besides the next one
            while sweeps < max_sweeps:
                t0 = time.perf_counter()
                label = f"sweep {sweeps + 1} (1 - discount {d:g})" if d else f"sweep {sweeps + 1}"
                last = _full_sweep(K, values, threads, label, show_progress, policy, g, damp, skip, counted)
                t_full = time.perf_counter() - t0
                sweeps += 1
                if last < tolerance and d == 0.0:
                    residual = K.sweep(values, threads=threads, write=False)
                    if residual < tolerance:
                        spent += time.perf_counter() - t0
                        pacer.round(_walk_info(header, tolerance, sweeps, cheap, hot, stage, last), force=True)
                        return residual, sweeps, cheap, hot, spent
                done = bool(d) and (last < end or stalled(last))
                rate = g ** (1 + between)  # how slowly a change can fall at most since the last round
                was = cheap
                if damp:
                    pass  # no policy sweeps after a damped sweep: a GPU's own values are not the averaged ones
                elif not done and d and hot_rounds:
                    full, swept = _hot_round(K, policy, values, threads, g, tolerance / 10, mark)
                    cheap += full
                    hot += swept
                elif not done:
                    for _ in range(WALK_POLICY_SWEEPS if d else WALK_POLISH_SWEEPS):
                        cheap += 1
                        if K.evaluate(policy, values, threads=threads, discount=g) < tolerance / 10:
                            break
                between = cheap - was
                t_round = time.perf_counter() - t0
                spent += t_round
                pacer.round(_walk_info(header, tolerance, sweeps, cheap, hot, stage + done, last), force=done)
                if log:  # the split says what a round costs where: the projections' policy share
                    generated = f", {skip.log[-1]['generated']:.1%} generated" if skip is not None else ""
                    log(f"sweep {sweeps} (1 - discount {d:g}){' damped' if damp else ''}: largest change {last:.3g} "
                        f"(full sweep {t_full:.1f} s{generated}, policy sweeps {t_round - t_full:.1f} s; "
                        f"{spent:.1f} s so far)")
                damp = flip(last, rate, damped=damp)
                if done:
                    break
            else:
                pacer.write()
                raise RuntimeError(f"no convergence to {tolerance} within {max_sweeps} sweeps")
            stage += 1
        raise AssertionError("unreachable: the last stage returns")
    except KeyboardInterrupt:
        pacer.write()  # the rounds since the last checkpoint are kept: a resumed run goes on from here
        raise
    finally:
        if work is not None:
            work.update(_skip_figures(skip, counted))
        if skip is not None:
            skip.close()


def _full_sweep(K: Any, values: np.ndarray, threads: int, label: str, show: bool | None, policy: np.ndarray,
                g: float, damp: bool, skip: Skip | None, counted: np.ndarray | None) -> float:
    """The walk's full sweep (``_sweep``), skipping what cannot change where ``skip`` is given
    (solver.stochastic.skip). ``counted`` (two int64, where the engine counts) receives the
    states generated and the codes written."""
    if skip is None:
        return _sweep(K, values, threads, label, show, policy, g, damp=damp,
                      extra={"work": counted} if counted is not None else None)
    skip.begin(values, g)
    before = int(skip.work[0])
    last = _sweep(K, values, threads, label, show, policy, g, damp=damp, extra=skip.kwargs())
    skip.end(values, last, int(skip.work[0]) - before)
    return last


def _skip_figures(skip: Skip | None, counted: np.ndarray | None) -> dict[str, Any]:
    """What the walk's full sweeps generated (where the engine counts): states and outcome codes,
    and where they skip, a row a full sweep (``Skip.log``)."""
    if counted is None:
        return {}
    out: dict[str, Any] = {"generated_states": int(counted[0]), "generated_codes": int(counted[1])}
    if skip is not None:
        out["rounds"] = list(skip.log)
    return out


class _Stall:
    """Called with each sweep's largest change; True once the last _STALL_SWEEPS sweeps have not
    brought the smallest change below ``progress`` times the smallest before them, or (with
    ``rounds``) once the last ``rounds`` changes all lay below ``near``.

    With ``progress`` 1 (the discounted repair) any new smallest change counts, so only float32
    rounding stops a stage early. The walk uses ``WALK_PROGRESS`` (a halving per 30 rounds): on
    K = 4 its discounted stages end on a plateau near 1e-6, where two threads' float32 rounding and
    near-ties flipping the greedy policy keep the change from falling more than about 1% a round.
    It also passes ``near``, twice its aim, for WALK_NEAR_ROUNDS rounds: a stage whose change has
    stayed that close to its aim for five rounds has nothing left that another 20-30 rounds of
    full sweeps would buy (measured on K = 4: docs/design/walk.md, "Longer hot sets, and a stage's tail cut").
    """

    def __init__(self, progress: float = 1.0, near: float = 0.0, rounds: int = 0) -> None:
        self.progress = progress
        self.near = near
        self.rounds = rounds
        self.changes: list[float] = []

    def __call__(self, change: float) -> bool:
        self.changes.append(change)
        if self.rounds and len(self.changes) >= self.rounds and max(self.changes[-self.rounds:]) < self.near:
            return True
        if len(self.changes) <= _STALL_SWEEPS:
            return False
        return min(self.changes[-_STALL_SWEEPS:]) >= self.progress * min(self.changes[:-_STALL_SWEEPS])


class _Flip:
    """Called with each round's largest change (its full sweep's) and the rate at which a mode that
    nothing but the discount shrinks would have fallen since the last one (the discount to the
    power of the sweeps of every state between them; 1 undiscounted); True when the next sweep
    should be damped (``_sweep``): over the last WALK_FLIP_ROUNDS changes, each fell at that rate,
    to within a factor WALK_FLIP_SPREAD either way.

    Undiscounted, a position whose best action on every roll passes the turn to itself (both
    sides blocked, or better off not moving: the same position with the sides swapped, which the
    mirror numbers as the same) has the equation v = -v, worth 0, and a Gauss-Seidel sweep maps v
    to -v: from any v other than 0 it flips for ever, and the positions that lead to it with it,
    so the largest change stays put sweep after sweep (found on the 8-tile test board, four pieces,
    tolerance 3e-7: 5.6e-6 for 3,000 sweeps, one thread). Where states are updated at once (a GPU's
    launch, Ray's ranges, two threads' blocks) a pair of positions that pass to each other can do
    the same. A discount shrinks such a value by the discount a sweep and no more (at 1 - 1e-6: not
    at all), and no other mode can fall more slowly, so a largest change that falls at that rate is
    carried by one, or by a slow mode that falls a little faster (a cycle that play seldom leaves).
    Averaging a sweep with its start maps a flipping v to 0 at once; a slow mode loses half a sweep
    to it. So a damped sweep is a probe: where the sweep after it has not cut the largest change
    to WALK_FLIP_GAIN of the damped one's, nothing flipped, and this detector damps no more (in
    the full discounted descent on the test board a slow mode at 0.9987 a sweep, against a
    discount of 0.999, would otherwise be damped every fourth sweep); else the count starts again."""

    def __init__(self, rounds: int | None = None, spread: float | None = None) -> None:
        self.rounds = WALK_FLIP_ROUNDS if rounds is None else rounds
        self.spread = WALK_FLIP_SPREAD if spread is None else spread
        self.changes: list[tuple[float, float]] = []
        self.probe = 0.0  # the change of the damped sweep, while the next one is awaited

    def __call__(self, change: float, rate: float = 1.0, damped: bool = False) -> bool:
        if damped:
            self.changes = []
            self.probe = change
            return False
        if self.probe and change > WALK_FLIP_GAIN * self.probe:
            self.rounds = 0  # the damped sweep did not halve the change: no flip carried it; no more
        self.probe = 0.0
        self.changes.append((change, rate))
        if not self.rounds or len(self.changes) < self.rounds:
            return False
        last = self.changes[-self.rounds:]
        # each step at the rate, within the spread either way: a largest change that rises or jumps
        # about is the greedy policy still moving (early in a stage), not a flip
        return all(before > 0 and before * r <= after * self.spread and after <= before * r * self.spread
                   for (before, _), (after, r) in zip(last, last[1:]))


def _walk_info(header: dict[str, Any], tolerance: float, sweeps: int, cheap: int, hot: int, stage: int,
               change: float) -> dict[str, Any]:
    return {"sweeps": sweeps, "products": 0, "policy_sweeps": cheap, "hot_states": hot, "stage": stage,
            "discounts": list(WALK_DISCOUNTS), "change": change, "options": header, "tolerance": tolerance,
            "method": "walk"}


def _finds_hot_sets(K: Any) -> bool:
    """Whether the engine marks and gathers the walk's hot sets in its own memory (``hot_set``)."""
    return bool(getattr(K, "device_hot_sets", False)) and callable(getattr(K, "hot_set", None))


def _hot_round(K: Any, policy: np.ndarray, values: np.ndarray, threads: int, g: float, floor: float,
               mark: np.ndarray | None) -> tuple[int, int]:
    """The walk's policy sweeps in a discounted stage, spent where the error is; returns (sweeps of
    every state, states swept in the hot set).

    In a game that mixes slowly the policy sweeps' error soon lives on a few states: on the fort
    rules with four pieces, after 50 policy sweeps of the greedy pair 90% of it (squared) sat on
    0.6% of the states and shrank by only 0.9983 a sweep. So: WALK_HOT_FULL - 1 sweeps of every
    state (the fast modes), one more that marks the states it changed by more than its largest
    change / WALK_HOT_SHARE (the hot set), up to WALK_HOT_SWEEPS sweeps of those states alone,
    in rank order (fewer where the set is big: WALK_HOT_BUDGET sweeps of every state's worth at
    most), and a last sweep of every state to pass what they learnt on. A hot set of more than
    1 / WALK_HOT_MOST of the states (early in the walk the error is everywhere) gets the plain
    round's policy sweeps instead; so the hot set's ranks take at most a byte a state, besides the
    mark's byte. An engine that finds hot sets itself (``hot_set``, a GPU's: ``mark`` is None) marks
    and gathers the same states, in the same order, in its own memory. Every step is a
    Gauss-Seidel update of some states of the same equations, so the fixed point is the policy's,
    as with the plain sweeps; none extrapolates. Each stops once a sweep changes nothing by more
    than ``floor``."""
    change = float("inf")
    full = 0
    for _ in range(WALK_HOT_FULL - 1):
        full += 1
        change = K.evaluate(policy, values, threads=threads, discount=g)
        if change < floor:
            return full, 0
    full += 1
    above = max(change / WALK_HOT_SHARE, floor / 10)
    n = values.shape[0]
    hot_set: Any
    if mark is None:
        change, hot_set, size = K.hot_set(policy, values, threads=threads, discount=g, above=above,
                                          most=n // WALK_HOT_MOST)
    else:
        mark[:] = 0
        change = K.evaluate(policy, values, threads=threads, discount=g, mark=mark, above=above)
        size = int(np.count_nonzero(mark))
    if change < floor:
        return full, 0
    if size * WALK_HOT_MOST > n:
        for _ in range(WALK_POLICY_SWEEPS - full):
            full += 1
            if K.evaluate(policy, values, threads=threads, discount=g) < floor:
                break
        return full, 0
    if mark is not None:
        hot_set = np.flatnonzero(mark)
    swept = 0
    for _ in range(min(WALK_HOT_SWEEPS, int(WALK_HOT_BUDGET * n / max(1, size)))):
        swept += size
        if K.evaluate(policy, values, threads=threads, discount=g, subset=hot_set) < floor:
            break
    full += 1
    K.evaluate(policy, values, threads=threads, discount=g)
    return full, swept


def local_repair(K: Any, values: np.ndarray, states: np.ndarray, threads: int = 1, log: Any = None) -> int:
    """``discounted_descent`` on the given states alone (those the endless check flagged), every
    other value held; returns the backups it made (states times sweeps).

    A false solution locks an advantage into a cycle of positions that pass it back and forth
    (on five pieces of the fort rules: two sides recapturing on the entry, each claiming 0.002).
    The discount makes such a cycle decay; on the flagged states alone that costs almost nothing
    where the full descent costs thousands of sweeps of every state. Sweeps of every state
    follow and the check runs again, which is what makes the result trustworthy: a repair that
    was too local fails it, and the solve tries again, finally with the full descent."""
    subset = np.ascontiguousarray(np.unique(states), dtype=np.int64)
    used = 0
    for d in DISCOUNTS:
        g = float(np.float32(1.0 - d))
        stalled = _Stall()
        flip, damp = _Flip(), False
        for i in range(_STAGE_MAX_SWEEPS):
            before = values[subset] if damp else None
            change = K.sweep(values, threads=threads, subset=subset, discount=g)
            if before is not None:  # damped (see _Flip): the subset's new values averaged with their start
                _halfway(values, subset, before)
            used += subset.size
            if change < _STAGE_TOLERANCE or stalled(change):
                break
            damp = flip(change, g, damped=damp)
        if log:
            log(f"discount 1 - {d:g} on the {subset.size:,} flagged states: {i + 1} sweeps, last change {change:.2g}")
    return used


def discounted_descent(K: Any, values: np.ndarray, threads: int, show_progress: bool | None = False,
                       log: Any = None) -> int:
    """Solve, in place, the discounted games 1 - discount = 1e-2, 1e-3, ..., 1e-6 in turn, each
    warm-started from the last; returns the sweeps used.

    With a discount below 1 (the game stops, counted 0, with probability 1 - discount after each
    action) the Bellman equations have one solution, so sweeps cannot settle on a false one, and
    a cycle that only endless play sustains decays at the rate 1 - discount. The strong
    discounts wash such cycles out quickly; the weak ones bring the values back to within about
    1e-5 of the undiscounted game. Each stage runs until a sweep changes no value by more than
    1e-8, or float32 rounding stops the progress (30 sweeps without a new smallest change). A
    sweep is damped where the largest change falls at the discount's own rate (``_Flip``), which
    settles a value flipping sign; a slow mode that falls about as slowly is left to the sweeps
    (on the test board the stage at 1 - 1e-3 takes some 2,780 sweeps on one, at 0.9987 a sweep).
    """
    used = 0
    for d in DISCOUNTS:
        g = float(np.float32(1.0 - d))
        stalled = _Stall()
        flip, damp = _Flip(), False
        for i in range(_STAGE_MAX_SWEEPS):
            change = _sweep(K, values, threads, f"discount 1 - {d:g}, sweep {i + 1}", show_progress, None, g,
                            damp=damp)
            used += 1
            if change < _STAGE_TOLERANCE or stalled(change):
                break
            damp = flip(change, g, damped=damp)
        if log:
            log(f"discount 1 - {d:g}: {i + 1} sweeps, last change {change:.2g}")
    return used


def check_eps(tolerance: float) -> float:
    """The slack of the endless check for a table solved to ``tolerance``: values a few sweeps
    from their limit may still differ from it by several times the last change."""
    return max(CHECK_EPS_FACTOR * tolerance, 1e-6)


def extra_bytes(n: int, nrolls: int, method: str, policy_on_disk: bool = False) -> int:
    """Memory a method needs beyond the values and a stored graph: the walk's and the policy
    method's greedy policy (not when the walk maps it from disk), the walk's hot-set marks and skip
    bytes, the policy method's Krylov vectors."""
    if method == "sweeps":
        return 0
    need = 0 if policy_on_disk else n * nrolls * _POLICY_BYTES_PER_ROLL
    if method == "walk":
        need += 2 * n if WALK_HOT_SWEEPS else 0  # the hot rounds' mark and hot set (see _hot_round)
        # lead and stamp bytes, and a copy of the values (mapped from a file beside a policy on disk)
        need += (SKIP_BYTES + (0 if policy_on_disk else 4)) * n if WALK_SKIP else 0
    else:
        need += n * _KRYLOV_BYTES
    return need


def choose_method(method: str, n: int, nrolls: int, policy_here: bool = True, place: str = "auto") -> str:
    """``method``, checked; ``walk`` and ``policy`` only when their arrays fit in half the machine's
    memory, the walk's policy counted only where ``place`` keeps it in memory (``policy_here``
    False: a distributed engine keeps the policy in its workers)."""
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    if place not in POLICY_PLACES:
        raise InputError(f"unknown policy place {place!r}; expected one of {', '.join(POLICY_PLACES)}")
    memory = memory_bytes()
    if policy_here and method in ("policy", "walk"):
        need = extra_bytes(n, nrolls, method, policy_on_disk=method == "walk" and place != "memory")
        if need > memory / 2:
            other = "--walk-policy disk or " if method == "walk" and place == "memory" else ""
            raise InputError(f"the {method} method needs about {need / 2**30:.1f} GiB, more than half of this "
                             f"machine's memory; use {other}--method sweeps")
    return method


def place_policy(place: str, n: int, nrolls: int) -> str:
    """Where the walk keeps its policy (an int32 a state and roll): ``memory`` when it fits in half
    the machine's memory beside the rest of the walk's arrays (or is asked for), else ``disk``: a
    file beside the checkpoint (POLICY_FILE), mapped, so the system pages it like a stored graph.
    The walk reads it in rank order, a sweep at a time (``check_disk`` makes sure it fits)."""
    if place == "memory" or (place == "auto" and extra_bytes(n, nrolls, "walk") <= memory_bytes() / 2):
        return "memory"
    return "disk"


def check_disk(root: Path, value_bytes: int, policy_bytes: int = 0) -> None:
    """Refuse, before anything is written, a solve whose files do not fit on the disk under
    ``root``: its checkpoint twice (a new one is written beside the last before it replaces it, and
    the finished table beside the last checkpoint) and, where the walk maps it, its policy. Files
    a stopped run left there count as free; a disk whose free space cannot be read is not checked.
    (A stored graph is not counted: where the disk cannot take it, it is kept in memory.)"""
    probe = existing_ancestor(Path(root))
    try:
        free = shutil.disk_usage(probe).free
    except OSError:
        return
    for name in (CHECKPOINT, POLICY_FILE, COPY_FILE):
        kept = Path(root) / name
        if kept.is_file():  # rewritten in place by the run that takes it up
            free += kept.stat().st_size
    need = 2 * value_bytes + policy_bytes
    if need <= free:
        return
    parts = [f"its checkpoint, {value_bytes / 2**30:.2f} GiB, twice while it is replaced"]
    if policy_bytes:
        parts.append(f"the walk's policy, {policy_bytes / 2**30:.2f} GiB, which does not fit in half of this "
                     f"machine's memory")
    hint = "free some disk space or give another --out" + (", or use --method sweeps" if policy_bytes else "")
    raise InputError(f"the solve needs about {need / 2**30:.2f} GiB on the disk at {probe} ({'; '.join(parts)}) "
                     f"and {free / 2**30:.2f} GiB are free; {hint}")


def evaluate_policy(K: Any, policy: np.ndarray, values: np.ndarray, tol: float, threads: int) -> Any:
    """Replace ``values`` (in place) by the fixed policy's values, solved to residual ``tol``.

    The policy's equations are V = c + A V (c: the immediate wins, A: +-p for each roll's
    chosen outcome); BiCGSTAB solves (I - A) V = c from the current values. The result is kept
    only when it lowered the residual; it is clipped to [-1, 1], where every value lies.
    """
    n = values.shape[0]
    c = np.empty(n)
    K.policy_apply(policy, np.zeros(n), c, constants=True, threads=threads)

    def matvec(x: np.ndarray, out: np.ndarray) -> None:
        K.policy_apply(policy, x, out, minus=True, threads=threads)

    res = bicgstab(matvec, c, values, tol=tol, maxiter=300, threads=threads)
    if np.isfinite(res.residual) and res.residual < res.initial:
        np.clip(res.x, -1.0, 1.0, out=res.x)
        values[:] = res.x
        # rounding to float32 leaves changes of an ulp; a few cheap float32 sweeps of the same
        # equations settle them, so the next full sweep measures the policy, not the rounding
        for _ in range(_SETTLE_SWEEPS):
            if K.evaluate(policy, values, threads=threads) == 0.0:
                break
    return res


@dataclass(frozen=True)
class EndlessCheck:
    """Result of ``endless_check``: the states whose value endless play contradicts."""

    eps: float
    passes: int
    flagged: int
    examples: tuple[int, ...]  # ranks of up to ten flagged states, largest |value| first
    states: np.ndarray = field(repr=False, compare=False)  # ranks of every flagged state

    @property
    def passed(self) -> bool:
        return self.flagged == 0

    def summary(self) -> dict[str, Any]:
        return {"eps": self.eps, "passes": self.passes, "flagged": self.flagged}


def endless_check(K: Any, values: np.ndarray, eps: float, threads: int = 1,
                  show_progress: bool | None = False) -> EndlessCheck:
    """Check that ``values`` can be the game's value where endless play is possible.

    A small Bellman residual is not enough: with endless play counted 0, the equations have
    other solutions, in which a side claims an advantage that it can only keep by letting the
    game go on for ever. The check marks, pass after pass, the states from which the game can
    be made to end (see ``_engine.endless_pass``): the side ahead may use only its best
    actions (within ``eps``), the side behind any action. The value of a state that stays
    unmarked while a side is ahead by more than ``eps`` is wrong: that side's best play lets the
    game run for ever, which is worth 0, not the advantage it claims. Values that pass, and
    solve the Bellman equations, are the game's values (docs/design/walk.md explains why).
    """
    n = values.shape[0]
    good = np.zeros(n, dtype=np.uint8)
    passes = 0
    with progress(n, "endless check", enabled=show_progress) as bar:
        added = 1
        while added:
            added = K.endless_pass(values, good, eps, threads=threads, first=passes == 0)
            passes += 1
            bar.update(added)
            bar.note(f"endless check, pass {passes}")
    bad = np.flatnonzero((good == 0) & (np.abs(values) > eps))
    worst = bad[np.argsort(-np.abs(values[bad]), kind="stable")[:10]]
    return EndlessCheck(eps, passes, int(bad.size), tuple(int(r) for r in worst), bad)


def _sweep(K: Any, values: np.ndarray, threads: int, label: str, show: bool | None,
           policy: np.ndarray | None = None, discount: float = 1.0, start: int = 0, stop: int | None = None,
           damp: bool = False, extra: dict[str, Any] | None = None) -> float:
    """One sweep over ranks start..stop-1 (default: every state), in chunks for the progress bar.

    ``damp``: each chunk's new values are averaged with the ones it started from (x + T x) / 2,
    which has the same fixed points and kills a value that flips sign every sweep (see _Flip); the
    largest change returned is the sweep's own, before averaging. An engine whose values can run
    ahead of the host's (a GPU's policy sweeps) is synced first; the next call to it must be a full
    sweep, which takes the host's values. ``extra``: more arguments for the engine's sweep
    (``Skip.kwargs``; a skipping sweep is told the largest change of its earlier chunks, ``moved``)."""
    end = values.shape[0] if stop is None else stop
    extra = dict(extra or {})
    skipping = "bounds" in extra
    worst = 0.0
    chunk = getattr(K, "chunk", _CHUNK)  # a distributed engine sweeps whole: a call is a round trip
    sync = getattr(K, "sync", None) if damp else None
    if sync is not None:
        sync(values)
    label += " (damped)" if damp else ""
    with progress(end - start, label, enabled=show) as bar:
        for a in range(start, end, chunk):
            b = min(end, a + chunk)
            before = values[a:b].copy() if damp else None
            if skipping:
                extra["moved"] = worst
            worst = max(worst, K.sweep(values, threads=threads, start=a, stop=b, policy=policy,
                                       discount=discount, **extra))
            if before is not None:
                _halfway(values, slice(a, b), before)
            bar.update(b - a)
            bar.note(f"{label} (change so far {worst:.2g})")
    return worst


def _halfway(values: np.ndarray, where: Any, before: np.ndarray) -> None:
    """A damped sweep's end (see _Flip): the values at ``where`` (a slice or ranks), which the
    sweep just wrote, averaged with ``before``, the ones it started from."""
    values[where] = (values[where] + before) * values.dtype.type(0.5)


def stopped_message(root: Path) -> str:
    """What a stopped solve leaves in ``root`` and how to go on: the same command resumes from the
    checkpoint (or, where none was written yet, starts over); deleting the folder frees the disk."""
    kept = [p for p in root.iterdir() if p.name != POLICY_FILE] if root.is_dir() else []
    size = sum(p.stat().st_size for p in kept if p.is_file()) + sum(
        f.stat().st_size for p in kept if p.is_dir() for f in p.rglob("*") if f.is_file())
    try:
        info = json.loads((root / CHECKPOINT_INFO).read_text())
        at = f"its checkpoint after sweep {int(info.get('sweeps', 0))}"
    except (OSError, ValueError, TypeError, AttributeError):
        at = None
    if at is None:
        kept_here = f"{_size(size)} in {root}, " if size else ""
        return f"nothing to resume yet ({kept_here}no checkpoint written); the same command starts over"
    return (f"{_size(size)} kept in {root}; run the same command again to resume from {at}, or delete "
            f"{root} to start over and free the disk")


def _size(nbytes: int) -> str:
    return f"{nbytes / 2**30:.2f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.1f} MiB"


def _checkpoint(root: Path, values: np.ndarray, info: dict[str, Any]) -> None:
    """Write the values and the run's state under temporary names, then rename them into place;
    an OS error (a full disk) removes the temporaries and ends the run with one line."""
    info = {"format": CHECKPOINT_FORMAT, **info}
    tmp = root / (CHECKPOINT + ".tmp")
    tmp_info = root / (CHECKPOINT_INFO + ".tmp")
    try:
        with open(tmp, "wb") as f:
            np.save(f, values, allow_pickle=False)
        tmp_info.write_text(json.dumps(info))
        os.replace(tmp, root / CHECKPOINT)
        os.replace(tmp_info, root / CHECKPOINT_INFO)
    except OSError as exc:
        for t in (tmp, tmp_info):
            try:
                t.unlink()
            except OSError:
                pass
        raise TableWriteError(f"cannot write the checkpoint in {root}: {exc.strerror or exc}") from None


_FIRST_WALK_DISCOUNTS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6)  # the walk's stages before checkpoints named them


def _walk_stage(info: dict[str, Any]) -> int:
    """A walk checkpoint's stage in the current schedule (WALK_DISCOUNTS): where the schedule it was
    written under differs, the first of the current stages that discounts no more than its stage did,
    so a resumed walk never goes back to a stronger discount."""
    stage = int(info.get("stage", 0))
    then = tuple(float(d) for d in info.get("discounts", _FIRST_WALK_DISCOUNTS))
    if then == tuple(WALK_DISCOUNTS):
        return stage
    d = then[stage] if stage < len(then) else 0.0
    return next((i for i, e in enumerate(WALK_DISCOUNTS) if e <= d), len(WALK_DISCOUNTS))


def _resume(root: Path, header: dict[str, Any], n: int, method: str,
            log: Callable[[str], None] | None = None, dtype: str = "float32",
            tiered: bool = False) -> tuple[np.ndarray, int, int, int, int, int, int, int]:
    """(values, sweeps, sweeps at the start, products, walk stage, policy sweeps, tiers done, states
    swept in the walk's hot sets) from
    a checkpoint of the same game; a tiered run resumes only from a tiered run's checkpoint, at the
    range after the last it finished; a walk resumes in its stage only from a walk's checkpoint (else from the
    start of the walk, with the checkpoint's values). A checkpoint that cannot be read, or belongs
    to other options, is said so in the log and the run starts from sweep 0."""
    info_file, values_file = root / CHECKPOINT_INFO, root / CHECKPOINT
    if info_file.exists() or values_file.exists():
        try:
            info = json.loads(info_file.read_text())
            values = np.load(values_file, allow_pickle=False)
            if info.get("options") != header:
                why = "it belongs to other options"
            elif values.shape != (n,) or values.dtype != np.dtype(dtype):
                why = f"{values_file.name} holds {values.dtype}{list(values.shape)}, not {dtype}[{n}]"
            elif tiered != ("tier" in info):
                why = "it comes from a run " + ("without" if tiered else "with") + " tiers"
            else:
                sweeps = int(info["sweeps"])
                same = info.get("method", "sweeps") == method
                stage = _walk_stage(info) if same else 0
                return (np.ascontiguousarray(values), sweeps, sweeps, int(info.get("products", 0)), stage,
                        int(info.get("policy_sweeps", 0)), int(info.get("tier", 0)), int(info.get("hot_states", 0)))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            why = f"it cannot be read ({type(exc).__name__}: {exc})"
        if log:
            log(f"warning: ignoring the checkpoint in {root}: {why}; starting from sweep 0")
    return np.zeros(n, dtype=np.dtype(dtype)), 0, 0, 0, 0, 0, 0, 0
