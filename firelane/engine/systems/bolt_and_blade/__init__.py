"""Bolt & Blade: a d20 rule system with directional cover, fire lanes and reactions.

Rule texts: ``bolt-and-blade-core.txt`` and ``bolt-and-blade-combat.txt``;
inventory IDs BB-CORE-01..17 and BB-CMB-01..30 (BB-CMB-24..28, area effects,
live in `areas`). The full rules-to-code map is ``docs/systems/bolt-and-blade.md``.

**Floors.** Each module imports only modules on floors below its own
(tests/systems/bolt_and_blade/test_package_floors.py checks it):

0. `rules` (pure math), `zones` (zone records, what smoke blocks), `data` (the catalogue),
   `sight` (the terrain's cached Grid, and fast exact sight, cover and steps for the AI);
1. `constants` (condition names, house defaults), `state` (typed state, sheets);
2. `combat` (sight, cover, Defense, checks, attacks and their exact odds, damage, the action economy);
3. `paths` (move costs, the path a move takes, legality, who may react to a move, ending a move), `areas`;
4. `reactions` (each reaction, declared attacks, what a hit sets off, the GM's dive call);
5. `movement` (starting and walking a move, who could react on the way);
6. `actions` (everything else done on a turn, and each action's check);
7. `options` (what a combatant may do now, each with its command);
8. `ai` (the policy, picking from the options);
9. `system` (the `BaseRuleSystem` class wiring the hooks to the floors below).

**House defaults** — where a setting changes one, its key is in brackets
(``EncounterSetup.settings``):

- Attribute modifier = floor((score - 10) / 2), scores may exceed 18 (BB-CORE-02).
- Proficiency +2 at levels 1-4, +3 at 5-8, +4 at 9-12, +5 at 13-16, +6 at 17-20
  [``proficiency_table``] (BB-CORE-03).
- Defense = 10 [``defense_base``] + armour + Agility modifier + cover + the
  sheet's other named sources (BB-CORE-08).
- Opposed check ties: the defender, the side not acting, holds [``opposed_tie``]
  (BB-CORE-10).
- Initiative: d20 + Agility modifier, rolled once at the start; ties go to the
  higher Agility modifier, then the combatant ID (BB-CMB-01).
- Cover: light +2, heavy +5 [``cover_bonus``], total cannot be targeted; cover
  counts against ranged attacks only [``cover_against_melee``] (BB-CMB-04).
- Exposed: +2 to ranged attacks [``exposed_attack_bonus``] (BB-CMB-05); being
  Exposed is derived at each attack: no cover at all against that attacker.
- Movement 30 ft on 5-ft squares, diagonals cost one square [``movement_ft``]
  (BB-CMB-06); Pinned movement into open ground costs double
  [``pinned_move_multiplier``] (BB-CMB-19); entering an adjacent cover square
  costs 5 ft [``enter_cover_cost_ft``] (BB-CMB-29).
- Reactive Fire is offered once per enemy per move, at the first square of its
  fire lane; it names the square of the path it fires at (BB-CMB-10).
- Reactive Fire that damages a mover asks it to continue or stop (BB-CMB-12);
  a pass or the window's deadline keeps the choice its move declared, by
  default "continue" [``reactive_fire_choice``]; stopping pins it until the
  start of the attacker's next turn [``reactive_fire_pin``].
- Overwatch watches the squares within 10 ft of a chosen visible point
  [``overwatch_radius_ft``] (BB-CMB-13).
- Suppress covers squares fitting in a 10-ft box [``suppress_area_ft``] and
  spends 3 rounds [``suppress_ammo``] (BB-CMB-18, BB-CMB-20).
- Aim +2 [``aim_bonus``]; the GM option allowing Aim after minor movement in
  cover is off [``aim_after_minor_move_in_cover``] (BB-CMB-21).
- Dangerous weapons on a natural 1: jam (cannot fire until Reloaded), overheat
  (1d6 to the wielder [``overheat_damage``], weapon locked until the start of
  its next turn), perils (Willpower DC 12 [``perils_dc``] or 1d6
  [``perils_damage``]) (BB-CORE-14).
- Mark features give the marker +2 to hit the bearer [``mark_attack_bonus``] (BB-CMB-23).
- Search DC 12 [``search_dc``] (BB-CORE-17).

The area module's own defaults (``bb_*`` keys) are merged in; see
``docs/systems/bolt-and-blade-areas.md``.
"""

from __future__ import annotations

from firelane.engine.systems.bolt_and_blade.data import demo_setup, load_data, sheet_from_template
from firelane.engine.systems.bolt_and_blade.state import BoltAndBladeCombatant, BoltAndBladeState, Weapon
from firelane.engine.systems.bolt_and_blade.system import BoltAndBladeSystem
from firelane.events.codec import register_events

SYSTEM = BoltAndBladeSystem()
# Decisions pass every event through the codec, so the system's own event
# types must be decodable even when the module is used without the registry.
register_events(SYSTEM.event_types)

__all__ = [
    "SYSTEM",
    "BoltAndBladeCombatant",
    "BoltAndBladeState",
    "BoltAndBladeSystem",
    "Weapon",
    "demo_setup",
    "load_data",
    "sheet_from_template",
]
