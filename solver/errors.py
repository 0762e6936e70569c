"""Errors a user can cause, shared by every game and every command.

Input problems subclass ``ValueError``; table problems subclass ``OSError``/``KeyError`` in the
manner of python-chess's syzygy module. The CLI turns each into a one-line message.
"""


class InputError(ValueError):
    """A position, move, option or file given by the user is not valid (CLI exit code 2)."""


class TableError(OSError):
    """A solved table cannot be used (CLI exit code 1)."""


class MissingTableError(TableError):
    """No table exists at the given place."""


class CorruptTableError(TableError):
    """A table file is truncated, unreadable or fails its checksum."""


class TableMismatchError(TableError):
    """A table was built for another game, variant, rule or encoding version."""


class TableWriteError(TableError):
    """A table could not be written (a full disk, a read-only folder); nothing was left behind."""


class FolderBusyError(TableError):
    """Another running solve holds the folder a table or checkpoint would be written to (CLI exit code 1)."""


class DataFileError(OSError):
    """A file the program ships (or one named as such data) is missing or unreadable (CLI exit code 1)."""


class OutputWriteError(OSError):
    """An output file could not be written (a full disk, a read-only folder); nothing was left behind
    (CLI exit code 1)."""


def describe_os_error(exc: OSError) -> str:
    """One line for an OS fault: what failed and where, without Python's error class."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    where = exc.filename
    return f"{reason}: {where}" if where else reason


class Interrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (or SIGTERM), saying how to go on: where its files are and that the
    same command resumes it. The CLI prints it after "interrupted" and exits 130."""


class PositionNotCoveredError(KeyError):
    """The table does not hold the requested position."""

    def __str__(self) -> str:  # KeyError quotes its argument; we want a plain sentence
        return str(self.args[0]) if self.args else "position not covered by this table"
