"""The numbers of Ghosts of Ur the solvers use, read once from ``data/ghosts_rules.json``.

docs/rules.md section 4 fixes them; Anglean's reroll reading is a named option here.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from gamesolver import data
from gamesolver.solver.errors import InputError

REROLL_READINGS = ("die", "roll")


@dataclass(frozen=True)
class GhostsRules:
    sides: int
    defender_modifiers: dict[str, int]
    emmer_bonus: int
    ur_dice: int
    ur_marked: int
    ur_tips: int
    extra_turn_roll: int
    nanna_attempts: int
    ambush_dice: int
    ambush_every: int


@lru_cache(maxsize=1)
def rules() -> GhostsRules:
    raw = data.load_json("ghosts_rules.json")
    ur = raw["ur_dice"]
    return GhostsRules(
        sides=int(raw["combat_die_sides"]),
        defender_modifiers={k: int(v) for k, v in raw["defender_modifiers"].items()},
        emmer_bonus=int(raw["emmer_field_bonus"]),
        ur_dice=int(ur["dice"]),
        ur_marked=int(ur["marked_tips"]),
        ur_tips=int(ur["tips"]),
        extra_turn_roll=int(ur["extra_turn_roll"]),
        nanna_attempts=int(raw["nanna_attempts"]),
        ambush_dice=int(raw["ambush_dice"]),
        ambush_every=int(raw["ambush_variant_every_consecutive_two"]),
    )


def defender_modifier(defender: str, emmer: bool = False) -> int:
    """The defender's total modifier: its kind's modifier plus the Emmer Field bonus."""
    mods = rules().defender_modifiers
    if defender not in mods:
        raise InputError(f"unknown defender {defender!r}; expected one of {', '.join(mods)}")
    return mods[defender] + (rules().emmer_bonus if emmer else 0)
