"""The ``walk`` method: modified policy iteration while a discount walks up to 1 (docs/design/walk.md).

A round is a full sweep that records both players' greedy policy (``full_sweep``, skipping the
states whose choice is proven unchanged: ``solver.stochastic.skip``), then cheap sweeps of that
policy, most of them over the hot set (``hot_round``). ``Stall`` ends a stage that stopped
progressing and ``Flip`` damps a value that flips sign every sweep. ``progress_sweep`` is the one
sweep with a progress bar that the walk, the plain sweeps and the repairs all use.
"""
from __future__ import annotations

import math
import os
import statistics
import time
from pathlib import Path
from typing import Any, Callable, cast

import numpy as np

from gamesolver.solver.stochastic.engine import DeviceHotSets, Engine, HotSets, Log, SubsetSweeps
from gamesolver.solver.limits import duration
from gamesolver.solver.progress import progress
from gamesolver.solver.errors import InputError
from gamesolver.solver.stochastic.skip import BY_BLOCKS, ONE_BOUND, BlockSkip, Skip, blocks_id
from gamesolver.solver.stochastic import checkpoint, schedule


_CHUNK = 1 << 18  # states per progress update
WALK_POLICY_SWEEPS = 30  # cheap sweeps of the greedy policy after each full sweep (walk)
WALK_POLISH_SWEEPS = 5  # the same in the walk's last, undiscounted stage
WALK_PROGRESS = 0.5  # ... or once 30 rounds have not halved its smallest change (see Stall)
WALK_NEAR = 2.0  # ... or once WALK_NEAR_ROUNDS rounds in a row changed nothing by this times that aim
WALK_NEAR_ROUNDS = 5  # (0: never; on K = 4 the last stage's tail near the aim had taken 20-30 rounds)
# walk: sweeps of the greedy policy over the hot set a round (0: none; see hot_round); with the
# budget below, K = 4 took 79-87 full sweeps against 106-109 with 200 and 5.0, for as many policy
# sweeps (docs/design/walk.md, "Longer hot sets, and a stage's tail cut")
WALK_HOT_SWEEPS = 800
WALK_HOT_FULL = 5  # ... after this many policy sweeps of every state, the last of which picks the hot set
WALK_HOT_SHARE = 10  # ... the states that sweep changed by more than its largest change / this
WALK_HOT_BUDGET = 20.0  # ... and at most this many sweeps of every state's worth of them (a big hot set gets fewer)
WALK_HOT_MOST = 8  # ... a hot set of more than 1/this of the states is no hot set: plain policy sweeps instead
# ... then up to this many greedy sweeps of the hot set alone (its states' outcomes generated again
# and their rows recorded: value iteration where the error is, with the rest of the values held; 0:
# none), while a sweep still changes a value by the stage's floor or more, where the round is topped
# up (the regenerating CPU engine, whose sweep takes a subset and whose hot set is marked on the
# host; over a stored graph, a GPU or Ray it was not measured, and the one walk without the top-up
# that was, the test board's, took 40 rounds with them against 25 without). Improving both players'
# policies at once over the whole game lets the pair chase itself (``chasing``); value iteration
# over the few states that swing does not. Five pieces' first stage, from the checkpoint of a
# four-round cycle: 0.308, 0.144, 0.0358, 0.0143 (the stage's end) where the walk without
# them went on 0.308, 0.144, 0.253, 0.117, 0.181, 0.0796, 0.106, 0.0598 (docs/design/walk.md,
# "Greedy sweeps of the hot set")
WALK_HOT_GREEDY = 100
# ... and no more of them than this many full sweeps' worth of generation a round (a hot set of this
# share of the states gets WALK_HOT_GREEDY sweeps, a larger one fewer, none where one sweep would
# pass it). The chase they end lives on a few hundred states (five pieces), but hot sets grow when
# a stage lowers the discount: four pieces' (two threads, the skip by blocks) held 0.01-1.4% of the
# states, whose sweeps generated 0.01-0.65 full sweeps' worth a round in the first stage and 1.27
# in the second's first greedy round; seven pieces' second full round of the second stage (largest
# change 0.277) spent some 1,600-2,000 s on its 100 greedy sweeps, two full sweeps' worth or more,
# beside 200 s for its 20 policy sweeps of every state
WALK_GREEDY_BUDGET = 1.0
# ... with their rows kept apart and copied into the policy once, after the last of them, where the
# hot set holds at most 1/this of the states (its rows then take as much of the policy's size):
# greedy sweeps that wrote into a policy mapped from its file dirtied pages all over it, sweep
# after sweep, and seven pieces' solve then waited on the disk's writeback (12% of the cores busy
# for the 2.5 minutes of a round's greedy sweeps; docs/design/walk.md, "Greedy rows kept apart")
WALK_GREEDY_ROWS_MOST = 16
# ... in rounds whose full sweep changed a value by this or more (where the pair chases itself, as
# WALK_CHASE_ABOVE). Below it the greedy sweeps only stir a float32 plateau: on the test board
# (four pieces, one thread, tolerance 3e-7, no top-up) the last discounted stage's rounds at
# changes of 1e-7 got 100 greedy sweeps each that never went below the floor, its policy sweeps
# then changed values by 1e-5, and the stage took 25 rounds against 7
WALK_GREEDY_ABOVE = 1e-2
# the walk and plain sweeps: once each of the last WALK_FLIP_ROUNDS rounds' largest changes fell at
# the rate the discount alone explains (undiscounted: not at all), within WALK_FLIP_SPREAD, the
# next sweep is averaged with the values it started from (see Flip): a value that flips sign every
# sweep (a position whose every roll passes the turn back to itself, worth 0) never settles
# otherwise (0: never)
WALK_FLIP_ROUNDS = 3
WALK_FLIP_SPREAD = 1.01
WALK_FLIP_GAIN = 0.5  # ... and where the sweep after a damped one did not halve its change, no more of them
# walk: full sweeps back up from its recorded policy row every state whose choice is proven unchanged
# (solver.stochastic.skip), on engines that can (a regenerating one); the values are the same
WALK_SKIP = True
# ... with a bound per block of states (skip.BlockSkip) where the game names blocks, instead of
# one bound for the whole game (skip.Skip)
WALK_SKIP_BLOCKS = False
# ... which the environment can set for a run ("one" or "blocks"; ``skips_by_blocks``), so that a
# long solve resumed with the same command can take the other skip up from its next start
SKIP_ENV = "SOLVER_WALK_SKIP"
# ... and a full sweep records the leads the next one skips by only where the last full sweep's
# largest change lay below this: above it next to no state's lead outlasts the bound (at a movement
# of 1e-2 a round a skip proves about a fifth of the choices unchanged, above it all but a few are
# generated again), and recording costs 1.13x a plain sweep (seven pieces, one thread). A round
# that does not record forgets every lead (Skip.forget), so the next full sweep generates every
# state, as it would have; the values are the same. The skip by blocks too: recording costs it
# 1.14-1.15x a plain backup (five and six pieces, one thread: bench_walk_skip.py --kernel), and above this its full sweeps
# generated 99.6-100% of the states at four pieces and 99.2% at seven (changes of 0.1-0.28), so
# recording there paid some 14% of the full sweep for under 1% skipped (docs/design/walk.md,
# "Rounds that move too much record no leads")
WALK_RECORD_BELOW = 1e-2
# walk, discounted stages, where every full sweep regenerates the outcomes on the CPU (the engines
# that ask for the skip: a full sweep there costs some 30 policy sweeps of every state at four
# pieces, 95 at seven; a GPU's and Ray's were not measured and get none):
# the round's policy sweeps go on, plain sweeps of every state, to this many in the round (0: no
# more than the hot round's own), while a sweep still changes a value by the stage's floor or more
# (``evaluate_policy``). Four pieces regenerating: 44 full sweeps against 55, 0.83x the full-sweep
# equivalents generated, 0.89x the time; 30 and 50 (tried over a stored graph) took as many full
# sweeps as 20 for more policy sweeps (docs/design/walk.md, "More policy sweeps where full sweeps
# are dear"). A count, not a share of the full sweep's time, so that a walk decides alike in every
# run (the skip and its resume are bit for bit).
WALK_EVAL_MOST = 20
# ... except while the greedy pair chases itself (``chasing``): where the last this many rounds'
# largest changes (the round's own among them) all lie at or above the smallest one before them in
# the stage (but the stage's first, which moves values settled under the last discount), the round
# gets no top-up (0: the top-up always). Each side's policy improved against a
# nearly exact evaluation of the other's can swing round a loop: five pieces' first stage, with the
# top-up, settled into a cycle of four rounds (largest changes 0.308, 0.143, 0.227, 0.123 and again,
# on 179 states worth about 0 under one pair and 0.34 under the next) that only the stall rule,
# 30 rounds on, would have ended; from the same checkpoint, rounds without the top-up fell 0.308,
# 0.144, 0.253, 0.116, 0.181, 0.0797 (docs/design/walk.md, "A pair that chases itself").
WALK_CHASE_ROUNDS = 4
# ... and only while those rounds' changes are all at least this (the values still moving by a
# percent a round, where no lead outlasts the bound either: WALK_RECORD_BELOW). Near a stage's end
# a change that hovers is a float32 plateau or a repair's slow tail, where the top-up still pays:
# on the swapped test board (one thread, tolerance 1e-6) the rule without this floor fired at
# changes of 0.007-0.018 and the solve needed the walk again after three repairs (78 full sweeps,
# against 44 and two local repairs without the rule, and with it)
WALK_CHASE_ABOVE = 1e-2
# the undiscounted stage's rounds, while its last full sweep changed a value by more than this times
# the tolerance (a last discounted stage that its stall rule cut short, or the rounds after an
# endless-check repair, whose first full sweep changed 0.05 at seven pieces; 0: never): the
# discounted stages' policy sweeps (the hot round and the top-up) instead of WALK_POLISH_SWEEPS,
# which only polish values already near their limit. Four pieces, regenerating, the last discounted
# stage ended at ten times the tolerance: 7 undiscounted rounds against 148, the solve 0.50x the
# time and nearer the proof (docs/design/walk.md, "The undiscounted stage far from its aim"); a walk
# whose last discounted stage reached its aim starts the undiscounted stage below the tolerance and
# polishes (``far_from_aim``)
WALK_TAIL_FULL_ABOVE = 1.0
_STALL_SWEEPS = 30
# the round log's outlook reads the fall of a stage's largest change over this many rounds (Outlook)
OUTLOOK_ROUNDS = 4
# the checkpoint keeps the last this many rounds' rows (``round_row``: the solve's history, which a
# resumed stage's outlook and ``solve --status`` read)
HISTORY_ROWS = 1000
# What the walk does after its last discounted stage, in sweeps of every state's worth of
# generation (``after_reading``): the undiscounted stage at the least, a full sweep and the residual
# sweep of every state that ends it; then the endless check, whose passes look only at the states
# not yet marked (four pieces, two threads, a table solved to 1e-5: 13 passes, 3.0 sweeps' worth;
# docs/design/endless.md)
TAIL_STAGE_SWEEPS = 2.0
TAIL_CHECK_SWEEPS = 3.0
# a round's full sweep that generated at least this share of the states prices a sweep of every state
TAIL_RATE_SHARE = 0.5
# ... and the last this many of those rounds (the machine as it is now)
TAIL_RATE_ROUNDS = 8


