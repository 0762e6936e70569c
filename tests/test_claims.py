"""The claims registry and ``solver verify``: every check runs under its registry options, and
each has a changed input that flips or weakens its verdict (proof that it can fail)."""
from __future__ import annotations

import inspect
import json
from fractions import Fraction
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gamesolver.games import claims as registry
from gamesolver.games.claims import (
    dirichlet_draws, find_claim, interval, load_claims, verdict_from_interval,
)
from gamesolver.solver.cli import cli
from gamesolver.solver.errors import InputError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_ur_reference import mini_options  # noqa: E402


def run(name: str, **overrides):
    return find_claim(name).run(overrides)


# ---------------------------------------------------------------- the registry


def test_registry_is_complete_and_every_option_reaches_its_check() -> None:
    claims = load_claims()
    assert len(claims) >= 20
    registry.check_registry(claims)  # the index agrees with the files
    assert len({c.name for c in claims}) == len(claims)
    for c in claims:
        params = inspect.signature(c.checker()).parameters
        assert set(c.options) <= set(params), c.name
        # sources name a title and section, never a file or a work item
        assert not re.search(r"seed|issue|\.txt|[0-9a-f]{16}", c.source), c.source
        assert c.claim and c.source


def test_an_option_the_check_does_not_take_is_refused() -> None:
    with pytest.raises(InputError, match="not taken by its check"):
        run("ghosts-defender-wins-ties", colour="red")


def test_posterior_interval_helpers() -> None:
    a = dirichlet_draws([27, 19, 77, 77], draws=500, seed=1)
    b = dirichlet_draws([27, 19, 77, 77], draws=500, seed=1)
    assert (a == b).all() and a.shape == (500, 4)
    assert abs(a.sum(axis=1) - 1).max() < 1e-12
    lo, hi = interval(a[:, 0])
    assert lo < 27 / 200 < hi
    assert verdict_from_interval(0.1, 0.2) == "verified"
    assert verdict_from_interval(-0.2, -0.1) == "refuted"
    assert verdict_from_interval(-0.1, 0.1) == "undetermined"
    with pytest.raises(InputError):
        dirichlet_draws([1, -1])


# ---------------------------------------------------------------- solver verify


def invoke(*args: str):
    return CliRunner().invoke(cli, ["verify", *args])


def test_verify_prints_one_line_a_claim_and_the_evidence_on_request() -> None:
    res = invoke("--game", "ghosts")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].startswith("claim") and "verdict" in lines[0] and "evidence" in lines[0]
    names = [c.name for c in load_claims() if c.game == "ghosts"]
    for i, name in enumerate(names):
        assert lines[2 + i].startswith(name)
    assert "5 claims: 5 verified" in res.output and "(the evidence behind each verdict: --details)" in res.output
    assert len(lines) == 2 + len(names) + 1  # one line a claim and the tally, nothing more
    assert "options: modifiers=" not in res.output
    res = invoke("--game", "ghosts", "--details")
    assert res.exit_code == 0 and "options: modifiers=" in res.output and "VERIFIED      ghosts-fighter-ladder" in res.output
    assert "--details)" not in res.output
    res = invoke("--claim", "ghosts-nanna-three-attempts")  # a claim asked for by name shows its block
    assert res.exit_code == 0 and "1 claim: 1 verified" in res.output
    assert "source:  Ghosts of Ur" in res.output and "details:" not in res.output


def test_verify_json_carries_source_options_verdict_and_uncertainty() -> None:
    res = invoke("--claim", "ulus-camel-race-faster", "--claim", "ghosts-nanna-three-attempts", "--json")
    assert res.exit_code == 0, res.output
    records = json.loads(res.output)
    assert [r["name"] for r in records] == ["ulus-camel-race-faster", "ghosts-nanna-three-attempts"]
    for r in records:
        assert {"source", "claim", "options", "verdict", "evidence", "figures", "uncertainty"} <= set(r)
    camel = records[0]
    assert camel["options"]["throws"] == {"gmit-2018": [27, 19, 77, 77]}
    assert camel["verdict"] == "undetermined"
    assert camel["uncertainty"]["gmit-2018"]["throws"]["horse"] == 27
    assert records[1]["uncertainty"] is None  # exact dice: nothing measured


def test_verify_refuses_a_registry_with_fewer_claims_than_its_index(monkeypatch) -> None:
    monkeypatch.setattr(registry, "expected_counts", lambda: {"ghosts.json": 99})
    res = invoke("--game", "ghosts")
    assert res.exit_code == 1
    assert res.output.count("\n") == 1 and "fewer claims than its index lists" in res.output
    monkeypatch.setattr("gamesolver.games.claims_cli.load_claims", lambda: [])
    res = invoke()
    assert res.exit_code == 1 and "no claims found" in res.output


