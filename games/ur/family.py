"""What a rule family of Ur provides, so that the commands, the Python API and the server ask one
interface and never which family they hold.

Two families implement it: the fort rules (``games.ur.fort_family``: board and dice data files,
proofs, the Ray and GPU engines) and RoyalUr's rule sets Finkel, Blitz and Masters
(``games.ur.royal_family``: ``.rgu`` files, float64 tier-by-tier solves). ``games.ur.api.family``
picks one from a ``--rules`` name. Each verb answers with a ``Reply``: the ``--json`` object and the lines
of text a terminal shows, so nothing here or in a family prints, parses options or knows HTTP.
Options one family does not take are refused by it with a one-line ``InputError``.
"""
from __future__ import annotations

import os
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TextIO

from gamesolver.solver.limits import duration
from gamesolver.solver.stochastic import checkpoint
from gamesolver.solver.stochastic import schedule, walk
from gamesolver.solver.stochastic.rounds_plot import plot_rounds
from gamesolver.solver.stochastic.engine import Log
from gamesolver.games.ur.tables import RoyalTable, UrTable
from gamesolver.solver.errors import InputError, MissingTableError

PathArg = str | os.PathLike[str]


@dataclass
class Reply:
    """One command's answer: ``fields`` for --json, ``lines`` for the terminal, ``notes`` for its
    standard error (a file written, say), and ``ok`` False where the command must exit 1 after
    showing it (a check that failed)."""

    fields: dict[str, Any]
    lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ok: bool = True


class QueryRefused(MissingTableError):
    """A query that cannot answer without a table it will not build: the one-line message, and the
    fields a --json caller is answered with instead (``{"error": message, **fields}``)."""

    def __init__(self, message: str, fields: dict[str, Any]) -> None:
        super().__init__(message)
        self.fields = fields


@dataclass(frozen=True)
class Where:
    """Where a query reads its values: ``table`` (--table: a folder, or a RoyalUr ``.rgu`` file),
    ``cache`` (--cache), ``opening`` (--opening FILE), ``solve_first`` (--solve: solve a missing
    table, however large, then answer), and ``log`` for the progress of such a solve."""

    table: str | None = None
    cache: str | None = None
    opening: str | None = None
    solve_first: bool = False
    log: Log | None = None


@dataclass(frozen=True)
class SolveAsk:
    """``ur solve``'s settings; each family refuses those it does not take."""

    out: str | None = None
    cache: str | None = None
    tolerance: float | None = None
    threads: int | None = None
    method: str = "walk"
    method_given: bool = False
    policy_place: str = "auto"
    graph: str = "auto"
    backend: str = "cpu"
    address: str | None = None
    workers: int | None = None
    proof: bool | None = None
    width: float | None = None
    log: Log | None = None
    local_repairs: int | None = None  # None: the engine's default (iteration.LOCAL_REPAIRS)


@dataclass(frozen=True)
class CheckAsk:
    """``ur check``'s settings; each family refuses those it does not take."""

    table: str | None = None
    cache: str | None = None
    eps: float | None = None
    threads: int | None = None
    graph: str = "auto"
    bounds: bool = False
    bounds_sweeps: int = 300
    refine: int = 2
    width: float | None = None
    record: bool = False
    quiet: bool = False
    log: Log | None = None


@dataclass(frozen=True)
class ExportAsk:
    """``ur export``'s settings: ``out`` None writes a CSV to ``stdout``."""

    fmt: str = "csv"
    table: str | None = None
    cache: str | None = None
    out: str | None = None
    reachable: bool = False
    threads: int | None = None
    as_json: bool = False
    value_type: str = "percent16"
    solve_first: bool = False
    stdout: TextIO | None = None
    log: Log | None = None


