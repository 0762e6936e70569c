"""``solver serve``: the JSON API answers what the CLI's ``--json`` answers, refuses bad input
with the CLI's one line (HTTP 400, never 500), never lets a request parameter reach the file
system, builds small missing tables with progress, and the page works in a real browser."""
from __future__ import annotations

import json
import random
import socket
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from gamesolver.solver.cli import cli

try:
    from starlette.testclient import TestClient

    from gamesolver.games.web.app import create_app
    HAVE_WEB = True
except ImportError:
    HAVE_WEB = False

web = pytest.mark.skipif(not HAVE_WEB, reason='the web extra is not installed (pip install "gamesolver[web]")')


def cli_json(*args: str) -> dict:
    result = CliRunner().invoke(cli, list(args) + ["--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1]) if args[0] == "ur" else json.loads(result.stdout)


def cli_error(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    lines = result.output.strip().splitlines()  # an error is one line, a missing table's at most three
    assert 1 <= len(lines) <= 3 and lines[0].startswith("Error: "), result.output
    return result.exit_code, "\n".join(lines)[len("Error: "):]


def assert_mirrors(got: object, want: object, where: str = "") -> None:
    """``got`` holds every field of the CLI's ``want`` with the same value, at every depth; the
    page's extras (the position after an action, ...) may stand beside them."""
    if isinstance(want, dict):
        assert isinstance(got, dict), where
        for k, v in want.items():
            assert k in got, f"{where}.{k} missing"
            assert_mirrors(got[k], v, f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_mirrors(g, w, f"{where}[{i}]")
    else:
        assert got == want, (where, got, want)


def url(path: str, **params: object) -> str:
    return path + "?" + "&".join(f"{k}={quote(str(v), safe='')}" for k, v in params.items())


@pytest.fixture(scope="module")
def unee_tables(tmp_path_factory):
    """The three Ünee tables in the test session's cache (tests/conftest.py; named here, since a
    module's fixture runs before the cache is set for each test), built once, reused after."""
    from gamesolver.games import unee

    cache = tmp_path_factory.getbasetemp() / "cache"
    return {rule: unee.solve(rule, cache=cache) for rule in ("uncounted", "draw", "split")}


@pytest.fixture
def client():
    return TestClient(create_app())


def wait_built(client: "TestClient", path: str) -> dict:
    """Ask until the table is built (a 202 names the job to follow), then return the answer."""
    for _ in range(3000):
        r = client.get(path)
        if r.status_code != 202:
            assert r.status_code == 200, r.text
            return r.json()
        job = client.get(r.json()["progress"]).json()
        assert job["state"] in ("running", "done"), job
        time.sleep(0.2)
    raise AssertionError(f"the table for {path} was not built")


def unee_sample(n: int = 8, seed: int = 17) -> list[tuple[str, str]]:
    """(position, captured so far) from random games, and a few from the README."""
    from gamesolver.games import unee
    from gamesolver.games.unee.answers import show_answer

    rng = random.Random(seed)
    out = [("start", "0-0"), ("3 0 1 / 2 0 6 S", "12-8"), ("0 1 4 / 3 1 0 S", "0-0"), ("0 0 0 / 1 3 0 N", "20-12")]
    pos, caps = unee.parse("start"), [0, 0]
    for _ in range(400):
        moves = show_answer(pos, unee.DEFAULT)["moves"]
        if not moves or len(out) >= n + 4:
            break
        m = rng.choice(moves)
        caps[0 if pos.side == "S" else 1] += m["captured"]
        pos = unee.parse(m["position"])
        if rng.random() < 0.15:
            out.append((str(pos), f"{caps[0]}-{caps[1]}"))
    return out


# ------------------------------------------------------------------ the command


def test_serve_without_the_web_extra_names_the_install(monkeypatch):
    from gamesolver.games.web import cli as web_cli

    monkeypatch.setattr(web_cli, "web_available", lambda: "starlette")
    code, line = cli_error("serve")
    assert code == 2
    assert 'pip install "gamesolver[web]"' in line


@web
def test_serve_refuses_a_taken_port_in_one_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        code, line = cli_error("serve", "--port", str(port))
    assert code == 2 and f"cannot listen on 127.0.0.1:{port}" in line


def test_the_page_ships_in_the_package_and_needs_no_network():
    import fnmatch
    import re

    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")

    root = Path(__file__).resolve().parent.parent
    with open(root / "pyproject.toml", "rb") as f:
        globs = tomllib.load(f)["tool"]["setuptools"]["package-data"]["gamesolver.games.web"]
    web_dir = root / "games" / "web"
    files = {p.relative_to(web_dir).as_posix() for p in (web_dir / "static").rglob("*") if p.is_file()}
    assert {"static/index.html", "static/common.js", "static/unee.js", "static/ur.js", "static/style.css"} <= files
    assert all(any(fnmatch.fnmatch(f, g) for g in globs) for f in files), (files, globs)
    for f in files:  # no CDN, no web font, no remote script: the page works offline
        text = (web_dir / f).read_text(encoding="utf-8")
        assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text, re.IGNORECASE), f


# ------------------------------------------------------------------ answers equal the CLI's


@web
@pytest.mark.parametrize("rule", ["uncounted", "draw", "split"])
def test_unee_answers_equal_the_cli(client, unee_tables, rule):
    for position, captured in unee_sample():
        for what in ("analyze", "best-move", "pv"):
            r = client.get(url(f"/api/unee/{what}", position=position, rule=rule, captured=captured))
            assert r.status_code == 200, r.text
            assert r.json() == cli_json("unee", what, position, "--rule", rule, "--captured", captured), \
                (what, position, rule)
    shown = client.get(url("/api/unee/show", position="3 0 1 / 2 0 6 S")).json()
    assert shown == cli_json("unee", "show", "3 0 1 / 2 0 6 S")


@web
def test_unee_cycle_and_values_equal_the_table(client, unee_tables):
    from gamesolver.games import unee

    t = unee_tables["uncounted"]
    for position, _ in unee_sample(4, seed=3):
        got = client.get(url("/api/unee/cycle", position=position)).json()
        assert got == cli_json("unee", "cycle", position)
        answer = client.get(url("/api/unee/analyze", position=position)).json()
        pos = unee.parse(position)
        assert answer["value"] == t.probe_value(pos)
        assert [m["value"] for m in answer["moves"]] == [m.value for m in t.analyze(pos)]


@web
def test_ur_fort_answers_equal_the_cli(client):
    from gamesolver.games.ur.rules import UrOptions

    wait_built(client, url("/api/ur/analyze", position="start", pieces=2))
    board = UrOptions(pieces=2).board
    rng = random.Random(5)
    positions = ["start", "X:A1,C1 O:B4 X"]
    while len(positions) < 8:
        tiles = rng.sample(board.names, 4)
        x, o = tiles[: rng.randint(0, 2)], tiles[2: 2 + rng.randint(0, 2)]
        positions.append(f"X:{','.join(x) or '-'} O:{','.join(o) or '-'} {rng.choice('XO')}")
    for position in positions:
        got = client.get(url("/api/ur/analyze", position=position, pieces=2)).json()
        want = cli_json("ur", "analyze", position, "--pieces", "2")
        assert_mirrors(got, want, position)
        for roll in ("blank+blank", "gold+silver", "silver+silver"):
            got = client.get(url("/api/ur/best-move", position=position, pieces=2, roll=roll)).json()
            want = cli_json("ur", "best-move", position, "--roll", roll, "--pieces", "2")
            assert_mirrors(got, want, position)
            assert all(a["after"].endswith(" X") or a["after"].endswith(" O") for a in got["actions"])


@web
def test_a_won_ur_game_is_answered_at_once_and_has_no_best_move(client):
    # seven pieces, no table anywhere: a finished game's value comes from the rules, as in the CLI
    position = "X:A1,C1,A7,C7 O:B1 O"
    r = client.get(url("/api/ur/analyze", position=position, pieces=7))
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["view"]["game_over"] is True and got["winner"] == "X" and got["value"] == -1.0
    assert_mirrors(got, cli_json("ur", "analyze", position, "--pieces", "7"), position)
    refused = client.get(url("/api/ur/best-move", position=position, pieces=7, roll="gold+gold"))
    code, message = cli_error("ur", "best-move", position, "--roll", "gold+gold", "--pieces", "7")
    assert refused.status_code == 400 and code == 2 and refused.json()["error"] == message


@web
def test_ur_royal_answers_equal_the_cli_and_the_positions_after(client):
    wait_built(client, url("/api/ur/analyze", position="start", rules="finkel", pieces=2))
    rng = random.Random(11)
    position, seen = "start", 0
    while seen < 8:
        got = client.get(url("/api/ur/analyze", position=position, rules="finkel", pieces=2)).json()
        want = cli_json("ur", "analyze", position, "--rules", "finkel", "--pieces", "2")
        assert_mirrors(got, want, position)
        roll = rng.choice([1, 2, 2, 3])
        best = client.get(url("/api/ur/best-move", position=position, rules="finkel", pieces=2, roll=roll)).json()
        want = cli_json("ur", "best-move", position, "--roll", str(roll), "--rules", "finkel", "--pieces", "2")
        assert_mirrors(best, want, position)
        # each move's chance is the position after it, seen by whoever moves there
        for m in best["actions"]:
            if m["after"] is None:
                assert m["wins"] and m["win_probability"] == 1.0
                continue
            after = client.get(url("/api/ur/analyze", position=m["after"], rules="finkel", pieces=2)).json()
            same_side = after["to_move"] == got["to_move"]
            p = after["win_probability"] if same_side else 1.0 - after["win_probability"]
            assert m["win_probability"] == pytest.approx(p, abs=1e-12)
        nxt = [m["after"] for m in best["actions"] if m["after"]]
        position = rng.choice(nxt) if nxt else best["pass_to"] or "start"
        seen += 1


# ------------------------------------------------------------------ bad input: 400, the CLI's line


@web
@pytest.mark.parametrize("api, cli_args", [
    (url("/api/unee/analyze", position="6 6 / 6 6 6 S"), ["unee", "analyze", "6 6 / 6 6 6 S"]),
    (url("/api/unee/best-move", position="6 6 6 / 6 x 6 S"), ["unee", "best-move", "6 6 6 / 6 x 6 S"]),
    (url("/api/unee/pv", position="start", captured="20-20"), ["unee", "pv", "start", "--captured", "20-20"]),
    (url("/api/unee/show", position="1 2 3 / 4 5 6"), ["unee", "show", "1 2 3 / 4 5 6"]),
    (url("/api/ur/analyze", position="X:Z9 O:- X", pieces=2), ["ur", "analyze", "X:Z9 O:- X", "--pieces", "2"]),
    (url("/api/ur/analyze", position="start", pieces=9), ["ur", "analyze", "start", "--pieces", "9"]),
    (url("/api/ur/best-move", position="start", pieces=2, roll="gold+copper"),
     ["ur", "best-move", "start", "--roll", "gold+copper", "--pieces", "2"]),
    (url("/api/ur/analyze", position="start", rules="nope"), ["ur", "analyze", "start", "--rules", "nope"]),
    (url("/api/ur/best-move", position="start", rules="finkel", pieces=2, roll=9),
     ["ur", "best-move", "start", "--roll", "9", "--rules", "finkel", "--pieces", "2"]),
])
def test_bad_input_is_400_with_the_cli_line(client, api, cli_args):
    code, line = cli_error(*cli_args)
    assert code == 2
    r = client.get(api)
    assert r.status_code == 400 and r.json() == {"error": line}


@web
def test_unknown_rule_and_parameters_are_400(client):
    from gamesolver.games import unee
    from gamesolver.solver.errors import InputError

    with pytest.raises(InputError) as raised:
        unee.solve("sudden-death")
    r = client.get(url("/api/unee/analyze", position="start", rule="sudden-death"))
    assert r.status_code == 400 and r.json() == {"error": str(raised.value)}
    for api in (url("/api/unee/analyze", position="start", table="/tmp"),
                url("/api/ur/analyze", position="start", cache="/tmp"),
                "/api/unee/analyze?position=start&position=start",
                "/api/unee/analyze",
                url("/api/ur/analyze", position="start", pieces="four")):
        r = client.get(api)
        assert r.status_code == 400, api
        assert len(r.json()["error"].splitlines()) == 1


@web
def test_garbage_never_gets_a_500(client, unee_tables):
    rng = random.Random(23)
    alphabet = "0123456789 /SNXO:,-+.%ÄÜ\\\x00\t" + "abcdefghijklmnopqrstuvwxyz"
    calls = ["/api/unee/show", "/api/unee/analyze", "/api/unee/best-move", "/api/unee/pv", "/api/unee/cycle",
             "/api/ur/show", "/api/ur/analyze", "/api/ur/best-move", "/api/ur/board"]
    for _ in range(150):
        junk = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        params = {rng.choice(["position", "rule", "captured", "roll", "pieces", "rules", "max_plies"]): junk}
        if rng.random() < 0.7:
            params["position"] = rng.choice(["start", junk, "6 6 6 / 6 6 6 S", "X:A1 O:- X"])
        r = client.get(url(rng.choice(calls), **params))
        assert r.status_code in (200, 202, 400, 404), (r.status_code, r.text)
        assert "error" in r.json() or r.status_code in (200, 202)


# ------------------------------------------------------------------ the file system stays out of reach


@web
def test_no_request_parameter_reaches_the_file_system(client, unee_tables):
    marker = "zq-traversal-probe"
    touched: list[tuple[str, tuple]] = []
    watching = [True]

    def hook(event: str, args: tuple) -> None:
        if watching[0] and event in ("open", "os.listdir", "os.scandir", "os.mkdir", "os.rename", "os.remove",
                                     "os.rmdir", "shutil.rmtree", "os.chdir") and marker in repr(args):
            touched.append((event, args))

    sys.addaudithook(hook)  # hooks cannot be removed; ``watching`` turns this one off after the test
    try:
        for evil in (f"../../{marker}", f"/tmp/{marker}", f"..%2f..%2f{marker}", f"~/{marker}", f"C:\\{marker}"):
            for api in (url("/api/unee/analyze", position=evil), url("/api/unee/analyze", position="start", rule=evil),
                        url("/api/unee/analyze", position="start", table=evil),
                        url("/api/ur/analyze", position="start", rules=evil),
                        url("/api/ur/analyze", position="start", pieces=evil),
                        url("/api/ur/analyze", position="start", board=evil),
                        url("/api/ur/best-move", position="start", pieces=2, roll=evil),
                        url("/api/ur/board", rules=evil), f"/api/jobs/{quote(evil, safe='')}"):
                r = client.get(api)
                assert r.status_code in (400, 404), (api, r.status_code)
    finally:
        watching[0] = False
    assert touched == []


@web
@pytest.mark.parametrize("path", ["/static/../app.py", "/static/%2e%2e/app.py", "/static/..%2fapp.py",
                                  "/static/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd", "/static//etc/passwd",
                                  "/static/..%5c..%5capp.py"])
def test_static_files_stay_in_their_folder(client, path):
    r = client.get(path)
    assert r.status_code == 404
    assert "import" not in r.text and "root:" not in r.text


@web
def test_the_ur_tab_opens_where_answers_come_at_once_and_says_what_is_proven(tmp_path):
    client = TestClient(create_app(tmp_path))  # an empty cache: only the shipped opening files answer
    board = client.get(url("/api/ur/board", rules="fort")).json()
    assert max(board["solved"]) == 6 and {4, 5, 6} <= set(board["solved"])
    start = client.get(url("/api/ur/analyze", position="start", pieces=max(board["solved"]))).json()
    assert start["value"] > 0.1 and start["proven"] is False and start["source"]["kind"] == "opening-file"
    four = client.get(url("/api/ur/analyze", position="start", pieces=4)).json()
    assert four["proven"] is True and four["lower"] <= four["value"] <= four["upper"]
    assert "function proofText" in client.get("/static/ur.js").text  # the page words both cases


@web
def test_royalur_openings_are_answered_from_the_shipped_files(tmp_path):
    from gamesolver.games.ur import royal, royal_opening

    rules = royal.load_ruleset("blitz")
    if royal_opening.shipped(rules) is None:
        pytest.skip("no opening file is shipped for blitz")
    client = TestClient(create_app(tmp_path))  # an empty cache
    r = client.get(url("/api/ur/analyze", position="start", rules="blitz"))
    assert r.status_code == 200, r.text
    cli = cli_json("ur", "analyze", "start", "--rules", "blitz")
    assert r.json()["win_probability"] == cli["win_probability"] and r.json()["proven"] is False
    assert r.json()["source"]["kind"] == "opening-file" and r.json()["source"]["shipped"] is True
    far = royal.format_position(royal.Position.of(max(royal_opening.reachable(rules, 10).items(),
                                                      key=lambda kv: kv[1])[0], "L"), rules)
    r = client.get(url("/api/ur/analyze", position=far, rules="blitz"))
    assert r.status_code == 404 and "solver ur solve --rules blitz" in r.json()["error"]
    assert not any(tmp_path.iterdir())


# ------------------------------------------------------------------ tables: built when small, else refused


@web
def test_small_missing_table_is_built_with_progress_and_a_large_one_refused(tmp_path):
    client = TestClient(create_app(tmp_path))
    first = client.get(url("/api/ur/analyze", position="start", pieces=1))
    assert first.status_code == 202
    job = first.json()["building"]
    assert job["state"] == "running" and first.json()["progress"] == f"/api/jobs/{job['job']}"
    answer = wait_built(client, url("/api/ur/analyze", position="start", pieces=1))
    assert client.get(first.json()["progress"]).json()["state"] == "done"
    assert answer["value"] == cli_json("ur", "analyze", "start", "--pieces", "1", "--cache", str(tmp_path))["value"]
    # opened once: the same table object answers every later query
    server = client.app.state.server
    assert server.tables.is_open("ur-fort-k1")

    # seven pieces: no table, no opening file; the CLI's message, but for the sweep rate it measures
    # each time it is asked
    code, line = cli_error("ur", "analyze", "start", "--pieces", "7", "--cache", str(tmp_path))
    r = client.get(url("/api/ur/analyze", position="start", pieces=7))
    head = line.split(" states takes about")[0]
    assert r.status_code == 404 and r.json()["error"].startswith(head + " states takes about")
    assert "solver ur solve --pieces 7" in r.json()["error"]
    # six pieces: the shipped opening file answers the first turns as the CLI does, and says so; a
    # position beyond them gets the CLI's message, which names the file
    for what, extra in (("analyze", {}), ("best-move", {"roll": "gold+silver"})):
        cli = cli_json("ur", what, "start", "--pieces", "6", "--cache", str(tmp_path),
                       *(["--roll", extra["roll"]] if extra else []))
        r = client.get(url(f"/api/ur/{what}", position="start", pieces=6, **extra))
        assert r.status_code == 200 and r.json()["source"]["shipped"] is True
        assert_mirrors(r.json(), cli)
    far = "X:B7,B8 O:B1,B3,B4,A7 X"
    code, line = cli_error("ur", "analyze", far, "--pieces", "6", "--cache", str(tmp_path))
    r = client.get(url("/api/ur/analyze", position=far, pieces=6))
    assert r.status_code == 404 and r.json()["error"].startswith(line.split(" states takes about")[0])
    assert "holds only the positions within 5 turns of the start, not this one" in r.json()["error"]
    assert not any(p.name.startswith(("k6", "k7")) for p in (tmp_path / "ur").iterdir())


@web
def test_tables_are_memory_mapped_and_opened_once(client, unee_tables):
    import numpy as np

    client.get(url("/api/unee/analyze", position="start"))
    tables = client.app.state.server.tables
    first = tables.get(client.app.state.server.unee_source("uncounted"))
    client.get(url("/api/unee/analyze", position="start"))
    assert tables.get(client.app.state.server.unee_source("uncounted")) is first
    assert isinstance(first.table["value"], np.memmap)


# ------------------------------------------------------------------ the page in a real browser


@pytest.fixture(scope="module")
def browser_env(tmp_path_factory):
    from tests import browser

    if not HAVE_WEB:
        pytest.skip('the web extra is not installed (pip install "gamesolver[web]")')
    chromium = browser.find_chromium()
    if chromium is None:
        pytest.skip("no chromium browser found (apt-get install chromium; .ci/run installs it)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("Playwright is not installed (pip install playwright; .ci/run installs it)")
    cache = tmp_path_factory.getbasetemp() / "cache"  # the session's cache (tests/conftest.py)
    with browser.server(cache) as address, browser.browser_page(chromium) as page:
        yield address, page, cache


@web
def test_unee_page_in_a_browser(browser_env, unee_tables, tmp_path):
    from gamesolver.games import unee
    from tests.browser import shown

    address, page, _ = browser_env
    t = unee_tables["uncounted"]
    page.goto(address + "#unee")
    shown(page, "unee", position="6 6 6 / 6 6 6 S")
    rows = page.eval_on_selector_all("#unee-moves tbody tr", "rs => rs.map(r => [r.dataset.move, r.dataset.value])")
    start = unee.parse("start")
    assert rows == [[m.move, str(m.value)] for m in t.analyze(start)]

    legend = page.text_content("#unee-legend")  # the badges under the holes are explained on the page
    assert "Under each hole" in legend and "less those the other side captures" in legend
    assert page.get_attribute("#unee-board .hole.playable .badge", "title")

    page.fill("#unee-position", "3 0 1 / 2 0 6 S")
    page.click("#unee-form button")
    shown(page, "unee", position="3 0 1 / 2 0 6 S")
    page.click("button[data-hole='S-right']")  # click a hole: the move is played
    after = t.analyze(unee.parse("3 0 1 / 2 0 6 S"))[0].position
    shown(page, "unee", position=str(after))
    assert page.get_attribute("#unee-meaning", "data-value") == str(t.probe_value(after))
    for move in t.analyze(after):
        cell = page.text_content(f"#unee-moves tr[data-move='{move.move}'] td.value")
        assert cell.strip() == (f"+{move.value}" if move.value > 0 else str(move.value))

    page.click("#unee-step")  # one ply of best play
    best = t.best_move(after)
    shown(page, "unee", position=str(best.position))
    page.select_option("#unee-rule", "draw")
    shown(page, "unee", position=str(best.position), rule="draw")
    assert page.get_attribute("#unee-legend", "data-rule") == "draw"
    assert "wins, draw or loses" in page.text_content("#unee-legend")
    outcome = unee_tables["draw"].probe_value(best.position, captured=0)
    assert page.text_content("#unee-meaning").count({1: "wins", 0: "draws", -1: "loses"}[outcome]) >= 1
    page.screenshot(path=str(tmp_path / "unee.png"), full_page=True)
    assert (tmp_path / "unee.png").stat().st_size > 10_000


@web
def test_ur_page_in_a_browser(browser_env, tmp_path):
    from gamesolver.games.ur import royal
    from gamesolver.games.ur.royal_answers import table_lookup
    from gamesolver.games.ur.royal_table import default_table_dir, load_royal_table, royal_choices
    from tests.browser import shown

    address, page, cache = browser_env
    page.goto(address + "#unee")
    page.click("#tab-ur")
    shown(page, "ur")
    page.select_option("#ur-pieces", "2")
    shown(page, "ur", rules="fort", pieces="2")  # built on first use when missing, progress on the page
    page.select_option("#ur-rules", "finkel")  # a rule set opens at its own piece count, not the last one's
    shown(page, "ur", rules="finkel", pieces="7", position="L:7/-/0 D:7/-/0 L")
    page.select_option("#ur-rules", "blitz")
    shown(page, "ur", rules="blitz", pieces="5", position="L:5/-/0 D:5/-/0 L")
    page.select_option("#ur-rules", "finkel")
    shown(page, "ur", rules="finkel", pieces="7")
    page.select_option("#ur-pieces", "2")
    shown(page, "ur", rules="finkel", pieces="2", position="L:2/-/0 D:2/-/0 L")
    page.click("#ur-rolls button[data-roll='2']")
    shown(page, "ur", rules="finkel", pieces="2", roll="2")

    rules = royal.load_ruleset("finkel", 2)
    look = table_lookup(rules, load_royal_table(rules, default_table_dir(rules, str(cache)), build=False))
    pos = royal.parse("start", rules)
    ranked = royal_choices(rules, look, pos.state(), 2)
    shown_values = page.eval_on_selector_all("#ur-actions tbody tr", "rs => rs.map(r => Number(r.dataset.value))")
    assert shown_values == pytest.approx([c.win_probability for c in ranked], abs=1e-12)
    assert float(page.get_attribute("#ur-gauge-label", "data-p")) == pytest.approx(look(pos.state()), abs=1e-12)
    # every roll's tile shows its best action, without a click; the value says where it is from
    answer = page.evaluate("fetch('/api/ur/analyze?rules=finkel&pieces=2&position=start').then(r => r.json())")
    tiles = page.eval_on_selector_all("#ur-rolls button", "bs => bs.map(b => [b.dataset.roll, b.querySelector('.rbest').textContent])")
    assert tiles == [[str(row["roll"]), row["best"]] for row in answer["rolls"]] and all(best for _, best in tiles)
    note = page.text_content("#ur-gauge-note")
    assert "unproven (residual" in note and "from " in note

    page.locator("#ur-actions tbody tr").first.click()  # play the best move: dark to move
    after = royal.Position.of(ranked[0].move.after, "L" if ranked[0].move.extra_roll else "D")
    shown(page, "ur", position=royal.format_position(after, rules), roll="")
    assert float(page.get_attribute("#ur-gauge-label", "data-p")) == pytest.approx(look(after.state()), abs=1e-12)
    page.screenshot(path=str(tmp_path / "ur.png"), full_page=True)
    assert (tmp_path / "ur.png").stat().st_size > 10_000


@web
def test_a_won_ur_game_on_the_page_says_so_and_chooses_nothing(browser_env):
    from tests.browser import shown

    address, page, _ = browser_env
    page.goto(address + "#ur")
    page.click("#tab-ur")
    page.select_option("#ur-rules", "fort")  # (the page may be where an earlier test left it)
    shown(page, "ur", rules="fort")
    # seven pieces: no table here (the start is refused), yet the rules answer a finished game; the
    # refusal is awaited, so that the new board's start cannot land after the position set below
    page.select_option("#ur-pieces", "7")
    page.wait_for_function("() => document.getElementById('status').textContent.includes('no solved table for pieces=7')")
    page.fill("#ur-position", "X:A1,C1,A7,C7 O:B1 O")
    page.click("#ur-form button")
    over = "the game is over: X holds all four forts and has won"
    page.wait_for_function("t => document.getElementById('status').textContent.includes(t)", arg=over)
    page.click("#ur-rolls button[data-roll='gold+gold']")  # a roll chosen: still no action, and no error
    page.wait_for_function("() => document.getElementById('ur-board').dataset.roll === 'gold+gold'")
    assert over in page.text_content("#status")
    assert page.eval_on_selector_all("#ur-actions tbody tr", "rs => rs.length") == 0
    assert page.get_attribute("#ur-gauge-label", "data-value") == "-1"
