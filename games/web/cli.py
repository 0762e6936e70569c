"""``solver serve``: start the analysis board on a local web server (the ``[web]`` extra).

Starlette and uvicorn are imported only when the command runs, so the base install lists the
command and, without the extra, answers with the one line that installs it.
"""
from __future__ import annotations

import sys

import click

from gamesolver.solver.errors import InputError
from gamesolver.solver.report import example
from gamesolver.games.web.app import create_app
from gamesolver.solver.tables.paths import cache_dir

INSTALL_HINT = 'solver serve needs the web extra: pip install "gamesolver[web]"'


def web_available() -> str | None:
    """None when the extra is installed, else the name of the missing package."""
    import importlib.util

    for name in ("starlette", "uvicorn"):
        if importlib.util.find_spec(name) is None:
            return name
    return None


@click.command(epilog=example("solver serve --port 8000"))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; only this machine can connect unless you name another.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: a free one, printed at start).")
@click.option("--cache", type=click.Path(file_okay=False), default=None,
              help="Table cache directory (default: $SOLVER_CACHE_DIR or ~/.cache/gamesolver).")
@click.option("--json", "as_json", is_flag=True, help="Print the address as JSON once the server listens.")
def serve(host: str, port: int, cache: str | None, as_json: bool) -> None:
    """An analysis board for Ünee and Ur in the browser, answering from the solved tables.

    Open the address it prints. Small missing tables (Ünee, Ur up to 3 pieces) are built on first
    use; larger Ur tables must be solved first with 'solver ur solve'."""
    if web_available() is not None:
        raise InputError(INSTALL_HINT)
    import json
    import socket

    import uvicorn

    # the socket is bound here, not by uvicorn, so a taken port is one clear line and port 0's
    # choice is known before the address is printed. IPPROTO_TCP by name: asyncio turns Nagle's
    # algorithm off only on sockets that say so, and with it on every keep-alive answer waits ~40 ms
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    port = sock.getsockname()[1]
    url = f"http://{f'[{host}]' if family == socket.AF_INET6 else host}:{port}/"
    app = create_app(cache)
    if as_json:
        click.echo(json.dumps({"url": url, "host": host, "port": port, "cache": str(cache_dir(cache))}))
    else:
        click.echo(f"analysis board on {url}  (Ctrl-C stops it)")
    sys.stdout.flush()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
