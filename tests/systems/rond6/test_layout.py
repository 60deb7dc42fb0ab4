"""The RonD6 package is laid out in floors (issue 7): state, dice pools, the
pure rules (combat, movement) and rolling at the bottom; actions, reactions,
combat steps, movement, objects, areas, healing and AI above them; the system on top."""

from __future__ import annotations

from ..floors import floor_problems

FLOORS = {
    "schemas": 0,  # the command and event schemas (and the auxiliary rules' own)
    "aux_schemas": 0,
    "narration": 0,  # the narration's sentences
    "labels": 0,  # its words for people
    "gm_fields": 0,  # the fields the GM may set, described
    "state": 0,
    "pools": 0,
    "rules": 0,
    "movement_rules": 0,
    "rolling": 0,
    "data": 0,
    "forms": 1,  # the character form, catalogues and bestiary (engine/forms.py)
    "orders": 1,  # the standing orders a seat may give (engine/orders.py): its reactions from rules
    "contract": 0,
    "sheets": 0,
    "odds": 0,
    "actions": 1,
    "reactions": 1,
    "combat": 1,
    "movement": 1,
    "objects": 1,
    "areas": 1,
    "healing": 1,
    "aux": 1,
    "ai": 1,
    "options": 1,
    "system": 2,
    "campaign": 2,  # between fights (issue 11): healing outside combat
}


def test_no_module_imports_one_above_it() -> None:
    assert floor_problems("rond6", FLOORS) == []
