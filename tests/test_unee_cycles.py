import json
from collections import deque

import networkx as nx
import numpy as np
import pytest
from click.testing import CliRunner

from gamesolver.games import unee
from gamesolver.games.unee import cycles as C
from gamesolver.games.unee.claims import capture_losing_mask, explain_position, replay_check
from gamesolver.games.unee.graph import build_graph
from gamesolver.solver.retrograde import _graph
from gamesolver.solver.cli import cli

VARIANTS = [
    unee.UneeOptions(holes_per_row=2, balls_per_hole=3),
    unee.UneeOptions(holes_per_row=3, balls_per_hole=1, skip_origin=True),
    unee.UneeOptions(holes_per_row=2, balls_per_hole=2, capture_rows="both"),
]


def nx_graph(g):
    G = nx.DiGraph()
    G.add_nodes_from(range(2 * g.n_states))
    for x in range(g.n_states):
        for _, y, _ in g.moves(x):
            for s in (0, 1):
                G.add_edge(2 * x + s, 2 * y + 1 - s)
    return G


@pytest.mark.parametrize("opts", VARIANTS)
def test_scc_equals_networkx(opts):
    g = build_graph(opts)
    comp = _graph.scc_alternating(g.indptr, g.succ)
    ref = {frozenset(c) for c in nx.strongly_connected_components(nx_graph(g))}
    mine = {}
    for v, c in enumerate(comp):
        mine.setdefault(int(c), set()).add(v)
    assert ref == {frozenset(c) for c in mine.values()}


@pytest.mark.parametrize("opts", VARIANTS[:2])
def test_cycle_summary_counts(opts):
    g = build_graph(opts)
    summary = C.cycle_summary(g)
    ref = [c for c in nx.strongly_connected_components(nx_graph(g)) if len(c) > 1]
    assert summary["total"]["all"]["components"] == len(ref)
    assert summary["total"]["all"]["on_cycle"] == sum(len(c) for c in ref)
    assert summary["total"]["all"]["largest"] == max(len(c) for c in ref)
    reach = g.reachable()
    nodes = {2 * x + s for x in range(g.n_states) for s in (0, 1) if reach[x] >> s & 1}
    assert summary["total"]["reachable"]["on_cycle"] == sum(len(c & nodes) for c in ref)


def test_shortest_cycles_equal_networkx():
    g = build_graph(VARIANTS[0])
    G = nx_graph(g)
    finder = _graph.CycleFinder(g.indptr, g.succ)
    rng = np.random.default_rng(3)
    for v in rng.choice(2 * g.n_states, size=150, replace=False):
        v = int(v)
        lengths = [nx.shortest_path_length(G, v, u) + 1 for u in G.predecessors(v) if nx.has_path(G, v, u)]
        cyc = finder.shortest_cycle(v)
        if not lengths:
            assert cyc is None
            continue
        assert len(cyc) - 1 == min(lengths)
        assert cyc[0] == cyc[-1] == v and all(G.has_edge(a, b) for a, b in zip(cyc, cyc[1:]))


def shortest_repetition_by_histories(g, start):
    """Breadth-first over whole game histories: the first one that repeats a position."""
    queue = deque([(start,)])
    while queue:
        path = queue.popleft()
        v = path[-1]
        for _, y, _ in g.moves(v >> 1):
            w = 2 * y + (1 - (v & 1))
            if w in path:
                return len(path)
            queue.append(path + (w,))
    return None


@pytest.mark.parametrize("opts", [unee.UneeOptions(holes_per_row=2, balls_per_hole=2),
                                  unee.UneeOptions(holes_per_row=2, balls_per_hole=3)])
def test_shortest_repetition_game_equals_history_search(opts):
    g = build_graph(opts)
    nodes, first = C.shortest_repetition_game(g)
    start = C.node_of(g, unee.start_position(opts))
    assert nodes[0] == start and nodes[first] == nodes[-1]
    assert len(set(nodes[:-1])) == len(nodes) - 1  # no earlier repetition
    assert len(nodes) - 1 == shortest_repetition_by_histories(g, start)