@dataclass(frozen=True)
class Cached:
    """How a long-running caller (the server) gets a family's table from its cache folder:
    ``key`` and ``label`` name it, ``open`` raises MissingTableError where it is missing, ``build``
    solves it into the cache (None: too large to solve on first use, refused with ``message``)."""

    key: str
    label: str
    open: Callable[[], Any]
    build: Callable[[Log], None] | None
    message: str = ""


def table_key(name: str, pieces: int) -> str:
    """What a long-running caller names a family's table by: the rule set and the piece count."""
    return f"ur-{name}-k{pieces}"


class Family(ABC):
    """One rule family with its settings (a piece count, and for the fort rules a board and dice)."""

    name: str
    pieces: int

    @property
    def key(self) -> str:
        """``table_key`` of these settings: ``cached``'s key, known without building its message."""
        return table_key(self.name, self.pieces)

    # the verbs of ``solver ur``
    @abstractmethod
    def show(self, position: str) -> Reply:
        """The position drawn on the board; --json: the tiles each side holds and the side to move."""

    @abstractmethod
    def best_move(self, position: str, roll: str, where: Where) -> Reply:
        """Every legal action for ``roll`` with its value, best first, and the extra roll as a field."""

    @abstractmethod
    def analyze(self, position: str, where: Where) -> Reply:
        """The value before the roll, and each roll's best action with its value."""

    @abstractmethod
    def graph(self) -> Reply:
        """The state counts, per tier."""

    @abstractmethod
    def solve(self, ask: SolveAsk) -> Reply:
        """Solve (or resume solving) and write the table."""

    @abstractmethod
    def solve_folder(self, out: str | None, cache: str | None) -> tuple[Path, dict[str, Any]]:
        """Where ``solve`` with these ``--out``/``--cache`` writes, and the options its checkpoint
        must name for the solve to resume from it."""

    def solve_status(self, out: str | None, cache: str | None, plot: str | None = None) -> Reply:
        """``ur solve --status``: what the folder ``solve`` would write holds, read without
        disturbing a solve running there (``solver.stochastic.checkpoint.report``); ``plot``: a
        PNG to draw the walk's rounds to (``rounds_plot``)."""
        root, header = self.solve_folder(out, cache)
        reply = status_reply(checkpoint.report(root, header))
        if plot is not None:
            ck = reply.fields["checkpoint"]
            if ck is None or "unreadable" in ck or "stage" not in ck:
                raise InputError(f"--plot: {root} holds no walk's checkpoint whose rounds could be drawn")
            title = f"{'fort rules' if self.name == 'fort' else self.name}, {self.pieces} pieces"
            drawn = plot_rounds(ck["rounds"], ck["discounts"], ck.get("tolerance"), plot, title, ck.get("aims"))
            reply.fields["plot"] = str(drawn)
            reply.notes.append(f"drew its rounds to {drawn}")
        return reply

    @abstractmethod
    def check(self, ask: CheckAsk) -> Reply:
        """Check a table against the game's equations and endless play; ``ok`` False when it fails."""

    @abstractmethod
    def export(self, ask: ExportAsk) -> Reply:
        """Write every position of a solved table with its value."""

    @abstractmethod
    def opening_build(self, turns: int, out: str, table: str | None, cache: str | None,
                      log: Log | None = None) -> Reply:
        """Write the opening file of a solved table."""

    @abstractmethod
    def opening_info(self, file: str) -> Reply:
        """What an opening file holds and the table it was built from."""

    # the server: the same answers, with what a board on a page draws beside them
    @abstractmethod
    def board(self, cache: str | None, is_open: Callable[[str], bool]) -> dict[str, Any]:
        """The board's tiles, sides, rolls (and paths) as a page lays them out, and ``solved``: the
        piece counts answered at once (a table open (``is_open`` of its ``table_key``) or in
        ``cache``, or an opening file shipped)."""

    @abstractmethod
    def cached(self, cache: str | None) -> Cached:
        """How to open (or solve on first use) the table in ``cache``."""

    @abstractmethod
    def served(self, what: str, position: str, roll: str | None, read: Callable[[], Any], table_open: bool,
               cache: str | None) -> dict[str, Any]:
        """``show``, ``analyze`` or ``best-move`` (``roll``) as the --json answer, with the pieces on
        the tiles (``view``) and each action's position after it. ``read()`` opens the table;
        while it is not open (``table_open``), the opening file shipped for these settings answers
        where a query would answer from it. A position beyond that file is ``QueryRefused``."""

    # the Python API
    @abstractmethod
    def parse(self, text: str) -> Any:
        """A position in the family's notation, or 'start'."""

    @abstractmethod
    def open_table(self, path: PathArg | None, cache: PathArg | None) -> UrTable | RoyalTable:
        """The table at ``path`` (default: the cache); never solves."""

    @abstractmethod
    def open_opening(self, path: PathArg | None) -> UrTable | RoyalTable:
        """An opening file (default: the one shipped for these settings)."""

    @abstractmethod
    def solve_table(self, out: PathArg | None, cache: PathArg | None, **settings: Any) -> UrTable | RoyalTable:
        """Solve (or resume solving), write the table, and open it."""


