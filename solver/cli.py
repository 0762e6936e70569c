"""The ``solver`` command: a click group whose game subcommands load lazily.

Each game registers one click group in ``GAME_COMMANDS``; importing only the game that is
asked for keeps start-up fast. User errors raised anywhere below become one-line messages:
bad input exits 2, unusable tables exit 1, never a traceback.
"""
from __future__ import annotations

import importlib
import os
import signal
import sys
from typing import Any

import click

from gamesolver.solver import __version__
from gamesolver.solver.errors import (
    DataFileError,
    InputError,
    Interrupted,
    OutputWriteError,
    PositionNotCoveredError,
    TableError,
    describe_os_error,
)
from gamesolver.solver.report import example

INTERRUPTED = 130  # exit status after Ctrl-C (128 + SIGINT), as shells report it
BROKEN_PIPE = 141  # 128 + SIGPIPE: what `cmd | head` reports for a command the pipe stopped

# command name -> (module, attribute, one-line help)
GAME_COMMANDS: dict[str, tuple[str, str, str]] = {
    "unee": ("gamesolver.games.unee.cli", "unee", "Ünee Tugalluulax: positions, state graph, solved tables, cycles."),
    "ur": ("gamesolver.games.ur.cli", "ur", "Ur: The Royal Game, fort rules: state graph and exact solution."),
    "ulus": ("gamesolver.games.ulus.cli", "ulus", "Ulus: shagai odds, the horse race, monster fights."),
    "ghosts": ("gamesolver.games.ghosts.cli", "ghosts", "Ghosts of Ur: d100 combat, Ur dice movement, Nanna."),
    "uluk": ("gamesolver.games.uluk.cli", "uluk", "Uluk: processing arithmetic and the feeding phase."),
    "verify": ("gamesolver.games.claims_cli", "verify", "Check every historical claim and print a report."),
    "serve": ("gamesolver.games.web.cli", "serve", "An analysis board for Ünee and Ur in the browser ([web] extra)."),
}


# the example that ends the help of a command whose module gives none
EXAMPLES = {"verify": "solver verify --game unee --json"}


class BadInput(click.ClickException):
    """A one-line error for bad user input, exit code 2."""

    exit_code = 2


class SolverGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(GAME_COMMANDS))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        command = super().get_command(ctx, name)
        if command is not None or name not in GAME_COMMANDS:
            return command
        module, attr, _ = GAME_COMMANDS[name]
        try:
            command = getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as exc:
            if exc.name and (exc.name == module or module.startswith(exc.name + ".")):
                return None  # that game is not built yet
            raise
        if not command.epilog and name in EXAMPLES:
            command.epilog = example(EXAMPLES[name])
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, GAME_COMMANDS[name][2]) for name in sorted(GAME_COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InputError as exc:
            raise BadInput(str(exc)) from None
        except click.UsageError as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # a bare group shows its help
                raise
            # bad options or arguments of a subcommand: one line, not click's usage block
            where = exc.ctx.command_path if exc.ctx is not None else "solver"
            raise BadInput(f"{exc.format_message()} (see '{where} --help')") from None
        except (TableError, PositionNotCoveredError, DataFileError, OutputWriteError) as exc:
            raise click.ClickException(str(exc)) from None
        except BrokenPipeError:
            # the reader stopped early (``| head``): not a fault; stay quiet, as a killed pipe would
            try:  # Python would write to the closed pipe again while exiting
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except (OSError, ValueError):
                pass
            raise SystemExit(BROKEN_PIPE) from None
        except OSError as exc:
            # the last net for a fault no command foresaw (a disk that fills or vanishes mid-run):
            # the OS's reason and the file in one line; the writers have removed their temporaries
            raise click.ClickException(describe_os_error(exc)) from None
        except MemoryError:
            raise click.ClickException("out of memory: try a smaller variant or free some memory") from None
        except KeyboardInterrupt as exc:
            # the shell's convention for a run stopped by Ctrl-C, not click's exit 1; a resumable
            # run (``Interrupted``) says where its files are and how to go on
            click.echo("\ninterrupted" + (f": {exc}" if isinstance(exc, Interrupted) and str(exc) else ""), err=True)
            raise SystemExit(INTERRUPTED) from None


@click.group(cls=SolverGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=example('solver unee best-move "3 0 1 / 2 0 6 S"'))
@click.version_option(__version__, prog_name="solver")
def cli() -> None:
    """Exhaustive solver for Ünee Tugalluulax, Ur (fort rules), Ulus, Ghosts of Ur and Uluk."""


def _stop(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main() -> None:
    # SIGTERM (a scheduler's or `kill`'s stop; a background job started from a script ignores
    # SIGINT) stops a command as Ctrl-C does: a solve writes its checkpoint and removes its
    # temporaries, and the exit code is the interrupted one. A server installs its own handlers.
    try:
        signal.signal(signal.SIGTERM, _stop)
    except (ValueError, OSError):  # not the main thread of the interpreter
        pass
    cli(prog_name="solver")


if __name__ == "__main__":  # pragma: no cover
    main()
