"""Types of ``_fort_popcnt``: ``_fort.pyx`` compiled for CPUs with POPCNT."""
from gamesolver.games.ur._fort import (FortGame as FortGame, build_name as build_name, cpu_has as cpu_has,
                                       fast_bmi2 as fast_bmi2, uses_bmi2 as uses_bmi2)
