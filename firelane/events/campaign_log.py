"""A campaign's own stream, on the encounter log's machinery.

    firelane:{<campaign>}:campaign:log      stream of campaign events (the envelope of envelope.py)
    firelane:{<campaign>}:campaign:version  its version
    firelane:{<campaign>}:campaign:applied  command id -> last entry id [+ body digest]

Everything an encounter's log guarantees holds here: one Lua script appends
with an expected version and an idempotent command id, every entry carries
the engine's MAC, readers skip (or report) what they cannot trust, reads
stream page by page. `CampaignLog` is an `EventLog` whose "encounter" is the
fixed name `CAMPAIGN_STREAM`: its keys live beside the encounters' (same hash
tag, so one Cluster slot), and its MACs are scoped to that name, which no
encounter id can take (ids never contain ``:``), so an entry copied between an
encounter's log and the campaign's is recognised as forged.
"""

from __future__ import annotations

from firelane.events.log import EventLog, validate_id

CAMPAIGN_STREAM = ":campaign"


class CampaignLog(EventLog):
    """The stream of one campaign's characters, aftermaths and downtime; pass
    `CAMPAIGN_STREAM` wherever `EventLog` takes an encounter (the helpers
    below do)."""

    def _key(self, encounter: str, suffix: str) -> str:
        if encounter == CAMPAIGN_STREAM:
            return f"{self._prefix}:campaign:{suffix}"
        return f"{self._prefix}:enc:{validate_id('encounter', encounter)}:{suffix}"

    def log_key(self, encounter: str = CAMPAIGN_STREAM) -> str:
        return self._key(encounter, "log")

    def applied_key(self, encounter: str = CAMPAIGN_STREAM) -> str:
        return self._key(encounter, "applied")

    def version_key(self, encounter: str = CAMPAIGN_STREAM) -> str:
        return self._key(encounter, "version")

    def stream_key(self, suffix: str) -> str:
        """Another key of the campaign stream (downtime seeds...)."""
        return self._key(CAMPAIGN_STREAM, suffix)

    def for_campaign(self, campaign: str) -> CampaignLog:
        return CampaignLog(self.client, campaign, **self._options)  # type: ignore[arg-type]

    @classmethod
    def of(cls, event_log: EventLog) -> CampaignLog:
        """The campaign stream of the campaign ``event_log`` is for, on the same store."""
        return cls(event_log.client, event_log.campaign, **event_log._options)  # type: ignore[arg-type]