def test_capturing_loses_positions_replay_on_a_small_variant():
    opts = unee.UneeOptions(holes_per_row=2, balls_per_hole=3)
    g = build_graph(opts)
    for rule in ("uncounted", "draw"):
        table = unee.solve(rule, opts)
        found = np.flatnonzero(capture_losing_mask(table, g))
        for r in found:
            pos = g.position(int(r), "S")
            ok, why = replay_check(table, pos)
            assert ok, (rule, str(pos), why)
            assert explain_position(table, pos)["fits_caption"]


def test_capturing_loses_smallest_default_positions_replay():
    g = build_graph(unee.DEFAULT)
    for rule in ("uncounted", "draw"):
        table = unee.solve(rule)
        found = np.flatnonzero(capture_losing_mask(table, g))
        assert found.size > 0
        for r in found[:5]:
            ok, why = replay_check(table, g.position(int(r), "S"))
            assert ok, why
    table = unee.solve("split")
    found = np.flatnonzero(capture_losing_mask(table, g))
    for r in found[:5]:
        pos = g.position(int(r), "S")
        for m in table.analyze(pos):
            if m.captured:
                assert m.upper < 0
        assert table.probe_bounds(pos)[0] >= 0
        assert table.principal_variation(pos).end == "repetition"


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_check_eichler_cli():
    out = run("unee", "check-eichler", "0 1 4 / 3 1 0 S", "--json")
    data = json.loads(out.output)
    assert data["fits_caption"] and data["has_capture"] and data["best_play_repeats"]
    assert [m["verdict"] for m in data["moves"] if m["captured"]] == ["loses"]
    out = run("unee", "check-eichler", "6 6 6 / 6 6 6 S")
    assert out.exit_code == 0 and "fits 'Capturing loses!' under the uncounted rule: no" in out.output


def test_cycle_cli_pictures(tmp_path):
    for name in ("c.png", "c.svg", "c.graphml"):
        out = run("unee", "--holes", "2", "--balls", "3", "cycle", "3 3 / 3 3 S", "--out", str(tmp_path / name))
        assert out.exit_code == 0, out.output
        assert (tmp_path / name).stat().st_size > 0
    G = nx.read_graphml(tmp_path / "c.graphml")
    assert G.number_of_nodes() >= 2
    out = run("unee", "--holes", "2", "--balls", "3", "cycle", "3 3 / 3 3 S", "--radius", "2", "--json")
    assert json.loads(out.output)["nodes"] >= 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.graphml", "c.png", "c.svg"]


@pytest.mark.parametrize(
    "args,words",
    [
        (("unee", "check-eichler", "6 6 6 / 6 6 6 6 S"), "South's row has 4 holes"),
        (("unee", "cycle", "6 6 6 / 6 6 40 S"), "balls on the board"),
        (("unee", "cycle", "start", "--out", "/nonexistent/x.png"), "not a writable directory"),
        (("unee", "cycle", "start", "--out", "picture.jpg"), "expected a .png, .svg or .graphml"),
        (("verify", "--claim", "no-such-claim"), "unknown claim 'no-such-claim'"),
        (("verify", "--game", "chess"), "no claims about game 'chess'"),
        (("verify", "--plots", "/proc/forbidden/plots"), "plots directory"),
    ],
)
def test_bad_input_one_line(args, words):
    out = run(*args)
    assert out.exit_code == 2, out.output
    assert words in out.output and len(out.output.strip().splitlines()) == 1


def test_verify_json_for_the_cheap_claims():
    out = run("verify", "--claim", "ghosts-defender-wins-ties", "--claim", "ulus-camel-race-faster", "--json")
    data = json.loads(out.output)
    assert [c["name"] for c in data] == ["ghosts-defender-wins-ties", "ulus-camel-race-faster"]
    assert data[0]["verdict"] == "verified" and data[0]["figures"]["even_fight_attacker"] == "99/200"
