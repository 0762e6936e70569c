"""Uluk: exact answers for the parts of the rules that are arithmetic (docs/rules.md section 5).

process: what each processing arrow gives; feed: the best Feeding phase plan.  Tribe boards
and feast cards are data files (the printed ones were lost; the shipped ones are examples).
"""
from gamesolver.games.uluk.feed import FeedOptions, Plan, parse_have, solve_feed
from gamesolver.games.uluk.process import best_split, process_batch, process_table
from gamesolver.games.uluk.rules import load_board, load_feast

__all__ = ["FeedOptions", "Plan", "best_split", "load_board", "load_feast", "parse_have", "process_batch",
           "process_table", "solve_feed"]