def run_walk(K: Engine, root: Path, values: np.ndarray, header: dict[str, Any], tolerance: float, threads: int,
          max_sweeps: int, policy: np.ndarray, sweeps: int, cheap: int, hot: int, stage: int, spent: float,
          show_progress: bool | None, log: Log | None, work: dict[str, Any] | None = None,
          earlier: float = 0.0, kept: dict[str, Any] | None = None,
          history: list[dict[str, Any]] | None = None, early: bool = True,
          repairs: int = 0, after_round: Callable[[], None] | None = None,
          resumed: bool = False) -> tuple[float, int, int, int, float]:
    """The ``walk`` method: modified policy iteration while a discount walks up to 1.

    Stage by stage, 1 - discount = WALK_DISCOUNTS (1e-2, 1e-4, 1e-6) and finally 0: each round
    is one full sweep, which also records both players' greedy policy, then up to
    WALK_POLICY_SWEEPS cheap float32 sweeps of that policy (WALK_POLISH_SWEEPS in the last stage;
    in the discounted stages, where the engine can, a few of them and many over the hot set
    instead: ``hot_round``; where full sweeps regenerate on the CPU, then up to WALK_EVAL_MOST of
    every state in all: ``evaluate_policy``). The last discounted stage ends when a full sweep changes no value by
    more than ``tolerance / 10``, the ones before it at their WALK_EARLY_AIM (3e-2, then 1e-3: the
    next stage's first sweeps move values by far more) (or 30 rounds have not halved the smallest change: float32
    rounding and near-ties; or five rounds in a row stayed below twice that aim: see ``Stall``), so
    that cycles kept up only by endless play have decayed below the check's slack. A sweep is
    damped once the largest change falls at the rate the discount alone explains (``Flip``).
    Each stage starts from the last, so the undiscounted stage starts next to the game's value, not in the basin of
    a false solution. Returns (residual, sweeps, policy sweeps, states swept in hot sets, seconds);
    checkpoints after every round (less often where writing one would take more than
    CHECKPOINT_SHARE of the time: ``Pacer``), with the stage, and when stopped, so a stopped run
    resumes in it.

    Where the engine asks for it (``skips``: the regenerating CPU engine's; a stored graph's sweep
    can skip but does not ask, ``outcomes.StoredGraph``) and WALK_SKIP is on, a full sweep backs up from its policy row every state whose best actions are proven
    unchanged since its last full backup (``solver.stochastic.skip``): the same values at a policy
    sweep's cost. ``work``, where given, receives what the full sweeps backed up from outcomes
    (``skip_figures``; "generated" there counts a state read from a stored graph too).
    ``earlier``: the solve's seconds before this run's rounds (its earlier runs', as its checkpoint
    recorded them), which the checkpoints and the round log add to this run's.

    Where the policy is mapped from its file, a round's checkpoint also keeps the skip's state
    (``keep_skip``) where the next full sweep would read it (``record_read``), and a run resumed
    from it (``kept``: the checkpoint's record, with the policy file it kept) takes it up: its
    first full sweep skips what cannot have changed instead of generating every state, with the
    same values.

    ``history``: the rounds' rows (``round_row``) the checkpoint resumed from kept; each round
    adds one, and every checkpoint keeps the last HISTORY_ROWS of them, so that a resumed stage's
    outlook reads its earlier rounds and ``solve --status`` can tell and draw how the solve went.

    ``early`` False: the walk that repairs a false solution (``iteration.WALK_REWALK``), every
    discounted stage to tolerance / 10 (``schedule.stage_end``); its checkpoints say so.
    ``repairs``: the endless-check repairs the solve has made, which its checkpoints keep so that a
    resumed solve counts on from them.

    ``resumed``: the walk goes on from the checkpoint it was read from (``sweeps``, ``stage``,
    ``history`` and the counts are that checkpoint's), so that a stop in its first round keeps the
    values it reached as a stop in a later round does (``checkpoint.Pacer.stop``).

    ``after_round``: called at the end of every round of the undiscounted stage, before its
    checkpoint, where the solve holds the states its endless checks flagged repaired
    (``iteration.local_repair``). What it changes is movement like any other between two full
    sweeps: the skip measures it from its copy of the values, so its bounds stay sound.
    """
    stages = schedule.WALK_DISCOUNTS + (0.0,)
    can_skip = getattr(K, "skips", False)
    # the copy of the values goes beside a policy mapped from a file, so that it pages as the policy does
    copy_file = root / checkpoint.COPY_FILE if isinstance(policy, np.memmap) else None
    skip = new_skip(K, values, copy_file, threads, blocks_id(header), log) \
        if WALK_SKIP and can_skip else None
    keeps = skip is not None and copy_file is not None  # (a policy in memory ends with the run)
    rows = list(history or [])[-HISTORY_ROWS:]
    before = rows[-1]["change"] if rows else None  # the last full sweep's largest change, where known
    took_up = False  # whether the checkpoint's skip record was taken up
    if kept is not None:
        # (a next full sweep that records no lead, a plain one, forgets every lead: one bound's, after a round
        # that moved the values by WALK_RECORD_BELOW or more)
        records = records_after(skip, before)
        if keeps and not records and log:
            log(f"the checkpoint's skip record is left unused: its last round changed the values by {before:.3g}, so "
                "the next full sweep generates every state anyway")
        took_up = keeps and records and take_up_skip(cast(Skip | BlockSkip, skip), root, kept, values, log)
        if not took_up:
            checkpoint.drop_skip_record(root)  # before this run writes rows the record does not describe
    # the states and codes the full sweeps generated, where the engine counts them
    counted = skip.work if skip is not None else np.zeros(2, dtype=np.int64) if can_skip else None
    greedy_work = np.zeros(2, dtype=np.int64)  # what the hot sets' greedy sweeps generated (hot_round)
    aim = tolerance / schedule.WALK_STAGE_FACTOR  # where a discounted stage ends
    hot_rounds = bool(WALK_HOT_SWEEPS) and getattr(K, "hot_sets", False)
    # the hot sets' marks: a byte a state here, unless the engine finds its hot sets itself (a GPU's)
    mark = np.zeros(values.shape[0], dtype=np.uint8) if hot_rounds and not finds_hot_sets(K) else None
    recorded = False  # whether the last full sweep recorded leads (a checkpoint keeps the record only then)
    pacer = checkpoint.Pacer(root, values,
                             (lambda: keep_skip(cast(Skip | BlockSkip, skip), policy, values)
                              if record_read(recorded, before) else None) if keeps else None,
                             lambda: record_worth(rows))
    if resumed and sweeps and rows:  # a stop in this run's first round is decided as in a later one
        pacer.resumed(walk_info(header, tolerance, sweeps, cheap, hot, stage, float(rows[-1]["change"]), earlier, rows,
                                early, repairs), took_up)
    try:
        while stage < len(stages):
            d = stages[stage]
            g = float(np.float32(1.0 - d))
            end = schedule.stage_end(stage, tolerance, early) if d else aim
            stalled = Stall(WALK_PROGRESS, WALK_NEAR * end, WALK_NEAR_ROUNDS)
            flip, damp = Flip(), False
            outlook = Outlook(end if d else tolerance, stall=bool(d))
            # a resumed stage's earlier rounds (of the same walk since the same repair: a repair's
            # stages are its own): its outlook reads them, and its stall rule counts them, as without the stop
            earlier_rows = [r for r in rows if checkpoint.row_walk(r) == (stage, not early, repairs)]
            outlook.seed(earlier_rows)
            stalled.seed([float(r["change"]) for r in earlier_rows])
            changes = [float(r["change"]) for r in earlier_rows]  # the stage's rounds' largest changes (chasing)
            # sweeps of every state since the last full sweep, besides the next one; and whether the
            # next full sweep is damped (both as the stage's rounds before a stop left them)
            damp, between = flip.replay(earlier_rows, g)
            while sweeps < max_sweeps:
                t0 = time.perf_counter()
                label = f"sweep {sweeps + 1} (1 - discount {d:g})" if d else f"sweep {sweeps + 1}"
                records = records_after(skip, before)
                last = full_sweep(K, values, threads, label, show_progress, policy, g, damp, skip, counted, records)
                before, recorded = last, records
                t_full = time.perf_counter() - t0
                sweeps += 1
                if last < tolerance and d == 0.0:
                    residual = K.sweep(values, threads=threads, write=False)
                    if residual < tolerance:
                        t_round = time.perf_counter() - t0
                        spent += t_round
                        if log:  # the walk's last round, said as the others are
                            log(f"sweep {sweeps} (1 - discount 0): largest change {last:.3g} (full sweep {t_full:.1f} s"
                                f"{generated_words(skip)}), residual {residual:.3g} (a sweep of every state, {t_round - t_full:.1f} s): "
                                f"both below {tolerance:g}, the walk ends ({checkpoint.so_far(spent, earlier)})")
                        keep_row(rows, round_row(sweeps, stage, last, t_full, t_round, skip, earlier + spent,
                                                 repair=not early, damped=damp, repairs=repairs))
                        # the walk's last checkpoint, which says so: a run stopped in the endless
                        # check that follows goes on with the check, not with another round
                        pacer.round({**walk_info(header, tolerance, sweeps, cheap, hot, stage, last, earlier + spent,
                                                 rows, early, repairs), "walked": float(residual),
                                     "walked_crc": checkpoint.values_crc(values)}, force=True)
                        return residual, sweeps, cheap, hot, spent
                done = bool(d) and (last < end or stalled(last))
                changes.append(last)
                rate = g ** (1 + between)  # how slowly a change can fall at most since the last round
                was = cheap
                evaluated: float | None = None  # the largest change of the round's last policy sweep
                greedy = 0  # greedy sweeps of the round's hot set (``hot_round``)
                greedy_t: list[float] = []  # ... their time
                greedy_was = int(greedy_work[0])  # ... and the states they generated (the hot set's size times their count)
                # a round that evaluates as the discounted stages' do: theirs, and the undiscounted
                # stage's while it is still far from its aim
                evaluates = bool(d) or far_from_aim(last, tolerance)
                if damp:
                    pass  # no policy sweeps after a damped sweep: a GPU's own values are not the averaged ones
                elif not done and evaluates and hot_rounds:
                    full, swept, evaluated, greedy = hot_round(
                        cast(HotSets, K), policy, values, threads, g, tolerance / 10, mark,
                        WALK_HOT_GREEDY if can_skip and last >= WALK_GREEDY_ABOVE else 0,
                        skip.forget_states if skip is not None else None, greedy_work, greedy_t)
                    cheap += full
                    hot += swept
                elif not done:
                    full, change = evaluate_policy(K, policy, values, threads, g, tolerance / 10, math.inf,
                                                   WALK_POLICY_SWEEPS if evaluates else WALK_POLISH_SWEEPS)
                    cheap += full
                    evaluated = change if full else None
                if evaluates and evaluated is not None and can_skip and not chasing(changes):  # (the top-up)
                    more, evaluated = evaluate_policy(K, policy, values, threads, g, tolerance / 10, evaluated,
                                                      WALK_EVAL_MOST - (cheap - was))
                    cheap += more
                held_s: float | None = None  # the held states' repair, where the round ends with one
                if after_round is not None and not d:
                    t_held = time.perf_counter()
                    after_round()
                    held_s = time.perf_counter() - t_held
                between = cheap - was
                hot_size = (int(greedy_work[0]) - greedy_was) // greedy if greedy else 0
                t_round = time.perf_counter() - t0
                spent += t_round
                keep_row(rows, round_row(sweeps, stage, last, t_full, t_round, skip, earlier + spent,
                                         between, evaluated, repair=not early, damped=damp, repairs=repairs,
                                         greedy=greedy, greedy_states=hot_size, greedy_s=sum(greedy_t)))
                pacer.round(walk_info(header, tolerance, sweeps, cheap, hot, stage + done, last, earlier + spent, rows,
                                      early, repairs), force=done)
                if log:  # the split says what a round costs where: the projections' policy share
                    generated = generated_words(skip)
                    policies = "" if evaluated is None else f" ({between} of every state, the last changing {evaluated:.2g})"
                    if greedy:
                        policies += f", with {greedy} greedy sweeps of the hot set ({hot_size:,} states, {sum(greedy_t):.1f} s)"
                    held_words = "" if held_s is None else f", the flagged states' repair {held_s:.1f} s"
                    log(f"sweep {sweeps} (1 - discount {d:g}){' damped' if damp else ''}: largest change {last:.3g} "
                        f"(full sweep {t_full:.1f} s{generated}, policy sweeps {t_round - t_full - (held_s or 0.0):.1f} s"
                        f"{policies}{held_words}; "
                        f"{checkpoint.so_far(spent, earlier)})" + ("" if done else outlook(last, t_round)))
                damp = flip(last, rate, damped=damp)
                if done:
                    break
            else:
                pacer.stop()
                raise RuntimeError(f"no convergence to {tolerance} within {max_sweeps} sweeps")
            stage += 1
        raise AssertionError("unreachable: the last stage returns")
    except KeyboardInterrupt:
        pacer.stop()  # the rounds since the last checkpoint are kept: a resumed run goes on from here
        raise
    finally:
        if work is not None:
            work.update(skip_figures(skip, counted))
            if greedy_work[0]:  # (kept apart: a full sweep's share generated reads the full sweeps' alone)
                work.update({"greedy_states": int(greedy_work[0]), "greedy_codes": int(greedy_work[1])})
            work["history"] = rows  # (a walk after a repair goes on with them)
        if skip is not None:
            skip.close()


