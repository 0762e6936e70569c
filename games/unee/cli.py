"""``solver unee ...``: a thin click layer over the games.unee API.

The commands live in one module per concern (``cli_board``: a position and the graph;
``cli_tables``: solving and queries; ``cli_export``; ``cli_cycles``: cycles and Eichler's caption);
importing them registers them on the ``unee`` group defined in ``cli_common``.
"""
from gamesolver.games.unee import cli_board, cli_cycles, cli_export, cli_tables  # noqa: F401  (they register commands)
from gamesolver.games.unee.cli_atlas import atlas  # noqa: F401  (registers 'solver unee atlas')
from gamesolver.games.unee.cli_common import unee

__all__ = ["unee"]
