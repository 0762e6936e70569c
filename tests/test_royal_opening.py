"""Opening files for RoyalUr's rule sets (games/ur/royal_opening.py): built from a solved table,
they answer every position within their moves exactly as the table does; the CLI answers the
opening from the shipped file when no table is cached, says so, and names the solve beyond it; the
shipped files carry RoyalUr's published start figures."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from gamesolver.games.ur import royal, royal_answers, royal_opening
from gamesolver.games.ur.opening import OutsideOpening
from gamesolver.games.ur.royal_answers import table_lookup
from gamesolver.games.ur.royal_table import load_royal_table, royal_choices
from gamesolver.solver.cli import cli
from gamesolver.solver.errors import CorruptTableError, InputError, TableMismatchError

# RoyalUr's published chances of light winning from the start (royalur.net's solved games)
PUBLISHED = {"finkel": 0.515404732509, "blitz": 0.504052555093, "masters": 0.504809002027}


@pytest.fixture(scope="module", params=["finkel", "blitz"])
def small(request, tmp_path_factory):
    rules = royal.load_ruleset(request.param, 2)
    table = load_royal_table(rules, tmp_path_factory.mktemp("t") / "table")
    out = tmp_path_factory.mktemp("o") / "opening.npz"
    royal_opening.write(out, *royal_opening.build(rules, table, 4))
    return rules, table, royal_opening.load(out, rules), out


def test_every_answered_position_reads_as_the_table(small) -> None:
    rules, table, book, _ = small
    look, from_file = table_lookup(rules, table), book.lookup()
    depth = royal_opening.reachable(rules, 4)
    assert book.header["positions_answered"] == len(depth) > 50
    for state in depth:
        assert from_file(state) == look(state)
        for roll, _ in rules.roll_probabilities:
            a = [c.win_probability for c in royal_choices(rules, look, state, roll)]
            assert [c.win_probability for c in royal_choices(rules, from_file, state, roll)] == a
    far = max(royal_opening.reachable(rules, 9).items(), key=lambda kv: kv[1])[0]
    with pytest.raises(OutsideOpening):
        from_file(far)


def test_a_file_for_other_rules_or_a_broken_file_is_one_line(small, tmp_path) -> None:
    rules, _, _, out = small
    other = royal.load_ruleset("masters" if rules.name != "masters" else "finkel", 2)
    with pytest.raises(TableMismatchError, match="wanted rules="):
        royal_opening.load(out, other)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(InputError, match="not an opening file .* it is a text file"):
        royal_opening.load(bad, rules)
    cut = tmp_path / "cut.npz"
    cut.write_bytes(out.read_bytes()[: out.stat().st_size // 2])
    with pytest.raises(CorruptTableError, match="unreadable"):
        royal_opening.load(cut, rules)


def test_the_cli_answers_the_opening_from_the_shipped_file(small, monkeypatch, tmp_path) -> None:
    rules, table, book, _ = small
    monkeypatch.setenv("SOLVER_CACHE_DIR", str(tmp_path))  # no table cached
    monkeypatch.setattr(royal_answers, "AUTO_BUILD_MAX_PIECES", 1)  # two pieces would be solved on first use
    monkeypatch.setattr(royal_opening, "shipped", lambda r: book if r == rules else None)
    run = CliRunner()
    args = ["ur", "analyze", "start", "--rules", rules.name, "--pieces", "2"]
    doc = json.loads(run.invoke(cli, [*args, "--json"]).stdout)
    assert doc["win_probability"] == table_lookup(rules, table)(royal.start(rules).state())
    assert doc["proven"] is False and doc["source"]["kind"] == "opening-file" and doc["source"]["shipped"]
    text = run.invoke(cli, args).output
    assert "shipped opening file" in text and text.count("unproven (residual") == 1
    far = max(royal_opening.reachable(rules, 9).items(), key=lambda kv: kv[1])[0]
    r = run.invoke(cli, ["ur", "best-move", royal.format_position(royal.Position.of(far, "L"), rules), "--rules",
                         rules.name, "--pieces", "2", "--roll", "1"])
    assert r.exit_code == 1 and len(r.output.strip().splitlines()) == 1
    assert "holds only the positions near the start" in r.output and f"solver ur solve --rules {rules.name}" in r.output
    assert not any(tmp_path.iterdir())  # nothing solved


def test_opening_info_reads_a_royalur_file_with_its_rules(small) -> None:
    rules, table, book, out = small
    run = CliRunner()
    r = run.invoke(cli, ["ur", "opening", "info", str(out), "--rules", rules.name, "--pieces", "2"])
    assert r.exit_code == 0, r.output
    assert f"RoyalUr {rules.name}, pieces=2" in r.output and f"{book.header['positions_answered']:,} positions" in r.output
    assert book.header["table"]["values_sha256"] in r.output and "unproven (residual" in r.output
    doc = json.loads(run.invoke(cli, ["ur", "opening", "info", str(out), "--rules", rules.name, "--pieces", "2",
                                      "--json"]).stdout)
    assert doc == book.header
    other = "masters" if rules.name != "masters" else "finkel"
    r = run.invoke(cli, ["ur", "opening", "info", str(out), "--rules", other, "--pieces", "2"])
    assert r.exit_code == 1 and "wanted rules=" in r.output and "Traceback" not in r.output
    r = run.invoke(cli, ["ur", "opening", "info", str(out), "--rules", "fort", "--pieces", "2"])
    assert r.exit_code == 1 and f"it is RoyalUr's {rules.name}: give --rules {rules.name}" in r.output
    r = run.invoke(cli, ["ur", "opening", "info", str(out)])  # the file says its rules and pieces
    assert r.exit_code == 0 and f"RoyalUr {rules.name}, pieces=2" in r.output, r.output
    r = run.invoke(cli, ["ur", "opening", "info", str(out), "--pieces", "3"])
    assert r.exit_code == 1 and "pieces" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_shipped_files_hold_royalurs_published_start(name: str) -> None:
    rules = royal.load_ruleset(name)
    book = royal_opening.shipped(rules)
    if book is None:
        pytest.skip(f"no opening file is shipped for {name} yet")
    assert abs(book.win_probability(royal.start(rules).state()) - PUBLISHED[name]) < 1e-9
    assert book.turns >= 6 and not book.provenance.proven and book.header["table"]["residual"] < 1e-11
    assert np.all(np.abs(book.values) <= 1.0)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_shipped_files_agree_with_the_full_tables(name: str) -> None:
    """Needs each rule set's full table in the cache ('solver ur solve --rules NAME')."""
    rules = royal.load_ruleset(name)
    book = royal_opening.shipped(rules)
    table = load_royal_table(rules, build=False)
    look = table_lookup(rules, table)
    for state in royal_opening.reachable(rules, book.turns + 1):
        assert abs(book.win_probability(state) - look(state)) <= 1e-12
