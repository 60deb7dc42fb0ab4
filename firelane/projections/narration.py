"""A readable, coloured, one-line-per-event narration of an encounter's log.

Generic events get their own sentences; a rule system's own events are shown
with their fields, and any roll inside them is explained die by die.
Colour follows the NO_COLOR convention and is off when output is not a terminal.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any, TextIO

import msgspec

from firelane.engine.branches import undone_by_rewind
from firelane.engine.core import BaseRuleSystem
from firelane.engine.durations import describe_duration
from firelane.engine.registry import UnknownSystem, get_system
from firelane.engine.state import EncounterState
from firelane.events.options_schemas import SeatOptions
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    CombatantDown,
    CommandRejected,
    CommandRepeated,
    CommandsDropped,
    ConditionApplied,
    ConditionRemoved,
    DamageDealt,
    EncounterEnded,
    EncounterRewound,
    EncounterStarted,
    Event,
    GMAdjusted,
    GMRuled,
    InitiativeRolled,
    WindowTimedOut,
    Moved,
    ReactionClaimed,
    ReactionDenied,
    ReactionPassed,
    ReactionsOrdered,
    ReactionWindowClosed,
    ReactionWindowOpened,
    ReactionWindowResumed,
    Roll,
    RoundStarted,
    SeedRevealed,
    ClientSeedAdded,
    StateAdjusted,
    TestRolled,
    TurnEnded,
    TurnSkipped,
    TurnStarted,
    TurnTimedOut,
)
from firelane.engine.labels import Labels
from firelane.engine.wording import combatant_names, counted, explain_roll, plain_words, weapon_name, with_names

# What every view of a fight (or rest) whose dice come from a seed text says.
REPRODUCIBLE_DICE_WARNING = "reproducible dice: anyone who knows the seed text can predict every roll"

_NO_SYSTEM = BaseRuleSystem()  # no sentences of its own
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
        # The words of the system whose event is being narrated (set per line).
        self.words: Labels = _NO_SYSTEM.labels

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
        return self.paint(named(state, combatant), side_colour, "bold")

    def explain(self, roll: Roll) -> str:
        """A roll explained in the words of the system being narrated."""
        return explain_roll(roll, details=self.details, words=self.words)

    def said(self, kind: str, key: str) -> str:
        """A reaction, action, condition, weapon... by its label (engine/labels.py)."""
        return self.words.word(kind, key)

    def line(self, version: int, event: Event, state: EncounterState, *, undone_by: int | None = None) -> str:
        """Narrate ``event`` given ``state`` AFTER it was applied; ``undone_by``:
        the version of the GM's rewind that undid it, if one did (the line says so)."""
        text = self._describe(event, state)
        if not text:
            return ""
        if undone_by is not None:
            return (self.paint(f"{version:>5} ", "dim") + self.paint(f"[undone at {undone_by}] ", "yellow")
                    + self.paint(_with_names(_unpainted(text), state), "dim"))
        return self.paint(f"{version:>5} ", "dim") + _with_names(text, state)

    def _describe(self, event: Event, state: EncounterState) -> str:  # noqa: C901 - one branch per event type
        n = lambda cid: self.name(state, cid)  # noqa: E731
        system = _system_of(state)
        self.words = system.labels
        own = system.shared_event_sentences.get(type(event).__struct_config__.tag)
        if own is not None:  # a shared event a system fills with its own details
            try:
                text = own(self, event, state)
            except (AttributeError, KeyError, TypeError, ValueError):
                text = None  # details of a shape the sentence does not know: the shared sentence
            if text is not None:
                return text
        if isinstance(event, EncounterStarted):
            setup = event.setup
            sides: dict[str, list[str]] = {}
            for c in setup.combatants:
                sides.setdefault(c.side, []).append(named(state, c.id) if c.id in state.combatants else c.name)
            roster = "; ".join(f"{side}: {', '.join(names)}" for side, names in sides.items())
            begins = self.paint(f"Encounter {setup.name or event.encounter} ({setup.system}) begins — {roster}", "bold")
            if event.reproducible_dice:
                begins += self.paint(f"  {REPRODUCIBLE_DICE_WARNING}", "yellow")
            return begins + self.paint(f"  seed commitment {event.seed_commitment[:16]}…", "dim")
        if isinstance(event, RoundStarted):
            heading = self.paint(f"══ Round {event.round} ══", "bold", "yellow")
            # Systems that roll initiative each round show the new roll next; the others keep the order.
            if state.turn_order and not _rolls_each_round(state.system):
                order = ", ".join(f"{n(c)} {state.combatants[c].initiative}" for c in state.turn_order
                                  if not state.combatants[c].out_of_fight)
                heading += f"  initiative order: {order}"
            return heading
        if isinstance(event, InitiativeRolled):
            totals = {e.combatant: e.total for e in event.entries}
            order = ", ".join(f"{n(c)} {totals.get(c, '')}" for c in event.order)
            return f"Initiative{f' ({event.rule})' if event.rule else ''}: {order}"
        if isinstance(event, TurnStarted):
            timer = f" ({_seconds(event.deadline_ms)} on the clock)" if event.deadline_ms else ""
            return self.paint("▶ ", "bold") + f"{n(event.combatant)}'s turn{timer}"
        if isinstance(event, TurnTimedOut):
            then = {"ai": "the AI plays the rest of it",
                    "gm": "the GM is asked (the turn may still be played meanwhile)"}.get(event.then, "the turn ends")
            return self.paint(f"⏱ {named(state, event.combatant)}'s time is up: {then}", "yellow")
        if isinstance(event, WindowTimedOut):
            return self.paint(f"⏱ window {event.window}'s time is up waiting for "
                              f"{', '.join(n(c) for c in event.waiting)}: the GM is asked "
                              f"(a late answer still counts)", "yellow")
        if isinstance(event, TurnEnded):
            return self.paint(f"  {named(state, event.combatant)} ends the turn", "dim")
        if isinstance(event, TurnSkipped):
            return f"{n(event.combatant)} loses the turn: {event.reason}"
        if isinstance(event, Moved):
            path = " → ".join(f"({x},{y})" for x, y in event.path[-3:])
            exposed = self.paint(" EXPOSED", "yellow") if event.exposed else ""
            mode = "" if event.mode == "move" else f" ({self.said('actions', event.mode)})"
            return f"{n(event.combatant)} moves{mode} to {path}{f', {event.cost:g}' if event.cost else ''}{exposed}"
        if isinstance(event, ActionTaken):
            details = _fields(event.details, state)
            return f"{n(event.combatant)} uses {self.said('actions', event.action)} ({self.said('actions', event.slot)}){f' {details}' if details else ''}"
        if isinstance(event, AttackResolved):
            verdict = self.paint("HIT", "red", "bold") if event.hit else self.paint("miss", "green")
            crit = self.paint(" CRITICAL", "red", "bold") if event.critical else ""
            kind = "" if event.kind == "attack" else self.paint(f" ({self.said('modes', event.kind)})", "yellow")
            text = (f"{n(event.attacker)} → {n(event.target)} with {weapon_name(state, event.attacker, event.weapon, self.words)}{kind}: {verdict}{crit}  "
                    + self.paint(self.explain(event.roll), "dim"))
            if event.defense is not None:
                text += self.paint(f"  defence: {self.explain(event.defense)}", "dim")
            return text
        if isinstance(event, DamageDealt):
            left = f" ({event.remaining} left)" if event.remaining is not None else ""
            roll = self.paint(f"  {self.explain(event.roll)}", "dim") if event.roll else ""
            return f"{n(event.target)} takes {self.paint(str(event.amount), 'red', 'bold')} damage{left}{roll}"
        if isinstance(event, TestRolled):
            verdict = self.paint("passes", "green") if event.success else self.paint("fails", "red")
            return f"{n(event.combatant)} {verdict} {event.test.replace('_', ' ')}  " + self.paint(self.explain(event.roll), "dim")
        if isinstance(event, ConditionApplied):
            until = f" {_until(event.until, state)}" if event.until else ""
            return (f"{n(event.combatant)} is {self.paint(self.said('conditions', event.condition), 'yellow')}{until}"
                    f"{f' ({event.rule})' if event.rule else ''}")
        if isinstance(event, ConditionRemoved):
            return (f"{n(event.combatant)} is no longer {self.said('conditions', event.condition)}"
                    f"{f': {event.reason}' if event.reason else ''}")
        if isinstance(event, CombatantDown):
            return self.paint("✖ ", "red") + f"{n(event.combatant)} is down: {event.reason}"
        if isinstance(event, StateAdjusted):
            return self.paint(f"  {named(state, event.combatant)}: {_fields(event.changes, state, self.words)}"
                              f"{f' — {event.reason}' if event.reason else ''}", "dim")
        if isinstance(event, GMAdjusted):
            return self.paint("GM: ", "bold", "magenta") + (f"{n(event.combatant)} — {_fields(event.changes, state, self.words)}"
                                                            f" ({event.reason})")
        if isinstance(event, GMRuled):
            on = " on a deadline's end" if event.call == "time-up" else f" on {event.call}" if event.call else ""
            return self.paint("GM rules", "bold", "magenta") + f"{on}: {event.ruling}{f' ({event.reason})' if event.reason else ''}"
        if isinstance(event, EncounterRewound):
            undone = _spans(undone_by_rewind(state.undone, state.version))
            undoes = f": {undone} undone" if undone else ""
            return self.paint(f"⟲ GM rewinds the fight to event {event.to_version}{undoes} — "
                              f"{event.reason}", "bold", "magenta")
        if isinstance(event, ReactionWindowOpened):
            reactors = ", ".join(f"{n(r.combatant)} ({' or '.join(self.said('reactions', x) for x in r.reactions)})"
                                 for r in event.reactors)
            nested = f", inside window {event.nested_in}" if event.nested_in is not None else ""
            return (self.paint(f"⚡ window {event.window}", "yellow") + f" ({_seconds(event.deadline_ms)} to answer{nested}): "
                    f"{trigger_words(self.words, event.trigger)} by {n(event.actor)} — waiting for {reactors}")
        if isinstance(event, ReactionWindowResumed):
            return self.paint(f"  window {event.window} goes on with its remaining claims", "dim")
        if isinstance(event, ReactionClaimed):
            chosen = f" ({_readable(event.options, state)})" if event.options else ""
            return f"  {n(event.combatant)} claims {self.paint(self.said('reactions', event.reaction), 'yellow')}{chosen} in window {event.window}"
        if isinstance(event, ReactionPassed):
            return self.paint(f"  {named(state, event.combatant)} passes in window {event.window}", "dim")
        if isinstance(event, ReactionsOrdered):
            timed = (f" (no answer in time: {', '.join(named(state, c) for c in event.timed_out if c in state.combatants)})"
                     if event.timed_out else "")
            if not event.order:
                return self.paint(f"  window {event.window}: no reactions{timed}", "dim")
            order = "; ".join(f"{i}. {n(c.combatant)} {self.said('reactions', c.reaction)}" for i, c in enumerate(event.order, start=1))
            return f"  window {event.window}, arbiter order: {order}{timed}"
        if isinstance(event, ReactionDenied):
            return f"  {n(event.combatant)}'s {self.said('reactions', event.reaction)} is denied: {event.reason}"
        if isinstance(event, ReactionWindowClosed):
            return ""
        if isinstance(event, CommandRejected):
            what = event.command_type if event.command_type != "?" else "an unreadable command"
            who = named(state, event.actor) if event.actor in state.combatants else (event.actor or "an unknown sender")
            return self.paint(f"✗ refused {what} from {who}: {event.reason}", "yellow")
        if isinstance(event, CommandsDropped):
            many = "command" if event.count == 1 else "commands"
            return self.paint(f"✗ {event.count} more refused {many} from seat {event.seat}, not recorded one by one "
                              f"(the last: its inbox entry {event.last_inbox_id}): {event.reason}", "yellow")
        if isinstance(event, CommandRepeated):
            who = named(state, event.actor) if event.actor in state.combatants else (event.actor or "someone")
            where = f" (answered at version {event.first_version})" if event.first_version else ""
            return self.paint(f"↺ {event.command_type} from {who} sent again: it counts once{where}", "dim")
        if isinstance(event, EncounterEnded):
            winner = winner_words(event.winner)
            by = " — called by the GM" if event.by == "gm" else ""
            return self.paint(f"Encounter over: {winner} ({event.reason}){by}", "bold", "green")
        if isinstance(event, SeedRevealed):
            return self.paint(f"seed revealed: {event.seed}", "dim")
        if isinstance(event, ClientSeedAdded):
            seat = next((s for s in state.seats if s.id == event.seat), None) if state is not None else None
            who = seat.name if seat is not None and seat.name else event.seat
            return self.paint(f"{who} added a client seed ({event.client_seed!r}): every die from here on mixes it in",
                              "dim")
        return self._generic(event, state)

    def _generic(self, event: Event, state: EncounterState | None = None) -> str:
        tag = type(event).__struct_config__.tag
        sentence = _system_of(state).sentences.get(tag) if state is not None else None
        if sentence is not None:
            try:
                return sentence(self, event, state)
            except (AttributeError, KeyError, TypeError):
                pass  # a newer schema than the sentence knows: fall back to the fields
        parts = []
        for field in event.__struct_fields__:
            value = getattr(event, field)
            if isinstance(value, Roll):
                parts.append(f"{self.words.word('fields', field)}: {self.explain(value)}")
            elif value not in ({}, [], None, ""):
                parts.append(f"{self.words.word('fields', field)} {_readable(value, state)}")
        return f"{_words(tag)}: " + ", ".join(parts)


