"""The Ünee atlas: every variant in a range solved under the three repetition rules.

A variant is (holes per row, balls per hole, skip the origin or not, capture rows). For each one
the atlas builds the whole state graph (``graph.build_graph``), counts it and its part reachable
from the start (``graph.graph_summary``), finds its strongly connected components
(``cycles.cycle_summary``), solves it under ``uncounted``, ``draw`` and ``split``
(``solution.solve_arrays``) and reads the start off each solution: the value, the remoteness and
how best play ends (``UneeTable.principal_variation``), the draw rule's thresholds, the split
rule's certified bounds and, where a bounded search finds it, the exact split value
(``split.exact_value``). Nothing here solves anything itself.

Each variant's facts go to one small JSON file in the output folder (``h3-b6-noskip-own.json``),
written whole or not at all, so a stopped run resumes where it was: a variant whose file is
there is not solved again. ``summary.csv`` and ``summary.json`` gather every variant in the
folder. Before any work, ``plan`` sizes every variant exactly (boards and moves follow from
binomials) and estimates its memory and time, so a run that cannot fit is refused, or the
variants beyond the budget are left out, before it starts.
"""
from __future__ import annotations

import csv
import io
import json
import math
import multiprocessing
import os
import re
import resource
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from gamesolver.games.unee.rules import CAPTURE_ROWS, REPETITION_RULES, UneeOptions
from gamesolver.games.unee.solution import NEVER, UneeTable, solve_arrays, variant_key
from gamesolver.solver.errors import InputError
from gamesolver.solver.limits import duration_text
from gamesolver.solver.tables.table import Table
from gamesolver.games.unee.cycles import optimal_cycle
from gamesolver.games.unee.notation import start_position
from gamesolver.games.unee.split import EffortLimitReached, exact_value
from gamesolver.games.unee import cycles
from gamesolver.games.unee.graph import build_graph, graph_summary
from gamesolver.solver.tables.atomic import atomic_path, writable_folder

FORMAT = "unee-atlas-variant"
FORMAT_VERSION = 1
SUMMARY_CSV = "summary.csv"
SUMMARY_JSON = "summary.json"
DEFAULT_SPLIT_EFFORT = 1_000_000  # positions the exact split search from the start may visit
# the end of a game by a player who cannot move (their row is empty; the rest go to the opponent)
CAPTURE_OUT = "capture-out"
REPETITION = "repetition"

# Cost model, fitted to runs of the whole pipeline (graph, counts, components, three solves and the
# start's facts) on a 2-core machine, one variant at a time; N boards, E moves of one side (the
# CSR's edges). Memory: the graph (indptr 8 B a board; successor, hole and capture 6 B a move),
# plus the larger of the component search (Tarjan's arrays: 37 B per position, two positions a
# board) and the solves (the predecessor CSR, 8 B a board and 12 B a move, and the rules' arrays).
GRAPH_BYTES = (8.0, 6.0)
SCC_BYTES = (74.0 + 8.0, 0.0)
SOLVE_BYTES = (8.0 + 16.0, 12.0)
BASE_BYTES = 120 * 2**20
SECONDS_PER_BOARD = 2.6e-6
SECONDS_PER_MOVE = 0.35e-6
SECONDS_PER_VARIANT = 0.05
DEFAULT_MAX_BOARDS = 80_000_000
DEFAULT_MAX_GIB = 20.0
DEFAULT_MAX_MINUTES = 90.0


# ---------------------------------------------------------------- the range and its sizes


def parse_range(text: str, option: str, lo: int, hi: int) -> list[int]:
    """``"3"`` or ``"2..4"`` (also ``2-4``, ``2:4``) as the list of whole numbers, each in lo..hi."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:(?:\.\.|-|:)\s*(\d+)\s*)?", str(text))
    if m is None:
        raise InputError(f"{option} {text!r}: expected a number or a range like {lo}..{hi}")
    a = int(m.group(1))
    b = int(m.group(2)) if m.group(2) is not None else a
    if a > b:
        raise InputError(f"{option} {text}: the range runs backwards; expected {b}..{a}")
    if a < lo or b > hi:
        raise InputError(f"{option} {text}: expected values in {lo}..{hi}")
    return list(range(a, b + 1))


def variants(
    holes: Iterable[int],
    balls: Iterable[int],
    skip_origin: Iterable[bool] = (False, True),
    capture_rows: Iterable[str] = CAPTURE_ROWS,
) -> list[UneeOptions]:
    """Every combination, smallest board count first (ties: the traditional rules first)."""
    out = [UneeOptions(h, b, s, c) for h in holes for b in balls for s in skip_origin for c in capture_rows]
    return sorted(set(out), key=order_key)


def order_key(options: UneeOptions) -> tuple[Any, ...]:
    return (board_count(options), CAPTURE_ROWS.index(options.capture_rows), options.skip_origin,
            options.holes_per_row, options.balls_per_hole)


def board_count(options: UneeOptions) -> int:
    """Mover-relative boards with up to the variant's balls: C(balls + holes, holes)."""
    return math.comb(options.max_balls + options.holes, options.holes)


