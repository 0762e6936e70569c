"""``solver serve``: how fast a query is answered, through the ASGI app and over HTTP.

Run with ``nice -n 19 python benchmarks/bench_serve.py [--cache DIR] [--pieces K] [--repeat N]``
(needs the ``[web]`` extra). Tables missing from the cache are built first (Ünee's three rules,
Ur's fort rules with K pieces, Finkel with 3 pieces; seconds each, not timed). Each query is asked
``--repeat`` times over a sample of positions; the script prints the median, the 95th percentile
and the worst time per endpoint, in process (a bare ASGI call: routing, the table probe, the CLI's
answer function and JSON) and over HTTP to uvicorn on 127.0.0.1 (keep-alive), against the
issue's target of 50 ms. The reference is the same answer computed by the CLI's function called
directly, so the ratio is what the web layer adds.
"""
from __future__ import annotations

import argparse
import asyncio
import http.client
import random
import socket
import statistics
import tempfile
import threading
import time
from typing import Any, Callable
from urllib.parse import quote

TARGET_MS = 50.0


def asgi_get(app: Any, path: str) -> tuple[int, bytes]:
    """One GET through the ASGI interface, no network and no client library."""
    raw_path, _, query = path.partition("?")
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": raw_path, "raw_path": raw_path.encode(), "query_string": query.encode(), "headers": [],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80), "root_path": ""}
    status, body = [0], []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        if message["type"] == "http.response.start":
            status[0] = message["status"]
        elif message["type"] == "http.response.body":
            body.append(message.get("body", b""))

    asyncio.run(app(scope, receive, send))
    return status[0], b"".join(body)


def url(path: str, **params: object) -> str:
    return path + "?" + "&".join(f"{k}={quote(str(v), safe='')}" for k, v in params.items())


