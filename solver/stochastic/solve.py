"""One call for a game: solve it, prove an interval around every value where the proof fits, and
write the table.

``solve_table`` owns the order: the proof's memory is checked once, before anything is solved
(``proof="auto"`` proves where it fits and says once why not; ``True`` refuses a proof that does
not fit), then the solve (``iteration.solve_values``: the walk or plain sweeps, the endless check
and its repairs, checkpoints and resume), then the proof (``bounds.certify``), then the table,
written whole or not at all and opened. A game hands over its generator, what its table records
(``TableSpec``) and how to solve (``SolveSettings``); it never drives the steps itself.
"""
from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

import numpy as np

from gamesolver.solver.stochastic._engine import StochasticGame
from gamesolver.solver.errors import InputError
from gamesolver.solver.stochastic import planning, schedule
from gamesolver.solver.stochastic.bounds import certify, check_certify_fits, matrix_bytes_estimate
from gamesolver.solver.stochastic.engine import Engine, Log
from gamesolver.solver.stochastic.iteration import LOCAL_REPAIRS, solve_values
from gamesolver.solver.tables.lock import folder_lock
from gamesolver.solver.tables.table import VERIFY_ONCE, Table, open_table, write_table

Proof = Literal["auto"] | bool


@dataclass(frozen=True)
class TableSpec:
    """What a game's table records besides the values: its names (game, rule, encoding and its
    version), the options a checkpoint must match to be resumed, the game's own arrays stored
    beside the values (``arrays``, called once the values are solved) and its own figures."""

    game: str
    rule: str
    encoding: str
    encoding_version: int
    options: dict[str, Any]
    arrays: Callable[[], dict[str, np.ndarray]] = dict
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SolveSettings:
    """How to solve (``iteration.solve_values`` says what each means)."""

    tolerance: float = schedule.DEFAULT_TOLERANCE
    threads: int | None = None
    max_sweeps: int = 100_000
    method: str = "walk"
    graph: str = "auto"
    dtype: str = "float32"
    tiers: list[tuple[int, int]] | None = None
    engine: Engine | None = None
    policy_place: str = "auto"
    local_repairs: int = LOCAL_REPAIRS
    show_progress: bool | None = None
    log: Log | None = None


def proof_refused(game: StochasticGame) -> str | None:
    """Why the proof of ``game``'s values does not fit this machine (one line), or None."""
    try:
        check_certify_fits(game.state_count, game.roll_count)
    except InputError as exc:
        return str(exc).split(";")[0]
    return None


def solve_table(game: StochasticGame, root: str | Path, spec: TableSpec, settings: SolveSettings = SolveSettings(),
                proof: Proof = False, width: float | None = None, verify: bool | str = VERIFY_ONCE) -> Table:
    """Solve ``game`` in ``root`` (a stopped run there resumes), prove it where ``proof`` says,
    and write and open its table. ``proof``: False (the values are labelled unproven with their
    residual), True (a proof that does not fit this machine is refused now, before the solve) or
    ``"auto"`` (proved where it fits, else one line in the log says why not). ``width``: the
    widest interval the proof aims for, and how near the best by the values an action of the
    proven strategy must be (default: the tolerance; docs/design/proof.md)."""
    log = settings.log
    if proof == "auto":
        why = proof_refused(game)
        proof = why is None
        if why is not None and log:
            log(f"{why}: solving without it, so the values will be labelled unproven (--no-proof says so "
                "without this note)")
    elif proof:
        need = check_certify_fits(game.state_count, game.roll_count)  # refused now rather than after a long solve
        if log and need >= 2**30:  # worth a line where it is a share of the machine
            log(f"the proof will need about {need / 2**30:.1f} GiB at its peak, and about "
                f"{matrix_bytes_estimate(game.state_count) / 2**30:.1f} GiB more for the pair's matrix, "
                "which it builds only where that fits in the memory then free (products twice as fast)")
    kw = {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)}
    with contextlib.ExitStack() as held:  # the solve's folder lock, held on through the proof and the write
        solved = solve_values(game, Path(root), spec.options, hold=held, **kw)
        meta = {**solved.meta, **spec.meta}
        values = solved.values
        intervals: dict[str, np.ndarray] = {}
        if proof:
            gap = settings.tolerance if width is None else width
            cert = certify(game, solved.values, gap, settings.threads or planning.default_threads(),
                           show_progress=settings.show_progress, log=log, graph=solved.graph, fits_checked=True)
            values, intervals, meta["certified"] = kept_proof(cert, solved.values, gap)
        path = write_table(Path(root), game=spec.game, rule=spec.rule, encoding=spec.encoding,
                           encoding_version=spec.encoding_version, state_count=game.state_count,
                           arrays={"value": values, **intervals, **spec.arrays()}, options=spec.options, meta=meta,
                           seconds=solved.seconds)
    return open_table(path, verify=verify)


def kept_proof(cert: Any, values: np.ndarray, gap: float) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, Any]]:
    """What a table keeps of a proof (``bounds.certify``) of ``values``, aimed at ``gap``: (its
    values, its interval arrays, the header's ``certified``). Where the intervals say more than
    the values (narrower than the values' own error), the values become their middles and the
    intervals are stored beside them; otherwise the values stay and only the figures go in."""
    figures = {**cert.summary(), "aimed_at": gap}
    if cert.method == "strategy" and cert.gap < 2 * cert.bound:
        middles, low, high, bound = cert.centred()
        figures.update({"bound": bound, "values": "centred", "solved_values_bound": cert.bound})
        return middles, {"lower": low, "upper": high}, figures
    return values, {}, figures


def record_proof(table: Table, cert: Any, gap: float) -> Table:
    """Rewrite a solved ``table`` (atomically, as a solve writes one) with a proof made from its
    values afterwards (``solver ur check --bounds --record``): ``kept_proof``, every other array
    and figure kept; an earlier proof recorded in it is replaced."""
    values = np.ascontiguousarray(table["value"], dtype=np.float32)
    values, intervals, figures = kept_proof(cert, values, gap)
    figures["proven_after_solving"] = True
    arrays = {name: np.asarray(table[name]) for name in table.header["arrays"]
              if name not in ("value", "lower", "upper")}
    h = table.header
    with folder_lock(table.path):  # not while a solve writes in that folder
        path = write_table(table.path, game=h["game"], rule=h["rule"], encoding=h["encoding"],
                           encoding_version=h["encoding_version"], state_count=table.state_count,
                           arrays={"value": values, **intervals, **arrays}, options=table.options,
                           meta={**table.meta, "certified": figures}, seconds=h.get("created", {}).get("seconds"))
    return open_table(path, verify=VERIFY_ONCE)
