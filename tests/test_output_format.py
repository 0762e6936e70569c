"""One way to name an answer's format: every command that prints a report takes ``--format
text|csv|json`` and ``--json``; ``--csv`` stays as the older spelling of ``--format csv``. Each
such command is run as its own help's example, in each spelling."""
from __future__ import annotations

import json
import re
import shlex

import click
import pytest
from click.testing import CliRunner

from gamesolver.solver.cli import cli


def report_commands() -> list[tuple[str, list[str]]]:
    """(name, its help's example as arguments) of every command with the report's options."""
    ctx = click.Context(cli)
    found = []

    def walk(cmd: click.Command, path: list[str]) -> None:
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name), path + [name])
            return
        opts = {o: p for p in cmd.params for o in getattr(p, "opts", [])}
        if "--csv" in opts and opts["--csv"].hidden and "--format" in opts:
            example = (cmd.epilog or "").split("Example:", 1)[1].strip()
            args = [a for a in shlex.split(example)[1:] if a not in ("--json", "--csv")]  # the format is the test's
            found.append((" ".join(path), args))

    walk(cli, [])
    return found


COMMANDS = report_commands()


def timeless(text: str) -> str:
    """The output with its timings ('0.05 s to solve') masked: two runs differ in them only."""
    return re.sub(r"\d+(?:\.\d+)? s\b", "T s", text)


def test_the_games_without_tables_use_the_convention() -> None:
    assert {name.split()[0] for name, _ in COMMANDS} >= {"ghosts", "ulus", "uluk"}
    assert len(COMMANDS) >= 12


@pytest.mark.parametrize(("name", "args"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_format_names_the_same_output_in_every_spelling(name: str, args: list[str]) -> None:
    run = CliRunner().invoke
    text = run(cli, args)
    assert text.exit_code == 0, text.output
    assert timeless(run(cli, [*args, "--format", "text"]).output) == timeless(text.output)
    as_csv = run(cli, [*args, "--format", "csv"])
    assert as_csv.exit_code == 0 and as_csv.output != text.output
    assert run(cli, [*args, "--csv"]).output == as_csv.output
    as_json = run(cli, [*args, "--format", "json"])
    assert as_json.exit_code == 0 and isinstance(json.loads(as_json.output), dict)
    assert run(cli, [*args, "--json"]).output == as_json.output
    assert run(cli, [*args, "--format", "json", "--json"]).output == as_json.output  # one format, twice
    for clash in (["--format", "csv", "--json"], ["--json", "--csv"], ["--format", "text", "--csv"]):
        bad = run(cli, [*args, *clash])
        assert bad.exit_code == 2
        assert bad.output.strip().count("\n") == 0 and "different formats" in bad.output, bad.output
    bad = run(cli, [*args, "--format", "xml"])
    assert bad.exit_code == 2 and "text" in bad.output and "csv" in bad.output