def timed(call: Callable[[], Any], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        call()
        out.append(1000 * (time.perf_counter() - t0))
    return out


def row(name: str, ms: list[float], reference: list[float] | None = None) -> str:
    ms = sorted(ms)
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    ratio = f"{statistics.median(ms) / statistics.median(reference):7.1f}x" if reference else "        "
    ok = "ok" if p95 < TARGET_MS else "OVER"
    return f"  {name:<34} {statistics.median(ms):8.2f} {p95:8.2f} {ms[-1]:8.2f}  {ratio}  {ok}"


def unee_positions(n: int, seed: int = 1) -> list[str]:
    from gamesolver.games import unee
    from gamesolver.games.unee.answers import show_answer

    rng = random.Random(seed)
    out, pos = ["start"], unee.parse("start")
    while len(out) < n:
        moves = show_answer(pos, unee.DEFAULT)["moves"]
        if not moves:
            pos = unee.parse("start")
            continue
        pos = unee.parse(rng.choice(moves)["position"])
        if show_answer(pos, unee.DEFAULT)["moves"]:
            out.append(str(pos))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=None, help="table cache (default: a new temporary folder)")
    parser.add_argument("--pieces", type=int, default=3, help="Ur fort-rules pieces (a table that exists or K <= 3)")
    parser.add_argument("--repeat", type=int, default=200, help="queries per endpoint")
    args = parser.parse_args()

    import uvicorn

    from gamesolver.games import unee
    from gamesolver.games.unee import answers as V
    from gamesolver.games.ur import answers as UA
    from gamesolver.games.ur.notation import parse as ur_parse
    from gamesolver.games.ur.rules import UrOptions
    from gamesolver.games.ur.solve import choices, default_table_dir, load_table
    from gamesolver.games.web.app import create_app

    cache = args.cache or tempfile.mkdtemp(prefix="bench-serve-")
    print(f"tables in {cache} (building any that are missing, not timed)")
    tables = {rule: unee.solve(rule, cache=cache) for rule in ("uncounted", "draw", "split")}
    fort = UrOptions(pieces=args.pieces)
    fort_table = load_table(fort, default_table_dir(fort, cache))
    from gamesolver.games.ur import royal
    from gamesolver.games.ur.royal_table import default_table_dir as royal_dir, load_royal_table

    finkel = royal.load_ruleset("finkel", 3)
    load_royal_table(finkel, royal_dir(finkel, cache))

    app = create_app(cache)
    rng = random.Random(7)
    positions = unee_positions(40)
    ur_positions = ["start", "X:A1,B4 O:C7 X", "X:B1,B2 O:B3 O", "X:A2 O:C2,B5 X"][: max(1, args.pieces + 1)]
    rolls = fort.dice.names()

    first_ms = {}
    for name, path in (("unee analyze (opens the table)", url("/api/unee/analyze", position="start")),
                       ("ur analyze (opens the table)", url("/api/ur/analyze", position="start", pieces=args.pieces)),
                       ("finkel analyze (opens the table)",
                        url("/api/ur/analyze", position="start", rules="finkel", pieces=3))):
        t0 = time.perf_counter()
        status, body = asgi_get(app, path)
        first_ms[name] = 1000 * (time.perf_counter() - t0)
        assert status == 200, body

    def pick(items: list[Any]) -> Any:
        return items[rng.randrange(len(items))]

    cases: list[tuple[str, Callable[[], str], Callable[[str], Any] | None]] = []
    for rule in ("uncounted", "draw", "split"):
        cases.append((f"unee analyze --rule {rule}",
                      lambda rule=rule: url("/api/unee/analyze", position=pick(positions), rule=rule),
                      lambda p, rule=rule: V.analyze_answer(tables[rule], unee.parse(p), 0)))
    cases.append(("unee best-move", lambda: url("/api/unee/best-move", position=pick(positions)),
                  lambda p: V.best_move_answer(tables["uncounted"], unee.parse(p), 0)))
    cases.append(("unee pv", lambda: url("/api/unee/pv", position=pick(positions)),
                  lambda p: V.pv_answer(unee.parse(p), "uncounted", tables["uncounted"].principal_variation(unee.parse(p)))))
    cases.append(("unee show", lambda: url("/api/unee/show", position=pick(positions)), None))
    cases.append((f"ur analyze (fort, K={args.pieces})",
                  lambda: url("/api/ur/analyze", position=pick(ur_positions), pieces=args.pieces),
                  lambda p: UA.analyze_answer(fort, fort_table, ur_parse(p, fort))))
    cases.append((f"ur best-move (fort, K={args.pieces})",
                  lambda: url("/api/ur/best-move", position=pick(ur_positions), pieces=args.pieces, roll=pick(rolls)),
                  None))
    cases.append(("ur analyze (finkel, K=3)", lambda: url("/api/ur/analyze", position="start", rules="finkel", pieces=3),
                  None))
    cases.append(("ur best-move (finkel, K=3)",
                  lambda: url("/api/ur/best-move", position="start", rules="finkel", pieces=3, roll=pick([1, 2, 3, 4])),
                  None))

    print()
    for name, ms in first_ms.items():
        print(f"  first query, {name}: {ms:.1f} ms")
    print(f"\nin process (ASGI call), {args.repeat} queries each, ms   median      p95    worst  vs CLI fn  <{TARGET_MS:g} ms")
    asgi: dict[str, list[float]] = {}
    for name, make, direct in cases:
        paths = [make() for _ in range(args.repeat)]
        it = iter(paths)
        def ask(path: str) -> None:
            status, body = asgi_get(app, path)
            assert status == 200, (path, body)

        asgi[name] = timed(lambda: ask(next(it)), args.repeat)
        ref = None
        if direct is not None:
            from urllib.parse import parse_qs, urlparse

            ps = [parse_qs(urlparse(p).query)["position"][0] for p in paths]
            jt = iter(ps)
            ref = timed(lambda: direct(next(jt)), args.repeat)
        print(row(name, asgi[name], ref))

    # over HTTP: uvicorn in a thread on a free port, one keep-alive connection
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # as solver serve does (no Nagle)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    conn = http.client.HTTPConnection("127.0.0.1", port)

    def http_get(path: str) -> None:
        conn.request("GET", path)
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 200, path

    print(f"\nover HTTP (uvicorn, keep-alive), {args.repeat} queries each, ms   median      p95    worst  vs ASGI    <{TARGET_MS:g} ms")
    for name, make, _ in cases:
        paths = [make() for _ in range(args.repeat)]
        it = iter(paths)
        print(row(name, timed(lambda: http_get(next(it)), args.repeat), asgi[name]))
    conn.close()
    server.should_exit = True
    thread.join(timeout=5)


if __name__ == "__main__":
    main()
