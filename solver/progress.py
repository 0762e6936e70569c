"""Progress bars on stderr for long work, silent when stderr is not a terminal or when asked."""
from __future__ import annotations

import contextlib
import sys
from typing import Iterator

import click


class Progress:
    """A minimal progress reporter: ``update(n)`` and ``note(text)``; a no-op when disabled."""

    def __init__(self, bar: "click._termui_impl.ProgressBar | None") -> None:
        self._bar = bar

    def update(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def note(self, text: str) -> None:
        if self._bar is not None:
            self._bar.label = text
            self._bar.render_progress()


@contextlib.contextmanager
def progress(total: int, label: str, enabled: bool | None = None) -> Iterator[Progress]:
    """A bar of ``total`` steps on stderr; shown only on a terminal unless ``enabled`` says so."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield Progress(None)
        return
    with click.progressbar(length=total, label=label, file=sys.stderr, show_eta=False, show_percent=True) as bar:
        yield Progress(bar)
