"""A real headless browser on a real ``solver serve``: used by tests/test_serve.py, and run as
``python -m tests.browser --cache DIR --out docs/img`` to take the README's screenshots.

The browser is Debian's ``chromium`` driven by Playwright's Python API (never a browser that
Playwright downloads itself); the server is ``solver serve --port 0 --json`` in a subprocess.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def find_chromium() -> str | None:
    """Debian's chromium (or the one CHROMIUM names); None when there is none."""
    for candidate in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


@contextlib.contextmanager
def server(cache: str | os.PathLike[str] | None = None) -> Iterator[str]:
    """``solver serve`` on a free port of 127.0.0.1; yields its address."""
    cmd = [sys.executable, "-m", "gamesolver.solver", "serve", "--port", "0", "--json"]
    if cache is not None:
        cmd += ["--cache", str(cache)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"solver serve did not start: {proc.stderr.read() if proc.stderr else ''}")
        yield json.loads(line)["url"]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def browser_page(executable: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1180, "height": 760})
            page.set_default_timeout(int(os.environ.get("BROWSER_TIMEOUT_MS", "120000")))  # a first query may build a table (seconds; slower on a busy machine)
            yield page
        finally:
            browser.close()


def shown(page: Any, board: str, **want: str) -> dict[str, str]:
    """Wait until the board (``unee`` or ``ur``) has drawn an answer whose data attributes match
    ``want`` (position, rule, roll, ...), with no build or error showing; returns them."""
    page.wait_for_function(
        """([id, want]) => {
            const b = document.getElementById(id);
            return document.getElementById('status').hidden && b.dataset.position !== undefined
                && Object.entries(want).every(([k, v]) => b.dataset[k] === v);
        }""", arg=[f"{board}-board", want])
    return page.eval_on_selector(f"#{board}-board", "b => Object.assign({}, b.dataset)")


def screenshots(url: str, out: Path, executable: str, fort_pieces: int = 3, royal_pieces: int = 3) -> list[Path]:
    """The README's pictures: Ünee in a position from the README; Ur under the fort rules with a
    roll chosen; Ur under Finkel's rules one move into a game with a roll chosen."""
    out.mkdir(parents=True, exist_ok=True)
    shots = [out / "serve_unee.png", out / "serve_ur_fort.png", out / "serve_ur_finkel.png"]
    with browser_page(executable) as page:
        page.goto(url + "#unee")
        shown(page, "unee")
        page.fill("#unee-position", "3 0 1 / 2 0 6 S")
        page.click("#unee-form button")
        shown(page, "unee", position="3 0 1 / 2 0 6 S")
        page.screenshot(path=str(shots[0]), full_page=True)

        page.click("#tab-ur")
        shown(page, "ur")
        page.select_option("#ur-pieces", str(fort_pieces))
        shown(page, "ur", rules="fort", pieces=str(fort_pieces))
        position = "X:A1,B2,B4 O:B6,C7 X" if fort_pieces >= 3 else "X:A1,B4 O:C7 X"  # as the page writes it
        page.fill("#ur-position", position)
        page.click("#ur-form button")
        shown(page, "ur", rules="fort", position=position)
        page.click("#ur-rolls button[data-roll='blank+gold']")
        shown(page, "ur", rules="fort", roll="blank+gold")
        page.screenshot(path=str(shots[1]), full_page=True)

        page.select_option("#ur-rules", "finkel")
        page.select_option("#ur-pieces", str(royal_pieces))
        start = shown(page, "ur", rules="finkel", pieces=str(royal_pieces), position=f"L:{royal_pieces}/-/0 D:{royal_pieces}/-/0 L")
        page.click("#ur-rolls button[data-roll='2']")
        shown(page, "ur", position=start["position"], roll="2")
        page.locator("#ur-actions tbody tr").first.click()  # the best move: the other side to move
        after = page.wait_for_function(
            "p => { const b = document.getElementById('ur-board'); "
            "return b.dataset.position !== p && b.dataset.roll === '' && b.dataset.position; }",
            arg=start["position"]).json_value()
        page.click("#ur-rolls button[data-roll='2']")
        shown(page, "ur", position=after, roll="2")
        page.screenshot(path=str(shots[2]), full_page=True)
    return shots


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=None, help="table cache the server reads")
    parser.add_argument("--out", default="docs/img", help="folder for the PNG files")
    parser.add_argument("--fort-pieces", type=int, default=3, help="pieces for the fort-rules picture")
    parser.add_argument("--royal-pieces", type=int, default=3, help="pieces for the Finkel picture")
    args = parser.parse_args()
    chromium = find_chromium()
    if chromium is None:
        sys.exit("no chromium found (apt-get install chromium)")
    with server(args.cache) as url:
        for path in screenshots(url, Path(args.out), chromium, args.fort_pieces, args.royal_pieces):
            print(path)


if __name__ == "__main__":
    main()
