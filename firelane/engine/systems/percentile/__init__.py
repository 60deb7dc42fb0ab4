"""Helpers shared by the two percentile (d100) rule systems, d100-degrees and d100-zones.

- `rolls`: a d100 test rolled under a target made of named modifiers, tens digits.
- `damage`: weapon damage codes such as ``"1d10+3"`` and rolling them.
- `paths`: square-grid paths for movement and the AI (occupied squares, walls).
- `positions`: a combatant's square, distances in metres, who area fire can catch.
- `setup`: encounter-start checks: grid scale, combatants' squares, whole sheets (`SheetCheck`).

Pure code: no I/O, no trio, no logging (DESIGN.md layering).
"""

from firelane.engine.systems.percentile.damage import DamageCode, never_below_zero, parse_damage, roll_damage
from firelane.engine.systems.percentile.paths import body_squares, declared_path, occupied_squares, path_error, shortest_path, step_path
from firelane.engine.systems.percentile.positions import area_fire_candidates, metres, position
from firelane.engine.systems.percentile.rolls import chance_at_most, d100_chance, percentile_test, tens_digit, target_of
from firelane.engine.systems.percentile.setup import PERCENT, SheetCheck, require_free_squares, require_square, settle_square_metres

__all__ = [
    "PERCENT",
    "DamageCode",
    "body_squares",
    "declared_path",
    "SheetCheck",
    "area_fire_candidates",
    "chance_at_most",
    "d100_chance",
    "metres",
    "never_below_zero",
    "occupied_squares",
    "parse_damage",
    "path_error",
    "percentile_test",
    "position",
    "require_free_squares",
    "require_square",
    "roll_damage",
    "settle_square_metres",
    "shortest_path",
    "step_path",
    "target_of",
    "tens_digit",
]
