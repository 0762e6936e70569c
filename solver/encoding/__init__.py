"""Packed states: ranks of ball distributions (``_boards``, the combinatorial number system in
``_comb.pxd``). Imports nothing else of the engine."""
