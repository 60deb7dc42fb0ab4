"""Words for what the rules wrote: a roll explained die by die, squares, names.

Pure text, shared by the narration (projections/narration.py), the audit, and
each rule system's own sentences (``engine/systems/<name>/narration.py``),
which get a narrator object with ``name(state, combatant)``, ``paint(text,
*styles)`` and ``details`` and return one line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from firelane.engine.labels import Labels
from firelane.engine.state import EncounterState
from firelane.events.schemas import Roll

# (narrator, event, state after the event) -> the sentence; an optional one may
# return None to leave a shared event to the shared sentence.
Sentence = Callable[[Any, Any, EncounterState], str]
OptionalSentence = Callable[[Any, Any, EncounterState], "str | None"]


def counted(number: float, word: str, plural: str | None = None) -> str:
    """"1 round", "2 rounds", "1 die" / "3 dice" (with ``plural``)."""
    many = plural if plural is not None else word + "s"
    return f"{number:g} {word if number == 1 else many}"


def detail_value(value: Any, words: Labels | None = None, key: str = "") -> str | None:
    """One detail of a roll as words (None: it says nothing, as an empty list,
    a flag that is off or a missing value)."""
    if value is None or value is False or value in ("", [], {}):
        return None
    if value is True:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):
        if key == "weapon" and words is not None:
            return words.word("weapons", value)
        return value.replace("_", " ")
    if isinstance(value, Mapping):
        if "source" in value:  # a modifier: "+2 Full Auto (R6-31)"
            amount = value.get("dice", value.get("value"))
            sign = f"{amount:+d}{'D' if 'dice' in value else ''} " if isinstance(amount, int) else ""
            rule = f" ({value['rule']})" if value.get("rule") else ""
            return f"{sign}{value['source']}{rule}"
        said = [f"{(words.word('details', str(k)) if words else str(k).replace('_', ' '))} {v}".strip()
                for k, v in ((k, detail_value(v, words, str(k))) for k, v in value.items()) if v is not None]
        return ", ".join(said) or None
    if isinstance(value, (list, tuple)):
        said = [v for v in (detail_value(item, words, key) for item in value) if v]
        return ", ".join(said) or None
    return str(value)


def details_text(details: Mapping[str, Any], words: Labels | None = None) -> str:
    """A roll's details in words, "; " between them: each key by its label
    (a system's ``details`` labels; a key labelled "" is said elsewhere and
    left out), a flag that is on by its label alone, lists joined."""
    parts = []
    for key, value in details.items():
        label = words.word("details", key) if words is not None else key.replace("_", " ")
        if not label:
            continue
        said = detail_value(value, words, key)
        if said is None:
            continue
        parts.append(f"{label} {said}".strip() if said else label)
    return "; ".join(parts)


def explain_roll(roll: Roll, *, details: bool = True, words: Labels | None = None) -> str:
    kept = set(roll.counted())
    dice = " ".join(
        f"d{d.sides}:{d.face}" + ("" if i in kept else "(dropped)") for i, d in enumerate(roll.dice)
    )
    head = f"{roll.purpose} [{roll.rule}] {dice or 'no dice'}"
    terms = " ".join(f"{modifier.value:+d} {modifier.source} ({modifier.rule})" for modifier in roll.modifiers)
    if roll.compare == "<=" and roll.target is not None and terms:
        # A roll-under test: the dice are the total, the modifiers make the target (`sum_problem`).
        text = f"{head} = {roll.total} vs {roll.target} = {terms} ({roll.compare})"
    else:
        text = f"{head} {terms}".rstrip() + f" = {roll.total}"
        if roll.target is not None:
            text += f" vs {roll.target} ({roll.compare})"
    if roll.success is not None:
        text += " success" if roll.success else " failure"
    if roll.notes:
        text += f" [{'; '.join(roll.notes)}]"
    said = details_text(roll.details, words) if details and roll.details else ""
    if said:
        text += f" ({said})"
    return text


def squares_text(path: Iterable[Any]) -> str:
    """(1,2) → (1,3) → ..."""
    return " → ".join(f"({x},{y})" for x, y in path)


def roll_text(narrator: Any, roll: Roll | None) -> str:
    """A roll explained, dimmed, after two spaces (nothing when there is no roll)."""
    return narrator.paint(f"  {explain_roll(roll, details=narrator.details, words=getattr(narrator, 'words', None))}",
                          "dim") if roll is not None else ""


def names_text(narrator: Any, state: EncounterState, ids: Any) -> str:
    """Combatants' names, or "no one"."""
    return ", ".join(narrator.name(state, c) for c in ids) if ids else "no one"