def skips_by_blocks() -> bool:
    """Whether the walk's skip bounds each state by its blocks (``BlockSkip``) rather than by one
    bound for the game: the environment's SOLVER_WALK_SKIP ("one" or "blocks") where set, else
    WALK_SKIP_BLOCKS. Any other value is an ``InputError``."""
    how = os.environ.get(SKIP_ENV, "").strip()
    if not how:
        return WALK_SKIP_BLOCKS
    if how not in (ONE_BOUND, BY_BLOCKS):
        raise InputError(f"{SKIP_ENV} must be {ONE_BOUND} (one bound for the game) or {BY_BLOCKS} (a bound per "
                         f"block of states); got {how!r}")
    return how == BY_BLOCKS


def new_skip(K: Engine, values: np.ndarray, copy_file: Path | None, threads: int, game_id: str = "",
             log: Log | None = None) -> Skip | BlockSkip:
    """The walk's skip: a bound per block where ``skips_by_blocks`` says so and the game names
    blocks (``BlockSkip``), else one bound for the game (``Skip``). Where the copy of the values goes
    beside the mapped policy (``copy_file``: a large game), the blocks are kept beside it too
    (``checkpoint.BLOCKS_FILE``, for the game ``game_id``), so a resumed walk reads them."""
    game = getattr(K, "game", None)
    if skips_by_blocks() and game is not None and game.block_count > 1:
        blocks_file = copy_file.with_name(checkpoint.BLOCKS_FILE) if copy_file is not None else None
        if log and (blocks_file is None or not blocks_file.exists()):
            log("the skip by blocks: finding the blocks each state's successors can lie in (every state's outcomes "
                "generated once, some two full sweeps' time)")
        t0 = time.perf_counter()
        found = BlockSkip(game, values.dtype, copy_file, threads=threads, blocks_file=blocks_file, game_id=game_id)
        if log and blocks_file is not None:
            took = "" if found.loaded else f" ({duration(time.perf_counter() - t0)})"
            log(f"the skip's blocks were {'read from' if found.loaded else 'found and kept in'} {blocks_file}{took}; "
                f"they hold {found.block_bytes / 2**20:,.0f} MiB of memory")
        return found
    return Skip(values.shape[0], values.dtype, copy_file)