def status_reply(found: dict[str, Any]) -> Reply:
    """``solve_status``'s answer from a folder's ``report``: whether a solve runs there, what its
    checkpoint says (the walk's stage and round, the largest change, the time of the rounds it
    keeps), and how to go on."""
    root, ck = found["folder"], found["checkpoint"]
    lines = [f"{root}: a solve is running there ({found['running']})" if found["running"]
             else f"{root}: no solve is running there"]
    if found["table"]:
        lines.append("it holds a finished table: queries read it with --table " + root)
    if ck is None and not found["table"]:
        lines.append("nothing to resume: no checkpoint" + ("" if found["exists"] else " (no such folder yet)")
                     + "; the solve command starts from the beginning")
    elif ck is not None and "unreadable" in ck:
        lines.append(f"its checkpoint cannot be read ({ck['unreadable']}): the solve command would start over")
    elif ck is not None:
        if "stage" in ck:
            stage = schedule.stage_words(ck["discount_gap"], ck.get("ends_at"))
            repair = "" if ck.get("early_aims", True) else " of the walk that repairs a false solution"
            where = f"the walk's stage {ck['stage'] + 1} of {ck['stages']}{repair} ({stage})"
        elif "tier" in ck:
            where = f"{ck['tier']} of {ck['tiers']} tier groups done"
        else:
            where = "plain sweeps"
        change = f", largest change {ck['change']:.3g}" if ck["change"] is not None else ""
        took = (f"; {duration(ck['seconds'])} of solving in the rounds it keeps" if ck["seconds"]
                else "" if not ck["sweeps"] else "; its time is not recorded (a checkpoint of an older build)")
        lines.append(f"checkpoint after sweep {ck['sweeps']}: {where}{change}{took}")
        if ck.get("walked") is not None:
            passes = ck.get("check_passes")
            kept = f", from the marks it kept after pass {passes}" if passes else ""
            lines.append(f"the walk has ended there (residual {ck['walked']:.3g}): the endless check comes next{kept}")
        lines += rounds_lines(ck)
        if not ck["same_options"]:
            lines.append("the checkpoint belongs to other options: this command would ignore it and start over")
        elif not found["running"]:
            kept = ""
            if ck.get("skip_kept") and walk.records_after(None, ck["change"]):
                kept = (" (its first full sweep generating only what can have changed: the checkpoint keeps the "
                        "skip's leads and the walk's policy)")
            elif ck.get("skip_kept"):  # (kept by an older build after a round that moved the values much)
                kept = (f" (its first full sweep generating every state: the last round moved the values by "
                        f"{ck['change']:.3g}, too much for the skip's record it keeps to prove anything)")
            lines.append("the same command without --status resumes from it" + kept)
    blocks = found.get("blocks")
    if blocks and not found["table"]:
        lines.append(f"the skip's blocks are kept there ({blocks['bytes'] / 2**20:,.0f} MiB): "
                     + ("a run that skips by them (SOLVER_WALK_SKIP=blocks) reads them instead of finding them again"
                           if blocks["same_options"]
                        else "they belong to other options, so a run here finds its own again"))
    lines.append(f"files: {found['bytes'] / 2**30:.2f} GiB")
    return Reply(found, lines)


