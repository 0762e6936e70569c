"""The Ur Python API: one import, positions and rolls as players write them, actions by tiles,
errors that speak of the API and not of command-line options."""
from __future__ import annotations

import pytest

from gamesolver.games import ur
from gamesolver.solver.errors import InputError, MissingTableError, TableMismatchError


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    return ur.solve_table(pieces=2, cache=tmp_path_factory.mktemp("cache"))


def test_actions_are_named_by_tiles(table):
    acts = table.actions("X:A1,B4 O:C7 X", "gold+gold")
    assert acts and all(isinstance(t, str) for a in acts for p in a.paths for t in p)
    kinds = {a.kind for a in acts}
    assert kinds <= {"spawn", "move", "pass"}
    moves = [a for a in acts if a.kind == "move"]
    assert any(a.paths[0][0] in ("A1", "B4") for a in moves)
    # the text says the same as the tiles
    for a in moves:
        assert a.text.startswith("move " + "-".join(a.paths[0]))
    assert table.best_action("X:A1,B4 O:C7 X", "gold+gold") == acts[0]
    assert acts == sorted(acts, key=lambda a: -a.value)


def test_values_agree_with_the_cli_table(table, tmp_path):
    from gamesolver.games.ur.solve import state_value

    assert table.value("start") == state_value(table.options, table.table, frozenset(), frozenset())
    assert table.actions("start", "blank+blank")[0].text == "spawn on B1"


def test_open_table_finds_the_solved_one_and_never_solves(table, tmp_path):
    again = ur.open_table(table.path, pieces=2)
    assert again.value("start") == table.value("start")
    with pytest.raises(MissingTableError) as err:
        ur.open_table(pieces=2, cache=tmp_path)
    assert "ur.solve_table(pieces=2)" in str(err.value) and "--" not in str(err.value)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(TableMismatchError):
        ur.open_table(table.path, pieces=1)


@pytest.mark.parametrize("call", [
    lambda t: t.best_action("start", "gold+blue"),
    lambda t: t.value("X:Z9 O:- X"),
    lambda t: ur.parse("start", pieces=9),
    lambda t: ur.open_table(pieces=2, options=ur.UrOptions(pieces=3)),
])
def test_errors_name_no_cli_option(table, call):
    with pytest.raises(InputError) as err:
        call(table)
    assert "--" not in str(err.value)


def test_solve_table_stays_callable_after_the_solve_module_is_imported(table, tmp_path):
    import gamesolver.games.ur.solve  # noqa: F401  (the submodule binds its name on the package)

    again = ur.solve_table(pieces=2, out=table.path)  # solved again, replacing its own table
    assert callable(ur.solve_table) and again.value("start") == table.value("start")