def edge_count(options: UneeOptions) -> int:
    """Moves of one side over every board: each of the mover's holes is a move on the boards where
    it is not empty, C(M + H, H) - C(M + H - 1, H - 1) of them (H holes, M balls)."""
    m, h = options.max_balls, options.holes
    return options.holes_per_row * (math.comb(m + h, h) - math.comb(m + h - 1, h - 1))


def memory_estimate(options: UneeOptions) -> int:
    """Peak bytes of one variant's run (see the cost model above)."""
    n, e = board_count(options), edge_count(options)

    def cost(per: tuple[float, float]) -> float:
        return per[0] * n + per[1] * e

    return int(BASE_BYTES + cost(GRAPH_BYTES) + max(cost(SCC_BYTES), cost(SOLVE_BYTES)))


def time_estimate(options: UneeOptions) -> float:
    """Seconds of one variant's run on one core of the reference machine."""
    return SECONDS_PER_VARIANT + SECONDS_PER_BOARD * board_count(options) + SECONDS_PER_MOVE * edge_count(options)


def label(options: UneeOptions) -> str:
    """``3 x 6`` with the sowing rules when they are not the traditional ones."""
    extra = []
    if options.skip_origin:
        extra.append("skip")
    if options.capture_rows != "own":
        extra.append(f"capture {options.capture_rows}")
    return f"{options.holes_per_row} x {options.balls_per_hole}" + (f" ({', '.join(extra)})" if extra else "")


# ---------------------------------------------------------------- the plan and its budget


@dataclass(frozen=True)
class Budget:
    """What a run may use: variants larger than ``max_boards`` or ``max_gib`` are left out; a run
    whose time estimate passes ``max_minutes`` is refused unless forced."""

    max_boards: int = DEFAULT_MAX_BOARDS
    max_gib: float = DEFAULT_MAX_GIB
    max_minutes: float = DEFAULT_MAX_MINUTES
    jobs: int = 1


@dataclass
class PlanItem:
    options: UneeOptions
    boards: int
    moves: int  # of both sides, as ``solver unee graph`` counts them
    memory: int
    seconds: float
    done: bool = False
    left_out: str | None = None  # why the budget leaves it out

    @property
    def key(self) -> str:
        return variant_key(self.options)

    def as_dict(self) -> dict[str, Any]:
        return {"variant": self.key, "label": label(self.options), "boards": self.boards, "moves": self.moves,
                "memory_gib": round(self.memory / 2**30, 2), "seconds": round(self.seconds, 1),
                "done": self.done, "left_out": self.left_out}


@dataclass
class Plan:
    items: list[PlanItem]
    budget: Budget
    out: Path

    @property
    def todo(self) -> list[PlanItem]:
        return [it for it in self.items if not it.done and it.left_out is None]

    @property
    def done(self) -> list[PlanItem]:
        return [it for it in self.items if it.done]

    @property
    def left_out(self) -> list[PlanItem]:
        return [it for it in self.items if it.left_out is not None]

    @property
    def seconds(self) -> float:
        """Wall-clock estimate of the work left, the variants shared among the jobs."""
        todo = self.todo
        if not todo:
            return 0.0
        total = sum(it.seconds for it in todo)
        return max(total / max(1, self.budget.jobs), max(it.seconds for it in todo))

    @property
    def peak_memory(self) -> int:
        """Estimated peak: the largest variants, ``jobs`` of them at once."""
        sizes = sorted((it.memory for it in self.todo), reverse=True)
        return sum(sizes[: max(1, self.budget.jobs)])

    def as_dict(self) -> dict[str, Any]:
        return {
            "out": str(self.out), "variants": len(self.items), "to_solve": len(self.todo), "done": len(self.done),
            "left_out": [it.as_dict() for it in self.left_out], "estimate_seconds": round(self.seconds, 1),
            "estimate_peak_gib": round(self.peak_memory / 2**30, 2),
            "budget": {"max_boards": self.budget.max_boards, "max_gib": self.budget.max_gib,
                       "max_minutes": self.budget.max_minutes, "jobs": self.budget.jobs},
        }