def rounds_lines(ck: dict[str, Any]) -> list[str]:
    """What the checkpoint's history of the walk's rounds says (``walk.round_row``): the rounds of
    each stage and how far their largest change fell, what the last round took, and, within a
    stage, the round log's outlook for its end. None where the checkpoint keeps no rounds (one
    written by an older build)."""
    rows = ck.get("rounds") or []
    if not rows:
        return []
    stages: dict[tuple[int, bool, int], list[dict[str, Any]]] = {}  # (checkpoint.row_walk)
    for row in rows:
        stages.setdefault(checkpoint.row_walk(row), []).append(row)
    parts = [f"stage {k + 1}{checkpoint.walk_words(repair, n)}: {len(r)} (largest change {r[0]['change']:.3g}"
             + (f" to {r[-1]['change']:.3g})" if len(r) > 1 else ")") for (k, repair, n), r in stages.items()]
    last = rows[-1]
    generated = f", {last['generated']:.1%} generated" if last["generated"] is not None else ""
    policies = f", {last['policy_sweeps']} policy sweeps of every state" if last.get("policy_sweeps") else ""
    if last.get("greedy"):
        policies += f", {last['greedy']} greedy sweeps of the hot set"
        if "greedy_s" in last:  # (a row of an older build says only how many)
            policies += f" ({last['greedy_states']:,} states, {last['greedy_s']:.1f} s)"
    since = f" since sweep {rows[0]['sweep']}" if rows[0]["sweep"] > 1 else ""
    out = [f"rounds kept{since}: {'; '.join(parts)}; the last took {duration(last['round_s'])} "
           f"(full sweep {last['full_s']:.1f} s{generated}{policies})"]
    now = (ck.get("stage"), not ck.get("early_aims", True), int(ck.get("repairs", 0)))
    if now in stages and ck.get("ends_at") is not None:
        outlook = walk.Outlook(float(ck["ends_at"]), stall=bool(ck.get("discount_gap")))
        outlook.seed(stages[now])
        reading = outlook.reading(note=" (a reading of the rounds, not a bound)")
        if reading:
            out.append("outlook:" + reading[1:])
    if ck.get("stage") is not None:
        after = walk.after_reading(int(ck["stage"]), int(ck["stages"]), rows, ck.get("tolerance"))
        if after:
            out.append(f"after {'it' if len(out) > 1 else 'this stage'}: {after} (an estimate, not a bound)")
    return out


def refuse_options(family_name: str, **given: Any) -> None:
    """Options that belong to the fort rules only, refused with another family."""
    for name, value in given.items():
        if value is not None and value is not False:
            raise InputError(f"--{name} applies to the fort rules only, not to {family_name}")


def built_reply(out: str, turns: int, header: dict[str, Any], table_path: Any) -> Reply:
    """``ur opening build``'s answer, alike for both families: the file written and what it holds."""
    size = Path(out).stat().st_size
    return Reply({"out": out, "bytes": size, "turns": turns, "positions_answered": header["positions_answered"],
                  "positions_stored": header["positions_stored"],
                  "table_values_sha256": header["table"]["values_sha256"]},
                 [f"{out}: {header['positions_answered']:,} positions within {turns} turns of the start answered, "
                  f"{header['positions_stored']:,} values stored, {size:,} bytes; from table "
                  f"{header['table']['values_sha256'][:16]} at {table_path}"])
