"""The fort rules as a rule family (``games.ur.family``): the answers of every ``solver ur`` verb,
as ``Reply`` objects, over ``games.ur.solve``'s tables, ``games.ur.opening``'s files and
``games.ur.answers``' answer builders, and the Python API's tables (``UrTable``).

Where a query reads its values: ``--opening FILE``; else the table (``--table`` or the cache; a
small one missing from the cache is solved on first use, any missing one with ``--solve``); else,
when no table was named and the cache has none, the opening file shipped for these options.
"""
from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any, Callable, NoReturn

import numpy as np

from gamesolver.games.ur import opening
from gamesolver.games.ur.answers import (
    analyze_answer, answer_source, best_move_answer, game_over_answer, game_over_refusal, missing_table_message,
    nobody_wins, outside_opening_message, proven_text, shipped_fallback, show_answer, solving_time, source_line,
)
from gamesolver.games.ur.export import write_csv, write_npy
from gamesolver.games.ur.family import (
    Cached, CheckAsk, ExportAsk, Family, Log, PathArg, QueryRefused, Reply, SolveAsk, Where, built_reply,
    table_key,
)
from gamesolver.games.ur.generator import kernel
from gamesolver.games.ur.notation import Position, diagram, format_position, parse
from gamesolver.games.ur.provenance import check_lines, of_table
from gamesolver.games.ur.rules import AUTO_BUILD_MAX_PIECES, MAX_PIECES, SOLVE_HINT, UrOptions
from gamesolver.games.ur.solve import (
    DEFAULT_TOLERANCE, DEFAULT_WIDTH, choices, default_table_dir, early_lock, gpu_engine, load_table, ray_engine, solve,
    state_interval, state_value, stored_index_matches, stored_state_count, tier_counts,
)
from gamesolver.games.ur.tables import UrTable
from gamesolver.solver.tables.table import Table
from gamesolver.solver.errors import InputError, MissingTableError
from gamesolver.solver.stochastic.bounds import certify, check_certify_fits
from gamesolver.solver.stochastic.iteration import check_eps, endless_check
from gamesolver.solver.stochastic.outcomes import Regenerated, scratch_graph, want_graph
from gamesolver.solver.stochastic.planning import default_threads
from gamesolver.solver.stochastic.solve import Proof, record_proof
from gamesolver.solver.tables.atomic import atomic_path
from gamesolver.solver.tables.paths import file_kind


