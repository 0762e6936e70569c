"""A solve's files beside its table: the checkpoint (the values and the run's state, rewritten
after every round or sweep, ``Pacer`` spacing them where one is dear), the walk's mapped policy and
copy of the values, reading a checkpoint back (``resume``), and what a stopped solve says it left
(``stopped_message``, ``resumable``).
"""
from __future__ import annotations

import functools
import json
import math
import os
import statistics
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any, Callable, NamedTuple, TypeVar

import numpy as np

from gamesolver.solver.stochastic._engine import StochasticGame
from gamesolver.solver.stochastic.engine import Log
from gamesolver.solver.errors import Interrupted, TableWriteError
from gamesolver.solver.tables.atomic import SYNC_FROM, replace_synced
from gamesolver.solver.tables.lock import holder
from gamesolver.solver.tables.table import CHECKPOINT_FORMAT
from gamesolver.solver.stochastic import schedule, skip


CHECKPOINT = "checkpoint.npy"
CHECKPOINT_INFO = "checkpoint.json"
# beside a checkpoint: the walk's policy, mapped from this file when it does not fit in half the
# memory (see place_policy); removed when the solve ends, rewritten by a resumed run
POLICY_FILE = "walk-policy.npy"
COPY_FILE = "walk-copy.npy"  # ... and beside it the skipping walk's copy of the values (solver.stochastic.skip)
BLOCKS_FILE = "walk-blocks.npz"  # ... and, skipping by blocks, the blocks each key reaches (skip.write_blocks)
# ... and, where the walk maps its policy, the skip's arrays at the checkpoint's round (lead and stamp
# bytes; skipping by blocks, the carried leads and the blocks' movements)
# (``write_skip_file``), which a resumed walk takes up with the policy file so that its first full
# sweep skips what cannot have changed (the checkpoint's "skip" record)
SKIP_FILE = "walk-skip.npz"
# ... and, once a solve's sweeps have ended, the endless check's marks after its last pass
# (``write_marks``), tied to the values they were made from (their CRC-32) and to the check's eps, so
# that a solve stopped in its check goes on from that pass (the walk's last checkpoint says the walk
# had ended: its "walked" residual)
MARKS_FILE = "check-marks.npz"
# ... and, once a check has failed and its states were repaired alone, every state the solve's checks
# have flagged (``write_held``): the walk's undiscounted rounds end with a local repair of them all
# (``iteration.local_repair``), so that a resumed solve holds them repaired too
HELD_FILE = "repair-held.npy"
T = TypeVar("T")
CHECKPOINT_SHARE = 0.05  # the walk checkpoints every round unless that takes more than this share of the run
# ... and after the first round that ends this many seconds after the last checkpoint, whatever
# one costs: a write slowed by other work (seven pieces' 3.8 GB beside a busy machine) had spaced
# them an hour apart, all of it lost to a kill (at seven pieces' 30-60 s a write, under 3.5% of a run)
CHECKPOINT_MOST = 1800.0
# ... a write priced at the median of the last this many (one slowed tenfold by other work on the
# machine spaces the next ones as the usual write does)
CHECKPOINT_COSTS = 3
# a walk stopped this many seconds or more after its last round ended (and later than the skip's
# record would save its next run: ``Pacer.stop``) keeps the values it reached, without the record,
# instead of the last round's checkpoint: seven pieces' second-stage rounds take about half an hour
# and generate 99% of the states, so a session's end cut in a round lost up to 35 minutes of work to
# keep a record that saved the next run some 10 s. Below it a stop keeps the record (a short cut
# loses little, and a resumed walk then goes on bit for bit as the unstopped one)
STOP_KEEPS_AFTER = 300.0


def _put(tmp: Path, final: Path, nbytes: int) -> None:
    """``replace_synced``, synced where what the file belongs with holds ``nbytes`` of SYNC_FROM or
    more (a large solve's checkpoint: hours of work)."""
    replace_synced(tmp, final, nbytes >= SYNC_FROM)


