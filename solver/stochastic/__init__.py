"""Dice games with endless play: the move-generator interface and the sweeps (``_engine.pxd``,
``_engine.pyx``), the stored outcome graph (``outcomes``), value iteration and the walk with its
endless check (``iteration``), certified bounds (``bounds``, ``krylov``), and time projections
(``projection``). Imports ``tables``, ``errors``, ``progress`` and ``limits``; never a backend or
a game."""