def records_after(skip: Skip | BlockSkip | None, change: float | None) -> bool:
    """Whether a full sweep after one whose largest change was ``change`` (None: not known)
    records the leads the next one skips by: only below WALK_RECORD_BELOW, for either skip, since
    above it next to no lead outlasts its bound (one bound's, or its blocks') while recording costs
    1.13-1.15x a plain backup. The one place that says so: the full sweep's ``record`` and whether a
    resumed run takes up the checkpoint's skip record both follow it."""
    return change is None or change < WALK_RECORD_BELOW


def record_read(recorded: bool, change: float | None) -> bool:
    """Whether a round's checkpoint keeps the skip's record: only where the round's full sweep
    recorded leads (``recorded``; a plain one leaves every lead "never") and the next full sweep,
    after this one's largest ``change``, records too and so would read them (``records_after``).
    Otherwise the record (1.3 GB at seven pieces) would be written and synced every round only to
    be left unused by a resumed run."""
    return recorded and records_after(None, change)


def record_worth(rows: list[dict[str, Any]]) -> float:
    """The seconds a checkpoint's skip record would save the next run's first full sweep, read from
    the last round's row (``round_row``): the states its full sweep skipped, at what generating them
    cost there (its seconds over the share it generated); 0 where it skipped none or did not skip."""
    generated = rows[-1].get("generated") if rows else None
    if generated is None:
        return 0.0
    share = max(float(generated), 0.01)
    return float(rows[-1].get("full_s", 0.0)) * (1.0 - share) / share


