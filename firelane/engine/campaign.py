"""Campaigns: characters carried from fight to fight, and the downtime between.

Pure, like the rule systems: the functions below decide what happens (they
validate everything and return events, rolling only through injected dice)
and `evolve` folds the campaign stream's events into a `CampaignState`. The
actor that writes the stream (firelane/actors/campaign.py) reads the state,
calls these, and appends what they return with an expected version.

- `create_character`: a character from a sheet, checked by its system as a
  combatant would be, kept with its catalogue entries inlined.
- `resolve_setup`: an encounter setup naming campaign characters gets their
  current sheets written in, and the `CharactersEnlisted` that records it.
  A character is in one fight at a time, and only when fit to fight.
- `aftermath`: the encounter's final state (its last branch, after any
  rewind) written back to its characters by each system's rules.
- `start_downtime` / `finish_downtime`: a rest, with its seed committed first.
- `adjust_character`: the GM's change to a character between fights, each
  changed sheet field checked by its system as a fight's start checks it.
- `release_characters`: characters freed from an encounter that has not
  started, or that ended without their aftermath.

The per-system rules are in engine/systems/<system>/campaign.py (see
engine/campaign_rules.py).
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from firelane.engine.campaign_rules import (
    DEAD,
    IDENTITY_FIELDS,
    RETIRED,
    CampaignRuleError,
    CampaignRules,
    Patient,
    RestRequest,
    RestResult,
    campaign_rules,
    sheet_changes,
)
from firelane.engine.core import BaseRuleSystem
from firelane.engine.dice import SeededDice
from firelane.engine.setup_check import SetupError, check_setup
from firelane.engine.state import EncounterState
from firelane.events import codec
from firelane.events.campaign_schemas import (
    CAMPAIGN_EVENTS,
    AftermathRecorded,
    CharacterAdjusted,
    CharacterCreated,
    CharacterOutcome,
    CharacterRested,
    CharactersEnlisted,
    CharactersReleased,
    DowntimeEnded,
    DowntimeStarted,
    EnlistedCharacter,
)
from firelane.events.limits import bounded
from firelane.events.schemas import CombatantSetup, EncounterSetup, Event

codec.register_events(CAMPAIGN_EVENTS)

_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
MAX_CHARACTERS = 10_000
MAX_NAME = 200
MAX_REST_DAYS = 3650
MAX_REASON = 500
MAX_EDITS = 100  # fields one adjustment may set, add to or remove
MAX_PATH_DEPTH = 8


class CampaignError(ValueError):
    """A campaign request that cannot be carried out; the message is one line naming what is wrong."""


class CharacterBusy(CampaignError):
    """The character is in a fight (an encounter that has not ended)."""


class Character(msgspec.Struct, kw_only=True):
    id: str
    name: str
    system: str
    sheet: dict[str, Any]  # as it stands now
    base_sheet: dict[str, Any] = {}  # as it was created
    status: str = "ready"
    retired: bool = False  # the GM retired it (status "retired") until it is revived
    engaged_in: str = ""  # the encounter it is fighting in, until that encounter's aftermath
    rested_days: int = 0  # days of rest counted towards the next natural-healing test
    encounters: list[str] = []
    downtimes: list[int] = []
    created_at: int = 0  # the campaign stream's version of its creation
    changed_at: int = 0  # ... and of its last change


class CampaignState(msgspec.Struct, kw_only=True):
    campaign: str = ""
    version: int = 0
    characters: dict[str, Character] = {}
    enlisted: dict[str, dict[str, str]] = {}  # encounter -> {character: combatant} until its aftermath
    aftermaths: int = 0
    downtimes: int = 0
    open_downtime: DowntimeStarted | None = None


# ------------------------------------------------------------------ evolve


def evolve(state: CampaignState, event: Event) -> CampaignState:
    """Apply one campaign event (never validates, never rolls)."""
    state.version += 1
    if isinstance(event, CharacterCreated):
        state.characters[event.character] = Character(
            id=event.character, name=event.name, system=event.system, sheet=dict(event.sheet),
            base_sheet=dict(event.sheet), status=campaign_rules(event.system).status(event.sheet),
            created_at=state.version, changed_at=state.version)
    elif isinstance(event, CharactersEnlisted):
        state.enlisted[event.encounter] = {e.character: e.combatant for e in event.characters}
        for enlisted in event.characters:
            character = state.characters[enlisted.character]
            character.engaged_in = event.encounter
            if event.encounter not in character.encounters:
                character.encounters.append(event.encounter)
            character.changed_at = state.version
    elif isinstance(event, AftermathRecorded):
        state.enlisted.pop(event.encounter, None)
        state.aftermaths += 1
        for outcome in event.characters:
            character = state.characters[outcome.character]
            character.sheet = dict(outcome.sheet)
            character.status = outcome.status
            character.engaged_in = ""
            character.rested_days = 0  # a fight interrupts any rest
            character.changed_at = state.version
    elif isinstance(event, DowntimeStarted):
        state.downtimes = event.downtime
        state.open_downtime = event
    elif isinstance(event, CharacterRested):
        character = state.characters[event.character]
        character.sheet = dict(event.sheet)
        character.status = event.status
        character.rested_days = event.rested_days
        character.downtimes.append(event.downtime)
        character.changed_at = state.version
    elif isinstance(event, DowntimeEnded):
        state.open_downtime = None
    elif isinstance(event, CharacterAdjusted):
        character = state.characters[event.character]
        character.sheet = dict(event.sheet)
        character.name = event.name
        character.status = event.status
        character.retired = event.retired
        character.changed_at = state.version
    elif isinstance(event, CharactersReleased):
        enlisted = state.enlisted.get(event.encounter, {})
        for outcome in event.characters:
            enlisted.pop(outcome.character, None)
            character = state.characters[outcome.character]
            character.sheet = dict(outcome.sheet)
            character.status = outcome.status
            character.engaged_in = ""
            if event.encounter_status == "ended":
                character.rested_days = 0  # it fought: the fight interrupts any rest
            character.changed_at = state.version
        if not enlisted:
            state.enlisted.pop(event.encounter, None)
    return state


# ------------------------------------------------------------------ characters


def _check_id(what: str, value: str) -> None:
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise CampaignError(f"{what} {str(value)[:80]!r} must be 1-64 characters of A-Z a-z 0-9 _ . -")


def create_character(state: CampaignState, system: BaseRuleSystem, character: str, name: str,
                     sheet: dict[str, Any], notes: str = "") -> CharacterCreated:
    """A new character, its sheet checked by its system exactly as an encounter's start
    would check it (against a copy of itself, since a fight needs two)."""
    _check_id("character id", character)
    if character in state.characters:
        raise CampaignError(f"character {character!r} already exists in campaign {state.campaign!r}")
    if len(state.characters) >= MAX_CHARACTERS:
        raise CampaignError(f"campaign {state.campaign!r} has {MAX_CHARACTERS} characters, the limit")
    name = name or character
    if len(name) > MAX_NAME:
        raise CampaignError(f"character {character!r}: name is longer than {MAX_NAME} characters")
    if not isinstance(sheet, dict):
        raise CampaignError(f"character {character!r}: the sheet must be a JSON object")
    kept = campaign_rules(system.name).normalise(_checked_sheet(system, character, name, sheet))
    return CharacterCreated(character=character, name=name, system=system.name, sheet=kept, notes=bounded(notes))


def _checked_sheet(system: BaseRuleSystem, character: str, name: str, sheet: dict[str, Any]) -> dict[str, Any]:
    """The sheet as an encounter's start resolves it, checked exactly as that
    start checks it (against a copy of itself, since a fight needs two);
    CampaignError names the field that is wrong."""
    mirror = "mirror" if character != "mirror" else "mirror-2"
    trial = EncounterSetup(system=system.name, combatants=[
        CombatantSetup(id=character, name=name, side="campaign", position=(0, 0), sheet=sheet),
        CombatantSetup(id=mirror, name=name, side="mirror", position=(2, 0), sheet=sheet),
    ])
    try:
        resolved = check_setup(system, trial)
    except SetupError as exc:
        raise CampaignError(f"character {character!r}: {exc}") from None
    return dict(resolved.combatants[0].sheet)


def resolve_setup(state: CampaignState, encounter: str, setup: EncounterSetup) -> tuple[EncounterSetup, CharactersEnlisted | None]:
    """The setup with each named character's current sheet (and name) written
    in, and the enlistment to record; (setup, None) when it names none."""
    picks = [(index, c) for index, c in enumerate(setup.combatants) if c.character]
    if not picks:
        return setup, None
    combatants = list(setup.combatants)
    enlisted: list[EnlistedCharacter] = []
    seen: dict[str, str] = {}
    for index, combatant in picks:
        where = f"combatants[{index}] ({combatant.id})"
        character = state.characters.get(combatant.character)
        if character is None:
            known = ", ".join(sorted(state.characters)[:20]) or "none"
            raise CampaignError(f"{where}.character: no character {combatant.character[:64]!r} in campaign "
                                f"{state.campaign!r} (known: {known})")
        if combatant.character in seen:
            raise CampaignError(f"{where}.character: {combatant.character!r} is already combatant {seen[combatant.character]!r}")
        seen[combatant.character] = combatant.id
        if character.system != setup.system:
            raise CampaignError(f"{where}.character: {character.id!r} is a {character.system} character, "
                                f"not {setup.system}")
        if combatant.sheet:
            raise CampaignError(f"{where}: give a character or a sheet, not both")
        if character.engaged_in and character.engaged_in != encounter:
            raise CampaignError(f"{where}.character: {character.id!r} is in encounter {character.engaged_in!r}, "
                                f"which has not ended")
        if character.retired and character.engaged_in != encounter:
            raise CampaignError(f"{where}.character: {character.name} ({character.id}) is retired; revive it first "
                                f"(firelane character adjust {character.id} --revive --reason ...)")
        if character.engaged_in != encounter:
            unfit = campaign_rules(character.system).unfit(character.sheet)
            if unfit is not None:
                raise CampaignError(f"{where}.character: {character.name} ({character.id}) {unfit}")
        combatants[index] = msgspec.structs.replace(combatant, name=combatant.name or character.name,
                                                    sheet=dict(character.sheet))
        enlisted.append(EnlistedCharacter(character=character.id, combatant=combatant.id, sheet=dict(character.sheet)))
    return (msgspec.structs.replace(setup, combatants=combatants),
            CharactersEnlisted(encounter=encounter, system=setup.system, characters=enlisted))


def enlisted_in(state: CampaignState, encounter: str) -> dict[str, str]:
    """The characters (-> their combatant ids) fighting in an encounter whose aftermath is not in yet."""
    return dict(state.enlisted.get(encounter, {}))


# ------------------------------------------------------------------ aftermath


def aftermath(state: CampaignState, encounter: str, system: str, final: EncounterState) -> AftermathRecorded | None:
    """What the encounter did to its characters, from its final state; None
    when none of its characters is waiting for it (nothing to write)."""
    engaged = enlisted_in(state, encounter)
    if not engaged:
        return None
    rules = campaign_rules(system)
    outcomes = []
    problem = ""
    try:
        for character_id, combatant_id in sorted(engaged.items()):
            outcomes.append(_outcome(rules, state.characters[character_id], combatant_id, final))
    except Exception as exc:  # noqa: BLE001 - a bug in a system's rules must not keep its characters in the fight
        problem = bounded(f"the {system} aftermath rules failed: {type(exc).__name__}: {exc}")
        outcomes = [CharacterOutcome(character=c, combatant=cid, sheet=state.characters[c].sheet,
                                     status=state.characters[c].status, notes=["comes back as it went in"])
                    for c, cid in sorted(engaged.items())]
    return AftermathRecorded(encounter=encounter, system=system, winner=final.winner, reason=final.end_reason,
                             rounds=final.round, final_version=final.version, characters=outcomes, problem=problem)


def _outcome(rules: CampaignRules, character: Character, combatant_id: str, final: EncounterState) -> CharacterOutcome:
    """What a fight's final state does to one character, by its system's rules."""
    combatant = final.combatants.get(combatant_id)
    if combatant is None:
        return CharacterOutcome(character=character.id, combatant=combatant_id, sheet=character.sheet,
                                status=character.status,
                                notes=["not in the encounter's final state: comes back as it went in"])
    sheet, notes = rules.aftermath(character.sheet, combatant)
    return CharacterOutcome(character=character.id, combatant=combatant_id, sheet=sheet, status=rules.status(sheet),
                            changes=sheet_changes(character.sheet, sheet), notes=notes)


# ------------------------------------------------------------------ the GM's hand


class Adjustment(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What the GM changes on a character between fights. Sheet fields are
    named by path: ``fate_points``, ``ammo.frag grenade``, ``weapons.0.damage``
    (a dict's key may itself contain dots: the longest key that exists wins)."""

    set: dict[str, Any] = {}  # path -> new value; "name" renames the character
    add: dict[str, int | float] = {}  # path -> amount added (negative: taken away); a missing field counts as 0
    unset: list[str] = []  # paths removed from the sheet
    retire: bool = False
    revive: bool = False  # a retired character back in play; a dead one back to life (its system's rules)
    reason: str = ""


