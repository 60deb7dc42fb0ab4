"""Sample weapons, armour, combatant templates and the demo encounter of d100-zones
(the demo: two squads of four around a relay station, 2 m squares)."""

from __future__ import annotations

from firelane.engine.systems.percentile.data import SampleData

SAMPLE = SampleData("d100-zones", "firelane.engine.systems.d100_zones", armour_field="dr")
load_data = SAMPLE.load_data
weapon_profile = SAMPLE.weapon_profile
sheet = SAMPLE.sheet
demo_setup = SAMPLE.demo_setup