def resumable(solve: Callable[..., T]) -> Callable[..., T]:
    """A solve stopped by Ctrl-C or SIGTERM (``KeyboardInterrupt``) ends as ``Interrupted``, which
    says what it left in its folder and that the same command resumes it."""

    @functools.wraps(solve)
    def run(game: StochasticGame, root: Path, *args: Any, **kwargs: Any) -> T:
        try:
            return solve(game, root, *args, **kwargs)
        except Interrupted:
            raise
        except KeyboardInterrupt:
            raise Interrupted(stopped_message(Path(root))) from None

    return run


class Pacer:
    """The walk's checkpoints: after every round, unless writing one takes more than
    CHECKPOINT_SHARE of the run (six pieces on a GPU: a round of about a second, a checkpoint of
    1 GB), then once that share of the time has passed since the last, or CHECKPOINT_MOST seconds
    if that comes first; and when the walk ends or is stopped (``stop``). A write costs the median
    of the last CHECKPOINT_COSTS writes' seconds (``cost``).

    ``keeper``, where given, is called at a round's checkpoint for the skip's state: (its record,
    its arrays by name), or None. The arrays go to SKIP_FILE and the record into the
    checkpoint, tied to its values by their CRC-32 (``values_crc``), so that a run stopped or
    killed anywhere in the writes resumes either with all of them or without the record."""

    def __init__(self, root: Path, values: np.ndarray,
                 keeper: Callable[[], tuple[dict[str, Any], dict[str, np.ndarray]] | None] | None = None,
                 worth: Callable[[], float] | None = None) -> None:
        self.root, self.values = root, values
        self.info: dict[str, Any] | None = None  # the last round's, written or not
        self.costs: list[float] = []  # the last CHECKPOINT_COSTS writes' seconds
        self.last = time.perf_counter()
        self.ended = self.last  # when the last round ended (or the run resumed)
        self.keeper = keeper
        self.worth = worth  # the seconds a kept skip record would save the next run (``stop``)
        self.written = False  # whether the last round's checkpoint was written ...
        self.kept = False  # ... with the skip's record

    def resumed(self, info: dict[str, Any], kept: bool) -> None:
        """The checkpoint this run resumed from stands for the last round, written (with the skip's
        record where ``kept``), so that a stop in the run's first round is decided as in any other."""
        self.info, self.written, self.kept = info, True, kept
        self.last = self.ended = time.perf_counter()

    @property
    def cost(self) -> float:
        """What a checkpoint costs: the median of the last writes' seconds (0 before the first)."""
        return statistics.median(self.costs) if self.costs else 0.0

    def round(self, info: dict[str, Any], force: bool = False) -> None:
        self.info = info
        self.ended = time.perf_counter()
        self.written = False
        if force or time.perf_counter() - self.last >= min(self.cost / CHECKPOINT_SHARE, CHECKPOINT_MOST):
            self.write(round_end=True)

    def write(self, round_end: bool = False) -> None:
        """Write the values as they are with the last round's counts; at a round's end
        (``round_end``), with the skip's record where ``keeper`` gives one."""
        if self.info is None:
            return
        t0 = time.perf_counter()
        kept = self.keeper() if round_end and self.keeper is not None else None
        if kept is None:
            write_checkpoint(self.root, self.values, self.info)
        else:
            record, arrays = kept
            crc = values_crc(self.values)
            write_skip_file(self.root, arrays, int(record["round"]), crc)
            write_checkpoint(self.root, self.values, {**self.info, "skip": {**record, "crc": crc}})
        self.written, self.kept = round_end, kept is not None
        self.last = time.perf_counter()
        self.costs = [*self.costs, self.last - t0][-CHECKPOINT_COSTS:]

    def stop(self) -> None:
        """The checkpoint of a walk that stops between rounds' checkpoints (Ctrl-C, SIGTERM, or no
        convergence): the values as they are, with the last round's counts and its seconds and the
        stopped round's; except where the last round's was written with the skip's record and the
        stopped round is worth less than it (``keeps_record``): then that checkpoint stays and the
        stopped round's progress is dropped (the resumed run's first full sweep skips instead of
        regenerating every state)."""
        if self.info is None:
            return
        since = time.perf_counter() - self.ended
        if self.written and self.kept and keeps_record(since, self.worth() if self.worth is not None else 0.0):
            return
        seconds = self.info.get("seconds")
        if isinstance(seconds, (int, float)):
            self.info = {**self.info, "seconds": round(float(seconds) + since, 3)}
        self.write()


