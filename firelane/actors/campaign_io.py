"""Moving a whole campaign between stores: `firelane campaign export / import / verify`.

**The file** (format version 2) is UTF-8 text, one item per line, each line
``<chain> <json>`` ending in ``\n``: ``<json>`` is the item (one JSON object,
no line break) and ``<chain>`` is 64 lowercase hex digits, the BLAKE2b-256
(unkeyed, 32-byte digest) of the previous line's chain as raw bytes (for the
first line, ``BLAKE2b-256(b"firelane-campaign-export")``) followed by the
line's ``<json>`` bytes exactly as written. The items, tagged by ``"x"``:

- ``header``: ``{"x":"header","format":"firelane-campaign","version":2,"campaign":NAME}``;
- ``stream``: the start of a stream: the campaign's own (``"kind":"campaign"``)
  or an encounter's (``"kind":"encounter"``, its ``id``, its ``order`` in the
  roster, its registration ``meta`` and its revealed ``seed``);
- ``e``: one entry of the current stream, exactly as the log holds it: entry
  id ``e``, version ``n``, type ``t``, schema ``s``, body ``d`` (the stored JSON,
  byte for byte), command ``c``, causation ``k``, inbox cursor ``q``;
- ``end``: the numbers of streams and entries;
- ``signature``, the last line: ``{"x":"signature","algorithm":"ed25519",
  "public_key":HEX,"signature":HEX}``: the exporting store's Ed25519 public key
  (RFC 8032; the raw 32 bytes, 64 lowercase hex digits) and its signature
  (64 bytes, 128 hex digits) over the ASCII bytes ``firelane-campaign-export:2:``
  followed by the ``end`` line's chain (its 64 hex digits). It is written
  exactly so (these keys in this order, no spaces, lowercase hex), as the one
  line the signature cannot cover. Nothing follows it.

The ``end`` line's chain covers every line before it, so the signature covers
the whole file: **to check a file** in any language, recompute the chain line
by line (each line's given chain must equal the one computed), then check the
signature with the public key (e.g. Python's ``cryptography``:
``Ed25519PublicKey.from_public_bytes(key).verify(sig, b"firelane-campaign-export:2:" + end_chain_hex)``).
A changed, dropped or reordered line breaks the chain; a file whose chain was
recomputed after a change breaks the signature, unless it was signed again
with another key, and that key has another **fingerprint** (the first 16 bytes
of SHA-256 of the raw public key, as 8 dash-separated groups of 4 hex digits:
`firelane.events.public_signing`). So export prints its store's fingerprint,
and verify and import accept a file signed by this store's own key, or by a
key the user names (``--trust FINGERPRINT``), nothing else. Then every die is
recomputed from the seeds the streams reveal, as `firelane audit --verify`
does in a store.

Format version 1 (firelane before 2026-12-02) is the same without the
``signature`` line: it proves nothing about who made it or whether it was
changed (the chain needs no key), so it is refused unless the user asks for it
(``--accept-unsigned``), and verify then says it is unsigned.

What the file leaves out, and why: the entries' MACs (the store's key signs
them; import signs them again with the target store's key), the seats' tokens
and the campaign's GM token (import makes new ones: a file is no place for a
secret), inboxes, leases, snapshots and checkpoints (rebuilt).

**Export** refuses a campaign with an encounter that has not ended (or not
started), or a rest that has not finished: their seeds are still secret, and
a file is no place for a secret (whoever read it would know the dice to
come). End the encounter (an EndEncounter from the GM) and export again.

**Import** checks the whole file first (chain, signature and signer, format,
every entry decoded through the upcasters of today's schemas, versions, every
die) and writes nothing unless all of it holds. It writes only into a
campaign name the store does not have, and registers the campaign last; every
key it writes is listed in ``firelane:{<name>}:import`` first, so an import
that fails or is interrupted is taken back (at once, or by the next import
under that name). Entries keep their stream ids, so exporting the imported
campaign gives the same lines (signed by the exporting store's key).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import sys
from contextlib import aclosing
from pathlib import Path
from collections.abc import Iterable
from typing import Any, BinaryIO, Union

import msgspec
import trio

from firelane.actors.campaign import downtime_seed_key, gm_token_key, seal_gm_token, sealed_downtime_seed
from firelane.actors.seating import acl_rules, acl_user
from firelane.actors.sequencer import seal_seat_tokens, seats_key, sealed_seed, seed_key
from firelane.engine.registry import UnknownSystem, get_system
from firelane.engine.seats import default_seats
from firelane.events import codec
from firelane.events.campaign_log import CAMPAIGN_STREAM, CampaignLog
from firelane.events.campaign_schemas import DowntimeEnded
from firelane.events.envelope import StoredEvent
from firelane.events.log import CAMPAIGNS_KEY, CREATED_KEY, EventLog, validate_id
from firelane.events.schemas import EncounterStarted
from firelane.events.public_signing import fingerprint, parse_fingerprint, signature_valid
from firelane.events.signing import entry_mac
from firelane.events.tokens_at_rest import token_digest
from firelane.actors.store import CliError, Store
from firelane.projections.audit import Verifier, revealed_seed
from firelane.projections.characters import CampaignFold, DowntimeVerifier
from firelane.redisio import RedisError

FORMAT = "firelane-campaign"
FORMAT_VERSION = 2
UNSIGNED_FORMAT_VERSION = 1  # before exports were signed: read only with accept_unsigned
SIGNED_CONTEXT = b"firelane-campaign-export:2:"  # what a signature covers: this, then the end line's chain (hex)
_GENESIS = hashlib.blake2b(b"firelane-campaign-export", digest_size=32).digest()
_BATCH = 500  # commands per pipeline on import
_LOCK_MS = 30_000
_MAX_LINE = 4 * 1024 * 1024
_CHAIN = re.compile(rb"[0-9a-f]{64}")


class Header(msgspec.Struct, tag_field="x", tag="header", kw_only=True):
    format: str
    version: int
    campaign: str


class StreamHead(msgspec.Struct, tag_field="x", tag="stream", kw_only=True, omit_defaults=True):
    kind: str  # "campaign" or "encounter"
    id: str = ""
    order: int = 0
    meta: msgspec.Raw = msgspec.Raw(b"{}")
    seed: str = ""


class Entry(msgspec.Struct, tag_field="x", tag="e", kw_only=True, omit_defaults=True):
    e: str
    n: int
    t: str
    s: int
    d: msgspec.Raw
    c: str = ""
    k: str = ""
    q: str = ""
    g: str = ""  # the log's public-key signature closing a group (events/log_signing.py)


class Trailer(msgspec.Struct, tag_field="x", tag="end", kw_only=True):
    streams: int
    entries: int


class Signature(msgspec.Struct, tag_field="x", tag="signature", kw_only=True, forbid_unknown_fields=True):
    algorithm: str  # "ed25519"
    public_key: str  # hex of the raw 32-byte public key
    signature: str  # hex of the 64-byte signature over SIGNED_CONTEXT + the end line's chain (hex)


Line = Union[Header, StreamHead, Entry, Trailer, Signature]  # noqa: UP007 - msgspec needs a runtime Union
_line_decoder = msgspec.json.Decoder(Line)
_encoder = msgspec.json.Encoder()


def chain_next(previous: bytes, payload: bytes) -> bytes:
    return hashlib.blake2b(previous + payload, digest_size=32).digest()


def signed_message(end_chain: bytes) -> bytes:
    """What an export's signature covers: the end line's chain, which pins every line before it."""
    return SIGNED_CONTEXT + end_chain.hex().encode("ascii")


class ExportSummary(msgspec.Struct, kw_only=True):
    campaign: str
    path: str
    streams: int
    encounters: int
    entries: int
    chain: str
    fingerprint: str  # of the key that signed it: this store's


class VerifiedExport(msgspec.Struct, kw_only=True):
    campaign: str
    streams: int
    encounters: int
    entries: int
    characters: int
    rests: int
    rolls: int
    dice: int
    chain: str
    unbalanced: int = 0  # rolls whose parts do not add up (a rule system's bookkeeping; see the audit)
    fingerprint: str = ""  # of the key that signed it ("" when unsigned)
    own_key: bool = False  # signed by this store's own key
    unsigned: bool = False  # a format-1 file, accepted because the user asked (accept_unsigned)


def _progress(total: int | None, unit: str, desc: str, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, disable=None if enabled else True, leave=False)


# ------------------------------------------------------------------ export


class _Writer:
    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.chain = _GENESIS
        self.entries = 0
        self.streams = 0

    def write(self, item: Any) -> None:
        payload = _encoder.encode(item)
        self.chain = chain_next(self.chain, payload)
        self.handle.write(self.chain.hex().encode() + b" " + payload + b"\n")

    def entry(self, row: list[Any]) -> None:
        raw_id, f = row
        self.write(Entry(e=raw_id.decode("ascii"), n=int(f[1]), t=f[3].decode(), s=int(f[5]), d=msgspec.Raw(f[7]),
                         c=f[9].decode(), k=f[11].decode(), q=f[13].decode(),
                         g=f[17].decode() if len(f) > 17 else ""))
        self.entries += 1


def _names(items: list[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


async def export_campaign(store: Store, campaign: str, path: str | os.PathLike[str], *, progress: bool = True) -> ExportSummary:
    """Write the campaign to ``path``, signed with the store's key (see the
    module doc); CliError names what prevents it."""
    event_log = store.event_log(validate_id("campaign", campaign))
    key = store.signing_key()
    assert key is not None
    stream = CampaignLog.of(event_log)
    encounters = await event_log.encounters()
    fold = CampaignFold(event_log)
    state = await fold.refresh()
    if not encounters and not state.version:
        raise CliError(f"campaign {campaign!r} has no encounters and no characters in this store: nothing to export")
    if state.open_downtime is not None:
        raise CliError(f"downtime {state.open_downtime.downtime} of campaign {campaign!r} has not finished "
                       f"(its seed is still secret); finish it with: firelane rest --finish --campaign {campaign}")
    seeds: dict[str, bytes] = {}
    unfinished = []
    with _progress(len(encounters), "encounter", "checking", progress) as bar:
        for encounter in encounters:
            seed = await revealed_seed(event_log, encounter)
            if seed is None:
                unfinished.append(encounter)
            else:
                seeds[encounter] = seed
            bar.update()
    if unfinished:
        raise CliError(f"campaign {campaign!r} cannot be exported while encounter{'s' if len(unfinished) > 1 else ''} "
                       f"{_names(unfinished)} {'have' if len(unfinished) > 1 else 'has'} not ended: a seed that is still "
                       f"secret does not go into a file (end it with the GM's EndEncounter, or release the characters of one "
                       f"that never started: firelane character release; then export again)")
    target = Path(path)
    partial = target.with_name(target.name + ".partial")
    try:
        handle = open(partial, "wb")
    except OSError as exc:
        raise CliError(f"cannot write {target}: {exc.strerror}") from None
    try:
        with handle:
            writer = _Writer(handle)
            writer.write(Header(format=FORMAT, version=FORMAT_VERSION, campaign=campaign))
            writer.write(StreamHead(kind="campaign"))
            writer.streams += 1
            async with aclosing(stream.iter_pages(CAMPAIGN_STREAM)) as pages:
                async for rows in pages:
                    for row in rows:
                        writer.entry(row)
            with _progress(len(encounters), "encounter", "export", progress) as bar:
                for order, encounter in enumerate(encounters, 1):
                    meta = await event_log.encounter_meta(encounter) or b"{}"
                    writer.write(StreamHead(kind="encounter", id=encounter, order=order, meta=msgspec.Raw(meta),
                                            seed=seeds[encounter].hex()))
                    writer.streams += 1
                    async with aclosing(event_log.iter_pages(encounter)) as pages:
                        async for rows in pages:
                            for row in rows:
                                writer.entry(row)
                    bar.update()
            writer.write(Trailer(streams=writer.streams, entries=writer.entries))
            writer.write(Signature(algorithm="ed25519", public_key=key.public_key.hex(),
                                   signature=key.sign(signed_message(writer.chain)).hex()))
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return ExportSummary(campaign=campaign, path=str(target), streams=writer.streams, encounters=len(encounters),
                         entries=writer.entries, chain=writer.chain.hex(), fingerprint=key.fingerprint)


# ------------------------------------------------------------------ reading a file


class _Problem(Exception):
    pass


def _entry_id(text: str) -> tuple[int, int]:
    milliseconds, sep, sequence = text.partition("-")
    if not sep or not milliseconds.isdigit() or not sequence.isdigit():
        raise _Problem(f"entry id {text[:40]!r} is not a stream id")
    return int(milliseconds), int(sequence)


async def _lines(path: Path, bar: Any, *, with_payload: bool = False) -> Any:
    """(line number, item, chain so far[, the line's JSON bytes]) of every line, the chain checked as it goes."""
    chain = _GENESIS
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        for number, raw in enumerate(handle, 1):
            if number % 1000 == 0:
                await trio.sleep(0)  # stay cancellable (Ctrl-C) on a long file
            if bar is not None:
                bar.update(len(raw))
            if len(raw) > _MAX_LINE:
                raise CliError(f"{path} line {number}: longer than {_MAX_LINE:,} bytes")
            given, sep, payload = raw.rstrip(b"\r\n").partition(b" ")  # a copy with CRLF line ends reads the same
            if not sep or not _CHAIN.fullmatch(given):
                if number == 1:
                    raise CliError(f"{path} is not a firelane campaign export (its lines are '<chain> <json>')")
                raise CliError(f"{path} line {number}: not '<chain> <json>'")
            chain = chain_next(chain, payload)
            if given != chain.hex().encode():
                raise CliError(f"{path} line {number}: the hash chain breaks here (the file was changed, cut or reordered)")
            try:
                item = _line_decoder.decode(payload)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise CliError(f"{path} line {number}: {exc}") from None
            yield (number, item, chain, payload) if with_payload else (number, item, chain)


class _StreamState:
    def __init__(self, head: StreamHead, verify: bool = True) -> None:
        self.head = head
        self.verify = verify
        self.next_version = 1
        self.last_id = (0, 0)
        self.verifier: Verifier | DowntimeVerifier | None = None
        self.setup = None
        self.reproducible_dice = False
        self.system = ""
        if head.kind == "campaign" and verify:
            self.verifier = DowntimeVerifier()

    def stored(self, entry: Entry) -> StoredEvent:
        return StoredEvent(entry_id=entry.e, version=entry.n, encounter=self.head.id or CAMPAIGN_STREAM, type=entry.t,
                           schema=entry.s, data=bytes(entry.d), command_id=entry.c, causation=entry.k, inbox_cursor=entry.q,
                           signature=entry.g)


def _open_stream(head: StreamHead, seen: set[str], *, verify: bool = True) -> _StreamState:
    if head.kind == "campaign":
        if "" in seen:
            raise _Problem("a second campaign stream")
        seen.add("")
        return _StreamState(head, verify)
    if head.kind != "encounter":
        raise _Problem(f"unknown stream kind {head.kind!r}")
    try:
        validate_id("encounter", head.id)
    except ValueError as exc:
        raise _Problem(str(exc)) from None
    if head.id in seen:
        raise _Problem(f"encounter {head.id!r} appears twice")
    seen.add(head.id)
    try:
        meta = msgspec.json.decode(bytes(head.meta))
        system = get_system(meta["system"])
        seed = bytes.fromhex(head.seed)
    except (msgspec.DecodeError, KeyError, TypeError, ValueError) as exc:
        raise _Problem(f"encounter {head.id!r}: its metadata or seed cannot be read ({type(exc).__name__})") from None
    except UnknownSystem as exc:
        raise _Problem(f"encounter {head.id!r}: {UnknownSystem.__str__(exc)}") from None
    state = _StreamState(head, verify)
    state.system = system.name
    if verify:
        state.verifier = Verifier(seed)
    return state


def _check_entry(current: _StreamState, entry: Entry) -> Any:
    """The entry's event (decoded through the upcasters), checked in its stream."""
    if entry.n != current.next_version:
        raise _Problem(f"version {entry.n} where {current.next_version} was due")
    position = _entry_id(entry.e)
    if position <= current.last_id:
        raise _Problem(f"entry id {entry.e} does not follow the one before")
    current.next_version += 1
    current.last_id = position
    if not current.verify and entry.n != 1:
        return None
    stored = current.stored(entry)
    try:
        event = codec.decode_event(stored)
    except (ValueError, msgspec.ValidationError) as exc:
        raise _Problem(f"{entry.t} v{entry.n} cannot be read with today's schemas: {exc}") from None
    if current.head.kind == "encounter" and entry.n == 1:
        if not isinstance(event, EncounterStarted):
            raise _Problem(f"encounter {current.head.id!r} does not begin with EncounterStarted")
        if event.setup.system != current.system:
            raise _Problem(f"encounter {current.head.id!r} is {event.setup.system} but registered as {current.system}")
        current.setup = event.setup
        current.reproducible_dice = event.reproducible_dice
    if current.verifier is not None:
        current.verifier.feed([stored])
    return event


# A roll whose listed parts do not add up to its total (`audit.sum_problem`) is a
# rule system's bookkeeping, not a die the seed did not give: reported, not refused.
_ARITHMETIC = re.compile(r"^v\d+ \S+ \(.*\): (total |kept lists |target )")


def _close_stream(current: _StreamState | None, totals: dict[str, int]) -> None:
    if current is None or not current.verify:
        return
    if isinstance(current.verifier, Verifier):
        report = current.verifier.report()
        if current.setup is None:
            raise _Problem(f"encounter {current.head.id!r} has no events")
        what = f"encounter {current.head.id!r}"
        totals["encounters"] += 1
    else:
        assert isinstance(current.verifier, DowntimeVerifier)
        report = current.verifier.finish()
        what = "the campaign stream's downtime"
    wrong = [p for p in report.problems if not _ARITHMETIC.match(p)]
    if wrong or not report.seed_revealed or not report.commitment_ok:
        raise _Problem(f"{what}: the dice do not verify: {(wrong or report.problems or ['seed not revealed'])[0]}")
    totals["unbalanced"] += len(report.problems)
    totals["rolls"] += report.rolls
    totals["dice"] += report.dice


class Trust(msgspec.Struct, frozen=True, kw_only=True):
    """Whose signatures a verification accepts: this store's own key, the keys
    the user named (``--trust``), and, only if asked, no signature at all."""

    own_key: str | None = None  # this store's fingerprint (None: it has no key)
    trusted: frozenset[str] = frozenset()  # fingerprints, canonical (public_signing.parse_fingerprint)
    accept_unsigned: bool = False


def _signer(item: Signature, end_chain: bytes) -> str:
    """The fingerprint of the key whose valid signature ``item`` is; _Problem otherwise."""
    if item.algorithm != "ed25519":
        raise _Problem(f"signature algorithm {item.algorithm[:40]!r}; this firelane checks ed25519")
    try:
        public_key, signature = bytes.fromhex(item.public_key), bytes.fromhex(item.signature)
    except ValueError:
        raise _Problem("the signature line's key or signature is not hex") from None
    if (public_key.hex(), signature.hex()) != (item.public_key, item.signature):
        raise _Problem("the signature line's key and signature must be lowercase hex")
    if not signature_valid(public_key, signed_message(end_chain), signature):
        raise _Problem("the signature does not match the file: it was changed after it was signed")
    return fingerprint(public_key)


def _check_signer(target: Path, header: Header, signer: str, trust: Trust) -> None:
    """Refuse (CliError, one line) a file whose signer this store does not trust."""
    if header.version == UNSIGNED_FORMAT_VERSION:
        if not trust.accept_unsigned:
            raise CliError(f"{target} is an unsigned export (format 1, made before firelane signed its exports): nothing "
                           f"proves who made it or that it was not changed; accept it anyway with --accept-unsigned")
        return
    if signer == trust.own_key or signer in trust.trusted:
        return
    raise CliError(f"{target} is signed by key {signer}, not this store's ({trust.own_key or 'it has no key yet'}); "
                   f"if you know that key to be the exporting store's (its export printed it), add --trust {signer}")


async def verify_export(path: str | os.PathLike[str], *, trust: Trust = Trust(), progress: bool = True) -> VerifiedExport:
    """Check a whole export (see the module doc) without writing anything:
    its chain, its signature, whether ``trust`` accepts its signer, and every
    die; CliError names the first line that is wrong."""
    target = Path(path)
    try:
        size = target.stat().st_size
    except OSError as exc:
        raise CliError(f"cannot read {target}: {exc.strerror}") from None
    header: Header | None = None
    current: _StreamState | None = None
    seen: set[str] = set()
    totals = {"encounters": 0, "rolls": 0, "dice": 0, "entries": 0, "streams": 0, "characters": 0, "rests": 0,
              "unbalanced": 0}
    trailer: Trailer | None = None
    end_chain = b""
    signer: str | None = None
    chain = _GENESIS
    number = 0
    with _progress(size, "B", "verify", progress) as bar:
        async for number, item, chain, payload in _lines(target, bar, with_payload=True):
            try:
                if signer is not None:
                    raise _Problem("the file goes on after its signature")
                if trailer is not None and not isinstance(item, Signature):
                    raise _Problem("the file goes on after its end")
                if header is None:
                    if not isinstance(item, Header) or item.format != FORMAT:
                        raise _Problem("not a firelane campaign export (no header)")
                    if item.version not in (FORMAT_VERSION, UNSIGNED_FORMAT_VERSION):
                        raise _Problem(f"export format version {item.version}; this firelane reads "
                                       f"{UNSIGNED_FORMAT_VERSION} and {FORMAT_VERSION}")
                    validate_id("campaign", item.campaign)
                    header = item
                    if header.version == UNSIGNED_FORMAT_VERSION:
                        _check_signer(target, header, "", trust)  # refused at once, unless asked for
                elif isinstance(item, StreamHead):
                    _close_stream(current, totals)
                    current = _open_stream(item, seen)
                    totals["streams"] += 1
                elif isinstance(item, Entry):
                    if current is None:
                        raise _Problem("an entry before any stream")
                    _check_entry(current, item)
                    totals["entries"] += 1
                    if current.head.kind == "campaign":
                        totals["characters"] += item.t == "CharacterCreated"
                        totals["rests"] += item.t == "DowntimeEnded"
                elif isinstance(item, Trailer):
                    _close_stream(current, totals)
                    current = None
                    if (item.streams, item.entries) != (totals["streams"], totals["entries"]):
                        raise _Problem(f"the end says {item.streams} streams and {item.entries} entries, "
                                       f"the file has {totals['streams']} and {totals['entries']}")
                    trailer, end_chain = item, chain
                elif isinstance(item, Signature):
                    if trailer is None:
                        raise _Problem("a signature before the end line")
                    if header.version == UNSIGNED_FORMAT_VERSION:
                        raise _Problem("a signature in a format-1 file")
                    if payload != _encoder.encode(item):  # the one line the signature cannot cover: written one way only
                        raise _Problem("the signature line is not as firelane writes it")
                    signer = _signer(item, end_chain)
                else:
                    raise _Problem("a second header")
            except (_Problem, ValueError) as exc:
                raise CliError(f"{target} line {number}: {exc}") from None
    if trailer is None:
        raise CliError(f"{target}: the file ends at line {number} without its end line (cut short?)")
    assert header is not None
    if header.version != UNSIGNED_FORMAT_VERSION and signer is None:
        raise CliError(f"{target}: the file ends at line {number} without its signature line (cut short?)")
    _check_signer(target, header, signer or "", trust)
    return VerifiedExport(campaign=header.campaign, streams=totals["streams"], encounters=totals["encounters"],
                          entries=totals["entries"], characters=totals["characters"], rests=totals["rests"],
                          rolls=totals["rolls"], dice=totals["dice"], chain=chain.hex(), unbalanced=totals["unbalanced"],
                          fingerprint=signer or "", own_key=signer is not None and signer == trust.own_key,
                          unsigned=signer is None)


# ------------------------------------------------------------------ import


def _import_keys(event_log: EventLog) -> tuple[str, str, str]:
    prefix = f"firelane:{{{event_log.campaign}}}:import"
    return f"{prefix}:keys", f"{prefix}:users", f"{prefix}:lock"


async def _exists(event_log: EventLog) -> bool:
    stream = CampaignLog.of(event_log)
    client = event_log.client
    return bool(await client.execute("SISMEMBER", CAMPAIGNS_KEY, event_log.campaign)
                or await client.execute("EXISTS", event_log.encounters_key, event_log.encounter_meta_key)
                or await client.execute("EXISTS", stream.log_key(), stream.version_key()))


async def _wipe(event_log: EventLog) -> None:
    """Take back a failed or interrupted import: every key and seat user it listed."""
    keys_key, users_key, lock_key = _import_keys(event_log)
    client = event_log.client
    keys = [k.decode() for k in await client.execute("SMEMBERS", keys_key) or []]
    for start in range(0, len(keys), _BATCH):
        await client.execute("DEL", *keys[start:start + _BATCH])
    for user in await client.execute("SMEMBERS", users_key) or []:
        try:
            await client.execute("ACL", "DELUSER", user)
        except RedisError:
            pass
    await client.execute("DEL", keys_key, users_key, lock_key)


class _Importer:
    def __init__(self, event_log: EventLog, lock_token: str) -> None:
        self.log = event_log
        self.stream = CampaignLog.of(event_log)
        self.client = event_log.client
        self.keys_key, self.users_key, self.lock_key = _import_keys(event_log)
        self.lock_token = lock_token
        self.pending: list[tuple[Any, ...]] = []
        self.users: list[str] = []
        self.registered: list[tuple[int, str, bytes]] = []
        self.keep_signatures = True  # False when imported under another name (see write_entries)

    async def flush(self) -> None:
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        batch.append(("PEXPIRE", self.lock_key, _LOCK_MS))
        for reply in await self.client.pipeline(batch):
            if isinstance(reply, RedisError):
                raise reply

    async def add(self, *command: Any) -> None:
        self.pending.append(command)
        if len(self.pending) >= _BATCH:
            await self.flush()

    async def claim(self, *keys: str) -> None:
        """List keys before writing them, so a failure takes them back."""
        await self.add("SADD", self.keys_key, *keys)
        await self.flush()

    def _where(self, state: _StreamState) -> tuple[EventLog, str]:
        if state.head.kind == "campaign":
            return self.stream, CAMPAIGN_STREAM
        return self.log, state.head.id

    async def begin_stream(self, state: _StreamState) -> None:
        log, encounter = self._where(state)
        claimed = [log.log_key(encounter), log.version_key(encounter), log.applied_key(encounter)]
        if state.head.kind == "encounter":
            claimed += [seed_key(self.log.campaign, encounter), seats_key(self.log.campaign, encounter)]
        await self.claim(*claimed)
        if state.head.kind == "campaign":
            # The campaign's GM token is the store's secret, never the file's: a new one here.
            await self.claim(gm_token_key(self.log))
            await self.add("SET", gm_token_key(self.log), seal_gm_token(self.log, secrets.token_urlsafe(24)))

    async def write_entries(self, state: _StreamState, entries: list[Entry]) -> None:
        """Entries of the current stream, in order, signed with this store's key."""
        if not entries:
            return
        log, encounter = self._where(state)
        key = log.key
        log_key = log.log_key(encounter)
        applied: dict[str, str] = {}
        for entry in entries:
            data = bytes(entry.d)
            mac = "" if key is None else entry_mac(key, encounter, entry.n, entry.t, entry.s, data, entry.c, entry.k, entry.q)
            # The exporting store's signatures go along: they still check under the campaign's own
            # name (they cover it); under another name they would not, and are left out.
            signature = ("g", entry.g) if entry.g and self.keep_signatures else ()
            await self.add("XADD", log_key, entry.e, "n", entry.n, "t", entry.t, "s", entry.s, "d", data,
                           "c", entry.c, "k", entry.k, "q", entry.q, "h", mac, *signature)
            if entry.c:
                applied[entry.c] = entry.e  # the last entry a command wrote (the append script's record)
            if state.head.kind == "campaign" and entry.t == codec.event_tag(DowntimeEnded):
                ended = codec.decode_body(entry.t, entry.s, data)
                n, seed = ended.downtime, bytes.fromhex(ended.seed)  # type: ignore[attr-defined]
                await self.claim(downtime_seed_key(self.stream, n))
                await self.add("SET", downtime_seed_key(self.stream, n), sealed_downtime_seed(self.stream, n, seed))
        await self.add("SET", log.version_key(encounter), entries[-1].n)
        items = [part for pair in applied.items() for part in pair]
        for start in range(0, len(items), 2 * _BATCH):
            await self.add("HSET", log.applied_key(encounter), *items[start:start + 2 * _BATCH])
        await self.flush()

    async def end_stream(self, state: _StreamState) -> None:
        """An encounter's seed, new seat tokens and users, and its place in the roster (registered at commit)."""
        if state.head.kind != "encounter":
            return
        encounter = state.head.id
        await self.add("SET", seed_key(self.log.campaign, encounter),
                       sealed_seed(self.log, encounter, bytes.fromhex(state.head.seed), state.reproducible_dice))
        seats = default_seats(state.setup)  # type: ignore[arg-type]
        tokens = {seat.id: secrets.token_urlsafe(18) for seat in seats}
        kept = seal_seat_tokens(self.log, encounter, tokens)  # a digest and sealed, never in clear
        await self.add("HSET", seats_key(self.log.campaign, encounter), *[p for pair in kept.items() for p in pair])
        await self.add("SADD", self.users_key, *[acl_user(self.log.campaign, encounter, seat.id) for seat in seats])
        await self.flush()
        # Only ended encounters are exported: their inboxes are closed and their
        # seats read the log, nothing more (as the engine leaves them at the end).
        closed = self.log.inboxes_closed_key(encounter)
        await self.claim(closed)
        await self.add("SET", closed, "1")
        await self.flush()
        for seat in seats:
            try:
                await self.client.execute("ACL", "SETUSER", acl_user(self.log.campaign, encounter, seat.id),
                                          *acl_rules(self.log, encounter, seat, token_digest(tokens[seat.id]), writes=False))
            except RedisError:
                break  # a server without per-key ACLs: seats use the HTTP API (as at creation)
        self.registered.append((state.head.order, encounter, bytes(state.head.meta)))

    async def commit(self) -> None:
        """Register the campaign: the roster, then the store's list (what `firelane serve` follows)."""
        log = self.log
        for order, encounter, meta in sorted(self.registered):
            await self.add("ZADD", log.encounters_key, order, encounter)
            await self.add("HSET", log.encounter_meta_key, encounter, meta)
        await self.flush()
        try:
            await self.client.execute("ACL", "SAVE")
        except RedisError:
            pass
        await self.client.execute("SADD", CAMPAIGNS_KEY, log.campaign)
        for _order, encounter, _meta in self.registered:
            await self.client.execute("XADD", CREATED_KEY, "MAXLEN", "~", 10_000, "*",
                                      "campaign", log.campaign, "encounter", encounter)
        await self.client.execute("DEL", self.keys_key, self.users_key, self.lock_key)


def store_trust(store: Store, trusted: Iterable[str] = (), *, accept_unsigned: bool = False) -> Trust:
    """What an import into ``store`` accepts: its own key's signature, and the
    fingerprints given (ValueError names one that is not a fingerprint)."""
    key = store.signing_key()
    return Trust(own_key=key.fingerprint if key is not None else None,
                 trusted=frozenset(parse_fingerprint(f) for f in trusted), accept_unsigned=accept_unsigned)


async def import_campaign(store: Store, path: str | os.PathLike[str], as_name: str | None = None, *,
                          trust: Trust | None = None, progress: bool = True) -> tuple[str, VerifiedExport]:
    """Import an export into a campaign name the store does not have (see the
    module doc); ``trust``: whose signatures it accepts (default: the store's own only)."""
    verified = await verify_export(path, trust=trust or store_trust(store), progress=progress)
    name = validate_id("campaign", as_name or verified.campaign)
    event_log = store.event_log(name)
    keys_key, _users_key, lock_key = _import_keys(event_log)
    token = secrets.token_hex(8)
    if await event_log.client.execute("SET", lock_key, token, "NX", "PX", _LOCK_MS) is None:
        raise CliError(f"another import into campaign {name!r} is under way; try again when it has finished")
    try:
        if await event_log.client.execute("EXISTS", keys_key):
            await _wipe(event_log)  # an earlier import under this name was interrupted: take it back
            await event_log.client.execute("SET", lock_key, token, "PX", _LOCK_MS)
        elif await _exists(event_log):
            raise CliError(f"campaign {name!r} already exists in this store; import it under another name with --as NAME")
    except BaseException:
        await event_log.client.execute("DEL", lock_key)
        raise
    importer = _Importer(event_log, token)
    importer.keep_signatures = name == verified.campaign
    try:
        current: _StreamState | None = None
        entries: list[Entry] = []
        seen: set[str] = set()
        chain = _GENESIS
        with _progress(verified.entries, "entry", "import", progress) as bar:
            async for number, item, chain in _lines(Path(path), None):
                try:
                    if isinstance(item, (StreamHead, Trailer)):
                        if current is not None:
                            await importer.write_entries(current, entries)
                            await importer.end_stream(current)
                            bar.update(len(entries))
                        current, entries = None, []
                        if isinstance(item, StreamHead):
                            current = _open_stream(item, seen, verify=False)  # verified above; the chain proves it unchanged
                            await importer.begin_stream(current)
                    elif isinstance(item, Entry) and current is not None:
                        _check_entry(current, item)
                        entries.append(item)
                        if len(entries) >= 10 * _BATCH:
                            await importer.write_entries(current, entries)
                            bar.update(len(entries))
                            entries = []
                except (_Problem, ValueError) as exc:
                    raise CliError(f"{path} line {number}: {exc} (the file changed while it was imported?)") from None
        if chain.hex() != verified.chain:
            raise CliError(f"{path} changed while it was imported; nothing was imported")
        await importer.commit()
    except BaseException:
        with trio.CancelScope(shield=True):
            await _wipe(event_log)
        raise
    return name, verified