_ANSI = re.compile("\x1b\\[[0-9;]*m")


def _unpainted(text: str) -> str:
    """Text without its colours (an undone line is drawn dim as a whole)."""
    return _ANSI.sub("", text)


def _with_names(text: str, state: EncounterState) -> str:
    """The rules write combatant ids into roll purposes and reasons
    ("Defense of sgt-kell"); a reader wants names, and words for the
    identifiers left in reasons ("start_of_turn") (engine/wording.py)."""
    return plain_words(with_names(text, combatant_names(state)), _system_of(state).labels)


def named(state: EncounterState, combatant: str) -> str:
    """A combatant's name as a reader tells it from the others ("Cultist 2" when two are "Cultist")."""
    return combatant_names(state).get(combatant, combatant)


def winner_words(winner: str | None) -> str:
    """Who won, with no verb to agree with a side's name ("raiders wins")."""
    return f"won by {winner.replace('_', ' ')}" if winner else "no winner"


def trigger_words(words: Labels, trigger: str) -> str:
    """What opened a reaction window: "hit:controlled_fire" -> "a hit (Controlled Fire)"."""
    kind, _, detail = trigger.partition(":")
    said = words.word("triggers", kind)
    return f"{said} ({words.word('modes', detail)})" if detail else said


def _words(tag: str) -> str:
    """'BBMarkMoved' -> 'mark moved' (the system prefix dropped)."""
    for prefix in ("D100D", "D100Z", "BB", "R6"):
        if tag.startswith(prefix) and tag[len(prefix):][:1].isupper():
            tag = tag[len(prefix):]
            break
    return "".join(f" {c.lower()}" if c.isupper() else c for c in tag).strip()


