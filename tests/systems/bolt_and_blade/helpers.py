"""Shared helpers for the Bolt & Blade tests: small arenas, fixed-dice commands."""

from __future__ import annotations

import itertools
from typing import Any

from firelane.engine.core import SEQUENCER
from firelane.engine.dice import FixedDice
from firelane.engine.systems.bolt_and_blade import SYSTEM, BoltAndBladeState
from firelane.engine.systems.bolt_and_blade.schemas import BBAttack, BBMove
from firelane.events.schemas import (
    ClaimReaction,
    CombatantSetup,
    Command,
    CommandRejected,
    CoverFeature,
    EncounterSetup,
    EndTurn,
    Event,
    PassReaction,
    StartEncounter,
    Terrain,
    Wall,
)

_ids = itertools.count(1)
PLAIN = {"strength": 10, "agility": 10, "toughness": 10, "intellect": 10, "willpower": 10, "presence": 10}


def sheet(attributes: dict[str, int] | None = None, **overrides: Any) -> dict[str, Any]:
    """A plain level-1 sheet: every modifier 0, proficiency +2 with every weapon
    group, Vitality 20, no armour (Defense 10), a lasgun (ready) and a knife."""
    base: dict[str, Any] = {
        "level": 1,
        "attributes": {**PLAIN, **(attributes or {})},
        "vitality": 20,
        "armour": "none",
        "weapons": ["lasgun", "combat knife"],
        "ready_weapon": "lasgun",
        "weapon_proficiencies": ["basic", "pistol", "heavy", "melee", "grenade"],
    }
    base.update(overrides)
    return base


def knife_only(**overrides: Any) -> dict[str, Any]:
    """A target that cannot Return Fire: only a knife."""
    return sheet(weapons=["combat knife"], ready_weapon="combat knife", **overrides)


def fighter(cid: str, side: str, position: tuple[int, int], **sheet_fields: Any) -> CombatantSetup:
    return CombatantSetup(id=cid, name=cid.title(), side=side, position=position, sheet=sheet_fields or sheet())


def arena(
    combatants: list[CombatantSetup],
    *,
    walls: list[tuple[int, int]] = (),  # type: ignore[assignment]
    cover: list[CoverFeature] = (),  # type: ignore[assignment]
    difficult: list[tuple[int, int]] = (),  # type: ignore[assignment]
    width: int = 30,
    height: int = 20,
    **settings: Any,
) -> EncounterSetup:
    return EncounterSetup(
        system="bolt-and-blade",
        combatants=combatants,
        terrain=Terrain(width=width, height=height, walls=[Wall(x, y) for x, y in walls], cover=list(cover), difficult=list(difficult)),
        settings=settings,
    )


def start(setup: EncounterSetup, order: list[str]) -> BoltAndBladeState:
    """Start the encounter with initiative faces that give ``order`` (first acts first)."""
    ids = sorted(c.id for c in setup.combatants)
    faces = [20 - 5 * order.index(cid) for cid in ids]
    state = SYSTEM.initial_state()
    events = SYSTEM.decide(state, StartEncounter(command_id="start", actor=SEQUENCER, setup=setup, seed_commitment="x"), FixedDice(faces))
    for event in events:
        SYSTEM.evolve(state, event)
    assert state.active == order[0]
    return state  # type: ignore[return-value]


def act(state: BoltAndBladeState, command: Command, faces: list[int] | tuple[int, ...] = (), *, all_dice: bool = True) -> list[Event]:
    """Decide with fixed faces (all of them must be used) and apply the events."""
    dice = FixedDice(faces)
    events = SYSTEM.decide_or_reject(state, command, dice)
    for event in events:
        SYSTEM.evolve(state, event)
    if all_dice and not any(isinstance(e, CommandRejected) for e in events):
        assert dice.remaining == 0, f"{dice.remaining} fixed faces were not rolled"
    return events


def rejected(events: list[Event]) -> str:
    assert len(events) == 1 and isinstance(events[0], CommandRejected), events
    return events[0].reason


def of(events: list[Event], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def one(events: list[Event], kind: type) -> Any:
    found = of(events, kind)
    assert len(found) == 1, f"expected one {kind.__name__}, got {found}"
    return found[0]


def cid() -> str:
    return f"t{next(_ids)}"


def move(actor: str, *path: tuple[int, int], mode: str = "tactical", on_reactive_fire: str = "") -> BBMove:
    return BBMove(command_id=cid(), actor=actor, path=list(path), mode=mode, on_reactive_fire=on_reactive_fire)


def attack(actor: str, target: str, weapon: str = "") -> BBAttack:
    return BBAttack(command_id=cid(), actor=actor, target=target, weapon=weapon)


def end(actor: str) -> EndTurn:
    return EndTurn(command_id=cid(), actor=actor)


def claim(actor: str, window: int, reaction: str, **options: Any) -> ClaimReaction:
    return ClaimReaction(command_id=cid(), actor=actor, window=window, reaction=reaction, options=options)


def pass_(actor: str, window: int) -> PassReaction:
    return PassReaction(command_id=cid(), actor=actor, window=window)


def line(x0: int, x1: int, y: int) -> list[tuple[int, int]]:
    step = 1 if x1 >= x0 else -1
    return [(x, y) for x in range(x0, x1 + step, step)]
