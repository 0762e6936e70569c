"""One interface across the games: every help ends with an example of that very command, the
same option names mean the same thing everywhere, and every command can print JSON."""
from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from gamesolver.games.commands import COMMANDS as GAME_TABLE
from gamesolver.solver.cli import cli, game_commands


def _walk(command: click.Command, path: list[str]):
    yield path, command
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None:
                yield from _walk(sub, path + [name])


COMMANDS = list(_walk(cli, []))
LEAVES = [(p, c) for p, c in COMMANDS if not isinstance(c, click.Group)]


def test_every_game_is_walked():
    assert {p[0] for p, _ in COMMANDS if p} == set(game_commands()) == set(GAME_TABLE)
    assert len(LEAVES) > 25


def test_the_games_register_their_commands_through_the_entry_point():
    """solver/cli.py names no game: the commands come from the games' table through the
    installed entry point, so a row added to that table is a command."""
    from gamesolver.solver import cli as top

    assert "gamesolver.games" not in open(top.__file__, encoding="utf-8").read()
    assert game_commands()["ur"].module == GAME_TABLE["ur"]["module"]
    assert "solver verify --game unee --json" in CliRunner().invoke(cli, ["verify", "--help"]).output


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p) or "solver")
def test_help_ends_with_an_example_of_the_command(path):
    result = CliRunner().invoke(cli, path + ["--help"])
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1].strip()
    assert last.startswith("Example: solver"), last
    words = last[len("Example: "):].split()
    # the example runs this command: its words start with the command path (options may come
    # between a group and its command, as in 'solver unee --holes 2 graph')
    named = [w for w in words if not w.startswith("-")]
    it = iter(named[1:])
    assert all(any(part == w for w in it) for part in path), (path, last)


@pytest.mark.parametrize("path", [p for p, _ in LEAVES], ids=lambda p: " ".join(p))
def test_every_command_has_json(path):
    command = dict((tuple(p), c) for p, c in LEAVES)[tuple(path)]
    assert "--json" in {o for p in command.params for o in p.opts}, path


TABLE_OPTIONS = {"--table": "read", "--out": "write", "--cache": "cache"}


def test_ur_takes_cache_like_the_other_games():
    for name in ("solve", "check", "best-move", "analyze"):
        ur = dict((tuple(p), c) for p, c in LEAVES)[("ur", name)]
        assert "--cache" in {o for p in ur.params for o in p.opts}, name


def test_unee_variant_options_after_the_command(tmp_path):
    runner = CliRunner()
    before = runner.invoke(cli, ["unee", "--holes", "2", "show", "3 0 / 2 0 S", "--json"])
    after = runner.invoke(cli, ["unee", "show", "3 0 / 2 0 S", "--holes", "2", "--json"])
    assert before.exit_code == after.exit_code == 0, after.output
    assert json.loads(before.output) == json.loads(after.output)
    # after the command they override the group's
    both = runner.invoke(cli, ["unee", "--holes", "3", "show", "3 0 / 2 0 S", "--holes", "2", "--json"])
    assert json.loads(both.output) == json.loads(after.output)
    bad = runner.invoke(cli, ["unee", "show", "start", "--balls", "99"])
    assert bad.exit_code == 2 and "balls per hole" in bad.output and "Traceback" not in bad.output


def test_ur_show_json():
    result = CliRunner().invoke(cli, ["ur", "show", "X:A1,B4 O:C7 X", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["X"] == ["A1", "B4"] and data["O"] == ["C7"] and data["to_move"] == "X"


def test_ur_solve_json_and_cache(tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli, ["ur", "solve", "--pieces", "1", "--cache", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output.strip().splitlines()[-1])
    assert data["pieces"] == 1 and data["table"].startswith(str(tmp_path))
    # the query finds that table under the same cache root and never solves again
    query = runner.invoke(cli, ["ur", "analyze", "start", "--pieces", "1", "--cache", str(tmp_path), "--json"])
    assert query.exit_code == 0, query.output
    assert "solving" not in query.output
    both = runner.invoke(cli, ["ur", "solve", "--pieces", "1", "--cache", str(tmp_path), "--out", str(tmp_path / "t")])
    assert both.exit_code == 2 and "give one of them" in both.output


def test_unee_export_json(tmp_path):
    out = tmp_path / "four.csv"
    result = CliRunner().invoke(cli, ["unee", "--holes", "2", "--balls", "2", "export", "--on-board", "4",
                                      "--out", str(out), "--json", "--cache", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["path"] == str(out) and data["positions"] == len(out.read_text().splitlines()) - 1
    refused = CliRunner().invoke(cli, ["unee", "--holes", "2", "--balls", "2", "export", "--json",
                                       "--cache", str(tmp_path / "c")])
    assert refused.exit_code == 2 and "--out" in refused.output
    # --balls means balls per hole wherever it stands, as in every other command
    after = tmp_path / "after.csv"
    result = CliRunner().invoke(cli, ["unee", "--holes", "2", "export", "--balls", "2", "--on-board", "4",
                                      "--out", str(after), "--json", "--cache", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["options"] == data["options"] and after.read_text() == out.read_text()


def test_ulus_race_table_out_and_cache(tmp_path):
    runner = CliRunner()
    out = tmp_path / "race"
    made = runner.invoke(cli, ["ulus", "race", "--players", "2", "--out", str(out), "--json"])
    assert made.exit_code == 0, made.output
    assert (out / "header.json").is_file()
    read = runner.invoke(cli, ["ulus", "race", "--players", "2", "--table", str(out), "--json"])
    assert read.exit_code == 0 and json.loads(read.output)["table"] == f"opened {out}"
    assert json.loads(read.output)["win"] == json.loads(made.output)["win"]
    other = runner.invoke(cli, ["ulus", "race", "--players", "3", "--table", str(out)])
    assert other.exit_code == 1 and "players" in other.output
    missing = runner.invoke(cli, ["ulus", "race", "--players", "2", "--table", str(tmp_path / "none")])
    assert missing.exit_code == 1 and not (tmp_path / "none").exists()
    two = runner.invoke(cli, ["ulus", "race", "--players", "2", "--table", str(out), "--cache", str(tmp_path)])
    assert two.exit_code == 2 and "give one" in two.output
