"""Guards for commands whose work grows fast with one number: beyond what runs in seconds they
ask for ``--force`` and say roughly how long the run would take.

The estimates are power laws fitted to runs on a 2-core machine; they are meant to tell seconds
from hours, not to be exact.
"""
from __future__ import annotations

from gamesolver.solver.errors import InputError


def estimate_seconds(value: float, reference: float, seconds: float, exponent: float) -> float:
    """Seconds for ``value`` when ``reference`` took ``seconds`` and work grows as value**exponent."""
    return seconds * (max(value, 1.0) / reference) ** exponent


def duration_text(seconds: float) -> str:
    """A rough duration: 'about 40 s', 'about 12 minutes', ..., 'more than ten years'."""
    if seconds < 90:
        return f"about {seconds:.0f} s"
    if seconds < 90 * 60:
        return f"about {seconds / 60:.0f} minutes"
    if seconds < 48 * 3600:
        return f"about {seconds / 3600:.1f} hours"
    if seconds < 10 * 86400:  # 2.5 days, not "2 days"
        return f"about {seconds / 86400:.1f} days"
    if seconds < 3650 * 86400:
        return f"about {seconds / 86400:.0f} days"
    return "more than ten years"


def duration(seconds: float) -> str:
    """A length of time as a reader wants it: ``duration_text`` without its "about"."""
    return duration_text(seconds).removeprefix("about ")


def check_cost(option: str, value: int, quick: int, seconds: float, force: bool) -> None:
    """Refuse ``option value`` beyond ``quick`` unless ``force``; ``seconds`` is the run's estimate."""
    if value <= quick or force:
        return
    raise InputError(
        f"{option} {value} would take {duration_text(seconds)} (up to {option} {quick} runs in "
        f"seconds); pass --force to run it anyway"
    )


def check_at_most(option: str, value: int, most: int, why: str) -> None:
    """Refuse ``option value`` above a hard bound; ``why`` says what the bound protects."""
    if value > most:
        raise InputError(f"{option} is {value}; expected at most {most:,} ({why})")
