"""Every rule in the inventory has a test that carries its ID in its name or docstring.

The inventory is the copy in docs/rules/INVENTORY.md (the source is the rule
team's ../shared/rules/INVENTORY.md; when that is present beside the repo, the
copy must match it).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
INVENTORY = REPO / "docs" / "rules" / "INVENTORY.md"
SHARED_INVENTORY = REPO.parent / "shared" / "rules" / "INVENTORY.md"
ID_LINE = re.compile(r"^- ((?:BB-CORE|BB-CMB|D100D|D100Z|R6)-\d+) ", re.M)


def inventory_ids() -> list[str]:
    return ID_LINE.findall(INVENTORY.read_text())


def functions_naming_each_id() -> dict[str, list[str]]:
    """ID -> the test functions whose name or docstring carries it."""
    found: dict[str, list[str]] = {}
    for path in (REPO / "tests").rglob("test_*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_"):
                text = node.name.upper().replace("_", "-") + " " + (ast.get_docstring(node) or "")
                for rule_id in set(re.findall(r"(?:BB-CORE|BB-CMB|D100D|D100Z|R6)-\d+", text)):
                    found.setdefault(rule_id, []).append(f"{path.relative_to(REPO)}::{node.name}")
    return found


def test_the_inventory_copy_is_complete_and_current() -> None:
    ids = inventory_ids()
    assert len(ids) == len(set(ids)) == 116
    if SHARED_INVENTORY.exists():
        assert ID_LINE.findall(SHARED_INVENTORY.read_text()) == ids, "docs/rules/INVENTORY.md is out of date"


def test_every_rule_has_a_test_carrying_its_id() -> None:
    found = functions_naming_each_id()
    missing = [rule_id for rule_id in inventory_ids() if rule_id not in found]
    assert missing == [], f"rules without a test naming them: {missing}"
