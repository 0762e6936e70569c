"""The web app: the analysis page and a JSON API whose answers are the CLI's ``--json`` answers.

Every ``/api/unee/...`` and ``/api/ur/...`` answer is built by the same function the CLI prints
(``games.unee.answers``, ``games.ur.answers``, ``games.ur.royal_answers``); the page's extras
(the position after each action, the pieces on the tiles) are added beside those fields, never
in place of them. Bad input is HTTP 400 with the CLI's one-line message; a table that is being
built is 202 with a job to poll at ``/api/jobs/{job}``; one too large to build here is 404 with
the CLI's message. Request parameters name positions, rules, rolls and piece counts only; tables
are read from the cache folder the server was started with.
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from gamesolver.games.web.tables import Building, BuildFailed, Source, Tables, TooLarge
from gamesolver.solver.errors import DataFileError, InputError, PositionNotCoveredError, TableError

STATIC = Path(str(resources.files("gamesolver.games.web") / "static"))
# the default of 'solver unee pv --max-plies'; a request may ask for fewer, never more, so that
# one request cannot keep the server busy for long
MAX_PV_PLIES = 10_000


# ------------------------------------------------------------------ request parameters


def params(request: Request, **defaults: Any) -> dict[str, Any]:
    """The query parameters, each named in ``defaults`` and given at most once; anything else is
    refused, so no stray parameter (a path, a table) is ever silently taken."""
    out = dict(defaults)
    seen: set[str] = set()
    for key, value in request.query_params.multi_items():
        if key not in defaults:
            raise InputError(f"unknown parameter {key!r}; this call takes {', '.join(defaults)}")
        if key in seen:
            raise InputError(f"parameter {key!r} given twice; give it once")
        seen.add(key)
        out[key] = value
    missing = [k for k, v in out.items() if v is REQUIRED]
    if missing:
        raise InputError(f"missing parameter {missing[0]!r}; this call takes {', '.join(defaults)}")
    return out


REQUIRED = object()


def whole_number(name: str, text: Any, low: int, high: int) -> int:
    try:
        value = int(str(text).strip())
    except ValueError:
        raise InputError(f"{name} must be a whole number from {low} to {high}, not {text!r}") from None
    if not low <= value <= high:
        raise InputError(f"{name} must be a whole number from {low} to {high}, not {value}")
    return value


# ------------------------------------------------------------------ the app


class Server:
    """The app's state: the tables it has opened and the builds under way."""

    def __init__(self, cache: str | Path | None = None) -> None:
        self.tables = Tables(cache)
        self.cache = self.tables.cache

    # -- Ünee
    def unee_source(self, rule: str) -> Source:
        from gamesolver.games.unee.rules import DEFAULT, check_rule
        from gamesolver.games.unee.solution import build_table, open_table, progress_steps, table_path
        from gamesolver.solver.encoding import _boards

        rule = check_rule(rule)
        path = table_path(DEFAULT, rule, self.cache)
        n = _boards.board_count(DEFAULT.holes, DEFAULT.max_balls)

        def build(job: Any) -> None:
            job.log(f"solving Ünee under the {rule} rule (first use; cached in {path})")
            build_table(DEFAULT, rule, cache=self.cache, progress=job.advance)

        return Source(f"unee-{rule}", f"Ünee under the {rule} rule", lambda: open_table(path, DEFAULT, rule),
                      build, total=n * progress_steps(rule))

    def unee(self, request: Request, what: str) -> dict[str, Any]:
        from gamesolver.games.unee import answers as V
        from gamesolver.games.unee.answers import show_answer
        from gamesolver.games.unee.notation import parse_position
        from gamesolver.games.unee.rules import DEFAULT

        if what == "show":
            p = params(request, position=REQUIRED)
            return show_answer(parse_position(p["position"], DEFAULT), DEFAULT)
        if what == "cycle":
            p = params(request, position=REQUIRED)
            rule = "uncounted"  # the loop best play runs into is the uncounted rule's, as in the CLI
        else:
            p = params(request, position=REQUIRED, rule="uncounted", captured=None,
                       **({"max_plies": MAX_PV_PLIES} if what == "pv" else {}))
            rule = p["rule"]
        pos = parse_position(p["position"], DEFAULT)
        d = V.mover_difference(pos, V.parse_captured(p.get("captured"), pos, DEFAULT))
        plies = whole_number("max_plies", p["max_plies"], 1, MAX_PV_PLIES) if what == "pv" else 0
        table = self.tables.get(self.unee_source(rule))
        if what == "best-move":
            return V.best_move_answer(table, pos, d)
        if what == "analyze":
            return V.analyze_answer(table, pos, d)
        if what == "pv":
            return V.pv_answer(pos, rule, table.principal_variation(pos, d, plies))
        from gamesolver.games.unee.cycles import optimal_cycle

        lead, cyc = optimal_cycle(table, pos)
        return V.cycle_answer(pos, False, cyc, lead)

    # -- Ur
    def ur_rules(self, rules: str, pieces: Any) -> Any:
        """UrOptions for the fort rules, or RoyalUr's RuleSet."""
        from gamesolver.games.ur.rules import MAX_PIECES, UrOptions

        name = str(rules).strip().lower()
        k = None if pieces is None else whole_number("pieces", pieces, 1, MAX_PIECES)
        if name == "fort":
            return UrOptions(pieces=4 if k is None else k)
        from gamesolver.games.ur import royal

        return royal.load_ruleset(name, k)

    def ur_source(self, rules: Any) -> Source:
        from gamesolver.games.ur.rules import AUTO_BUILD_MAX_PIECES, UrOptions

        if isinstance(rules, UrOptions):
            from gamesolver.games.ur.answers import missing_table_message
            from gamesolver.games.ur.solve import default_table_dir, load_table, solve

            where = default_table_dir(rules, self.cache)
            small = rules.pieces <= AUTO_BUILD_MAX_PIECES

            def build(job: Any) -> None:
                job.log(f"solving Ur (fort rules) with {rules.pieces} pieces (first use; cached in {where})")
                solve(rules, where, show_progress=False, log=job.log)

            return Source(f"ur-fort-k{rules.pieces}", f"Ur, fort rules, {rules.pieces} pieces",
                          lambda: load_table(rules, where, build=False), build if small else None,
                          "" if small else missing_table_message(rules, where, False)[0])
        from gamesolver.games.ur import royal_answers
        from gamesolver.games.ur.royal_table import default_table_dir as royal_dir, load_royal_table, royal_solve

        where = royal_dir(rules, self.cache)

        def build_royal(job: Any) -> None:
            job.log(f"solving {rules.name} with {rules.pieces} pieces (first use; cached in {where})")
            royal_solve(rules, where, show_progress=False, log=job.log)

        return Source(f"ur-{rules.name}-k{rules.pieces}", f"Ur, {rules.name} rules, {rules.pieces} pieces",
                      lambda: load_royal_table(rules, where, build=False),
                      build_royal if rules.pieces <= AUTO_BUILD_MAX_PIECES else None,
                      royal_answers.missing_table_message(rules, where))

    def ur_board(self, request: Request) -> dict[str, Any]:
        """The board, the rolls and the sides for the page to draw (not a CLI answer)."""
        from gamesolver.games.ur.rules import UrOptions

        p = params(request, rules="fort", pieces=None)
        rules = self.ur_rules(p["rules"], p["pieces"])
        if isinstance(rules, UrOptions):
            b = rules.board
            return {"rules": "fort", "pieces": rules.pieces, "sides": ["X", "O"],
                    "tiles": [{"name": b.names[i], "at": list(b.at[i]), "section": b.sections[i],
                               "roles": sorted(b.roles[i])} for i in range(b.size)],
                    "rolls": [{"name": r.name, "probability": r.probability} for r in rules.dice.rolls],
                    "solved": self.solved_fort_pieces()}
        from gamesolver.games.ur import royal

        tiles = sorted(set(rules.path) | set(rules.dark_path), key=lambda t: (t[1:], t[0]))
        return {"rules": rules.name, "pieces": rules.pieces, "sides": ["L", "D"],
                "tiles": [{"name": t, "at": [royal.COLUMNS.index(t[0]), int(t[1:])],
                           "roles": ["rosette"] if t in rules.rosettes else [],
                           "section": "shared" if t in rules.path and t in rules.dark_path else "private"}
                          for t in tiles],
                "rolls": [{"name": str(r), "probability": float(p)} for r, p in rules.roll_probabilities],
                "paths": {"L": list(rules.path), "D": list(rules.dark_path)}}

    def solved_fort_pieces(self) -> list[int]:
        """Piece counts the fort rules answer at once: a table in the cache (or open), or an opening
        file shipped with the program (the tab opens at the largest)."""
        from gamesolver.games.ur import opening
        from gamesolver.games.ur.rules import MAX_PIECES, UrOptions
        from gamesolver.games.ur.solve import default_table_dir

        return [k for k in range(1, MAX_PIECES + 1)
                if self.tables.is_open(f"ur-fort-k{k}")
                or (default_table_dir(UrOptions(pieces=k), self.cache) / "header.json").is_file()
                or opening.shipped_path(UrOptions(pieces=k)).is_file()]

    def ur(self, request: Request, what: str) -> dict[str, Any]:
        from gamesolver.games.ur.rules import UrOptions

        extra = {"roll": REQUIRED} if what == "best-move" else {}
        p = params(request, position=REQUIRED, rules="fort", pieces=None, **extra)
        rules = self.ur_rules(p["rules"], p["pieces"])
        if isinstance(rules, UrOptions):
            return self.fort(rules, what, p)
        return self.royal(rules, what, p)

    def shipped_opening(self, options: Any) -> Any:
        """The opening file shipped for these options where the CLI would answer from it
        (``shipped_fallback``), unless the server holds the table open."""
        from gamesolver.games.ur.answers import shipped_fallback

        if self.tables.is_open(f"ur-fort-k{options.pieces}"):
            return None
        return shipped_fallback(options, self.cache)

    def fort(self, options: Any, what: str, p: dict[str, Any]) -> dict[str, Any]:
        from gamesolver.games.ur import answers as C
        from gamesolver.games.ur.opening import OutsideOpening
        from gamesolver.games.ur.engine import terminal_value
        from gamesolver.games.ur.notation import Position, format_position, parse
        from gamesolver.games.ur.solve import choices

        board = options.board
        pos = parse(p["position"], options)
        mine, theirs = pos.mover_relative()
        view = {"pieces": {**{board.names[t]: "X" for t in pos.x}, **{board.names[t]: "O" for t in pos.o}},
                "off_board": {"X": {"pool": options.pieces - len(pos.x)}, "O": {"pool": options.pieces - len(pos.o)}},
                "game_over": terminal_value(board, mine, theirs) is not None}
        if what == "show":
            return {**C.show_answer(options, pos), "view": view}
        r = options.dice.index(p["roll"]) if what == "best-move" else None  # all input checked before any table
        book = self.shipped_opening(options)
        table = book if book is not None else self.tables.get(self.ur_source(options))
        try:
            if r is None:
                return {**C.analyze_answer(options, table, pos), "view": view,
                        "source": C.answer_source(table, book, None)}
            ranked = choices(options, table, pos, r)
        except OutsideOpening:
            raise TooLarge(C.outside_opening_message(options, book, self.cache)[0]) from None
        answer = {**C.best_move_answer(options, pos, r, ranked, table), "source": C.answer_source(table, book, None)}
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

    def royal(self, rules: Any, what: str, p: dict[str, Any]) -> dict[str, Any]:
        from gamesolver.games.ur import royal, royal_answers
        from gamesolver.games.ur.royal_table import royal_choices

        pos = royal.parse(p["position"], rules)
        shown = royal_answers.show_answer(rules, pos)
        view = {"pieces": {**{t: "L" for t in shown["L"]}, **{t: "D" for t in shown["D"]}},
                "off_board": shown["off_board"], "game_over": False}  # royal.parse refuses a finished game
        if what == "show":
            return {"position": royal.format_position(pos, rules), "to_move": pos.to_move, "view": view}
        r = royal_answers.parse_roll(rules, p["roll"]) if what == "best-move" else None
        from gamesolver.games.ur.opening import OutsideOpening
        from gamesolver.games.ur.provenance import of_table
        where = self.ur_source(rules)
        # the opening answered at once from the shipped file where the CLI would (unless the table is open)
        book = None if self.tables.is_open(where.key) else royal_answers.shipped_fallback(rules, self.cache)
        if book is not None:
            look, prov, source = book.lookup(), book.provenance, book.source(True)
        else:
            solved = self.tables.get(where)
            look, prov, source = royal_answers.table_lookup(rules, solved), of_table(solved), royal_answers.table_source(solved)
        try:
            if r is None:
                return {**royal_answers.analyze_answer(rules, pos, look, source, prov), "view": view}
            ranked = royal_choices(rules, look, pos.state(), r)
        except OutsideOpening:
            raise TooLarge(str(royal_answers.outside_opening(rules))) from None
        answer = {**royal_answers.best_move_answer(rules, pos, r, ranked, prov), "source": source}
        other = "D" if pos.to_move == "L" else "L"
        top = ranked[0].win_probability if ranked else None
        for row, c in zip(answer["actions"], ranked):
            m = c.move
            nxt = pos.to_move if (m.extra_roll or m.win) else other
            row.update(best=c.win_probability == top, text=royal_answers.describe(m, rules, pos.to_move),
                       after=None if m.win else royal.format_position(royal.Position.of(m.after, nxt), rules))
        passed = royal.Position(pos.light, pos.dark, other)
        return {**answer, "view": view, "pass_to": None if ranked else royal.format_position(passed, rules)}


