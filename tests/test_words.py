"""The words a person reads (issue 19 items 7, 8 and 13): seeded fights in all
four systems, rendered as the page, the CLI and the campaign show them — the
narration with its roll details, every option's labels and notes, every
prompt, and the characters' history — hold no internal identifier, no raw
data dump, no Python or JSON literal and no wrong plural."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from firelane.engine.campaign import (
    CampaignState,
    DowntimeRequest,
    aftermath,
    create_character,
    evolve,
    finish_downtime,
    resolve_setup,
    start_downtime,
)
from firelane.engine.dice import commit_seed
from firelane.engine.seats import ENGINE_SEAT
from firelane.engine.registry import demo_setup, get_system
from firelane.engine.simulate import run_headless
from firelane.events.schemas import EncounterSetup
from firelane.projections.characters import history_text
from firelane.projections.narration import describe_options
from firelane.web.table import SegmentNarrator, _roll_json
from firelane.projections.audit import iter_rolls

SYSTEMS = ["bolt-and-blade", "d100-degrees", "d100-zones", "rond6"]
EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"

# What a person must never read.
SNAKE_CASE = re.compile(r"(?<![\w-])[a-z][a-z0-9]*_[a-z0-9_]+\b")
CURLY_DUMP = re.compile(r"[{}]")  # no sentence needs a brace
# A bracketed list of data: empty, quoted items, key=value, or numbers and commas.
SQUARE_DUMP = re.compile(r"\[\s*\]|\[\s*['\"]|['\"]\s*,\s*['\"]|\[[^\[\]]*\w=[^\[\]]*\]"
                         r"|\[\s*-?\d+(?:\s*,\s*-?\d+)+\s*\]|\[\s*\[")
LITERAL = re.compile(r"\b(None|True|False|null|true|false)\b")
COUNTED = ("round", "rounds", "fight", "fights", "day", "days", "shot", "shots", "hit", "hits", "wound", "wounds",
           "square", "squares", "action", "actions", "point", "points", "event", "events", "item", "items", "rest", "rests")
ONE_PLURAL = re.compile(r"(?<![\d.,+-])\b1 (rounds|fights|days|shots|hits|wounds|squares|actions|points|events|items|rests)\b")
MANY_SINGULAR = re.compile(r"(?<![\d.,+-])\b(0|[2-9]|\d{2,}) (round|fight|day|shot|hit|wound|square|action|point|event|item|rest)\b"
                           r"(?!\s*(?:of|number|limit|\d))")
PLURAL_SIDE_WINS = re.compile(r"\b[a-z]+s wins\b", re.IGNORECASE)


def problems(text: str, ids: set[str], shared_names: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    """What is wrong with one text a person reads ([] when nothing)."""
    found = []
    for name, pattern in (("an identifier", SNAKE_CASE), ("a brace", CURLY_DUMP), ("a raw list", SQUARE_DUMP),
                          ("a literal", LITERAL), ("a plural after 1", ONE_PLURAL), ("a singular after many", MANY_SINGULAR),
                          ("a plural side that 'wins'", PLURAL_SIDE_WINS)):
        match = pattern.search(text)
        if match:
            found.append(f"{name} ({match.group(0)!r})")
    for cid in ids:
        if re.search(rf"(?<![\w-]){re.escape(cid)}(?![\w-])", text):
            found.append(f"the id {cid!r} where a name belongs")
    for name in shared_names:  # two combatants of one name are told apart by a number
        if re.search(rf"(?<![\w-]){re.escape(name)}(?! \d)(?![\w-])", text):
            found.append(f"{name!r} without the number that tells the two apart")
    return found


def test_the_checker_catches_each_kind_of_fault() -> None:
    ids = {"g2", "mott"}
    assert problems("Cultist fires at Cultist 2", ids, {"Cultist"})
    assert not problems("Cultist 1 fires at Cultist 2", ids, {"Cultist"})
    for bad in ("controlled_fire rof 1", "called shot: held_item", "{code=4D+1, wild_index=0}", "ammo null -> {}",
                "dead null -> true", "[10, 6]", "removed=[]", "raiders wins", "1 fights", "fires 1 rounds", "2 round left",
                "+2 mott is Exposed", "g2's Wild Die", "winner None", "critical False"):
        assert problems(bad, ids), bad
    for good in ("Sergeant Kell fires 1 round at Cultist Mott", "attack [BB-CORE-07] d20:8 +3 Agility modifier (BB-CORE-08) = 11",
                 "2 rounds", "3 days", "winner: raiders", "the hit still lands: 40 %", "Wild Die 6, 5"):
        assert not problems(good, ids), good


def _short_ids_and_a_shared_name(setup: EncounterSetup) -> EncounterSetup:
    """The setup with ids too short to be told from words ("g2") and its first
    two combatants of one name, as a GM may write them."""
    combatants = [msgspec.structs.replace(c, id=f"g{i}") for i, c in enumerate(setup.combatants, start=1)]
    combatants[1] = msgspec.structs.replace(combatants[1], name=combatants[0].name)
    return msgspec.structs.replace(setup, combatants=combatants)


def _setups(system_name: str) -> list[EncounterSetup]:
    setups = [demo_setup(system_name), _short_ids_and_a_shared_name(demo_setup(system_name))]
    for path in sorted(EXAMPLES.glob("*.json")):
        data = json.loads(path.read_text())
        if data.get("system") == system_name and not any(c.get("character") for c in data["combatants"]):
            setups.append(msgspec.convert(data, EncounterSetup))
    return setups


def _campaign_of(system_name: str, setup: EncounterSetup) -> tuple[CampaignState, EncounterSetup]:
    """The setup's combatants with sheets as campaign characters, enlisted."""
    system = get_system(system_name)
    campaign = CampaignState(campaign="words")
    combatants = []
    for c in setup.combatants:
        if c.sheet:
            evolve(campaign, create_character(campaign, system, f"{c.id}-pc", c.name, dict(c.sheet)))
            combatants.append(msgspec.structs.replace(c, character=f"{c.id}-pc", sheet={}))
        else:
            combatants.append(c)
    resolved, enlisted = resolve_setup(campaign, "fight", msgspec.structs.replace(setup, combatants=combatants))
    if enlisted is not None:
        evolve(campaign, enlisted)
    return campaign, resolved


