"""``solver ur export``: every position once (both mirror images), values as the table says."""
from __future__ import annotations

import csv
import io

import numpy as np
from click.testing import CliRunner

from gamesolver.games.ur import kernel
from gamesolver.games.ur.export import mirror_masks, reachable_states, write_csv
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import solve
from gamesolver.solver.cli import cli
from tests.test_engine import symmetric_options


def test_npy_export_holds_every_position_with_its_value(tmp_path) -> None:
    o = symmetric_options(tmp_path, 3, mirror=True)
    table = solve(o, tmp_path / "t", tolerance=1e-6, threads=2)
    out = tmp_path / "all.npy"
    r = CliRunner().invoke(cli, ["ur", "export", "--pieces", "3", "--board", o.board_file, "--table",
                                 str(tmp_path / "t"), "--format", "npy", "--out", str(out)])
    assert r.exit_code == 0, r.output
    a = np.load(out)
    K = kernel(o)
    assert a.shape[0] == K.full_state_count
    keys = (a["x"].astype(np.int64) << 32) | a["o"]
    assert np.unique(keys).size == a.shape[0]  # every position once
    assert np.array_equal(a["value"], np.asarray(table["value"])[K.rank(a["x"], a["o"])])
    fx, fo = mirror_masks(a["x"], o.board.mirror), mirror_masks(a["o"], o.board.mirror)
    assert set(((fx.astype(np.int64) << 32) | fo).tolist()) == set(keys.tolist())  # closed under the mirror


def test_csv_export_names_positions_in_the_notation(tmp_path) -> None:
    o = UrOptions(pieces=1)
    table = solve(o, tmp_path / "t", threads=2)
    buf = io.StringIO()
    n = write_csv(o, table, buf)
    rows = list(csv.DictReader(io.StringIO(buf.getvalue())))
    assert n == len(rows) == kernel(o).full_state_count == 421
    assert rows[0] == {"position": "X:- O:- X", "side": "X", "pieces_x": "0", "pieces_o": "0", "value": "0"}
    assert {"X:A1 O:- X", "X:C1 O:- X"} <= {r["position"] for r in rows}


def test_reachable_states_include_the_start_and_are_closed(tmp_path) -> None:
    o = UrOptions(pieces=2)
    K = kernel(o)
    seen = reachable_states(o, threads=2)
    assert seen[K.rank([0], [0])[0]]
    assert 0 < seen.sum() <= K.state_count
    for s in np.flatnonzero(seen)[:200]:  # every successor of a reachable state is reachable
        for roll in range(K.roll_count):
            for c in K.roll_outcomes(int(s), roll):
                if c > -(2**31 - 2):
                    assert seen[c if c >= 0 else -c - 1]


def test_export_errors_are_one_line(tmp_path) -> None:
    r = CliRunner().invoke(cli, ["ur", "export", "--pieces", "2", "--format", "npy"])
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "--out FILE" in r.output
    r = CliRunner().invoke(cli, ["ur", "export", "--pieces", "2", "--table", str(tmp_path / "none")])
    assert r.exit_code == 1 and "solver ur solve --pieces 2" in r.output  # missing data, not bad input


def test_csv_export_without_out_goes_to_standard_output(tmp_path) -> None:
    """No --out: the CSV is the command's standard output, a header and a row a position."""
    o = symmetric_options(tmp_path, 2, mirror=True)
    solve(o, tmp_path / "t", tolerance=1e-6, threads=1)
    r = CliRunner().invoke(cli, ["ur", "export", "--pieces", "2", "--board", o.board_file, "--table",
                                 str(tmp_path / "t")])
    assert r.exit_code == 0, r.output
    lines = r.stdout.strip().splitlines()
    assert lines[0] == "position,side,pieces_x,pieces_o,value"
    assert len(lines) - 1 == kernel(o).full_state_count and lines[1].startswith('"X:- O:- X",X,0,0,')
