# cython: language_level=3
"""The fort rules' generator (``_fort.pyx``, included whole) compiled for x86-64 CPUs with POPCNT
and BMI2: setup.py builds this module with -mpopcnt -mbmi2, so a bit count is one instruction
inline and ``squeeze`` one PEXT. ``games.ur.generator`` takes it by default only where ``_fort.fast_bmi2()``
says the CPU runs it well; elsewhere importing it could stop the process on an illegal
instruction."""
include "_fort.pyx"