def _said(option: Any, field: str, before: str) -> str:
    """The words an option carries for ``field`` (what the page showed before they existed: ``before``)."""
    return getattr(option, field, before)


def _option_texts(options: Any) -> list[tuple[str, str]]:
    """Every text the page, and the CLI's `options`, show of a combatant's options."""
    out: list[tuple[str, str]] = []
    if options.why_not:
        out.append(("why not", options.why_not))
    for attack in options.attacks:
        out.append(("attack", _said(attack, "label", f"{attack.weapon} {attack.mode}")))
        out += [("attack note", note) for note in attack.notes]
        out += [("modifier", m.source) for m in attack.modifiers]
    for action in options.actions:
        out.append(("action", action.label))
        for choice in action.choices:
            out.append(("choice", choice.label))
            out += [("choice note", note) for note in choice.notes]
    for move in options.moves:
        out += [("threat", _said(threat, "label", threat.reaction)) for threat in move.threats]
    if options.window is not None:
        window = options.window
        out.append(("prompt", _said(window, "prompt", f"{window.trigger} by {window.actor}")))
        for reaction in options.window.reactions:
            out.append(("reaction", reaction.label))
            for choice in reaction.choices:
                out.append(("reaction choice", choice.label))
                out += [("reaction note", note) for note in choice.notes]
    return out


def readable_texts(system_name: str, setup: EncounterSetup, seed: bytes, *, options_every: int = 4) -> list[tuple[str, str]]:
    system = get_system(system_name)
    campaign, setup = _campaign_of(system_name, setup)
    narrator = SegmentNarrator()
    state = system.initial_state()
    state.encounter = "headless"
    out: list[tuple[str, str]] = []
    final = None
    for step, (_command, events, after) in enumerate(run_headless(system, setup, seed)):
        for event in events:
            system.evolve(state, event)
            out.append(("narration", "".join(text for text, _ in narrator.segments(event, state))))
            for field, roll in iter_rolls(event):
                rolled = _roll_json(field, roll, system.labels)
                out.append(("roll details", rolled["said"]))
        final = after
        if step % options_every == 0:
            for cid in after.combatants:
                out += _option_texts(system.combatant_options(after, cid))
            out += [("cli options", line) for line in describe_options(system.options(after, ENGINE_SEAT), after)]
    assert final is not None and final.ended
    recorded = aftermath(campaign, "fight", system_name, final)
    later = []
    if recorded is not None:
        evolve(campaign, recorded)
        later.append(recorded)
        resting = sorted(c for c, character in campaign.characters.items() if character.status != "dead")
        started = start_downtime(campaign, DowntimeRequest(characters=resting, days=1), commit_seed(b"r" * 32))
        evolve(campaign, started)
        later.append(started)
        for event in finish_downtime(campaign, b"r" * 32):
            evolve(campaign, event)
            later.append(event)
    for event in later:
        for character in campaign.characters:
            text = history_text(event, character, {cid: c.name for cid, c in campaign.characters.items()})
            if text is not None:
                out.append(("history", text))
    return out


@pytest.mark.parametrize("system_name", SYSTEMS)
def test_seeded_fights_read_as_words(system_name: str) -> None:
    """Item 7: narration (with the page's roll details), options, prompts and
    the campaign history of seeded fights in every system."""
    faults: dict[str, tuple[str, str]] = {}
    for setup in _setups(system_name):
        ids = {c.id for c in setup.combatants} | {f"{c.id}-pc" for c in setup.combatants}
        names = [c.name for c in setup.combatants]
        shared = {name for name in names if names.count(name) > 1}
        for seed in (b"a" * 32, b"b" * 32):
            for where, text in readable_texts(system_name, setup, seed, options_every=7):
                if where == "history":  # the campaign's characters are each named once
                    shared_here: set[str] = set()
                else:
                    shared_here = shared
                for fault in problems(text, ids, shared_here):
                    faults.setdefault(f"{where}: {fault}", (where, text[:240]))
    assert not faults, "\n".join(f"{key}\n    {text}" for key, (_where, text) in sorted(faults.items())[:40])


