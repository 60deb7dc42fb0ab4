"""The toy's sample data (sample_data.json in this folder): the demo encounter."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import msgspec

from firelane.events.schemas import EncounterSetup


@cache
def _sample() -> dict[str, Any]:
    return json.loads(resources.files(__package__).joinpath("sample_data.json").read_text(encoding="utf-8"))


def setup(**settings: Any) -> EncounterSetup:
    """The demo's three combatants (Ann against Bo and Cy) with these settings."""
    demo = {key: value for key, value in _sample()["demo"].items() if key != "name"}
    return msgspec.convert({**demo, "settings": settings}, EncounterSetup)


def demo_setup() -> EncounterSetup:
    """The demo (`firelane demo --system toy`), with nested windows too (brace)."""
    return msgspec.structs.replace(setup(brace=True), name=_sample()["demo"]["name"])
