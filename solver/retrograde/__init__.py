"""Deterministic alternating games with cycles, over a successor CSR of mover-relative states:
strongly connected components and cycles (``_graph``), retrograde values and remoteness by tiers
(``_retro``), certified bounds when a repetition is scored by the position (``_split``), and
play-outs (``_play``). Knows no game; imports nothing else of the engine."""
