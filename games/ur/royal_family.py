"""RoyalUr's rule sets (Finkel, Blitz, Masters) as a rule family (``games.ur.family``): the answers
of every ``solver ur`` verb, as ``Reply`` objects, over ``games.ur.royal``'s rules, notation and
moves, ``royal_table``'s solves and tables, ``royal_opening``'s files, ``rgu``'s RoyalUr table
files (read by ``--table FILE.rgu``) and ``royal_answers``' answer builders, and the Python API's
tables (``RoyalTable``). Their values are solved in float64, not proven, and say so.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np

from gamesolver.games.ur import rgu, royal, royal_encoding, royal_opening
from gamesolver.games.ur.family import (
    Cached, CheckAsk, ExportAsk, Family, Log, PathArg, QueryRefused, Reply, SolveAsk, Where, built_reply,
    refuse_options,
)
from gamesolver.games.ur.answers import solving_time
from gamesolver.games.ur.opening import OutsideOpening
from gamesolver.games.ur.provenance import check_lines, of_table
from gamesolver.games.ur.rules import AUTO_BUILD_MAX_PIECES
from gamesolver.games.ur.royal_answers import (
    analyze_answer, best_move_answer, describe, lookup, missing_table_message, outside_opening, parse_roll,
    shipped_fallback, show_answer, solved_table, source_text, table_lookup, table_source,
)
from gamesolver.games.ur.royal_table import (
    DEFAULT_TOLERANCE, default_table_dir, load_royal_table, royal_choices, royal_game, royal_solve, state_rank,
    tier_ranges,
)
from gamesolver.games.ur.royal_table import header as royal_header
from gamesolver.games.ur.tables import RoyalTable
from gamesolver.solver.errors import InputError, MissingTableError
from gamesolver.solver.stochastic.iteration import check_eps, endless_check
from gamesolver.solver.stochastic.outcomes import Regenerated
from gamesolver.solver.stochastic.planning import default_threads


class RoyalFamily(Family):
    """One of RoyalUr's rule sets with its piece count."""

    def __init__(self, rules: royal.RuleSet) -> None:
        self.rules = rules
        self.name = rules.name
        self.pieces = rules.pieces

    def refuse(self, **given: Any) -> None:
        """The fort rules' options, refused with a one-line error naming the rule set."""
        refuse_options(self.name, **given)

    def _where(self, where: Where) -> None:
        self.refuse(cache=where.cache, opening=where.opening)

    # the verbs
    def show(self, position: str) -> Reply:
        pos = royal.parse(position, self.rules)
        return Reply(show_answer(self.rules, pos), [royal.diagram(pos, self.rules)])

    def best_move(self, position: str, roll: str, where: Where) -> Reply:
        self._where(where)
        rules = self.rules
        pos = royal.parse(position, rules)
        r = parse_roll(rules, roll)
        look, source, prov = lookup(rules, where.table, where.solve_first, log=where.log)
        try:
            ranked = royal_choices(rules, look, pos.state(), r)
        except OutsideOpening:
            raise outside_opening(rules) from None
        who = royal.SIDE_NAMES[pos.to_move]
        answer = {**best_move_answer(rules, pos, r, ranked, prov), "source": source}
        if not ranked:
            return Reply(answer, [f"{who} to move, roll {r}: no legal move, the turn passes"])
        best = ranked[0]
        lines = [f"{who} to move, roll {r}: {describe(best.move, rules, pos.to_move)} "
                 f"(wins {100 * best.win_probability:.4f} %)"]
        lines += [f"  also {describe(c.move, rules, pos.to_move)}: {100 * c.win_probability:.4f} %" for c in ranked[1:]]
        return Reply(answer, lines + [f"(from {source_text(source, rules)}; {prov.text()})"])

    def analyze(self, position: str, where: Where) -> Reply:
        self._where(where)
        rules = self.rules
        pos = royal.parse(position, rules)
        look, source, prov = lookup(rules, where.table, where.solve_first, log=where.log)
        try:
            answer = analyze_answer(rules, pos, look, source, prov)
        except OutsideOpening:
            raise outside_opening(rules) from None
        who = royal.SIDE_NAMES[pos.to_move]
        lines = [f"{royal.format_position(pos, rules)}: {who} wins {100 * answer['win_probability']:.4f} % before rolling"]
        lines += [f"  roll {row['roll']} p={row['probability']:<7g} {100 * row['win_probability']:8.4f} %  {row['best']}"
                  for row in answer["rolls"]]
        return Reply(answer, lines + [f"(from {source_text(source, rules)}; {prov.text()})"])

    def graph(self) -> Reply:
        rules = self.rules
        enc = royal_encoding.encoding(rules)
        groups = enc.tier_groups_last_first()
        rows: list[dict[str, Any]] = [{"tiers": [list(t) for t in g], "states": b - a}
                                      for g, (a, b) in zip(groups, tier_ranges(rules))]
        fields = {"rules": rules.name, "pieces": rules.pieces, "states": enc.size,
                  "royalur_count": enc.royalur_state_count(), "tier_groups": rows}
        lines = [f"Ur, {rules.name} rules: {rules.length}-tile paths, {rules.pieces} pieces a side",
                 "tier groups in solving order (pieces borne off: mover, other), states:"]
        lines += [f"  {' + '.join(f'({a},{b})' for a, b in row['tiers']):<16} {row['states']:>14,}" for row in rows]
        lines.append(f"states (mover-relative, game not over): {enc.size:,}; as RoyalUr counts them: "
                     f"{enc.royalur_state_count():,}")
        return Reply(fields, lines)

    def solve_folder(self, out: str | None, cache: str | None) -> tuple[Path, dict[str, Any]]:
        self.refuse(cache=cache)
        return (Path(out) if out is not None else default_table_dir(self.rules)), royal_header(self.rules)

    def solve(self, ask: SolveAsk) -> Reply:
        self.refuse(cache=ask.cache, backend=None if ask.backend == "cpu" else ask.backend)
        given = [name for name, on in (("--method", ask.method_given), ("--walk-policy", ask.policy_place != "auto"),
                                       ("--local-repairs", ask.local_repairs is not None)) if on]
        if given:
            raise InputError(f"{' and '.join(given)} appl{'y' if len(given) > 1 else 'ies'} to the fort rules; "
                             "RoyalUr's rule sets are solved by plain float64 sweeps, tier group after tier group")
        if ask.proof or ask.width is not None:
            raise InputError("--proof and --width apply to the fort rules; RoyalUr's rule sets are solved tier by "
                             "tier in float64, where play never returns (docs/royalur.md says what their residual means)")
        rules = self.rules
        table = royal_solve(rules, ask.out, tolerance=DEFAULT_TOLERANCE if ask.tolerance is None else ask.tolerance,
                            threads=ask.threads, graph=ask.graph, log=ask.log)
        m = table.meta
        p = (1.0 + float(table["value"][state_rank(rules, royal.start(rules).state())])) / 2.0
        keys = ("sweeps", "tiers", "residual", "tolerance", "endless_check", "value_dtype", "solve_seconds_this_run",
                "solve_seconds")
        fields = {"rules": rules.name, "pieces": rules.pieces, "states": table.state_count, "table": str(table.path),
                  "start_win_probability": p, **{k: m[k] for k in keys if k in m}}
        check = m["endless_check"]
        return Reply(fields, [
            f"solved {rules.name}, pieces={rules.pieces}: {table.state_count:,} states, {m['tiers']} tier "
            f"groups, {m['sweeps']} sweeps (float64), stopped at residual {m['residual']:.2g} (below "
            f"{m['tolerance']:g}), {solving_time(m)}; unproven (docs/royalur.md)",
            f"endless check (eps {check['eps']:g}): "
            + ("passed" if check["flagged"] == 0 else f"FAILED in {check['flagged']:,} states"),
            f"light's chance of winning from the start: {100 * p:.10f} %",
            f"table: {table.path}"])

    def check(self, ask: CheckAsk) -> Reply:
        """The table's checksums recomputed, its Bellman residual against the tolerance it was
        solved to, and the endless-play check, as for the fort rules' tables. RoyalUr's values are
        not proven here, and the check says so."""
        self.refuse(cache=ask.cache, bounds=ask.bounds, record=ask.record, width=ask.width)
        rules, table = self.rules, ask.table
        where = Path(table) if table is not None else default_table_dir(rules)
        if table is not None and Path(table).is_file():
            raise InputError(f"--table {table} is a file; ur check reads a table folder of ours (an .rgu file "
                             f"records no residual to check)")
        try:
            solved = load_royal_table(rules, where, build=False, verify=True)
        except MissingTableError:
            raise MissingTableError(missing_table_message(rules, where, table)) from None
        game = royal_game(rules)
        values = np.ascontiguousarray(solved["value"], dtype=np.float64)
        tolerance = float(solved.meta.get("tolerance", DEFAULT_TOLERANCE))
        eps = ask.eps if ask.eps is not None else check_eps(tolerance)
        n = ask.threads or default_threads()
        residual = float(game.sweep(values.copy(), threads=n, write=False))
        result = endless_check(Regenerated(game), values, eps, n, show_progress=None)
        ok = result.passed and residual < tolerance
        fields = {"table": str(solved.path), "rules": rules.name, "pieces": rules.pieces,
                  "states": solved.state_count, "stop_residual": tolerance, "residual": residual,
                  "eps": eps, "passes": result.passes, "flagged": result.flagged, "passed": ok}
        lines = [f"table {solved.path}: {rules.name}, {rules.pieces} pieces, {solved.state_count:,} states, "
                 f"solved until the residual fell below {tolerance:g}; {of_table(solved).text()}"]
        lines += check_lines(residual, tolerance, result, "moves")
        lines.append("passed: these solve the game's equations (unproven)" if ok else "FAILED: not the game's values")
        return Reply(fields, lines, ok=ok)

    def export(self, ask: ExportAsk) -> Reply:
        self.refuse(cache=ask.cache, reachable=ask.reachable, json=ask.as_json)
        if ask.out is None:
            raise InputError("--format rgu needs --out FILE")
        if ask.fmt != "rgu":
            raise InputError(f"unknown export format {ask.fmt!r}; expected rgu")
        rules = self.rules
        where = Path(ask.table) if ask.table is not None else default_table_dir(rules)
        # as a query does: a small table (seconds) is solved into the cache on first use, a larger one
        # is asked for with the command that builds it, or solved first with --solve
        solved = solved_table(rules, where, ask.table, ask.solve_first, log=ask.log)
        values = (1.0 + np.asarray(solved["value"], dtype=np.float64)) / 2.0
        rgu.write_values(ask.out, rules, values, ask.value_type,
                         notes={"author": "gamesolver", "tolerance": solved.meta.get("tolerance")})
        return Reply({"out": ask.out, "format": "rgu", "positions": int(values.shape[0])},
                     [f"wrote {values.shape[0]:,} positions to {ask.out} ({rules.name}, {rules.pieces} pieces, "
                      f"{rgu.value_type_name(ask.value_type)})"])

    def opening_build(self, turns: int, out: str, table: str | None, cache: str | None,
                      log: Log | None = None) -> Reply:
        self.refuse(cache=cache)
        solved = load_royal_table(self.rules, table, build=False)
        arrays, header = royal_opening.build(self.rules, solved, turns)
        royal_opening.write(out, arrays, header)
        return built_reply(out, turns, header, solved.path)

    def opening_info(self, file: str) -> Reply:
        book = royal_opening.load(file, self.rules)
        h, t = book.header, book.header["table"]
        return Reply(book.header, [
            f"{file}: RoyalUr {self.name}, pieces={self.pieces}, settings {h['settings_sha256'][:16]}",
            f"  {h['positions_answered']:,} positions within {h['turns']} moves of the start answered, "
            f"{h['positions_stored']:,} values stored",
            f"  from table {t['values_sha256']} ({book.provenance.text()})"])

    # the server
    def board(self, cache: str | None, is_open: Callable[[str], bool]) -> dict[str, Any]:
        rules = self.rules
        tiles = sorted(set(rules.path) | set(rules.dark_path), key=lambda t: (t[1:], t[0]))
        return {"rules": rules.name, "pieces": rules.pieces, "sides": ["L", "D"],
                "tiles": [{"name": t, "at": [royal.COLUMNS.index(t[0]), int(t[1:])],
                           "roles": ["rosette"] if t in rules.rosettes else [],
                           "section": "shared" if t in rules.path and t in rules.dark_path else "private"}
                          for t in tiles],
                "rolls": [{"name": str(r), "probability": float(p)} for r, p in rules.roll_probabilities],
                "paths": {"L": list(rules.path), "D": list(rules.dark_path)},
                "solved": [rules.pieces] if is_open(self.key) or self._ready(cache) else []}

    def _ready(self, cache: str | None) -> bool:
        """The table is in the cache, or an opening file is shipped for the rule set."""
        return ((default_table_dir(self.rules, cache) / "header.json").is_file()
                or royal_opening.shipped_path(self.rules).is_file())

    def cached(self, cache: str | None) -> Cached:
        rules = self.rules
        where = default_table_dir(rules, cache)

        def build(log: Log) -> None:
            log(f"solving {rules.name} with {rules.pieces} pieces (first use; cached in {where})")
            royal_solve(rules, where, show_progress=False, log=log)

        return Cached(self.key, f"Ur, {rules.name} rules, {rules.pieces} pieces",
                      lambda: load_royal_table(rules, where, build=False),
                      build if rules.pieces <= AUTO_BUILD_MAX_PIECES else None, missing_table_message(rules, where))

    def served(self, what: str, position: str, roll: str | None, read: Callable[[], Any], table_open: bool,
               cache: str | None) -> dict[str, Any]:
        rules = self.rules
        pos = royal.parse(position, rules)
        shown = show_answer(rules, pos)
        view = {"pieces": {**{t: "L" for t in shown["L"]}, **{t: "D" for t in shown["D"]}},
                "off_board": shown["off_board"], "game_over": False}  # royal.parse refuses a finished game
        if what == "show":
            return {"position": royal.format_position(pos, rules), "to_move": pos.to_move, "view": view}
        r = parse_roll(rules, roll or "") if what == "best-move" else None
        # the opening answered at once from the shipped file where the CLI would (unless the table is open)
        book = None if table_open else shipped_fallback(rules, cache)
        if book is not None:
            look, prov, source = book.lookup(), book.provenance, book.source(True)
        else:
            solved = read()
            look, prov, source = table_lookup(rules, solved), of_table(solved), table_source(solved)
        try:
            if r is None:
                return {**analyze_answer(rules, pos, look, source, prov), "view": view}
            ranked = royal_choices(rules, look, pos.state(), r)
        except OutsideOpening:
            raise QueryRefused(str(outside_opening(rules)), {}) from None
        answer = {**best_move_answer(rules, pos, r, ranked, prov), "source": source}
        other = "D" if pos.to_move == "L" else "L"
        top = ranked[0].win_probability if ranked else None
        for row, c in zip(answer["actions"], ranked):
            m = c.move
            nxt = pos.to_move if (m.extra_roll or m.win) else other
            row.update(best=c.win_probability == top, text=describe(m, rules, pos.to_move),
                       after=None if m.win else royal.format_position(royal.Position.of(m.after, nxt), rules))
        passed = royal.Position(pos.light, pos.dark, other)
        return {**answer, "view": view, "pass_to": None if ranked else royal.format_position(passed, rules)}

    # the Python API
    def parse(self, text: str) -> royal.Position:
        return royal.parse(text, self.rules)

    def open_table(self, path: PathArg | None, cache: PathArg | None) -> RoyalTable:
        rules = self.rules
        if path is not None and Path(path).is_file():  # a RoyalUr .rgu file
            look, _, prov = lookup(rules, str(path))
            return RoyalTable(look, rules, prov, Path(path))
        where = Path(path) if path is not None else default_table_dir(rules, None if cache is None else str(cache))
        try:
            solved = load_royal_table(rules, where, build=False)
        except MissingTableError:
            raise MissingTableError(f"no {rules.name} table for {rules.pieces} pieces at {where}; make it with "
                                    f"ur.solve_table(rules={rules.name!r}, pieces={rules.pieces})") from None
        return RoyalTable(table_lookup(rules, solved), rules, of_table(solved), Path(solved.path))

    def open_opening(self, path: PathArg | None) -> RoyalTable:
        rules = self.rules
        book = royal_opening.load(path, rules) if path is not None else royal_opening.shipped(rules)
        if book is None:
            raise MissingTableError(f"no opening file is shipped for {rules.name} with {rules.pieces} pieces; make "
                                    f"one from a solved table with 'solver ur opening build --rules {rules.name}'")
        return RoyalTable(book.lookup(), rules, book.provenance, Path(book.path))

    def solve_table(self, out: PathArg | None, cache: PathArg | None, **settings: Any) -> RoyalTable:
        """``settings`` as ``games.ur.royal_table.royal_solve``'s (tolerance, threads, graph, log)."""
        if out is None:
            out = default_table_dir(self.rules, None if cache is None else str(cache))
        royal_solve(self.rules, out, **settings)
        return self.open_table(out, None)
