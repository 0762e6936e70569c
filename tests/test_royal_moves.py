"""RoyalUr rule sets: our move generator against RoyalUr's own Python package (royalur, MIT).

The package is an independent implementation of the same rules, so full successor sets (every
move, who rolls next, who has won) are compared on thousands of seeded random positions.
Its three-dice mode is broken, so Masters is compared for its move rules only (rolls 1-4),
which do not depend on the dice; the dice are checked on their own.
"""
from __future__ import annotations

import random
from fractions import Fraction

import pytest

from gamesolver.games.ur import royal
from gamesolver.games.ur.royal import Position, Side
from gamesolver.solver.errors import InputError
from tests.royal_ref import random_position

ru = pytest.importorskip("royalur")
from royalur.model import (  # noqa: E402
    Board, GameMetadata, GameSettings, Piece, PlayerState, PlayerType, Roll, Tile,
)
from royalur.rules.simple import SimpleRuleSetProvider  # noqa: E402
from royalur.rules.state import WaitingForMoveGameState, WaitingForRollGameState, WinGameState  # noqa: E402


def their_settings(rules: royal.RuleSet) -> GameSettings:
    """Their own preset for the rule set, so that no flag of ours leaks into the oracle. Their
    Python package has no Blitz preset: RoyalUr-Java defines Blitz as Masters with 5 pieces and
    an extra roll on a capture. Their Masters preset uses four dice; only moves are compared."""
    if rules.name == "finkel":
        settings = GameSettings.create_finkel()
    elif rules.name == "masters":
        settings = GameSettings.create_masters()
    else:
        settings = GameSettings.create_masters().with_starting_piece_count(5).with_captures_grant_extra_rolls(True)
    return settings.with_starting_piece_count(rules.pieces)


def their_rules(rules: royal.RuleSet):
    return SimpleRuleSetProvider().create(their_settings(rules), GameMetadata())


def to_theirs(pos: Position, rules: royal.RuleSet, settings: GameSettings) -> WaitingForRollGameState:
    board = Board(settings.board_shape)
    for side, s, player in (("L", pos.light, PlayerType.LIGHT), ("D", pos.dark, PlayerType.DARK)):
        path = rules.path_of(side)
        for i in s.path:
            board.set(Tile.from_string(path[i]), Piece(player, i))
    return WaitingForRollGameState(
        board,
        PlayerState(PlayerType.LIGHT, pos.light.hand, pos.light.scored),
        PlayerState(PlayerType.DARK, pos.dark.hand, pos.dark.scored),
        PlayerType.LIGHT if pos.to_move == "L" else PlayerType.DARK,
    )


def from_theirs(state, rules: royal.RuleSet) -> tuple[Position, bool]:
    """(position, game won) of one of their states after a move or a pass."""
    sides = {}
    for side, player, ps in (("L", PlayerType.LIGHT, state.light_player), ("D", PlayerType.DARK, state.dark_player)):
        path = rules.path_of(side)
        on = set()
        for i, name in enumerate(path):
            piece = state.board.get(Tile.from_string(name))
            if piece is not None and piece.owner == player:
                assert piece.path_index == i
                on.add(i)
        sides[side] = Side(ps.piece_count, frozenset(on), ps.score)
    if isinstance(state, WinGameState):
        return Position(sides["L"], sides["D"], "L" if state.get_winner() == PlayerType.LIGHT else "D"), True
    turn = "L" if state.get_turn() == PlayerType.LIGHT else "D"
    return Position(sides["L"], sides["D"], turn), False


def their_successors(pos: Position, roll: int, rules: royal.RuleSet, rs, settings) -> set:
    st = to_theirs(pos, rules, settings)
    after_roll = rs.apply_roll(st, Roll(roll))[-1]
    if not isinstance(after_roll, WaitingForMoveGameState):
        return {("pass",) + from_theirs(after_roll, rules)}
    out = set()
    for mv in after_roll.available_moves:
        out.add(("move",) + from_theirs(rs.apply_move(after_roll, mv)[-1], rules))
    return out


def our_successors(pos: Position, roll: int, rules: royal.RuleSet) -> set:
    mv = royal.moves(pos.state(), roll, rules)
    other = "D" if pos.to_move == "L" else "L"
    if not mv:
        return {("pass", Position.of(pos.state().swapped(), other), False)}
    out = set()
    for m in mv:
        nxt = pos.to_move if (m.extra_roll or m.win) else other
        out.add(("move", Position.of(m.after, nxt), m.win))
    return out


def test_paths_and_rosettes_match_theirs():
    for name in royal.ruleset_names():
        rules = royal.load_ruleset(name)
        settings = their_settings(rules)
        assert [f"{chr(64 + t.x)}{t.y}" for t in settings.paths.light] == list(rules.path)
        assert [f"{chr(64 + t.x)}{t.y}" for t in settings.paths.dark] == list(rules.dark_path)
        shape = settings.board_shape
        rosettes = {f"{chr(64 + t.x)}{t.y}" for t in shape.rosettes}
        assert rosettes == set(rules.rosettes)