def test_verify_bad_input_is_one_line() -> None:
    for args in (("--claim", "no-such-claim"), ("--game", "chess")):
        res = invoke(*args)
        assert res.exit_code == 2 and res.output.count("\n") == 1 and "Traceback" not in res.output


# ---------------------------------------------------------------- Ünee (a small variant keeps it fast)

SMALL = {"holes_per_row": 2, "balls_per_hole": 3}


def test_repetitions_claim_fails_on_an_empty_board() -> None:
    assert run("unee-repetitions-exist", **SMALL).status == "verified"
    assert run("unee-repetitions-exist", holes_per_row=2, balls_per_hole=0).status == "refuted"


def test_capturing_loses_leads_with_one_position_and_fails_without_one() -> None:
    r = run("unee-capturing-loses", **SMALL)
    assert r.status == "undetermined"  # only uncounted and draw have such positions here
    assert r.evidence[0].startswith("Yes.")
    assert sum("<- to move" in line for line in r.evidence) == 1  # one diagram
    assert all(r.figures["lead"]["replayed"].values())
    assert run("unee-capturing-loses", **SMALL, repetition=["uncounted", "draw"]).status == "verified"
    assert run("unee-capturing-loses", holes_per_row=2, balls_per_hole=2).status == "refuted"


def test_150_moves_reports_every_reading_and_follows_the_threshold() -> None:
    games = {"random": 2000, "optimal": 300}
    r = run("unee-games-over-150-moves", **SMALL, games=games, moves=2)
    assert set(r.figures["readings"]) == {"plies/random", "plies/optimal", "moves each/random", "moves each/optimal"}
    assert r.status == "verified"
    assert run("unee-games-over-150-moves", **SMALL, games=games, moves=10_000).status == "refuted"


# ---------------------------------------------------------------- Ulus


def test_camel_race_verdict_follows_the_measured_throws() -> None:
    base = run("ulus-camel-race-faster")
    assert base.status == "undetermined" and base.uncertainty is not None
    lo, hi = base.uncertainty["gmit-2018"]["rounds_saved_interval"]
    assert lo < 0 < hi
    assert run("ulus-camel-race-faster", throws={"gmit-2018": [10, 60, 65, 65]}).status == "verified"
    assert run("ulus-camel-race-faster", throws={"gmit-2018": [60, 10, 65, 65]}).status == "refuted"


def test_chinggis_without_a_head_start_gains_nothing() -> None:
    assert run("ulus-chinggis-head-start", players=[2, 3]).status == "verified"
    assert run("ulus-chinggis-head-start", players=[2, 3], head_start=0).status == "refuted"


def test_alun_gua_song_needs_missed_turns() -> None:
    assert run("ulus-alun-gua-song", players=[2, 3]).status == "verified"
    assert run("ulus-alun-gua-song", players=[2, 3], missed_turns=0).status == "refuted"


def test_first_seat_edge_shrinks_on_a_longer_track() -> None:
    short = run("ulus-fewest-assets-race-first", players=[2])
    long = run("ulus-fewest-assets-race-first", players=[2], length=25)
    for k in short.figures:
        assert short.figures[k][0] - short.figures[k][1] > long.figures[k][0] - long.figures[k][1] > 0


def test_roll_for_help_fails_when_every_roll_is_goats() -> None:
    assert run("ulus-roll-for-help").status == "verified"
    assert run("ulus-roll-for-help", presets=[[0, 0, 0, 1]]).status == "refuted"


def test_winter_without_a_bonus_is_no_harder() -> None:
    assert run("ulus-monsters-stronger").status == "verified"
    assert run("ulus-monsters-stronger", winter_bonus=0).status == "refuted"


def test_tuulch_certain_faces_decide_nothing_and_few_throws_decide_little() -> None:
    assert run("ulus-tuulch-decides-fate").status == "verified"
    assert run("ulus-tuulch-decides-fate", presets=[[1, 0, 0, 0]]).status == "refuted"
    many = run("ulus-tuulch-decides-fate", presets=["gmit-2018"])
    few = run("ulus-tuulch-decides-fate", presets=["gmit-2018"], throws={"gmit-2018": [1, 0, 0, 0]})
    width = lambda r: -__import__("operator").sub(*r.uncertainty["gmit-2018"]["p_apart_interval"])  # noqa: E731
    assert width(few) > 2 * width(many)
    horses = run("ulus-tuulch-decides-fate", presets=["gmit-2018"], throws={"gmit-2018": [60, 0, 0, 0]})
    assert horses.status == "undetermined"  # a horse-heavy bone may or may not separate them


