"""The walk's rounds kept in its checkpoint (walk.round_row): a resumed run goes on with them (its
stage's outlook reads the rounds before the stop), and ``solver ur solve --status`` tells them,
with the outlook, and draws them (``--plot``)."""
from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from gamesolver.games.ur.solve import solve
from gamesolver.solver.cli import cli
from gamesolver.solver.limits import duration
from gamesolver.solver.stochastic import checkpoint, schedule, walk
from tests.test_stochastic_resume import StoppedSweeps
from tests.test_ur_reference import mini_options


def _stopped(tmp_path, monkeypatch, at: int):
    """The mini board's four-piece walk on one thread, stopped at full sweep ``at`` (40 s a sweep
    on a fake clock); its folder and the checkpoint's record."""
    o = mini_options(tmp_path, 4)
    root = tmp_path / "t"
    sweeps = StoppedSweeps(monkeypatch, (at,), each=40.0)
    with pytest.raises(KeyboardInterrupt):
        solve(o, root, tolerance=1e-6, threads=1, graph="regenerate")
    sweeps.restore()
    return o, root, json.loads((root / checkpoint.CHECKPOINT_INFO).read_text())


def _status(o, root, *extra: str):
    return CliRunner().invoke(cli, ["ur", "solve", "--pieces", "4", "--board", str(o.board_file), "--out", str(root),
                                    "--status", *extra])


def test_the_checkpoint_keeps_a_row_a_round_and_a_resumed_run_goes_on_with_them(tmp_path, monkeypatch) -> None:
    o, root, info = _stopped(tmp_path, monkeypatch, 7)  # the mini board's first stage takes 9 rounds
    rows = info["rounds"]
    assert [r["sweep"] for r in rows] == [1, 2, 3, 4, 5, 6] and {r["stage"] for r in rows} == {0}
    assert rows[-1]["change"] == info["change"] and all(r["round_s"] >= r["full_s"] == 40.0 for r in rows)
    assert [r["clock"] for r in rows] == sorted(r["clock"] for r in rows) and rows[-1]["clock"] == info["seconds"]
    assert all(0 < r["generated"] <= 1 for r in rows)
    # resumed and stopped again six rounds on: the rows go on where they stopped, into the next stage
    said: list[str] = []
    sweeps = StoppedSweeps(monkeypatch, (7,), each=40.0)
    with pytest.raises(KeyboardInterrupt):
        solve(o, root, tolerance=1e-6, threads=1, graph="regenerate", log=said.append)
    sweeps.restore()
    info = json.loads((root / checkpoint.CHECKPOINT_INFO).read_text())
    assert [r["sweep"] for r in info["rounds"]] == list(range(1, 13))
    assert info["rounds"][:6] == rows and info["rounds"][-1]["stage"] == 1 and info["rounds"][0]["stage"] == 0
    # the resumed run's first round already has its stage's outlook: it read the six rounds before the stop
    first = next(s for s in said if s.startswith("sweep 7 "))
    assert "at the last 4 rounds' fall" in first, first


def test_the_checkpoint_keeps_the_last_rows_only(monkeypatch) -> None:
    monkeypatch.setattr(walk, "HISTORY_ROWS", 3)
    rows: list[dict] = []
    for k in range(1, 6):
        walk.keep_row(rows, walk.round_row(k, 0, 1.0 / k, 1.0, 2.0, None, 2.0 * k))
    assert [r["sweep"] for r in rows] == [3, 4, 5] and rows[-1]["generated"] is None


