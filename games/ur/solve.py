"""Solving Ur (fort rules) with the dice-game engine, and asking the solved table questions.

The table holds V = P(win) - P(loss) for the side to move, before the roll, for every
mover-relative state, solved by ``solver.stochastic`` over the fort rules' move generator
(``games.ur._fort``). docs/design/walk.md explains the method and why values that pass the endless check
are the game's values.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import mmap
import os
from math import comb
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gamesolver.solver.stochastic import iteration
from gamesolver.solver.stochastic.checkpoint import CHECKPOINT_INFO
from gamesolver.solver.stochastic.engine import Engine, Log
from gamesolver.games.ur.generator import fresh_kernel, kernel
from gamesolver.games.ur.engine import Action, actions, terminal_value
from gamesolver.games.ur.notation import Position
from gamesolver.games.ur.opening import OpeningFile
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.stochastic.solve import Proof, SolveSettings, TableSpec, solve_table
from gamesolver.solver.stochastic.solve import proof_refused as engine_proof_refused
from gamesolver.solver.errors import CorruptTableError, InputError, MissingTableError, TableError
from gamesolver.solver.tables.lock import folder_lock
from gamesolver.solver.tables.paths import cache_dir
from gamesolver.solver.stochastic.schedule import DEFAULT_TOLERANCE
from gamesolver.solver.tables.table import VERIFY_ONCE, Table, open_or_build, open_table, write_table

GAME = "ur"
DEFAULT_WIDTH = 1e-5  # the widest proven interval a solve aims for unless told
RULE = "fort"
ENCODING = "ur-mover-relative-placement-tiers"
ENCODING_VERSION = 2  # 2: one state of each mirrored pair (header option "mirror")
# The generator's mirror index (which full ranks are canonical, and how many before each word of
# 64), stored beside the values so that an open maps it instead of rebuilding it (minutes for K = 7).
INDEX_ARRAYS = ("mirror_words", "mirror_sample")
INDEX_GAME = "ur-mirror-index"
INDEX_SPOT_CHECKS = 16  # words and samples recomputed at an open: each is a page read from a cold disk


def tier_counts(options: UrOptions, full: bool = True) -> dict[tuple[int, int], int]:
    """States per tier (pieces of the side to move on the board, pieces of the other side); with
    ``full=False`` only those the table stores (one of each mirrored pair)."""
    off = kernel(options).tier_offsets(full=full)
    k = options.pieces
    return {(a, b): int(off[a, b + 1] - off[a, b]) for a in range(k + 1) for b in range(k + 1)}


def stored_state_count(options: UrOptions) -> int:
    """The states a table stores, counted without building the generator's mirror index: with
    the mirror, each pair of mirror images once, so (placements + placements the mirror fixes) / 2.
    A placement is fixed when both sides' tile sets are: each takes whole twin pairs and tiles on
    the axis."""
    game = kernel(dataclasses.replace(options, mirror=False))
    full = int(game.full_state_count)
    perm = options.board.mirror if options.uses_mirror else None
    if perm is None:
        return full
    pairs = sum(1 for t, u in enumerate(perm) if t < u)
    axis = sum(1 for t, u in enumerate(perm) if t == u)
    k = options.pieces
    fixed = 0
    for p1 in range(pairs + 1):
        for f1 in range(axis + 1):
            if 2 * p1 + f1 > k:
                continue
            for p2 in range(pairs - p1 + 1):
                for f2 in range(axis - f1 + 1):
                    if 2 * p2 + f2 <= k:
                        fixed += comb(pairs, p1) * comb(pairs - p1, p2) * comb(axis, f1) * comb(axis - f1, f2)
    return (full + fixed) // 2


def default_table_dir(options: UrOptions, cache: str | os.PathLike[str] | None = None) -> Path:
    h = options.header()
    mirror = "m" if options.uses_mirror else ""
    return cache_dir(cache) / GAME / (f"k{options.pieces}-e{ENCODING_VERSION}{mirror}-{h['board_sha256'][:10]}-"
                                      f"{h['dice_sha256'][:10]}")


def table_spec(options: UrOptions) -> TableSpec:
    """What a fort-rules table records besides its values: its names, its options, the
    generator's tier offsets and mirror index (built after the solve), the board file it read."""
    return TableSpec(GAME, RULE, ENCODING, ENCODING_VERSION, options.header(),
                     arrays=lambda: {"tier_offsets": kernel(options).tier_offsets(), **index_arrays(options)},
                     meta={"board_file": options.board.source})