def make_plan(options: Sequence[UneeOptions], out: str | os.PathLike[str], budget: Budget = Budget(),
              redo: bool = False) -> Plan:
    """Size every variant, mark those already in ``out`` (unless ``redo``) and those the budget leaves out."""
    out = Path(out)
    items = []
    for o in options:
        it = PlanItem(o, board_count(o), 2 * edge_count(o), memory_estimate(o), time_estimate(o))
        if not redo and load_result(out, o) is not None:
            it.done = True
        elif it.boards > budget.max_boards:
            it.left_out = f"{it.boards:,} boards, more than --max-boards {budget.max_boards:,}"
        elif it.memory > budget.max_gib * 2**30:
            it.left_out = f"about {it.memory / 2**30:.1f} GiB, more than --max-gib {budget.max_gib:g}"
        items.append(it)
    return Plan(items, budget, out)


def check_plan(plan: Plan, force: bool = False) -> None:
    """Refuse a plan whose time or memory estimate passes the budget (``force`` runs it anyway)."""
    minutes = plan.seconds / 60
    if minutes > plan.budget.max_minutes and not force:
        raise InputError(
            f"the atlas would take {duration_text(plan.seconds)} for {len(plan.todo)} variants, more than "
            f"--max-minutes {plan.budget.max_minutes:g}; narrow the range, raise --max-minutes or pass --force"
        )
    if plan.peak_memory > plan.budget.max_gib * 2**30 and not force:
        raise InputError(
            f"{plan.budget.jobs} jobs at once would need about {plan.peak_memory / 2**30:.1f} GiB, more than "
            f"--max-gib {plan.budget.max_gib:g}; use fewer --jobs or pass --force"
        )


# ---------------------------------------------------------------- one variant


def _memory_table(arrays: dict[str, np.ndarray], options: UneeOptions, rule: str) -> Any:
    """A solved table held in memory, with the queries of ``UneeTable`` (nothing written)."""
    header = {"game": "unee", "rule": rule, "options": options.as_dict(), "state_count": len(next(iter(arrays.values())))}
    return UneeTable(Table(Path("(memory)"), header, arrays), options)


def _line_facts(table: Any, start: Any, rule: str) -> dict[str, Any]:
    """How the table's best play from the start ends: the end, its length, the repeated cycle."""
    lead, cyc = optimal_cycle(table, start)
    plies = lead.length + (cyc.length if cyc else 0)
    line = table.principal_variation(start)
    return {
        "end": REPETITION if cyc is not None else (CAPTURE_OUT if line.end == "no-move" else line.end),
        "plies": plies,
        "cycle": cyc.length if cyc is not None else None,
        "lead_in": lead.length if cyc is not None else None,
        "captures": sum(1 for c in lead.captures + (cyc.captures if cyc else []) if c),
        "final_difference": line.final_difference(rule),
        "moves": [m.move for m, _ in line.plies],
    }


