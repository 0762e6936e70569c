"""The tables the server answers from: each opened once (memory-mapped) and kept; a missing one
built in a background thread when it takes seconds, with its progress for the page to poll.

Only the server's cache folder (set on the command line) is ever read or written; requests name
a game, a rule and a piece count, never a path.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from gamesolver.solver.errors import MissingTableError


class Building(Exception):
    """The table is being built; ``job`` says how far it is."""

    def __init__(self, job: "Job") -> None:
        super().__init__(job.what)
        self.job = job


class BuildFailed(Exception):
    """The background build of the table failed; the message says why (the next query retries)."""


class TooLarge(Exception):
    """The table is missing and too large to build as a side effect of a query."""


@dataclass
class Job:
    """A table being built: steps done of ``total`` (0: unknown), the last line of its log."""

    key: str
    what: str
    total: int = 0
    done: int = 0
    note: str = ""
    state: str = "running"  # running, done, failed
    error: str | None = None
    started: float = field(default_factory=time.monotonic)

    def advance(self, n: int = 1) -> None:
        self.done += n

    def log(self, text: str) -> None:
        self.note = str(text).strip().splitlines()[-1] if str(text).strip() else self.note

    def as_dict(self) -> dict[str, Any]:
        return {"job": self.key, "what": self.what, "state": self.state, "done": self.done, "total": self.total,
                "note": self.note, "error": self.error, "seconds": round(time.monotonic() - self.started, 1)}


@dataclass(frozen=True)
class Source:
    """How to get one table: ``open`` raises MissingTableError when it is not there; ``build``
    (None: too large, refused with ``refusal``) makes it, reporting to the job."""

    key: str
    what: str
    open: Callable[[], Any]
    build: Callable[[Job], None] | None
    refusal: str = ""
    total: int = 0


class Tables:
    """Opened tables by key, and the builds under way."""

    def __init__(self, cache: str | Path | None = None) -> None:
        self.cache = None if cache is None else str(cache)
        self._open: dict[str, Any] = {}
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def get(self, source: Source) -> Any:
        """The opened table; raises Building while it is being made, TooLarge when it will not be."""
        table = self._open.get(source.key)
        if table is not None:
            return table
        with self._lock:
            table = self._open.get(source.key)
            if table is not None:
                return table
            job = self._jobs.get(source.key)
            if job is not None and job.state == "running":
                raise Building(job)
            try:
                table = source.open()
            except MissingTableError:
                if source.build is None:
                    raise TooLarge(source.refusal) from None
                if job is not None and job.state == "failed":
                    # one failure is reported once; the next query tries again
                    del self._jobs[source.key]
                    raise BuildFailed(f"building {job.what} failed: {job.error}") from None
                job = Job(source.key, source.what, total=source.total)
                self._jobs[source.key] = job
                threading.Thread(target=self._build, args=(source, job), daemon=True,
                                 name=f"build {source.key}").start()
                raise Building(job) from None
            self._open[source.key] = table
            return table

    def _build(self, source: Source, job: Job) -> None:
        try:
            assert source.build is not None
            source.build(job)
            table = source.open()
        except Exception as exc:  # reported to the page through the job, not lost in a thread
            job.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            job.state = "failed"
            return
        with self._lock:
            self._open[source.key] = table
            job.done = job.total or job.done
            job.state = "done"

    def job(self, key: str) -> Job | None:
        return self._jobs.get(key)

    def is_open(self, key: str) -> bool:
        return key in self._open