# ------------------------------------------------------------------ item 8: every chance says what it is the chance of

BARE_CHANCE = re.compile(r"\bchance (?:of )?0?\.\d|\bwith (?:chance )?0\.\d|hit_chance|\bchance\s*:")


def _every_chance(system_name: str, seeds: tuple[bytes, ...]) -> list[tuple[str, Any]]:
    """(what, option) for every listed choice or attack with a chance, in seeded demo fights."""
    system = get_system(system_name)
    found: list[tuple[str, Any]] = []
    for seed in seeds:
        for step, (_command, _events, state) in enumerate(run_headless(system, demo_setup(system_name), seed)):
            if state.window is None and step % 5:
                continue
            for cid in state.combatants:
                options = system.combatant_options(state, cid)
                found += [("attack", a) for a in options.attacks]
                found += [("choice", c) for a in options.actions for c in a.choices if c.hit_chance is not None]
                if options.window is not None:
                    found += [(f"reaction {r.reaction}", c) for r in options.window.reactions for c in r.choices]
    return found


@pytest.mark.parametrize("system_name", SYSTEMS)
def test_every_chance_says_what_it_is_the_chance_of(system_name: str) -> None:
    """Item 8: each listed chance names its event and side ("the hit still lands",
    "your dodge succeeds"), and no note gives a bare decimal or a field name."""
    listed = _every_chance(system_name, (b"a" * 32,))
    assert listed
    for what, option in listed:
        if option.hit_chance is not None:
            assert option.chance_of, (what, option.label)
        for note in option.notes:
            assert not BARE_CHANCE.search(note), (what, option.label, note)


def test_rond6_active_defense_prompts_give_the_chance_the_attack_still_hits() -> None:
    """Item 8 (R6-16): an Active Defense choice carries the chance the attack
    still hits after the defence, the same number the attacker's options gave
    for that defence before the attack (`active_defense_chance`)."""
    from firelane.engine.systems.rond6 import options as r6_options
    from firelane.engine.systems.rond6 import reactions as r6_reactions
    from firelane.engine.systems.rond6.rules import DEFENSE_REACTIONS

    system = get_system("rond6")
    checked = 0
    for seed in (b"a" * 32, b"b" * 32, b"c" * 32):
        for _command, _events, state in run_headless(system, demo_setup("rond6"), seed):
            window = state.window
            if window is None or window.trigger != "attack_declared":
                continue
            for reactor in window.reactors:
                me = state.combatants[reactor.combatant]
                options = system.combatant_options(state, me.id)
                if options.window is None:
                    continue
                defences = [(r, c) for r in options.window.reactions if r.reaction in DEFENSE_REACTIONS for c in r.choices]
                assert defences
                for reaction, choice in defences:
                    assert choice.chance_of == "the attack still hits you" and 0 <= choice.hit_chance <= 1
                    assert choice.label.startswith(reaction.reaction)
                # the defence the attacker's odds assumed: the first offered, declaring the default count
                strike = next(s for s in window.continuation["queue"] if s.get("target") == me.id)
                rolled = r6_options.strike_roll(system, state, strike)
                assumed = r6_options.active_defense_chance(system, state, strike, rolled[3])
                first = r6_reactions.defense_options(system, state, me, strike["attack_kind"])[0]
                count = me.declared_actions or r6_reactions.declare_count(system, state, me, {})
                same = [c for r, c in defences if r.reaction == first
                        and (me.declared_actions or c.command["options"].get("declare") == count)]
                assert assumed is not None and same and same[0].hit_chance == pytest.approx(assumed[1], abs=1e-12)
                checked += 1
    assert checked >= 3


def test_bb_cmb_30_take_cover_says_the_cover_in_words() -> None:
    """Item 13: "Take Cover: none -> light" read as words, in the option and the narration."""
    from firelane.events.schemas import StateAdjusted
    from firelane.projections.narration import Narrator

    system = get_system("bolt-and-blade")
    labels = []
    state = None
    for _command, _events, state in run_headless(system, demo_setup("bolt-and-blade"), b"a" * 32):
        if state.active is not None and state.window is None:
            labels += [a.label for a in system.combatant_options(state, state.active).actions if a.action == "BBTakeCover"]
        if len(labels) >= 3:
            break
    assert labels
    for label in labels:
        assert re.fullmatch(r"Take Cover: from (no|light|heavy) cover to (light|heavy|total) cover", label), label
    assert state is not None
    kell = next(iter(state.combatants))
    took = StateAdjusted(combatant=kell, changes={"taking_cover": True}, reason="took cover: none -> light", rule="BB-CMB-30")
    line = Narrator().line(9, took, state)
    assert line.endswith(f"{state.combatants[kell].name} takes cover: from no cover to light cover (BB-CMB-30)"), line