def keep_skip(skip: Skip | BlockSkip, policy: np.ndarray,
              values: np.ndarray) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
    """What a round's checkpoint keeps of the skip (``checkpoint.Pacer``): its record and arrays
    (lead and stamp bytes; by blocks, the carried leads and the blocks' movements), with the
    mapped policy's rows flushed to their file first (the skipped states are backed up from them)."""
    record = skip.record(values)
    if record is None:
        return None
    if isinstance(policy, np.memmap):
        policy.flush()
    return record, skip.arrays()


def take_up_skip(skip: Skip | BlockSkip, root: Path, record: dict[str, Any], values: np.ndarray,
                 log: Log | None) -> bool:
    """Restore the skip from a checkpoint's ``record`` and the bytes written beside it
    (``checkpoint.read_skip_file``); False, said in the log, where they do not fit together (the
    first full sweep then generates every state, as a walk without a record does).

    Sound after any stop: the record, the bytes and the values belong to the same round's end
    (their CRC), and the policy rows are that round's, except those of states the stopped run
    backed up again from outcomes in the round it was cut in. On one thread the resumed run
    decides as the stopped one did, so it generates those states again too; on two, where a
    state's decision can differ by the order the threads read in, such a row was chosen at values
    within that sweep's movement of these, and the undiscounted stage's last check regenerates
    every state."""
    got = checkpoint.read_skip_file(root, record)
    try:
        if got is None:
            raise ValueError(f"{checkpoint.SKIP_FILE} is missing or belongs to another round")
        skip.restore(record, got, values)
    except (ValueError, KeyError, TypeError) as exc:
        if log:
            log(f"warning: the skip's record is not taken up ({exc}); the first full sweep generates every state")
        return False
    if log:
        log(f"the skip goes on from the checkpoint's leads (round {skip.round}): the first full sweep generates "
            "only what can have changed")
    return True


def full_sweep(K: Engine, values: np.ndarray, threads: int, label: str, show: bool | None, policy: np.ndarray,
                g: float, damp: bool, skip: Skip | BlockSkip | None, counted: np.ndarray | None,
                record: bool = True) -> float:
    """The walk's full sweep (``progress_sweep``), skipping what cannot change where ``skip`` is given
    (solver.stochastic.skip). ``counted`` (two int64, where the engine counts) receives the
    states generated and the codes written. ``record`` False: a plain sweep that records no lead
    and skips nothing, after which no lead is read again (``Skip.forget``, ``BlockSkip.forget``;
    ``records_after`` says when)."""
    if skip is None:
        return progress_sweep(K, values, threads, label, show, policy, g, damp=damp,
                      extra={"work": counted} if counted is not None else None)
    skip.begin(values, g)
    before = int(skip.work[0])
    if record:
        last = progress_sweep(K, values, threads, label, show, policy, g, damp=damp, extra=skip.kwargs())
    else:
        skip.forget()
        last = progress_sweep(K, values, threads, label, show, policy, g, damp=damp, extra={"work": skip.work})
    skip.end(values, last, int(skip.work[0]) - before, damped=damp)
    return last


def skip_figures(skip: Skip | BlockSkip | None, counted: np.ndarray | None) -> dict[str, Any]:
    """What the walk's full sweeps generated (where the engine counts): states and outcome codes,
    and where they skip, a row a full sweep (``Skip.log``)."""
    if counted is None:
        return {}
    out: dict[str, Any] = {"generated_states": int(counted[0]), "generated_codes": int(counted[1])}
    if skip is not None:
        out["rounds"] = list(skip.log)
    return out