def _readable(value: Any, state: EncounterState | None = None, depth: int = 0) -> str:  # noqa: C901
    """A value as a person reads it: names for combatant ids, "a 23, b 4" for
    a mapping, squares as (x, y); never a Python repr."""
    if isinstance(value, msgspec.Struct):
        value = msgspec.to_builtins(value)
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        if state is not None and value in state.combatants:
            return named(state, value)
        return value.replace("_", " ")
    if isinstance(value, (list, tuple)):
        if len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return f"({value[0]}, {value[1]})"
        if depth > 2:
            return f"{len(value)} items"
        text = ", ".join(_readable(v, state, depth + 1) for v in value) or "none"
    elif isinstance(value, dict):
        if depth > 2:
            return f"{len(value)} entries"
        text = ", ".join(f"{_readable(k, state, depth + 1)} {_readable(v, state, depth + 1)}" for k, v in value.items()) or "none"
    else:
        text = f"{value:g}" if isinstance(value, float) else str(value)
    return text if len(text) < 120 else text[:117] + "…"


def _fields(mapping: dict[str, Any], state: EncounterState | None = None, words: Labels | None = None) -> str:
    said = words.word if words is not None else (lambda _kind, key: key.replace("_", " "))
    return ", ".join(f"{said('fields', k)} {_readable(v, state)}" for k, v in mapping.items())


