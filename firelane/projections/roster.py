"""The campaign roster: every encounter of a campaign, its system, status and who stands."""

from __future__ import annotations

import msgspec

from firelane.events.log import EventLog
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

    def describe(self) -> str:
        text = f"{self.encounter:<40} {self.system:<15} {self.status:<16} round {self.round:<3} {self.events:>6} events"
        if self.status == "ended":
            text += f"  winner: {self.winner or 'none'}"
        if self.standing or self.down:
            text += f"  standing: {', '.join(self.standing) or '-'}; down: {', '.join(self.down) or '-'}"
        return text


async def campaign_roster(event_log: EventLog) -> list[RosterRow]:
    """One row per encounter; an encounter that cannot be read gets a row
    saying why, and never stops the others from being listed."""
    rows = []
    for encounter in await event_log.encounters():
        try:
            rows.append(await _row(event_log, encounter))
        except Exception as exc:  # noqa: BLE001 - one broken encounter must not hide the rest
            rows.append(RosterRow(encounter=encounter, system="?", name=encounter,
                                  status=f"unreadable ({type(exc).__name__}: {str(exc)[:120]})"))
    return rows


async def _row(event_log: EventLog, encounter: str) -> RosterRow:
    meta_raw = await event_log.encounter_meta(encounter)
    meta = msgspec.json.decode(meta_raw) if meta_raw else {}
    if not isinstance(meta, dict):
        meta = {}
    if await event_log.version(encounter) == 0:
        return RosterRow(encounter=encounter, system=meta.get("system", "?"), name=meta.get("name", encounter),
                         status="waiting to start")
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
    )
