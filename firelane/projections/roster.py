"""The campaign roster: every encounter of a campaign, its system, status and who stands.

One broken encounter never breaks the listing: whatever is wrong with it (an
unreadable id, metadata or log, entries that are not the engine's) becomes
its row's status, and the other rows are listed as ever. The roster pages
(`roster_page`): a page reads only its own encounters (by their creation
order, one ZRANGE), and each row folds from the encounter's checkpoint, so a
page costs the same in a campaign of ten encounters or of ten thousand.
"""

from __future__ import annotations

import msgspec

from firelane.events.log import EventLog, validate_id
from firelane.projections.turn_state import TurnStateProjection


class RosterRow(msgspec.Struct, kw_only=True):
    encounter: str
    system: str
    name: str
    status: str  # "waiting to start", "running", "ended"
    round: int = 0
    events: int = 0
    winner: str | None = None
    standing: list[str] = []
    down: list[str] = []
    reproducible_dice: bool = False  # its dice come from a seed text: anyone who knows it can predict every roll

    def describe(self) -> str:
        text = f"{self.encounter:<40} {self.system:<15} {self.status:<16} round {self.round:<3} {self.events:>6} events"
        if self.status == "ended":
            text += f"  winner: {self.winner or 'none'}"
        if self.standing or self.down:
            text += f"  standing: {', '.join(self.standing) or '-'}; down: {', '.join(self.down) or '-'}"
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
        except Exception as exc:  # noqa: BLE001 - one broken encounter must not hide the rest
            rows.append(RosterRow(encounter=encounter[:64], system="?", name=encounter[:64],
                                  status=f"unreadable ({type(exc).__name__}: {str(exc)[:120]})"))
    return rows


async def _row(event_log: EventLog, encounter: str) -> RosterRow:
    meta_raw = await event_log.encounter_meta(encounter)
    meta = msgspec.json.decode(meta_raw) if meta_raw else {}
    if not isinstance(meta, dict):
        meta = {}
    if await event_log.version(encounter) == 0:
        return RosterRow(encounter=encounter, system=meta.get("system", "?"), name=meta.get("name", encounter),
                         status="waiting to start", reproducible_dice=meta.get("reproducible_dice") is True)
    projection = TurnStateProjection(event_log, encounter)
    state = await projection.catch_up()
    await projection.save_checkpoint()
    return RosterRow(
        encounter=encounter,
        system=state.system,
        name=meta.get("name", encounter),
        status="ended" if state.ended else "running",
        round=state.round,
        events=state.version,
        winner=state.winner,
        standing=[c.name for c in state.combatants.values() if not c.out_of_fight],
        down=[c.name for c in state.combatants.values() if c.out_of_fight],
        reproducible_dice=state.reproducible_dice,
    )