class Outlook:
    """The round log's outlook for a stage: how far its aim lies if the largest change goes on
    falling as it did over the stage's last OUTLOOK_ROUNDS rounds (their geometric mean), in rounds
    and in those rounds' mean time. An extrapolation, and it says so: a stage's change falls
    unevenly (its early rounds chase the greedy policy, its tail waits on the discount's own mode,
    and ``Stall`` or the near rule may end it sooner), so it is a reading of the log, not a bound.
    One per stage; a resumed stage's earlier rounds come from the checkpoint's history (``seed``)."""

    def __init__(self, aim: float, rounds: int = OUTLOOK_ROUNDS, stall: bool = False) -> None:
        self.aim = aim
        self.rounds = rounds
        self.stall = stall  # a discounted stage, which the stall rule (Stall, WALK_PROGRESS) may end
        self.changes: list[float] = []
        self.seconds: list[float] = []

    def seed(self, rows: list[dict[str, Any]]) -> None:
        """The stage's rounds before this run, from the checkpoint's history (``round_row``)."""
        for row in rows:
            self.changes.append(float(row["change"]))
            self.seconds.append(float(row["round_s"]))

    def __call__(self, change: float, seconds: float) -> str:
        """Record a round (its largest change and its seconds); the clause for the log (``reading``)."""
        self.changes.append(change)
        self.seconds.append(seconds)
        return self.reading()

    def reading(self, note: str = "") -> str:
        """The clause for the rounds recorded so far, or "" until the stage has OUTLOOK_ROUNDS + 1
        rounds of history with changes above 0, and once its last change is at its aim; ``note``
        follows the extrapolation, before what the stall rule bounds (``stall_horizon``: said in a
        discounted stage where it ends the stage sooner than the extrapolation does)."""
        n = self.rounds
        if len(self.changes) <= n or self.changes[-1] <= self.aim:
            return ""
        change, first = self.changes[-1], self.changes[-1 - n]
        if first <= 0:  # (the change itself lies above the aim, which is above 0)
            return ""
        fall = (change / first) ** (1 / n)
        stall = self.stall_horizon()
        if fall >= 1:
            return (f"; its change did not fall over the last {n} rounds (aim {self.aim:.3g})" + note
                    + self.stall_clause(stall))
        left = math.ceil(math.log(self.aim / change) / math.log(fall))
        each = sum(self.seconds[-n:]) / n
        return (f"; at the last {n} rounds' fall ({fall:.3g} a round) this stage's aim {self.aim:.3g} "
                f"lies some {left} round{'s' if left != 1 else ''} ({duration(left * each)}) away" + note
                + (self.stall_clause(stall) if stall is not None and stall[0] < left else ""))

    def stall_horizon(self) -> tuple[int, float] | None:
        """For a discounted stage, the most rounds after this one by which the stall rule ends it
        unless a round's change falls below a threshold first: (rounds, threshold). Stall ends a
        stage at its round j (past _STALL_SWEEPS) once the last _STALL_SWEEPS changes all lie at or
        above WALK_PROGRESS times the smallest before them. Let round i hold the first smallest
        change m so far: at round i + _STALL_SWEEPS the changes before the window are the first i,
        whose smallest is m, and those in it are the rest, the ones so far all at least m; so
        unless a change below WALK_PROGRESS * m comes first, the stage ends by then (or sooner).
        That holds for every round that set a new smallest change, while no change since has
        fallen below WALK_PROGRESS times it; the earliest such round gives the nearest bound (a new
        smallest change that is not below half the one before leaves that one's bound standing).
        A bound, not a reading. None for the undiscounted stage or without a change yet."""
        if not self.stall or not self.changes:
            return None
        n, least = len(self.changes), math.inf
        for i, c in enumerate(self.changes):
            if c < least:
                least = c
                if all(x >= WALK_PROGRESS * c for x in self.changes[i + 1:]):
                    return max(0, i + 1 + _STALL_SWEEPS - n), WALK_PROGRESS * c
        raise AssertionError("unreachable: the last smallest change has nothing below it since")

    @staticmethod
    def stall_clause(stall: tuple[int, float] | None) -> str:
        if stall is None:
            return ""
        left, below = stall
        return (f"; the stall rule ends it within {left} more round{'s' if left != 1 else ''} unless a change "
                f"falls below {below:.3g} first")


def generated_words(skip: Skip | BlockSkip | None) -> str:
    """The round log's share of states its full sweep generated, where the sweep skips."""
    return f", {skip.log[-1]['generated']:.1%} generated" if skip is not None else ""


def far_from_aim(change: float, tolerance: float) -> bool:
    """Whether an undiscounted round whose full sweep changed a value by ``change`` sweeps its policy
    as the discounted stages' rounds do, rather than polishing (WALK_TAIL_FULL_ABOVE)."""
    return 0 < WALK_TAIL_FULL_ABOVE * tolerance < change


def after_reading(stage: int, stages: int, rows: list[dict[str, Any]], tolerance: float | None = None) -> str:
    """What is left of a walk after the stage ``stage`` (of ``stages``, the last undiscounted),
    priced from its rounds' rows (``round_row``): from the last discounted stage on, the undiscounted
    stage at the least and the endless check, in sweeps of every state (TAIL_STAGE_SWEEPS,
    TAIL_CHECK_SWEEPS), each at the median time that the rows' full sweeps would have taken had they
    generated every state (the last TAIL_RATE_ROUNDS of those that generated at least TAIL_RATE_SHARE
    of them). "" before the last discounted stage (the later stages' rounds are not known) or
    without such rows. An estimate, not a bound: a check that flags states adds a repair and
    another check. With the ``tolerance``, a last discounted stage whose last round changed a value
    by more than it is said to leave the undiscounted stage rounds to make (WALK_TAIL_FULL_ABOVE)."""
    if stage < stages - 2:
        return ""
    per = [r["full_s"] / (1.0 if r.get("generated") is None else r["generated"]) for r in rows
           if r.get("generated") is None or r["generated"] >= TAIL_RATE_SHARE][-TAIL_RATE_ROUNDS:]
    if not per:
        return ""
    each = statistics.median(per)
    last = stage == stages - 1
    sweeps = TAIL_CHECK_SWEEPS + (0.0 if last else TAIL_STAGE_SWEEPS)
    change = rows[-1].get("change") if rows else None
    if last:
        what = "the endless check"
    elif tolerance is not None and change is not None and far_from_aim(change, tolerance):
        what = (f"the undiscounted stage (its rounds sweep as this stage's do until a full sweep changes no value by "
                f"more than {WALK_TAIL_FULL_ABOVE * tolerance:g}, which the last round's {change:.3g} does not meet; "
                "then a residual sweep of every state) and the endless check")
    else:
        what = "the undiscounted stage (at the least a full sweep and a residual sweep of every state) and the endless check"
    return (f"{what} (about {TAIL_CHECK_SWEEPS:g} sweeps of every state, as at four pieces): some "
            f"{duration(sweeps * each)} at this run's {duration(each)} a sweep of every state, more where the check "
            "flags states to repair")


def chasing(changes: list[float], rounds: int | None = None) -> bool:
    """Whether the walk's greedy pair is chasing itself round a loop, from the largest changes of
    the stage's rounds so far (the last one's included): the last ``rounds`` (WALK_CHASE_ROUNDS)
    all lie at or above the smallest before them but the stage's first, and at or above
    WALK_CHASE_ABOVE. Then the round's policy sweeps stop at the hot round's, without the top-up
    (WALK_EVAL_MOST): a partly evaluated pair damps the swing, and the first round that sets a new
    smallest change brings the top-up back. The stage's first round is no measure of progress:
    after a discount change it moves values settled under the old discount (seven pieces' second
    stage: 0.0388, then 0.277, 0.205, 0.112, 0.0602, 0.0389, falling, which against it read as a
    chase), and in the first stage it starts from nothing. Read from the changes alone, so a stage
    resumed from its checkpoint's rows decides as the run that was not stopped."""
    rounds = WALK_CHASE_ROUNDS if rounds is None else rounds
    return (bool(rounds) and len(changes) > rounds + 1 and min(changes[-rounds:]) >= min(changes[1:-rounds])
            and min(changes[-rounds:]) >= WALK_CHASE_ABOVE)


