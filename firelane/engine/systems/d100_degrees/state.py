"""Typed state of the d100-degrees system: characteristics, weapons, wounds, jams."""

from __future__ import annotations

import msgspec

from firelane.engine.state import Combatant, EncounterState


class Weapon(msgspec.Struct, kw_only=True):
    """A weapon profile. ``damage`` is a dice code ("1d10+3"); ``multiplier`` is
    the damage added per extra degree of success (D100D-03); ``range_m`` is the
    reach of a melee weapon or the range of a ranged one; ``rof`` the highest
    rate of fire; ``automatic`` whether it fires on automatic (D100D-07)."""

    name: str
    kind: str  # "melee" or "ranged"
    damage: str
    multiplier: int = 1
    range_m: float = 1.0
    rof: int = 1
    automatic: bool = False


class D100DCombatant(Combatant):
    weapon_skill: int
    ballistic_skill: int
    agility: int
    willpower: int = 30
    wounds: int = 10
    max_wounds: int = 0  # 0 in a sheet means "same as wounds"
    armour: int = 0
    armour_name: str = ""
    weapons: list[Weapon] = []
    # turn bookkeeping, rebuilt from events
    half_actions_used: int = 0
    jammed: list[str] = []

    def weapon(self, name: str | None, kind: str | None = None) -> Weapon | None:
        """The named weapon, or (name None) the first weapon of ``kind``."""
        for weapon in self.weapons:
            if (name is None or weapon.name == name) and (kind is None or weapon.kind == kind):
                return weapon
        return None


class D100DState(EncounterState):
    combatants: dict[str, D100DCombatant] = {}  # type: ignore[assignment]
