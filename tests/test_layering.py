"""The layering rules of DESIGN.md, checked on the source.

- engine/ is pure: no trio, no Redis, no logging, no clocks or global randomness;
- the event schema modules import nothing else from the project but other schema modules;
- only actors, projections, frontends and the log touch trio or Redis.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "firelane"
IMPURE = {"trio", "redis", "hiredis", "structlog", "logging", "random", "time", "datetime", "socket", "subprocess", "asyncio"}


def imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


def test_engine_is_pure() -> None:
    offenders = {}
    for path in (PACKAGE / "engine").rglob("*.py"):
        bad = {m for m in imported_modules(path) if m.split(".")[0] in IMPURE or m.startswith(("firelane.actors", "firelane.redisio", "firelane.projections", "firelane.frontends", "firelane.events.log", "firelane.logs"))}
        if bad:
            offenders[str(path.relative_to(PACKAGE))] = sorted(bad)
    assert offenders == {}


def schema_modules() -> list[Path]:
    """The shared schema modules (events/) and every rule system's own (engine/systems/<name>/)."""
    return sorted([*(PACKAGE / "events").glob("*schemas.py"), *(PACKAGE / "engine" / "systems").glob("*/*schemas.py")])


def test_schema_modules_import_only_schemas() -> None:
    offenders = {}
    for path in schema_modules():
        project = {m for m in imported_modules(path) if m.startswith("firelane")}
        bad = {m for m in project if not m.rpartition(".")[2].endswith("schemas")}
        if bad:
            offenders[path.relative_to(PACKAGE).as_posix()] = sorted(bad)
    assert offenders == {}
    systems = {path.parent.name for path in schema_modules() if path.parent.parent.name == "systems"}
    assert systems == {"bolt_and_blade", "d100_degrees", "d100_zones", "rond6"}  # every system's schemas in its folder


def test_only_the_runtime_layers_touch_trio_or_redis() -> None:
    allowed = ("actors", "projections", "frontends", "redisio")
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] in allowed or relative.as_posix() in {"events/log.py", "logs.py"}:
            continue
        if {m.split(".")[0] for m in imported_modules(path)} & {"trio", "redis", "hiredis"}:
            offenders.append(relative.as_posix())
    assert offenders == []