def test_status_tells_the_rounds_and_the_outlook_and_draws_them(tmp_path, monkeypatch) -> None:
    o, root, info = _stopped(tmp_path, monkeypatch, 7)
    r = _status(o, root)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    rows = info["rounds"]
    assert lines[2] == (f"rounds kept: stage 1: 6 (largest change {rows[0]['change']:.3g} to "
                        f"{rows[-1]['change']:.3g}); the last took {duration(rows[-1]['round_s'])} (full sweep 40.0 s, "
                        f"{rows[-1]['generated']:.1%} generated, {rows[-1]['policy_sweeps']} policy sweeps of every "
                        "state)")
    assert rows[-1]["policy_sweeps"] >= walk.WALK_HOT_FULL and rows[-1]["evaluated"] > 0
    # the outlook of the round log, from the kept rounds: the fall over the last four, the rounds to the aim
    aim = schedule.stage_end(0, 1e-6)
    fall = (rows[-1]["change"] / rows[-5]["change"]) ** 0.25
    left = math.ceil(math.log(aim / rows[-1]["change"]) / math.log(fall))
    each = sum(r["round_s"] for r in rows[-4:]) / 4
    assert lines[3] == (f"outlook: at the last 4 rounds' fall ({fall:.3g} a round) this stage's aim {aim:.3g} lies "
                        f"some {left} round{'s' if left != 1 else ''} ({duration(left * each)}) away (a reading of "
                        f"the rounds, not a bound)")
    assert json.loads(_status(o, root, "--json").output)["checkpoint"]["rounds"] == rows
    # the picture: a PNG written whole, said on standard error, nothing else left beside it
    pictures = tmp_path / "pictures"
    pictures.mkdir()
    r = _status(o, root, "--plot", str(pictures / "rounds.png"))
    assert r.exit_code == 0 and f"drew its rounds to {pictures / 'rounds.png'}" in r.output
    assert (pictures / "rounds.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in pictures.iterdir()] == ["rounds.png"]


def test_a_plot_without_status_or_without_rounds_is_refused(tmp_path, monkeypatch) -> None:
    o = mini_options(tmp_path, 4)
    picture = tmp_path / "rounds.png"
    r = CliRunner().invoke(cli, ["ur", "solve", "--pieces", "4", "--board", str(o.board_file), "--out",
                                 str(tmp_path / "t"), "--plot", str(picture)])
    assert r.exit_code == 2 and "--plot draws a solve's rounds beside --status; add --status" in r.output
    r = _status(o, tmp_path / "none", "--plot", str(picture))
    assert r.exit_code == 2 and "holds no walk's checkpoint whose rounds could be drawn" in r.output
    # a checkpoint of an older build keeps no rounds: its status says none, and the picture is refused
    o, root, info = _stopped(tmp_path, monkeypatch, 3)
    del info["rounds"]
    (root / checkpoint.CHECKPOINT_INFO).write_text(json.dumps(info))
    r = _status(o, root)
    assert r.exit_code == 0 and "rounds kept" not in r.output and "outlook" not in r.output
    r = _status(o, root, "--plot", str(picture))
    assert r.exit_code == 2 and "the checkpoint keeps no rounds to draw" in r.output
    assert not picture.exists() and not list(tmp_path.glob(".rounds-*"))
    # rows that cannot be read count as none
    assert checkpoint.round_rows({"rounds": [{"sweep": 1}]}) == []
    assert checkpoint.round_rows({"rounds": "x"}) == []


def _row(full_s: float, generated: float | None) -> dict:
    return {"full_s": full_s, "generated": generated}


def test_after_reading_prices_the_walks_tail_from_its_rounds() -> None:
    rows = [_row(900.0, 1.0), _row(10.0, 0.1), _row(100.0, 0.5), _row(300.0, 1.0), _row(250.0, None)]
    # before the last discounted stage: the later stages' rounds are not known
    assert walk.after_reading(0, 4, rows) == "" and walk.after_reading(1, 4, rows) == ""
    # a sweep of every state: the median of the last rows that generated at least half the states,
    # scaled to all of them (900, 200, 300, 250: 10 s at 10% is left out), here with the last three
    walk.TAIL_RATE_ROUNDS = 3
    try:
        last_discounted = walk.after_reading(2, 4, rows)
        undiscounted = walk.after_reading(3, 4, rows)
    finally:
        walk.TAIL_RATE_ROUNDS = 8
    each = 250.0  # median of 200, 300, 250
    assert last_discounted.startswith("the undiscounted stage (at the least a full sweep and a residual sweep")
    assert f"some {duration(5 * each)} at this run's {duration(each)} a sweep of every state" in last_discounted
    assert undiscounted.startswith("the endless check (about 3 sweeps")
    assert f"some {duration(3 * each)} at this run's {duration(each)}" in undiscounted
    # all eight: 900 counts too (median of 900, 200, 300, 250)
    assert f"at this run's {duration(275.0)} a sweep" in walk.after_reading(3, 4, rows)
    # no round that generated enough to price a sweep
    assert walk.after_reading(3, 4, [_row(10.0, 0.1)]) == "" and walk.after_reading(3, 4, []) == ""
    # a last discounted stage whose last round changed more than the tolerance: the undiscounted
    # stage has rounds to make (and says so); below it, or without the tolerance, as before
    far = [*rows[:-1], {**rows[-1], "change": 4e-5}]
    said = walk.after_reading(2, 4, far, 1e-5)
    assert said.startswith("the undiscounted stage (its rounds sweep as this stage's do until a full sweep changes "
                           "no value by more than 1e-05, which the last round's 4e-05 does not meet")
    assert f"at this run's {duration(275.0)} a sweep" in said
    near = [*rows[:-1], {**rows[-1], "change": 4e-6}]
    assert walk.after_reading(2, 4, near, 1e-5) == walk.after_reading(2, 4, far) == walk.after_reading(2, 4, rows)
    assert walk.after_reading(3, 4, far, 1e-5) == walk.after_reading(3, 4, rows)  # (the check alone is left)


def test_status_in_the_last_stages_tells_what_is_left_after_it(tmp_path, monkeypatch) -> None:
    o, root, info = _stopped(tmp_path, monkeypatch, 7)
    # the first stage: nothing said of the tail
    assert not [line for line in _status(o, root).output.splitlines() if line.startswith("after ")]
    for stage in (2, 3):
        info["stage"] = stage
        (root / checkpoint.CHECKPOINT_INFO).write_text(json.dumps(info))
        lines = _status(o, root).output.splitlines()
        after = [line for line in lines if line.startswith("after ")]
        assert len(after) == 1, lines
        tail = walk.after_reading(stage, 4, info["rounds"], info["tolerance"])
        assert tail and after[0].endswith(f": {tail} (an estimate, not a bound)")
        assert ("undiscounted stage" in tail) == (stage == 2)


def test_a_resumed_stage_counts_its_earlier_rounds_toward_the_stall_rule(tmp_path, monkeypatch) -> None:
    """The stall rule (``walk.Stall``) counts a stage's rounds from its start: a stage resumed from
    a checkpoint counts those before the stop too (its checkpoint's rows), so it ends where the
    run that was not stopped ends it, with the same values. Here every discounted stage stalls at
    its fourth round (a window of three rounds that must halve nothing)."""
    import numpy as np

    monkeypatch.setattr(walk, "_STALL_SWEEPS", 3)
    monkeypatch.setattr(walk, "WALK_PROGRESS", 0.0)
    o = mini_options(tmp_path, 4)
    said: list[str] = []
    whole = solve(o, tmp_path / "whole", tolerance=1e-6, threads=1, graph="regenerate", log=said.append)
    walked = said[:next(i for i, s in enumerate(said) if s.startswith("endless check"))]
    first_stage = [s for s in walked if s.startswith("sweep ") and "(1 - discount 0.01)" in s]
    assert len(first_stage) == 4  # (the first stage's aim, 3e-2, lies further off)
    o, root, info = _stopped(tmp_path, monkeypatch, 3)  # in the first stage's third round
    assert [r["stage"] for r in info["rounds"]] == [0, 0]
    resumed = solve(o, root, tolerance=1e-6, threads=1, graph="regenerate")
    assert resumed.meta["sweeps"] == whole.meta["sweeps"]
    assert np.array_equal(np.asarray(resumed["value"]), np.asarray(whole["value"]))


@pytest.mark.parametrize("at", [4, 6, 11], ids=["before-a-damped-sweep", "after-one", "next-stage"])
def test_a_resumed_stage_damps_where_the_unstopped_run_does(tmp_path, monkeypatch, at) -> None:
    """``Flip`` decides from a stage's last rounds whether the next full sweep is damped: a resumed
    stage replays its rounds before the stop (``Flip.replay``, from the rows' ``damped`` flags and
    policy sweeps), so it damps where the run that was not stopped does, and ends on its values bit
    for bit. Here every run of three rounds counts as a flip (a spread no change leaves), so the
    walk damps its 4th, 8th, 12th and 17th full sweeps."""
    import numpy as np

    monkeypatch.setattr(walk, "WALK_FLIP_SPREAD", 1e9)
    o = mini_options(tmp_path, 4)
    said: list[str] = []
    whole = solve(o, tmp_path / "whole", tolerance=1e-6, threads=1, graph="regenerate", log=said.append)
    damped = [int(s.split()[1]) for s in said if s.startswith("sweep ") and " damped: " in s]
    assert damped[:4] == [4, 8, 12, 17]
    o, root, info = _stopped(tmp_path, monkeypatch, at)
    assert [r["sweep"] for r in info["rounds"] if r.get("damped")] == [s for s in damped if s < at]
    rsaid: list[str] = []
    resumed = solve(o, root, tolerance=1e-6, threads=1, graph="regenerate", log=rsaid.append)
    assert [int(s.split()[1]) for s in rsaid if s.startswith("sweep ") and " damped: " in s] == \
        [s for s in damped if s >= at]
    assert resumed.meta["sweeps"] == whole.meta["sweeps"]
    assert np.array_equal(np.asarray(resumed["value"]), np.asarray(whole["value"]))


def _round(sweep: int, change: float, repairs: int = 0) -> dict:
    row = {"sweep": sweep, "stage": 3, "change": change, "full_s": 400.0, "round_s": 480.0, "clock": 0.0,
           "generated": 1.0}
    return {**row, "repairs": repairs} if repairs else row


def test_status_reads_a_stage_after_a_local_repair_from_its_own_rounds(tmp_path) -> None:
    """After the endless check's local repair the undiscounted stage starts again from the repaired
    values: ``--status`` tells its rounds apart from the stage's rounds before the repair and reads
    the outlook from its own rounds only, as the walk does (seven pieces: the walk's last round
    changed 4.47e-6, the first after the repair 0.0509, which read together said the change "did not
    fall")."""
    from gamesolver.games.ur.family import rounds_lines
    from gamesolver.solver.stochastic.rounds_plot import plot_rounds

    rows = [_round(70, 4.47e-6)] + [_round(71 + i, c, 1) for i, c in enumerate([0.0509, 0.0212, 0.00367, 0.00123])]
    ck = {"stage": 3, "stages": 4, "ends_at": 1e-5, "discount_gap": 0.0, "repairs": 1, "tolerance": 1e-5,
          "rounds": rows}
    lines = rounds_lines(ck)
    assert ": stage 4: 1 (largest change 4.47e-06); stage 4 after 1 local repair: 4 (largest change 0.0509 to " \
           "0.00123);" in lines[0]
    assert not any(line.startswith("outlook") for line in lines)  # four rounds since the repair: too few to read
    rows.append(_round(75, 0.000149, 1))
    outlook = [line for line in rounds_lines(ck) if line.startswith("outlook")]
    fall = (0.000149 / 0.0509) ** 0.25
    assert len(outlook) == 1 and f"at the last 4 rounds' fall ({fall:.3g} a round)" in outlook[0], outlook
    # a checkpoint of a stage with no repair behind it reads the rounds without one
    assert not any(line.startswith("outlook") for line in rounds_lines({**ck, "repairs": 0}))
    assert checkpoint.walk_words(False, 2) == " after 2 local repairs" and checkpoint.walk_words(True, 2) == " of the repair"
    assert plot_rounds(rows, list(schedule.WALK_DISCOUNTS), 1e-5, tmp_path / "r.png", "t").stat().st_size > 0


def test_the_walks_last_round_is_said_with_its_residual(tmp_path) -> None:
    """The round that ends the walk (a full sweep and a residual sweep, both below the tolerance) has
    its line in the log, as every other round does, just before the endless check: its sweep, both
    changes and the clock, the residual the table's header keeps."""
    o = mini_options(tmp_path, 4)
    said: list[str] = []
    table = solve(o, tmp_path / "t", tolerance=1e-6, threads=1, graph="regenerate", log=said.append)
    check = next(i for i, s in enumerate(said) if s.startswith("endless check at eps"))
    last = said[check - 1]
    assert last.startswith(f"sweep {table.meta['sweeps']} (1 - discount 0): largest change "), last
    assert "% generated), residual " in last and "both below 1e-06, the walk ends (" in last
    assert f"residual {table.meta['residual']:.3g} (a sweep of every state" in last
