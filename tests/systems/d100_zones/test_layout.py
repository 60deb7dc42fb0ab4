"""The d100-zones package is laid out in floors (issue 7): state, data and
pure rules at the bottom, actions, reactions and AI above them, the system on top."""

from __future__ import annotations

from ..floors import floor_problems

FLOORS = {
    "schemas": 0,  # the command and event schemas
    "narration": 0,  # the narration's sentences
    "labels": 0,  # its words for people
    "gm_fields": 0,  # the fields the GM may set, described
    "state": 0,
    "rules": 0,
    "data": 0,
    "forms": 1,  # the character form, catalogues and bestiary (engine/forms.py)
    "orders": 0,  # the standing orders a seat may give (engine/orders.py)
    "actions": 1,
    "reactions": 1,
    "ai": 1,
    "options": 1,
    "system": 2,
    "campaign": 2,  # between fights (issue 11)
}


def test_no_module_imports_one_above_it() -> None:
    assert floor_problems("d100_zones", FLOORS) == []


def test_the_shared_percentile_helpers_are_one_floor_of_pure_code() -> None:
    """The helpers both percentile systems build on import nothing of either system;
    their shared `PercentileSystem` base sits on the helpers."""
    floors = {name: 0 for name in ("damage", "data", "forms", "paths", "positions", "probe", "rolls", "setup")} | {"system": 1}
    assert floor_problems("percentile", floors) == []
