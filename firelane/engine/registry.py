"""The registry of rule systems, by name.

A rule system is one folder (a package): its ``__init__`` exposes ``SYSTEM``
(the `BaseRuleSystem`) and ``demo_setup()``; a ``campaign`` module in it, if
there is one, exposes ``RULES`` (its campaign rules, engine/campaign_rules.py).
A built-in system is registered by one line in ``_MODULES``; a plugin by
naming its package in ``FIRELANE_PLUGINS`` (or `register_system`).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from typing import Any

from firelane.engine.core import BaseRuleSystem
from firelane.events.codec import register_events

# name -> module that defines SYSTEM; imported lazily so one broken system does
# not stop the others from loading.
_MODULES: dict[str, str] = {
    "bolt-and-blade": "firelane.engine.systems.bolt_and_blade",
    "d100-degrees": "firelane.engine.systems.d100_degrees",
    "d100-zones": "firelane.engine.systems.d100_zones",
    "rond6": "firelane.engine.systems.rond6",
}

_loaded: dict[str, BaseRuleSystem] = {}


class UnknownSystem(KeyError):
    def __str__(self) -> str:
        return f"unknown rule system {self.args[0]!r}; known: {', '.join(sorted(_MODULES))}"


class PluginError(ValueError):
    pass


def _load_plugins() -> None:
    """Import the modules named in FIRELANE_PLUGINS (comma-separated); each
    exposes ``SYSTEM``, a rule system to register."""
    for module_name in filter(None, (m.strip() for m in os.environ.get("FIRELANE_PLUGINS", "").split(","))):
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise PluginError(f"FIRELANE_PLUGINS names {module_name!r}, which cannot be imported: {exc}") from exc
        system = getattr(module, "SYSTEM", None)
        if system is None:
            raise PluginError(f"FIRELANE_PLUGINS names {module_name!r}, which has no SYSTEM")
        if system.name not in _loaded:
            register_system(system, module_name)


def register_system(system: BaseRuleSystem, module: str | None = None) -> None:
    """Add a rule system at run time (plugins, tests). ``module`` is where its
    ``demo_setup`` lives, if it has one."""
    _MODULES.setdefault(system.name, module or type(system).__module__)
    register_events(system.event_types)
    _loaded[system.name] = system


def system_names() -> list[str]:
    _load_plugins()
    return sorted(_MODULES)


def get_system(name: str) -> BaseRuleSystem:
    system = _loaded.get(name)
    if system is not None:
        return system
    _load_plugins()
    if name in _loaded:
        return _loaded[name]
    module_name = _MODULES.get(name)
    if module_name is None:
        raise UnknownSystem(name)
    system = importlib.import_module(module_name).SYSTEM
    register_events(system.event_types)
    _loaded[name] = system
    return system


def demo_setup(name: str):  # -> EncounterSetup
    """The sample encounter a system ships for `firelane demo`."""
    get_system(name)
    return importlib.import_module(_MODULES[name]).demo_setup()


def system_campaign_rules(name: str) -> Any:
    """The ``RULES`` of the system's ``campaign`` module, or None when it has
    none (or the system is unknown here: a campaign keeps characters of any system)."""
    try:
        get_system(name)
    except UnknownSystem:
        return None
    module_name = f"{_MODULES[name]}.campaign"
    try:
        found = importlib.util.find_spec(module_name)
    except ModuleNotFoundError:  # the system is a plain module, not a package
        return None
    return getattr(importlib.import_module(module_name), "RULES", None) if found else None
