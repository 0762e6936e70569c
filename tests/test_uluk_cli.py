"""The ``solver uluk`` commands: output formats, example-file marking and one-line errors."""
from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from gamesolver.solver.cli import cli

HAVE = "baked mgobu=3,salted fnord=2,pickled uluk=4,smoked hlak=2,fermented uluk=2,tlon brew=1"


def run(*args: str):
    return CliRunner().invoke(cli, ["uluk", *args])


@pytest.mark.parametrize("args", [
    ["process"],
    ["process", "--kind", "+1", "--tribers", "3", "--split"],
    ["process", "--board", "example", "--max-n", "3"],
    ["feed", "--tribers", "3", "--have", HAVE],
    ["feed", "--tribers", "3", "--have", HAVE, "--final", "--triber-value", "1.5"],
    ["feed", "--tribers", "5", "--have", "salted fnord=1"],
])
def test_every_command_in_every_format(args):
    text = run(*args)
    assert text.exit_code == 0, text.output
    body = json.loads(run(*args, "--json").output)
    table = list(csv.reader(io.StringIO(run(*args, "--csv").output)))
    assert len(table) == len(body["rows"]) + 1 and table[0] == body["columns"]


def test_feed_json_and_example_marking():
    out = run("feed", "--tribers", "3", "--have", HAVE, "--final", "--json")
    body = json.loads(out.output)
    assert body["best_score"] == 13  # 1 fed + 6 celebration + 2 treats + 4 for one feast set
    assert any("EXAMPLE" in n for n in body["notes"])
    assert max(r["score"] for r in body["rows"]) == body["best_score"]


def test_process_split_json():
    body = json.loads(run("process", "--kind", "+1", "--tribers", "2", "--split", "--max-n", "4", "--json").output)
    assert [r["+1"] for r in body["rows"]] == [0, 2, 4, 5, 6]


@pytest.mark.parametrize("args", [
    ["process", "--kind", "x3"],
    ["process", "--max-n", "-1"],
    ["process", "--tribers", "-2"],
    ["process", "--board", "/nonexistent/board.json"],
    ["feed", "--tribers", "-1"],
    ["feed", "--tribers", "11"],
    ["feed", "--tribers", "2", "--have", "gold=3"],
    ["feed", "--tribers", "2", "--have", "baked mgobu=-3"],
    ["feed", "--tribers", "2", "--triber-value", "-1"],
    ["feed", "--tribers", "2", "--keep-value", "lots"],
    ["feed", "--tribers", "2", "--hunger", "-1"],
    ["feed", "--tribers", "2", "--json", "--csv"],
])
def test_bad_input_is_one_line_exit_2(args):
    out = run(*args)
    assert out.exit_code == 2, out.output
    assert "Traceback" not in out.output
    assert len(out.output.strip().splitlines()) == 1 and out.output.startswith("Error:")


def test_bad_board_file(tmp_path):
    bad = tmp_path / "board.json"
    bad.write_text('{"resources": {"a": {}}, "arrows": [{"from": "a", "to": "b", "kind": "x2"}]}')
    out = run("process", "--board", str(bad))
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1
    bad.write_text("not json")
    out = run("feed", "--tribers", "1", "--board", str(bad))
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1
