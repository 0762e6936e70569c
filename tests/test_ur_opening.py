"""Ur opening files: the values near the start, answering best-move and analyze without the table.

Every answer from a file must equal the table's, on a solved table (the 8-tile test board with four
pieces, where values are not all 0) and on tables of random values (where every state's number
differs, so a wrong key or a wrong mirror image shows), one of them on a board with the mirror."""
from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gamesolver.games.ur import kernel, opening
from gamesolver.games.ur.answers import analyze_answer
from gamesolver.games.ur.notation import Position, format_position
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import (ENCODING, ENCODING_VERSION, GAME, RULE, choices, default_table_dir,
                                       index_arrays, load_table, solve, stored_state_count)
from gamesolver.solver.cli import cli
from gamesolver.solver.errors import CorruptTableError, InputError, PositionNotCoveredError, TableMismatchError
from gamesolver.solver.tables.table import write_table
from tests.test_engine import symmetric_options
from tests.test_ur_reference import mini_options

TURNS = 3


def run(*args: str):
    return CliRunner().invoke(cli, ["ur", *args])


def random_table(options: UrOptions, where: Path, seed: int) -> Path:
    """A table of random values written as ``solve`` writes one (mirror index included)."""
    n = stored_state_count(options)
    values = (np.random.default_rng(seed).random(n, dtype=np.float32) * 2 - 1).astype(np.float32)
    return write_table(where, game=GAME, rule=RULE, encoding=ENCODING, encoding_version=ENCODING_VERSION,
                       state_count=n, options=options.header(), meta={"tolerance": 1e-5},
                       arrays={"value": values, "tier_offsets": kernel(options).tier_offsets(),
                               **index_arrays(options)})


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    d = tmp_path_factory.mktemp("opening")
    mini = mini_options(d, 4)
    sym = symmetric_options(d, 4, mirror=True)
    real = UrOptions(pieces=2)
    return {
        "solved 8-tile board": (mini, solve(mini, d / "mini", tolerance=1e-5, show_progress=False).path),
        # proven: the file carries each position's interval, and answers print it as the table does
        "proven 8-tile board": (mini, solve(mini, d / "proven", tolerance=1e-5, show_progress=False,
                                            proof=True).path),
        "random values, mirrored 9-tile board": (sym, random_table(sym, d / "sym", 1)),
        "random values, real board": (real, random_table(real, d / "real", 2)),
    }


def positions(options: UrOptions, book: opening.OpeningFile, depth: int):
    """Each stored position of the given depth, with either side to move and in both mirror images."""
    keys, depths, mine, theirs = opening.reachable(options, book.turns + 1)
    perm = options.board.mirror
    for m, o in zip(mine[depths == depth].tolist(), theirs[depths == depth].tolist()):
        tiles = [frozenset(i for i in range(options.board.size) if mask >> i & 1) for mask in (m, o)]
        images = [tiles]
        if perm is not None:
            images.append([frozenset(perm[i] for i in t) for t in tiles])
        for a, b in images:
            for side in ("X", "O"):
                yield Position.from_relative(a, b, side)


@pytest.mark.parametrize("name", ["solved 8-tile board", "proven 8-tile board",
                                  "random values, mirrored 9-tile board", "random values, real board"])
def test_every_answer_from_the_file_equals_the_tables(tables, tmp_path, name) -> None:
    options, where = tables[name]
    table = load_table(options, where, build=False)
    file = opening.write(tmp_path / "o.npz", *opening.build(options, table, TURNS))
    book = opening.load(file, options)
    assert (book.intervals is not None) == book.header["intervals"] == name.startswith("proven")
    assert book.header["positions_answered"] == int(np.count_nonzero(book.depth <= TURNS))
    checked = 0
    for depth in range(TURNS + 1):
        for pos in positions(options, book, depth):
            assert analyze_answer(options, book, pos) == analyze_answer(options, table, pos)
            for r in range(len(options.dice.rolls)):
                a, b = choices(options, book, pos, r), choices(options, table, pos, r)
                assert [(c.action.describe(options.board), c.value) for c in a] == \
                       [(c.action.describe(options.board), c.value) for c in b]
            checked += 1
    assert checked == book.header["positions_answered"] * (2 if options.board.mirror is None else 4) > 0
    # one turn further the file holds the positions but not every successor's value
    outside = 0
    for pos in positions(options, book, TURNS + 1):
        try:
            analyze_answer(options, book, pos)
        except opening.OutsideOpening:
            outside += 1
    assert outside > 0


