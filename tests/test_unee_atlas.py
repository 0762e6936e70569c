"""``solver unee atlas``: the start values it reports are checked against a brute force written
from docs/rules.md section 1 alone (a game-tree search over histories, where the first repeated
position ends the game), its counts against the state graph and an independent walk from the
start, its line of best play by replaying it, and its result files by running it again."""
from __future__ import annotations

import functools
import json
import math
from collections import deque

import networkx as nx
import pytest
from click.testing import CliRunner
from gamesolver.games.unee import UneeOptions
from gamesolver.games.unee import atlas as A
from gamesolver.games.unee.graph import build_graph
from gamesolver.solver.cli import cli

SMALL = ["--holes", "2", "--max-balls", "3"]
SMALL_VARIANTS = A.variants([2], [1, 2, 3])

# ------------------------------------------------------------------ the rules, from docs/rules.md
# A board is (North's row left to right, then South's row left to right), as drawn.


def sowing_ring(n: int) -> list[int]:
    """Clockwise: right to left along South's row, then left to right along North's."""
    return [n + i for i in reversed(range(n))] + list(range(n))


def own_holes(n: int, side: str) -> range:
    return range(n, 2 * n) if side == "S" else range(n)


def sow(board: tuple[int, ...], side: str, hole: int, n: int, skip: bool, both: bool) -> tuple[tuple[int, ...], int]:
    """Empty ``hole`` and drop its balls one at a time clockwise; a last ball that makes exactly
    four in one of the mover's holes (any hole when captures are in both rows) takes those four."""
    b = list(board)
    ring = sowing_ring(n)
    i = ring.index(hole)
    balls, b[hole] = b[hole], 0
    while balls:
        i = (i + 1) % (2 * n)
        if skip and ring[i] == hole:
            continue
        b[ring[i]] += 1
        balls -= 1
    last, captured = ring[i], 0
    if (both or last in own_holes(n, side)) and b[last] == 4:
        captured, b[last] = 4, 0
    return tuple(b), captured


OTHER = {"S": "N", "N": "S"}


class BruteForce:
    """Values of the start by searching every history: a move onto a position (board and side to
    move) already played ends the game. After a capture no earlier position can come back (there
    are fewer balls), so what follows is a fresh game, searched once and remembered."""

    def __init__(self, options: UneeOptions) -> None:
        self.n = options.holes_per_row
        self.skip, self.both = options.skip_origin, options.capture_rows == "both"
        self.start = ((options.balls_per_hole,) * (2 * self.n), "S")
        self.moves = functools.lru_cache(maxsize=None)(self._moves)
        self.fresh = functools.lru_cache(maxsize=None)(self._fresh)
        self.fresh_draw = functools.lru_cache(maxsize=None)(self._fresh_draw)

    def _moves(self, board: tuple[int, ...], side: str) -> list[tuple[tuple[int, ...], int, int]]:
        out = [(*sow(board, side, h, self.n, self.skip, self.both), h) for h in own_holes(self.n, side) if board[h]]
        return sorted(out, key=lambda m: -m[1])  # captures first: they settle a value soonest

    def repeated(self, rule: str, board: tuple[int, ...], mover: str) -> int:
        """What a repetition is worth to the player who made it."""
        if rule == "uncounted":
            return 0  # the balls left count for nobody
        mine = sum(board[h] for h in own_holes(self.n, mover))
        return mine - (sum(board) - mine)  # split: each player takes their own row

    def search(self, rule: str, board: tuple[int, ...], side: str, path: set, alpha: int, beta: int) -> int:
        """The best future capture difference for the side to move (alpha-beta over histories)."""
        moves = self.moves(board, side)
        if not moves:
            return -sum(board)  # the side to move has an empty row: the rest go to the opponent
        best = -10**6
        for nxt, cap, _ in moves:
            key = (nxt, OTHER[side])
            if cap:
                v = cap - self.fresh(rule, nxt, OTHER[side])
            elif key in path:
                v = self.repeated(rule, nxt, side)
            else:
                path.add(key)
                v = -self.search(rule, nxt, OTHER[side], path, -beta, -max(alpha, best))
                path.discard(key)
            if v > best:
                best = v
                if best >= beta:
                    break
        return best

    def _fresh(self, rule: str, board: tuple[int, ...], side: str) -> int:
        bound = sum(board) + 1  # nobody gains more than the balls on the board
        return self.search(rule, board, side, {(board, side)}, -bound, bound)

    def draw(self, board: tuple[int, ...], side: str, d: int, path: set, alpha: int, beta: int) -> int:
        """Draw rule: +1, 0 or -1 for the side to move, ``d`` ahead in captures so far; a
        repetition ends the game without a result (0)."""
        moves = self.moves(board, side)
        if not moves:
            t = d - sum(board)
            return (t > 0) - (t < 0)
        best = -2
        for nxt, cap, _ in moves:
            key = (nxt, OTHER[side])
            if cap:
                v = -self.fresh_draw(nxt, OTHER[side], -(d + cap))
            elif key in path:
                v = 0
            else:
                path.add(key)
                v = -self.draw(nxt, OTHER[side], -d, path, -beta, -max(alpha, best))
                path.discard(key)
            if v > best:
                best = v
                if best >= beta:
                    break
        return best

    def _fresh_draw(self, board: tuple[int, ...], side: str, d: int) -> int:
        return self.draw(board, side, d, {(board, side)}, -2, 2)

    def start_values(self) -> dict[str, int]:
        board, side = self.start
        return {"uncounted": self.fresh("uncounted", board, side), "draw": self.fresh_draw(board, side, 0),
                "split": self.fresh("split", board, side)}

    def reachable(self) -> nx.DiGraph:
        """Every position reachable from the start and its moves, by breadth-first search."""
        G = nx.DiGraph()
        G.add_node(self.start)
        queue = deque([self.start])
        while queue:
            board, side = queue.popleft()
            for nxt, _, _ in self.moves(board, side):
                w = (nxt, OTHER[side])
                if w not in G:
                    queue.append(w)
                G.add_edge((board, side), w)
        return G