def solve(
    options: UrOptions,
    out: str | os.PathLike[str] | None = None,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    threads: int | None = None,
    max_sweeps: int = 100_000,
    method: str = "walk",
    graph: str = "auto",
    show_progress: bool | None = None,
    log: Log | None = None,
    proof: Proof = False,
    width: float | None = None,
    engine: Engine | None = None,
    policy_place: str = "auto",
    local_repairs: int | None = None,
) -> Table:
    """Solve and write the table at ``out`` (default: the cache); resumes from the checkpoint a
    stopped run left there. One call of the engine (``solver.stochastic.solve.solve_table``):
    ``method``, ``graph``, ``engine`` (e.g. ``ray_engine``) and ``policy_place`` (where the walk
    keeps its policy) and ``local_repairs`` as in ``solver.stochastic.iteration.solve_values``; ``proof`` (False, True,
    or "auto": where it fits) an interval proven around every value, recorded in the header's
    ``certified``, the widest aimed at ``width`` (default: ``tolerance``; a solve to 1e-6 proven
    to 1e-5 is cheaper than a solve to 1e-5 proven to 1e-5, see docs/design/proof.md)."""
    root = Path(out) if out is not None else default_table_dir(options)
    with early_lock(root):
        settings = SolveSettings(tolerance=tolerance, threads=threads, max_sweeps=max_sweeps, method=method,
                                 graph=graph, engine=engine, policy_place=policy_place, show_progress=show_progress,
                                 log=log,
                                 local_repairs=iteration.LOCAL_REPAIRS if local_repairs is None else local_repairs)
        return solve_table(kernel(options), root, table_spec(options), settings, proof=proof, width=width)


@contextlib.contextmanager
def early_lock(root: Path) -> Any:
    """Hold ``root``'s solve lock from now where it holds a stopped solve's checkpoint (a resume): the
    generator's tables and the table's spec take some 25 s to build at seven pieces, and a second
    solve or ``--status`` started then must see this one. Any other folder is left alone (a run
    refused before it starts leaves nothing behind); the engine locks it once it has taken it.
    The lock is re-entrant, so the engine's own hold inside this one adds nothing."""
    with contextlib.ExitStack() as stack:
        if (root / CHECKPOINT_INFO).is_file():  # a stopped solve's folder: never a user's, which is refused
            stack.enter_context(folder_lock(root))
        yield


def proof_refused(options: UrOptions) -> str | None:
    """Why the proof of these options' values does not fit this machine (one line), or None."""
    return engine_proof_refused(kernel(options))


def index_arrays(options: UrOptions) -> dict[str, Any]:
    """The generator's mirror index as arrays to store with a table (none without the mirror);
    built here if the generator has none yet."""
    if not options.uses_mirror:
        return {}
    words, sample = kernel(options).index_arrays()
    return dict(zip(INDEX_ARRAYS, (words, sample)))


def index_cache_dir(options: UrOptions, cache: str | None = None) -> Path:
    """Where the mirror index for tables written before it was stored with them is kept: it
    depends on the board and the piece count only."""
    return cache_dir(cache) / GAME / "index" / (f"k{options.pieces}-e{ENCODING_VERSION}-"
                                                f"{options.board.digest[:16]}")


