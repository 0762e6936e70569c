"""The Cython move generator and the Python engine against the slow reference, for every roll."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ur import kernel
from gamesolver.games.ur.engine import actions
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.errors import InputError
from tests.test_ur_reference import mini_options, ref_outcomes

ROLLS = ["blank+blank", "blank+gold", "blank+silver", "gold+silver", "gold+gold", "silver+silver"]


def opts(k: int) -> UrOptions:
    return UrOptions(pieces=k)


def tiles(o: UrOptions, text: str) -> frozenset[int]:
    return frozenset(o.board.index(t) for t in text.split(",") if t)


def tile_sets(o: UrOptions, outcomes: list) -> set:
    """(mine, theirs, flag) outcomes with tile masks, as a set of (tile set, tile set, flag)."""
    b = o.board
    return {(frozenset(i for i in range(b.size) if m >> i & 1), frozenset(i for i in range(b.size) if t >> i & 1), f)
            for m, t, f in outcomes}


def kernel_set(o: UrOptions, mine: frozenset, theirs: frozenset, roll: int) -> set:
    return tile_sets(o, kernel(o).successors(o.board.mask(mine), o.board.mask(theirs), roll))


def engine_set(o: UrOptions, mine: frozenset, theirs: frozenset, roll: int) -> set:
    acts = actions(o, mine, theirs, o.dice.rolls[roll])
    if len(acts) == 1 and acts[0].kind == "pass":
        return {(mine, theirs, 3)}
    return {a.outcome for a in acts}


def all_three(o: UrOptions, mine: str, theirs: str, roll: str) -> set:
    """The outcome set, after checking that kernel, engine and reference agree on it."""
    m, t, r = tiles(o, mine), tiles(o, theirs), o.dice.index(roll)
    ref = ref_outcomes(o, m, t, o.dice.rolls[r])
    assert kernel_set(o, m, t, r) == ref
    assert engine_set(o, m, t, r) == ref
    return {(",".join(sorted(o.board.names[i] for i in a)), ",".join(sorted(o.board.names[i] for i in b)), f)
            for a, b, f in ref}


@st.composite
def positions(draw, n: int = 20):
    k = draw(st.integers(1, 7))
    order = draw(st.permutations(range(n)))
    a = draw(st.integers(0, min(k, n)))
    b = draw(st.integers(0, min(k, n - a)))
    return k, frozenset(order[:a]), frozenset(order[a:a + b])


@settings(max_examples=150, deadline=None)
@given(positions(), st.integers(0, 5))
def test_kernel_and_engine_equal_reference_on_random_positions(pos, roll) -> None:
    k, mine, theirs = pos
    o = opts(k)
    ref = ref_outcomes(o, mine, theirs, o.dice.rolls[roll])
    assert kernel_set(o, mine, theirs, roll) == ref
    assert engine_set(o, mine, theirs, roll) == ref


@settings(max_examples=60, deadline=None)
@given(positions(n=8), st.integers(0, 5))
def test_kernel_equals_reference_on_the_small_board(tmp_path_factory, pos, roll) -> None:
    k, mine, theirs = pos
    o = mini_options(tmp_path_factory.mktemp("mini"), min(k, 4))
    mine, theirs = frozenset(list(mine)[: o.pieces]), frozenset(list(theirs)[: o.pieces])
    ref = ref_outcomes(o, mine, theirs, o.dice.rolls[roll])
    assert kernel_set(o, mine, theirs, roll) == ref


@settings(max_examples=40, deadline=None)
@given(positions(), st.integers(0, 5))
def test_heaven_and_earth_positions(pos, roll) -> None:
    """Random positions forced to dominate Heaven or Earth, where the rare rules apply."""
    k, mine, theirs = pos
    k = max(k, 4)
    o = opts(k)
    forced = tiles(o, "A7,C7") if roll % 2 else tiles(o, "A1,C1")
    mine = frozenset(list(mine - forced)[: k - 2]) | forced
    theirs = frozenset(list(theirs - mine)[:k])
    ref = ref_outcomes(o, mine, theirs, o.dice.rolls[roll])
    assert kernel_set(o, mine, theirs, roll) == ref
    assert engine_set(o, mine, theirs, roll) == ref


# ---- hand-made positions, one or more per rule -------------------------------------------


def test_start_only_entry_spawn() -> None:
    o = opts(7)
    for roll in ROLLS:
        got = all_three(o, "", "", roll)
        extra = {"gold+silver": {("A4", "", 0), ("B5", "", 0), ("C4", "", 0)}, "gold+gold": {("B6", "", 0)},
                 "silver+silver": {("B4", "", 0)}}.get(roll, set())
        assert got == {("B1", "", 0)} | extra, roll


def test_entry_spawn_captures_but_not_a_lone_first_piece() -> None:
    o = opts(3)
    assert ("B1", "", 0) not in all_three(o, "", "B1", "blank+gold")
    assert all_three(o, "", "B1", "blank+gold") == {("", "B1", 3)}  # nothing legal: pass
    assert ("B1", "C3", 0) in all_three(o, "", "B1,C3", "blank+gold")
    assert not any(m == "A2,B1" for m, _, _ in all_three(o, "B1", "", "blank+blank"))  # own piece on entry


def test_no_spawn_with_an_empty_pool() -> None:
    o = opts(1)
    assert all_three(o, "B2", "", "blank+blank") == {("B2", "", 3)}  # no move on blank+blank: pass
    assert all_three(o, "B2", "", "gold+silver") == {
        (m, "", f) for m, f in [("B1", 0), ("A2", 0), ("C2", 0), ("B3", 0), ("A1", 1), ("C1", 1), ("A3", 0),
                                ("C3", 0), ("B4", 0)]
    }


def test_blank_blank_spawns_next_to_own_pieces_only() -> None:
    o = opts(3)
    got = all_three(o, "A1", "A2", "blank+blank")
    assert got == {("A1,B1", "A2", 0)}  # A2 is held by the opponent; spawning never captures there
    got = all_three(o, "B7", "", "blank+blank")
    assert ("A7,B7", "", 0) in got and ("B7,C7", "", 0) in got  # a spawn on a fort: no extra turn


def test_colour_spawns_need_empty_tiles() -> None:
    o = opts(3)
    assert not any("B6" in m for m, _, _ in all_three(o, "", "B6", "gold+gold"))
    assert ("B4", "", 0) in all_three(o, "", "", "silver+silver")
    got = all_three(o, "", "A4", "gold+silver")
    assert {m for m, _, _ in got} == {"B1", "B5", "C4"}


def test_capture_ends_the_piece_move_but_leftover_steps_can_be_used() -> None:
    o = opts(3)
    got = all_three(o, "B2,C2", "B3", "gold+gold")
    assert ("B3,C2", "", 0) in got  # capture, stop
    assert not any(m in ("B4,C2", "A3,C2") for m, t, _ in got if t == "")  # no going on after the capture
    assert ("B3,C3", "", 0) in got  # leftover step used by the other piece


def test_dominating_earth_lets_a_capturing_piece_go_on() -> None:
    o = opts(4)
    got = all_three(o, "A1,C1,B2", "B3,B4", "gold+gold")
    assert ("A1,B4,C1", "", 0) in got  # captures B3 then B4
    assert ("A1,A3,C1", "B4", 0) in got
    plain = all_three(o, "A1,B2", "B3,B4", "gold+gold")
    assert ("A1,B4", "", 0) not in plain


def test_ishtar_protects_forts() -> None:
    o = opts(3)
    assert ("A1", "B4", 1) not in all_three(o, "A2", "A1,B4", "blank+gold")
    assert ("A1", "B5", 1) in all_three(o, "A2", "A1,B5", "blank+gold")
    # the protection falls the moment the Ishtar piece is captured, within the same action
    assert ("A1,B4", "", 1) in all_three(o, "A2,B3", "A1,B4", "gold+silver")


def test_fort_gives_an_extra_turn_even_when_passed_through() -> None:
    o = opts(3)
    assert ("A1", "", 1) in all_three(o, "A2", "", "blank+silver")
    got = all_three(o, "A2", "", "gold+gold")
    assert ("B1", "", 1) in got  # A2-A1-B1 entered a fort on the way


def test_a_move_may_not_end_where_it_started() -> None:
    o = opts(1)
    got = all_three(o, "B6", "", "gold+gold")
    assert ("B6", "", 0) not in got and ("B6", "", 1) not in got
    assert {m for m, _, _ in got} == {"B5", "B7", "B4", "A7", "C7", "B8"}


def test_dominating_heaven_allows_three_steps_on_doubles_only() -> None:
    o = opts(4)
    three = all_three(o, "A7,C7,B3", "", "gold+gold")
    assert ("A7,B6,C7", "", 0) in three  # B3-B4-B5-B6
    assert ("A7,B6,C7", "", 0) in all_three(o, "A7,C7,B3", "", "silver+silver")
    assert ("A7,B6,C7", "", 0) not in all_three(o, "A7,C7,B3", "", "gold+silver")
    assert ("A7,B6,C7", "", 0) not in all_three(o, "A7,B3", "", "gold+gold")


def test_holding_all_four_forts_wins() -> None:
    o = opts(4)
    assert ("A1,A7,C1,C7", "", 2) in all_three(o, "A1,A7,C7,C2", "", "blank+gold")
    o5 = opts(5)
    assert ("A1,A7,C1,C2,C7", "B1,B2", 2) in all_three(o5, "A1,A7,C7,C2", "B1,B2", "blank+blank")  # by a spawn


def test_two_pieces_one_step_each_in_either_order() -> None:
    o = opts(3)
    got = all_three(o, "A2,A3", "", "gold+silver")
    assert ("A1,A2", "", 1) in got  # A2-A1 first, then A3 into the tile it left
    assert ("A2,B3", "", 0) in got and ("A1,B3", "", 1) in got


@pytest.mark.parametrize("roll", ROLLS)
def test_rolls_parse_either_way_round(roll: str) -> None:
    o = opts(1)
    a, b = roll.split("+")
    assert o.dice.index(f"{b}+{a}") == o.dice.index(roll)
    # in any case and with spaces round the plus, as people type them
    assert o.dice.index(f" {a.upper()} + {b.title()} ") == o.dice.index(roll)


def test_a_roll_that_is_not_one_is_a_one_line_error() -> None:
    with pytest.raises(InputError, match="unknown roll 'gold gold'; rolls are blank\\+blank"):
        opts(1).dice.index("gold gold")


# ---- the kernel's outcome list, in its order ----------------------------------------------


def ordered_outcomes(o: UrOptions, M: int, O: int, r: int) -> list[tuple[int, int, int]]:
    """The generator's outcome list in the order it writes it, the slow way. The device generator
    (gpu_fort) writes the same list in the same order and the solve's outcome counts split it into
    groups, so a change of order is a change of the engine, not only of its speed:
    the entry spawn; the other spawns, tile ascending; one piece one step, piece then tile
    ascending; one piece two steps (a path walked depth first, neighbours ascending, ending
    elsewhere than it began); two pieces one step each, first piece and its tile, then second
    piece and its tile ascending, the order with the higher first piece left out when the other
    order is legal too; while Heaven is held, one piece of steps+1 .. heaven steps, depth first;
    the pass (flag 3) when nothing is legal."""
    b = o.board
    roll = o.dice.rolls[r]
    nb = [sorted(n) for n in b.neighbours]
    forts, earth, heaven = b.mask(b.forts), b.mask(b.earth_forts), b.mask(b.heaven_forts)
    ishtar, entry = b.mask(b.with_role("ishtar")), 1 << b.entry
    out: list[tuple[int, int, int]] = []

    def emit(m: int, t: int, fort: bool) -> None:
        out.append((m, t, 2 if m & forts == forts else int(fort)))

    def step(m: int, t: int, here: int, to: int) -> tuple[int, int, bool] | None:
        bit = 1 << to
        if m & bit or (t & bit and bit & forts and t & ishtar):
            return None
        return (m & ~(1 << here)) | bit, t & ~bit, bool(t & bit)

    def walks(m: int, t: int, start: int, here: int, done: int, lo: int, hi: int, fort: bool) -> None:
        for to in nb[here]:
            s = step(m, t, here, to)
            if s is None:
                continue
            m2, t2, cap = s
            f2 = fort or bool(forts >> to & 1)
            if done + 1 >= lo and to != start:
                emit(m2, t2, f2)
            if done + 1 < hi and not (cap and m2 & earth != earth):
                walks(m2, t2, start, to, done + 1, lo, hi, f2)

    pieces = [i for i in range(b.size) if M >> i & 1]
    pool = len(pieces) < o.pieces
    if pool and not M & entry and not (O & entry and bin(O).count("1") == 1):
        emit(M | entry, O & ~entry, False)
    if pool and roll.spawn:
        if roll.spawn == "adjacent":
            spawn = {t for p in pieces for t in nb[p]}
        else:
            spawn = set(b.with_role(roll.spawn))
        for t in sorted(spawn):
            if not (M | O) >> t & 1:
                emit(M | 1 << t, O, False)
    for lo in (1, 2):
        if roll.steps >= lo:
            for p in pieces:
                walks(M, O, p, p, 0, lo, lo, False)
    if roll.steps >= 2:
        for p in pieces:
            for to in nb[p]:
                first = step(M, O, p, to)
                if first is None:
                    continue
                M1, O1, _ = first
                for q in pieces:
                    if q == p:
                        continue
                    for to2 in nb[q]:
                        second = step(M1, O1, q, to2)
                        if second is None:
                            continue
                        if p > q:
                            other = step(M, O, q, to2)
                            if other is not None and step(other[0], other[1], p, to) is not None:
                                continue
                        emit(second[0], second[1], bool(forts >> to & 1) or bool(forts >> to2 & 1))
    if roll.heaven_steps > roll.steps and M & heaven == heaven:
        for p in pieces:
            walks(M, O, p, p, 0, roll.steps + 1, roll.heaven_steps, False)
    return out or [(M, O, 3)]


@settings(max_examples=300, deadline=None)
@given(positions(), st.integers(0, 5), st.sampled_from(["", "A7,C7", "A1,C1", "A1,C1,A7,C7"]))
def test_kernel_writes_its_outcomes_in_the_documented_order(pos, roll, forced) -> None:
    """Same list, same order, as ``ordered_outcomes``; some positions forced to hold Heaven or
    Earth so that the longer walks and the capturing walks are met."""
    k, mine, theirs = pos
    o = opts(k)
    held = tiles(o, forced)
    if len(held) <= k:
        mine = frozenset(list(mine - held)[: k - len(held)]) | held
        theirs = frozenset(list(theirs - mine)[:k])
    M, O = o.board.mask(mine), o.board.mask(theirs)
    want = ordered_outcomes(o, M, O, roll)
    assert tile_sets(o, want) == ref_outcomes(o, mine, theirs, o.dice.rolls[roll])  # the slow list is the rules' set
    assert kernel(o).successors(M, O, roll) == want


def test_the_order_of_a_hand_worked_list() -> None:
    """Pieces on A2 and A3, gold+silver (two steps, royal spawns), by hand: entry, the royal
    spawns, one step, two steps (A2 by A1 and by B2, A3 by B3 and by A4), then two pieces; there
    A3 first is kept only where A2's step was not legal before it (A2 onto A3)."""
    o = opts(3)
    b = o.board
    M = b.mask(tiles(o, "A2,A3"))
    got = kernel(o).successors(M, 0, o.dice.index("gold+silver"))
    names = [(",".join(sorted(b.names[i] for i in range(b.size) if m >> i & 1)), f) for m, t, f in got]
    assert names == [
        ("A2,A3,B1", 0), ("A2,A3,A4", 0), ("A2,A3,C4", 0), ("A2,A3,B5", 0),
        ("A1,A3", 1), ("A3,B2", 0), ("A2,B3", 0), ("A2,A4", 0),
        ("A3,B1", 1), ("A3,B1", 0), ("A3,C2", 0), ("A3,B3", 0),
        ("A2,B2", 0), ("A2,C3", 0), ("A2,B4", 0), ("A2,B4", 0),
        ("A1,A2", 1), ("A1,B3", 1), ("A1,A4", 1), ("A2,B2", 0), ("B2,B3", 0), ("A4,B2", 0),
        ("A3,B3", 0), ("A3,A4", 0),
    ]
    assert got == ordered_outcomes(o, M, 0, o.dice.index("gold+silver"))
