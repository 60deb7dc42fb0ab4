"""Sample weapons, armour, combatant templates and the demo encounter of d100-degrees
(the demo: two squads of four in a hab-block, 1 m squares)."""

from __future__ import annotations

from firelane.engine.systems.percentile.data import SampleData

SAMPLE = SampleData("d100-degrees", "firelane.engine.systems.d100_degrees", armour_field="armour")
load_data = SAMPLE.load_data
weapon_profile = SAMPLE.weapon_profile
sheet = SAMPLE.sheet
demo_setup = SAMPLE.demo_setup