class Stall:
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

    def seed(self, changes: list[float]) -> None:
        """The stage's changes before this run (a resumed stage's, from its checkpoint's rows)."""
        self.changes = list(changes) + self.changes

    def __call__(self, change: float) -> bool:
        self.changes.append(change)
        if self.rounds and len(self.changes) >= self.rounds and max(self.changes[-self.rounds:]) < self.near:
            return True
        if len(self.changes) <= _STALL_SWEEPS:
            return False
        return min(self.changes[-_STALL_SWEEPS:]) >= self.progress * min(self.changes[:-_STALL_SWEEPS])


class Flip:
    """Called with each round's largest change (its full sweep's) and the rate at which a mode that
    nothing but the discount shrinks would have fallen since the last one (the discount to the
    power of the sweeps of every state between them; 1 undiscounted); True when the next sweep
    should be damped (``progress_sweep``): over the last WALK_FLIP_ROUNDS changes, each fell at that rate,
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

    def replay(self, rows: list[dict[str, Any]], g: float) -> tuple[bool, int]:
        """Go through a resumed stage's earlier rounds (its checkpoint's rows, ``round_row``) as
        the walk went through them, so that the resumed stage damps where the run that was not
        stopped does; returns (whether the next full sweep is damped, the last round's policy
        sweeps of every state). A round's rate is the discount to the power of one plus the round
        before's policy sweeps, as ``run_walk`` reckons it."""
        damp, between = False, 0
        for row in rows:
            damp = self(float(row["change"]), g ** (1 + between), damped=bool(row.get("damped")))
            between = int(row.get("policy_sweeps") or 0)
        return damp, between

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


def walk_info(header: dict[str, Any], tolerance: float, sweeps: int, cheap: int, hot: int, stage: int,
               change: float, seconds: float = 0.0, rows: list[dict[str, Any]] | None = None,
               early: bool = True, repairs: int = 0) -> dict[str, Any]:
    """A walk checkpoint's record; ``seconds``: the solve's, all its runs together; ``rows``: the
    rounds' history (``round_row``); ``early``: False in a repair's walk, whose every discounted
    stage ends at tolerance / 10 (``schedule.stage_end``), so that a resumed one goes on so;
    ``repairs``: the endless-check repairs made so far (kept where any were made). The early stages'
    aims this run ends them at (``schedule.early_aims``) go with it, for a status to say where a
    stage ends."""
    info = {"sweeps": sweeps, "policy_sweeps": cheap, "hot_states": hot, "stage": stage,
            "discounts": list(schedule.WALK_DISCOUNTS), "change": change, "options": header, "tolerance": tolerance,
            "method": "walk", "seconds": round(seconds, 3), "rounds": list(rows or [])}
    if not early:
        info["early_aims"] = False
    else:
        info["aims"] = list(schedule.early_aims())
    if repairs:
        info["repairs"] = repairs
    return info


def round_row(sweep: int, stage: int, change: float, full: float, seconds: float, skip: Skip | BlockSkip | None,
              clock: float, policy_sweeps: int | None = None, evaluated: float | None = None,
              repair: bool = False, damped: bool = False, repairs: int = 0, greedy: int = 0,
              greedy_states: int = 0, greedy_s: float = 0.0) -> dict[str, Any]:
    """One round of the walk as the checkpoint's history keeps it: its full sweep's number, the
    stage it ran in (0-based), its largest change, its full sweep's and its whole round's seconds,
    the share of states its full sweep generated (None where the sweep does not skip), the
    solve's seconds in all at its end and, where given, its policy sweeps of every state (the hot
    sets' not counted) and the largest change of its last one (None: the round had none);
    ``repair``: a round of the walk that repairs a false solution (its stages are counted apart);
    ``damped``: its full sweep was damped (``Flip``); ``repairs``: the endless-check repairs made
    before it (a resumed stage reads only the rounds since the same repair); ``greedy``: its greedy
    sweeps of the hot set, where it made any, ``greedy_states`` that hot set's size and
    ``greedy_s`` their seconds."""
    generated = float(skip.log[-1]["generated"]) if skip is not None and skip.log else None
    row = {"sweep": sweep, "stage": stage, "change": float(change), "full_s": round(full, 2),
           "round_s": round(seconds, 2), "generated": None if generated is None else round(generated, 4),
           "clock": round(clock, 1)}
    if policy_sweeps is not None:
        row["policy_sweeps"] = policy_sweeps
        row["evaluated"] = None if evaluated is None else float(evaluated)
    if repair:
        row["repair"] = True
    if damped:  # (its full sweep was damped: ``Flip.replay`` reads it)
        row["damped"] = True
    if repairs:  # (a round after that many endless-check repairs: a resumed stage reads only its own)
        row["repairs"] = repairs
    if greedy:
        row["greedy"] = greedy
        row["greedy_states"] = greedy_states
        row["greedy_s"] = round(greedy_s, 2)
    return row


def keep_row(rows: list[dict[str, Any]], row: dict[str, Any]) -> None:
    """Add a round's row, keeping the last HISTORY_ROWS."""
    rows.append(row)
    del rows[:-HISTORY_ROWS]


def finds_hot_sets(K: Engine) -> bool:
    """Whether the engine marks and gathers the walk's hot sets in its own memory (``hot_set``)."""
    return bool(getattr(K, "device_hot_sets", False)) and callable(getattr(K, "hot_set", None))


