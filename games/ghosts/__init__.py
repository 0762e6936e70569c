"""Ghosts of Ur: exact odds for the parts its rules fully determine (docs/rules.md section 4).

combat: d100 combat, equipment, Kish tiles, Ambush, Nanna, AVA defence; movement: Ur dice,
extra turns, journey lengths.  ``solver ghosts ...`` is the command line over these.
"""
from gamesolver.games.ghosts.combat import ambush, clear_tile, combat_table, defend_table, equipment_plan, nanna, win_probability
from gamesolver.games.ghosts.movement import race, race_mean, turn_squares, turn_squares_pmf, ur_roll_distribution

__all__ = ["ambush", "clear_tile", "combat_table", "defend_table", "equipment_plan", "nanna", "race", "race_mean",
           "turn_squares", "turn_squares_pmf", "ur_roll_distribution", "win_probability"]
