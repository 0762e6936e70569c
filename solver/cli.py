"""The ``solver`` command: a click group whose game subcommands load lazily.

The games register their commands through the ``gamesolver.commands`` entry point (each names a
table of command -> module, click group, one-line help, example; pyproject.toml), so this module
names no game; importing only the game that is asked for keeps start-up fast. User errors raised
anywhere below become one-line messages: bad input exits 2, unusable tables exit 1, never a
traceback.
"""
from __future__ import annotations

import functools
import importlib
import os
import signal
import sys
from importlib.metadata import entry_points
from typing import Any, NamedTuple

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

ENTRY_POINTS = "gamesolver.commands"  # the group where packages register their command tables


class GameCommand(NamedTuple):
    module: str  # the module holding the click group, imported when the command runs
    attr: str  # the group's name in it
    help: str  # its line in ``solver --help``
    example: str | None  # the example that ends its help, where its module gives none


@functools.cache
def game_commands() -> dict[str, GameCommand]:
    """Every registered command: each ``gamesolver.commands`` entry point names a table of
    command -> {module, attr, help[, example]} (this package's is ``games.commands.COMMANDS``)."""
    found: dict[str, GameCommand] = {}
    for point in sorted(entry_points(group=ENTRY_POINTS), key=lambda p: p.name):
        for name, row in point.load().items():
            found[name] = GameCommand(row["module"], row["attr"], row["help"], row.get("example"))
    return found


class BadInput(click.ClickException):
    """A one-line error for bad user input, exit code 2."""

    exit_code = 2


class SolverGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(game_commands()))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        command = super().get_command(ctx, name)
        if command is not None or name not in game_commands():
            return command
        module, attr, _, epilog = game_commands()[name]
        try:
            command = getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as exc:
            if exc.name and (exc.name == module or module.startswith(exc.name + ".")):
                return None  # that game is not built yet
            raise
        if not command.epilog and epilog:
            command.epilog = example(epilog)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, c.help) for name, c in sorted(game_commands().items())]
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