def weapon_text(name: Any, words: Labels | None = None) -> str:
    return words.word("weapons", str(name)) if words is not None else str(name).replace("_", " ")


_ID_CHARS = "A-Za-z0-9_.-"
_patterns: dict[tuple[str, ...], Any] = {}


def _nameable(cid: str) -> bool:
    """An id a text can be searched for: long enough, or plainly not a word
    ("g2"); the toy's "a" and "b" are left alone."""
    return len(cid) >= 3 or (len(cid) == 2 and any(ch.isdigit() or ch in "-_." for ch in cid))


def with_names(text: str, names: Mapping[str, str]) -> str:
    """``text`` with each combatant id (``names``: id -> name) said as its name.
    The rules write ids into roll purposes, reasons and notes ("Defense of
    sgt-kell"); a reader wants names."""
    ids = tuple(sorted((cid for cid in names if _nameable(cid)), key=len, reverse=True))
    if not ids or not text:
        return text
    pattern = _patterns.get(ids)
    if pattern is None:
        if len(_patterns) > 256:
            _patterns.clear()
        pattern = _patterns[ids] = re.compile(
            rf"(?<![{_ID_CHARS}])(" + "|".join(re.escape(cid) for cid in ids) + rf")(?![{_ID_CHARS}])")
    return pattern.sub(lambda match: names[match.group(1)], text)


def combatant_names(state: EncounterState) -> dict[str, str]:
    """Each combatant's name as a reader tells it from the others: two with one
    name get a number each in the order of their ids ("Cultist 1", "Cultist 2"),
    as the page numbers them (assets/util.js)."""
    by_name: dict[str, list[str]] = {}
    for cid, combatant in sorted(state.combatants.items()):
        by_name.setdefault(combatant.name or cid, []).append(cid)
    names = {}
    for name, cids in by_name.items():
        for number, cid in enumerate(cids, start=1):
            names[cid] = name if len(cids) == 1 else f"{name} {number}"
    return names


# ------------------------------------------------------------------ identifiers said as words

