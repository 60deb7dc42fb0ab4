"""The client seeds player seats add while their fight waits in the lobby
(docs/fairness.md section 3, actors/workshop.py for the lobby).

Each player seat has a small stream, ``…:enc:<e>:lobby_seed:<seat>``; its
first entry (field ``client_seed``) is the seat's contribution. The API
writes it for the seat's token (`add_lobby_client_seed`: only while the
lobby key exists, and only into an empty stream, in one script); the seat's
Redis user may ``XADD`` there too (actors/seating.py). Later entries are
never read. When the engine takes the fight up after the GM's Start, it reads
them (`lobby_client_seeds`) into the StartEncounter it decides, which records
each as a ClientSeedAdded before the opening initiative and draws that
initiative with them mixed in. The seed's commitment is fixed before: it is in
the start queued when the lobby was made, and the API publishes it
(``GET …/seat``: ``seed_commitment``). Seats that added none just do not
contribute: the GM's Start never waits for them.
"""

from __future__ import annotations

from firelane.engine.dice import MAX_CLIENT_SEED_CHARS
from firelane.events.log import EventLog
from firelane.events.schemas import SeatSetup

# KEYS[1] the lobby key, KEYS[2] the seat's lobby seed stream; ARGV[1] the client seed.
_ADD = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'started' end
if redis.call('XLEN', KEYS[2]) > 0 then return 'again' end
redis.call('XADD', KEYS[2], '*', 'client_seed', ARGV[1])
return 'ok'
"""


class LobbySeedRefused(Exception):
    """A lobby client seed that cannot be taken; its message is one line for the sender."""


def lobby_seed_key(event_log: EventLog, encounter: str, seat: str) -> str:
    return event_log.encounter_key(encounter, f"lobby_seed:{seat}")


def valid_client_seed(text: str) -> bool:
    return 1 <= len(text) <= MAX_CLIENT_SEED_CHARS and text.isprintable()


async def add_lobby_client_seed(event_log: EventLog, encounter: str, seat: SeatSetup, text: str) -> None:
    """Keep a player seat's client seed for the start (LobbySeedRefused says why not)."""
    if seat.role != "player":
        raise LobbySeedRefused(f"only a player seat adds a client seed, not the {seat.role}'s seat")
    if not valid_client_seed(text):
        raise LobbySeedRefused(f"a client seed is 1 to {MAX_CLIENT_SEED_CHARS} printable characters")
    answer = await event_log.client.evalsha_or_load(
        _ADD, (event_log.encounter_key(encounter, "lobby"), lobby_seed_key(event_log, encounter, seat.id)), (text,))
    answer = answer.decode() if isinstance(answer, bytes) else str(answer)
    if answer == "again":
        raise LobbySeedRefused("this seat has added its client seed already (one each)")
    if answer == "started":
        raise LobbySeedRefused("the fight has started: the lobby takes no more client seeds "
                               "(send AddClientSeed as a command: it mixes into the dice from then on)")


async def has_lobby_client_seed(event_log: EventLog, encounter: str, seat: str) -> bool:
    return bool(await event_log.client.execute("XLEN", lobby_seed_key(event_log, encounter, seat)))


async def lobby_client_seeds(event_log: EventLog, encounter: str, seats: list[SeatSetup]) -> list[tuple[str, str]]:
    """Each player seat's lobby contribution, in seat order (the first entry
    of its stream; one that is not a valid client seed does not count)."""
    found: list[tuple[str, str]] = []
    for seat in seats:
        if seat.role != "player":
            continue
        entries = await event_log.client.execute("XRANGE", lobby_seed_key(event_log, encounter, seat.id), "-", "+",
                                                 "COUNT", 1) or []
        if not entries:
            continue
        fields = entries[0][1]
        values = {fields[i]: fields[i + 1] for i in range(0, len(fields) - 1, 2)}
        raw = values.get(b"client_seed")
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else ""
        except UnicodeDecodeError:
            continue
        if valid_client_seed(text):
            found.append((seat.id, text))
    return found