def _spans(spans: list[tuple[int, int]]) -> str:
    """Version ranges as a person reads them: "events 77–92", "event 80"."""
    if not spans:
        return ""
    parts = [f"{low}" if low == high else f"{low}–{high}" for low, high in spans]
    many = len(spans) > 1 or spans[0][0] != spans[0][1]
    return f"event{'s' if many else ''} {', '.join(parts)}"


def _seconds(milliseconds: int | None) -> str:
    if (milliseconds or 0) >= 3_600_000:
        return describe_duration(milliseconds or 0)  # "1 d 12 h", not "129600 s"
    return f"{(milliseconds or 0) / 1000:g} s"


def _until(until: str, state: EncounterState) -> str:
    """A condition's expiry as a sentence: 'start_of_turn:kell' -> "until the start of Kell's turn"."""
    kind, _, who = until.partition(":")
    name = named(state, who) if who in state.combatants else _readable(who, state)
    if kind in ("start_of_turn", "end_of_turn") and who:
        return f"until the {'start' if kind == 'start_of_turn' else 'end'} of {name}'s turn"
    if kind == "end_of_turn":
        return "until the end of the turn"
    if kind == "start_of_turn":
        return "until the start of the next turn"
    if kind == "round" and who:
        return f"until round {who}"
    return f"until {_readable(until, state)}"


