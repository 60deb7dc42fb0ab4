"""d100-zones: percentile combat with range zones (rule IDs D100Z-01..16).

Rules (text: rules/d100-zones-combat.txt):
- D100Z-01 Initiative each round: 1d100 + SPD, highest first; a natural 90+ acts last.
- D100Z-02 Zones by distance: Engaged 0-2 m, Close 3-15 m, Far 16-50 m, Distant 51 m+.
- D100Z-03 Moving one zone (up to 15 m) and attacking is free; moving more costs the action.
- D100Z-04 Attack: d100 vs Melee / Ranged / Brawling; <= 10 critical (auto-hit,
  double damage, no dodge); 90+ automatic miss with a complication; else <= skill hits.
- D100Z-05 Dodge <= DEX; failing (or 90+) lets the attack land.
- D100Z-06 Damage: weapon dice + bonuses - DR. D100Z-07 Brawling bonus to unarmed damage.
- Options (D100Z-16 switches them per encounter): D100Z-08 STR damage bonus,
  D100Z-09 cover, D100Z-10 flanking, D100Z-11 multi-attack, D100Z-12 aimed shot,
  D100Z-13 suppressive fire.
- D100Z-14 First aid: <= INT, once per combat per target, heals 1d10 + floor((skill - 50) / 10);
  a critical (<= 10) stabilises an unconscious ally.
- D100Z-15 Leaving Engaged range: every engaged enemy gets a free attack (a reaction
  window, in initiative order); the mover dodges at -20.

**House defaults** (each configurable per encounter via ``EncounterSetup.settings``;
the keys are in ``HOUSE_DEFAULTS``):
- ``square_metres`` 2: a square is 2 m, so Engaged is the eight neighbouring squares
  (a terrain measured in metres sets it from its ``square_size``). Distances are
  Chebyshev (diagonals count as one square).
- ``options``: all six optional rules on; ``{"options": {"cover": false}}`` switches one
  off, and its command (or modifier) is then refused or left out, naming the setting.
- Dodge is automatic: every plain hit is dodged by the defender at once (there is no
  cost and so no choice to make); the dodge roll is the ``defense`` of the
  `AttackResolved` event. Not configurable.
- ``cover_applies_to`` "attack": soft -10 / hard -20 on the attack roll's target
  ("dodge": +10 / +20 to the defender's dodge instead); heavy cover cannot be targeted.
  Cover counts when a feature on the target's square, or on a neighbouring square the
  line of fire crosses, faces the attacker.
- ``flanking_min_angle`` 135: allies flank when the angle between them seen from the
  enemy is at least 135 degrees.
- Multi-attack: the second attack is at -10 with a different one-handed weapon after a
  one-handed first (two weapons), else -20; fists count as one weapon.
- Aimed Shot: the bonus applies to the next ranged attack if it is against the aimed
  target; the next attack spends the aim whatever its target; moving spends it too.
- Suppressive fire: the zone is a distance band around the shooter; everyone standing in
  it rolls DEX (allies and those behind heavy cover too, as the text reads), within the
  weapon's range and the shooter's sight; the DEX roll fails on 90+ like a dodge; base
  damage is the weapon's dice code less DR; the "suppressed" restriction lasts until the
  end of the target's next turn. House rules: ``suppressive_fire_hits_allies`` false
  spares the shooter's allies, ``heavy_cover_shields_from_suppressive_fire`` true spares
  those behind heavy cover.
- ``unarmed_damage`` "1d4" for fists. Brawling below 50 adds +0.
- First aid uses INT for the roll and the Medicine skill in the heal formula; the patient
  must be Engaged (or the healer itself); a healed unconscious ally above 0 HP comes to.
- At 0 HP a combatant is unconscious and dying: it loses ``dying_hp_loss_per_round`` (1)
  HP each round until stabilised, and is dead at ``death_at_hp`` (-10).
- Initiative ties: higher SPD, then ID.

Layout, in floors (no module imports one above it; tests/systems/d100_zones/test_layout.py):
``state``, ``rules`` and ``data`` at the bottom; ``actions``, ``reactions``
(the free attacks) and ``ai`` above them; ``system`` on top.
"""

from firelane.engine.systems.d100_zones.data import demo_setup, load_data, sheet
from firelane.engine.systems.d100_zones.system import DEFAULT_OPTIONS, HOUSE_DEFAULTS, SYSTEM, D100ZonesSystem
from firelane.events.codec import register_events

# Decodable as soon as the system is imported, with or without the registry.
register_events(SYSTEM.event_types)

__all__ = ["DEFAULT_OPTIONS", "HOUSE_DEFAULTS", "SYSTEM", "D100ZonesSystem", "demo_setup", "load_data", "sheet"]