_MISSING = object()


def _known(state: CampaignState, character: str) -> Character:
    found = state.characters.get(character)
    if found is None:
        known = ", ".join(sorted(state.characters)[:20]) or "none"
        raise CampaignError(f"no character {str(character)[:64]!r} in campaign {state.campaign!r} (known: {known})")
    return found


def _steps(sheet: dict[str, Any], path: str, *, create: bool) -> tuple[Any, Any]:
    """(the dict or list holding the last step of ``path``, its key or index);
    with ``create``, a missing object on the way is made (``ammo.rifle`` on a
    sheet with no ``ammo`` yet; the system's check judges the result)."""
    node: Any = sheet
    rest = path
    walked: list[str] = []
    for _ in range(MAX_PATH_DEPTH):
        where = ".".join(walked) or "the sheet"
        if isinstance(node, dict):
            if rest in node or "." not in rest:
                return node, rest
            # The longest key present that the path begins with (keys may contain dots).
            candidates = [k for k in node if isinstance(k, str) and rest.startswith(k + ".")]
            if not candidates and create:
                candidates = [rest.partition(".")[0]]
                node[candidates[0]] = {}
            if not candidates:
                raise CampaignError(f"sheet field {path!r}: {where} has no field {rest.partition('.')[0]!r}")
            step: str = max(candidates, key=len)
            key: Any = step
        elif isinstance(node, list):
            step = rest.partition(".")[0]
            if not step.isdigit() or int(step) >= len(node):
                raise CampaignError(f"sheet field {path!r}: {where} has no item {step!r} (it has {len(node)}, from 0)")
            if step == rest:
                return node, int(step)
            key = int(step)
        else:
            raise CampaignError(f"sheet field {path!r}: {where} is not an object or a list")
        walked.append(step)
        node, rest = node[key], rest[len(step) + 1:]
    raise CampaignError(f"sheet field {path!r}: nests deeper than {MAX_PATH_DEPTH} levels")


