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
solve ends with the endless check (``endless_check``), and values that fail it are repaired
(``local_repair`` on the flagged states while they are few; then, over every state, the walk
again with every stage to tolerance / 10, or for plain sweeps ``discounted_descent``) before the
next check. Runs checkpoint after every sweep and resume.
"""
from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, cast

import numpy as np

from gamesolver.solver.stochastic._engine import StochasticGame
from gamesolver.solver.errors import InputError
from gamesolver.solver.stochastic.outcomes import (
    GRAPH_DIR, Regenerated, StoredGraph, build_graph, build_mapped_graph, estimate_bytes,
    load_graph, want_graph,
)
from gamesolver.solver.progress import progress
from gamesolver.solver.tables.lock import folder_lock
from gamesolver.solver.tables.table import prepare_table_dir
from gamesolver.solver.stochastic import checkpoint, planning, schedule, walk
from gamesolver.solver.stochastic.engine import Engine, Log, SubsetSweeps

MIN_TOLERANCE_FLOAT64 = 1e-14  # the same for float64 values, with room for summing rounding
_SMALL_TIER = 1 << 16  # tiers with fewer states are swept on one thread
CHECK_EPS_FACTOR = 10
# discounted repairs before the solve gives up and stores what it has, flagged: up to LOCAL_REPAIRS
# local ones, then one of every state (the walk has one more: the walk again, then the descent)
LOCAL_REPAIRS = 2
_MAX_REPAIRS = LOCAL_REPAIRS + 1
# a walk's repair of every state walks the discount up again, every stage to tolerance / 10
# (``schedule.stage_end``), instead of the plain sweeps of ``discounted_descent``: on the 24 role
# orders of the test board the 8 that needed it took 57-90 full sweeps instead of 651-888
# (docs/design/endless.md, "Repairs"); should it fail the check too, the descent follows (a board
# where the check flags a few states whatever the repair: there the descent's values are those two
# solves agree on). False: the descent alone, as the sweeps method repairs
WALK_REWALK = True
# ... from this stage of WALK_DISCOUNTS: on those boards from the second (1e-4) every one passed too,
# in 0.92x the full sweeps over the 24; from the third (1e-6) 3 still failed the check after it. With
# the local repairs left out, the swapped test board's walk again from the second stage failed the
# check every time and the descent followed (docs/design/endless.md, "Repairs"): the first stays
WALK_REWALK_FROM = 0
LOCAL_REPAIR_SHARE = 100  # a repair of the flagged states alone while they are at most 1/this of all
# After a local repair, every round of the walk's undiscounted stage ends with a local repair of every
# state the solve's checks have flagged so far. The undiscounted backup is a ratchet on a cycle kept
# up only by endless play: where its exit's value falls below the cycle's (the slow movement of the
# rest of the values does that), the best action is to stay in the cycle, whose value then stays
# where it was, and the next check flags it again. At seven pieces 2,230 of the 2,400 states the
# fourth check flagged had been flagged by the second (docs/design/endless.md, "Repairs"). False:
# the repair after each check only
HOLD_REPAIRED = True
_STAGE_TOLERANCE = 1e-8
_STAGE_MAX_SWEEPS = 5000


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


@checkpoint.resumable
def solve_values(
    game: StochasticGame,
    root: Path,
    header: dict[str, Any],
    *,
    tolerance: float = schedule.DEFAULT_TOLERANCE,
    threads: int | None = None,
    max_sweeps: int = 100_000,
    method: str = "walk",
    graph: str = "auto",
    show_progress: bool | None = None,
    log: Log | None = None,
    dtype: str = "float32",
    tiers: list[tuple[int, int]] | None = None,
    engine: Engine | None = None,
    policy_place: str = "auto",
    local_repairs: int = LOCAL_REPAIRS,
    hold: contextlib.ExitStack | None = None,
) -> Solved:
    """Solve ``game`` in the folder ``root`` (checkpoints go there; a stopped run with the same
    ``header`` resumes); returns the values and the run's figures. Every choice is checked, and
    ``root`` too (``prepare_table_dir``), before anything is written.

    ``method``: ``walk`` (the default: modified policy iteration while a discount walks up to
    1, see ``run_walk``; 4 bytes a state and roll more) or ``sweeps`` (plain value iteration from
    zero). Either method's values end checked against endless play and repaired when they fail.

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

    ``local_repairs``: how many times the endless check's flagged states are repaired alone (while
    they are at most 1/LOCAL_REPAIR_SHARE of all) before a repair of every state. More suits a
    solve whose repair of every state is dear and whose checks flag fewer states each time (seven
    pieces: 9,010, 7,178, then 2,972 after two; docs/design/endless.md, "Repairs").

    The run holds ``root``'s lock (``folder_lock``): a second solve started on the same folder
    while this one runs is refused with a FolderBusyError. ``hold``: a stack that takes the lock
    over when the solve returns, for a caller that goes on writing in ``root`` (the table's writer).
    """
    if dtype not in schedule.DTYPES:
        raise InputError(f"unknown value type {dtype!r}; expected one of {', '.join(schedule.DTYPES)}")
    least = schedule.MIN_TOLERANCE if dtype == "float32" else MIN_TOLERANCE_FLOAT64
    if not least <= tolerance < 1:
        raise InputError(f"tolerance must be at least {least:g} (values are {dtype}: below that a "
                         f"sweep can flip values by an ulp for ever) and below 1; got {tolerance:g}")
    n = game.state_count
    nrolls = game.roll_count
    method = planning.choose_method(method, n, nrolls, policy_here=engine is None, place=policy_place)
    on_disk = engine is None and method == "walk" and planning.place_policy(policy_place, n, nrolls) == "disk"
    # a policy on disk has the skip's copy of the values beside it, and its checkpoints keep the skip's two bytes a state
    skipping_on_disk = on_disk and walk.WALK_SKIP
    planning.check_disk(root, n * np.dtype(dtype).itemsize,
                        n * (nrolls * planning.POLICY_BYTES_PER_ROLL + (np.dtype(dtype).itemsize if walk.WALK_SKIP else 0))
                        if on_disk else 0, skip_bytes=2 * n if skipping_on_disk else 0)
    if engine is not None and tiers is not None:
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
                               other_bytes=planning.extra_bytes(n, nrolls, method, policy_on_disk=on_disk))
    use_graph = use_graph and engine is None
    threads = threads or planning.default_threads()
    prepare_table_dir(root)  # after the choices: a run refused leaves nothing behind
    if hold is not None:
        hold.enter_context(folder_lock(root))
    with folder_lock(root):  # one solve a folder: a second one started on it is refused
        if log:
            line = planning.estimate(game, method, use_graph, threads, dtype=dtype, tiers=tiers, policy_on_disk=on_disk,
                            skipping=engine is None and tiers is None)
            if engine is not None:  # the sweep was timed on this process's threads, not where it will run
                line += f" (timed on this machine's CPU; the {getattr(engine, 'name', 'given')} engine sweeps elsewhere)"
            log(line)
        resumed = checkpoint.resume(root, header, n, method, log, dtype, tiers is not None)
        values, sweeps, stage, cheap, tier, hot, earlier, skip_record = resumed[:8]
        history = resumed.rounds
        started = sweeps
        policy = None  # mapped inside the try below when on disk, so a stop while it is made still cleans up
        if not on_disk:
            policy = np.empty((n if engine is None else 0, nrolls), dtype=np.int32) if method == "walk" else None
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
                checkpoint.write_checkpoint(root, values, {"sweeps": 0, "policy_sweeps": 0, "stage": 0,
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
            log(f"resuming from the checkpoint after sweep {sweeps}"
                + (where_in_walk(stage, tolerance, resumed.early) if method == "walk" else ""))
        repairs, repaired = resumed.repairs, 0  # (a resumed solve counts on from its checkpoint's repairs)
        # the states the checks flagged and a local repair mended, which the walk's rounds keep repaired
        held = checkpoint.read_held(root, n) if repairs and HOLD_REPAIRED else np.zeros(0, dtype=np.int64)
        held_backups = [0]
        if held.size and log:
            log(f"every undiscounted round ends with a repair of the {held.size:,} states earlier checks flagged "
                f"(kept in {root / checkpoint.HELD_FILE})")

        def hold_repaired() -> None:
            held_backups[0] += local_repair(cast(SubsetSweeps, engine), values, held, threads, settle=True)
        walked = resumed.walked if method == "walk" else None  # the walk had ended: its endless check next
        rewalk = not resumed.early  # in a repair's walk (a stopped one resumes in it)
        # a walk's repairs of every state: the walk again, then (should that fail the check too) the descent
        can_rewalk = WALK_REWALK and method == "walk"
        most = local_repairs + 1 + (1 if can_rewalk else 0)
        generated: dict[str, int] = {}  # what the walk's full sweeps generated, where they skip
        rounds: list[dict[str, float]] = []  # ... and a row a full sweep
        stopped = False
        first_walk = True  # (the first walk of this run goes on from the checkpoint it read, where there was one)
        try:
            if on_disk:  # file-backed: under memory pressure the system writes its pages out instead of failing
                # (a checkpoint that keeps the skip's record keeps the rows its skipped states are backed up from)
                rows = checkpoint.kept_policy(root, n, nrolls) if skip_record is not None else None
                rows_kept = rows is not None
                if rows is not None:
                    policy = rows
                else:
                    # a record not taken up (of other values, or without its rows) is dropped before the new file is made
                    if checkpoint.keeps_skip(root):
                        checkpoint.drop_skip_record(root)
                    skip_record = None
                    policy = np.lib.format.open_memmap(root / checkpoint.POLICY_FILE, mode="w+", dtype=np.int32,
                                                       shape=(n, nrolls))
                if log:
                    log(f"the walk's policy ({policy.nbytes / 2**30:,.2f} GiB) is mapped from {root / checkpoint.POLICY_FILE}, "
                        f"not held in memory" + (", with the stopped run's rows" if rows_kept else ""))
            elif checkpoint.keeps_skip(root):  # the policy in memory this time: the record is of no use
                checkpoint.drop_skip_record(root)
                (root / checkpoint.POLICY_FILE).unlink(missing_ok=True)
                skip_record = None
            while True:
                if tiers is not None:  # after a repair, every range is swept again from the repaired values
                    residual, sweeps, spent, check, tier_built, tier_bytes = _tiered(
                        game, use_graph, root, values, header, tolerance, threads, max_sweeps, tiers,
                        0 if repairs else tier, sweeps, spent, eps, show_progress, log, earlier=earlier + built)
                    built += tier_built
                    graph_bytes = max(graph_bytes, tier_bytes)
                elif walked is not None and policy is not None:
                    residual, walked = walked, None
                    skip_record, first_walk = None, False  # (a walk after a repair starts from other values)
                    if log:
                        log(f"the walk had ended there (residual {residual:.3g}): going on with its endless check")
                elif method == "walk" and policy is not None:
                    walked_now: dict[str, Any] = {}
                    residual, sweeps, cheap, hot, spent = walk.run_walk(
                        engine, root, values, header, tolerance, threads, max_sweeps, policy, sweeps, cheap, hot, stage,
                        spent, show_progress, log, walked_now, earlier=earlier + built, kept=skip_record, history=history,
                        early=not rewalk, repairs=repairs,
                        after_round=hold_repaired if held.size and getattr(engine, "subset_sweeps", False) else None,
                        resumed=bool(sweeps) and first_walk)
                    skip_record, first_walk = None, False  # (a walk after a repair starts from other values)
                    history = walked_now.get("history", history)
                    for key in ("generated_states", "generated_codes"):
                        generated[key] = generated.get(key, 0) + walked_now.get(key, 0)
                    for key in ("greedy_states", "greedy_codes"):  # (the hot sets' greedy sweeps, where any)
                        if key in walked_now:
                            generated[key] = generated.get(key, 0) + walked_now[key]
                    rounds += walked_now.get("rounds", [])
                else:
                    residual, sweeps, spent = _iterate(
                        engine, root, values, header, tolerance, threads, max_sweeps, sweeps, spent,
                        show_progress, log, earlier=earlier + built)
                if tiers is None:
                    t0 = time.perf_counter()
                    check = endless_check(engine, values, eps, threads, show_progress, keep=root, log=log)
                    spent += time.perf_counter() - t0
                    if log:
                        log(f"endless check at eps {eps:g}: {check.passes} passes, {check.flagged:,} states flagged "
                            f"({time.perf_counter() - t0:.1f} s)")
                if check.passed or repairs >= most:
                    break
                # A false solution: somewhere a side claims an advantage that only endless play keeps.
                # Discounting makes the solution unique; walk the discount up to almost 1 (on the flagged
                # states alone while they are few, then on every state: for the walk the walk again, and
                # should that fail too the plain sweeps' descent), then sweep every state to the
                # tolerance and check again.
                repairs += 1
                stages = ", ".join(f"{d:g}" for d in schedule.DISCOUNTS)
                t0 = time.perf_counter()
                mend = np.union1d(held, check.states).astype(np.int64) if HOLD_REPAIRED else check.states
                if (repairs <= local_repairs and getattr(engine, "subset_sweeps", False)
                        and mend.size * LOCAL_REPAIR_SHARE <= n):
                    earlier_flagged = mend.size - check.flagged
                    if log:
                        log(f"endless check: {check.flagged:,} states claim an advantage that only endless play keeps; "
                            f"solving discounted games (1 - discount = {stages}) on those states alone"
                            + (f", and on the {earlier_flagged:,} more that earlier checks flagged" if earlier_flagged else "")
                            + ("; every undiscounted round from here ends with their repair" if HOLD_REPAIRED else ""))
                    if HOLD_REPAIRED:
                        held = mend
                        checkpoint.write_held(root, held)
                    repaired += local_repair(cast(SubsetSweeps, engine), values, mend, threads, log)
                    stage = len(schedule.WALK_DISCOUNTS)  # the walk goes on in its undiscounted stage, its policy kept
                elif can_rewalk and policy is not None and not rewalk:
                    # the walk again from its first stage, each discounted game solved to tolerance / 10
                    # this time (the early aims leave stages short of their value, which a false
                    # solution may outlive): modified policy iteration where the descent has only sweeps
                    if log:
                        log(f"endless check: {check.flagged:,} states claim an advantage that only endless play keeps; "
                            f"walking the discount up again from here (1 - discount = "
                            f"{', '.join(f'{d:g}' for d in schedule.WALK_DISCOUNTS[WALK_REWALK_FROM:])}), every stage to "
                            f"{tolerance / schedule.WALK_STAGE_FACTOR:g}")
                    stage, rewalk = WALK_REWALK_FROM, True
                else:
                    policy = None
                    if log:
                        log(f"endless check: {check.flagged:,} states claim an advantage that only endless play keeps; "
                            f"solving discounted games (1 - discount = {stages}) from here")
                    sweeps += discounted_descent(engine, values, threads, show_progress, log)
                spent += time.perf_counter() - t0
        except KeyboardInterrupt:
            stopped = True
            raise
        finally:
            # a finished run leaves no mapped policy behind, nor does a stopped one unless its
            # checkpoint keeps the skip's record, whose skipped states a resumed run backs up from its rows
            had_policy, policy = policy is not None, None
            if on_disk and not (stopped and checkpoint.keeps_skip(root)):
                (root / checkpoint.POLICY_FILE).unlink(missing_ok=True)
        if not check.passed and log:
            log(f"warning: {check.flagged:,} states still fail the endless check")
        meta = {
            "tolerance": tolerance,
            "residual": float(residual),
            "sweeps": sweeps,
            "method": method,
            "graph": (("stored per tier" if use_graph else "regenerated") if tiers is not None
                      else getattr(engine, "graph_kind", "stored" if engine.stored else "regenerated")),
            "policy_sweeps": cheap,
            "hot_set_states": hot,  # states swept by the walk's hot-set sweeps, all of them together
            "policy_sweep_equivalents": round(cheap + hot / max(1, n), 1),
            "value": "P(win) - P(loss) for the side to move, before rolling; endless play counts 0",
            "solve_seconds_this_run": round(spent + built, 3),
            # ... and over all its runs: a resumed solve adds the seconds its checkpoint recorded
            "solve_seconds": round(earlier + spent + built, 3),
            "graph_build_seconds": round(built, 3),
            "resumed_at_sweep": started,
            "endless_check": check.summary(),
            "endless_repairs": repairs,
            # states backed up by local repairs, all of them together (the rounds' repairs of the held states too)
            "repair_backups": repaired + held_backups[0],
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


def _iterate(K: Engine, root: Path, values: np.ndarray, header: dict[str, Any], tolerance: float, threads: int,
             max_sweeps: int, sweeps: int, spent: float,
             show_progress: bool | None, log: Log | None, earlier: float = 0.0) -> tuple[float, int, float]:
    """Plain sweeps until change and residual are below ``tolerance``; checkpoints after every
    sweep, with the solve's seconds (``earlier``: its seconds before this run's sweeps).
    Returns (residual, sweeps, seconds)."""
    flip, damp = walk.Flip(), False
    while sweeps < max_sweeps:
        t0 = time.perf_counter()
        last = walk.progress_sweep(K, values, threads, f"sweep {sweeps + 1}", show_progress, None, damp=damp)
        spent += time.perf_counter() - t0
        sweeps += 1
        info = {"sweeps": sweeps, "change": last, "options": header, "tolerance": tolerance,
                "method": "sweeps", "seconds": round(earlier + spent, 3)}
        checkpoint.write_checkpoint(root, values, info)
        if log:
            log(f"sweep {sweeps}{' damped' if damp else ''}: largest change {last:.3g} "
                f"({checkpoint.so_far(spent, earlier)})")
        if last < tolerance:
            residual = K.sweep(values, threads=threads, write=False)
            if residual < tolerance:
                return residual, sweeps, spent
        damp = flip(last, damped=damp)
    raise RuntimeError(f"no convergence to {tolerance} within {max_sweeps} sweeps")


def where_in_walk(stage: int, tolerance: float, early: bool = True) -> str:
    """Where a resumed walk goes on: its stage, that stage's discount and the change it ends at
    (``early`` False: in a repair's walk, ``schedule.stage_end``)."""
    stages = schedule.WALK_DISCOUNTS + (0.0,)
    if stage >= len(stages):
        return ""
    what = schedule.stage_words(stages[stage], schedule.stage_end(stage, tolerance, early))
    repair = "" if early else " of the repair's walk"
    return f", in stage {stage + 1} of {len(stages)}{repair} ({what})"


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


def _tiered(game: StochasticGame, store: bool, root: Path, values: np.ndarray, header: dict[str, Any], tolerance: float,
            threads: int, max_sweeps: int, tiers: list[tuple[int, int]], tier: int, sweeps: int, spent: float,
            eps: float, show_progress: bool | None, log: Log | None,
            earlier: float = 0.0) -> tuple[float, int, float, EndlessCheck, float, int]:
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
    info_file = root / checkpoint.CHECKPOINT_INFO
    if tier and info_file.exists():
        recorded = json.loads(info_file.read_text())
        passes, flagged = int(recorded.get("check_passes", 0)), int(recorded.get("check_flagged", 0))
    for i in range(tier, len(tiers)):
        start, stop = tiers[i]
        # waking threads costs more than a small tier's sweep, on a busy machine many times more
        threads_here = threads if stop - start >= _SMALL_TIER else 1
        used = 0
        t0 = time.perf_counter()
        K: Engine = range_graph(game, start, stop, threads_here) if store and start < stop else Regenerated(game)
        built += time.perf_counter() - t0
        largest = max(largest, K.nbytes)
        t0 = time.perf_counter()
        last = 0.0
        while start < stop:
            if sweeps >= max_sweeps:
                raise RuntimeError(f"no convergence to {tolerance} within {max_sweeps} sweeps")
            last = walk.progress_sweep(K, values, threads_here, f"tier {i + 1}/{len(tiers)}, sweep {used + 1}", show_progress,
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
        checkpoint.write_checkpoint(root, values, {"sweeps": sweeps, "tier": i + 1, "tiers": len(tiers),
                                   "change": last, "options": header, "tolerance": tolerance, "method": "sweeps",
                                   "check_passes": passes, "check_flagged": flagged,
                                   "seconds": round(earlier + spent + built, 3)})
        if log:
            verdict = "passed" if not here.size else f"flagged {here.size:,} states"
            log(f"tier {i + 1}/{len(tiers)} ({stop - start:,} states): {used} sweeps, endless check {verdict} "
                f"({checkpoint.so_far(spent + built, earlier)})")
    states = np.concatenate(bad) if bad else np.zeros(0, np.int64)
    worst = states[np.argsort(-np.abs(values[states]), kind="stable")[:10]]
    return (residual, sweeps, spent, EndlessCheck(eps, passes, flagged, tuple(int(r) for r in worst), states),
            built, largest)


def range_graph(game: StochasticGame, start: int, stop: int, threads: int) -> StoredGraph:
    """The stored outcome graph of the ranks start..stop-1 only (the other states hold no codes):
    one tier's outcomes, ranked once, for that tier's sweeps."""
    return build_graph(game, threads, start=start, stop=stop)


def local_repair(K: SubsetSweeps, values: np.ndarray, states: np.ndarray, threads: int = 1, log: Log | None = None,
                 settle: bool = False) -> int:
    """``discounted_descent`` on the given states alone (those the endless check flagged), every
    other value held; returns the backups it made (states times sweeps).

    A false solution locks an advantage into a cycle of positions that pass it back and forth
    (on five pieces of the fort rules: two sides recapturing on the entry, each claiming 0.002).
    The discount makes such a cycle decay; on the flagged states alone that costs almost nothing
    where the full descent costs thousands of sweeps of every state. Sweeps of every state
    follow and the check runs again, which is what makes the result trustworthy: a repair that
    was too local fails it, and the solve tries again, finally over every state (the walk again,
    or for plain sweeps the full descent).

    ``settle``: then sweep the states undiscounted until they settle, which takes the last
    discount's bias out of values that have a way out of their cycle (a cycle's value rises to its
    exit's from below, never above it: no ratchet) and leaves a cycle without one where the
    discounts took it. The rounds' repairs of the held states settle, so that a full sweep after
    them finds nothing to change where nothing else moved (``HOLD_REPAIRED``)."""
    subset = np.ascontiguousarray(np.unique(states), dtype=np.int64)
    used = 0
    for d in schedule.DISCOUNTS:
        g = float(np.float32(1.0 - d))
        stalled = walk.Stall()
        flip, damp = walk.Flip(), False
        for i in range(_STAGE_MAX_SWEEPS):
            before = values[subset] if damp else None
            change = K.sweep(values, threads=threads, subset=subset, discount=g)
            if before is not None:  # damped (see Flip): the subset's new values averaged with their start
                walk.halfway(values, subset, before)
            used += subset.size
            if change < _STAGE_TOLERANCE or stalled(change):
                break
            damp = flip(change, g, damped=damp)
        if log:
            log(f"discount 1 - {d:g} on the {subset.size:,} flagged states: {i + 1} sweeps, last change {change:.2g}")
    if settle:
        stalled = walk.Stall()
        for i in range(_STAGE_MAX_SWEEPS):
            change = K.sweep(values, threads=threads, subset=subset, discount=1.0)
            used += subset.size
            if change < _STAGE_TOLERANCE or stalled(change):
                break
    return used


def discounted_descent(K: Engine, values: np.ndarray, threads: int, show_progress: bool | None = False,
                       log: Log | None = None) -> int:
    """Solve, in place, the discounted games 1 - discount = 1e-2, 1e-3, ..., 1e-6 in turn, each
    warm-started from the last; returns the sweeps used.

    With a discount below 1 (the game stops, counted 0, with probability 1 - discount after each
    action) the Bellman equations have one solution, so sweeps cannot settle on a false one, and
    a cycle that only endless play sustains decays at the rate 1 - discount. The strong
    discounts wash such cycles out quickly; the weak ones bring the values back to within about
    1e-5 of the undiscounted game. Each stage runs until a sweep changes no value by more than
    1e-8, or float32 rounding stops the progress (30 sweeps without a new smallest change). A
    sweep is damped where the largest change falls at the discount's own rate (``Flip``), which
    settles a value flipping sign; a slow mode that falls about as slowly is left to the sweeps
    (on the test board the stage at 1 - 1e-3 takes some 2,780 sweeps on one, at 0.9987 a sweep).
    """
    used = 0
    for d in schedule.DISCOUNTS:
        g = float(np.float32(1.0 - d))
        stalled = walk.Stall()
        flip, damp = walk.Flip(), False
        for i in range(_STAGE_MAX_SWEEPS):
            change = walk.progress_sweep(K, values, threads, f"discount 1 - {d:g}, sweep {i + 1}", show_progress, None, g,
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


def endless_check(K: Engine, values: np.ndarray, eps: float, threads: int = 1,
                  show_progress: bool | None = False, keep: Path | None = None, log: Log | None = None) -> EndlessCheck:
    """Check that ``values`` can be the game's value where endless play is possible.

    A small Bellman residual is not enough: with endless play counted 0, the equations have
    other solutions, in which a side claims an advantage that it can only keep by letting the
    game go on for ever. The check marks, pass after pass, the states from which the game can
    be made to end (see ``_engine.endless_pass``): the side ahead may use only its best
    actions (within ``eps``), the side behind any action. The value of a state that stays
    unmarked while a side is ahead by more than ``eps`` is wrong: that side's best play lets the
    game run for ever, which is worth 0, not the advantage it claims. Values that pass, and
    solve the Bellman equations, are the game's values (docs/design/walk.md explains why).

    ``keep``: a solve's folder, where the marks are kept after the passes (``checkpoint.write_marks``,
    spaced as the walk's checkpoints are: at most CHECKPOINT_SHARE of the check's time) and from
    whose kept marks of the same values and eps the check goes on. The marks only grow and their
    end is the least set closed under a pass, so going on from any pass's marks ends at the same
    marks. The first pass of a check that goes on marks the finished and even states again, which
    they already are, and (on a device) takes the values up as every check's first pass does.
    """
    n = values.shape[0]
    good = np.zeros(n, dtype=np.uint8)
    passes = calls = 0
    crc = checkpoint.values_crc(values) if keep is not None else 0
    kept = checkpoint.read_marks(keep, n, eps, crc) if keep is not None else None
    marked = 0  # the kept marks' count (a count of 639 million bytes is worth doing once)
    if kept is not None:
        good, passes = kept
        marked = int(np.count_nonzero(good))
        if log:
            log(f"endless check: going on from the marks kept after pass {passes} ({marked:,} states marked)")
    cost, last = 0.0, time.perf_counter()
    with progress(n, "endless check", enabled=show_progress) as bar:
        bar.update(marked)
        added = 1
        while added:
            added = K.endless_pass(values, good, eps, threads=threads, first=calls == 0)
            passes += 1
            calls += 1
            bar.update(added)
            bar.note(f"endless check, pass {passes}")
            if keep is not None and added and time.perf_counter() - last >= cost / checkpoint.CHECKPOINT_SHARE:
                t0 = time.perf_counter()
                checkpoint.write_marks(keep, good, passes, eps, crc)
                last = time.perf_counter()
                cost = last - t0
    bad = np.flatnonzero((good == 0) & (np.abs(values) > eps))
    worst = bad[np.argsort(-np.abs(values[bad]), kind="stable")[:10]]
    return EndlessCheck(eps, passes, int(bad.size), tuple(int(r) for r in worst), bad)