class FortFamily(Family):
    """The fort rules with one ``UrOptions`` (pieces, board and dice)."""

    def __init__(self, options: UrOptions) -> None:
        self.options = options
        self.name = "fort"
        self.pieces = options.pieces

    # where a query reads
    def table(self, table_dir: str | None, cache: str | None = None, scattered: bool = False,
              solve_first: bool = False, log: Log | None = None) -> Any:
        """The table a query reads. Without ``solve_first`` (``--solve``) a query never writes where
        ``--table`` points, and a large solve never starts as its side effect: only a small table
        missing from the cache is built. With it a missing table of any size is solved first, where
        ``--table`` points or in the cache, with its progress shown (a stopped solve resumes).
        ``scattered``: the caller reads a few values, not the whole table (``solve.read_scattered``);
        ``log``: where a solve's progress goes."""
        options = self.options
        where = Path(table_dir) if table_dir is not None else default_table_dir(options, cache)
        if table_dir is not None and where.is_file():  # the user's mistake (exit 2), not a table to solve there
            raise InputError(f"--table {where} is {file_kind(where)}, not a table: a table is a folder holding "
                             f"header.json (one that 'solver ur solve --pieces {options.pieces} --out FOLDER' makes)")
        if (table_dir is not None or options.pieces > AUTO_BUILD_MAX_PIECES) and not solve_first:
            if not (where / "header.json").is_file():
                self._missing(where, table_dir is not None)
        return load_table(options, where, log=log, cache=cache, scattered=scattered)

    def source(self, where: Where) -> tuple[Table | opening.OpeningFile, opening.OpeningFile | None]:
        """What a query reads, and the opening file it is (None for a table): ``--opening``; else the
        table; else, when no table was named and the cache has none, the shipped opening file (not
        with ``solve_first``, which solves the missing table instead: ``table``)."""
        if where.opening is not None:
            if where.table is not None or where.solve_first:
                raise InputError(f"give {'--table' if where.table is not None else '--solve'} or --opening, not both")
            book = opening.load(where.opening, self.options)
            return book, book
        shipped = shipped_fallback(self.options, where.cache) if where.table is None and not where.solve_first else None
        if shipped is not None:
            return shipped, shipped
        return self.table(where.table, where.cache, scattered=True, solve_first=where.solve_first,
                          log=where.log), None

    def _missing(self, where: Path, named: bool) -> NoReturn:
        text, fields = missing_table_message(self.options, where, named)
        first, nl, rest = text.partition("\n")
        raise QueryRefused(f"{first}; {SOLVE_HINT}{nl}{rest}", fields)

    def _outside(self, book: opening.OpeningFile | None, cache: str | None) -> NoReturn:
        assert book is not None  # only an opening file leaves positions out
        text, fields = outside_opening_message(self.options, book, cache)
        note, nl, rest = text.partition("\n")
        first, nl2, more = rest.partition("\n")
        raise QueryRefused(f"{note}{nl}{first}; {SOLVE_HINT}{nl2}{more}", fields) from None

    # the verbs
    def show(self, position: str) -> Reply:
        pos = parse(position, self.options)
        over = game_over_answer(self.options, pos)
        answer = {**show_answer(self.options, pos), "game_over": over is not None}
        return Reply(answer, [diagram(pos, self.options)] + ([over["why"]] if over is not None else []))

    def best_move(self, position: str, roll: str, where: Where) -> Reply:
        options = self.options
        pos = parse(position, options)
        r = options.dice.index(roll)
        game_over_refusal(options, pos)  # no table is opened (nor solved) for a game already won
        table, book = self.source(where)
        try:
            ranked = choices(options, table, pos, r)
        except opening.OutsideOpening:
            self._outside(book, where.cache)
        best = ranked[0]
        answer = best_move_answer(options, pos, r, ranked, table)
        answer["source"] = answer_source(table, book, where.opening)
        head = f"{pos.to_move} to move, roll {options.dice.rolls[r].name}: "
        draw = nobody_wins(options)
        if draw is not None:  # every value is 0: no action is best, and the answer says why
            return Reply(answer, [f"{head}{len(ranked)} legal action{'s' if len(ranked) != 1 else ''}, all worth "
                                  f"the same ({best.value:g})", draw])
        return Reply(answer, [f"{head}{best.action.describe(options.board)}",
                              f"value for {pos.to_move}: {best.value:+.6f}{proven_text(answer)}  (P(win) - P(loss))",
                              source_line(table, book, where.opening)])

    def analyze(self, position: str, where: Where) -> Reply:
        pos = parse(position, self.options)
        over = game_over_answer(self.options, pos)
        if over is not None:  # the rules give its value: no table is opened (nor solved) for it
            return Reply(over, [f"{over['position']}: value for {pos.to_move} {over['value']:+g}, exact: {over['why']}"])
        table, book = self.source(where)
        try:
            answer = analyze_answer(self.options, table, pos)
        except opening.OutsideOpening:
            self._outside(book, where.cache)
        answer["source"] = answer_source(table, book, where.opening)
        if answer.get("winnable") is False:
            return Reply(answer, [f"{answer['position']}: a draw whatever is rolled or played (value "
                                  f"{answer['value']:g})", answer["note"]])
        lines = [f"{answer['position']}: value for {pos.to_move} before rolling {answer['value']:+.6f}"
                 f"{proven_text(answer)}"]
        lines += [f"  {row['roll']:<14} p={row['probability']:<7g} {row['value']:+.6f}  {row['best']}"
                  for row in answer["rolls"]]
        return Reply(answer, lines + [source_line(table, book, where.opening)])

    def graph(self) -> Reply:
        options, pieces = self.options, self.pieces
        tiers = tier_counts(options)
        K = kernel(options)
        # the stored count from the board's mirror alone: the generator's would build its mirror
        # index first (25 s for seven pieces) to print a number
        total, stored = K.full_state_count, stored_state_count(options)
        fields = {"pieces": pieces, "tiles": options.board.size, "states": total, "stored_states": stored,
                  "mirror": options.uses_mirror,
                  "tiers": [{"mine": a, "theirs": b, "states": c} for (a, b), c in tiers.items()]}
        lines = [f"Ur, fort rules: {options.board.size} tiles, {pieces} pieces a side",
                 "states per tier (rows: pieces of the side to move on the board; columns: the other side's)",
                 "      " + "".join(f"{b:>12}" for b in range(pieces + 1))]
        lines += [f"{a:>6}" + "".join(f"{tiers[a, b]:>12,}" for b in range(pieces + 1)) for a in range(pieces + 1)]
        lines.append(f"states (mover-relative; the same count for either side to move): {total:,}")
        if options.uses_mirror:
            lines.append(f"stored and solved: {stored:,} (one of each pair of mirror images, columns A and C swapped)")
        return Reply(fields, lines)

    def solve_folder(self, out: str | None, cache: str | None) -> tuple[Path, dict[str, Any]]:
        if out is not None and cache is not None:
            raise InputError("--out and --cache both say where the table goes; give one of them")
        root = Path(out) if out is not None else default_table_dir(self.options, cache)
        return root, self.options.header()

    def solve(self, ask: SolveAsk) -> Reply:
        options = self.options
        tolerance = DEFAULT_TOLERANCE if ask.tolerance is None else ask.tolerance
        out = str(self.solve_folder(ask.out, ask.cache)[0])
        # no --proof/--no-proof: prove where it fits, and otherwise say so once, before the solve
        proving: Proof = "auto" if ask.proof is None else ask.proof
        width = DEFAULT_WIDTH if ask.width is None else ask.width
        common: dict[str, Any] = dict(tolerance=tolerance, method=ask.method, log=ask.log, proof=proving, width=width,
                                      local_repairs=ask.local_repairs)
        with early_lock(Path(out)):  # held before the engines build their generators: a second solve sees this one
            if ask.backend == "gpu":
                with gpu_engine(options, policy=ask.method != "sweeps", log=ask.log, graph=ask.graph) as engine:
                    table = solve(options, out, engine=engine, **common)
            elif ask.backend == "ray":
                with ray_engine(options, address=ask.address, workers=ask.workers, threads=ask.threads,
                                log=ask.log) as engine:
                    table = solve(options, out, engine=engine, **common)
            else:
                table = solve(options, out, threads=ask.threads, graph=ask.graph, policy_place=ask.policy_place,
                              **common)
        start = state_value(options, table, frozenset(), frozenset())
        m = table.meta
        prov = of_table(table)
        start_fields = prov.fields(start, state_interval(options, table, frozenset(), frozenset()))
        keys = ("sweeps", "method", "residual", "policy_sweeps", "endless_check",
                "endless_repairs", "graph", "policy_place", "bytes_per_state", "solve_seconds_this_run",
                "solve_seconds", "certified")
        fields = {"pieces": self.pieces, "states": table.state_count, "table": str(table.path),
                  "start_value": start, "start": start_fields, "proven": prov.proven,
                  "stop_residual": m.get("tolerance"), **{k: m[k] for k in keys if k in m}}
        products = f" and {m['policy_sweeps']:,} policy sweeps" if m.get("policy_sweeps") else ""
        check = m["endless_check"]
        n_repairs = m.get("endless_repairs") or 0
        repaired = f" after {n_repairs} discounted repair{'s' if n_repairs > 1 else ''}" if n_repairs else ""
        lines = [f"solved pieces={self.pieces}: {table.state_count:,} states, {m['sweeps']} sweeps{products} "
                 f"({m['method']}), stopped at residual {m['residual']:.2g} (below {m['tolerance']:g})"
                 + (f"; {took}" if (took := solving_time(m)) else ""),
                 f"endless check (eps {check['eps']:g}): "
                 + ("passed" if check["flagged"] == 0 else f"FAILED in {check['flagged']:,} states") + repaired,
                 f"value of start for the first player: {start:+.6f}"
                 + (proven_text(start_fields) or f", {prov.text()}")]
        cert = m.get("certified", {})
        if cert:
            passes = cert.get("passes", 1)
            lines.append(f"proof: every interval at most {cert['gap']:.2g} wide, aimed at {cert.get('aimed_at', 0):.2g} "
                         f"({passes} pass{'es' if passes > 1 else ''}, method {cert['method']}, "
                         f"{cert['seconds']:.0f} s)")
        lines.append(f"table: {table.path}")
        return Reply(fields, lines)

    def check(self, ask: CheckAsk) -> Reply:
        options = self.options
        if ask.bounds_sweeps < 1:
            raise InputError(f"--bounds-sweeps must be at least 1; got {ask.bounds_sweeps}")
        if ask.refine < 0:
            raise InputError(f"--refine must be at least 0; got {ask.refine}")
        if ask.width is not None and not ask.bounds:
            raise InputError("--width applies with --bounds; add --bounds, or drop --width")
        if ask.record and not ask.bounds:
            raise InputError("--record keeps a proof in the table; add --bounds, or drop --record")
        if ask.width is not None and not 0 < ask.width < 1:
            raise InputError(f"--width must be between 0 and 1; got {ask.width:g}")
        where = ask.table if ask.table is not None else default_table_dir(options, ask.cache)
        # checking never solves (a missing table is refused, with what solving it would take and the
        # command), and it recomputes every checksum
        if not (Path(where) / "header.json").is_file() and not Path(where).is_file():
            text, fields = missing_table_message(options, Path(where), ask.table is not None)
            raise QueryRefused(text, fields)
        table = load_table(options, where, build=False, verify=True, cache=ask.cache)
        K = kernel(options)
        if ask.bounds:  # refused before the work starts
            check_certify_fits(K.state_count, K.roll_count)
        values = np.ascontiguousarray(table["value"], dtype=np.float32)
        tolerance = float(table.meta.get("tolerance", DEFAULT_TOLERANCE))
        eps = ask.eps if ask.eps is not None else check_eps(tolerance)
        n_threads = ask.threads or default_threads()
        with contextlib.ExitStack() as stack:  # a stored graph is mapped from a scratch folder, removed after
            engine = (stack.enter_context(scratch_graph(K, table.path, n_threads, show_progress=None))
                      if want_graph(K, ask.graph) else Regenerated(K))
            residual = float(engine.sweep(values.copy(), threads=n_threads, write=False))
            result = endless_check(engine, values, eps, n_threads, show_progress=None)
            index = {None: "not stored", True: "matches", False: "differs"}[stored_index_matches(options, table)]
            ok = result.passed and residual < tolerance and index != "differs"
            bounds: dict[str, Any] | None = None
            if ask.bounds:
                aim = tolerance if ask.width is None else ask.width
                cert = certify(K, values, aim, n_threads, show_progress=None, log=None if ask.quiet else ask.log,
                               graph=engine, loosen_sweeps=ask.bounds_sweeps, tighten_sweeps=ask.bounds_sweeps,
                               refine=ask.refine)
                start_rank = int(K.rank([0], [0])[0])
                bounds = {**cert.summary(), "aimed_at": aim,
                          "start": [float(cert.lower[start_rank]), float(cert.upper[start_rank])]}
        if ask.record:  # with --bounds, so there is a proof
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
        fields = {"table": str(table.path), "states": table.state_count, "stop_residual": tolerance,
                  "residual": residual, "eps": eps, "passes": result.passes, "flagged": result.flagged,
                  "examples": examples, "mirror_index": index, "passed": ok, **({"bounds": bounds} if bounds else {})}
        lines = [f"table {table.path}: {table.state_count:,} states, solved until the residual fell below "
                 f"{tolerance:g}; {of_table(table).text()}"]
        found = check_lines(residual, tolerance, result, "actions")
        if not result.passed:
            found[-1] += "; for example"
            found += [f"    {e['position']}  {e['value']:+.6f}" for e in examples]
        lines += found
        if index == "matches":
            lines.append("  mirror index stored with the table: equal to one built now")
        elif index == "differs":
            lines.append("  mirror index stored with the table: DIFFERS from one built now (delete the table and "
                         "solve again)")
        if bounds and "recorded" in bounds:
            kept = ("the intervals' middles as its values, and the intervals" if bounds["recorded"]["values"] == "centred"
                    else "its own values, and the proof's figures")
            lines.append(f"  recorded in the table: {kept}")
        if bounds:
            lo, hi = bounds["start"]
            lines.append(f"  proven: every value lies within {bounds['bound']:.2g} of the table's (the start: "
                         f"{lo:+.6f} .. {hi:+.6f}; endless play could be worth up to {bounds['endless_margin']:.2g} "
                         f"where it can last for ever; widest interval {bounds['gap']:.2g}, aimed at "
                         f"{bounds['aimed_at']:g}, {bounds['passes']} pass{'es' if bounds['passes'] > 1 else ''})")
        lines.append("passed: these are the game's values" if ok else "FAILED: not the game's values")
        return Reply(fields, lines, ok=ok)

    def export(self, ask: ExportAsk) -> Reply:
        if ask.fmt == "rgu":
            raise InputError("--format rgu writes RoyalUr's rule sets (--rules finkel, blitz or masters), "
                             "not the fort rules")
        if ask.fmt == "npy" and ask.out is None:
            raise InputError("--format npy needs --out FILE")
        if ask.as_json and ask.out is None:
            raise InputError("--json reports the file written with --out FILE; without --out the CSV goes to "
                             "standard output")
        table = self.table(ask.table, ask.cache, solve_first=ask.solve_first, log=ask.log)
        n_threads = ask.threads or default_threads()
        if ask.out is None:
            count = write_csv(self.options, table, ask.stdout or sys.stdout, ask.reachable, n_threads)
            return Reply({"out": None, "format": ask.fmt, "positions": count, "reachable_only": ask.reachable})
        with atomic_path(ask.out) as tmp:
            if ask.fmt == "npy":
                count = write_npy(self.options, table, tmp, ask.reachable, n_threads)
            else:
                with open(tmp, "w", encoding="utf-8", newline="") as f:
                    count = write_csv(self.options, table, f, ask.reachable, n_threads)
        return Reply({"out": ask.out, "format": ask.fmt, "positions": count, "reachable_only": ask.reachable},
                     notes=[f"wrote {count:,} positions to {ask.out}"])

    def opening_build(self, turns: int, out: str, table: str | None, cache: str | None,
                      log: Log | None = None) -> Reply:
        solved = self.table(table, cache, log=log)
        arrays, header = opening.build(self.options, solved, turns)
        opening.write(out, arrays, header)
        return built_reply(out, turns, header, solved.path)

    def opening_info(self, file: str) -> Reply:
        book = opening.load(file, self.options)
        h, t = book.header, book.header["table"]
        return Reply(book.header, [
            f"{file}: Ur (fort rules), pieces={h['options']['pieces']}, board {h['options']['board_sha256'][:16]}, "
            f"dice {h['options']['dice_sha256'][:16]}",
            f"  {h['positions_answered']:,} positions within {h['turns']} turns of the start answered, "
            f"{h['positions_stored']:,} values stored",
            f"  from table {t['values_sha256']} ({t['state_count']:,} states; {book.provenance.text()})"])

    # the server
    def board(self, cache: str | None, is_open: Callable[[str], bool]) -> dict[str, Any]:
        b, options = self.options.board, self.options
        each = [UrOptions(pieces=k) for k in range(1, MAX_PIECES + 1)]
        solved = [o.pieces for o in each if is_open(table_key(self.name, o.pieces))
                  or (default_table_dir(o, cache) / "header.json").is_file() or opening.shipped_path(o).is_file()]
        return {"rules": "fort", "pieces": options.pieces, "sides": ["X", "O"],
                "tiles": [{"name": b.names[i], "at": list(b.at[i]), "section": b.sections[i],
                           "roles": sorted(b.roles[i])} for i in range(b.size)],
                "rolls": [{"name": r.name, "probability": r.probability} for r in options.dice.rolls],
                "solved": solved}

    def cached(self, cache: str | None) -> Cached:
        options = self.options
        where = default_table_dir(options, cache)
        small = options.pieces <= AUTO_BUILD_MAX_PIECES

        def build(log: Log) -> None:
            log(f"solving Ur (fort rules) with {options.pieces} pieces (first use; cached in {where})")
            solve(options, where, show_progress=False, log=log)

        return Cached(self.key, f"Ur, fort rules, {options.pieces} pieces",
                      lambda: load_table(options, where, build=False), build if small else None,
                      "" if small else missing_table_message(options, where, False)[0])

    def served(self, what: str, position: str, roll: str | None, read: Callable[[], Any], table_open: bool,
               cache: str | None) -> dict[str, Any]:
        options = self.options
        board = options.board
        pos = parse(position, options)
        over = game_over_answer(options, pos)
        view = {"pieces": {**{board.names[t]: "X" for t in pos.x}, **{board.names[t]: "O" for t in pos.o}},
                "off_board": {"X": {"pool": options.pieces - len(pos.x)}, "O": {"pool": options.pieces - len(pos.o)}},
                "game_over": over is not None}
        if what == "show":
            return {**show_answer(options, pos), "game_over": over is not None, "view": view}
        r = options.dice.index(roll or "") if what == "best-move" else None  # all input checked before any table
        if over is not None:  # a won game: its value by the rules, and no action to choose
            if r is not None:
                game_over_refusal(options, pos)
            return {**over, "view": view}
        book = None if table_open else shipped_fallback(options, cache)
        table = book if book is not None else read()
        try:
            if r is None:
                return {**analyze_answer(options, table, pos), "view": view, "source": answer_source(table, book, None)}
            ranked = choices(options, table, pos, r)
        except opening.OutsideOpening:
            assert book is not None  # only an opening file leaves positions out
            raise QueryRefused(*outside_opening_message(options, book, cache)) from None
        answer = {**best_move_answer(options, pos, r, ranked, table), "source": answer_source(table, book, None)}
        other = "O" if pos.to_move == "X" else "X"
        top = ranked[0].value
        for row, c in zip(answer["actions"], ranked):
            a = c.action
            after = Position.from_relative(a.mine, a.theirs, pos.to_move)
            nxt = pos.to_move if (a.extra_turn or a.win) else other
            row.update(kind=a.kind, paths=[[board.names[t] for t in path] for path in a.paths],
                       captures=[board.names[t] for t in a.captures], extra_turn=a.extra_turn, wins=a.win,
                       best=c.value == top, after=format_position(Position(after.x, after.o, nxt), board))
        return {**answer, "view": view}

    # the Python API
    def parse(self, text: str) -> Position:
        return parse(text, self.options)

    def open_table(self, path: PathArg | None, cache: PathArg | None) -> UrTable:
        opts = self.options
        where = Path(path) if path is not None else default_table_dir(opts, None if cache is None else str(cache))
        try:
            return UrTable(load_table(opts, where, build=False, scattered=True), opts)
        except MissingTableError:
            raise MissingTableError(f"no Ur table for {opts.pieces} pieces at {where}; "
                                    f"make it with ur.solve_table(pieces={opts.pieces})") from None

    def open_opening(self, path: PathArg | None) -> UrTable:
        if path is not None:
            return UrTable(opening.load(path, self.options), self.options)
        shipped = opening.shipped(self.options)
        if shipped is None:
            raise MissingTableError(f"no opening file is shipped for {self.pieces} pieces on this board; make one "
                                    f"from a solved table with 'solver ur opening build'")
        return UrTable(shipped, self.options)

    def solve_table(self, out: PathArg | None, cache: PathArg | None, **settings: Any) -> UrTable:
        if out is None:
            out = default_table_dir(self.options, None if cache is None else str(cache))
        return UrTable(solve(self.options, out, **settings), self.options)