def _top(path: str, sheet: dict[str, Any]) -> str:
    """The top-level field a path edits."""
    if path in sheet or "." not in path:
        return path
    candidates = [k for k in sheet if path.startswith(k + ".")]
    return max(candidates, key=len) if candidates else path.partition(".")[0]


def _edit(sheet: dict[str, Any], adjustment: Adjustment) -> set[str]:
    """Apply the adjustment's paths to ``sheet`` (in place); the top-level fields touched."""
    touched: set[str] = set()
    edits = [("set", p, v) for p, v in adjustment.set.items() if p != "name"]
    edits += [("add", p, v) for p, v in adjustment.add.items()]
    edits += [("unset", p, None) for p in adjustment.unset]
    if len(edits) > MAX_EDITS:
        raise CampaignError(f"an adjustment changes at most {MAX_EDITS} fields (this one {len(edits)})")
    for action, path, value in edits:
        if not isinstance(path, str) or not path or len(path) > 200:
            raise CampaignError(f"sheet field {str(path)[:80]!r}: a field's path is 1-200 characters")
        top = _top(path, sheet)
        if top in IDENTITY_FIELDS:
            raise CampaignError(f"sheet field {path!r}: {top!r} is the encounter's to set, not the sheet's"
                                + (" (rename with name=...)" if top == "name" else ""))
        container, key = _steps(sheet, path, create=action != "unset")
        if action == "set":
            container[key] = value
        elif action == "add":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise CampaignError(f"sheet field {path!r}: add needs a number (got {str(value)[:40]!r})")
            current = container.get(key, 0) if isinstance(container, dict) else container[key]
            if isinstance(current, bool) or not isinstance(current, (int, float)):
                raise CampaignError(f"sheet field {path!r} is {str(current)[:40]!r}, not a number to add to")
            container[key] = current + value
        else:
            if isinstance(container, dict) and key not in container:
                raise CampaignError(f"sheet field {path!r} is not on the sheet")
            del container[key]
        touched.add(top)
    return touched


