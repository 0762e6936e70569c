# cython: language_level=3
"""The fort rules' generator (``_fort.pyx``, included whole) compiled for x86-64 CPUs with POPCNT:
setup.py builds this module with -mpopcnt, so a bit count is one instruction inline (no call, no
test of the CPU) while tile sets are squeezed by loops, not PEXT. ``games.ur.generator`` takes it
where the CPU has POPCNT but runs PEXT slowly or not at all (AMD before Zen 3, Hygon, Intel before
Haswell); elsewhere importing it could stop the process on an illegal instruction."""
include "_fort.pyx"