# ---------------------------------------------------------------- Ghosts of Ur

MODS = {"kish": -20, "akkadian": 0, "ghost": 25, "nanna": 45}


def test_fighter_ladder_breaks_when_akkadians_are_weaker_than_kish() -> None:
    assert run("ghosts-fighter-ladder").status == "verified"
    assert run("ghosts-fighter-ladder", modifiers={**MODS, "akkadian": -30}).status == "refuted"


def test_ties_to_the_attacker_or_rerolled_favour_nobody_else() -> None:
    r = run("ghosts-defender-wins-ties")
    assert r.status == "verified" and r.figures["even_fight_attacker"] == "99/200"
    assert run("ghosts-defender-wins-ties", ties="attacker").status == "refuted"
    assert run("ghosts-defender-wins-ties", ties="reroll").figures["even_fight_attacker"] == "1/2"


def test_nanna_with_more_attempts_is_no_longer_the_favourite() -> None:
    r = run("ghosts-nanna-three-attempts")
    one = Fraction(297, 2000)  # 55 * 54 / 2 winning pairs of 10,000 at a net -45
    assert r.status == "verified" and r.figures["0"]["one_fight"] == str(one)
    assert r.figures["0"]["within"] == str(1 - (1 - one) ** 3)
    assert run("ghosts-nanna-three-attempts", attempts=5).status == "refuted"


def test_emmer_field_without_its_bonus_is_no_harder() -> None:
    assert run("ghosts-emmer-field-bonus").status == "verified"
    assert run("ghosts-emmer-field-bonus", emmer_bonus=0).status == "refuted"


def test_extra_turns_need_a_two() -> None:
    r = run("ghosts-unlimited-extra-turns")
    assert r.status == "verified" and r.figures["unlimited"] == "16/5"
    assert run("ghosts-unlimited-extra-turns", dice=["1/4", "1/4", "0", "1/4", "1/4"]).status == "refuted"


# ---------------------------------------------------------------- Uluk


def test_processing_examples_fail_on_a_wrong_example(monkeypatch) -> None:
    from gamesolver.games.uluk import claims as uluk_claims

    assert run("uluk-processing-examples").status == "verified"
    monkeypatch.setattr(uluk_claims, "PROCESSING_EXAMPLES", [("uluk -> pickled uluk", "x2", 2, 5)])
    assert run("uluk-processing-examples").status == "refuted"


def test_seat_compensation_fails_when_the_last_seat_gets_least() -> None:
    r = run("uluk-seat-compensation")
    assert r.status == "verified" and r.figures["4"]["worth"] == ["3", "6", "6", "9"]
    assert run("uluk-seat-compensation", start_food={"1": 3, "2": 2, "3": 2, "4": 1}).status == "refuted"


def test_last_season_breeding_pays_only_if_tribers_had_a_value() -> None:
    assert run("uluk-last-season-feeding").status == "verified"
    assert run("uluk-last-season-feeding", triber_value=5).status == "refuted"


# ---------------------------------------------------------------- Ur on the small test board


@pytest.fixture(scope="module")
def mini_cache(tmp_path_factory):
    from gamesolver.games.ur.solve import default_table_dir, solve

    d = tmp_path_factory.mktemp("urclaims")
    cache = d / "cache"
    for k in (2, 4):
        o = mini_options(d, k)
        solve(o, default_table_dir(o, str(cache)), tolerance=1e-6, threads=1, show_progress=False)
    return {"board_file": mini_options(d, 4).board_file, "cache": str(cache)}


def test_ur_claims_wait_for_a_four_piece_table(mini_cache) -> None:
    for name in ("ur-first-player-favoured", "ur-ishtar-most-powerful", "ur-royal-realm-strong-start",
                 "ur-repetition-draw"):
        r = run(name, **mini_cache, pieces=[1, 2, 3])
        assert r.status == "undetermined", name
        assert "solver ur solve --pieces 4 --board" in r.summary


def test_ur_first_player_and_endless_play_on_the_test_board(mini_cache) -> None:
    r = run("ur-first-player-favoured", **mini_cache)
    assert r.status == "verified" and r.figures["2"]["start_value"] == 0.0
    assert r.figures["4"]["start_value"] > 0.1
    e = run("ur-repetition-draw", **mini_cache)
    assert e.figures["2"]["endless"] == e.figures["2"]["states"] > 0  # nobody can win with two pieces
    assert e.status == "refuted" and e.figures["4"]["endless"] == 0