def adjust_character(state: CampaignState, system: BaseRuleSystem, character: str, adjustment: Adjustment,
                     *, via: str = "") -> CharacterAdjusted:
    """The GM's change to a character between fights, checked in full (one
    line naming what is wrong): each sheet field it sets is checked by the
    character's system exactly as a fight's start checks a sheet. The fields
    it leaves alone are judged with the harm a fight left undone (a Down
    character's other fields pass as they did at its last fight), and the
    fields that go with the ones it sets follow them (see each system's
    ``settle``). Refused while the character is in a fight."""
    found = _known(state, character)
    reason = adjustment.reason.strip() if isinstance(adjustment.reason, str) else ""
    if not reason:
        raise CampaignError("give a reason (--reason TEXT): it goes into the character's history")
    if len(reason) > MAX_REASON:
        raise CampaignError(f"the reason is longer than {MAX_REASON} characters")
    if found.engaged_in:
        raise CharacterBusy(f"{found.id!r} is in encounter {found.engaged_in!r}, which has not ended: adjust it after "
                            f"the fight (one that never started can free it: firelane character release {found.id})")
    if system.name != found.system:
        raise CampaignError(f"{found.id!r} is a {found.system} character, not {system.name}")
    if adjustment.retire and adjustment.revive:
        raise CampaignError("retire and revive contradict each other: give one")
    if adjustment.retire and found.retired:
        raise CampaignError(f"{found.id!r} is retired already")
    rules = campaign_rules(found.system)
    name = found.name
    if "name" in adjustment.set:
        name = adjustment.set["name"]
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
            raise CampaignError(f"name: must be 1 to {MAX_NAME} characters of text")
        name = name.strip()
    sheet = msgspec.json.decode(msgspec.json.encode(found.sheet))  # a deep copy to edit
    notes: list[str] = []
    if adjustment.revive:
        dead = rules.status(sheet) == DEAD
        if not dead and not found.retired:
            raise CampaignError(f"{found.id!r} is neither retired nor dead ({found.status}): nothing to revive")
        if dead:
            sheet, notes = rules.revive(sheet)
            notes = list(notes)
            if rules.status(sheet) == DEAD:
                raise CampaignError(f"{found.id!r}: the {found.system} rules cannot bring a dead character back; "
                                    f"set the fields that keep it dead instead")
    touched = _edit(sheet, adjustment)
    if touched:
        # The changed fields as a fight's start judges them, the others with the harm undone.
        fit = rules.fit(sheet)
        trial = {k: v for k, v in fit.items() if k not in touched}
        trial.update({k: sheet[k] for k in touched if k in sheet})
        resolved = _checked_sheet(system, found.id, name, trial)
        kept = dict(resolved)
        for key in set(fit) | set(sheet):
            if key not in touched and fit.get(key, _MISSING) != sheet.get(key, _MISSING):
                if key in sheet:
                    kept[key] = sheet[key]
                else:
                    kept.pop(key, None)
        order = [k for k in sheet if k in kept] + [k for k in kept if k not in sheet]  # the sheet's order kept
        sheet = rules.normalise({k: kept[k] for k in order})
        notes += rules.settle(found.sheet, sheet, touched)
    retired = (found.retired or adjustment.retire) and not adjustment.revive
    status = RETIRED if retired else rules.status(sheet)
    changes = sheet_changes(found.sheet, sheet)
    if not changes and name == found.name and retired == found.retired:
        raise CampaignError(f"the adjustment changes nothing on {found.id!r}")
    return CharacterAdjusted(character=found.id, reason=bounded(reason), sheet=sheet, name=name, status=status,
                             retired=retired, changes=changes, renamed_from=found.name if name != found.name else "",
                             notes=notes, via=via)


