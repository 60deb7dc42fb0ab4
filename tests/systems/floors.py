"""Checking that a rule-system package is laid out in floors.

A package's modules sit on numbered floors: state, constants and pure rules at
the bottom (0), actions, reactions, movement and AI above them (1), the system
class on top (2). A module may import modules of its own floor or below, never
one above it, and the imports within a floor form no loop. Every import counts:
at the top of a module, inside a function, or under ``if TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[2] / "firelane" / "engine" / "systems"


def package_imports(package: str) -> dict[str, set[str]]:
    """For each module of ``firelane.engine.systems.<package>``, the package's
    modules it imports (``__init__`` excluded: it only re-exports)."""
    prefix = f"firelane.engine.systems.{package}"
    directory = PACKAGE_ROOT / package
    modules = {path.stem for path in directory.glob("*.py") if path.stem != "__init__"}
    found: dict[str, set[str]] = {}
    for name in sorted(modules):
        tree = ast.parse((directory / f"{name}.py").read_text(), filename=f"{package}/{name}.py")
        used: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module == prefix:
                    targets = [f"{prefix}.{alias.name}" for alias in node.names]
                else:
                    targets = [node.module]
            else:
                continue
            for target in targets:
                if target.startswith(prefix + "."):
                    module = target[len(prefix) + 1 :].split(".")[0]
                    if module in modules and module != name:
                        used.add(module)
        found[name] = used
    return found


def floor_problems(package: str, floors: dict[str, int]) -> list[str]:
    """Everything wrong with the package's layout against ``floors`` (module -> floor)."""
    imports = package_imports(package)
    problems = [f"{package}/{module}.py has no floor" for module in sorted(set(imports) - set(floors))]
    problems += [f"{package}/{module}.py is listed but does not exist" for module in sorted(set(floors) - set(imports))]
    for module, used in sorted(imports.items()):
        for other in sorted(used):
            if module in floors and other in floors and floors[other] > floors[module]:
                problems.append(
                    f"{package}/{module}.py (floor {floors[module]}) imports {other} (floor {floors[other]}), a floor above it"
                )
    same_floor = {m: {o for o in used if floors.get(o) == floors.get(m)} for m, used in imports.items() if m in floors}
    try:
        tuple(TopologicalSorter(same_floor).static_order())
    except CycleError as error:
        problems.append(f"{package}: import loop within a floor: {' -> '.join(error.args[1])}")
    return problems