def attach_index(options: UrOptions, table: Table, cache: str | None = None, log: Log | None = None) -> str:
    """Give the move generator its mirror index without rebuilding it: from the table's own
    arrays, else (a table from before they were stored) from the index cache, else built once and
    saved there. Returns where it came from: 'table', 'cache', 'built', 'kernel' (it had one) or
    'none' (no mirror). An index in the table that does not fit the board is a CorruptTableError."""
    if not options.uses_mirror:
        return "none"
    game = kernel(options)
    expected = stored_state_count(options)
    if INDEX_ARRAYS[0] in table.arrays:
        if table.state_count != expected:
            raise CorruptTableError(f"table {table.path}: {table.state_count:,} states, the board and piece count "
                                    f"give {expected:,}; delete the table and solve again")
        try:
            took = game.use_index(table[INDEX_ARRAYS[0]], table[INDEX_ARRAYS[1]], expected, INDEX_SPOT_CHECKS)
        except ValueError as exc:
            raise CorruptTableError(f"table {table.path}: {exc}; delete the table and solve again") from None
        return "table" if took else "kernel"
    where = index_cache_dir(options, cache)
    expect = {"game": INDEX_GAME, "encoding": ENCODING, "encoding_version": ENCODING_VERSION,
              "state_count": expected, "options": {"pieces": options.pieces, "board_sha256": options.board.digest}}
    try:
        cached = open_table(where, expect=expect, verify=VERIFY_ONCE)
        took = game.use_index(cached[INDEX_ARRAYS[0]], cached[INDEX_ARRAYS[1]], expected, INDEX_SPOT_CHECKS)
        return "cache" if took else "kernel"
    except MissingTableError:
        pass
    except (TableError, ValueError) as exc:  # a damaged cache entry is rebuilt, never used
        if log:
            log(f"rebuilding the mirror index at {where}: {exc}")
    if log:
        log(f"building the mirror index for pieces={options.pieces} ({game.full_state_count:,} placements) "
            f"once; it is kept at {where}")
    arrays = index_arrays(options)
    try:
        write_table(where, game=INDEX_GAME, encoding=ENCODING, encoding_version=ENCODING_VERSION,
                    state_count=expected, arrays=arrays,
                    options={"pieces": options.pieces, "board_sha256": options.board.digest})
    except (TableError, OSError, ValueError) as exc:  # no cache to write: the next open builds it again
        if log:
            log(f"the mirror index could not be kept ({exc})")
    return "built"


def ray_engine(options: UrOptions, *, address: str | None = None, workers: int | None = None,
               threads: int | None = None, log: Log | None = None, **init: Any) -> Any:
    """A ``solver.backends.ray.RayEngine`` for these options: every actor builds the fort rules'
    generator from the options (the game's C state does not pickle). Close it (or use ``with``)
    to end the actors. ``init``: further ``ray.init`` arguments (a local cluster's ``num_cpus``)."""
    from gamesolver.solver.backends.ray import RayEngine

    return RayEngine(functools.partial(kernel, options), kernel(options), workers=workers, threads=threads,
                     address=address, log=log, init_options=init or None)


def stored_index_matches(options: UrOptions, table: Table) -> bool | None:
    """Whether the mirror index stored with the table equals one built now for the options (every
    word, not the spot checks of an open); None when the table stores none. Costs a build of the
    index: seconds for K = 4, minutes for K = 7."""
    if not options.uses_mirror or INDEX_ARRAYS[0] not in table.arrays:
        return None

    words, sample = fresh_kernel(options).index_arrays()
    return bool(np.array_equal(words, table[INDEX_ARRAYS[0]]) and np.array_equal(sample, table[INDEX_ARRAYS[1]]))


def read_scattered(table: Table) -> None:
    """Tell the kernel that the table's maps are read a value here and there (queries): a page
    fault then reads that page, not the pages around it. Measured on a K = 7 table with a cold page
    cache, this halved the time to map the index and answer. Not for sweeps or exports, which read
    in order and want the read-ahead."""
    advice = getattr(mmap, "MADV_RANDOM", None)
    for array in table.arrays.values():
        mapped = array.base if isinstance(array.base, mmap.mmap) else getattr(array, "_mmap", None)
        if advice is not None and isinstance(mapped, mmap.mmap):
            try:
                mapped.madvise(advice)
            except (OSError, ValueError):
                pass  # advice only
def gpu_engine(options: UrOptions, *, policy: bool = True, log: Log | None = None, **kw: Any) -> Any:
    """A ``solver.backends.gpu.driver.GpuEngine`` for these options: the fort rules' device generator
    (``games.ur.gpu_fort``) with the tables and mirror index of the host's ``FortGame``. ``policy``:
    count the walk's policy in the device memory it needs (False for ``method="sweeps"``). ``kw``:
    ``target``, ``threads_per_block``, ``launch_states``, ``graph`` (see ``GpuEngine``). Refused with one
    line when numba-cuda is missing or no GPU is found, before the mirror index is built."""
    from gamesolver.solver.backends.gpu.driver import GpuEngine, NO_GPU, import_cuda, import_numba

    if kw.get("target", "cuda") == "cuda":
        if not import_cuda().is_available():
            raise InputError(NO_GPU)
    else:
        import_numba()
    from gamesolver.games.ur.gpu_fort import device_game

    return GpuEngine(device_game(kernel(options)), policy=policy, log=log, **kw)