def start_facts(arrays: dict[str, np.ndarray], graph: Any, rule: str, split_effort: int) -> dict[str, Any]:
    """What the solution under ``rule`` says about the start (South to move, nothing captured)."""
    options = graph.options
    start = start_position(options)
    rank = graph.rank(start)
    table = _memory_table(arrays, options, rule)
    if rule == "uncounted":
        facts: dict[str, Any] = {"value": int(arrays["value"][rank]), "remoteness": int(arrays["remoteness"][rank]),
                                 "cycling": bool(arrays["cycling"][rank])}
        facts.update(_line_facts(table, start, rule))
        return facts
    if rule == "draw":
        a, b = int(arrays["a"][rank]), int(arrays["b"][rank])
        outcome = table.probe_value(start, captured=0)
        facts = {"outcome": outcome, "a": None if a == NEVER else a, "b": None if b == NEVER else b}
        line = _line_facts(table, start, rule)
        # a win is forced only by ending the game, never by a repetition; the table's line of
        # best moves carries no remoteness, so in a won or lost game it need not take the end
        facts.update(line)
        facts["line_agrees"] = (line["final_difference"] is None and outcome == 0) or (
            line["final_difference"] is not None and _sign(line["final_difference"]) == outcome)
        return facts

    lower, upper = arrays["lower"], arrays["upper"]
    lo, hi = int(lower[rank]), int(upper[rank])
    facts = {"lower": lo, "upper": hi, "exact": lo if lo == hi else None, "searched": 0,
             "exact_share": float(np.count_nonzero(lower == upper)) / graph.n_states}
    if lo != hi and split_effort > 0:
        try:
            value, searched = exact_value(graph, lower, upper, rank, split_effort)
            facts.update(exact=value, searched=searched)
        except EffortLimitReached:
            facts["searched"] = None  # the search stopped at the effort limit
        except RecursionError:
            facts["searched"] = None  # a line deeper than Python's stack: the bounds stand
    return facts


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


def solve_variant(options: UneeOptions, split_effort: int = DEFAULT_SPLIT_EFFORT,
                  note: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Every fact of the atlas for one variant (a dict ready for JSON). Builds and frees the
    graph and the solutions one after the other, so that the peak stays near the model's."""
    say = note or (lambda text: None)
    seconds: dict[str, float] = {}
    t0 = t = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal t
        now = time.perf_counter()
        seconds[name] = round(now - t, 3)
        t = now

    say("graph")
    graph = build_graph(options)
    summary = graph_summary(graph)
    lap("graph")
    say("components")
    cyc = cycles.cycle_summary(graph)
    cycles.components.cache_clear()  # the component ids (4 B a position) are not needed again
    lap("components")
    start: dict[str, Any] = {}
    for rule in REPETITION_RULES:
        say(rule)
        arrays = solve_arrays(graph, rule)
        start[rule] = start_facts(arrays, graph, rule, split_effort)
        del arrays
        lap(rule)
    graph._cache.clear()
    build_graph.cache_clear()
    seconds["total"] = round(time.perf_counter() - t0, 3)
    usage = resource.getrusage(resource.RUSAGE_SELF)  # this worker's own: it solved this variant alone
    tot = summary["total"]
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "variant": variant_key(options),
        "options": options.as_dict(),
        "balls": options.max_balls,
        "boards": summary["boards"],
        "positions": tot["states"],
        "moves": tot["moves"],
        "reachable": {"positions": tot["reachable_states"], "moves": tot["reachable_moves"],
                      "game_over": tot["reachable_terminal"]},
        "components": {"all": cyc["total"]["all"], "reachable": cyc["total"]["reachable"]},
        "start": start,
        "split_effort": split_effort,
        "seconds": seconds,
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
        "peak_mib": round(usage.ru_maxrss / 1024, 1),
    }


# ---------------------------------------------------------------- result files


def result_path(out: str | os.PathLike[str], options: UneeOptions) -> Path:
    return Path(out) / f"{variant_key(options)}.json"


def load_result(out: str | os.PathLike[str], options: UneeOptions) -> dict[str, Any] | None:
    """The variant's result in ``out``; None when it is missing, unreadable or of another format."""
    path = result_path(out, options)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not _valid(data) or data.get("options") != options.as_dict():
        return None
    return data


def _valid(data: Any) -> bool:
    return (isinstance(data, dict) and data.get("format") == FORMAT and data.get("format_version") == FORMAT_VERSION
            and isinstance(data.get("options"), dict) and isinstance(data.get("start"), dict))


def write_result(out: str | os.PathLike[str], result: dict[str, Any]) -> Path:
    path = result_path(out, UneeOptions(**result["options"]))
    with atomic_path(path) as tmp:
        Path(tmp).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return path


def prepare_out(out: str | os.PathLike[str]) -> Path:
    """The output folder, made if missing; a one-line error if it is a file or cannot be written."""
    return writable_folder(out, "--out")