def test_round_trip_keeps_header_and_values(tables, tmp_path) -> None:
    options, where = tables["random values, mirrored 9-tile board"]
    table = load_table(options, where, build=False)
    arrays, header = opening.build(options, table, 2)
    book = opening.load(opening.write(tmp_path / "a.bin", arrays, header), options)  # any suffix: no '.npz' added
    assert (tmp_path / "a.bin").is_file() and not (tmp_path / "a.bin.npz").exists()
    assert book.header == header and book.turns == 2
    assert np.array_equal(book.keys, arrays["keys"]) and np.array_equal(book.values, arrays["values"])
    assert header["options"] == options.header() and header["table"]["state_count"] == table.state_count
    assert header["table"]["values_sha256"] == opening.values_sha256(np.asarray(table["value"]))
    assert header["positions_stored"] == book.keys.size > header["positions_answered"]
    again, _ = opening.build(options, table, 2)
    assert all(np.array_equal(again[k], arrays[k]) for k in arrays)  # the same table, the same file


def test_reachable_counts_grow_by_turn() -> None:
    # the real board: the first turn either side can only spawn (entry, royal tiles, Ishtar, Marduk)
    options = UrOptions(pieces=7)
    keys, depth, _, _ = opening.reachable(options, 3)
    assert np.bincount(depth).tolist() == [1, 5, 22, 116]
    assert np.all(keys[1:] > keys[:-1])


def test_broken_and_foreign_files_are_refused(tables, tmp_path) -> None:
    options, where = tables["solved 8-tile board"]
    table = load_table(options, where, build=False)
    good = opening.write(tmp_path / "good.npz", *opening.build(options, table, 2))
    cut = tmp_path / "cut.npz"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    junk = tmp_path / "junk.npz"
    junk.write_text("not a zip")
    with pytest.raises(CorruptTableError) as err:  # a damaged opening file
        opening.load(cut, options)
    assert "\n" not in str(err.value) and str(cut) in str(err.value)
    # another kind of file given as one: the user's mistake, named with what was found
    binary = tmp_path / "binary.npz"
    binary.write_bytes(bytes([0x93, 0xFF, 0x00, 0x80]) * 50)
    for bad, found in ((junk, "a text file"), (binary, "a binary file of another kind")):
        with pytest.raises(InputError) as err:
            opening.load(bad, options)
        assert "\n" not in str(err.value) and str(bad) in str(err.value)
        assert f"not an opening file (an .npz archive): it is {found}" in str(err.value)
        assert "pickle" not in str(err.value)
    with pytest.raises(TableMismatchError):
        opening.load(good, mini_options(tmp_path, 3))
    # a proven table's file without its intervals, or with them upside down, is refused
    proven_options, proven = tables["proven 8-tile board"]
    arrays, header = opening.build(proven_options, load_table(proven_options, proven, build=False), 2)
    assert header["intervals"] and np.all(arrays["lower"] <= arrays["values"])
    assert np.all(arrays["values"] <= arrays["upper"])
    lost = opening.write(tmp_path / "lost.npz", {k: v for k, v in arrays.items() if k not in ("lower", "upper")}, header)
    flipped = opening.write(tmp_path / "flipped.npz",
                            {**arrays, "lower": arrays["upper"] + 1, "upper": arrays["lower"]}, header)
    for bad in (lost, flipped):
        with pytest.raises(CorruptTableError, match="do not fit its header"):
            opening.load(bad, proven_options)
    with pytest.raises(InputError):
        opening.load(tmp_path / "none.npz", options)
    with pytest.raises(InputError):
        opening.build(options, table, 0)