def keeps_record(since: float, worth: float) -> bool:
    """Whether a walk stopped ``since`` seconds after its last round ended keeps that round's
    checkpoint with the skip's record, which would save its next run's first full sweep ``worth``
    seconds, rather than the values it reached since (without the record): under STOP_KEEPS_AFTER,
    or where the record saves more. (The values reached are a partial round: a resumed walk starts
    its round again from them, so the round's seconds buy progress, not the round's end.)"""
    return since < STOP_KEEPS_AFTER or worth >= since


def values_crc(values: np.ndarray) -> int:
    """The CRC-32 of the values' bytes: what ties the skip's record to the checkpoint's values
    (2.4 GB in about 0.3 s)."""
    return zlib.crc32(np.ascontiguousarray(values).data)


_SKIP_TIES = ("round", "crc")  # what ties the skip's arrays to a record, beside them in SKIP_FILE


def write_skip_file(root: Path, arrays: dict[str, np.ndarray], round_: int, crc: int) -> None:
    """The skip's arrays (``Skip.arrays``: its lead and stamp bytes; ``BlockSkip.arrays``: its
    carried leads and blocks' movements) with the round and the values' CRC they belong to, written
    under a temporary name and renamed into place (before the checkpoint that records them)."""
    if any(name in _SKIP_TIES for name in arrays):
        raise ValueError(f"the skip's arrays cannot be named {' or '.join(_SKIP_TIES)}")
    tmp = root / (SKIP_FILE + ".tmp")
    try:
        with open(tmp, "wb") as f:
            named: dict[str, Any] = {**arrays, "round": np.int64(round_), "crc": np.int64(crc)}
            np.savez(f, **named)
        _put(tmp, root / SKIP_FILE, sum(a.nbytes for a in arrays.values()))
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise TableWriteError(f"cannot write the checkpoint in {root}: {exc.strerror or exc}") from None


def read_skip_file(root: Path, record: dict[str, Any]) -> dict[str, np.ndarray] | None:
    """The skip's arrays beside a checkpoint whose skip record is ``record``, by name; None where
    the file is missing, unreadable, or written for another round or other values. (Which arrays
    and their shapes are the skip's to check: ``skip.Skip.restore``, ``skip.BlockSkip.restore``.)"""
    try:
        with np.load(root / SKIP_FILE, allow_pickle=False) as f:
            if int(f["round"]) != int(record["round"]) or int(f["crc"]) != int(record["crc"]):
                return None
            return {name: f[name] for name in f.files if name not in _SKIP_TIES}
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile):
        return None


def write_marks(root: Path, good: np.ndarray, passes: int, eps: float, crc: int) -> None:
    """The endless check's marks after ``passes`` passes over values whose CRC-32 is ``crc``, at
    ``eps``: written under a temporary name and renamed into place."""
    tmp = root / (MARKS_FILE + ".tmp")
    try:
        with open(tmp, "wb") as f:
            np.savez(f, good=good, passes=np.int64(passes), eps=np.float64(eps), crc=np.int64(crc))
        _put(tmp, root / MARKS_FILE, good.nbytes)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise TableWriteError(f"cannot write the endless check's marks in {root}: {exc.strerror or exc}") from None


def read_marks(root: Path, n: int, eps: float, crc: int) -> tuple[np.ndarray, int] | None:
    """The endless check's kept marks and their passes where MARKS_FILE holds n of them made at
    ``eps`` from the values whose CRC-32 is ``crc``; else (missing, unreadable, or of other values:
    a repair's) None."""
    found = _kept_marks(root, crc, lambda f: (f["good"], int(f["passes"])) if float(f["eps"]) == float(eps) else None)
    if found is None:
        return None
    good, passes = found
    if good.shape != (n,) or good.dtype != np.uint8 or passes < 1:
        return None
    return np.ascontiguousarray(good), passes


