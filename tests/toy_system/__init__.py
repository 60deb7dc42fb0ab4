"""A tiny rule system used to test the shared machinery and the live runtime.

"toy": initiative d6 + speed; Strike: d6 >= hit_on (default 4) hits for 1 damage;
Step: move one square, which opens a reaction window for every enemy with its
reaction, who may "snap" (d6 >= 5 hits) or "duck" (priority before snap).
With the setting ``brace`` on, a snap that hits opens a nested window in which
the target may "brace" (its own reaction) to take no damage from it.

It is also the example that docs/architecture.md's "Adding a rule system"
follows: one folder, nothing else edited, registered by one line (here
``FIRELANE_PLUGINS=tests.toy_system``; a built-in system's line is in
engine/registry.py). The folder holds everything the system knows:

- ``schemas`` — its commands (its events are the shared ones);
- ``state`` — its combatants' and encounter's typed state;
- ``system`` — the rules and the AI, behind `BaseRuleSystem`;
- ``narration`` — its sentences; ``labels`` — its words for people;
- ``sample_data.json`` — the demo encounter, read by ``data``.
"""

from __future__ import annotations

from tests.toy_system.data import demo_setup, setup
from tests.toy_system.schemas import Step, Strike
from tests.toy_system.state import ToyCombatant, ToyState
from tests.toy_system.system import TOY, ToySystem

SYSTEM = TOY

__all__ = ["SYSTEM", "TOY", "Step", "Strike", "ToyCombatant", "ToyState", "ToySystem", "demo_setup", "setup"]