NOT_STARTED, ENDED = "not started", "ended"


def release_characters(state: CampaignState, characters: list[str], reason: str, *, encounter: str, system: str,
                       encounter_status: str, final: EncounterState | None = None, via: str = "") -> CharactersReleased:
    """Free characters from ``encounter``: one that has not started (they come
    back as they went in) or one that has ended (they come back with what its
    final state did to them, as its aftermath would have written). The caller
    says which, having looked at the encounter's log; an encounter under way
    frees nobody."""
    reason = reason.strip() if isinstance(reason, str) else ""
    if not reason:
        raise CampaignError("give a reason (--reason TEXT): it goes into the character's history")
    if len(reason) > MAX_REASON:
        raise CampaignError(f"the reason is longer than {MAX_REASON} characters")
    if not characters:
        raise CampaignError("name the characters to release")
    if encounter_status not in (NOT_STARTED, ENDED):
        raise CampaignError(f"encounter {encounter!r} is {encounter_status}: end it first (the GM's EndEncounter)")
    if encounter_status == ENDED and final is None:
        raise CampaignError(f"encounter {encounter!r}: its final state is needed to release from it")
    enlisted = enlisted_in(state, encounter)
    rules = campaign_rules(system)
    outcomes = []
    for name in dict.fromkeys(characters):
        found = _known(state, name)
        if found.engaged_in != encounter or name not in enlisted:
            where = f"in encounter {found.engaged_in!r}" if found.engaged_in else "in no encounter"
            raise CampaignError(f"{found.id!r} is {where}, not in {encounter!r}: nothing to release it from"
                                if found.engaged_in else f"{found.id!r} is {where}: nothing to release it from")
        if encounter_status == ENDED:
            assert final is not None
            try:
                outcomes.append(_outcome(rules, found, enlisted[name], final))
            except Exception as exc:  # noqa: BLE001 - as in the aftermath: a rules bug never keeps it in the fight
                outcomes.append(CharacterOutcome(
                    character=found.id, combatant=enlisted[name], sheet=found.sheet, status=found.status,
                    notes=[bounded(f"comes back as it went in: the {system} aftermath rules failed: "
                                   f"{type(exc).__name__}: {exc}")]))
        else:
            outcomes.append(CharacterOutcome(character=found.id, combatant=enlisted[name], sheet=found.sheet,
                                             status=found.status, notes=[f"released before encounter {encounter} started"]))
    return CharactersReleased(encounter=encounter, system=system, reason=bounded(reason), encounter_status=encounter_status,
                              characters=outcomes, final_version=final.version if final is not None else 0, via=via)