def marks_passes(root: Path, crc: int) -> int | None:
    """The passes of the endless check whose marks MARKS_FILE keeps (read without the marks) where
    they were made from the values whose CRC-32 is ``crc``, else None."""
    return _kept_marks(root, crc, lambda f: int(f["passes"]))


def _kept_marks(root: Path, crc: int, read: Callable[[Any], Any]) -> Any:
    """``read`` of the open MARKS_FILE where its marks were made from the values whose CRC-32 is
    ``crc``; None where they were not, or the file is missing or unreadable."""
    try:
        with np.load(root / MARKS_FILE, allow_pickle=False) as f:
            return read(f) if int(f["crc"]) == int(crc) else None
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile):
        return None


def write_held(root: Path, states: np.ndarray) -> None:
    """Keep ``states`` (sorted ranks) as the states the walk's rounds repair (HELD_FILE): written
    under a temporary name and renamed into place."""
    tmp = root / (HELD_FILE + ".tmp")
    try:
        with open(tmp, "wb") as f:
            np.save(f, np.ascontiguousarray(states, dtype=np.int64))
        _put(tmp, root / HELD_FILE, _size_of(root / CHECKPOINT))  # (synced as the checkpoint it goes with)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise TableWriteError(f"cannot write the repaired states in {root}: {exc.strerror or exc}") from None


def read_held(root: Path, n: int) -> np.ndarray:
    """The states HELD_FILE keeps, where it holds sorted distinct ranks below ``n``; else none."""
    try:
        held = np.load(root / HELD_FILE, allow_pickle=False)
    except (OSError, ValueError):
        return np.zeros(0, dtype=np.int64)
    if (held.ndim != 1 or held.dtype != np.int64 or (held.size and (held[0] < 0 or held[-1] >= n))
            or np.any(np.diff(held) <= 0)):
        return np.zeros(0, dtype=np.int64)
    return held


