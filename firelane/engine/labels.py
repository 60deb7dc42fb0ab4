"""A rule system's words for people: what its reactions, actions, conditions,
fields, weapons, attack modes and calls, window triggers and roll details are
called at the table.

Each system keeps its own in its folder (``engine/systems/<name>/labels.py``,
``LABELS``, set as the system's ``labels``): the narration, the options and
the table page say these instead of the identifiers the rules use. A key
without a label is said as its identifier with spaces for underscores (a
roll detail labelled "" is one the roll's notes already say, left out).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

KINDS = ("reactions", "actions", "conditions", "fields", "weapons", "modes", "triggers", "details")


def _frozen(mapping: Mapping[str, str] | None = None) -> Mapping[str, str]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Labels:
    reactions: Mapping[str, str] = field(default_factory=_frozen)
    actions: Mapping[str, str] = field(default_factory=_frozen)
    conditions: Mapping[str, str] = field(default_factory=_frozen)
    fields: Mapping[str, str] = field(default_factory=_frozen)
    weapons: Mapping[str, str] = field(default_factory=_frozen)
    modes: Mapping[str, str] = field(default_factory=_frozen)  # fire modes, aimed and called shots
    triggers: Mapping[str, str] = field(default_factory=_frozen)  # what opens a reaction window
    details: Mapping[str, str] = field(default_factory=_frozen)  # the details a roll carries

    def word(self, kind: str, key: str) -> str:
        """The label of ``key`` among ``kind`` (one of KINDS), or the key in words."""
        if kind not in KINDS:
            raise ValueError(f"no labels of kind {kind!r}; kinds: {', '.join(KINDS)}")
        said = getattr(self, kind).get(key)
        return said if said is not None else key.replace("_", " ")

    def as_dict(self) -> dict[str, Any]:
        """Every label, by kind (what the table page gets with its view)."""
        return {kind: dict(getattr(self, kind)) for kind in KINDS}


def labels(**kinds: Mapping[str, str]) -> Labels:
    return Labels(**{kind: _frozen(words) for kind, words in kinds.items()})
