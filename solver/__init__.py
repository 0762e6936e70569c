"""The game-agnostic engine: packed states, state graphs, solvers and the table format."""
from __future__ import annotations

__version__ = "0.1.0"

from gamesolver.solver.errors import (  # noqa: E402
    CorruptTableError,
    InputError,
    MissingTableError,
    PositionNotCoveredError,
    TableError,
    TableMismatchError,
    TableWriteError,
)
from gamesolver.solver.tables.table import Table, open_table, prepare_table_dir, write_table  # noqa: E402

__all__ = [
    "__version__",
    "CorruptTableError",
    "InputError",
    "MissingTableError",
    "PositionNotCoveredError",
    "Table",
    "TableError",
    "TableMismatchError",
    "TableWriteError",
    "open_table",
    "prepare_table_dir",
    "write_table",
]
