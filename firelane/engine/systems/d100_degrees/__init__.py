"""d100-degrees: percentile combat with degrees of success (rule IDs D100D-01..10).

Rules (text: rules/d100-degrees-combat.txt):
- D100D-01 Tests: d100 <= characteristic + difficulty (Challenging +0, Difficult
  -10, Hard -20) + modifiers. Degrees of success are in ``Roll.details`` with
  the formula used.
- D100D-02 A turn is one Full Action or two Half Actions (`ActionTaken` slot
  "half"/"full").
- D100D-03 Damage: weapon damage + Multiplier per degree of success beyond the first.
- D100D-04 Trade two degrees for one more target in a declared chain (melee: up
  to the Agility Bonus; ranged: up to the selected RoF); each link within 2 m of
  the previous; empty squares may be walked through.
- D100D-05 All Out Attack (Full, WS +5 x AB, no Evasion until the next turn).
- D100D-06 Basic Attack (Half, WS +0). D100D-07 Controlled Fire (Half, BS +0,
  +5 x RoF on automatic). D100D-08 Jam on a BS roll >= 100 - RoF.
- D100D-09 Suppressing Fire (Full, 30 degree arc, BS -20 (+5 x RoF automatic),
  one random target per degree up to RoF, leftover degrees add damage, Pinning
  tests at -10 / -20).
- D100D-10 Evasion reactions (dodge, parry) through reaction windows.

**House defaults** (each configurable per encounter via ``EncounterSetup.settings``;
the keys are in ``HOUSE_DEFAULTS``):
- ``degrees_formula`` "tens_digits": degrees of success = 1 + tens digit of the
  target - tens digit of the roll ("per_full_10": 1 + floor((target - roll) / 10)).
- Agility Bonus = the tens digit of Agility (not configurable: it is a definition).
- ``square_metres`` 1: a grid square is 1 m (a terrain in metres sets it from
  its ``square_size``); ``chain_step_metres`` 2 is the text's 2 m.
- Evasion: one reaction per round; a Challenging test (dodge: Agility, parry:
  Weapon Skill, parry only against melee with a melee weapon); success cancels
  every hit of that attack on the evader.
- ``clear_jam_action`` "full": clearing a jam is a Full Action, no test;
  ``jam_misses`` true: a shot that jams misses.
- Pinned (from Suppressing Fire): ``pinned_attack_penalty`` -20 on attack tests,
  ``pinned_blocks_full_actions`` true; it ends at the end of the pinned
  combatant's next turn. The Pinning test uses Willpower.
- ``suppressing_fire_hits_allies`` false: only the shooter's enemies are in the killzone.
- Leftover degrees (after extra targets or Suppressing Fire hits) add the
  Multiplier to every hit's damage.
- ``armour_reduces_damage`` true: armour points are subtracted from each hit.
- Movement (not in the text): a Move is a Half Action of Agility Bonus x
  ``half_move_metres_per_agility_bonus`` (1) metres, at least
  ``minimum_half_move_metres`` (1).
- Initiative (not in the text): 1d``initiative_die`` (10) + Agility Bonus, rolled
  once; ties: higher Agility, then ID.
- At 0 wounds a combatant is out of the fight.

Layout, in floors (no module imports one above it; tests/systems/d100_degrees/test_layout.py):
``state``, ``rules`` (the arithmetic and the shared names) and ``data`` at the
bottom; ``actions`` (which also opens the Evasion window after a hit),
``reactions`` and ``ai`` above them; ``system`` (the `BaseRuleSystem` hooks
and the command dispatch) on top.
"""

from firelane.engine.systems.d100_degrees.data import demo_setup, load_data, sheet
from firelane.engine.systems.d100_degrees.system import HOUSE_DEFAULTS, SYSTEM, D100DegreesSystem
from firelane.events.codec import register_events

# Decodable as soon as the system is imported, with or without the registry.
register_events(SYSTEM.event_types)

__all__ = ["HOUSE_DEFAULTS", "SYSTEM", "D100DegreesSystem", "demo_setup", "load_data", "sheet"]