def test_ur_special_tiles_on_the_test_board(mini_cache) -> None:
    r = run("ur-ishtar-most-powerful", **mini_cache)
    gains = {t: g["mean_gain"] for t, g in r.figures.items()}
    assert set(gains) == {"B2", "B3", "C2"}
    top = max(gains, key=gains.get)
    assert (r.status == "verified") == (top == "B2")
    royal = run("ur-royal-realm-strong-start", **mini_cache)
    assert royal.uncertainty is None and royal.figures["judged"] == royal.figures["states"]
    sampled = run("ur-royal-realm-strong-start", **mini_cache, sample=300, seed=3)
    assert sampled.figures["judged"] == 300 and sampled.uncertainty is not None
    lo, hi = sampled.uncertainty["interval"]
    assert lo <= royal.figures["share"] <= hi


def test_ulus_worked_examples_fail_with_another_card_value() -> None:
    assert run("ulus-worked-examples").status == "verified"
    assert run("ulus-worked-examples", blue_sky_points=10).status == "refuted"


def test_endless_closure_keeps_every_state_when_nobody_can_win(mini_cache) -> None:
    """With two pieces every value is 0 and every action stays among them: the closure is everything."""
    import numpy as np

    from gamesolver.games.ur import claims as ur_claims
    from gamesolver.games.ur.rules import UrOptions

    found, _ = ur_claims._solved([2], mini_cache["board_file"], None, mini_cache["cache"])
    s = found[0]
    ranks, ms, os_, sampled = ur_claims._states(s)
    live = ur_claims._live(s, ms, os_)
    assert not sampled and live.sum() > 0
    closed = ur_claims._closed_zero_set(s, ranks[live], ms[live], os_[live], np.asarray(s.table["value"]))
    assert closed.size == live.sum()
    # a sample of the states stands in for the whole table above the cap
    r2, m2, o2, sampled = ur_claims._states(s, cap=50, seed=1)
    assert sampled and r2.size == 50 and (np.diff(r2) > 0).all()
    assert isinstance(s.options, UrOptions)


def test_ishtar_gain_matches_a_state_by_state_reference(mini_cache) -> None:
    """The vectorised gain of holding a tile against the Python API, state by state."""
    from test_ur_reference import all_states

    from gamesolver.games.ur.engine import terminal_value
    from gamesolver.games.ur.rules import UrOptions
    from gamesolver.games.ur.solve import default_table_dir, load_table, state_value

    r = run("ur-ishtar-most-powerful", **mini_cache)
    opts = UrOptions(pieces=4, board_file=mini_cache["board_file"])
    table = load_table(opts, default_table_dir(opts, mini_cache["cache"]), build=False)
    for name, fig in r.figures.items():
        tile = opts.board.index(name)
        gains = [state_value(opts, table, mine, theirs) - state_value(opts, table, mine - {tile}, theirs)
                 for mine, theirs in all_states(opts.board.size, 4)
                 if tile in mine and terminal_value(opts.board, mine, theirs) is None]
        assert len(gains) == fig["states"]
        assert abs(sum(gains) / len(gains) - fig["mean_gain"]) < 1e-6


def test_progress_goes_to_stderr_only_on_a_terminal(monkeypatch) -> None:
    quiet = invoke("--game", "uluk")
    assert quiet.exit_code == 0 and quiet.stderr == ""
    monkeypatch.setattr("gamesolver.games.claims_cli.show_progress", lambda: True)
    loud = invoke("--game", "uluk")
    assert "[1/3] uluk-processing-examples" in loud.stderr and "3 claims checked" in loud.stderr
    timeless = lambda out: [x for x in out.splitlines() if not x.endswith(" s)")]  # noqa: E731
    assert "[1/3]" not in loud.stdout and timeless(loud.stdout) == timeless(quiet.stdout)


def test_nomadic_outcomes_agree_with_the_exact_fight() -> None:
    """The vectorised roll-for-help scoring against ``fight`` in exact fractions."""
    import numpy as np

    from gamesolver.games.ulus.claims import nomadic_outcomes, pattern_matrix
    from gamesolver.games.ulus.fight import fight, make_setup
    from gamesolver.games.ulus.shagai import face_probabilities

    for preset in ("uniform", "gmit-2018"):
        probs = face_probabilities(preset)
        pm = pattern_matrix(np.array([float(x) for x in probs]))[0]
        for strength, mult, players in ((0, 1, 2), (9, 2, 3), (14, 3, 3), (25, 2, 6), (30, 4, 4)):
            roll = fight(make_setup(strength, mult, players, "summer"), probs)["roll"]
            asset, after = nomadic_outcomes(strength, mult * players, mult * players)
            assert pm @ asset == pytest.approx(float(roll.p_asset), abs=1e-12)
            assert pm @ after == pytest.approx(float(roll.expected_strength), abs=1e-12)


