"""The commands the games add to ``solver``: for each, the module holding its click group, the
group's name there, its one-line help and, where its module gives none, the example that ends its
help. ``solver/cli.py`` finds this table through the ``gamesolver.commands`` entry point
(pyproject.toml) and imports a game's module only when its command runs, so the engine's command
line names no game and a new game is one row here."""
from __future__ import annotations

COMMANDS: dict[str, dict[str, str]] = {
    "unee": {"module": "gamesolver.games.unee.cli", "attr": "unee",
             "help": "Ünee Tugalluulax: positions, state graph, solved tables, cycles."},
    "ur": {"module": "gamesolver.games.ur.cli", "attr": "ur",
           "help": "Ur: The Royal Game, fort rules or RoyalUr's (--rules): exact solutions."},
    "ulus": {"module": "gamesolver.games.ulus.cli", "attr": "ulus",
             "help": "Ulus: shagai odds, the horse race, monster fights."},
    "ghosts": {"module": "gamesolver.games.ghosts.cli", "attr": "ghosts",
               "help": "Ghosts of Ur: d100 combat, Ur dice movement, Nanna."},
    "uluk": {"module": "gamesolver.games.uluk.cli", "attr": "uluk",
             "help": "Uluk: processing arithmetic and the feeding phase."},
    "verify": {"module": "gamesolver.games.claims_cli", "attr": "verify",
               "help": "Check every historical claim and print a report.",
               "example": "solver verify --game unee --json"},
    "serve": {"module": "gamesolver.games.web.cli", "attr": "serve",
              "help": "An analysis board for Ünee and Ur in the browser ([web] extra)."},
}
