"""The campaign roster: every encounter of a campaign, its system, status and who stands.

One broken encounter never breaks the listing: whatever is wrong with it (an
unreadable id, metadata or log, entries that are not the engine's) becomes
its row's status, and the other rows are listed as ever. A log whose own
entries contradict each other (a genuine entry appended again, entries
deleted, its version counter changed: see events/log.py) is listed as
"log tampered: ..." naming the versions. The roster pages
(`roster_page`): a page reads only its own encounters (by their creation
order, one ZRANGE), and each row folds from the encounter's checkpoint, so a
page costs the same in a campaign of ten encounters or of ten thousand.
"""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

import msgspec

from firelane.engine.registry import get_system
from firelane.events.log import EventLog, LogTampered, validate_id
from firelane.projections.turn_state import TurnStateProjection


class RosterRow(msgspec.Struct, kw_only=True):
    encounter: str
    system: str
    name: str
    status: str  # "waiting to start", "running", "ended", "log tampered: ...", "unreadable (...)"
    round: int = 0
    events: int = 0
    winner: str | None = None
    standing: list[str] = []
    down: list[str] = []
    # Of those standing, who is out of action all the same, with the condition's
    # words: RonD6's Incapacitated (R6-21), say (issue 19 item 12).
    out_of_action: dict[str, str] = {}
    reproducible_dice: bool = False  # its dice come from a seed text: anyone who knows it can predict every roll

    def describe(self) -> str:
        if self.status not in ("waiting to start", "running", "ended"):
            return f"{self.encounter:<40} {self.system:<15} {self.status}"  # what is wrong with it, and nothing folded
        text = f"{self.encounter:<40} {self.system:<15} {self.status:<16} round {self.round:<3} {self.events:>6} events"
        if self.status == "ended":
            text += f"  winner: {self.winner or 'none'}"
        if self.name and self.name != self.encounter:
            text += f"  \"{self.name}\""
        if self.standing or self.down:
            shown = [f"{who} ({self.out_of_action[who]})" if who in self.out_of_action else who for who in self.standing]
            text += f"  standing: {', '.join(shown) or '-'}; down: {', '.join(self.down) or '-'}"
        if self.reproducible_dice:
            text += "  (reproducible dice: anyone who knows the seed text can predict every roll)"
        return text


class RosterPage(msgspec.Struct, kw_only=True):
    rows: list[RosterRow]
    page: int
    per_page: int
    pages: int
    total: int


async def campaign_roster(event_log: EventLog) -> list[RosterRow]:
    """One row per encounter (every page); see `roster_page`."""
    rows = []
    total = await event_log.client.execute("ZCARD", event_log.encounters_key)
    for start in range(0, total, 1000):
        rows += await _rows(event_log, start, start + 999)
    return rows


async def roster_page(event_log: EventLog, page: int = 1, per_page: int = 100) -> RosterPage:
    """Page ``page`` (from 1) of the roster, ``per_page`` encounters in creation order."""
    if page < 1 or per_page < 1:
        raise ValueError("page and per_page must be at least 1")
    total = int(await event_log.client.execute("ZCARD", event_log.encounters_key))
    start = (page - 1) * per_page
    rows = await _rows(event_log, start, start + per_page - 1) if start < total else []
    return RosterPage(rows=rows, page=page, per_page=per_page, pages=max(1, -(-total // per_page)), total=total)


async def _rows(event_log: EventLog, start: int, stop: int) -> list[RosterRow]:
    rows = []
    for raw in await event_log.client.execute("ZRANGE", event_log.encounters_key, start, stop):
        encounter = raw.decode("utf-8", "replace")
        try:
            validate_id("encounter", encounter)
            rows.append(await _row(event_log, encounter))
        except LogTampered as exc:
            rows.append(RosterRow(encounter=encounter, system="?", name=encounter, status=str(exc)))
        except Exception as exc:  # noqa: BLE001 - one broken encounter must not hide the rest
            rows.append(RosterRow(encounter=encounter[:64], system="?", name=encounter[:64],
                                  status=f"unreadable ({type(exc).__name__}: {str(exc)[:120]})"))
    return rows


async def _row(event_log: EventLog, encounter: str) -> RosterRow:
    meta_raw = await event_log.encounter_meta(encounter)
    meta = msgspec.json.decode(meta_raw) if meta_raw else {}
    if not isinstance(meta, dict):
        meta = {}
    system, name = meta.get("system", "?"), meta.get("name") or encounter
    # Read before the fold: the log held every entry up to it then.
    counter = await event_log.version(encounter)
    if counter == 0:
        return RosterRow(encounter=encounter, system=system, name=name, status="waiting to start",
                         reproducible_dice=meta.get("reproducible_dice") is True)
    projection = TurnStateProjection(event_log, encounter)
    try:
        state = await projection.catch_up()
        if state.version > counter:  # appended meanwhile (the counter has moved on too), or it was set back
            counter = await event_log.version(encounter)
            tampered = state.version > counter
        else:
            tampered = state.version < counter  # its last entries are gone, or the counter was moved on
        if tampered:
            raise LogTampered(await event_log.tail_problem(encounter, counter)
                              or f"the log's entries end at v{state.version} but its version counter says v{counter}")
        if await event_log.client.execute("XLEN", event_log.log_key(encounter)) < counter:
            # Fewer entries than versions: some were deleted, perhaps before the
            # checkpoint the fold began at. A read of the whole log names them.
            async with aclosing(event_log.iter_read(encounter)) as pages:
                async for _page in pages:
                    pass
    except LogTampered as exc:
        return RosterRow(encounter=encounter, system=system, name=name, status=str(exc))
    await projection.save_checkpoint()
    return RosterRow(
        encounter=encounter,
        system=state.system,
        name=name,
        status="ended" if state.ended else "running",
        round=state.round,
        events=state.version,
        winner=state.winner,
        standing=[c.name or c.id for c in state.combatants.values() if not c.out_of_fight],
        down=[c.name or c.id for c in state.combatants.values() if c.out_of_fight],
        out_of_action=out_of_action(state),
        reproducible_dice=state.reproducible_dice,
    )


# Conditions that leave a combatant on its feet in the engine's eyes (not out of
# the fight) but out of action: it is not "standing" in any sense a reader means.
OUT_OF_ACTION = ("mortally_wounded", "unconscious", "incapacitated", "dying")


def out_of_action(state: Any) -> dict[str, str]:
    """Each standing combatant's name -> the words of the gravest such condition it has."""
    try:
        words = get_system(state.system).labels
    except Exception:  # an unknown system: the condition's own name, in words
        words = None
    found = {}
    for c in state.combatants.values():
        if c.out_of_fight:
            continue
        worst = next((cond for cond in OUT_OF_ACTION if cond in c.conditions), None)
        if worst is not None:
            found[c.name or c.id] = words.word("conditions", worst) if words is not None else worst.replace("_", " ")
    return found
