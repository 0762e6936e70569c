"""The commands against random input: malformed positions, rolls, option values and paths, drawn
by hypothesis. Whatever comes in, a command answers (exit 0), or refuses it in one line with exit 2
(the user's input) or 1 (a table or file that cannot be used), never with a traceback, and leaves
no file behind where it refused. Small variants keep every example to a fraction of a second: the
Ünee 2 x 2 board and Ur with one or two pieces, their tables solved once into a cache of the test's
own."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from gamesolver.solver.cli import cli

# pieces of position text: digits, separators, tiles, sides; and the plain junk
DIGITS = st.sampled_from(["0", "1", "2", "3", "4", "7", "9", "12", "-1", "99", "x", "", "1.5"])
SIDES = st.sampled_from(["S", "N", "X", "O", "L", "D", "", "s", "?"])
TILES = st.sampled_from(["A1", "B4", "C7", "C8", "A5", "D1", "B0", "A1,A1", "", "-", "b2", "A", "9Z"])
JUNK = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=16)


@st.composite
def unee_positions(draw) -> str:
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return draw(JUNK)
    if kind == 1:  # well-formed, for the 2 x 2 board with 2 balls a hole (or not quite)
        return draw(st.sampled_from(["2 2 / 2 2 S", "start", "0 4 / 2 2 N", "1 3 / 4 0 S", "0 0 / 0 8 N",
                                     "2 2 / 2 2", "9 0 / 0 0 S"]))
    north = " ".join(draw(st.lists(DIGITS, min_size=0, max_size=3)))
    south = " ".join(draw(st.lists(DIGITS, min_size=0, max_size=3)))
    return f"{north} {draw(st.sampled_from(['/', '|', '']))} {south} {draw(SIDES)}".strip()


@st.composite
def ur_positions(draw) -> str:
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return draw(JUNK)
    if kind == 1:
        return draw(st.sampled_from(["start", "X:B1 O:C2 X", "X:A1,B4 O:C7 O", "X:B2 O:B2 X", "X:- O:- X"]))
    x = ",".join(draw(st.lists(TILES, max_size=3)))
    o = ",".join(draw(st.lists(TILES, max_size=3)))
    return f"X:{x} O:{o} {draw(SIDES)}"


ROLLS = st.one_of(st.sampled_from(["gold+gold", "blank+blank", "silver+gold", "gold", "7", "0", "2", "",
                                   "gold+gold+gold"]), JUNK)
NUMBERS = st.one_of(st.integers(-5, 40).map(str), st.sampled_from(["", "x", "1e9", "2.5", "-0"]))
PATH_KINDS = st.sampled_from(["missing", "missing-dir/inner", "a-file", "a-folder", "proc", "empty-file"])


def a_path(kind: str, root: Path) -> str:
    """A path of the drawn kind under ``root`` (or one the system refuses)."""
    if kind == "proc":
        return "/proc/no/such/place.csv"
    if kind == "a-file":
        f = root / "given.csv"
        f.write_text("a,b\n1,2\n")
        return str(f)
    if kind == "empty-file":
        f = root / "empty.npz"
        f.write_bytes(b"")
        return str(f)
    if kind == "a-folder":
        (root / "folder").mkdir(exist_ok=True)
        return str(root / "folder")
    return str(root / kind)


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("fuzz-cache"))


def check(args: list[str], cache: str, root: Path) -> None:
    """Run ``solver ARGS`` with the test's cache: an answer, or one line with exit 1 or 2; a
    refusal leaves ``root`` as it was."""
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    env = {"SOLVER_CACHE_DIR": cache}
    r = CliRunner().invoke(cli, args, env=env)
    assert r.exception is None or isinstance(r.exception, SystemExit), (args, repr(r.exception), r.output)
    assert "Traceback" not in r.output, (args, r.output)
    assert r.exit_code in (0, 1, 2), (args, r.exit_code, r.output)
    event(f"exit {r.exit_code}")
    if r.exit_code:
        said = [line for line in r.output.splitlines() if line.strip() and not line.startswith("solving ")]
        assert len(said) == 1 or (said and said[0].startswith("Error: no solved table")), (args, r.output)
        assert said[0].startswith("Error: "), (args, r.output)
        after = sorted(p.relative_to(root) for p in root.rglob("*"))
        assert after == before, (args, r.output, set(after) - set(before))


FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(command=st.sampled_from(["best-move", "analyze", "pv", "show", "cycle", "check-eichler"]),
       position=unee_positions(), captured=st.one_of(st.none(), st.sampled_from(["0-0", "4-8", "13-8", "x", "-4-0"])),
       rule=st.sampled_from([None, "uncounted", "draw", "split", "never"]),
       holes=st.sampled_from(["2", "2", "2", "0", "x"]), balls=st.sampled_from(["2", "2", "2", "-1", "99"]))
def test_unee_queries(cache, tmp_path, command, position, captured, rule, holes, balls) -> None:
    args = ["unee", "--holes", holes, "--balls", balls, command, position]
    if captured is not None and command in ("best-move", "analyze", "pv"):
        args += ["--captured", captured]
    if rule is not None and command in ("best-move", "analyze", "pv", "cycle"):
        args += ["--rule", rule]
    check(args, cache, tmp_path)


@FUZZ
@given(command=st.sampled_from(["best-move", "analyze", "show"]), position=ur_positions(), roll=ROLLS,
       pieces=st.sampled_from(["2", "2", "1", "0", "9", "x"]),
       rules=st.sampled_from([None, None, "fort", "finkel", "chess"]),
       table=st.one_of(st.none(), PATH_KINDS), opening=st.one_of(st.none(), PATH_KINDS))
def test_ur_queries(cache, tmp_path, command, position, roll, pieces, rules, table, opening) -> None:
    args = ["ur", command, position, "--pieces", pieces]
    if command == "best-move":
        args += ["--roll", roll]
    if rules is not None:
        args += ["--rules", rules]
    if table is not None and command != "show":
        args += ["--table", a_path(table, tmp_path)]
    if opening is not None and command != "show":
        args += ["--opening", a_path(opening, tmp_path)]
    check(args, cache, tmp_path)


@FUZZ
@given(game=st.sampled_from(["unee", "ur"]), fmt=st.sampled_from(["csv", "npy", "rgu", "xml"]),
       out=st.one_of(st.none(), PATH_KINDS), extra=st.sampled_from([[], ["--reachable"], ["--json"], ["--threads", "0"]]))
def test_exports(cache, tmp_path, game, fmt, out, extra) -> None:
    args = (["unee", "--holes", "2", "--balls", "2", "export"] if game == "unee" else ["ur", "export", "--pieces", "2"])
    args += ["--format", fmt, *extra]
    if out is not None:
        args += ["--out", a_path(out, tmp_path)]
    elif fmt == "csv" and "--json" not in extra:
        args += ["--out", str(tmp_path / "written.csv")]  # not to the test's stdout
    check(args, cache, tmp_path)


@FUZZ
@given(command=st.sampled_from(["ghosts nanna", "ghosts combat", "ghosts race", "ghosts clear", "ulus fight",
                                "ulus race", "ulus shagai", "uluk feed", "uluk process"]),
       option=st.sampled_from(["--bonus", "--distance", "--kish", "--strength", "--players", "--tribers",
                               "--attempts", "--multiplier", "--faces", "--preset", "--have"]),
       value=st.one_of(NUMBERS, JUNK), fmt=st.sampled_from([[], ["--json"], ["--format", "csv"], ["--csv", "--json"]]))
def test_calculators(cache, tmp_path, command, option, value, fmt) -> None:
    check([*command.split(), option, value, *fmt], cache, tmp_path)


def test_the_fuzzing_reaches_answers_too(cache, tmp_path) -> None:
    """The checks above are not all refusals: well-formed input answers (exit 0)."""
    for args in (["unee", "--holes", "2", "--balls", "2", "best-move", "2 2 / 2 2 S"],
                 ["ur", "best-move", "start", "--roll", "gold+gold", "--pieces", "2"],
                 ["ghosts", "nanna", "--bonus", "20"]):
        r = CliRunner().invoke(cli, args, env={"SOLVER_CACHE_DIR": cache})
        assert r.exit_code == 0, (args, r.output)
    assert os.listdir(tmp_path) == []