def load_table(
    options: UrOptions, table_dir: str | os.PathLike[str] | None = None, *, build: bool = True, log: Log | None = None,
    verify: bool | str = VERIFY_ONCE, cache: str | None = None, scattered: bool = False,
) -> Table:
    """The solved table for ``options``: opened from ``table_dir`` (or the cache), solved if missing.
    The checksums are recomputed on the table's first open (``verify``: see ``solver.tables.table.open_table``)
    and the generator gets its mirror index from the table (``attach_index``). ``scattered``: the
    caller reads single values (queries; ``read_scattered``)."""
    root = Path(table_dir) if table_dir is not None else default_table_dir(options, cache)
    expect = {"game": GAME, "rule": RULE, "encoding": ENCODING, "encoding_version": ENCODING_VERSION,
              "options": options.header()}

    def make() -> None:  # a first use: one line, the progress bar, and the proof where it fits
        prove = proof_refused(options) is None
        if log:
            log(f"solving Ur (fort rules) with {options.pieces} piece{'s' if options.pieces > 1 else ''}"
                f"{' and proving it' if prove else ''} (first use; cached in {root})")
        solve(options, root, show_progress=None, proof=prove, width=DEFAULT_WIDTH)

    table = open_or_build(root, expect, make if build else None, verify=verify)
    if scattered:
        read_scattered(table)
    attach_index(options, table, cache, log)
    return table


@dataclass(frozen=True)
class Choice:
    action: Action
    value: float  # for the side that acts, after this action


def state_value(options: UrOptions, table: Table | OpeningFile, mine: frozenset[int], theirs: frozenset[int]) -> float:
    """Value for the side to move before rolling (terminal positions are exact +-1), from a
    solved table or an opening file."""
    done = terminal_value(options.board, mine, theirs)
    if done is not None:
        return done
    b = options.board
    if isinstance(table, OpeningFile):  # keyed by tiles, not ranks
        return table.stored_value(b.mask(mine), b.mask(theirs)) + 0.0
    r = kernel(options).rank([b.mask(mine)], [b.mask(theirs)])[0]
    return float(table["value"][r]) + 0.0


def state_interval(options: UrOptions, table: Table | OpeningFile, mine: frozenset[int],
                   theirs: frozenset[int]) -> tuple[float, float] | None:
    """The proven interval of the position's value where the table stores one (``solve`` with its
    proof, or an opening file built from such a table), else None."""
    if table.intervals is None if isinstance(table, OpeningFile) else "lower" not in table.arrays:
        return None
    b = options.board
    done = terminal_value(b, mine, theirs)
    if done is not None:
        return done, done
    if isinstance(table, OpeningFile):  # keyed by tiles, not ranks
        return table.stored_interval(b.mask(mine), b.mask(theirs))
    r = kernel(options).rank([b.mask(mine)], [b.mask(theirs)])[0]
    return float(table["lower"][r]) + 0.0, float(table["upper"][r]) + 0.0


def choice_interval(options: UrOptions, table: Table | OpeningFile, choice: Choice) -> tuple[float, float] | None:
    """The proven interval of an action's value (from its successor's, as ``choices`` takes its
    value), or None where the table stores no intervals."""
    act = choice.action
    if act.win:
        return 1.0, 1.0
    if act.extra_turn:
        return state_interval(options, table, act.mine, act.theirs)
    iv = state_interval(options, table, act.theirs, act.mine)
    return None if iv is None else (-iv[1] + 0.0, -iv[0] + 0.0)


def choices(options: UrOptions, table: Table | OpeningFile, pos: Position, roll: int) -> list[Choice]:
    """Every legal action for the roll with its value, best first."""
    mine, theirs = pos.mover_relative()
    out = []
    for act in actions(options, mine, theirs, options.dice.rolls[roll]):
        if act.win:
            v = 1.0
        elif act.extra_turn:
            v = state_value(options, table, act.mine, act.theirs)
        else:
            v = -state_value(options, table, act.theirs, act.mine)
        out.append(Choice(act, v + 0.0))  # + 0.0 turns -0.0 into 0.0
    out.sort(key=lambda c: -c.value)
    return out
