""""While you were away": what happened in a fight since a seat last looked.

A fold over the log's tail after the version the seat last saw: who acted
(turns, attacks, reactions), the hits its combatants took, who fell, its
combatants as they stand now, and what awaits it (its turn, a window, the
GM's calls), each deadline as an absolute time. The API gives it
(``GET …/digest?since=V``) and the page opens on it. Pure: the caller hands
the events and the state.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from firelane.engine.core import BaseRuleSystem
from firelane.engine.seats import seat_by_id
from firelane.engine.state import EncounterState
from firelane.events.schemas import (
    AttackResolved,
    CombatantDown,
    DamageDealt,
    Event,
    ReactionClaimed,
    TurnEnded,
    TurnTimedOut,
)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def seat_digest(system: BaseRuleSystem, state: EncounterState, seat_id: str, since: int,
                events: Iterable[tuple[int, Event]], deadlines: dict[str, int | None]) -> dict[str, Any]:
    """The digest for ``seat_id`` of ``events`` (version, event) after version
    ``since``; ``state`` is the state now; ``deadlines``: the running turn's
    and window's deadlines in wall-clock ms ("turn", "window"), when known."""
    seat = seat_by_id(state.seats, seat_id)
    role = seat.role if seat is not None else "spectator"
    mine = [c for c in (seat.combatants if seat is not None else []) if c in state.combatants]
    watched = set(mine) if role == "player" else set(state.combatants)  # the GM and spectators: everyone's hits

    def name(combatant: str) -> str:
        found = state.combatants.get(combatant)
        return (found.name or combatant) if found is not None else combatant

    acted: dict[str, dict[str, Any]] = {}
    hits: list[dict[str, Any]] = []
    downs: list[dict[str, Any]] = []
    timed_out: list[dict[str, Any]] = []
    count = 0

    def actor(combatant: str) -> dict[str, Any]:
        return acted.setdefault(combatant, {"combatant": combatant, "name": name(combatant), "turns": 0, "attacks": 0,
                                            "reactions": 0})

    for version, event in events:
        if version <= since:
            continue
        count += 1
        if isinstance(event, TurnEnded):
            actor(event.combatant)["turns"] += 1
        elif isinstance(event, AttackResolved) and event.attacker in state.combatants:
            actor(event.attacker)["attacks"] += 1
        elif isinstance(event, ReactionClaimed):
            actor(event.combatant)["reactions"] += 1
        elif isinstance(event, DamageDealt) and event.target in watched:
            hits.append({"n": version, "combatant": event.target, "name": name(event.target), "by": event.source,
                         "by_name": name(event.source), "amount": event.amount})
        elif isinstance(event, CombatantDown):
            downs.append({"n": version, "combatant": event.combatant, "name": name(event.combatant),
                          "reason": event.reason, "mine": event.combatant in mine})
        elif isinstance(event, TurnTimedOut) and event.combatant in watched:
            timed_out.append({"n": version, "combatant": event.combatant, "name": name(event.combatant),
                              "then": event.then})

    standing = []
    for combatant in mine:
        found = state.combatants[combatant]
        standing.append({"combatant": combatant, "name": name(combatant), "out_of_fight": found.out_of_fight,
                         "health": system.health(found), "conditions": sorted(found.conditions)})

    awaits: list[dict[str, Any]] = []
    if not state.ended and seat is not None and role != "spectator":
        options = system.options(state, seat_id)
        for combatant in options.combatants:
            if combatant.window is not None:
                awaits.append({"kind": "window", "combatant": combatant.combatant, "name": name(combatant.combatant),
                               "window": combatant.window.window, "trigger": combatant.window.trigger,
                               "deadline_at_ms": deadlines.get("window")})
            elif combatant.its_turn:
                awaits.append({"kind": "turn", "combatant": combatant.combatant, "name": name(combatant.combatant),
                               "deadline_at_ms": deadlines.get("turn")})
        if options.gm is not None:
            for call in options.gm.calls:
                awaits.append({"kind": "gm_call", "call": call.id, "text": call.text})

    summary = _summary(list(acted.values()), hits, downs, standing, awaits, state, role)
    return {"seat": seat_id, "since": since, "version": state.version, "events": count,
            "acted": list(acted.values()), "hits": hits, "downs": downs, "timed_out": timed_out,
            "mine": standing, "awaits": awaits, "ended": state.ended, "winner": state.winner,
            "end_reason": state.end_reason, "summary": summary}


def _summary(acted, hits, downs, standing, awaits, state: EncounterState, role: str) -> list[str]:
    """The digest in a few sentences (deadlines are left to the reader's clock: the page adds them)."""
    lines = []
    if not acted and not hits and not downs:
        lines.append("Nothing has happened since you last looked.")
    if acted:
        doings = []
        for who in acted:
            parts = [_plural(who[k], w) for k, w in (("turns", "turn"), ("attacks", "attack"), ("reactions", "reaction"))
                     if who[k]]
            doings.append(f"{who['name']} ({', '.join(parts)})")
        lines.append("Acted: " + "; ".join(doings) + ".")
    if hits:
        taken: dict[str, list[dict[str, Any]]] = {}
        for hit in hits:
            taken.setdefault(hit["name"], []).append(hit)
        lines.append("Hits taken: " + "; ".join(
            f"{who} {_plural(len(h), 'time')} ({sum(x['amount'] for x in h)} damage, from "
            f"{', '.join(sorted({x['by_name'] for x in h}))})" for who, h in taken.items()) + ".")
    if downs:
        lines.append("Down: " + ", ".join(d["name"] for d in downs) + ".")
    for combatant in standing:
        health = combatant["health"]
        shape = "out of the fight" if combatant["out_of_fight"] else "standing"
        if health is not None:
            shape += f", {health['value']} of {health['max']} {health['label']}"
        lines.append(f"{combatant['name']}: {shape}.")
    if state.ended:
        lines.append(f"The fight has ended: {state.end_reason}" + (f" ({state.winner} won)." if state.winner else "."))
    elif awaits:
        lines.append("Awaits you: " + "; ".join(
            f"{a['name']}'s turn" if a["kind"] == "turn" else
            f"{a['name']}'s answer in window {a['window']}" if a["kind"] == "window" else f"a ruling: {a['text']}"
            for a in awaits) + ".")
    elif role == "player":
        lines.append("Nothing awaits you now.")
    return lines
