"""Typed state of the d100-zones system: attributes, skills, weapons, hit points, turn bookkeeping."""

from __future__ import annotations

from typing import Any

import msgspec

from firelane.engine.state import Combatant, EncounterState

MELEE, RANGED, UNARMED = "melee", "ranged", "unarmed"
SKILL_FOR_KIND = {MELEE: "melee", RANGED: "ranged", UNARMED: "brawling"}


class ZWeapon(msgspec.Struct, kw_only=True):
    """A weapon: ``kind`` melee, ranged or unarmed (rolled with Brawling);
    ``damage`` a dice code; ``range_m`` the range of a ranged weapon; ``hands``
    1 or 2 (two one-handed weapons allow the -10 second attack, D100Z-11)."""

    name: str
    kind: str
    damage: str
    range_m: float = 2.0
    hands: int = 1


class D100ZCombatant(Combatant):
    strength: int = 50
    dexterity: int = 50
    intelligence: int = 50
    speed: int = 0
    melee: int = 40
    ranged: int = 40
    brawling: int = 40
    medicine: int = 40
    hp: int = 12
    max_hp: int = 0  # 0 in a sheet means "same as hp"
    dr: int = 0
    armour_name: str = ""
    weapons: list[ZWeapon] = []
    # per-turn bookkeeping, rebuilt from events
    action_used: bool = False
    action_spent_on: str = ""
    moved_m: float = 0.0
    attacks: list[str] = []  # weapons used for attacks this turn
    aimed_this_turn: bool = False
    # longer-lived effects
    aim_target: str | None = None
    first_aid_received: bool = False
    suppressed: dict[str, Any] = {}  # {"by", "origin": [x, y], "zone"} while the condition lasts

    def weapon(self, name: str) -> ZWeapon | None:
        for weapon in self.weapons:
            if weapon.name == name:
                return weapon
        return None

    def skill_for(self, weapon: ZWeapon) -> int:
        return int(getattr(self, SKILL_FOR_KIND[weapon.kind]))


class D100ZState(EncounterState):
    combatants: dict[str, D100ZCombatant] = {}  # type: ignore[assignment]
    # D100Z-04: every 90+ attack roll ("something goes wrong: your GM decides"),
    # in the order rolled: {"id", "attacker", "target", "weapon", "face", "round"};
    # those without a GMRuled of that id are the GM's pending calls.
    complications: list[dict[str, Any]] = []
