"""Whether an Ur value is proven, and how that is said: every answer carries either its certified
interval (``lower``, ``upper``) or ``proven: false`` with the residual of the solve it came from (the
largest change of the solve's last sweep: a sign of convergence, not a bound on the error; in this
slowly mixing game the error can be several times the residual).

A table proven by ``solve`` (or ``check --bounds --record``) stores an interval for every value, or
one bound that holds for all of them; an opening file keeps what its table had. Older tables and
files that recorded only the solve's stopping target say "residual below" that target, which is
what the solve guaranteed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Provenance:
    """What a table (or an opening file) can say of its values."""

    proven: bool
    bound: float | None = None  # proven: every value lies within this of the stored one
    residual: float | None = None  # unproven: the last sweep's largest change
    residual_below: float | None = None  # unproven, residual not recorded: it was below this
    rounded_as: str | None = None  # read from a file that rounds its values (an .rgu file's value type) ...
    rounded_within: float | None = None  # ... by at most this, in the answer's own unit

    @classmethod
    def of_meta(cls, meta: dict[str, Any], intervals: bool) -> "Provenance":
        """From a table's ``meta`` (or an opening file's ``table`` figures, which use the same
        names); ``intervals``: the table stores an interval for every value."""
        cert = meta.get("certified") or {}
        bound = cert.get("bound", meta.get("bound"))
        if intervals or bound is not None:
            return cls(True, bound=None if bound is None else float(bound))
        residual = meta.get("residual")
        if residual is not None:
            return cls(False, residual=float(residual))
        target = meta.get("tolerance")
        return cls(False, residual_below=None if target is None else float(target))

    def interval(self, value: float, stored: tuple[float, float] | None) -> tuple[float, float] | None:
        """The proven interval of ``value`` (the stored one, else value +- bound), or None."""
        if not self.proven:
            return None
        if stored is not None:
            return stored
        if self.bound is None:
            return None
        return value - self.bound, value + self.bound

    def fields(self, value: float, stored: tuple[float, float] | None = None) -> dict[str, Any]:
        """The JSON fields that go beside ``value``: its interval, or why it is unproven."""
        iv = self.interval(value, stored)
        if iv is not None:
            return {"proven": True, "lower": iv[0], "upper": iv[1]}
        out: dict[str, Any] = {"proven": False}
        if self.residual is not None:
            out["residual"] = self.residual
        elif self.residual_below is not None:
            out["residual_below"] = self.residual_below
        if self.rounded_as is not None:
            out["rounded_as"] = self.rounded_as
            out["rounded_within"] = self.rounded_within
        return out

    def interval_fields(self, value: float, stored: tuple[float, float] | None) -> dict[str, Any]:
        """``lower`` and ``upper`` beside a value where it is proven (an action's, a roll's), else
        nothing: the answer's own ``proven`` says the rest once."""
        iv = self.interval(value, stored)
        return {} if iv is None else {"lower": iv[0], "upper": iv[1]}

    def table_fields(self) -> dict[str, Any]:
        """The table-level fields (for a source or a header): proven, and the bound or the residual."""
        if self.proven:
            return {"proven": True, **({"bound": self.bound} if self.bound is not None else {})}
        return self.fields(0.0)

    def text(self) -> str:
        """'proven within 3.4e-06', 'proven (an interval for every value)', 'unproven (residual
        3.2e-06)' or 'unproven (residual below 1e-05)'."""
        if self.proven:
            return f"proven within {self.bound:.2g}" if self.bound is not None else "proven (an interval for every value)"
        rounded = (f"; the file stores {self.rounded_as} values, each read within {self.rounded_within:.2g} "
                   f"of the one written" if self.rounded_as is not None else "")
        if self.residual is not None:
            return f"unproven (residual {self.residual:.2g}){rounded}"
        if self.residual_below is not None:
            return f"unproven (residual below {self.residual_below:g}){rounded}"
        return f"unproven{rounded}"


def of_table(table: Any) -> Provenance:
    """The provenance of a solved table (``solver.tables.table.Table``) or an opening file."""
    if hasattr(table, "stored_interval"):  # an opening file (games.ur.opening)
        return Provenance.of_meta(table.header["table"], table.intervals is not None)
    return Provenance.of_meta(table.meta, "lower" in (getattr(table, "arrays", None) or {}))


def check_lines(residual: float, tolerance: float, check: Any, moves: str) -> list[str]:
    """``ur check``'s report of a table's values, for either rule family: the Bellman residual
    against the tolerance the table was solved to, and the endless-play check (``check``, a
    ``solver.stochastic.iteration.EndlessCheck``); ``moves`` names what a side plays ("actions",
    "moves")."""
    lines = [f"  Bellman residual {residual:.2g} ({'below' if residual < tolerance else 'NOT below'} that target)"]
    if check.passed:
        lines.append(f"  endless play: from every state where a side is ahead by more than {check.eps:g}, its best "
                     f"{moves} can end the game ({check.passes} passes)")
    else:
        lines.append(f"  endless play: {check.flagged:,} states claim an advantage by more than {check.eps:g} that "
                     f"their side can keep only by never ending the game (worth 0)")
    return lines

