"""Dice games with endless play: the move-generator interface and the sweeps (``_engine.pxd``,
``_engine.pyx``), a game's one call (``solve``: solve, prove where it fits, write the table), the
stored outcome graph (``outcomes``), the solve with its endless check and repairs
(``iteration``), the walk's rounds (``walk``), checkpoints (``checkpoint``), the discount
schedules (``schedule``), memory, disk and time planning (``planning``), and certified bounds
(``bounds``, ``krylov``). Imports ``tables``, ``errors``, ``progress`` and ``limits``; never a
backend or a game."""