# ------------------------------------------------------------------ downtime


class DowntimeRequest(msgspec.Struct, frozen=True, kw_only=True):
    characters: list[str]
    days: int
    healer: str = ""
    strenuous: bool = False
    resupply: bool = False


def party(state: CampaignState) -> list[str]:
    """Every character that can rest now: alive, not retired and not in a fight."""
    return sorted(c.id for c in state.characters.values() if not c.engaged_in and c.status != DEAD and not c.retired)


def start_downtime(state: CampaignState, request: DowntimeRequest, seed_commitment: str) -> DowntimeStarted:
    """Check a rest in full and open it (its seed is committed here, revealed by `finish_downtime`)."""
    if state.open_downtime is not None:
        raise CampaignError(f"downtime {state.open_downtime.downtime} has not finished")
    if not isinstance(request.days, int) or not 1 <= request.days <= MAX_REST_DAYS:
        raise CampaignError(f"--days must be a whole number of days from 1 to {MAX_REST_DAYS} (got {request.days})")
    if not request.characters:
        raise CampaignError("name the characters who rest (or --party for every one who can)")
    names = list(dict.fromkeys(request.characters))
    for name in names:
        character = state.characters.get(name)
        if character is None:
            known = ", ".join(sorted(state.characters)[:20]) or "none"
            raise CampaignError(f"no character {name[:64]!r} in campaign {state.campaign!r} (known: {known})")
        if character.engaged_in:
            raise CampaignError(f"{name!r} is in encounter {character.engaged_in!r}, which has not ended; "
                                f"it rests after its aftermath")
        if character.retired:
            raise CampaignError(f"{name!r} is retired; revive it first (firelane character adjust {name} --revive)")
    if request.healer:
        healer = state.characters.get(request.healer)
        if healer is None:
            raise CampaignError(f"no healer {request.healer[:64]!r} in campaign {state.campaign!r}")
        if healer.engaged_in:
            raise CampaignError(f"healer {healer.id!r} is in encounter {healer.engaged_in!r}, which has not ended")
        if healer.retired:
            raise CampaignError(f"healer {healer.id!r} is retired")
        unfit = campaign_rules(healer.system).unfit(healer.sheet)
        if unfit is not None:
            raise CampaignError(f"healer {healer.id!r} {unfit}")
        if not campaign_rules(healer.system).heals:
            raise CampaignError(f"healer {healer.id!r}: {healer.system} rest has no care a healer gives "
                                f"(see docs/campaigns.md)")
        if not any(state.characters[n].system == healer.system for n in names):
            raise CampaignError(f"healer {healer.id!r} is a {healer.system} character; none of the patients is")
    return DowntimeStarted(downtime=state.downtimes + 1, days=request.days, characters=names, healer=request.healer,
                           strenuous=request.strenuous, resupply=request.resupply, seed_commitment=seed_commitment)