def hot_round(K: HotSets, policy: np.ndarray, values: np.ndarray, threads: int, g: float, floor: float,
              mark: np.ndarray | None, greedy: int = 0, forget: Callable[[np.ndarray], None] | None = None,
              work: np.ndarray | None = None, seconds: list[float] | None = None) -> tuple[int, int, float, int]:
    """The walk's policy sweeps in a discounted stage, spent where the error is; returns (sweeps of
    every state, states swept in the hot set, the largest change of the last sweep of every state,
    greedy sweeps of the hot set).

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
    than ``floor``.

    ``greedy``: after the hot set's policy sweeps, up to this many greedy sweeps of the hot set
    (fewer where the set is big: WALK_GREEDY_BUDGET full sweeps' worth of generation at most;
    ``greedy_sweeps``; where the set is marked here and the engine's sweep takes a subset), which
    record those states' rows anew; ``forget`` is then told their ranks (the skip's leads no
    longer describe their rows), ``work`` counts what they generated and ``seconds`` receives
    their time. Greedy backups are the game's own equations, so the fixed points are the same."""
    full, change = evaluate_policy(K, policy, values, threads, g, floor, math.inf, WALK_HOT_FULL - 1)
    if change < floor:
        return full, 0, change, 0
    full += 1
    above = max(change / WALK_HOT_SHARE, floor / 10)
    n = values.shape[0]
    hot_set: Any
    if mark is None:
        change, hot_set, size = cast(DeviceHotSets, K).hot_set(policy, values, threads=threads, discount=g, above=above,
                                          most=n // WALK_HOT_MOST)
    else:
        mark[:] = 0
        change = K.evaluate(policy, values, threads=threads, discount=g, mark=mark, above=above)
        size = int(np.count_nonzero(mark))
    if change < floor:
        return full, 0, change, 0
    if size * WALK_HOT_MOST > n:
        more, change = evaluate_policy(K, policy, values, threads, g, floor, change, WALK_POLICY_SWEEPS - full)
        return full + more, 0, change, 0
    if mark is not None:
        hot_set = np.flatnonzero(mark)
    swept = 0
    for _ in range(min(WALK_HOT_SWEEPS, int(WALK_HOT_BUDGET * n / max(1, size)))):
        swept += size
        if K.evaluate(policy, values, threads=threads, discount=g, subset=hot_set) < floor:
            break
    greedy_done = 0
    if greedy * size > WALK_GREEDY_BUDGET * n:  # a big hot set: fewer greedy sweeps (WALK_GREEDY_BUDGET)
        greedy = int(WALK_GREEDY_BUDGET * n / size)
    if greedy and mark is not None and getattr(K, "subset_sweeps", False):
        t_greedy = time.perf_counter()
        greedy_done = greedy_sweeps(cast(SubsetSweeps, K), policy, values, threads, g, floor, hot_set, greedy, work)
        if seconds is not None:
            seconds.append(time.perf_counter() - t_greedy)
        if forget is not None:
            forget(hot_set)
    full += 1
    return full, swept, K.evaluate(policy, values, threads=threads, discount=g), greedy_done


def greedy_sweeps(K: SubsetSweeps, policy: np.ndarray, values: np.ndarray, threads: int, g: float, floor: float,
                  subset: np.ndarray, most: int, work: np.ndarray | None = None) -> int:
    """Greedy Gauss-Seidel sweeps of ``subset`` alone (ranks, increasing), each state's outcomes
    generated again (or read from a stored graph) and its row of ``policy`` recorded, at most
    ``most`` of them, while a sweep still changes a value by ``floor`` or more; returns how many.
    ``work`` (two int64), where given, receives the states and codes they generated.

    Value iteration on the states where the round's error sits, the rest of the values held: both
    players' choices there settle against each other a sweep at a time (a discounted game's greedy
    sweeps contract), where improving both policies at once over the whole game, each against the
    other's evaluated pair, can swing round a loop (``chasing``)."""
    # (an engine that counts takes ``work``, as its full sweeps do: ``Regenerated``)
    extra: dict[str, Any] = {} if work is None else {"work": work}
    done, change = 0, math.inf
    apart = (most > 1 and getattr(K, "subset_rows", False) and isinstance(subset, np.ndarray)
             and subset.size * WALK_GREEDY_ROWS_MOST <= policy.shape[0])
    # the rows apart (WALK_GREEDY_ROWS_MOST): no sweep reads a row, each writes all of the set's, so
    # the policy that the last sweep leaves is the same; a stop between two sweeps keeps theirs too
    rows = np.empty((subset.size, policy.shape[1]), dtype=policy.dtype) if apart else None
    into: dict[str, Any] = {"subset_rows": rows} if apart else {"policy": policy}
    try:
        while done < most and change >= floor:
            change = cast(Any, K).sweep(values, threads=threads, subset=subset, discount=g, **into, **extra)
            done += 1
    finally:
        if rows is not None and done:
            policy[subset] = rows
    return done


def evaluate_policy(K: Engine, policy: np.ndarray, values: np.ndarray, threads: int, g: float, floor: float,
                    change: float, most: int) -> tuple[int, float]:
    """Plain sweeps of the round's policy over every state: at most ``most`` of them, while the
    last sweep's largest change (``change`` before the first; ``math.inf`` to sweep at least once)
    is at least ``floor``. Returns (the sweeps, the last one's largest change). A plain round's
    policy sweeps, a hot round's sweeps of every state, and the top-up after either
    (WALK_EVAL_MOST).

    The top-up: where every full sweep regenerates the outcomes it costs tens of policy sweeps,
    and a round of five or six policy sweeps leaves the greedy pair's values far from that pair's
    own: the next full sweep then pays mostly to carry on evaluating. These are Gauss-Seidel
    sweeps of the same equations as the round's others, so the fixed point is the same."""
    done = 0
    while done < most and change >= floor:
        change = K.evaluate(policy, values, threads=threads, discount=g)
        done += 1
    return done, change


def progress_sweep(K: Engine, values: np.ndarray, threads: int, label: str, show: bool | None,
           policy: np.ndarray | None = None, discount: float = 1.0, start: int = 0, stop: int | None = None,
           damp: bool = False, extra: dict[str, Any] | None = None) -> float:
    """One sweep over ranks start..stop-1 (default: every state), in chunks for the progress bar.

    ``damp``: each chunk's new values are averaged with the ones it started from (x + T x) / 2,
    which has the same fixed points and kills a value that flips sign every sweep (see Flip); the
    largest change returned is the sweep's own, before averaging. An engine whose values can run
    ahead of the host's (a GPU's policy sweeps) is synced first; the next call to it must be a full
    sweep, which takes the host's values. ``extra``: more arguments for the engine's sweep
    (``Skip.kwargs``; a skipping sweep is told the largest change of its earlier chunks, ``moved``)."""
    end = values.shape[0] if stop is None else stop
    extra = dict(extra or {})
    skipping = "bounds" in extra or "carry" in extra
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
                halfway(values, slice(a, b), before)
            bar.update(b - a)
            bar.note(f"{label} (change so far {worst:.2g})")
    return worst


def halfway(values: np.ndarray, where: Any, before: np.ndarray) -> None:
    """A damped sweep's end (see Flip): the values at ``where`` (a slice or ranks), which the
    sweep just wrote, averaged with ``before``, the ones it started from."""
    values[where] = (values[where] + before) * values.dtype.type(0.5)
