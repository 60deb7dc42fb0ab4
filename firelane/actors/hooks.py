"""Notifications: webhooks per seat and per campaign (the GM's).

What is sent (``kind``):

- ``your_turn``: a player's combatant's turn began (with its deadline);
- ``window``: a reaction window awaits a player's combatant (with its deadline);
- ``gm_ruling``: the GM is asked (a deadline ran out for a seat that chose
  the GM, or the rules leave a call to the GM);
- ``ended``: the fight ended.

A seat's hooks get what concerns the seat (the GM seat's: the rulings and
the end); a campaign's hooks (registered with the campaign's GM token) get
the rulings and the end of every fight of the campaign.

How it is sent: the engine never waits for a receiver. The sequencer derives
the notices from what it appended and hands them to this process's
`Notifier` (`offer`: a non-blocking put on a bounded channel; when it is
full, the notice is dropped and logged). The notifier writes one delivery per
hook into Redis (``firelane:{hooks}:…``; a notice delivered once per hook,
even when a restarted engine derives it again) and the `Deliverer` posts the
due ones with httpx: JSON, signed (HMAC-SHA256: `sign`), at most 16 at once,
each cut off after `DELIVERY_TIMEOUT_S`; a redirect is not followed (a
failure); the answer's body is never read. A failure is retried with a
growing pause (30 s, 1 min, 2 min … at most 6 h apart) for a day, then given
up. Every attempt is in the hook's delivery log, which its owner reads.

URLs are checked (`check_url`): http or https, no credentials in them, and
not pointing at this machine, loopback, private, link-local or other
reserved addresses unless the operator allows it (`allow_private`:
``firelane serve --allow-private-hooks``; the tests' receivers are on
loopback) — when registered, and when posted to, on the addresses the post
connects to (`_checked_http_client`: a name resolved twice could rebind). Logs and delivery logs name a hook's host only, never its path or
query (a Discord or Slack hook URL carries its secret there).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import msgspec
import trio

from firelane.actors.clock import WallClock, system_wall_clock
from firelane.engine.core import BaseRuleSystem
from firelane.engine.seats import seat_controlling
from firelane.engine.state import EncounterState
from firelane.events.schemas import (
    EncounterEnded,
    Event,
    ReactionWindowOpened,
    TurnStarted,
    TurnTimedOut,
    WindowTimedOut,
)
from firelane.logs import get_logger
from firelane.redisio import RedisConnectionError, RedisError

log = get_logger("firelane.hooks")

KINDS = ("your_turn", "window", "gm_ruling", "ended")
KIND_WORDS = {"your_turn": "your turn", "window": "a reaction awaits you", "gm_ruling": "a GM ruling is needed",
              "ended": "the fight ended"}
FORMATS = ("json", "discord", "slack")
SIGNATURE_HEADER = "Firelane-Signature"
DELIVERY_TIMEOUT_S = 10.0
RESOLVE_TIMEOUT_S = 5.0  # a hook's host name, looked up when registered and before each post
CONCURRENT_DELIVERIES = 16
RETRY_FOR_MS = 86_400_000
FIRST_RETRY_MS = 30_000
LONGEST_PAUSE_MS = 6 * 3_600_000
DELIVERY_LOG_LENGTH = 200
MAX_HOOKS_PER_OWNER = 8
MAX_URL_CHARS = 2000

_PREFIX = "firelane:{hooks}"
DUE_KEY = f"{_PREFIX}:due"  # zset delivery id -> when it is due (wall-clock ms)


def hook_key(hook_id: str) -> str:
    return f"{_PREFIX}:hook:{hook_id}"


def owner_key(campaign: str, encounter: str = "", seat: str = "") -> str:
    """The set of hook ids of a seat of an encounter, or of a campaign (its GM's)."""
    return f"{_PREFIX}:owner:{campaign}/{encounter}/{seat}" if encounter else f"{_PREFIX}:owner:{campaign}"


def delivery_key(delivery_id: str) -> str:
    return f"{_PREFIX}:delivery:{delivery_id}"


def log_key(hook_id: str) -> str:
    return f"{_PREFIX}:log:{hook_id}"


class Hook(msgspec.Struct, kw_only=True):
    id: str
    campaign: str
    encounter: str = ""  # "" for a campaign's hook
    seat: str = ""  # the seat whose hook it is ("" for a campaign's)
    url: str
    secret: str  # the HMAC key, shown once when it is registered
    format: str = "json"
    created_ms: int = 0
    kinds: list[str] = msgspec.field(default_factory=lambda: list(KINDS))  # what it is sent (default: all)


class Delivery(msgspec.Struct, kw_only=True):
    hook: str
    kind: str
    notice: str  # what it tells (the notice's key)
    body: dict[str, Any]
    attempt: int = 0
    first_ms: int = 0


class HookRefused(ValueError):
    """A hook that cannot be registered: one line naming why."""


def shown_url(url: str) -> str:
    """A hook's URL as logs and lists show it: its scheme and host, never its
    path or query (a Discord or Slack URL keeps its secret there)."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}/…"


def _forbidden_address(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_multicast or ip.is_reserved
            or ip.is_unspecified or not ip.is_global)


async def check_url(url: str, *, allow_private: bool = False) -> str:
    """The URL if a hook may post to it; HookRefused (one line) otherwise. The
    host is resolved: every address it has must be public, unless the
    operator allows private ones (then anything but credentials goes)."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL_CHARS:
        raise HookRefused(f"url: give the receiver's http(s) URL (at most {MAX_URL_CHARS} characters)")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise HookRefused("url: not a URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HookRefused("url: must be an http:// or https:// URL with a host")
    if parts.username is not None or parts.password is not None:
        raise HookRefused("url: must not carry credentials (user:password@): put a secret in the path or use "
                          "the signature")
    if allow_private:
        return url
    await checked_addresses(parts.hostname, port or (443 if parts.scheme == "https" else 80))
    return url


async def checked_addresses(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to, once; HookRefused if any of them is
    this machine, loopback or private. A post connects only to these (a name
    resolved again could answer otherwise: DNS rebinding)."""
    found: list = []
    with trio.move_on_after(RESOLVE_TIMEOUT_S) as scope:  # a stalled name server holds nothing for long
        try:
            found = await trio.socket.getaddrinfo(host, port, type=trio.socket.SOCK_STREAM)
        except OSError:
            raise HookRefused(f"url: the host {host[:80]!r} does not resolve") from None
    if scope.cancelled_caught:
        raise HookRefused(f"url: the host {host[:80]!r} did not resolve within {RESOLVE_TIMEOUT_S:g} s")
    addresses = [address[0] for *_rest, address in found]
    for address in addresses:
        if _forbidden_address(address):
            raise HookRefused(f"url: {host[:80]} is this machine, loopback or a private address "
                              f"({address}): refused unless the operator allows it "
                              f"(firelane serve --allow-private-hooks)")
    if not addresses:
        raise HookRefused(f"url: the host {host[:80]!r} does not resolve")
    return addresses


def _checked_http_client(allow_private: bool) -> Any:
    """The hooks' HTTP client: every connection goes to an address checked by
    ``checked_addresses`` in the same look-up (httpcore's network backend is
    the one place that sees the address actually dialled). Proxies from the
    environment are not used: a proxy would dial the receiver unchecked."""
    import httpcore
    import httpx

    class CheckedBackend(httpcore.AsyncNetworkBackend):
        def __init__(self) -> None:
            self.inner = httpcore.AnyIOBackend()

        async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                              local_address: str | None = None, socket_options: Any = None) -> Any:
            if allow_private:
                return await self.inner.connect_tcp(host, port, timeout, local_address, socket_options)
            failure: Exception | None = None
            for address in await checked_addresses(host, port):
                try:
                    return await self.inner.connect_tcp(address, port, timeout, local_address, socket_options)
                except httpcore.ConnectError as exc:
                    failure = exc
            assert failure is not None
            raise failure

        async def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> Any:
            raise HookRefused("url: a hook posts over TCP only")

        async def sleep(self, seconds: float) -> None:
            await trio.sleep(seconds)

    transport = httpx.AsyncHTTPTransport(trust_env=False)
    transport._pool = httpcore.AsyncConnectionPool(ssl_context=httpx.create_ssl_context(trust_env=False),
                                                   network_backend=CheckedBackend())
    return httpx.AsyncClient(transport=transport, trust_env=False, follow_redirects=False,
                             timeout=httpx.Timeout(DELIVERY_TIMEOUT_S), headers={"User-Agent": "firelane-hooks"})


def sign(secret: str, body: bytes, at: int) -> str:
    """The signature header's value: ``t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>." + body>``."""
    digest = hmac.new(secret.encode(), f"{at}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={at},v1={digest}"


def check_signature(secret: str, body: bytes, header: str, *, now: int | None = None, tolerance_s: int = 300) -> bool:
    """What a receiver does with the signature header (docs/async-play.md has it in a few lines)."""
    fields = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        at = int(fields["t"])
    except (KeyError, ValueError):
        return False
    if abs((now if now is not None else int(time.time())) - at) > tolerance_s:
        return False
    expected = sign(secret, body, at).split("v1=", 1)[1]
    return hmac.compare_digest(expected, fields.get("v1", ""))


# ------------------------------------------------------------ registering


def checked_kinds(kinds: Any) -> list[str]:
    """The notifications a hook asks for, in their usual order; HookRefused (one line) otherwise."""
    if kinds is None:
        return list(KINDS)
    if not isinstance(kinds, list) or not kinds or not all(isinstance(k, str) for k in kinds):
        raise HookRefused(f"kinds: a list of one or more of {', '.join(KINDS)}")
    for kind in kinds:
        if kind not in KINDS:
            raise HookRefused(f"kinds: one or more of {', '.join(KINDS)}, not {kind[:40]!r}")
    return [k for k in KINDS if k in kinds]


async def register_hook(client: Any, *, campaign: str, encounter: str, seat: str, url: str, format: str,
                        allow_private: bool, wall_clock: WallClock = system_wall_clock,
                        kinds: list[str] | None = None) -> Hook:
    """Keep a hook (its secret made here); HookRefused says why not. ``kinds``:
    which notifications it is sent (all when not given)."""
    if format not in FORMATS:
        raise HookRefused(f"format: one of {', '.join(FORMATS)}, not {str(format)[:40]!r}")
    wanted = checked_kinds(kinds)
    await check_url(url, allow_private=allow_private)
    owner = owner_key(campaign, encounter, seat)
    if int(await client.execute("SCARD", owner) or 0) >= MAX_HOOKS_PER_OWNER:
        raise HookRefused(f"at most {MAX_HOOKS_PER_OWNER} hooks each: remove one first")
    hook = Hook(id=f"h{secrets.token_hex(6)}", campaign=campaign, encounter=encounter, seat=seat, url=url,
                secret=secrets.token_urlsafe(24), format=format, created_ms=wall_clock(), kinds=wanted)
    await client.execute("SET", hook_key(hook.id), msgspec.json.encode(hook))
    await client.execute("SADD", owner, hook.id)
    log.info("hook registered", hook=hook.id, campaign=campaign, encounter=encounter, seat=seat, url=shown_url(url))
    return hook


async def owned_hooks(client: Any, owner: str) -> list[Hook]:
    ids = sorted(member.decode() for member in await client.execute("SMEMBERS", owner) or [])
    hooks = []
    for hook_id in ids:
        raw = await client.execute("GET", hook_key(hook_id))
        if raw:
            hooks.append(msgspec.json.decode(raw, type=Hook))
    return hooks


def hook_json(hook: Hook) -> dict[str, Any]:
    """A hook as its owner sees it later (no secret, the URL's host only)."""
    return {"id": hook.id, "url": shown_url(hook.url), "format": hook.format,
            "scope": "seat" if hook.encounter else "campaign", "encounter": hook.encounter, "seat": hook.seat,
            "kinds": list(hook.kinds)}


async def remove_hook(client: Any, owner: str, hook_id: str) -> bool:
    if not await client.execute("SREM", owner, hook_id):
        return False
    await client.execute("DEL", hook_key(hook_id), log_key(hook_id))
    return True


async def delivery_log(client: Any, hook_id: str, count: int = 50) -> list[dict[str, Any]]:
    """The hook's deliveries, newest first: when, what, which attempt, how it went."""
    entries = await client.execute("XREVRANGE", log_key(hook_id), "+", "-", "COUNT", count) or []
    out = []
    for _entry_id, fields in entries:
        row = {fields[i].decode(): fields[i + 1].decode() for i in range(0, len(fields), 2)}
        out.append({"at_ms": int(row.get("at", 0)), "kind": row.get("kind", ""), "attempt": int(row.get("attempt", 0)),
                    "outcome": row.get("outcome", ""), "status": int(row.get("status", 0)),
                    "detail": row.get("detail", ""), "notice": row.get("notice", "")})
    return out


# ------------------------------------------------------------ what to tell


class Notice(msgspec.Struct, frozen=True, kw_only=True):
    key: str  # names what it tells, once: "<campaign>/<encounter>/v<version>/<kind>/<who>"
    kind: str
    campaign: str
    encounter: str
    seat: str  # the seat told ("" : the campaign's GM hooks only)
    campaign_too: bool  # the campaign's hooks are told as well
    text: str
    details: dict[str, Any] = {}


def notices_for(system: BaseRuleSystem, state: EncounterState, campaign: str, events: Iterable[tuple[int, Event]],
                now_ms: int, *, title: str = "") -> list[Notice]:
    """The notices of events just appended (``state``: the state after them)."""
    fight = title or state.encounter
    name = lambda c: (state.combatants[c].name or c) if c in state.combatants else c  # noqa: E731
    gm_seats = [s.id for s in state.seats if s.role == "gm"]
    found: list[Notice] = []

    def due(ms: int | None) -> dict[str, Any]:
        if not ms:
            return {}
        at = now_ms + ms
        return {"deadline_at_ms": at, "deadline_at": _iso(at)}

    for version, event in events:
        base = f"{campaign}/{state.encounter}/v{version}"
        if isinstance(event, TurnStarted):
            seat = seat_controlling(state.seats, event.combatant)
            if seat is not None and seat.role == "player":
                details = {"combatant": event.combatant, "name": name(event.combatant), **due(event.deadline_ms)}
                when = f" (due {details['deadline_at']})" if "deadline_at" in details else ""
                found.append(Notice(key=f"{base}/your_turn/{event.combatant}", kind="your_turn", campaign=campaign,
                                    encounter=state.encounter, seat=seat.id, campaign_too=False, details=details,
                                    text=f"It is {name(event.combatant)}'s turn in {fight}{when}."))
        elif isinstance(event, ReactionWindowOpened):
            told: dict[str, list[str]] = {}
            for reactor in event.reactors:
                seat = seat_controlling(state.seats, reactor.combatant)
                if seat is not None and seat.role == "player":
                    told.setdefault(seat.id, []).append(reactor.combatant)
            for seat_id, combatants in told.items():
                details = {"window": event.window, "trigger": event.trigger, "combatants": combatants,
                           "names": [name(c) for c in combatants], **due(event.deadline_ms)}
                found.append(Notice(key=f"{base}/window/{seat_id}", kind="window", campaign=campaign,
                                    encounter=state.encounter, seat=seat_id, campaign_too=False, details=details,
                                    text=f"A reaction window awaits {', '.join(details['names'])} in {fight}: "
                                         f"{event.trigger.replace('_', ' ')} by {name(event.actor)} "
                                         f"(due {details.get('deadline_at', 'now')})."))
        elif isinstance(event, (TurnTimedOut, WindowTimedOut)) and event.then == "gm":
            who = name(event.combatant) if isinstance(event, TurnTimedOut) else ", ".join(name(c) for c in event.waiting)
            what = "turn" if isinstance(event, TurnTimedOut) else f"window {event.window}"
            for gm in gm_seats or [""]:
                found.append(Notice(key=f"{base}/gm_ruling/{gm}", kind="gm_ruling", campaign=campaign,
                                    encounter=state.encounter, seat=gm, campaign_too=gm == (gm_seats or [""])[0],
                                    details={"call": "time-up"},
                                    text=f"A GM ruling is needed in {fight}: {who}'s {what} ran out of time."))
        elif isinstance(event, EncounterEnded):
            winner = f" ({event.winner} won)" if event.winner else ""
            seats = [s.id for s in state.seats if s.role in ("gm", "player")]
            for index, seat_id in enumerate(seats):
                found.append(Notice(key=f"{base}/ended/{seat_id}", kind="ended", campaign=campaign,
                                    encounter=state.encounter, seat=seat_id, campaign_too=index == 0,
                                    details={"winner": event.winner, "reason": event.reason},
                                    text=f"The fight {fight} has ended: {event.reason}{winner}."))
    return found


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


def body_for(hook: Hook, notice: Notice, delivery_id: str, now_ms: int) -> dict[str, Any]:
    """What a hook is sent: the notice as JSON, or a Discord or Slack message."""
    if hook.format == "discord":
        return {"content": notice.text[:1900], "allowed_mentions": {"parse": []}}
    if hook.format == "slack":
        return {"text": notice.text}
    return {"id": delivery_id, "kind": notice.kind, "campaign": notice.campaign, "encounter": notice.encounter,
            "seat": hook.seat, "text": notice.text, "sent_at": _iso(now_ms), **notice.details}


# ------------------------------------------------------------ the notifier and the deliverer


_notifier: trio.lowlevel.RunVar[Notifier] = trio.lowlevel.RunVar("firelane_notifier")


def notifier_running() -> bool:
    try:
        _notifier.get()
    except LookupError:
        return False
    return True


def gm_call_notices(state: EncounterState, campaign: str, call: str, text: str, *, title: str = "") -> list[Notice]:
    """A call the rules leave to the GM, newly pending: told to the GM seat and the campaign's hooks."""
    gm_seats = [s.id for s in state.seats if s.role == "gm"] or [""]
    base = f"{campaign}/{state.encounter}/v{state.version}/gm_ruling"
    return [Notice(key=f"{base}/{gm}/{call}", kind="gm_ruling", campaign=campaign, encounter=state.encounter, seat=gm,
                   campaign_too=index == 0, details={"call": call},
                   text=f"A GM ruling is needed in {title or state.encounter}: {text}")
            for index, gm in enumerate(gm_seats)]


def offer(notices: list[Notice]) -> None:
    """Hand notices to this process's notifier, if one runs; never waits."""
    if not notices:
        return
    try:
        notifier = _notifier.get()
    except LookupError:
        return
    notifier.offer(notices)


class Notifier:
    """Turns notices into durable deliveries (one per hook), and posts them.

    Install it in the process's trio run (``async with notifier.running()``
    or ``nursery.start_soon(notifier.run)``) and the sequencers of that
    process hand it their notices."""

    def __init__(self, client: Any, *, allow_private: bool = False, wall_clock: WallClock = system_wall_clock,
                 http: Any = None, queue: int = 10_000, poll_s: float = 5.0) -> None:
        self.client = client
        self.allow_private = allow_private
        self.wall_clock = wall_clock
        self._send, self._receive = trio.open_memory_channel[list[Notice]](queue)
        self._http = http
        self._wake = trio.Event()
        self.poll_s = poll_s
        self.dropped = 0
        self.delivered = 0

    def offer(self, notices: list[Notice]) -> None:
        try:
            self._send.send_nowait(notices)
        except trio.WouldBlock:
            self.dropped += len(notices)
            log.warning("notices dropped: the notifier is behind", count=len(notices))

    async def run(self) -> None:
        _notifier.set(self)
        async with _checked_http_client(self.allow_private) if self._http is None else _Borrowed(self._http) as http:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._enqueue_loop)
                nursery.start_soon(self._deliver_loop, http)

    # -- notices to deliveries

    async def _enqueue_loop(self) -> None:
        async for notices in self._receive:
            try:
                await self._enqueue(notices)
            except (RedisError, RedisConnectionError) as exc:
                log.warning("cannot record notices; they are lost", error=str(exc)[:200], count=len(notices))

    async def _enqueue(self, notices: list[Notice]) -> None:
        now = self.wall_clock()
        added = False
        for notice in notices:
            owners = [owner_key(notice.campaign, notice.encounter, notice.seat)] if notice.seat else []
            if notice.campaign_too:
                owners.append(owner_key(notice.campaign))
            for owner in owners:
                for hook in await owned_hooks(self.client, owner):
                    if notice.kind not in hook.kinds:
                        continue  # its owner did not ask for this one
                    delivery_id = hashlib.blake2b(f"{hook.id}|{notice.key}".encode(), digest_size=10).hexdigest()
                    delivery = Delivery(hook=hook.id, kind=notice.kind, notice=notice.key,
                                        body=body_for(hook, notice, delivery_id, now), first_ms=now)
                    # Once per hook and notice, even when a restarted engine tells it again.
                    if await self.client.execute("SET", delivery_key(delivery_id), msgspec.json.encode(delivery),
                                                 "NX", "PX", RETRY_FOR_MS * 2):
                        await self.client.execute("ZADD", DUE_KEY, now, delivery_id)
                        added = True
        if added:
            self._wake.set()

    # -- deliveries

    async def _deliver_loop(self, http: Any) -> None:
        limit = trio.Semaphore(CONCURRENT_DELIVERIES)
        async with trio.open_nursery() as nursery:
            while True:
                self._wake = trio.Event()  # (before reading: a delivery added from now on wakes this loop)
                try:
                    due = await self.client.execute("ZRANGEBYSCORE", DUE_KEY, "-inf", self.wall_clock(), "LIMIT", 0, 64)
                except (RedisError, RedisConnectionError) as exc:
                    log.warning("cannot read the due deliveries", error=str(exc)[:200])
                    due = []
                for raw_id in due or []:
                    delivery_id = raw_id.decode()
                    await limit.acquire()
                    if await self._claim(delivery_id):  # no other host sends it while its lease runs
                        nursery.start_soon(self._deliver_one, http, delivery_id, limit)
                    else:
                        limit.release()
                with trio.move_on_after(await self._until_next_due()):
                    await self._wake.wait()

    async def _claim(self, delivery_id: str) -> bool:
        """Take a due delivery for one attempt: its place in the due set moves
        a lease ahead (not removed), so a process stopped or killed mid-post
        leaves it to be sent again when the lease ends."""
        try:
            return bool(await self.client.evalsha_or_load(
                _CLAIM_SCRIPT, [DUE_KEY], [delivery_id, self.wall_clock(), self.wall_clock() + LEASE_MS]))
        except (RedisError, RedisConnectionError) as exc:
            log.warning("cannot claim a due delivery", error=str(exc)[:200])
            return False

    async def _until_next_due(self) -> float:
        """Seconds to sleep: until the next delivery is due, at most ``poll_s``
        (another process's engines may add some: this one is woken by its own)."""
        try:
            first = await self.client.execute("ZRANGE", DUE_KEY, 0, 0, "WITHSCORES")
        except (RedisError, RedisConnectionError):
            return self.poll_s
        if not first:
            return self.poll_s
        return min(self.poll_s, max(0.05, (float(first[1]) - self.wall_clock()) / 1000))

    async def _deliver_one(self, http: Any, delivery_id: str, limit: trio.Semaphore) -> None:
        try:
            raw = await self.client.execute("GET", delivery_key(delivery_id))
            if not raw:
                await self.client.execute("ZREM", DUE_KEY, delivery_id)
                return
            delivery = msgspec.json.decode(raw, type=Delivery)
            hook_raw = await self.client.execute("GET", hook_key(delivery.hook))
            if not hook_raw:
                await self.client.execute("DEL", delivery_key(delivery_id))
                await self.client.execute("ZREM", DUE_KEY, delivery_id)
                return  # the hook was removed
            hook = msgspec.json.decode(hook_raw, type=Hook)
            attempt = delivery.attempt + 1
            try:
                status, outcome, detail = await self._post(http, hook, delivery, delivery_id)
            except trio.Cancelled:  # serve is stopping mid-post: due again at once for the next one
                with trio.CancelScope(shield=True), trio.move_on_after(2):
                    await self.client.execute("ZADD", DUE_KEY, self.wall_clock(), delivery_id)
                raise
            now = self.wall_clock()
            record = ["at", str(now), "kind", delivery.kind, "attempt", str(attempt), "outcome", outcome,
                      "status", str(status), "detail", detail[:200], "notice", delivery.notice]
            await self.client.execute("XADD", log_key(hook.id), "MAXLEN", "~", DELIVERY_LOG_LENGTH, "*", *record)
            if outcome == "delivered":
                self.delivered += 1
                await self.client.execute("DEL", delivery_key(delivery_id))
                await self.client.execute("ZREM", DUE_KEY, delivery_id)
                return
            pause = min(FIRST_RETRY_MS * 2 ** (attempt - 1), LONGEST_PAUSE_MS)
            if now + pause - delivery.first_ms > RETRY_FOR_MS:
                log.warning("hook delivery given up after a day", hook=hook.id, url=shown_url(hook.url), attempts=attempt)
                await self.client.execute("XADD", log_key(hook.id), "MAXLEN", "~", DELIVERY_LOG_LENGTH, "*",
                                          *record[:6], "outcome", "given up", "status", str(status),
                                          "detail", f"no success in a day ({attempt} attempts)", "notice", delivery.notice)
                await self.client.execute("DEL", delivery_key(delivery_id))
                await self.client.execute("ZREM", DUE_KEY, delivery_id)
                return
            retry = msgspec.structs.replace(delivery, attempt=attempt)
            await self.client.execute("SET", delivery_key(delivery_id), msgspec.json.encode(retry), "KEEPTTL")
            await self.client.execute("ZADD", DUE_KEY, now + pause, delivery_id)
            self._wake.set()  # the loop's sleep may end sooner now
        except (RedisError, RedisConnectionError) as exc:
            log.warning("hook delivery interrupted by Redis; it is retried", error=str(exc)[:200])
            with trio.CancelScope(shield=True):
                try:
                    await self.client.execute("ZADD", DUE_KEY, self.wall_clock() + FIRST_RETRY_MS, delivery_id)
                except (RedisError, RedisConnectionError):
                    pass
        finally:
            limit.release()

    async def _post(self, http: Any, hook: Hook, delivery: Delivery, delivery_id: str) -> tuple[int, str, str]:
        """One attempt: (status, outcome, detail). Bounded in time whatever
        the receiver does; the answer's body is not read."""
        import httpx

        body = msgspec.json.encode(delivery.body)
        at = self.wall_clock() // 1000
        headers = {"Content-Type": "application/json", SIGNATURE_HEADER: sign(hook.secret, body, at),
                   "Firelane-Event": delivery.kind, "Firelane-Delivery": delivery_id}
        with trio.move_on_after(DELIVERY_TIMEOUT_S) as scope:  # the name's look-up too: a stalled one holds a slot
            try:
                await check_url(hook.url, allow_private=self.allow_private)  # again: its name may point elsewhere now
                async with http.stream("POST", hook.url, content=body, headers=headers) as response:
                    status = response.status_code
            except HookRefused as exc:  # the name now points at a forbidden address
                return 0, "refused", str(exc)
            except httpx.HTTPError as exc:
                return 0, "failed", f"{type(exc).__name__}: {str(exc)[:120]}".replace(hook.url, shown_url(hook.url))
        if scope.cancelled_caught:
            return 0, "failed", f"no answer within {DELIVERY_TIMEOUT_S:g} s"
        if 200 <= status < 300:
            return status, "delivered", ""
        if 300 <= status < 400:
            return status, "failed", f"redirect not followed ({status})"
        return status, "failed", f"HTTP {status}"


LEASE_MS = int(DELIVERY_TIMEOUT_S * 1000) + 60_000  # one attempt's longest, and room to record it

# Claim a delivery that is due (its score at most now): move it a lease ahead. 1 if claimed.
_CLAIM_SCRIPT = """
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if due and tonumber(due) <= tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return 1
end
return 0
"""


class _Borrowed:
    """A client the caller owns (tests), used as an async context without closing it."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def __aenter__(self) -> Any:
        return self.client

    async def __aexit__(self, *exc: object) -> None:
        return None