def _answer(call: Callable[[Request], Any]) -> Callable[[Request], Response]:
    """Run a query and turn the project's errors into HTTP answers with one-line messages."""

    def endpoint(request: Request) -> Response:
        try:
            return JSONResponse(call(request))
        except (InputError, PositionNotCoveredError) as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        except Building as b:
            job = b.job.as_dict()
            return JSONResponse({"building": job, "progress": f"/api/jobs/{job['job']}"}, status_code=202)
        except TooLarge as exc:
            return JSONResponse({"error": str(exc)}, status_code=404)
        except (TableError, DataFileError, BuildFailed) as exc:
            return JSONResponse({"error": str(exc)}, status_code=503)

    return endpoint


def create_app(cache: str | Path | None = None) -> Starlette:
    """The ASGI app over the tables in ``cache`` (default: the user's table cache)."""
    server = Server(cache)

    def job(request: Request) -> Response:
        found = server.tables.job(request.path_params["job"])
        if found is None:
            return JSONResponse({"error": "no such build"}, status_code=404)
        return JSONResponse(found.as_dict())

    def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    def unee_call(what: str) -> Callable[[Request], Response]:
        return _answer(lambda request: server.unee(request, what))

    def ur_call(what: str) -> Callable[[Request], Response]:
        return _answer(lambda request: server.ur(request, what))

    routes = [
        Route("/", index),
        *[Route(f"/api/unee/{what}", unee_call(what)) for what in ("show", "best-move", "analyze", "pv", "cycle")],
        *[Route(f"/api/ur/{what}", ur_call(what)) for what in ("show", "best-move", "analyze")],
        Route("/api/ur/board", _answer(server.ur_board)),
        Route("/api/jobs/{job}", job),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes)
    app.state.server = server
    return app
