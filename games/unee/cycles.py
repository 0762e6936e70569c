"""Cycles of the Ünee game graph: components, shortest and optimal cycles, pictures.

Works on the absolute graph (board and side to move): node ``2 * rank + side`` with side 0 for
South and 1 for North. A repetition, which ends the game, is a return to a node.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gamesolver.games.unee.graph import SIDE_INDEX, StateGraph, build_graph
from gamesolver.games.unee.notation import Position, move_name, start_position
from gamesolver.games.unee.rules import UneeOptions
from gamesolver.solver.retrograde import _graph
from gamesolver.solver.errors import InputError
from gamesolver.solver.tables.atomic import atomic_path

SIDES = ("S", "N")


def node_of(graph: StateGraph, pos: Position) -> int:
    return 2 * graph.rank(pos) + SIDE_INDEX[pos.side]


def position_of(graph: StateGraph, node: int) -> Position:
    return graph.position(int(node) >> 1, SIDES[int(node) & 1])


@functools.lru_cache(maxsize=2)
def components(options: UneeOptions) -> np.ndarray:
    """Strongly connected component id of every absolute node (cached per variant)."""
    g = build_graph(options)
    return _graph.scc_alternating(g.indptr, g.succ)


def on_cycle(options: UneeOptions) -> np.ndarray:
    """Boolean per absolute node: it lies on a cycle (its component has more than one node)."""
    comp = components(options)
    sizes = np.bincount(comp)
    return sizes[comp] > 1


def cycle_summary(graph: StateGraph) -> dict[str, Any]:
    """Per number of balls: components with a cycle, their sizes, positions on a cycle; whole
    space and the part reachable from the start."""
    comp = components(graph.options)
    sizes = np.bincount(comp)
    cyclic = sizes[comp] > 1
    reach = graph.reachable()
    reach_nodes = np.empty(2 * graph.n_states, dtype=bool)
    reach_nodes[0::2] = (reach & 1).astype(bool)
    reach_nodes[1::2] = ((reach >> 1) & 1).astype(bool)
    layers = []
    for s in range(graph.max_balls + 1):
        lo, hi = 2 * int(graph.offsets[s]), 2 * int(graph.offsets[s + 1])
        row: dict[str, Any] = {"balls": s}
        for label, mask in (("all", np.ones(hi - lo, dtype=bool)), ("reachable", reach_nodes[lo:hi])):
            c = comp[lo:hi][cyclic[lo:hi] & mask]
            ids, counts = np.unique(c, return_counts=True)
            row[label] = {
                "positions": int(mask.sum()),
                "components": int(ids.size),
                "on_cycle": int(counts.sum()),
                "largest": int(sizes[ids].max()) if ids.size else 0,
            }
        layers.append(row)
    total = {
        label: {
            "positions": sum(r[label]["positions"] for r in layers),
            "components": sum(r[label]["components"] for r in layers),
            "on_cycle": sum(r[label]["on_cycle"] for r in layers),
            "largest": max(r[label]["largest"] for r in layers),
        }
        for label in ("all", "reachable")
    }
    return {"game": "unee", "options": graph.options.as_dict(), "total": total, "layers": layers}


@dataclass
class Cycle:
    """A closed walk of positions: ``positions[0] == positions[-1]``, with the moves between."""

    positions: list[Position]
    moves: list[str]
    captures: list[int]

    @property
    def length(self) -> int:
        return len(self.moves)

    def as_dict(self) -> dict[str, Any]:
        return {"length": self.length, "positions": [str(p) for p in self.positions], "moves": self.moves}


def _walk(graph: StateGraph, nodes: list[int]) -> Cycle:
    positions = [position_of(graph, v) for v in nodes]
    moves, caps = [], []
    for a, b in zip(nodes, nodes[1:]):
        x, side = a >> 1, SIDES[a & 1]
        for hole, y, cap in graph.moves(x):
            if y == b >> 1:
                moves.append(move_name(side, hole, graph.options.holes_per_row))
                caps.append(cap)
                break
    return Cycle(positions, moves, caps)


def shortest_cycle(graph: StateGraph, pos: Position, limit: int = 1 << 30) -> Cycle | None:
    """The shortest sequence of moves that brings ``pos`` back (None: it cannot recur)."""
    finder = _graph.CycleFinder(graph.indptr, graph.succ)
    nodes = finder.shortest_cycle(node_of(graph, pos), limit)
    return None if nodes is None else _walk(graph, nodes)


def optimal_cycle(table: Any, pos: Position) -> tuple[Cycle, Cycle | None]:
    """Best play from ``pos`` by the table: the lead-in (an open walk from ``pos`` to the cycle)
    and the cycle it repeats (None if the game ends without repetition)."""
    line = table.principal_variation(pos)
    positions = [pos] + [p for _, p in line.plies]
    moves = [m.move for m, _ in line.plies]
    caps = [m.captured for m, _ in line.plies]
    if line.end != "repetition":
        return Cycle(positions, moves, caps), None
    first = positions.index(positions[-1])
    lead = Cycle(positions[: first + 1], moves[:first], caps[:first])
    return lead, Cycle(positions[first:], moves[first:], caps[first:])


def shortest_repetition_game(graph: StateGraph) -> tuple[list[int], int] | None:
    """The shortest game from the start that ends by a repetition: (absolute nodes, index of the
    first occurrence of the repeated node). Shortest path to some node plus the shortest cycle
    through it, minimised over the nodes on cycles in order of their distance from the start."""
    start = node_of(graph, start_position(graph.options))
    dist, parent = _graph.bfs_alternating(graph.indptr, graph.succ, start)
    cyclic = on_cycle(graph.options)
    cand = np.flatnonzero((dist >= 0) & cyclic)
    if cand.size == 0:
        return None
    cand = cand[np.argsort(dist[cand], kind="stable")]
    finder = _graph.CycleFinder(graph.indptr, graph.succ)
    best: tuple[int, int, list[int]] | None = None
    for v in cand:
        d = int(dist[v])
        if best is not None and d + 2 >= best[0]:
            break
        limit = (best[0] - d - 1) if best is not None else 1 << 30
        cyc = finder.shortest_cycle(int(v), limit)
        if cyc is not None and (best is None or d + len(cyc) - 1 < best[0]):
            best = (d + len(cyc) - 1, int(v), cyc)
    assert best is not None
    _, entry, cyc = best
    path = [entry]
    while path[-1] != start:
        path.append(int(parent[path[-1]]))
    path.reverse()
    return path + cyc[1:], len(path) - 1


def neighbourhood(graph: StateGraph, pos: Position, radius: int = 3) -> "Any":
    """The positions of ``pos``'s component within ``radius`` moves, as a networkx DiGraph with
    positions as node labels and moves (with captures) as edge labels."""
    import networkx as nx

    if radius < 0:
        raise InputError(f"radius must be 0 or more, got {radius}")
    comp = components(graph.options)
    root = node_of(graph, pos)
    keep = {root: 0}
    frontier = [root]
    for depth in range(1, radius + 1):
        nxt = []
        for v in frontier:
            for _, y, _ in graph.moves(v >> 1):
                w = 2 * y + (1 - (v & 1))
                if comp[w] == comp[root] and w not in keep:
                    keep[w] = depth
                    nxt.append(w)
        frontier = nxt
    G = nx.DiGraph()
    for v, depth in keep.items():
        p = position_of(graph, v)
        G.add_node(str(p), side=p.side, balls=p.balls, depth=depth, root=v == root)
    for v in keep:
        for hole, y, cap in graph.moves(v >> 1):
            w = 2 * y + (1 - (v & 1))
            if w in keep:
                label = move_name(SIDES[v & 1], hole, graph.options.holes_per_row) + (f" x{cap}" if cap else "")
                G.add_edge(str(position_of(graph, v)), str(position_of(graph, w)), move=label, captured=cap)
    return G


def cycle_graph(cycle: Cycle, lead_in: Cycle | None = None, lead_shown: int = 3) -> "Any":
    """A DiGraph of a cycle and the last ``lead_shown`` moves of an optional lead-in walk."""
    import networkx as nx

    G = nx.DiGraph()
    for i, p in enumerate(cycle.positions[:-1]):
        G.add_node(str(p), side=p.side, balls=p.balls, on_cycle=True, step=i)
    for a, b, m, c in zip(cycle.positions, cycle.positions[1:], cycle.moves, cycle.captures):
        G.add_edge(str(a), str(b), move=m + (f" x{c}" if c else ""), captured=c)
    if lead_in and lead_in.moves:
        k = min(lead_shown, lead_in.length)
        walk = lead_in.positions[-k - 1 :]
        for i, (a, b, m, c) in enumerate(zip(walk, walk[1:], lead_in.moves[-k:], lead_in.captures[-k:])):
            if str(a) not in G:
                G.add_node(str(a), side=a.side, balls=a.balls, on_cycle=False, first=i == 0 and k < lead_in.length)
            G.add_edge(str(a), str(b), move=m + (f" x{c}" if c else ""), captured=c)
    return G


GRAPH_SUFFIXES = (".png", ".svg", ".graphml")  # what save_graph can write


def save_graph(G: Any, path: str | Path, title: str = "") -> Path:
    """Write a DiGraph as GraphML (.graphml) or a picture (.png, .svg); tmp file then rename."""
    import networkx as nx


    out = Path(path)
    suffix = out.suffix.lower()
    if suffix not in GRAPH_SUFFIXES:
        raise InputError(f"cannot write {out.name}: expected a .png, .svg or .graphml file name")
    with atomic_path(out) as tmp:
        if suffix == ".graphml":
            nx.write_graphml(G, tmp)
        else:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            n = G.number_of_nodes()
            pos = _layout(G)
            size = max(7.0, min(18.0, 0.6 * n + 4))
            fig, ax = plt.subplots(figsize=(size, size))
            colors = ["#f4a259" if d.get("root") or d.get("step") == 0 else
                      ("#8cb369" if d.get("side") == "S" else "#5b8e7d") for _, d in G.nodes(data=True)]
            nx.draw_networkx_nodes(G, pos, ax=ax, node_color=colors, node_size=900)
            nx.draw_networkx_labels(G, pos, ax=ax, font_size=7, labels={
                v: ("... " if d.get("first") else "") + v.replace(" / ", "\n") for v, d in G.nodes(data=True)})
            nx.draw_networkx_edges(G, pos, ax=ax, arrows=True, arrowsize=14, node_size=900,
                                   connectionstyle="arc3,rad=0.08")
            nx.draw_networkx_edge_labels(G, pos, ax=ax, edge_labels=nx.get_edge_attributes(G, "move"), font_size=7)
            ax.set_title(title, fontsize=10)
            ax.axis("off")
            fig.tight_layout()
            fig.savefig(tmp, format=suffix[1:], dpi=110)
            plt.close(fig)
    return out


def _layout(G: Any) -> dict[str, Any]:
    """Cycle nodes on a circle, a lead-in on a line running into it, neighbourhoods in shells."""
    import networkx as nx

    data = dict(G.nodes(data=True))
    if any("depth" in d for d in data.values()):
        shells: dict[int, list[str]] = {}
        for v, d in data.items():
            shells.setdefault(int(d.get("depth", 0)), []).append(v)
        return nx.shell_layout(G, [shells[k] for k in sorted(shells)])
    ring = sorted((v for v, d in data.items() if d.get("on_cycle")), key=lambda v: data[v].get("step", 0))
    pos = nx.circular_layout(ring) if ring else {}
    lead = [v for v, d in data.items() if not d.get("on_cycle")]
    if lead and ring:
        # the lead-in is a path; walk it backwards from the node that enters the ring
        entry = next(v for v in ring if any(u in lead for u in G.predecessors(v)))
        ex, ey = pos[entry]
        step, v = 1, entry
        while True:
            prev = [u for u in G.predecessors(v) if u in lead and u not in pos]
            if not prev:
                break
            v = prev[0]
            pos[v] = np.array([ex * (1 + 0.35 * step), ey * (1 + 0.35 * step)])
            step += 1
    return pos