def _size_of(path: Path) -> int:
    """The file's bytes, 0 where it is missing."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def keeps_skip(root: Path) -> bool:
    """Whether the checkpoint in ``root`` keeps the skip's record (so its policy file is kept)."""
    try:
        info = json.loads((root / CHECKPOINT_INFO).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(info, dict) and isinstance(info.get("skip"), dict)


def drop_skip_record(root: Path) -> None:
    """Take the skip's record out of the checkpoint in ``root`` (its values and counts kept) and
    remove its bytes: done before a run that does not take the record up writes into the policy
    file, so that no later run pairs the record with rows it did not keep."""
    info_file = root / CHECKPOINT_INFO
    try:
        info = json.loads(info_file.read_text())
        if isinstance(info, dict) and "skip" in info:
            del info["skip"]
            tmp = root / (CHECKPOINT_INFO + ".tmp")
            tmp.write_text(json.dumps(info))
            _put(tmp, info_file, _size_of(root / CHECKPOINT))
        (root / SKIP_FILE).unlink(missing_ok=True)
    except (OSError, ValueError) as exc:
        raise TableWriteError(f"cannot rewrite the checkpoint in {root}: {getattr(exc, 'strerror', None) or exc}") from None


def kept_policy(root: Path, n: int, nrolls: int) -> np.memmap | None:
    """The stopped run's policy rows, mapped from POLICY_FILE where it holds int32[n, nrolls];
    None where it does not (a resumed walk then drops the skip's record before it makes a new
    file: ``drop_skip_record``)."""
    try:
        kept = np.lib.format.open_memmap(root / POLICY_FILE, mode="r+")
    except (OSError, ValueError):
        return None
    return kept if kept.shape == (n, nrolls) and kept.dtype == np.int32 else None


def stopped_message(root: Path) -> str:
    """What a stopped solve leaves in ``root`` and how to go on: the same command resumes from the
    checkpoint (or, where none was written yet, starts over); deleting the folder frees the disk."""
    policy_kept = keeps_skip(root)  # (else the policy, if still there, is removed)
    kept = [p for p in root.iterdir() if p.name != POLICY_FILE or policy_kept] if root.is_dir() else []
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


def report(root: Path, header: dict[str, Any]) -> dict[str, Any]:
    """What a solve's folder holds, read without disturbing a solve that runs there: whether one
    holds it now (``running``: the lock's note, else None), whether a finished table is there, the
    checkpoint's counts (None where there is none; ``{"unreadable": why}`` where it cannot be
    read), whether it belongs to ``header``'s options (else the same command would start over),
    and the bytes the folder's files take; ``blocks``, where the skip's blocks are kept there
    (BLOCKS_FILE): their bytes and whether they belong to ``header``'s options (a run with them
    reads them rather than finding them again, checkpoint or none)."""
    out: dict[str, Any] = {"folder": str(root), "exists": root.is_dir(), "running": holder(root),
                           "table": (root / "header.json").is_file(), "checkpoint": None,
                           "bytes": _folder_bytes(root)}
    blocks = root / BLOCKS_FILE
    if blocks.is_file():
        out["blocks"] = {"bytes": blocks.stat().st_size,
                         "same_options": skip.blocks_game(blocks) == skip.blocks_id(header)}
    info_file = root / CHECKPOINT_INFO
    if not info_file.is_file():
        return out
    try:
        info = json.loads(info_file.read_text())
        if not isinstance(info, dict):
            raise ValueError("not a JSON object")
        ck: dict[str, Any] = {"sweeps": int(info.get("sweeps", 0)), "method": str(info.get("method", "sweeps")),
                              "change": float(info["change"]) if info.get("change") is not None else None,
                              "seconds": _seconds(info), "same_options": info.get("options") == header}
        if ck["method"] == "walk":
            discounts = [float(d) for d in info.get("discounts", schedule.FIRST_WALK_DISCOUNTS)]
            stage = int(info.get("stage", 0))
            if not 0 <= stage <= len(discounts):
                raise ValueError(f"stage {stage} outside the walk's {len(discounts) + 1} stages")
            ck.update({"stage": stage, "stages": len(discounts) + 1, "skip_kept": isinstance(info.get("skip"), dict),
                       "early_aims": bool(info.get("early_aims", True)), "repairs": int(info.get("repairs", 0)),
                       "rounds": round_rows(info), "discounts": discounts,
                       "tolerance": float(info["tolerance"]) if info.get("tolerance") is not None else None,
                       "policy_sweeps": int(info.get("policy_sweeps", 0)),
                       "discount_gap": discounts[stage] if stage < len(discounts) else 0.0})
            if isinstance(info.get("aims"), list) and info["aims"]:  # the early aims the run that wrote it ran with
                ck["aims"] = [float(a) for a in info["aims"]]
            if info.get("walked") is not None:  # the walk's last checkpoint: the endless check next
                ck["walked"] = float(info["walked"])
                crc = info.get("walked_crc")
                ck["check_passes"] = marks_passes(root, int(crc)) if crc is not None else None
            if tuple(discounts) == tuple(schedule.WALK_DISCOUNTS) and info.get("tolerance") is not None:
                # where this build ends the stage (an undiscounted one: the residual it ends below)
                ck["ends_at"] = schedule.stage_end(stage, float(info["tolerance"]), ck["early_aims"],
                                                   tuple(ck["aims"]) if "aims" in ck else None)
        if "tier" in info:
            ck.update({"tier": int(info["tier"]), "tiers": int(info.get("tiers", 0))})
    except (OSError, ValueError, TypeError) as exc:
        out["checkpoint"] = {"unreadable": f"{type(exc).__name__}: {exc}"}
        return out
    out["checkpoint"] = ck
    return out


def _folder_bytes(root: Path) -> int:
    """The bytes of the files under ``root``; a file that a running solve renames or removes while
    they are counted (its checkpoint's temporaries) counts nothing."""
    total = 0
    for p in root.rglob("*") if root.is_dir() else ():
        try:
            if p.is_file():
                total += p.stat().st_size
        except OSError:
            pass
    return total


def _seconds(info: dict[str, Any]) -> float:
    """A checkpoint's ``seconds``; 0 where it has none or one that is not a count of seconds (the
    clock is a figure for the log and the header: it never costs a run its checkpoint)."""
    try:
        seconds = float(info.get("seconds", 0.0))
    except (TypeError, ValueError):
        return 0.0
    return seconds if math.isfinite(seconds) and seconds >= 0 else 0.0


def _size(nbytes: int) -> str:
    return f"{nbytes / 2**30:.2f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.1f} MiB"


def write_checkpoint(root: Path, values: np.ndarray, info: dict[str, Any]) -> None:
    """Write the values and the run's state under temporary names, then rename them into place;
    an OS error (a full disk) removes the temporaries and ends the run with one line."""
    info = {"format": CHECKPOINT_FORMAT, **info}
    tmp = root / (CHECKPOINT + ".tmp")
    tmp_info = root / (CHECKPOINT_INFO + ".tmp")
    try:
        with open(tmp, "wb") as f:
            np.save(f, values, allow_pickle=False)
        tmp_info.write_text(json.dumps(info))
        _put(tmp, root / CHECKPOINT, values.nbytes)
        _put(tmp_info, root / CHECKPOINT_INFO, values.nbytes)
        if "skip" not in info:  # lead and stamp bytes of an earlier round: no longer the checkpoint's
            (root / SKIP_FILE).unlink(missing_ok=True)
    except OSError as exc:
        for t in (tmp, tmp_info):
            try:
                t.unlink()
            except OSError:
                pass
        raise TableWriteError(f"cannot write the checkpoint in {root}: {exc.strerror or exc}") from None


class Resumed(NamedTuple):
    """Where a solve goes on from: its checkpoint's values and counts (all 0 for a fresh start)."""

    values: np.ndarray
    sweeps: int  # full sweeps done
    stage: int  # the walk's stage
    cheap: int  # policy sweeps done
    tier: int  # tiers done (a tiered run)
    hot: int  # states swept in the walk's hot sets, all of them together
    # the solve's seconds in its earlier runs up to this checkpoint: the rounds it keeps (a round
    # that a stop cut short is not counted)
    seconds: float = 0.0
    # the skip's record (``Pacer``), where the checkpoint keeps one for its values (their CRC)
    skip: dict[str, Any] | None = None
    # the walk's rounds, a row each (``walk.round_row``), where the checkpoint keeps them
    rounds: list[dict[str, Any]] = []
    # False where the checkpoint is of a repair's walk, whose every discounted stage ends at
    # tolerance / 10 (``schedule.stage_end``)
    early: bool = True
    # the endless-check repairs the solve had made (a walk's checkpoint keeps them where any were)
    repairs: int = 0
    # the residual at which the walk had ended, where the checkpoint is its last (the endless check
    # comes next), else None
    walked: float | None = None


ROW_FIELDS = {"sweep": int, "stage": int, "change": float, "full_s": float, "round_s": float, "clock": float}


def row_walk(row: dict[str, Any]) -> tuple[int, bool, int]:
    """A round row's stage, whether it is a round of the walk that repairs a false solution, and the
    endless-check repairs made before it: the rounds of one stage of one walk since one repair
    (a stage's rounds after a local repair start again from the repaired values), which the
    outlook, ``solve --status`` and the plot take together."""
    return int(row["stage"]), bool(row.get("repair")), int(row.get("repairs", 0))


def walk_words(repair: bool, repairs: int) -> str:
    """How ``solve --status`` and the plot tell apart the rounds of one stage (``row_walk``): those
    of the repair's walk, and those after ``repairs`` local repairs of the first walk."""
    if repair:
        return " of the repair"
    return f" after {repairs} local repair{'s' if repairs != 1 else ''}" if repairs else ""


def round_rows(info: dict[str, Any]) -> list[dict[str, Any]]:
    """The walk's rounds a checkpoint keeps (``walk.round_row``), each checked to hold its numbers;
    [] where it keeps none (a checkpoint of an older build) or they cannot be read."""
    rows = info.get("rounds")
    if not isinstance(rows, list):
        return []
    out = []
    try:
        for row in rows:
            got: dict[str, Any] = {key: kind(row[key]) for key, kind in ROW_FIELDS.items()}
            got["generated"] = None if row.get("generated") is None else float(row["generated"])
            if "policy_sweeps" in row:  # (rows of builds before the walk's top-up have none)
                got["policy_sweeps"] = int(row["policy_sweeps"])
                got["evaluated"] = None if row.get("evaluated") is None else float(row["evaluated"])
            if row.get("repair"):  # a round of the walk that repairs a false solution
                got["repair"] = True
            if row.get("damped"):  # its full sweep was damped
                got["damped"] = True
            if row.get("repairs"):  # after that many endless-check repairs
                got["repairs"] = int(row["repairs"])
            if row.get("greedy"):  # its greedy sweeps of the hot set
                got["greedy"] = int(row["greedy"])
                if "greedy_s" in row:  # ... their hot set's size and seconds (rows of older builds have none)
                    got["greedy_states"] = int(row["greedy_states"])
                    got["greedy_s"] = float(row["greedy_s"])
            out.append(got)
    except (KeyError, TypeError, ValueError):
        return []
    return out


def so_far(spent: float, earlier: float) -> str:
    """A round log's clock: this run's seconds, and where the solve was resumed, its seconds in
    all (its earlier runs' up to the checkpoint it resumed from, as that recorded them)."""
    if not earlier:
        return f"{spent:.1f} s so far"
    return f"{spent:.1f} s this run, {earlier + spent:,.1f} s in all"


def _skip_record(info: dict[str, Any], values: np.ndarray, log: Log | None) -> dict[str, Any] | None:
    """A checkpoint's skip record where it belongs to its values (their CRC-32: a run stopped
    between writing the values and the record leaves values of another round), else None."""
    record = info.get("skip")
    if not isinstance(record, dict):
        return None
    try:
        if int(record["crc"]) == values_crc(values):
            return record
    except (KeyError, TypeError, ValueError):
        pass
    if log:
        log("the checkpoint's skip record belongs to other values: its first full sweep generates every state")
    return None


def resume(root: Path, header: dict[str, Any], n: int, method: str,
            log: Log | None = None, dtype: str = "float32",
            tiered: bool = False) -> Resumed:
    """Values and counts from a checkpoint of the same game. A tiered run resumes only from a
    tiered run's checkpoint, at the range after the last it finished; a walk resumes in its stage
    only from a walk's checkpoint (else from the start of the walk, with the checkpoint's values).
    A checkpoint that cannot be read, or belongs to other options, is said so in the log and the
    run starts from sweep 0. (A ``products`` count, written by older solves, is ignored; a
    checkpoint without ``seconds``, written before checkpoints kept them, counts none.)"""
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
                stage = schedule.walk_stage(info) if same else 0
                values = np.ascontiguousarray(values)
                return Resumed(values, sweeps, stage, int(info.get("policy_sweeps", 0)),
                               int(info.get("tier", 0)), int(info.get("hot_states", 0)),
                               _seconds(info), _skip_record(info, values, log) if same else None,
                               round_rows(info) if same else [], bool(info.get("early_aims", True)) or not same,
                               int(info.get("repairs", 0)) if same else 0,
                               float(info["walked"]) if same and info.get("walked") is not None else None)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            why = f"it cannot be read ({type(exc).__name__}: {exc})"
        if log:
            log(f"warning: ignoring the checkpoint in {root}: {why}; starting from sweep 0")
    return Resumed(np.zeros(n, dtype=np.dtype(dtype)), 0, 0, 0, 0, 0)
