"""The engine's one call for a game (solver/stochastic/solve.py): the proof's memory is checked
once, before the solve; "auto" proves where the proof fits and says once why not; a refused proof
leaves nothing on disk; the table records the game's spec; a proof recorded afterwards keeps it."""
from __future__ import annotations

import numpy as np
import pytest

from gamesolver.games.ur.generator import kernel
from gamesolver.games.ur.solve import table_spec
from gamesolver.solver.errors import InputError
from gamesolver.solver.stochastic import bounds
from gamesolver.solver.stochastic import solve as engine
from gamesolver.solver.stochastic.bounds import certify
from gamesolver.solver.stochastic.solve import SolveSettings, TableSpec, record_proof, solve_table
from tests.test_ur_reference import mini_options


@pytest.fixture
def counted_checks(monkeypatch):
    """How often the proof's memory is checked (solve_table's check and certify's own)."""
    calls = []
    real = bounds.check_certify_fits

    def check(n: int, rolls: int) -> int:
        calls.append(n)
        return real(n, rolls)

    monkeypatch.setattr(bounds, "check_certify_fits", check)
    monkeypatch.setattr(engine, "check_certify_fits", check)
    return calls


def test_a_proven_solve_checks_the_proofs_memory_once_and_records_the_spec(tmp_path, counted_checks) -> None:
    o = mini_options(tmp_path, 3)
    game = kernel(o)
    spec = table_spec(o)
    table = solve_table(game, tmp_path / "t", spec, SolveSettings(tolerance=1e-6, threads=1), proof=True,
                        width=1e-5)
    assert counted_checks == [game.state_count]  # once, before the solve; certify was told
    h = table.header
    assert (h["game"], h["rule"], h["encoding"], h["encoding_version"]) == \
        (spec.game, spec.rule, spec.encoding, spec.encoding_version)
    assert table.options == spec.options and table.meta["board_file"] == o.board.source
    assert "tier_offsets" in h["arrays"] and table.meta["certified"]["gap"] <= 1e-5


def test_auto_solves_unproven_with_one_line_where_the_proof_does_not_fit(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(bounds, "memory_bytes", lambda: 64)  # a 64-byte machine: no proof fits
    o = mini_options(tmp_path, 3)
    lines: list[str] = []
    table = solve_table(kernel(o), tmp_path / "t", table_spec(o),
                        SolveSettings(tolerance=1e-6, threads=1, log=lines.append), proof="auto")
    assert "certified" not in table.meta
    said = [line for line in lines if "solving without it" in line]
    assert len(said) == 1 and said[0].startswith("the proof of ")


def test_a_proof_that_does_not_fit_is_refused_before_anything_is_written(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(bounds, "memory_bytes", lambda: 64)
    o = mini_options(tmp_path, 3)
    with pytest.raises(InputError, match="needs about .* more than this machine's"):
        solve_table(kernel(o), tmp_path / "t", table_spec(o), SolveSettings(threads=1), proof=True)
    assert not (tmp_path / "t").exists() or not any((tmp_path / "t").iterdir())


def test_a_proof_recorded_afterwards_keeps_the_tables_names_and_arrays(tmp_path) -> None:
    o = mini_options(tmp_path, 3)
    game = kernel(o)
    spec = TableSpec("a-game", "a-rule", "an-encoding", 7, {"k": 3}, arrays=lambda: {"extra": np.arange(4)},
                     meta={"note": "kept"})
    table = solve_table(game, tmp_path / "t", spec, SolveSettings(tolerance=1e-6, threads=1))
    assert "certified" not in table.meta
    values = np.ascontiguousarray(table["value"], dtype=np.float32)
    proven = record_proof(table, certify(game, values, 1e-5, 1), 1e-5)
    h = proven.header
    assert (h["game"], h["rule"], h["encoding"], h["encoding_version"]) == ("a-game", "a-rule", "an-encoding", 7)
    assert proven.options == {"k": 3} and proven.meta["note"] == "kept"
    assert proven.meta["certified"]["proven_after_solving"] is True
    assert np.array_equal(proven["extra"], np.arange(4))