SNAKE_CASE = re.compile(r"(?<![\w-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
# Where an identifier written by the rules is looked up, in this order.
_LOOKUP_KINDS = ("conditions", "weapons", "modes", "actions", "reactions", "fields", "triggers")


def identifier_words(key: str, words: Labels | None) -> str:
    """An identifier the rules wrote (``no_active_defense``, ``marksman_rifle``)
    by the system's label for it, else with spaces for underscores."""
    if words is not None:
        for kind in _LOOKUP_KINDS:
            said = getattr(words, kind).get(key)
            if said:
                return said
    return key.replace("_", " ")


def plain_words(text: str, words: Labels | None = None) -> str:
    """``text`` with every snake_case identifier in it said as words."""
    if not text or "_" not in text:
        return text
    return SNAKE_CASE.sub(lambda match: identifier_words(match.group(0), words), text)


def mode_words(mode: str, words: Labels | None = None) -> str:
    """An attack's mode as words ("" for the plain one): "controlled_fire rof 1"
    -> "Controlled Fire, rate of fire 1"; "normal, called shot: held_item" ->
    "called shot: held item"."""
    if words is not None and mode in words.modes:
        return words.modes[mode]
    parts = []
    for part in (p.strip() for p in mode.split(",")):
        if not part or part in ("normal", "attack"):
            continue
        if words is not None and part in words.modes:
            parts.append(words.modes[part])
            continue
        tokens = re.split(r"(\s+|:)", part)
        said = "".join(words.modes.get(t, identifier_words(t, words)) if words is not None else t.replace("_", " ")
                       for t in tokens)
        parts.append(said)
    return ", ".join(p for p in parts if p)


def percent(chance: float) -> str:
    return f"{chance:.0%}"


# ------------------------------------------------------------------ options in words


def trigger_text(trigger: str, words: Labels | None = None) -> str:
    """What opened a reaction window: "hit:controlled_fire" -> "a hit (Controlled Fire)"."""
    kind, _, detail = trigger.partition(":")
    said = words.word("triggers", kind) if words is not None else kind.replace("_", " ")
    return f"{said} ({mode_words(detail, words) or identifier_words(detail, words)})" if detail else said


def worded_options(options: Any, state: EncounterState, words: Labels) -> Any:
    """A combatant's options (events/options_schemas.py) with everything a
    person reads in words: names for ids in labels, notes and modifiers, each
    attack's weapon and mode by their labels, each threat's reaction, each
    window's prompt, and what every chance is the chance of. Commands are
    left as they are."""
    import msgspec  # noqa: PLC0415 - only the options need it

    names = combatant_names(state)

    def say(text: str) -> str:
        return plain_words(with_names(text, names), words)

    def choice(c: Any, chance_of: str) -> Any:
        return msgspec.structs.replace(c, label=say(c.label), notes=[say(n) for n in c.notes],
                                       chance_of=say(c.chance_of) or (chance_of if c.hit_chance is not None else ""))

    attacks = []
    for attack in options.attacks:
        mode = mode_words(attack.mode, words)
        label = weapon_name(state, options.combatant, attack.weapon, words) + (f" ({mode})" if mode else "")
        attacks.append(msgspec.structs.replace(
            attack, label=label, mode_label=mode, notes=[say(n) for n in attack.notes],
            modifiers=[msgspec.structs.replace(m, source=say(m.source)) for m in attack.modifiers]))
    actions = [msgspec.structs.replace(a, label=say(a.label), choices=[choice(c, "it works") for c in a.choices])
               for a in options.actions]
    moves = [msgspec.structs.replace(m, threats=[msgspec.structs.replace(t, label=words.word("reactions", t.reaction))
                                                 for t in m.threats]) if m.threats else m
             for m in options.moves]
    window = options.window
    if window is not None:
        reactions = [msgspec.structs.replace(r, label=say(r.label), choices=[choice(c, "your attack hits") for c in r.choices])
                     for r in window.reactions]
        prompt = f"{trigger_text(window.trigger, words)} by {names.get(window.actor, window.actor)}"
        window = msgspec.structs.replace(window, reactions=reactions, prompt=prompt)
    return msgspec.structs.replace(options, why_not=say(options.why_not), attacks=attacks, actions=actions, moves=moves,
                                   window=window)


def weapon_name(state: EncounterState, combatant: str, weapon: str, words: Labels | None = None) -> str:
    """A weapon as a person reads it: the system's label, else the name the
    combatant's sheet gives the weapon of that id (RonD6's "smg" is its
    "submachine gun"), else the id in words."""
    if words is not None and weapon in words.weapons:
        return words.weapons[weapon]
    holder = state.combatants.get(combatant)
    for held in getattr(holder, "weapons", None) or []:
        if getattr(held, "id", None) == weapon and getattr(held, "name", ""):
            return str(held.name)
    return weapon.replace("_", " ")


def name_of(state: EncounterState, combatant: str) -> str:
    """One combatant's name as a reader tells it from the others (`combatant_names`)."""
    return combatant_names(state).get(combatant, combatant)
