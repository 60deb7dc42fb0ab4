"""RonD6: D6 dice pools with a Wild Die (rule system "rond6"). See docs/systems/rond6.md.

Exports the rule system (`SYSTEM`), the sample data (`load_data`) and the
demo encounter (`demo_setup`).

Layout, in floors (no module imports one above it; tests/systems/rond6/test_layout.py):

* bottom: ``state``, ``pools`` (die codes, the Wild Die), ``rules`` (combat
  math, reaction names), ``movement_rules`` (Move and the other R6-09..12
  math), ``rolling`` (a combatant's tests and damage), ``data``, and
  ``contract`` (what the modules above ask of the system);
* middle: ``actions``, ``reactions``, ``combat`` (attack steps, damage, what
  follows a window), ``movement``, ``objects``, ``areas``, ``healing``,
  ``aux`` (plugs the last four in) and ``ai``;
* top: ``system``, the `RonD6System` class.
"""

from firelane.engine.systems.rond6.data import (
    demo_setup,
    load_data,
    sheet_from_template,
)
from firelane.engine.systems.rond6.system import SYSTEM, RonD6System

__all__ = ["SYSTEM", "RonD6System", "demo_setup", "load_data", "sheet_from_template"]