def all_results(out: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every valid variant result in ``out``, in the atlas's order."""
    found = []
    for path in sorted(Path(out).glob("h*-b*-*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if _valid(data):
            found.append(data)
    return sorted(found, key=lambda d: order_key(UneeOptions(**d["options"])))


# ---------------------------------------------------------------- running


def _quiet_worker() -> None:
    """A worker leaves Ctrl-C to the parent, which ends the pool; a plain SIGTERM ends it."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _worker(job: tuple[dict[str, Any], int]) -> dict[str, Any]:
    opts, effort = job
    return solve_variant(UneeOptions(**opts), effort)


def run_plan(plan: Plan, split_effort: int = DEFAULT_SPLIT_EFFORT,
             on_start: Callable[[PlanItem], None] | None = None,
             on_done: Callable[[PlanItem, dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Solve the variants the plan has left to do, each in a fresh worker process (its memory goes
    back to the system when it ends, and its peak is its own), ``plan.budget.jobs`` at a time,
    smallest first; each result is written as soon as it comes. Returns the new results."""
    todo = plan.todo
    if not todo:
        return []
    jobs = max(1, min(plan.budget.jobs, len(todo)))
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    made = []
    by_key = {it.key: it for it in todo}
    with ctx.Pool(processes=jobs, initializer=_quiet_worker, maxtasksperchild=1) as pool:
        for it in todo[:jobs]:
            if on_start:
                on_start(it)
        started = jobs
        for result in pool.imap_unordered(_worker, [(it.options.as_dict(), split_effort) for it in todo]):
            write_result(plan.out, result)
            it = by_key[result["variant"]]
            it.done = True
            made.append(result)
            if on_done:
                on_done(it, result)
            if started < len(todo) and on_start:
                on_start(todo[started])
            started += 1
    return made


# ---------------------------------------------------------------- the summary

SUMMARY_COLUMNS = [
    "variant", "holes", "balls_per_hole", "skip_origin", "capture_rows", "balls", "boards", "positions", "moves",
    "reachable_positions", "reachable_moves", "components", "largest_component", "on_cycle",
    "reachable_components", "reachable_largest_component", "reachable_on_cycle",
    "uncounted_value", "uncounted_remoteness", "uncounted_end", "uncounted_cycle", "uncounted_lead_in",
    "draw_outcome", "draw_a", "draw_b", "draw_end", "draw_plies", "draw_cycle",
    "split_lower", "split_upper", "split_exact", "split_exact_share", "seconds", "peak_mib",
]


def summary_row(r: dict[str, Any]) -> dict[str, Any]:
    o, s = r["options"], r["start"]
    u, d, sp = s["uncounted"], s["draw"], s["split"]
    ca, cr = r["components"]["all"], r["components"]["reachable"]
    return {
        "variant": r["variant"], "holes": o["holes_per_row"], "balls_per_hole": o["balls_per_hole"],
        "skip_origin": o["skip_origin"], "capture_rows": o["capture_rows"], "balls": r["balls"],
        "boards": r["boards"], "positions": r["positions"], "moves": r["moves"],
        "reachable_positions": r["reachable"]["positions"], "reachable_moves": r["reachable"]["moves"],
        "components": ca["components"], "largest_component": ca["largest"], "on_cycle": ca["on_cycle"],
        "reachable_components": cr["components"], "reachable_largest_component": cr["largest"],
        "reachable_on_cycle": cr["on_cycle"],
        "uncounted_value": u["value"], "uncounted_remoteness": u["remoteness"], "uncounted_end": u["end"],
        "uncounted_cycle": u["cycle"], "uncounted_lead_in": u["lead_in"],
        "draw_outcome": d["outcome"], "draw_a": d["a"], "draw_b": d["b"], "draw_end": d["end"],
        "draw_plies": d["plies"], "draw_cycle": d["cycle"],
        "split_lower": sp["lower"], "split_upper": sp["upper"], "split_exact": sp["exact"],
        "split_exact_share": round(sp["exact_share"], 6),
        "seconds": r["seconds"]["total"], "peak_mib": r["peak_mib"],
    }


def write_summary(out: str | os.PathLike[str]) -> tuple[Path, Path, list[dict[str, Any]]]:
    """``summary.csv`` (one row a variant) and ``summary.json`` (every result whole) for every
    variant in ``out``; returns their paths and the rows."""
    results = all_results(out)
    rows = [summary_row(r) for r in results]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=SUMMARY_COLUMNS, lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: "" if v is None else v for k, v in row.items()})
    csv_path, json_path = Path(out) / SUMMARY_CSV, Path(out) / SUMMARY_JSON
    with atomic_path(csv_path) as tmp:
        Path(tmp).write_text(buf.getvalue(), encoding="utf-8")
    with atomic_path(json_path) as tmp:
        Path(tmp).write_text(json.dumps({"format": "unee-atlas", "format_version": FORMAT_VERSION,
                                         "columns": SUMMARY_COLUMNS, "rows": rows, "variants": results},
                                        indent=1) + "\n", encoding="utf-8")
    return csv_path, json_path, rows


# ---------------------------------------------------------------- words, tables, the picture


def value_text(v: int | None) -> str:
    return "?" if v is None else ("0" if v == 0 else f"{v:+d}")


def outcome_text(o: int) -> str:
    return {1: "South wins", 0: "draw", -1: "North wins"}[o]


def split_text(sp: dict[str, Any]) -> str:
    if sp["exact"] is not None:
        return value_text(sp["exact"]) + ("" if sp["lower"] == sp["upper"] else " (searched)")
    return f"{value_text(sp['lower'])}..{value_text(sp['upper'])}"


def end_text(f: dict[str, Any]) -> str:
    if f["end"] == REPETITION:
        return f"repeats after {f['plies']} (cycle {f['cycle']})"
    if f["end"] == CAPTURE_OUT:
        return f"capture-out after {f['plies']}"
    return f"{f['end']} after {f['plies']}"


def text_lines(results: Sequence[dict[str, Any]]) -> list[str]:
    """The atlas as aligned text, one line a variant."""
    head = (f"{'variant':<27} {'boards':>12} {'reachable':>11} {'cyc. comps':>10} {'largest':>9}  "
            f"{'uncounted':>9} {'ends':<27} {'draw':<11} {'split':<14}")
    lines = [head]
    for r in results:
        s = r["start"]
        u, d = s["uncounted"], s["draw"]
        lines.append(
            f"{label(UneeOptions(**r['options'])):<27} {r['boards']:>12,} {r['reachable']['positions']:>11,} "
            f"{r['components']['reachable']['components']:>10,} {r['components']['reachable']['largest']:>9,}  "
            f"{value_text(u['value']):>9} {end_text(u):<27} {outcome_text(d['outcome']):<11} {split_text(s['split']):<14}"
        )
    return lines


def markdown_table(results: Sequence[dict[str, Any]], sowing: bool = True) -> str:
    """The atlas as a Markdown table (docs/variants.md); ``sowing=False`` leaves out the sowing
    column, for a table under a heading that names the sowing rule."""
    head = ("| holes x balls |" + (" sowing |" if sowing else "") + " boards | moves | reachable | "
            "cycle comps (largest) | uncounted | best play (uncounted) | draw | split |")
    lines = [head, "|" + "---|" * (10 if sowing else 9)]
    for r in results:
        o = UneeOptions(**r["options"])
        how = ("skip" if o.skip_origin else "no skip") + ", " + ("both rows" if o.capture_rows == "both" else "own row")
        s = r["start"]
        u, d = s["uncounted"], s["draw"]
        comps = r["components"]["reachable"]
        lines.append(
            f"| {o.holes_per_row} x {o.balls_per_hole} |" + (f" {how} |" if sowing else "") + f" {r['boards']:,} | {r['moves']:,} | "
            f"{r['reachable']['positions']:,} | {comps['components']:,} ({comps['largest']:,}) | "
            f"{value_text(u['value'])} | {end_text(u)} | {outcome_text(d['outcome'])} | {split_text(s['split'])} |"
        )
    return "\n".join(lines) + "\n"


RULE_TITLES = {
    "uncounted": "uncounted: South's capture difference",
    "draw": "draw: the result",
    "split": "split: the value (or its bounds)",
}
SOWING_TITLES = {
    (False, "own"): "traditional sowing: no skip, captures in the mover's row",
    (False, "both"): "no skip, captures in both rows",
    (True, "own"): "laps skip their origin, captures in the mover's row",
    (True, "both"): "laps skip their origin, captures in both rows",
}


def plot(results: Sequence[dict[str, Any]], path: str | os.PathLike[str], title: str | None = None) -> Path:
    """The start's value for South by holes per row (rows) and balls per hole (columns): one
    panel per repetition rule, one row of panels per sowing rule found in ``results``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    if not results:
        raise InputError("no variant solved yet: nothing to draw")
    sowings = sorted({(r["options"]["skip_origin"], r["options"]["capture_rows"]) for r in results},
                     key=lambda k: (k[0], CAPTURE_ROWS.index(k[1])))
    holes = sorted({r["options"]["holes_per_row"] for r in results})
    balls = sorted({r["options"]["balls_per_hole"] for r in results})
    by = {(r["options"]["skip_origin"], r["options"]["capture_rows"], r["options"]["holes_per_row"],
           r["options"]["balls_per_hole"]): r for r in results}
    vmax = max(1, max(max(abs(r["start"]["uncounted"]["value"]), abs(r["start"]["split"]["lower"]),
                          abs(r["start"]["split"]["upper"])) for r in results))
    norm = TwoSlopeNorm(vmin=-vmax, vcenter=0, vmax=vmax)
    cmap = plt.get_cmap("RdBu")
    width = 1.2 + 0.5 * len(balls) * 3
    fig = plt.figure(figsize=(max(7.5, width), 0.8 + (0.42 * len(holes) + 1.0) * len(sowings)), layout="constrained")
    made: Any = fig.subfigures(len(sowings), 1)  # one subfigure, or an array of them
    subfigs = np.atleast_1d(made)
    for sub, (skip, rows) in zip(subfigs, sowings):
        sub.suptitle(SOWING_TITLES[(skip, rows)], fontsize=9, fontweight="bold")
        axes = sub.subplots(1, 3, squeeze=False)[0]
        for ax, rule in zip(axes, REPETITION_RULES):
            grid = np.full((len(holes), len(balls)), np.nan)
            for yi, h in enumerate(holes):
                for xi, b in enumerate(balls):
                    r = by.get((skip, rows, h, b))
                    if r is None:
                        continue
                    f = r["start"][rule]
                    if rule == "uncounted":
                        v, text, hatch = f["value"], value_text(f["value"]), False
                    elif rule == "draw":
                        v = f["outcome"] * vmax * 0.6
                        text, hatch = {1: "S", 0: "=", -1: "N"}[f["outcome"]], False
                    else:
                        exact = f["exact"]
                        v = exact if exact is not None else (f["lower"] + f["upper"]) / 2
                        text, hatch = split_text(f).replace(" (searched)", ""), exact is None
                    grid[yi, xi] = v
                    dark = abs(v) > 0.55 * vmax
                    ax.text(xi, yi, text, ha="center", va="center", fontsize=6.5 if len(text) > 4 else 8,
                            color="white" if dark else "black")
                    if hatch:
                        ax.add_patch(plt.Rectangle((xi - 0.5, yi - 0.5), 1, 1, fill=False, hatch="///",
                                                   edgecolor="grey", linewidth=0))
            cm = cmap.with_extremes(bad="#eeeeee")
            ax.imshow(np.ma.masked_invalid(grid), cmap=cm, norm=norm, aspect="auto", origin="lower")
            ax.set_xticks(range(len(balls)), [str(b) for b in balls], fontsize=7)
            ax.set_yticks(range(len(holes)), [str(h) for h in holes], fontsize=7)
            ax.set_xlabel("balls per hole", fontsize=7)
            if rule == REPETITION_RULES[0]:
                ax.set_ylabel("holes per row", fontsize=7)
            ax.set_title(RULE_TITLES[rule], fontsize=8)
    fig.suptitle(title or "Ünee: the start's value for South, who moves first\n(blue: South ahead, red: North "
                 "ahead; draw rule: S wins, = draw, N wins; hatched: split value not proven, bounds shown)",
                 fontsize=9)
    out = Path(path)
    with atomic_path(out) as tmp:
        fig.savefig(tmp, format=out.suffix.lstrip(".").lower() or "png", dpi=110)
    plt.close(fig)
    return out


__all__ = [
    "Budget", "Plan", "PlanItem", "all_results", "board_count", "check_plan", "edge_count", "load_result",
    "make_plan", "markdown_table", "memory_estimate", "parse_range", "plot", "prepare_out", "result_path",
    "run_plan", "solve_variant", "summary_row", "text_lines", "time_estimate", "variants", "write_result",
    "write_summary",
]
