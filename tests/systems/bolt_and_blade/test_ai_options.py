"""The Bolt & Blade AI picks from the options and decides as before (issues 9 and 12).

The AI was rewritten to cost little at 128 combatants (`ai.ATTENTION`, the
walls' sight, cover by direction class, one pass per enemy); on the demo it
must decide exactly as the AI before it did (`frozen_ai`, a copy kept for this
comparison), and every command it gives must be one the options list.
"""

from __future__ import annotations

import msgspec

from firelane.engine.core import command_json
from firelane.engine.seats import ENGINE_SEAT
from firelane.engine.simulate import run_headless
from firelane.engine.systems.bolt_and_blade import SYSTEM, BoltAndBladeSystem, demo_setup
from firelane.events.schemas import Command, Event, ReactionClaimed, ReactionsOrdered, StartEncounter

from . import frozen_ai
from .test_options import armoury, listed


class FrozenAISystem(BoltAndBladeSystem):
    """Bolt & Blade with the AI as it was before issue 12."""

    def choose_command(self, state, combatant):  # type: ignore[no-untyped-def]
        return frozen_ai.choose_command(state, combatant)


FROZEN = FrozenAISystem()


def comparable(events: list[Event]) -> list[Event]:
    """A fight's events, with what a dive claim names left out: the old AI let
    the engine pick the best cover (no options), the new one names that square,
    as the options list the claim; the dive itself (`ActionTaken.details.to`,
    `Moved`) is compared."""
    out = []
    for event in events:
        if isinstance(event, ReactionClaimed) and event.reaction == "dive_for_cover":
            event = msgspec.structs.replace(event, options={})
        elif isinstance(event, ReactionsOrdered):
            event = msgspec.structs.replace(event, order=[msgspec.structs.replace(c, options={}) if c.reaction == "dive_for_cover" else c for c in event.order])
        out.append(event)
    return out


def fight_log(system: BoltAndBladeSystem, setup, seed: bytes) -> list[Event]:  # type: ignore[no-untyped-def]
    return comparable([e for _c, events, _s in run_headless(system, setup, seed) for e in events])


def test_the_ai_decides_as_the_ai_before_it_on_the_demo() -> None:
    """Issue 12: same decisions on the 8-combatant demo: the fights' logs are
    identical to those of the AI before the rewrite, seed for seed
    (scripts/bb_ai_versus.py checks 200 seeds)."""
    for n in range(8):
        seed = n.to_bytes(4, "big") * 8
        assert fight_log(SYSTEM, demo_setup(), seed) == fight_log(FROZEN, demo_setup(), seed), f"seed {n}"


def test_the_ai_decides_as_the_ai_before_it_with_every_kind_of_wargear() -> None:
    """Issue 12: the same on the armoury arena (7 combatants: flamer, krak, heavy stubber, knives)."""
    for n in range(6):
        seed = bytes([n + 40]) * 32
        assert fight_log(SYSTEM, armoury(), seed) == fight_log(FROZEN, armoury(), seed), f"seed {n}"


def test_every_command_the_ai_gives_is_one_the_options_list() -> None:
    """Issue 9: "the AI picks from the same options": in demo and armoury fights,
    each AI command (its id aside) is among the commands the engine seat's
    options list in the state it was given in."""
    checked = kinds = 0
    seen: set[str] = set()
    for setup, seed in [(demo_setup(), b"a" * 32), (armoury(), b"c" * 32)]:
        state_before = None
        for command, _events, state in run_headless(SYSTEM, setup, seed):
            if state_before is not None and not isinstance(command, StartEncounter):
                assert_listed(state_before, command)
                checked += 1
                seen.add(type(command).__name__)
            state_before = msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=type(state))
            if state.ended:
                break
    kinds = len(seen)
    assert checked > 200 and {"BBMove", "BBAttack", "ClaimReaction", "PassReaction", "EndTurn"} <= seen and kinds >= 8, seen


def assert_listed(state, command: Command) -> None:  # type: ignore[no-untyped-def]
    body = normal(command_json(command))
    options = SYSTEM.options(state, ENGINE_SEAT)
    mine = next(c for c in options.combatants if c.combatant == command.actor)
    assert body in [normal(b) for b in listed(mine)], f"v{state.version}: the AI's {body} is not listed"


def normal(body: dict) -> dict:
    """A listed command as `command_json` of its decoded command gives it (tuples as lists)."""
    return msgspec.to_builtins(msgspec.json.decode(msgspec.json.encode(body)))