# ------------------------------------------------------------------ the atlas of the small variants


@pytest.fixture(scope="module")
def small_atlas(tmp_path_factory):
    out = tmp_path_factory.mktemp("atlas")
    result = CliRunner().invoke(cli, ["unee", "atlas", *SMALL, "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert sorted(data["solved"]) == sorted(A.variant_key(o) for o in SMALL_VARIANTS)
    return out, {r["variant"]: r for r in A.all_results(out)}


def _result(small_atlas, options: UneeOptions) -> dict:
    return small_atlas[1][A.variant_key(options)]


@pytest.mark.parametrize("options", SMALL_VARIANTS, ids=A.variant_key)
def test_start_values_match_a_brute_force_of_the_rules(small_atlas, options):
    start = _result(small_atlas, options)["start"]
    truth = BruteForce(options).start_values()
    assert start["uncounted"]["value"] == truth["uncounted"]
    assert start["draw"]["outcome"] == truth["draw"]
    split = start["split"]
    assert split["lower"] <= truth["split"] <= split["upper"]
    if split["exact"] is not None:
        assert split["exact"] == truth["split"]
    assert split["exact"] is not None  # these boards are small enough for the search


@pytest.mark.parametrize("options", SMALL_VARIANTS, ids=A.variant_key)
def test_counts_match_the_graph_and_a_walk_from_the_start(small_atlas, options):
    r = _result(small_atlas, options)
    g = build_graph(options)
    assert r["boards"] == g.n_states == math.comb(options.max_balls + options.holes, options.holes)
    assert r["moves"] == 2 * g.n_edges == 2 * A.edge_count(options)
    G = BruteForce(options).reachable()
    assert r["reachable"]["positions"] == G.number_of_nodes()
    assert r["reachable"]["moves"] == G.number_of_edges()
    assert r["reachable"]["game_over"] == sum(1 for v in G if G.out_degree(v) == 0)
    cyclic = [len(c) for c in nx.strongly_connected_components(G) if len(c) > 1]
    comps = r["components"]["reachable"]
    assert comps["components"] == len(cyclic)
    assert comps["largest"] == max(cyclic, default=0)
    assert comps["on_cycle"] == sum(cyclic)


@pytest.mark.parametrize("options", SMALL_VARIANTS, ids=A.variant_key)
def test_the_line_of_best_play_ends_as_reported(small_atlas, options):
    """Replay the reported moves with the rules above: a repetition closes the reported cycle,
    a capture-out leaves the side to move without a ball, and the captures add up to the value."""
    start = _result(small_atlas, options)["start"]
    bf = BruteForce(options)
    n = options.holes_per_row
    for rule in ("uncounted", "draw"):
        line = start[rule]
        board, side = bf.start
        seen = [(board, side)]
        diff, sign = 0, 1
        for name in line["moves"]:
            who, column = name.split("-")  # S-left, N-right, S-middle, or S-1 .. S-n from the left
            assert who == side
            col = int(column) - 1 if column.isdigit() else {"left": 0, "middle": 1, "right": n - 1}[column]
            hole = (n if side == "S" else 0) + col
            board, cap = sow(board, side, hole, n, options.skip_origin, options.capture_rows == "both")
            diff += sign * cap
            sign, side = -sign, OTHER[side]
            seen.append((board, side))
        assert len(line["moves"]) == line["plies"]
        if line["end"] == A.REPETITION:
            first = seen.index(seen[-1])
            assert first < len(seen) - 1 and len(seen) - 1 - first == line["cycle"]
            assert first == line["lead_in"]
            assert len(set(seen[:-1])) == len(seen) - 1  # nothing repeated before the end
        else:
            assert line["end"] == A.CAPTURE_OUT and not bf.moves(board, side)
            left = sum(board)
            diff += left if sign == -1 else -left  # the balls go to the player who moved last
        if rule == "uncounted":
            assert line["plies"] == start["uncounted"]["remoteness"]
            assert (line["end"] == A.REPETITION) == start["uncounted"]["cycling"]
            assert diff == line["final_difference"] == start["uncounted"]["value"]
        elif line["end"] == A.CAPTURE_OUT:
            assert (diff > 0) - (diff < 0) == start["draw"]["outcome"]


def test_a_second_run_solves_nothing_and_a_missing_file_is_solved_again(small_atlas):
    out, _ = small_atlas
    stamps = {p.name: p.stat().st_mtime_ns for p in out.glob("h*.json")}
    again = CliRunner().invoke(cli, ["unee", "atlas", *SMALL, "--out", str(out), "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["solved"] == []
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("h*.json")} == stamps
    # one file lost, one spoiled: those two, and only those, are solved again
    (out / "h2-b2-skip-own.json").unlink()
    (out / "h2-b3-noskip-both.json").write_text("{not json")
    third = CliRunner().invoke(cli, ["unee", "atlas", *SMALL, "--out", str(out), "--json"])
    assert third.exit_code == 0, third.output
    assert sorted(json.loads(third.stdout)["solved"]) == ["h2-b2-skip-own", "h2-b3-noskip-both"]
    assert A.load_result(out, UneeOptions(2, 3, False, "both")) is not None


def test_summary_table_and_picture(small_atlas, tmp_path):
    out, results = small_atlas
    picture, table = tmp_path / "atlas.png", tmp_path / "atlas.md"
    result = CliRunner().invoke(cli, ["unee", "atlas", *SMALL, "--out", str(out), "--plot", str(picture),
                                      "--markdown", str(table)])
    assert result.exit_code == 0, result.output
    assert picture.stat().st_size > 10_000
    assert len(table.read_text().splitlines()) == 2 + len(SMALL_VARIANTS)
    rows = (out / A.SUMMARY_CSV).read_text().splitlines()
    assert rows[0].split(",") == A.SUMMARY_COLUMNS and len(rows) == 1 + len(SMALL_VARIANTS)
    summary = json.loads((out / A.SUMMARY_JSON).read_text())
    assert {r["variant"] for r in summary["rows"]} == set(results)
    assert "2 x 3 (skip, capture both)" in result.output


def test_the_rows_of_docs_variants_match_a_fresh_solve(small_atlas):
    # docs/variants.md is written from a long atlas run; its small rows are solved again here
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "variants.md").read_text(encoding="utf-8")
    for options in SMALL_VARIANTS:
        row = A.markdown_table([_result(small_atlas, options)], sowing=False).splitlines()[-1]
        heading = "### " + A.SOWING_TITLES[(options.skip_origin, options.capture_rows)][:1].upper()
        section = doc[doc.index(heading + A.SOWING_TITLES[(options.skip_origin, options.capture_rows)][1:]):]
        assert row in section.split("\n### ")[0], (A.variant_key(options), row)


def test_the_plan_sizes_every_variant_exactly_before_any_work(tmp_path):
    for o in [UneeOptions(3, 2, True, "both"), UneeOptions(2, 4), UneeOptions(4, 1, False, "both")]:
        g = build_graph(o)
        assert (A.board_count(o), A.edge_count(o)) == (g.n_states, g.n_edges)
    result = CliRunner().invoke(cli, ["unee", "atlas", *SMALL, "--max-boards", "1000", "--plan", "--json",
                                      "--out", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)["plan"]
    assert plan["to_solve"] == 8 and {it["variant"][:5] for it in plan["left_out"]} == {"h2-b3"}
    assert not (tmp_path / "a").exists()  # a plan writes nothing


@pytest.mark.parametrize("args, words", [
    (["--holes", "5..2"], "runs backwards"),
    (["--holes", "two"], "expected a number or a range"),
    (["--holes", "9"], "1..8"),
    (["--min-balls", "4", "--max-balls", "3"], "--min-balls"),
    (["--holes", "4", "--max-balls", "4", "--max-minutes", "1"], "--max-minutes"),
    (["--holes", "3", "--max-balls", "1", "--jobs", "2", "--max-gib", "0.2"], "--max-gib"),
    (["--plot", "atlas.txt"], "--plot"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, words):
    out = tmp_path / "atlas"
    result = CliRunner().invoke(cli, ["unee", "atlas", "--out", str(out), *args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in result.output
    assert not out.exists()


def test_the_output_must_be_a_folder_and_the_ranges_come_after_the_command(tmp_path):
    file = tmp_path / "taken"
    file.write_text("mine")
    result = CliRunner().invoke(cli, ["unee", "atlas", *SMALL, "--out", str(file)])
    assert result.exit_code == 2 and "folder" in result.output and file.read_text() == "mine"
    before = CliRunner().invoke(cli, ["unee", "--holes", "2", "atlas", "--out", str(tmp_path / "b")])
    assert before.exit_code == 2 and "after the command" in before.output