def _rolls_each_round(system_name: str) -> bool:
    try:
        return bool(get_system(system_name).initiative_each_round) if system_name else False
    except UnknownSystem:
        return False


def _system_of(state: EncounterState) -> BaseRuleSystem:
    """The rule system whose sentences narrate ``state``'s events (one with
    none for a system this firelane does not know)."""
    try:
        return get_system(state.system) if state.system else _NO_SYSTEM
    except UnknownSystem:
        return _NO_SYSTEM


def print_line(text: str, stream: TextIO = sys.stdout) -> None:
    if text:
        print(text, file=stream, flush=True)


def describe_options(options: SeatOptions, state: EncounterState | None = None) -> list[str]:
    """A seat's options as lines for the terminal (the JSON has every detail),
    with names for ids when the ``state`` they were computed in is given."""
    names = combatant_names(state) if state is not None else {}
    words = _system_of(state).labels if state is not None else _NO_SYSTEM.labels

    def who(cid: str) -> str:
        return names.get(cid, cid)

    def say(text: str) -> str:
        return plain_words(with_names(text, names), words)

    waiting = options.waiting
    status = ("the encounter has ended" if waiting.kind == "ended" else
              f"waiting for {waiting.kind}{' of ' + ', '.join(who(c) for c in waiting.combatants) if waiting.combatants else ''}"
              f"{f' (window {waiting.window})' if waiting.window is not None else ''}"
              f"{f', deadline {waiting.deadline_ms / 1000:g} s' if waiting.deadline_ms else ''}")
    lines = [f"seat {options.seat} ({options.role}) at version {options.version}: {status}"]
    for combatant in options.combatants:
        if combatant.why_not:
            lines.append(f"  {who(combatant.combatant)}: nothing now — {say(combatant.why_not)}")
            continue
        if combatant.window is not None:
            window = combatant.window
            about = window.prompt or f"{trigger_words(words, window.trigger)} by {who(window.actor)}"
            lines.append(f"  {who(combatant.combatant)}: answer window {window.window} ({say(about)}; "
                         f"{window.deadline_ms / 1000:g} s; awaited: {', '.join(who(c) for c in window.awaited)})")
            for reaction in window.reactions:
                for choice in reaction.choices:
                    odds = (f" — {choice.chance_of or 'it works'}: {choice.hit_chance:.0%}"
                            if choice.hit_chance is not None else "")
                    lines.append(f"    {say(reaction.label)}: {say(choice.label)}{odds}")
            lines.append("    pass")
            continue
        lines.append(f"  {who(combatant.combatant)}: its turn"
                     + (f" ({combatant.turn_deadline_ms / 1000:g} s)" if combatant.turn_deadline_ms else ""))
        for attack in combatant.attacks:
            mods = ", ".join(f"{m.value:+d} {say(m.source)} ({m.rule})" for m in attack.modifiers)
            lines.append(f"    attack {who(attack.target)} with {attack.label or say(attack.weapon)}: "
                         f"{attack.chance_of}: {attack.hit_chance:.0%}"
                         f"{f' (needs {attack.target_number})' if attack.target_number is not None else ''}"
                         f"{f'; {mods}' if mods else ''}")
        if combatant.moves:
            dangerous = [m for m in combatant.moves if m.threats]
            lines.append(f"    move: {counted(len(combatant.moves), 'square')} reachable, {len(dangerous)} under threat")
        for action in combatant.actions:
            ways = len(action.choices)
            lines.append(f"    {say(action.label)}" + (f" ({ways} ways)" if ways > 1 else ""))
        lines.append("    end turn")
    if options.gm is not None:
        gm = options.gm
        lines.append(f"  GM: {', '.join(gm.commands) or 'nothing now'}"
                     + (f"; pending calls: {', '.join(c.id + ' (' + say(c.text) + ')' for c in gm.calls)}" if gm.calls else ""))
        if gm.rewind_targets:
            newest = gm.rewind_targets[-12:]
            lines.append(f"  rewind to version: {', '.join(map(str, newest))}"
                         + (f" (and {len(gm.rewind_targets) - len(newest)} earlier)" if len(gm.rewind_targets) > len(newest) else ""))
    return lines
