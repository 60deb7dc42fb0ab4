"""What the GM's workshop keeps in the store: drafts, the lobby, archived
encounters, background images, the campaign's own archetypes and the GM's
browser sessions (the HTTP API over them is firelane/web/workshop.py).

- **Drafts** (``firelane:{c}:drafts``, draft id -> JSON, and its version in
  ``firelane:{c}:draft_versions``): a setup being built,
  exactly the setup JSON ``firelane create --setup`` takes, with a version
  number. A save names the version it was made from and lands only if that is
  still the stored one (one Lua script: compare and set, whole or not at all),
  so two tabs never silently overwrite each other.
- **The lobby** (``…:enc:<e>:lobby``): an encounter whose seats and tokens exist
  and whose start is queued, but which no engine takes up until the GM starts
  it: `firelane serve` and `firelane run` leave it alone while the key exists.
  Starting deletes the key and announces the encounter again (``firelane:created``),
  so serve takes it up at once. Nothing is rolled before: the first roll is
  the start's initiative.
- **Archived** encounters (``firelane:{c}:archived``): ended ones the GM put away.
- **Images** (``firelane:{c}:image:<sha256>``, the bytes; ``…:image_meta``):
  a map's background, checked by the web route with Pillow before it is kept;
  an encounter's placement of it at ``…:enc:<e>:background``.
- **Archetypes** the GM saved (``firelane:{c}:archetypes``, id -> JSON).
- **GM sessions** (``firelane:gm_session:<sha256 of the cookie>``): a hash of
  ``csrf`` and, per campaign signed in to, the digest of the GM token it signed
  in with; a rotated token no longer matches, so every browser is signed out
  at once. Only digests of the cookie and the token are kept.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import Any

import msgspec

from firelane.actors.campaign import gm_token_key, seal_gm_token, stored_gm_token
from firelane.events.log import CAMPAIGNS_KEY, CREATED_KEY, EventLog, validate_id
from firelane.events.tokens_at_rest import token_digest

SESSION_TTL_S = 30 * 24 * 3600


class DraftConflict(Exception):
    """A save made from a version that is no longer the stored one."""

    def __init__(self, stored: int) -> None:
        super().__init__(f"changed elsewhere: this draft is at version {stored} now (reload it)")
        self.stored = stored


class Draft(msgspec.Struct, kw_only=True):
    id: str
    version: int
    setup: dict[str, Any]
    background: dict[str, Any] | None = None
    updated_ms: int = 0


def _now_ms() -> int:
    return int(time.time() * 1000)


def drafts_key(event_log: EventLog) -> str:
    return f"firelane:{{{event_log.campaign}}}:drafts"


def draft_versions_key(event_log: EventLog) -> str:
    return f"firelane:{{{event_log.campaign}}}:draft_versions"


def archived_key(event_log: EventLog) -> str:
    return f"firelane:{{{event_log.campaign}}}:archived"


def archetypes_key(event_log: EventLog) -> str:
    return f"firelane:{{{event_log.campaign}}}:archetypes"


def image_key(event_log: EventLog, image: str) -> str:
    return f"firelane:{{{event_log.campaign}}}:image:{image}"


def image_meta_key(event_log: EventLog) -> str:
    return f"firelane:{{{event_log.campaign}}}:image_meta"


def lobby_key(event_log: EventLog, encounter: str) -> str:
    return event_log.encounter_key(encounter, "lobby")


def background_key(event_log: EventLog, encounter: str) -> str:
    return event_log.encounter_key(encounter, "background")


# ------------------------------------------------------------------ drafts

# KEYS[1] drafts hash, KEYS[2] their versions; ARGV: id, expected version (-1: must not exist), new JSON,
# new version. The version is kept apart so the check never parses a draft.
_SAVE_DRAFT = """
local version = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '-1')
if version ~= tonumber(ARGV[2]) then
  return version
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
return -2
"""


async def get_draft(event_log: EventLog, draft: str) -> Draft | None:
    raw = await event_log.client.execute("HGET", drafts_key(event_log), validate_id("draft", draft))
    return msgspec.json.decode(raw, type=Draft) if raw is not None else None


async def list_drafts(event_log: EventLog) -> list[Draft]:
    raw = await event_log.client.execute("HGETALL", drafts_key(event_log)) or []
    drafts = [msgspec.json.decode(raw[i + 1], type=Draft) for i in range(0, len(raw), 2)]
    return sorted(drafts, key=lambda d: (-d.updated_ms, d.id))


async def save_draft(event_log: EventLog, draft: str, expected: int, setup: dict[str, Any],
                     background: dict[str, Any] | None) -> Draft:
    """Save the whole draft if it is still at version ``expected`` (0: a new
    draft, which must not exist yet); DraftConflict otherwise."""
    saved = Draft(id=validate_id("draft", draft), version=expected + 1, setup=setup, background=background,
                  updated_ms=_now_ms())
    answer = await event_log.client.evalsha_or_load(
        _SAVE_DRAFT, (drafts_key(event_log), draft_versions_key(event_log)), (draft, -1 if expected == 0 else expected, msgspec.json.encode(saved),
                                                saved.version))
    if int(answer) != -2:
        raise DraftConflict(int(answer))
    return saved


async def delete_draft(event_log: EventLog, draft: str) -> bool:
    await event_log.client.execute("HDEL", draft_versions_key(event_log), validate_id("draft", draft))
    return bool(await event_log.client.execute("HDEL", drafts_key(event_log), draft))


async def id_taken(event_log: EventLog, encounter: str) -> str | None:
    """What already uses this id: "a draft", "an encounter", or None."""
    if await event_log.client.execute("HEXISTS", drafts_key(event_log), encounter):
        return "a draft"
    if await event_log.encounter_meta(encounter) is not None or await event_log.client.execute(
            "EXISTS", event_log.encounter_key(encounter, "seed")):
        return "an encounter"
    return None


# ------------------------------------------------------------------ lobby, start, archive


async def in_lobby(event_log: EventLog, encounter: str) -> bool:
    return bool(await event_log.client.execute("EXISTS", lobby_key(event_log, encounter)))


async def start_lobby(event_log: EventLog, encounter: str) -> bool:
    """Let the engine take the encounter up (False if it was not in the lobby)."""
    if not await event_log.client.execute("DEL", lobby_key(event_log, encounter)):
        return False
    # Announced again: a `firelane serve` that skipped it while it waited takes it up now.
    await event_log.client.execute("XADD", CREATED_KEY, "MAXLEN", "~", 10_000, "*",
                                   "campaign", event_log.campaign, "encounter", encounter)
    return True


async def archived(event_log: EventLog) -> set[str]:
    return {m.decode() for m in await event_log.client.execute("SMEMBERS", archived_key(event_log)) or []}


async def set_archived(event_log: EventLog, encounter: str, archive: bool) -> None:
    await event_log.client.execute("SADD" if archive else "SREM", archived_key(event_log), encounter)


async def set_background(event_log: EventLog, encounter: str, background: dict[str, Any] | None) -> None:
    if background is None:
        await event_log.client.execute("DEL", background_key(event_log, encounter))
    else:
        await event_log.client.execute("SET", background_key(event_log, encounter), msgspec.json.encode(background))


async def get_background(event_log: EventLog, encounter: str) -> dict[str, Any] | None:
    raw = await event_log.client.execute("GET", background_key(event_log, encounter))
    return msgspec.json.decode(raw) if raw is not None else None


# ------------------------------------------------------------------ images


async def keep_image(event_log: EventLog, data: bytes, meta: dict[str, Any]) -> str:
    """Keep a checked image once per content; its id is its SHA-256."""
    image = hashlib.sha256(data).hexdigest()
    await event_log.client.execute("SET", image_key(event_log, image), data, "NX")
    await event_log.client.execute("HSET", image_meta_key(event_log), image, msgspec.json.encode({**meta, "image": image}))
    return image


async def image_meta(event_log: EventLog, image: str) -> dict[str, Any] | None:
    raw = await event_log.client.execute("HGET", image_meta_key(event_log), image)
    return msgspec.json.decode(raw) if raw is not None else None


async def image_bytes(event_log: EventLog, image: str) -> bytes | None:
    return await event_log.client.execute("GET", image_key(event_log, image))


# ------------------------------------------------------------------ archetypes


async def campaign_archetypes(event_log: EventLog) -> list[dict[str, Any]]:
    raw = await event_log.client.execute("HGETALL", archetypes_key(event_log)) or []
    return sorted((msgspec.json.decode(raw[i + 1]) for i in range(0, len(raw), 2)), key=lambda a: a["id"])


async def save_archetype(event_log: EventLog, archetype: dict[str, Any]) -> None:
    await event_log.client.execute("HSET", archetypes_key(event_log), archetype["id"], msgspec.json.encode(archetype))


async def delete_archetype(event_log: EventLog, archetype: str) -> bool:
    return bool(await event_log.client.execute("HDEL", archetypes_key(event_log), archetype))


# ------------------------------------------------------------------ campaigns


async def campaign_exists(event_log: EventLog) -> bool:
    if await event_log.client.execute("SISMEMBER", CAMPAIGNS_KEY, event_log.campaign):
        return True
    return await stored_gm_token(event_log) is not None


async def create_campaign(event_log: EventLog) -> str | None:
    """A new, empty campaign with its GM token (returned); None if it exists."""
    if await campaign_exists(event_log):
        return None
    # Taken in one step (SET NX): a maker that loses a race gets None, never the winner's token.
    token = secrets.token_urlsafe(24)
    if await event_log.client.execute("SET", gm_token_key(event_log), seal_gm_token(event_log, token), "NX") is None:
        return None
    await event_log.client.execute("SADD", CAMPAIGNS_KEY, event_log.campaign)
    return token


# ------------------------------------------------------------------ GM sessions


def session_key(session: str) -> str:
    return f"firelane:gm_session:{token_digest(session)}"


async def new_session(client: Any) -> tuple[str, str]:
    """A new browser session: (cookie value, csrf token)."""
    session, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
    key = session_key(session)
    await client.execute("HSET", key, "csrf", csrf)
    await client.execute("EXPIRE", key, SESSION_TTL_S)
    return session, csrf


async def session_record(client: Any, session: str) -> dict[str, str] | None:
    """The session's csrf and campaigns (campaign -> the GM token digest it signed in with), or None."""
    raw = await client.execute("HGETALL", session_key(session)) or []
    if not raw:
        return None
    return {raw[i].decode(): raw[i + 1].decode() for i in range(0, len(raw), 2)}


async def sign_in(client: Any, session: str, campaign: str, digest: str) -> None:
    key = session_key(session)
    await client.execute("HSET", key, f"c:{campaign}", digest)
    await client.execute("EXPIRE", key, SESSION_TTL_S)


async def sign_out(client: Any, session: str, campaign: str | None) -> None:
    key = session_key(session)
    if campaign is None:
        await client.execute("DEL", key)
    else:
        await client.execute("HDEL", key, f"c:{campaign}")


async def session_campaigns(client: Any, record: dict[str, str], event_log_of: Any) -> list[str]:
    """The campaigns a session is still the GM of: those whose token has not been rotated since."""
    signed = []
    for field, digest in record.items():
        if not field.startswith("c:"):
            continue
        campaign = field[2:]
        stored = await stored_gm_token(event_log_of(campaign))
        if stored is not None and secrets.compare_digest(stored.digest, digest):
            signed.append(campaign)
    return sorted(signed)
