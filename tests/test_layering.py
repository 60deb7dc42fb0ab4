"""The layering rules of DESIGN.md, checked on the source.

- engine/ is pure: no trio, no Redis, no logging, no clocks or global randomness;
- the event schema modules (events/ and each rule system's) import nothing else
  from the project but other schema modules;
- only the runtime layers (actors, projections, web, cli, redisio, the log,
  the process's stop signals)
  touch trio or Redis;
- the packages sit on floors and none imports one above it;
- there is no import circle anywhere in firelane/: every import counts, at the
  top of a module, inside a function or under ``if TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "firelane"
IMPURE = {"trio", "redis", "hiredis", "structlog", "logging", "random", "time", "datetime", "socket", "subprocess", "asyncio"}

# Each top-level package (or module) of firelane/ and its floor: a module may
# import its own floor or lower ones, never a higher one.
FLOORS = {
    "logs": 0,  # structured logging for the runtime
    "stop_signals": 0,  # how a process answers SIGINT, SIGTERM and SIGHUP (standard library only)
    "redisio": 0,  # the trio Redis client and the embedded redis-server
    "events": 1,  # the envelope, schemas, codec, signing and the log on Redis
    "engine": 2,  # pure rules, and one folder per rule system
    "projections": 3,  # folds: turn state, replay, audit, roster, characters, narration
    "actors": 4,  # the live runtime: sequencer, campaign, seating, the store, engine hosts
    "web": 5,  # the HTTP/WebSocket API and the page
    "cli": 6,  # the `firelane` command
    "__main__": 7,  # the entry point
}


def imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Every module of firelane/ and the modules of firelane/ it imports
    (``from package import submodule`` counts as the submodule)."""
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                wanted = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                submodules = [f"{node.module}.{alias.name}" for alias in node.names if f"{node.module}.{alias.name}" in modules]
                wanted = submodules + ([node.module] if len(submodules) < len(node.names) else [])
            else:
                continue
            for target in wanted:
                if target.startswith("firelane"):
                    found = resolve(target)
                    if found is not None and found != name:
                        targets.add(found)
        graph[name] = targets
    return graph


def test_engine_is_pure() -> None:
    offenders = {}
    higher = ("firelane.actors", "firelane.redisio", "firelane.projections", "firelane.web", "firelane.cli",
              "firelane.events.log", "firelane.logs")
    for path in (PACKAGE / "engine").rglob("*.py"):
        bad = {m for m in imported_modules(path) if m.split(".")[0] in IMPURE or m.startswith(higher)}
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
    allowed = ("actors", "projections", "web", "cli", "redisio")
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] in allowed or relative.as_posix() in {"events/log.py", "logs.py", "stop_signals.py"}:
            continue
        if {m.split(".")[0] for m in imported_modules(path)} & {"trio", "redis", "hiredis"}:
            offenders.append(relative.as_posix())
    assert offenders == []


def test_every_package_has_a_floor_and_none_imports_a_higher_one() -> None:
    graph = import_graph()
    tops = {name.split(".")[1] for name in graph if name != "firelane"}
    assert tops <= set(FLOORS), f"no floor for {sorted(tops - set(FLOORS))}"
    upward = sorted(f"{name} imports {other}" for name, targets in graph.items() if name != "firelane"
                    for other in targets if other != "firelane"
                    and FLOORS[other.split(".")[1]] > FLOORS[name.split(".")[1]])
    assert upward == []


def test_there_is_no_import_circle_anywhere() -> None:
    try:
        list(TopologicalSorter(import_graph()).static_order())
    except CycleError as exc:
        raise AssertionError(f"an import circle: {' -> '.join(exc.args[1])}") from None


def test_the_circle_check_finds_a_circle() -> None:
    """The check above sees a circle when there is one (so its passing means something)."""
    graph = import_graph()
    graph["firelane.redisio.client"] = graph["firelane.redisio.client"] | {"firelane.redisio.cluster"}
    try:
        list(TopologicalSorter(graph).static_order())
    except CycleError:
        return
    raise AssertionError("a circle made on purpose was not found")