def _patient(character: Character) -> Patient:
    return Patient(character=character.id, name=character.name, sheet=dict(character.sheet),
                   base_sheet=dict(character.base_sheet), rested_days=character.rested_days)


def finish_downtime(state: CampaignState, seed: bytes) -> list[Event]:
    """The open rest, rolled with its seed at the stream's current position,
    then the seed revealed. Never fails: a system whose rules refuse (or break)
    leaves its characters as they were, with the reason as a note."""
    started = state.open_downtime
    if started is None:
        raise CampaignError("no downtime is open")
    dice = SeededDice(seed, state.version)
    by_system: dict[str, list[Character]] = {}
    for name in started.characters:
        character = state.characters[name]
        by_system.setdefault(character.system, []).append(character)
    healer = state.characters.get(started.healer) if started.healer else None
    events: list[Event] = []
    for system in sorted(by_system):
        rules = campaign_rules(system)
        patients = [_patient(c) for c in by_system[system]]
        request = RestRequest(days=started.days, strenuous=started.strenuous, resupply=started.resupply,
                              healer=_patient(healer) if healer is not None and healer.system == system else None)
        try:
            results = rules.rest(patients, request, dice)
        except CampaignRuleError as exc:
            results = [RestResult(character=p.character, sheet=p.sheet, rested_days=p.rested_days, notes=[str(exc)])
                       for p in patients]
        except Exception as exc:  # noqa: BLE001 - a bug in a system's rules must not leave the rest open
            results = [RestResult(character=p.character, sheet=p.sheet, rested_days=p.rested_days,
                                  notes=[bounded(f"the {system} rest rules failed: {type(exc).__name__}: {exc}")])
                       for p in patients]
        for character, result in zip(by_system[system], results):
            events.append(CharacterRested(
                downtime=started.downtime, character=character.id, days=started.days, sheet=result.sheet,
                status=rules.status(result.sheet), changes=sheet_changes(character.sheet, result.sheet),
                rolls=result.rolls, notes=result.notes, rested_days=result.rested_days))
    events.append(DowntimeEnded(downtime=started.downtime, seed=seed.hex()))
    return events
