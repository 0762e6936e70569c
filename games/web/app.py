"""The web app: the analysis page and a JSON API whose answers are the CLI's ``--json`` answers.

Every ``/api/unee/...`` and ``/api/ur/...`` answer is built by the same function the CLI prints
(``games.unee.answers``, and for Ur the rule family's answers, ``games.ur.family``); the page's extras
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

from gamesolver.games.ur.api import family, is_fort
from gamesolver.games.ur.family import Family, QueryRefused
from gamesolver.games.ur.rules import MAX_PIECES
from gamesolver.games.web.tables import Building, BuildFailed, Source, Tables, TooLarge
from gamesolver.solver.errors import DataFileError, InputError, PositionNotCoveredError, TableError
from gamesolver.games.unee.rules import DEFAULT, check_rule
from gamesolver.games.unee.solution import build_table, open_table, progress_steps, table_path
from gamesolver.solver.encoding import _boards
from gamesolver.games.unee import answers as V
from gamesolver.games.unee.answers import show_answer
from gamesolver.games.unee.notation import parse_position
from gamesolver.games.unee.cycles import optimal_cycle

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
        rule = check_rule(rule)
        path = table_path(DEFAULT, rule, self.cache)
        n = _boards.board_count(DEFAULT.holes, DEFAULT.max_balls)

        def build(job: Any) -> None:
            job.log(f"solving Ünee under the {rule} rule (first use; cached in {path})")
            build_table(DEFAULT, rule, cache=self.cache, progress=job.advance)

        return Source(f"unee-{rule}", f"Ünee under the {rule} rule", lambda: open_table(path, DEFAULT, rule),
                      build, total=n * progress_steps(rule))

    def unee(self, request: Request, what: str) -> dict[str, Any]:
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

        lead, cyc = optimal_cycle(table, pos)
        return V.cycle_answer(pos, False, cyc, lead)

    # -- Ur: every rule family through one interface (games.ur.family)
    def ur_family(self, rules: str, pieces: Any) -> Family:
        """The family ``rules`` names; ``pieces`` None: a RoyalUr rule set's own count, for the fort
        rules 4 (the page then asks for the most pieces answered at once)."""
        k = None if pieces is None else whole_number("pieces", pieces, 1, MAX_PIECES)
        return family(rules, 4 if k is None and is_fort(rules) else k)

    def ur_source(self, fam: Family) -> Source:
        c = fam.cached(self.cache)
        build = c.build
        return Source(c.key, c.label, c.open, None if build is None else (lambda job: build(job.log)), c.message)

    def ur_board(self, request: Request) -> dict[str, Any]:
        """The board, the rolls and the sides for the page to draw (not a CLI answer)."""
        p = params(request, rules="fort", pieces=None)
        return self.ur_family(p["rules"], p["pieces"]).board(self.cache, self.tables.is_open)

    def ur(self, request: Request, what: str) -> dict[str, Any]:
        extra = {"roll": REQUIRED} if what == "best-move" else {}
        p = params(request, position=REQUIRED, rules="fort", pieces=None, **extra)
        fam = self.ur_family(p["rules"], p["pieces"])
        try:  # the table's source (its missing-table message times a sweep) only where it is read
            return fam.served(what, p["position"], p.get("roll"), lambda: self.tables.get(self.ur_source(fam)),
                              self.tables.is_open(fam.key), self.cache)
        except QueryRefused as refused:  # beyond the shipped opening file, as the CLI says
            raise TooLarge(str(refused)) from None

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