@pytest.mark.parametrize(
    "name,pieces,count", [("finkel", 7, 3000), ("finkel", 3, 1000), ("blitz", 5, 1500), ("masters", 7, 1500)]
)
def test_successor_sets_match_royalur(name, pieces, count):
    rules = royal.load_ruleset(name, pieces)
    settings = their_settings(rules)
    rs = their_rules(rules)
    rng = random.Random(f"{name}-{pieces}")
    rolls = range(0, 5)
    seen_capture = seen_win = seen_extra = seen_pass = 0
    for _ in range(count):
        pos = random_position(rules, rng)
        for roll in rolls:
            ours = our_successors(pos, roll, rules)
            theirs = their_successors(pos, roll, rules, rs, settings)
            assert ours == theirs, (royal.format_position(pos, rules), roll)
            for m in royal.moves(pos.state(), roll, rules):
                seen_capture += m.capture
                seen_win += m.win
                seen_extra += m.extra_roll
            seen_pass += not royal.moves(pos.state(), roll, rules)
    # the comparison means something only if every kind of outcome occurred
    assert min(seen_capture, seen_win, seen_extra, seen_pass) > 0


def test_dice():
    f = royal.load_ruleset("finkel")
    assert f.roll_probabilities == tuple((r, Fraction(c, 16)) for r, c in enumerate((1, 4, 6, 4, 1)))
    m = royal.load_ruleset("masters")
    # three binary dice, a total of 0 counts as 4: nobody ever passes on the dice alone
    assert m.roll_probabilities == ((1, Fraction(3, 8)), (2, Fraction(3, 8)), (3, Fraction(1, 8)), (4, Fraction(1, 8)))
    assert sum(p for _, p in m.roll_probabilities) == 1


def test_rule_set_facts():
    f, b, m = (royal.load_ruleset(n) for n in ("finkel", "blitz", "masters"))
    assert (f.pieces, b.pieces, m.pieces) == (7, 5, 7)
    assert (f.length, b.length, m.length) == (14, 16, 16)
    assert f.safe_rosettes and not b.safe_rosettes and not m.safe_rosettes
    assert b.captures_grant_rolls and not f.captures_grant_rolls and not m.captures_grant_rolls


def test_hand_made_moves():
    f = royal.load_ruleset("finkel", 2)
    # light on A7 (needs exactly 1), dark on B4: a 4 enters a piece on A1, a rosette, so light
    # rolls again; A7 cannot move 4.
    pos = royal.parse("L:1/A7/0 D:1/B4/0 L", f)
    ms = royal.moves(pos.state(), 4, f)
    assert [(m.source, m.dest, m.extra_roll, m.capture) for m in ms] == [(-1, 3, True, False)]
    # a 1 bears the A7 piece off; a 1 also enters a piece on A4
    ms = royal.moves(pos.state(), 1, f)
    assert sorted((m.source, m.dest) for m in ms) == [(-1, 0), (13, 14)]
    # dark on the central rosette B4 is safe under Finkel rules, but captured under Blitz rules
    pos = royal.parse("L:1/B2/0 D:1/B4/0 L", f)
    assert [m.dest for m in royal.moves(pos.state(), 2, f)] == [1]
    bl = royal.load_ruleset("blitz", 2)
    pos = royal.parse("L:1/B2/0 D:1/B4/0 L", bl)
    cap = [m for m in royal.moves(pos.state(), 2, bl) if m.capture]
    assert len(cap) == 1 and cap[0].extra_roll
    assert cap[0].after.theirs == Side(2, frozenset(), 0)
    # the last piece borne off wins
    pos = royal.parse("L:0/A8/1 D:2/-/0 L", f)
    (m,) = royal.moves(pos.state(), 2, f)
    assert m.win and not m.extra_roll


@pytest.mark.parametrize(
    "text,why",
    [
        ("L:1/A7/0 D:1/B4/0", "whose turn"),
        ("L:1/A7/0 L", "dark's pieces"),
        ("L:1/C7/0 D:2/-/0 L", "not on light's path"),
        ("L:1/B3/0 D:1/B3/0 L", "both players"),
        ("L:2/A7/0 D:2/-/0 L", "expected 2 pieces"),
        ("L:0/-/2 D:2/-/0 D", "game is over"),
        ("L:x/-/0 D:2/-/0 L", "whole numbers"),
        ("L:2/- D:2/-/0 L", "three fields"),
        ("Q:2/-/0 D:2/-/0 L", "cannot read"),
    ],
)
def test_bad_positions_are_one_line_errors(text, why):
    f = royal.load_ruleset("finkel", 2)
    with pytest.raises(InputError) as e:
        royal.parse(text, f)
    assert why in str(e.value) and "\n" not in str(e.value)


def test_notation_round_trip_and_bad_rule_sets():
    rng = random.Random(7)
    for name in royal.ruleset_names():
        rules = royal.load_ruleset(name)
        for _ in range(200):
            pos = random_position(rules, rng)
            assert royal.parse(royal.format_position(pos, rules), rules) == pos
    assert royal.parse("start", royal.load_ruleset("finkel")) == royal.start(royal.load_ruleset("finkel"))
    with pytest.raises(InputError, match="unknown rule set 'fnkel'; expected one of finkel, blitz, masters"):
        royal.load_ruleset("fnkel")
    with pytest.raises(InputError, match="--pieces"):
        royal.load_ruleset("finkel", 8)


def test_diagram():
    rules = royal.load_ruleset("masters")
    pos = royal.parse("L:2/A2,B5,C8/2 D:4/C1/2 D", rules)
    assert royal.diagram(pos, rules).splitlines() == [
        "     A   B   C",
        " 8   .   .  [L]",
        " 7   *   .   *",
        " 6       .",
        " 5      [L]",
        " 4   .   *   .",
        " 3   .   .   .",
        " 2  [L]  .   .",
        " 1   *   .  [D]",
        "light: 2 in hand, 2 borne off;  dark: 4 in hand, 2 borne off;  dark to move   (* rosette)",
    ]
