"""The Bolt & Blade package is laid out in floors and no module imports one above it.

State, constants and pure rules at the bottom; paths, reactions, movement,
actions and the AI above them; the system class on top. Every import counts,
those inside functions and under TYPE_CHECKING too: a loop through any of
them is a loop.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE_NAME = "firelane.engine.systems.bolt_and_blade"
PACKAGE = Path(__file__).resolve().parents[3] / "firelane" / "engine" / "systems" / "bolt_and_blade"

FLOORS: dict[str, int] = {
    # the system's command and event schemas (msgspec structs: nothing of the rules)
    "schemas": -1,
    "area_schemas": -1,
    "labels": -1,  # its words for people
    "gm_fields": -1,  # the fields the GM may set, described (imports nothing of the package)
    # state, constants and pure rules
    "rules": 0,
    "zones": 0,
    "data": 0,
    "sight": 0,
    "constants": 1,
    "state": 1,
    "combat": 2,
    # paths, reactions, movement, actions and the AI
    "paths": 3,
    "areas": 3,
    "reactions": 4,
    "movement": 5,
    "actions": 6,
    "options": 7,
    "ai": 8,
    # the system class, then the package's face
    "system": 9,
    "campaign": 9,  # between fights (issue 11): imports no module of the package
    "forms": 1,  # the character form, its catalogues and bestiary (engine/forms.py): reads the sample data
    "orders": 0,  # the standing orders a seat may give (engine/orders.py): no module of the package
    "narration": 0,  # the narration's sentences: words about events, no rules
    "__init__": 10,
}


def package_imports(path: Path) -> set[str]:
    """The package modules a source file imports, wherever the import stands."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == PACKAGE_NAME:
                found.update(alias.name for alias in node.names)
            elif node.module.startswith(PACKAGE_NAME + "."):
                found.add(node.module.removeprefix(PACKAGE_NAME + ".").split(".")[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE_NAME + "."):
                    found.add(alias.name.removeprefix(PACKAGE_NAME + ".").split(".")[0])
    return found


def test_every_module_has_a_floor() -> None:
    assert {p.stem for p in PACKAGE.glob("*.py")} == set(FLOORS)


def test_no_module_imports_one_on_its_floor_or_above() -> None:
    offenders = {}
    for path in PACKAGE.glob("*.py"):
        floor = FLOORS[path.stem]
        upward = sorted(m for m in package_imports(path) if FLOORS[m] >= floor)
        if upward:
            offenders[path.stem] = upward
    assert offenders == {}


def test_the_bottom_floors_import_nothing_that_acts() -> None:
    """State, constants and rules never reach up to moves, reactions, actions or the AI."""
    for stem in ("rules", "zones", "data", "sight", "constants", "state", "combat"):
        allowed = {"rules", "zones", "data", "sight", "constants", "state", "schemas", "area_schemas"}
        assert package_imports(PACKAGE / f"{stem}.py") <= allowed, stem