def test_measured_throws_carry_an_interval_for_the_monster_claims() -> None:
    r = run("ulus-roll-for-help")
    lo, hi = r.uncertainty["gmit-2018"]["smallest_gain_losing_interval"]
    assert 0 < lo <= hi
    m = run("ulus-monsters-stronger")
    assert m.uncertainty["gmit-2018"]["share_of_draws_where_it_holds"] == 1.0


SYMMETRIC_BOARD = {
    "name": "symmetric test board",
    "tiles": [
        {"name": "A1", "at": [0, 1], "section": "earth", "roles": ["fort"], "neighbours": ["B1", "A2"]},
        {"name": "B1", "at": [1, 1], "section": "earth", "roles": ["entry"], "neighbours": ["A1", "C1", "B2"]},
        {"name": "C1", "at": [2, 1], "section": "earth", "roles": ["fort"], "neighbours": ["B1", "C2"]},
        {"name": "A2", "at": [0, 2], "section": "earth", "roles": ["royal"], "neighbours": ["A1", "B2", "A3"]},
        {"name": "B2", "at": [1, 2], "section": "earth", "roles": ["ishtar"], "neighbours": ["B1", "A2", "C2", "B3"]},
        {"name": "C2", "at": [2, 2], "section": "earth", "roles": ["royal"], "neighbours": ["C1", "B2", "C3"]},
        {"name": "A3", "at": [0, 3], "section": "heaven", "roles": ["fort"], "neighbours": ["B3", "A2"]},
        {"name": "B3", "at": [1, 3], "section": "bridge", "roles": ["marduk"], "neighbours": ["B2", "A3", "C3"]},
        {"name": "C3", "at": [2, 3], "section": "heaven", "roles": ["fort"], "neighbours": ["C2", "B3"]},
    ],
}


def test_ur_claims_are_the_same_whether_the_table_folds_the_mirror(tmp_path) -> None:
    """An engine that keeps one state of each mirrored pair must give the same figures, weighted,
    as a table of every state (A2 and C2 measured together)."""
    from gamesolver.games.ur.rules import UrOptions
    from gamesolver.games.ur.solve import default_table_dir, solve

    if "mirror" not in UrOptions.__dataclass_fields__:
        pytest.skip("this engine numbers every state; there is no folded table to compare")
    board = tmp_path / "symmetric.json"
    board.write_text(json.dumps(SYMMETRIC_BOARD))
    cache = str(tmp_path / "cache")
    for mirror in (True, False):
        o = UrOptions(pieces=4, board_file=str(board), mirror=mirror)
        assert o.uses_mirror == mirror
        solve(o, default_table_dir(o, cache), tolerance=1e-6, threads=1, show_progress=False)
    common = {"board_file": str(board), "cache": cache, "pieces": [4]}
    for name in ("ur-first-player-favoured", "ur-royal-realm-strong-start", "ur-repetition-draw"):
        folded, full = run(name, **common), run(name, **common, mirror=False)
        assert folded.status == full.status, name
    a = run("ur-royal-realm-strong-start", **common)
    b = run("ur-royal-realm-strong-start", **common, mirror=False)
    assert a.figures["states"] == b.figures["states"] and abs(a.figures["share"] - b.figures["share"]) < 1e-9
    folded = run("ur-ishtar-most-powerful", **common).figures
    full = run("ur-ishtar-most-powerful", **common, mirror=False).figures
    assert set(folded) == {"B2", "B3", "A2/C2"} and {"A2", "C2"} <= set(full)
    for tile in ("B2", "B3"):
        assert folded[tile]["states"] == full[tile]["states"]
        assert abs(folded[tile]["mean_gain"] - full[tile]["mean_gain"]) < 2e-6
    both = (full["A2"]["mean_gain"] * full["A2"]["states"] + full["C2"]["mean_gain"] * full["C2"]["states"])
    assert folded["A2/C2"]["states"] == full["A2"]["states"] + full["C2"]["states"]
    assert abs(folded["A2/C2"]["mean_gain"] - both / folded["A2/C2"]["states"]) < 2e-6
