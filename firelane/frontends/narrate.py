"""A readable, coloured, one-line-per-event narration of an encounter's log.

Generic events get their own sentences; a rule system's own events are shown
with their fields, and any roll inside them is explained die by die.
Colour follows the NO_COLOR convention and is off when output is not a terminal.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

import msgspec

from firelane.engine.state import EncounterState
from firelane.events.options_schemas import SeatOptions
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    CombatantDown,
    CommandRejected,
    ConditionApplied,
    ConditionRemoved,
    DamageDealt,
    EncounterEnded,
    EncounterStarted,
    Event,
    InitiativeRolled,
    Moved,
    ReactionClaimed,
    ReactionDenied,
    ReactionPassed,
    ReactionsOrdered,
    ReactionWindowClosed,
    ReactionWindowOpened,
    Roll,
    RoundStarted,
    SeedRevealed,
    StateAdjusted,
    TestRolled,
    TurnEnded,
    TurnSkipped,
    TurnStarted,
)
from firelane.frontends.narrate_systems import SENTENCES
from firelane.projections.audit import explain_roll

_CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35", "cyan": "36"}


def colour_enabled(stream: TextIO, force: bool | None = None) -> bool:
    if force is not None:
        return force
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


class Narrator:
    def __init__(self, *, colour: bool = False, details: bool = False) -> None:
        self.colour = colour
        # Roll details (degrees, result points, wild-die faces...) are always in
        # the audit log; the narration shows them only when asked.
        self.details = details

    def paint(self, text: str, *styles: str) -> str:
        if not self.colour or not styles:
            return text
        codes = ";".join(_CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"

    def name(self, state: EncounterState, combatant: str) -> str:
        c = state.combatants.get(combatant)
        if c is None:
            return combatant
        side_colour = "cyan" if sorted({x.side for x in state.combatants.values()}).index(c.side) == 0 else "magenta"
        return self.paint(c.name, side_colour, "bold")

    def line(self, version: int, event: Event, state: EncounterState) -> str:
        """Narrate ``event`` given ``state`` AFTER it was applied."""
        text = self._describe(event, state)
        return self.paint(f"{version:>5} ", "dim") + text if text else ""

    def _describe(self, event: Event, state: EncounterState) -> str:  # noqa: C901 - one branch per event type
        n = lambda cid: self.name(state, cid)  # noqa: E731
        if isinstance(event, EncounterStarted):
            setup = event.setup
            sides: dict[str, list[str]] = {}
            for c in setup.combatants:
                sides.setdefault(c.side, []).append(c.name)
            roster = "; ".join(f"{side}: {', '.join(names)}" for side, names in sides.items())
            return self.paint(f"Encounter {setup.name or event.encounter} ({setup.system}) begins — {roster}", "bold") + self.paint(
                f"  seed commitment {event.seed_commitment[:16]}…", "dim")
        if isinstance(event, RoundStarted):
            return self.paint(f"══ Round {event.round} ══", "bold", "yellow")
        if isinstance(event, InitiativeRolled):
            totals = {e.combatant: e.total for e in event.entries}
            order = ", ".join(f"{n(c)} {totals.get(c, '')}" for c in event.order)
            return f"Initiative{f' ({event.rule})' if event.rule else ''}: {order}"
        if isinstance(event, TurnStarted):
            return self.paint("▶ ", "bold") + f"{n(event.combatant)}'s turn"
        if isinstance(event, TurnEnded):
            return self.paint(f"  {state.combatants[event.combatant].name} ends the turn", "dim")
        if isinstance(event, TurnSkipped):
            return f"{n(event.combatant)} loses the turn: {event.reason}"
        if isinstance(event, Moved):
            path = " → ".join(f"({x},{y})" for x, y in event.path[-3:])
            exposed = self.paint(" EXPOSED", "yellow") if event.exposed else ""
            mode = "" if event.mode == "move" else f" ({event.mode.replace('_', ' ')})"
            return f"{n(event.combatant)} moves{mode} to {path}{f', {event.cost:g}' if event.cost else ''}{exposed}"
        if isinstance(event, ActionTaken):
            details = _fields(event.details)
            return f"{n(event.combatant)} uses {event.action} ({event.slot}){f' {details}' if details else ''}"
        if isinstance(event, AttackResolved):
            verdict = self.paint("HIT", "red", "bold") if event.hit else self.paint("miss", "green")
            crit = self.paint(" CRITICAL", "red", "bold") if event.critical else ""
            kind = "" if event.kind == "attack" else self.paint(f" [{event.kind}]", "yellow")
            text = f"{n(event.attacker)} → {n(event.target)} with {event.weapon}{kind}: {verdict}{crit}  " + self.paint(
                explain_roll(event.roll, details=self.details), "dim")
            if event.defense is not None:
                text += self.paint(f"  defence: {explain_roll(event.defense, details=self.details)}", "dim")
            return text
        if isinstance(event, DamageDealt):
            left = f" ({event.remaining} left)" if event.remaining is not None else ""
            roll = self.paint(f"  {explain_roll(event.roll, details=self.details)}", "dim") if event.roll else ""
            return f"{n(event.target)} takes {self.paint(str(event.amount), 'red', 'bold')} damage{left}{roll}"
        if isinstance(event, TestRolled):
            verdict = self.paint("passes", "green") if event.success else self.paint("fails", "red")
            return f"{n(event.combatant)} {verdict} {event.test}  " + self.paint(explain_roll(event.roll, details=self.details), "dim")
        if isinstance(event, ConditionApplied):
            until = f" until {event.until}" if event.until else ""
            return f"{n(event.combatant)} is {self.paint(event.condition, 'yellow')}{until}{f' ({event.rule})' if event.rule else ''}"
        if isinstance(event, ConditionRemoved):
            return f"{n(event.combatant)} is no longer {event.condition}{f': {event.reason}' if event.reason else ''}"
        if isinstance(event, CombatantDown):
            return self.paint("✖ ", "red") + f"{n(event.combatant)} is down: {event.reason}"
        if isinstance(event, StateAdjusted):
            return self.paint(f"  {state.combatants[event.combatant].name}: {_fields(event.changes)}"
                              f"{f' — {event.reason}' if event.reason else ''}", "dim")
        if isinstance(event, ReactionWindowOpened):
            reactors = ", ".join(f"{n(r.combatant)} ({'/'.join(r.reactions)})" for r in event.reactors)
            return self.paint("⚡ ", "yellow") + f"{event.trigger.replace('_', ' ')} by {n(event.actor)} — may react: {reactors}"
        if isinstance(event, ReactionClaimed):
            return f"  {n(event.combatant)} claims {self.paint(event.reaction, 'yellow')}"
        if isinstance(event, ReactionPassed):
            return self.paint(f"  {state.combatants[event.combatant].name} holds", "dim")
        if isinstance(event, ReactionsOrdered):
            if not event.order:
                timed = f" (timed out: {', '.join(event.timed_out)})" if event.timed_out else ""
                return self.paint(f"  no reactions{timed}", "dim")
            order = "; ".join(f"{i}. {n(c.combatant)} {c.reaction}" for i, c in enumerate(event.order, start=1))
            return f"  arbiter order: {order}"
        if isinstance(event, ReactionDenied):
            return f"  {n(event.combatant)}'s {event.reaction} is denied: {event.reason}"
        if isinstance(event, ReactionWindowClosed):
            return ""
        if isinstance(event, CommandRejected):
            return self.paint(f"✗ rejected {event.command_type} from {event.actor or '?'}: {event.reason}", "yellow")
        if isinstance(event, EncounterEnded):
            winner = f"{event.winner} wins" if event.winner else "no winner"
            return self.paint(f"Encounter over: {winner} ({event.reason})", "bold", "green")
        if isinstance(event, SeedRevealed):
            return self.paint(f"seed revealed: {event.seed}", "dim")
        return self._generic(event, state)

    def _generic(self, event: Event, state: EncounterState | None = None) -> str:
        tag = type(event).__struct_config__.tag
        sentence = SENTENCES.get(tag) if state is not None else None
        if sentence is not None:
            try:
                return sentence(self, event, state)
            except (AttributeError, KeyError, TypeError):
                pass  # a newer schema than the sentence knows: fall back to the fields
        parts = []
        for field in event.__struct_fields__:
            value = getattr(event, field)
            if isinstance(value, Roll):
                parts.append(f"{field}: {explain_roll(value, details=self.details)}")
            elif value not in ({}, [], None, ""):
                parts.append(f"{field}={_short(value)}")
        return f"{tag} " + ", ".join(parts)


def _short(value: Any) -> str:
    if isinstance(value, msgspec.Struct):
        value = msgspec.to_builtins(value)
    text = str(value)
    return text if len(text) < 120 else text[:117] + "…"


def _fields(mapping: dict[str, Any]) -> str:
    return ", ".join(f"{k}={_short(v)}" for k, v in mapping.items())


def print_line(text: str, stream: TextIO = sys.stdout) -> None:
    if text:
        print(text, file=stream, flush=True)


def describe_options(options: SeatOptions) -> list[str]:
    """A seat's options as lines for the terminal (the JSON has every detail)."""
    lines = [f"seat {options.seat} ({options.role}) at version {options.version}: waiting for "
             f"{options.waiting.kind}{' of ' + ', '.join(options.waiting.combatants) if options.waiting.combatants else ''}"
             f"{f' (window {options.waiting.window})' if options.waiting.window is not None else ''}"
             f"{f', deadline {options.waiting.deadline_ms / 1000:g} s' if options.waiting.deadline_ms else ''}"]
    for combatant in options.combatants:
        if combatant.why_not:
            lines.append(f"  {combatant.combatant}: nothing now — {combatant.why_not}")
            continue
        if combatant.window is not None:
            window = combatant.window
            lines.append(f"  {combatant.combatant}: answer window {window.window} ({window.trigger.replace('_', ' ')} by "
                         f"{window.actor}; {window.deadline_ms / 1000:g} s; awaited: {', '.join(window.awaited)})")
            for reaction in window.reactions:
                for choice in reaction.choices:
                    odds = f", {choice.hit_chance:.0%} to hit" if choice.hit_chance is not None else ""
                    lines.append(f"    {reaction.label}: {choice.label}{odds}")
            lines.append("    pass")
            continue
        lines.append(f"  {combatant.combatant}: its turn"
                     + (f" ({combatant.turn_deadline_ms / 1000:g} s)" if combatant.turn_deadline_ms else ""))
        for attack in combatant.attacks:
            mods = ", ".join(f"{m.value:+d} {m.source} ({m.rule})" for m in attack.modifiers)
            lines.append(f"    attack {attack.target} with {attack.weapon}{' ' + attack.mode if attack.mode else ''}: "
                         f"{attack.hit_chance:.0%} to hit{f' vs {attack.target_number}' if attack.target_number is not None else ''}"
                         f"{f' [{mods}]' if mods else ''}")
        if combatant.moves:
            dangerous = [m for m in combatant.moves if m.threats]
            lines.append(f"    move: {len(combatant.moves)} squares reachable, {len(dangerous)} under threat")
        for action in combatant.actions:
            lines.append(f"    {action.label}" + (f" ({len(action.choices)} ways)" if len(action.choices) > 1 else ""))
        lines.append("    end turn")
    if options.gm is not None:
        gm = options.gm
        lines.append(f"  GM: {', '.join(gm.commands) or 'nothing now'}"
                     + (f"; pending calls: {', '.join(c.id + ' (' + c.text + ')' for c in gm.calls)}" if gm.calls else ""))
    return lines
