"""Command output shared by every game: a report printed as aligned text, ``--json`` or
``--format csv`` (``--format text|csv|json``, as every command that writes data names its format).

A report is a title, a few summary facts and rows of named columns. Exact fractions are printed
as decimals (JSON: plain floats in [0, 1] for probabilities); callers add an ``exact`` column
where the fraction itself matters.
"""
from __future__ import annotations

import csv
import functools
import io
import json
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Sequence

import click

from gamesolver.solver.errors import InputError


@dataclass
class Report:
    """One command's answer: a title, summary facts and a table of rows."""

    title: str
    columns: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def plain(value: Any) -> Any:
    """A JSON-ready value: fractions become floats, containers are converted recursively."""
    if isinstance(value, Fraction):
        return float(value)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def _text(value: Any) -> str:
    if isinstance(value, Fraction) and value.denominator == 1:
        return str(value.numerator)
    if isinstance(value, (Fraction, float)):
        v = float(value)
        return f"{v:.3e}" if 0 < abs(v) < 1e-4 else f"{v:.6f}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "-"
    if isinstance(value, dict):
        return ", ".join(f"{k} {_text(v)}" for k, v in value.items()) or "-"
    if isinstance(value, (list, tuple)):
        sep = "; " if any(isinstance(v, str) for v in value) else " "
        return sep.join(_text(v) for v in value) or "-"
    return str(value)


def render(report: Report, fmt: str) -> str:
    """The report as ``text``, ``json`` or ``csv``."""
    if fmt == "json":
        body = {"title": report.title, **plain(report.facts), "columns": report.columns,
                "rows": [plain({c: r.get(c) for c in report.columns}) for r in report.rows]}
        if report.notes:
            body["notes"] = report.notes
        return json.dumps(body, indent=2)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(report.columns)
        for r in report.rows:
            writer.writerow([repr(float(v)) if isinstance(v, Fraction) else v for v in (r.get(c) for c in report.columns)])
        return out.getvalue().rstrip("\n")
    lines = [report.title]
    width = max((len(k) for k in report.facts), default=0)
    for key, value in report.facts.items():
        lines.append(f"  {key.replace('_', ' '):<{width}}  {_text(value)}")
    if report.rows:
        cells = [[_text(r.get(c)) for c in report.columns] for r in report.rows]
        widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(report.columns)]
        # numbers line up on the right, words on the left
        words = [any(isinstance(r.get(c), str) and not r.get(c, "").replace("-", "").isdigit() for r in report.rows)
                 for c in report.columns]
        lines.append("")
        lines.append("  ".join(c.ljust(w) if t else c.rjust(w) for c, w, t in zip(report.columns, widths, words)).rstrip())
        for row in cells:
            lines.append("  ".join(v.ljust(w) if t else v.rjust(w) for v, w, t in zip(row, widths, words)).rstrip())
    for note in report.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def example(command: str) -> str:
    """The epilog that ends a command's help: one example of its use."""
    return f"Example: {command}"


FORMATS = ("text", "csv", "json")


def output_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--format text|csv|json`` and ``--json`` (the same as ``--format json``, as on every
    command) to a command, which receives the choice as ``as_json``/``as_csv``. ``--csv``, the
    older spelling of ``--format csv``, is still taken, and not shown in the help."""

    @functools.wraps(func)
    def chosen(*args: Any, fmt: str | None, as_json: bool, as_csv: bool, **kwargs: Any) -> Any:
        asked = ([f"--format {fmt}"] if fmt else []) + (["--json"] if as_json else []) + (["--csv"] if as_csv else [])
        formats = {fmt} if fmt else set()
        formats |= {"json"} if as_json else set()
        formats |= {"csv"} if as_csv else set()
        if len(formats) > 1:
            raise InputError(f"{' and '.join(asked)} ask for different formats; give one of --format text|csv|json")
        out = formats.pop() if formats else "text"
        return func(*args, as_json=out == "json", as_csv=out == "csv", **kwargs)

    chosen = click.option("--csv", "as_csv", is_flag=True, hidden=True, help="The same as --format csv.")(chosen)
    chosen = click.option("--json", "as_json", is_flag=True,
                          help="Print JSON on stdout, nothing else (the same as --format json).")(chosen)
    chosen = click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
                          help="Print the answer as aligned text (the default), a CSV table or JSON.")(chosen)
    return chosen


def check_format(as_json: bool, as_csv: bool) -> None:
    """Refuse JSON and CSV at once: printing one and ignoring the other would hide a typo."""
    if as_json and as_csv:
        raise InputError("--json and --format csv exclude each other; give one of them")


def emit(report: Report, as_json: bool, as_csv: bool) -> None:
    """Print the report in the format the user asked for."""
    check_format(as_json, as_csv)
    click.echo(render(report, "json" if as_json else "csv" if as_csv else "text"))


def emit_csv(rows: Sequence[dict[str, Any]]) -> None:
    """Print rows of equal keys as CSV with a header line (the keys of the first row)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else [], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    click.echo(out.getvalue(), nl=False)


def parse_int_list(text: str | None, what: str) -> list[int]:
    """Comma-separated non-negative integers, e.g. ``10,5``; an empty string gives []."""
    if text is None or text.strip() == "":
        return []
    values: list[int] = []
    for part in text.split(","):
        try:
            v = int(part.strip())
        except ValueError:
            raise InputError(f"{what}: {part.strip()!r} is not a whole number; expected e.g. 10,5") from None
        if v < 0:
            raise InputError(f"{what}: {v} is negative; expected whole numbers >= 0")
        values.append(v)
    return values


def non_negative(value: int, what: str) -> int:
    """Refuse a negative count or bonus with a one-line message."""
    if value < 0:
        raise InputError(f"{what} is {value}; expected a number >= 0")
    return value


def fraction_text(p: Fraction) -> str:
    """An exact fraction as ``a/b`` (``a`` alone when it is whole)."""
    return str(p.numerator) if p.denominator == 1 else f"{p.numerator}/{p.denominator}"