def test_cli_builds_and_answers_from_the_file(tables, tmp_path) -> None:
    options, where = tables["solved 8-tile board"]
    common = ["--pieces", "4", "--board", options.board_file]
    out = tmp_path / "k4.npz"
    r = run("opening", "build", *common, "--turns", "2", "--table", str(where), "--out", str(out), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    depth = opening.reachable(options, 3)[1]
    assert doc["out"] == str(out) and doc["bytes"] == out.stat().st_size
    assert doc["positions_answered"] == np.count_nonzero(depth <= 2) and doc["positions_stored"] == depth.size
    r = run("opening", "info", str(out), *common)
    assert r.exit_code == 0 and "within 2 turns" in r.output
    r = run("opening", "info", str(out), "--board", options.board_file)  # the file says its pieces
    assert r.exit_code == 0 and "pieces=4" in r.output and "within 2 turns" in r.output, r.output
    r = run("opening", "info", str(out), "--board", options.board_file, "--pieces", "7")  # given: checked
    assert r.exit_code != 0 and "built with pieces=4, wanted pieces=7; read it with pieces=4 (--pieces 4)" in r.output
    r = run("opening", "info", str(out))  # the real board is not the file's: still checked
    assert r.exit_code == 1 and "built with board_sha256=" in r.output and "Traceback" not in r.output
    from_table = json.loads(run("analyze", "X:B1 O:C2 X", *common, "--table", str(where), "--json").stdout)
    r = run("analyze", "X:B1 O:C2 X", *common, "--opening", str(out), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    source = doc.pop("source")
    assert from_table.pop("source")["kind"] == "table"
    assert doc == from_table and source["kind"] == "opening-file" and source["shipped"] is False
    assert source["table_values_sha256"] == opening.values_sha256(np.asarray(load_table(options, where)["value"]))
    r = run("best-move", "start", "--roll", "gold+gold", *common, "--opening", str(out))
    assert r.exit_code == 0 and "from the opening file" in r.output and "built from table" in r.output
    # a position outside the file: the missing table's message, exit 1, no traceback
    far = "X:A1,C1,B2 O:A3,C3 X"
    r = run("analyze", far, *common, "--opening", str(out))
    assert r.exit_code == 1 and "Traceback" not in r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("Error: the opening file") and "not this one" in lines[0]
    assert lines[1].startswith("no solved table for pieces=4") and "solver ur solve --pieces 4" in lines[1]
    r = run("best-move", far, "--roll", "gold+gold", *common, "--opening", str(out), "--json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 1 and doc["pieces"] == 4 and doc["opening_file"] == str(out) and "commands" in doc


def test_cli_refuses_bad_opening_arguments(tables, tmp_path) -> None:
    options, where = tables["solved 8-tile board"]
    common = ["--pieces", "4", "--board", options.board_file]
    for turns in ("0", str(opening.MAX_TURNS + 1)):
        r = run("opening", "build", *common, "--turns", turns, "--table", str(where), "--out", str(tmp_path / "x"))
        assert r.exit_code == 2 and "--turns must be" in r.output and not (tmp_path / "x").exists()
    r = run("analyze", "start", *common, "--opening", str(tmp_path / "none.npz"), "--table", str(where))
    assert r.exit_code == 2 and "not both" in r.output
    junk = tmp_path / "junk.npz"
    junk.write_text("junk")
    r = run("analyze", "start", *common, "--opening", str(junk))
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1 and "Traceback" not in r.output
    assert "is not an opening file" in r.output and "pickle" not in r.output
    # a file given as --table: a table is a folder, so no advice to solve into the file
    r = run("analyze", "start", *common, "--table", str(junk))
    assert r.exit_code == 2 and f"--table {junk} is a text file, not a table: a table is a folder holding header.json" \
        in r.output
    assert f"--out {junk}" not in r.output and len(r.output.strip().splitlines()) == 1
    out = tmp_path / "k4.npz"
    assert run("opening", "build", *common, "--turns", "1", "--table", str(where), "--out", str(out)).exit_code == 0
    r = run("analyze", "start", "--pieces", "4", "--opening", str(out))  # the real board: another digest
    assert r.exit_code == 1 and "board_sha256" in r.output and len(r.output.strip().splitlines()) == 1


def test_shipped_file_answers_when_no_table_exists(tables, tmp_path, monkeypatch) -> None:
    options, where = tables["solved 8-tile board"]
    common = ["--pieces", "4", "--board", options.board_file, "--cache", str(tmp_path / "cache")]
    table = load_table(options, where, build=False)
    shipped = opening.write(tmp_path / opening.shipped_name(options), *opening.build(options, table, 2))
    r = run("analyze", "start", *common)
    assert r.exit_code == 1 and "no solved table" in r.output  # nothing shipped for this board
    monkeypatch.setattr(opening, "shipped_path", lambda o: shipped if o == options else tmp_path / "none")
    r = run("analyze", "start", *common)
    assert r.exit_code == 0 and "from the shipped opening file" in r.output
    doc = json.loads(run("best-move", "start", "--roll", "gold+silver", *common, "--json").stdout)
    assert doc["source"]["shipped"] is True
    assert doc["best"] == choices(options, table, Position(frozenset(), frozenset()), 3)[0].action.describe(
        options.board)
    # a table in the cache wins over the shipped file
    solve(options, default_table_dir(options, str(tmp_path / "cache")), tolerance=1e-3, show_progress=False)
    r = run("analyze", "start", *common)
    assert r.exit_code == 0 and "opening file" not in r.output
    assert format_position(Position(frozenset(), frozenset()), options.board) in r.output


def test_python_api_answers_from_an_opening_file(tables, tmp_path) -> None:
    from gamesolver.games import ur
    from gamesolver.solver.errors import MissingTableError

    options, where = tables["random values, mirrored 9-tile board"]
    table = ur.open_table(where, options=options)
    file = opening.write(tmp_path / "o.npz", *opening.build(options, table.table, 2))
    book = ur.open_opening(file, options=options)
    assert book.value("start") == table.value("start")
    assert book.actions("X:B1 O:- O", "gold+silver") == table.actions("X:B1 O:- O", "gold+silver")
    far = "X:A1,C1,B2 O:A3,C3 X"
    with pytest.raises(opening.OutsideOpening):
        book.value(far)
    # one error for a table's missing position and an opening's: python-chess's probe/get pair
    with pytest.raises(PositionNotCoveredError, match="does not hold this position"):
        book.probe_value(far)
    assert book.get_value(far) is None and book.get_value(far, default=-9.0) == -9.0
    assert book.get_evaluation(far) is None
    assert book.get_value("start") == book.probe_value("start") == table.get_value("start") == table.value("start")
    assert book.get_evaluation("start") == table.probe_evaluation("start")
    assert table.get_value(far) == table.value(far)  # a table holds every position
    with pytest.raises(MissingTableError):
        ur.open_opening(options=options)  # nothing is shipped for a test board


# Each file shipped for the real board: its positions within T turns, and where its start lies
# (docs/ur.md, docs/design/proof.md): four pieces proven (every interval below 7e-6; proofs of several tables put the
# start between +0.0604603 and +0.0604615, its own interval is 1e-6 wide); five pieces solved to 1e-5, not
# proven (a proof of an earlier five-piece table put the game's start in [+0.1460985, +0.1460991],
# and that table's own start lay 2.6e-5 below it: a residual of 1e-5 allows that much and more); six
# pieces solved on a GPU to 1e-5, not proven (its start +0.1954215; no other solve of it exists, so
# the window is the error that the tolerance allowed at five pieces, 3e-5, with room to spare)
SHIPPED = {4: (3_871, 0.0604603, 0.0604615), 5: (3_871, 0.1460, 0.1462), 6: (3_871, 0.1953, 0.1956)}


@pytest.mark.parametrize("pieces", sorted(SHIPPED))
def test_each_shipped_file_solves_the_game_near_the_start(pieces: int) -> None:
    # At every position a shipped file answers, its value must be what the rules make of its
    # successors' values (each roll's best outcome, summed over the rolls), so a file with wrong
    # keys, a wrong mirror image, another board or values not solved fails here
    options = UrOptions(pieces=pieces)
    book = opening.shipped(options)
    assert book is not None and book.turns == 5, f"no file shipped for {pieces} pieces"
    table = book.header["table"]
    assert table["tolerance"] <= 1e-5
    # the successors come from the game without the mirror (the file's keys are canonical, so each
    # lookup turns a state into its mirror image's key where that is smaller): ranking needs no
    # mirror index then, which takes 20 s to build for six pieces
    game = kernel(dataclasses.replace(options, mirror=False))
    win, loss, nocode = -2**31, -2**31 + 1, -2**31 + 2

    @functools.cache
    def worth(code: int) -> tuple[float, float, float]:
        """An outcome's (value, lower end, upper end) to the mover: the file's value and interval of
        the successor, turned round when the turn passes (no interval: the value three times).
        Cached: the 3,871 positions' outcomes name far fewer successors."""
        if code in (win, loss, nocode):
            return (({win: 1.0, loss: -1.0, nocode: 0.0}[code]),) * 3
        again = code >= 0
        m, o = game.unrank(np.array([code if again else -code - 1], dtype=np.int64))
        v = book.stored_value(int(m[0]), int(o[0]))
        lo, hi = book.stored_interval(int(m[0]), int(o[0])) or (v, v)
        return (v, lo, hi) if again else (-v, -hi, -lo)

    def backup(rank: int) -> list[float]:
        """Each roll's best outcome summed over the rolls, for the value and each end at once
        (the maximum is taken for each of the three apart)."""
        total = [0.0, 0.0, 0.0]
        for r, p in enumerate(game.roll_probabilities):
            best = [max(column) for column in zip(*(worth(c) for c in game.roll_outcomes(rank, r)))]
            total = [t + p * x for t, x in zip(total, best)]
        return total

    _, depths, mine, theirs = opening.reachable(options, book.turns)
    answered, low, high = SHIPPED[pieces]
    assert mine.size == book.header["positions_answered"] == answered
    worst = 0.0
    for m, o in zip(mine.tolist(), theirs.tolist()):
        value, from_lower, from_upper = backup(int(game.rank([m], [o])[0]))
        worst = max(worst, abs(value - book.stored_value(m, o)))
        if book.intervals is not None:
            # the game's value lies in the position's interval and is the backup of its successors'
            # values, each in its own interval: so the backups of the successors' lower and upper
            # ends bracket a value inside the position's interval (float32's rounding aside)
            lo, hi = book.stored_interval(m, o)
            assert lo <= book.stored_value(m, o) <= hi
            assert from_lower <= hi + 1e-7 and from_upper >= lo - 1e-7
    if table["bound"] is not None:
        # each value and each successor's is within the proven bound of the game's, whose own backup
        # is exact: so at most twice the bound apart, with float32's rounding (four pieces: 1.6e-7)
        assert worst <= 2 * table["bound"] + 1e-7
    else:
        # a solved table's values solve the equations to its tolerance (the solve's last check)
        assert worst <= table["tolerance"] + 1e-7
    assert low <= book.stored_value(0, 0) <= high
    if book.intervals is not None:
        lo, hi = book.stored_interval(0, 0)
        assert low <= lo <= hi <= high


def test_an_unproven_value_says_so_on_its_own_line(tmp_path, monkeypatch) -> None:
    """Six pieces' shipped opening file is unproven: the value's own line says so (with the
    residual its table stopped at), not only the source line below it."""
    monkeypatch.setenv("SOLVER_CACHE_DIR", str(tmp_path))
    book = opening.shipped(UrOptions(pieces=6))
    if book is None:
        pytest.skip("no opening file is shipped for six pieces")
    assert not book.provenance.proven
    for args in (["analyze", "start"], ["best-move", "start", "--roll", "gold+gold"]):
        r = run(*args, "--pieces", "6")
        assert r.exit_code == 0, r.output
        line = next(x for x in r.output.splitlines() if "value for X" in x)
        assert "(unproven: residual" in line, r.output
