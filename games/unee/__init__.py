"""Ünee Tugalluulax: the Mongolian 2 x 3 mancala. Rules, notation, state graph, solutions.

    from gamesolver.games import unee
    pos = unee.parse("6 6 6 / 6 6 6 S")
    g = unee.build_graph()
    t = unee.solve("uncounted")          # solved once, then read from the cache
    t.best_move(pos), t.probe_value(pos)
"""
from gamesolver.games.unee.graph import StateGraph, build_graph, graph_summary, rank_position
from gamesolver.games.unee.notation import Position, diagram, format_position, move_name, parse_move, start_position
from gamesolver.games.unee.notation import parse_position as parse
from gamesolver.games.unee.rules import DEFAULT, REPETITION_RULES, UneeOptions, sow_relative
from gamesolver.games.unee.solution import Line, MoveInfo, UneeTable, build_table, open_table, solve

__all__ = [
    "DEFAULT",
    "Line",
    "MoveInfo",
    "UneeTable",
    "build_table",
    "open_table",
    "solve",
    "REPETITION_RULES",
    "Position",
    "StateGraph",
    "UneeOptions",
    "build_graph",
    "diagram",
    "format_position",
    "graph_summary",
    "move_name",
    "parse",
    "parse_move",
    "rank_position",
    "sow_relative",
    "start_position",
]
