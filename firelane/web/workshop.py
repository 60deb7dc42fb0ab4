"""The GM's workshop API: campaigns, drafts, checks, images, the lobby, the
start, moving a token, characters, archetypes and rests. Every route and its
bodies and answers are documented in docs/workshop-api.md; every route needs
the campaign GM's credential (web/gm_session.py), never a seat's token.
"""

from __future__ import annotations

import io
import re
import secrets
import tempfile
import warnings
from pathlib import Path
from typing import Any

import msgspec
import trio
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from firelane.actors.campaign import adjust, create_characters, gm_token, rest, stored_gm_token
from firelane.actors.campaign_io import export_campaign, import_campaign, store_trust
from firelane.actors.sequencer import EncounterExists, create_encounter, encounter_setup, seat_tokens
from firelane.actors.store import CliError
from firelane.actors import workshop as shop
from firelane.engine.campaign import Adjustment, CampaignError, CharacterBusy, DowntimeRequest, party
from firelane.engine.core import Rejected
from firelane.engine.dice import new_seed
from firelane.engine.forms import character_form, bestiary
from firelane.engine.registry import UnknownSystem, get_system, system_names
from firelane.engine.seats import GM, default_seats
from firelane.engine.setup_check import SetupError, check_setup, convert_setup, decode_setup
from firelane.events import codec
from firelane.events.limits import MAX_SETUP_BYTES, MAX_SETUP_DEPTH, json_too_deep
from firelane.events.log import InboxClosed, InboxFull, validate_id
from firelane.events.schemas import CombatantSetup, CommandRejected, EncounterSetup, GMAdjust, Terrain
from firelane.events.tokens_at_rest import token_digest
from firelane.projections.characters import campaign_characters
from firelane.projections.roster import campaign_roster
from firelane.web.access import Api, json_response
from firelane.web.feed import event_message
from firelane.web.gm_session import (
    check_csrf,
    check_origin,
    clear_cookie,
    current_session,
    require_gm,
    set_cookie,
    signed_campaigns,
)
from firelane.web.guard import ApiError, read_body

MAX_IMAGE_BYTES = 10 * 1024 * 1024
MAX_IMPORT_BYTES = 256 * 1024 * 1024  # a campaign file sent to the API (the CLI's import takes any size)
MAX_IMAGE_PIXELS = 50_000_000  # Pillow's own bomb check is a warning under 2x its limit: ours refuses
IMAGE_TYPES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WEBP"}
DEFAULT_MAP = {"width": 20, "height": 15}
_COMMAND_ID = re.compile(r"[A-Za-z0-9_.:@#-]{1,64}")


# ------------------------------------------------------------------ reading bodies


async def json_body(request: Request, limit: int = MAX_SETUP_BYTES + 65_536) -> dict[str, Any]:
    """The request's JSON object (a setup of up to MAX_SETUP_BYTES, and what comes with it); ApiError otherwise."""
    raw = await read_body(request, limit, "the request")
    if json_too_deep(raw, MAX_SETUP_DEPTH):
        raise ApiError(400, f"the request nests deeper than {MAX_SETUP_DEPTH} levels")
    try:
        body = msgspec.json.decode(raw) if raw.strip() else {}
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"the request is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the request must be a JSON object")
    return body


def only(body: dict[str, Any], *known: str) -> None:
    unknown = sorted(set(body) - set(known))
    if unknown:
        raise ApiError(400, f"{unknown[0][:40]}: unknown field (this takes: {', '.join(known) or 'nothing'})")


def text(body: dict[str, Any], name: str, *, required: bool = False, default: str = "", most: int = 200) -> str:
    value = body.get(name)
    if value is None:
        if required:
            raise ApiError(400, f"{name}: missing")
        return default
    if not isinstance(value, str):
        raise ApiError(400, f"{name}: must be text")
    if len(value) > most:
        raise ApiError(400, f"{name}: longer than {most} characters")
    return value


def an_id(body: dict[str, Any], name: str, what: str, *, required: bool = False) -> str | None:
    value = text(body, name, required=required, most=64)
    if not value:
        return None
    try:
        return validate_id(what, value)
    except ValueError:
        raise ApiError(400, f"{name}: {value[:64]!r} must be 1-64 characters of A-Z a-z 0-9 _ . -") from None


def whole(body: dict[str, Any], name: str, low: int, high: int, *, default: int | None = None) -> int:
    value = body.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ApiError(400, f"{name}: must be a whole number from {low} to {high}")
    return value


def yes_no(body: dict[str, Any], name: str) -> bool:
    value = body.get(name, False)
    if not isinstance(value, bool):
        raise ApiError(400, f"{name}: must be true or false")
    return value


def path_id(request: Request, name: str, what: str | None = None) -> str:
    try:
        return validate_id(what or name, request.path_params[name])
    except ValueError as exc:
        raise ApiError(400, str(exc)) from None


def slug(name: str) -> str:
    base = re.sub(r"[^A-Za-z0-9_.-]+", "-", name.strip().lower()).strip("-.")[:48]
    return base or "encounter"


def background_of(body: dict[str, Any]) -> dict[str, Any] | None:
    """The background's placement, checked (see docs/workshop-api.md)."""
    value = body.get("background")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ApiError(400, "background: must be an object {image, offset, scale} or null")
    only_fields = sorted(set(value) - {"image", "offset", "scale"})
    if only_fields:
        raise ApiError(400, f"background.{only_fields[0][:40]}: unknown field (image, offset, scale)")
    image = value.get("image")
    if not isinstance(image, str) or not re.fullmatch(r"[0-9a-f]{64}", image):
        raise ApiError(400, "background.image: must be the id of an uploaded image")
    offset = value.get("offset", [0, 0])
    if (not isinstance(offset, list) or len(offset) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and -500 <= v <= 500 for v in offset)):
        raise ApiError(400, "background.offset: must be [x, y], numbers of squares from -500 to 500")
    scale = value.get("scale", 100)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 1 <= scale <= 10_000:
        raise ApiError(400, "background.scale: must be the image pixels of one square, from 1 to 10000")
    return {"image": image, "offset": [float(offset[0]), float(offset[1])], "scale": float(scale)}


def setup_object(body: dict[str, Any], name: str = "setup") -> tuple[dict[str, Any], EncounterSetup]:
    """The setup as given (kept exactly) and decoded; 400 naming the field when it is no setup JSON."""
    value = body.get(name)
    if not isinstance(value, dict):
        raise ApiError(400, f"{name}: must be a setup (a JSON object, as firelane create --setup takes)")
    if len(msgspec.json.encode(value)) > MAX_SETUP_BYTES:
        raise ApiError(413, f"{name}: larger than {MAX_SETUP_BYTES:,} bytes")
    try:
        decoded = convert_setup(value, source=name)  # the body's depth and size are checked already
    except SetupError as exc:
        message = str(exc)
        raise ApiError(400, message if message.startswith(name) else f"{name}: {message}") from None
    try:
        get_system(decoded.system)
    except UnknownSystem as exc:
        raise ApiError(400, f"{name}.system: {UnknownSystem.__str__(exc)}") from None
    return value, decoded


# ------------------------------------------------------------------ the checks


_SHEET_FIELD = re.compile(r"^combatant '(?P<id>[^']*)': sheet field '(?P<field>[^']+)' ")
_PATH = re.compile(r"^(?P<path>[A-Za-z_][\w.\[\]]*)(?: \((?P<id>[^)]*)\))?(?P<rest>[\w.\[\]]*): ")


def problem(message: str, index: int | None, combatants: list[Any]) -> dict[str, str]:
    """One problem as ``{path, message, line}``: the field's path in the setup, best found."""
    sheet = _SHEET_FIELD.match(message)
    if sheet:
        at = next((i for i, c in enumerate(combatants) if c.id == sheet["id"]), index)
        path = f"combatants[{at}].sheet.{sheet['field']}" if at is not None else "combatants"
        return {"path": path, "message": message[sheet.end():], "line": message}
    located = _PATH.match(message)
    if located:
        path = located["path"] + (located["rest"] or "")
        return {"path": path, "message": message[located.end():], "line": message}
    if message.startswith("combatant '") and index is not None:
        return {"path": f"combatants[{index}]", "message": message, "line": message}
    return {"path": "", "message": message, "line": message}


async def setup_problems(api: Api, campaign: str, encounter: str, setup: EncounterSetup) -> list[dict[str, str]]:
    """Every problem `firelane create` would find, one per combatant where it can."""
    from firelane.actors.campaign import enlistment

    event_log = api.event_log(campaign)
    try:
        system = get_system(setup.system)
    except UnknownSystem as exc:
        return [{"path": "system", "message": UnknownSystem.__str__(exc), "line": f"system: {UnknownSystem.__str__(exc)}"}]
    try:
        resolved = (await enlistment(event_log, encounter, setup)).setup
    except CampaignError as exc:
        return [problem(str(exc), None, list(setup.combatants))]
    problems: list[dict[str, str]] = []
    seen: set[str] = set()
    try:
        settings = system.settings_for(resolved)
    except Rejected:
        settings = {**system.base_settings, **system.default_settings}  # the whole check names the setting
    for index, combatant in enumerate(resolved.combatants):
        # Each sheet as the start reads it: its catalogue names spelled out, then built and checked.
        try:
            spelled = system.resolve_setup(msgspec.structs.replace(resolved, combatants=[combatant], seats=[]))
            system.build_combatant(spelled.combatants[0], settings)
        except Rejected as exc:
            seen.add(exc.reason)
            problems.append(problem(exc.reason, index, list(resolved.combatants)))
        except (TypeError, ValueError, KeyError) as exc:  # a sheet a system's own reading did not foresee
            line = f"combatant {combatant.id!r} has an invalid sheet ({type(exc).__name__})"
            seen.add(line)
            problems.append(problem(line, index, list(resolved.combatants)))
    try:
        check_setup(system, resolved)
    except SetupError as exc:
        message = str(exc)
        if message not in seen and not any(p["line"] == message for p in problems):
            problems.append(problem(message, None, list(resolved.combatants)))
    return problems


# ------------------------------------------------------------------ images


def png_end(data: bytes) -> int:
    """Where a PNG's IEND chunk ends, by walking its chunks (a search for the
    bytes "IEND" would stop at a copy hidden in what follows)."""
    offset = 8
    while offset + 8 <= len(data):
        length = int.from_bytes(data[offset:offset + 4], "big")
        kind = data[offset + 4:offset + 8]
        offset += 12 + length
        if kind == b"IEND":
            return offset
    return len(data)


_PNG_PRIVATE_CHUNKS = {b"tEXt", b"zTXt", b"iTXt", b"eXIf", b"tIME"}
_JPEG_PRIVATE_SEGMENTS = {0xE1, 0xED, 0xFE}  # APP1 (Exif, XMP), APP13 (IPTC), COM


def without_metadata(data: bytes, media_type: str, orientation: int = 1) -> bytes:
    """The checked image without what it says about where and when it was
    made (Exif with its GPS position, XMP, IPTC, text and comments), its
    pixels untouched: every seat of the encounter downloads it. A JPEG keeps
    its Exif orientation (browsers turn the picture by it), alone."""
    if media_type == "image/png":
        out, offset = [data[:8]], 8
        while offset + 8 <= len(data):
            length = int.from_bytes(data[offset:offset + 4], "big")
            chunk = data[offset:offset + 12 + length]
            if chunk[4:8] not in _PNG_PRIVATE_CHUNKS:
                out.append(chunk)
            offset += 12 + length
        return b"".join(out)
    if media_type == "image/jpeg":
        out, offset = [data[:2]], 2
        if orientation != 1:
            from PIL import Image

            exif = Image.Exif()
            exif[0x0112] = orientation
            payload = exif.tobytes()
            out.append(b"\xff\xe1" + (len(payload) + 2).to_bytes(2, "big") + payload)
        while offset + 4 <= len(data) and data[offset] == 0xFF:
            marker = data[offset + 1]
            if marker == 0xFF:  # fill byte
                offset += 1
                continue
            if marker == 0xDA:  # start of scan: the rest is the picture
                break
            length = int.from_bytes(data[offset + 2:offset + 4], "big")
            if marker not in _JPEG_PRIVATE_SEGMENTS:
                out.append(data[offset:offset + 2 + length])
            offset += 2 + length
        out.append(data[offset:])
        return b"".join(out)
    # WebP: RIFF chunks; EXIF and XMP dropped, and their flags in VP8X cleared.
    out, offset = [], 12
    while offset + 8 <= len(data):
        fourcc = data[offset:offset + 4]
        size = int.from_bytes(data[offset + 4:offset + 8], "little")
        chunk = data[offset:offset + 8 + size + (size & 1)]
        if fourcc == b"VP8X" and size >= 1:
            chunk = chunk[:8] + bytes([chunk[8] & ~0x0C]) + chunk[9:]
        if fourcc not in (b"EXIF", b"XMP "):
            out.append(chunk)
        offset += 8 + size + (size & 1)
    body = b"WEBP" + b"".join(out)
    return b"RIFF" + len(body).to_bytes(4, "little") + body


def check_image(data: bytes, media_type: str) -> dict[str, Any]:
    """Width, height and format of an image Pillow reads; ApiError otherwise (not
    an image, not the declared kind, a decompression bomb, damaged)."""
    from PIL import Image, UnidentifiedImageError

    if len(data) > MAX_IMAGE_BYTES:
        raise ApiError(413, f"the image is {len(data):,} bytes; the limit is {MAX_IMAGE_BYTES:,}")
    wanted = IMAGE_TYPES.get(media_type)
    if wanted is None:
        raise ApiError(415, "the image must be sent as image/png, image/jpeg or image/webp")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # the size is checked here, in words
            with Image.open(io.BytesIO(data)) as image:
                width, height = image.size
                kind = image.format
                orientation = image.getexif().get(0x0112, 1) if kind == "JPEG" else 1
                orientation = orientation if orientation in range(1, 9) else 1
                if width * height > MAX_IMAGE_PIXELS:
                    raise ApiError(400, f"the image is {width}×{height} pixels; the limit is {MAX_IMAGE_PIXELS:,} pixels")
                if kind != wanted:
                    raise ApiError(415, f"the file is a {kind or 'unknown'} image, not {wanted} as its type says")
                image.verify()  # the whole file, without decoding the pixels
            if kind == "JPEG":  # verify() reads nothing of a JPEG: decode it at 1/8 scale (every byte, little memory)
                with Image.open(io.BytesIO(data)) as again:
                    again.draft("RGB", (max(1, width // 8), max(1, height // 8)))
                    try:
                        again.load()
                    except OSError:
                        raise ApiError(400, "the image is damaged (it ends early)") from None
            if kind == "PNG":  # nothing may follow IEND: a page or archive hidden behind a picture (a polyglot)
                after = len(data) - png_end(data)
                if after > 0:
                    raise ApiError(400, f"the image has {after:,} bytes after its end (a file hidden in it?)")
    except Image.DecompressionBombError:
        raise ApiError(400, f"the image has more than {MAX_IMAGE_PIXELS:,} pixels (a decompression bomb?)") from None
    except UnidentifiedImageError:
        raise ApiError(415, "the file is not a PNG, JPEG or WebP image") from None
    except ApiError:
        raise
    except Exception as exc:  # noqa: BLE001 - Pillow raises many kinds for a damaged file
        raise ApiError(400, f"the image is damaged ({type(exc).__name__})") from None
    return {"width": width, "height": height, "media_type": media_type, "bytes": len(data), "orientation": orientation}


# ------------------------------------------------------------------ the routes


def workshop_routes(api: Api) -> list[Route]:  # noqa: C901 - one closure per route, documented in docs/workshop-api.md
    client = api.store.client

    async def gm(request: Request) -> str:
        campaign = path_id(request, "campaign")
        await require_gm(api, request, campaign)
        return campaign

    # -------------------------------------------------------------- session

    async def session_get(request: Request) -> Response:
        found = await current_session(api, request)
        if found is None:
            return json_response({"signed_in": False, "campaigns": [], "csrf": None})
        campaigns = await signed_campaigns(api, found[1])
        return json_response({"signed_in": bool(campaigns), "campaigns": campaigns, "csrf": found[1].get("csrf")})

    async def session_post(request: Request) -> Response:
        check_origin(request)
        body = await json_body(request, 4096)
        only(body, "campaign", "token")
        campaign = an_id(body, "campaign", "campaign", required=True)
        token = text(body, "token", required=True)
        event_log = api.event_log(campaign)  # type: ignore[arg-type]
        stored = await stored_gm_token(event_log)
        if stored is None:
            raise ApiError(404, f"no campaign {campaign!r} in this store")
        if not stored.matches(token):
            raise ApiError(403, f"this is not campaign {campaign}'s GM token (it may have been rotated: "
                                f"run firelane campaign token again)")
        found = await current_session(api, request)
        if found is not None:
            check_csrf_if_signed(request, found[1])
            session, record = found
        else:
            session, _csrf = await shop.new_session(client)
        await shop.sign_in(client, session, campaign, stored.digest)  # type: ignore[arg-type]
        record = await shop.session_record(client, session) or {}
        response = json_response({"signed_in": True, "campaigns": await signed_campaigns(api, record),
                                  "csrf": record.get("csrf")})
        set_cookie(response, session, secure=request.url.scheme == "https")
        return response

    def check_csrf_if_signed(request: Request, record: dict[str, str]) -> None:
        # A browser already signed in adds a campaign: only if the request also carries its CSRF
        # value, or none at all (a fresh page that has not read it yet, same origin by the Origin check).
        if request.headers.get("x-firelane-csrf"):
            check_csrf(request, record)

    async def session_delete(request: Request) -> Response:
        found = await current_session(api, request)
        if found is None:
            response = json_response({"signed_in": False, "campaigns": []})
            clear_cookie(response)
            return response
        session, record = found
        check_csrf(request, record)
        campaign = request.query_params.get("campaign")
        await shop.sign_out(client, session, campaign)
        record = await shop.session_record(client, session) if campaign else None
        campaigns = await signed_campaigns(api, record) if record else []
        response = json_response({"signed_in": bool(campaigns), "campaigns": campaigns})
        if not campaigns:
            await shop.sign_out(client, session, None)
            clear_cookie(response)
        return response

    # -------------------------------------------------------------- campaigns

    async def signed_in_record(request: Request) -> tuple[str, dict[str, str]] | None:
        found = await current_session(api, request)
        if found is not None and request.method in ("POST", "PUT", "PATCH", "DELETE"):
            check_csrf(request, found[1])
        return found

    async def campaigns_list(request: Request) -> Response:
        found = await signed_in_record(request)
        names = await signed_campaigns(api, found[1]) if found else []
        if not names:
            raise ApiError(401, "sign in as a campaign's GM first (open the link firelane campaign token prints)")
        rows = []
        for name in names:
            event_log = api.event_log(name)
            view = await campaign_characters(event_log)
            rows.append({"name": name, "characters": len(view.characters),
                         "encounters": len(await event_log.encounters()), "drafts": len(await shop.list_drafts(event_log))})
        return json_response({"campaigns": rows})

    async def campaigns_post(request: Request) -> Response:
        found = await signed_in_record(request)
        if found is None or not await signed_campaigns(api, found[1]):
            raise ApiError(401, "sign in as a campaign's GM first: a new campaign is made by a GM")
        body = await json_body(request, 4096)
        only(body, "name")
        name = an_id(body, "name", "campaign", required=True)
        event_log = api.event_log(name)  # type: ignore[arg-type]
        token = await shop.create_campaign(event_log)
        if token is None:
            raise ApiError(409, f"campaign {name!r} already exists")
        await shop.sign_in(client, found[0], name, token_digest(token))  # type: ignore[arg-type]
        return json_response({"name": name, "token": token, "link": f"/workshop/{name}#gm={token}"}, status=201)

    async def rotate(request: Request) -> Response:
        campaign = await gm(request)
        event_log = api.event_log(campaign)
        token = await gm_token(event_log, renew=True)
        found = await current_session(api, request)
        if found is not None:
            await shop.sign_in(client, found[0], campaign, token_digest(token))
        return json_response({"token": token, "link": f"/workshop/{campaign}#gm={token}"})

    # -------------------------------------------------------------- encounters and drafts

    async def state_of(event_log: Any, encounter: str, status: str) -> str:
        if status == "ended":  # (a lobby whose characters were released is ended without a start)
            return "ended"
        if await shop.in_lobby(event_log, encounter):
            return "lobby"
        return "running"

    async def encounters(request: Request) -> Response:
        campaign = await gm(request)
        event_log = api.event_log(campaign)
        put_away = await shop.archived(event_log)
        lists: dict[str, list[Any]] = {"draft": [], "lobby": [], "running": [], "ended": [], "archived": []}
        for draft in await shop.list_drafts(event_log):
            lists["draft"].append({"id": draft.id, "name": draft.setup.get("name") or draft.id,
                                   "system": draft.setup.get("system"), "version": draft.version,
                                   "updated_ms": draft.updated_ms})
        for row in await campaign_roster(event_log):
            state = await state_of(event_log, row.encounter, row.status)
            entry = {**msgspec.to_builtins(row), "id": row.encounter, "state": state}
            lists["archived" if row.encounter in put_away else state].append(entry)
        return json_response(lists)

    async def draft_create(request: Request) -> Response:
        campaign = await gm(request)
        event_log = api.event_log(campaign)
        body = await json_body(request)
        only(body, "id", "setup", "system", "name", "background")
        if "setup" in body:
            setup, decoded = setup_object(body)
        else:
            system = text(body, "system", required=True, most=64)
            try:
                system = get_system(system).name
            except UnknownSystem as exc:
                raise ApiError(400, f"system: {UnknownSystem.__str__(exc)}") from None
            setup = {"system": system, "name": text(body, "name"), "terrain": dict(DEFAULT_MAP), "combatants": []}
            decoded = decode_setup(msgspec.json.encode(setup))
        if "name" in body and "setup" in body:
            setup = {**setup, "name": text(body, "name")}
        background = background_of(body)
        await known_image(event_log, background)
        draft_id = an_id(body, "id", "draft") or await free_id(event_log, slug(decoded.name or body.get("name") or "encounter"))
        taken = await shop.id_taken(event_log, draft_id)
        if taken:
            raise ApiError(409, f"id: {draft_id!r} is already taken by {taken}")
        try:
            saved = await shop.save_draft(event_log, draft_id, 0, setup, background)
        except shop.DraftConflict:
            raise ApiError(409, f"id: {draft_id!r} is already taken by a draft") from None
        return json_response(saved, status=201)

    async def free_id(event_log: Any, base: str) -> str:
        candidate = base
        for number in range(2, 1000):
            if not await shop.id_taken(event_log, candidate):
                return candidate
            candidate = f"{base[:58]}-{number}"
        return f"{base[:40]}-{secrets.token_hex(4)}"

    async def known_image(event_log: Any, background: dict[str, Any] | None) -> None:
        if background is not None and await shop.image_meta(event_log, background["image"]) is None:
            raise ApiError(400, "background.image: no uploaded image has this id in this campaign")

    async def the_draft(request: Request) -> tuple[Any, str, shop.Draft]:
        campaign = await gm(request)
        event_log = api.event_log(campaign)
        draft_id = path_id(request, "draft")
        draft = await shop.get_draft(event_log, draft_id)
        if draft is None:
            raise ApiError(404, f"no draft {draft_id!r} in campaign {campaign!r}")
        return event_log, campaign, draft

    async def draft_get(request: Request) -> Response:
        _log, _campaign, draft = await the_draft(request)
        return json_response(draft)

    async def draft_put(request: Request) -> Response:
        event_log, _campaign, draft = await the_draft(request)
        body = await json_body(request)
        only(body, "version", "setup", "background")
        version = whole(body, "version", 1, 2**53)
        setup, _decoded = setup_object(body)
        background = background_of(body) if "background" in body else draft.background
        await known_image(event_log, background)
        try:
            saved = await shop.save_draft(event_log, draft.id, version, setup, background)
        except shop.DraftConflict as exc:
            return json_response({"error": f"changed elsewhere: this draft is at version {exc.stored}, not {version} "
                                           f"(reload it)", "version": exc.stored}, status=409)
        return json_response(saved)

    async def draft_delete(request: Request) -> Response:
        event_log, _campaign, draft = await the_draft(request)
        await shop.delete_draft(event_log, draft.id)
        return json_response({"deleted": draft.id})

    async def checks(request: Request) -> Response:
        campaign = await gm(request)
        body = await json_body(request)
        _setup, decoded = setup_object({"setup": body})
        problems = await setup_problems(api, campaign, "draft-check", decoded)
        return json_response({"ok": not problems, "problems": problems})

    async def setup_of(event_log: Any, encounter: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
        draft = await shop.get_draft(event_log, encounter)
        if draft is not None:
            return draft.setup, draft.background
        try:
            setup = await encounter_setup(event_log, encounter)
        except LookupError:
            raise ApiError(404, f"no draft or encounter {encounter!r} in campaign {event_log.campaign!r}") from None
        # The setup as it started (sheets spelled out; a campaign character keeps its
        # reference, and a new lobby takes its sheet as it stands then).
        return msgspec.to_builtins(setup), await shop.get_background(event_log, encounter)

    async def duplicate(request: Request) -> Response:
        campaign = await gm(request)
        event_log = api.event_log(campaign)
        source = path_id(request, "encounter")
        body = await json_body(request, 4096)
        only(body, "id", "name")
        setup, background = await setup_of(event_log, source)
        if body.get("name") is not None:
            setup = {**setup, "name": text(body, "name")}
        draft_id = an_id(body, "id", "draft") or await free_id(event_log, f"{source[:56]}-copy")
        taken = await shop.id_taken(event_log, draft_id)
        if taken:
            raise ApiError(409, f"id: {draft_id!r} is already taken by {taken}")
        saved = await shop.save_draft(event_log, draft_id, 0, setup, background)
        return json_response(saved, status=201)

    async def archive(request: Request, put_away: bool) -> Response:
        campaign = await gm(request)
        event_log = api.event_log(campaign)
        encounter = path_id(request, "encounter")
        rows = {row.encounter: row for row in await campaign_roster(event_log)}
        row = rows.get(encounter)
        if row is None:
            raise ApiError(404, f"no encounter {encounter!r} in campaign {campaign!r}")
        if put_away and row.status != "ended":
            raise ApiError(409, f"encounter {encounter!r} has not ended: only an ended encounter is archived")
        await shop.set_archived(event_log, encounter, put_away)
        return json_response({"encounter": encounter, "archived": put_away})

    async def archive_route(request: Request) -> Response:
        return await archive(request, True)

    async def unarchive_route(request: Request) -> Response:
        return await archive(request, False)

    # -------------------------------------------------------------- lobby and start

    async def lobby(request: Request) -> Response:
        event_log, campaign, draft = await the_draft(request)
        body = await json_body(request, 4096)
        only(body, "version")
        version = whole(body, "version", 1, 2**53)
        if version != draft.version:
            return json_response({"error": f"changed elsewhere: this draft is at version {draft.version}, not {version} "
                                           f"(reload it)", "version": draft.version}, status=409)
        _setup, decoded = setup_object({"setup": draft.setup})
        problems = await setup_problems(api, campaign, draft.id, decoded)
        if problems:
            return json_response({"error": problems[0]["line"], "problems": problems}, status=400)
        try:
            await create_encounter(event_log, draft.id, decoded, new_seed(), lobby=True)
        except SetupError as exc:
            return json_response({"error": str(exc), "problems": [problem(str(exc), None, list(decoded.combatants))]},
                                 status=400)
        except CampaignError as exc:
            raise ApiError(409 if isinstance(exc, CharacterBusy) else 400, str(exc)) from None
        except EncounterExists as exc:
            raise ApiError(409, str(exc)) from None
        if draft.background is not None:
            await shop.set_background(event_log, draft.id, draft.background)
        await shop.delete_draft(event_log, draft.id)
        return json_response({"encounter": draft.id, "state": "lobby", "seats": await seat_rows(campaign, draft.id)})

    async def seat_rows(campaign: str, encounter: str) -> list[dict[str, Any]]:
        event_log = api.event_log(campaign)
        setup = await encounter_setup(event_log, encounter)
        names = {c.id: c.name for c in setup.combatants}
        tokens = await seat_tokens(event_log, encounter)
        feed = api.feeds.get((campaign, encounter))
        rows = []
        for seat in default_seats(setup):
            token = tokens.get(seat.id)
            rows.append({"id": seat.id, "role": seat.role, "name": seat.name or seat.id,
                         "combatants": [names.get(c, c) for c in seat.combatants],
                         "link": f"/table/{campaign}/{encounter}#token={token}" if token else None,
                         "connected": feed.watching(seat.id) if feed is not None else 0})
        return rows

    async def encounter_state(event_log: Any, encounter: str) -> str:
        length = await event_log.version(encounter)
        tail = await event_log.read_from_version(encounter, max(0, length - 3)) if length else []
        if any(s.type in ("EncounterEnded", "SeedRevealed") for s in tail):
            return "ended"
        return "lobby" if await shop.in_lobby(event_log, encounter) else "running"

    async def registered(request: Request) -> tuple[Any, str, str]:
        campaign = await gm(request)
        event_log = api.event_log(campaign)
        encounter = path_id(request, "encounter")
        if await event_log.encounter_meta(encounter) is None:
            raise ApiError(404, f"no encounter {encounter!r} in campaign {campaign!r} (a draft has no seats yet: "
                                f"open its lobby)")
        return event_log, campaign, encounter

    async def seats(request: Request) -> Response:
        event_log, campaign, encounter = await registered(request)
        return json_response({"encounter": encounter, "state": await encounter_state(event_log, encounter),
                              "seats": await seat_rows(campaign, encounter)})

    async def presence(request: Request) -> Response:
        event_log, campaign, encounter = await registered(request)
        rows = await seat_rows(campaign, encounter)
        return json_response({"encounter": encounter, "state": await encounter_state(event_log, encounter),
                              "seats": [{"id": r["id"], "connected": r["connected"]} for r in rows]})

    async def start(request: Request) -> Response:
        event_log, _campaign, encounter = await registered(request)
        if await encounter_state(event_log, encounter) == "ended" or not await shop.start_lobby(event_log, encounter):
            state = await encounter_state(event_log, encounter)
            raise ApiError(409, f"encounter {encounter!r} is not in the lobby (it is {state})")
        api.started.add((event_log.campaign, encounter))
        return json_response({"encounter": encounter, "state": "running"})

    async def move(request: Request) -> Response:
        event_log, campaign, encounter = await registered(request)
        body = await json_body(request, 4096)
        only(body, "combatant", "to", "reason", "command_id")
        combatant = an_id(body, "combatant", "combatant", required=True)
        to = body.get("to")
        if (not isinstance(to, list) or len(to) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in to)):
            raise ApiError(400, "to: must be a square [x, y] of whole numbers")
        reason = text(body, "reason", most=400)
        if not reason.strip():
            raise ApiError(400, "reason: a GM's move needs a reason (it is shown in audit and replay)")
        command_id = text(body, "command_id", most=64) or f"move-{secrets.token_hex(6)}"
        if not _COMMAND_ID.fullmatch(command_id):
            raise ApiError(400, "command_id: must be 1-64 characters of A-Z a-z 0-9 _ . : @ # -")
        state = await encounter_state(event_log, encounter)
        if state != "running":
            raise ApiError(409, f"encounter {encounter!r} is not running (it is {state})")
        setup = await encounter_setup(event_log, encounter)
        gm_seat = next(s.id for s in default_seats(setup) if s.role == "gm")
        command = GMAdjust(command_id=command_id, actor=GM, combatant=combatant, changes={"position": list(to)},
                           reason=reason)
        after = await event_log.version(encounter)
        key = f"{gm_seat}/{command_id}"
        try:
            inbox_id = await event_log.submit(encounter, codec.encode_command(command), seat=gm_seat)
        except InboxClosed as exc:
            raise ApiError(409, str(exc)) from None
        except InboxFull as exc:
            raise ApiError(429, str(exc)) from None
        wanted = {key, f"{gm_seat}/inbox:{inbox_id}"}
        feed = await api.feed(campaign, encounter)
        with trio.move_on_after(15):
            while True:
                found = [s for s in await feed.after(after) if s.command_id in wanted]
                if found:
                    rejected = next((s for s in found if s.type == codec.event_tag(CommandRejected)), None)
                    if rejected is not None:
                        reason_text = msgspec.json.decode(event_message(rejected))["data"].get("reason", "refused")
                        raise ApiError(400, reason_text)
                    return json_response({"event": msgspec.json.decode(event_message(found[0]))})
                await feed.wait_until(feed.version + 1)
        raise ApiError(504, "the engine did not answer within 15 s (is firelane serve running this encounter?)")

    # -------------------------------------------------------------- images

    async def image_post(request: Request) -> Response:
        campaign = await gm(request)
        media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media_type not in IMAGE_TYPES:
            raise ApiError(415, "the image must be sent as image/png, image/jpeg or image/webp")
        data = await read_body(request, MAX_IMAGE_BYTES, "the image")
        meta = await trio.to_thread.run_sync(check_image, data, media_type)
        data = without_metadata(data, media_type, meta["orientation"])
        meta = await trio.to_thread.run_sync(check_image, data, media_type)  # what is kept is checked too
        del meta["orientation"]
        image = await shop.keep_image(api.event_log(campaign), data, meta)
        return json_response({"image": image, **meta}, status=201)

    async def image_get(request: Request) -> Response:
        campaign = await gm(request)
        image = request.path_params["image"]
        return await image_answer(api.event_log(campaign), image)

    # -------------------------------------------------------------- characters and archetypes

    async def systems(request: Request) -> Response:
        await gm(request)
        return json_response({"systems": [{"name": s.name, "title": s.title} for s in (get_system(n) for n in system_names())]})

    async def form(request: Request) -> Response:
        await systems(request)
        try:
            system = get_system(request.path_params["system"])
        except UnknownSystem as exc:
            raise ApiError(404, UnknownSystem.__str__(exc)) from None
        return json_response(character_form(system))

    def character_row(view: Any, character: str) -> Any:
        return next((c for c in view.characters if c.id == character), None)

    async def character_create(request: Request) -> Response:
        campaign = await gm(request)
        event_log = api.event_log(campaign)
        body = await json_body(request)
        only(body, "id", "name", "system", "sheet", "notes")
        name = text(body, "name", required=True)
        if not name.strip():
            raise ApiError(400, "name: must not be empty")
        try:
            system = get_system(text(body, "system", required=True, most=64))
        except UnknownSystem as exc:
            raise ApiError(400, f"system: {UnknownSystem.__str__(exc)}") from None
        sheet = body.get("sheet", {})
        if not isinstance(sheet, dict):
            raise ApiError(400, "sheet: must be a JSON object")
        character = an_id(body, "id", "character") or slug(name)
        view = await campaign_characters(event_log)
        if character_row(view, character) is not None:
            raise ApiError(409, f"id: campaign {campaign!r} already has a character {character!r}")
        try:
            await create_characters(event_log, [(system, character, name, sheet, text(body, "notes", most=2000))])
        except CampaignError as exc:
            raise ApiError(400, str(exc)) from None
        return json_response({"character": character_row(await campaign_characters(event_log), character)}, status=201)

    async def character_adjust(request: Request, kind: str) -> Response:
        campaign = await gm(request)
        event_log = api.event_log(campaign)
        character = path_id(request, "character")
        body = await json_body(request)
        if kind == "edit":
            only(body, "set", "add", "unset", "name", "reason", "command_id")
            sets = body.get("set", {})
            adds = body.get("add", {})
            unset = body.get("unset", [])
            if not isinstance(sets, dict):
                raise ApiError(400, "set: must be an object of sheet fields")
            if not isinstance(adds, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                     for v in adds.values()):
                raise ApiError(400, "add: must be an object of sheet fields and numbers")
            if not isinstance(unset, list) or not all(isinstance(v, str) for v in unset):
                raise ApiError(400, "unset: must be a list of sheet fields")
            if body.get("name") is not None:
                sets = {**sets, "name": text(body, "name")}
            wanted = Adjustment(set=sets, add=adds, unset=unset, reason=text(body, "reason", most=400))
        else:
            only(body, "reason", "command_id")
            wanted = Adjustment(retire=kind == "retire", revive=kind == "revive", reason=text(body, "reason", most=400))
        if not wanted.reason.strip():
            raise ApiError(400, "reason: required (it goes into the character's history)")
        command_id = text(body, "command_id", most=64)
        if command_id and not _COMMAND_ID.fullmatch(command_id):
            raise ApiError(400, "command_id: must be 1-64 characters of A-Z a-z 0-9 _ . : @ # -")
        try:
            await adjust(event_log, character, wanted, via="api", command_id=command_id)
        except CampaignError as exc:
            status = 409 if isinstance(exc, CharacterBusy) else 404 if str(exc).startswith("no character ") else 400
            raise ApiError(status, str(exc)) from None
        return json_response({"character": character_row(await campaign_characters(event_log), character)})

    async def edit_route(request: Request) -> Response:
        return await character_adjust(request, "edit")

    async def retire_route(request: Request) -> Response:
        return await character_adjust(request, "retire")

    async def revive_route(request: Request) -> Response:
        return await character_adjust(request, "revive")

    async def archetypes_get(request: Request) -> Response:
        campaign = await gm(request)
        wanted = request.query_params.get("system")
        found = []
        for name in system_names():
            system = get_system(name)
            if wanted and system.name != get_system(wanted).name:
                continue
            found += [{**a, "system": system.name, "source": "system"} for a in bestiary(system)]
        found += [{**a, "source": "campaign"} for a in await shop.campaign_archetypes(api.event_log(campaign))
                  if not wanted or a["system"] == get_system(wanted).name]
        return json_response({"archetypes": found})

    async def archetypes_post(request: Request) -> Response:
        campaign = await gm(request)
        body = await json_body(request)
        only(body, "id", "name", "system", "sheet")
        archetype = an_id(body, "id", "archetype", required=True)
        name = text(body, "name", required=True)
        try:
            system = get_system(text(body, "system", required=True, most=64))
        except UnknownSystem as exc:
            raise ApiError(400, f"system: {UnknownSystem.__str__(exc)}") from None
        sheet = body.get("sheet")
        if not isinstance(sheet, dict):
            raise ApiError(400, "sheet: must be a JSON object")
        trial = EncounterSetup(system=system.name, combatants=[CombatantSetup(
            id=archetype, name=name or archetype, side="a", position=(0, 0), sheet=sheet)],  # type: ignore[arg-type]
            terrain=Terrain(**DEFAULT_MAP))
        problems = await setup_problems(api, campaign, "archetype-check", trial)
        sheet_problems = [p for p in problems if p["path"].startswith("combatants[0].sheet") or "sheet" in p["line"]]
        if sheet_problems:
            first = sheet_problems[0]
            raise ApiError(400, f"sheet.{first['path'].split('.sheet.', 1)[-1]}: {first['message']}"
                           if ".sheet." in first["path"] else first["line"])
        record = {"id": archetype, "name": name, "system": system.name, "sheet": sheet}
        await shop.save_archetype(api.event_log(campaign), record)
        return json_response({**record, "source": "campaign"}, status=201)

    async def archetype_delete(request: Request) -> Response:
        campaign = await gm(request)
        archetype = path_id(request, "archetype")
        if not await shop.delete_archetype(api.event_log(campaign), archetype):
            raise ApiError(404, f"no archetype {archetype!r} saved in campaign {campaign!r}")
        return json_response({"deleted": archetype})

    # -------------------------------------------------------------- rests, export, import

    async def rest_route(request: Request) -> Response:
        campaign = await gm(request)
        event_log = api.event_log(campaign)
        body = await json_body(request, 65536)
        only(body, "characters", "party", "days", "healer", "strenuous", "resupply")
        days = whole(body, "days", 1, 365)
        everyone = yes_no(body, "party")
        names = body.get("characters", [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ApiError(400, "characters: must be a list of character ids")
        if everyone == bool(names):
            raise ApiError(400, "characters: name who rests, or give party: true (not both)")
        healer = an_id(body, "healer", "character") or ""
        strenuous, resupply = yes_no(body, "strenuous"), yes_no(body, "resupply")

        def request_of(state: Any) -> DowntimeRequest:
            who = party(state) if everyone else list(names)
            if not who:
                raise CampaignError("party: nobody can rest (every character is dead, retired or in a fight)")
            return DowntimeRequest(characters=who, days=days, healer=healer, strenuous=strenuous, resupply=resupply)

        try:
            events = await rest(event_log, request_of)
        except CampaignError as exc:
            raise ApiError(400, str(exc)) from None
        return json_response({"events": [msgspec.to_builtins(e) for e in events],
                              "lines": rest_lines(events)})

    async def export_route(request: Request) -> Response:
        campaign = await gm(request)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"{campaign}.firelane"
            try:
                await export_campaign(api.store, campaign, path, progress=False)
            except CliError as exc:
                raise ApiError(409, str(exc)) from None
            data = await trio.Path(path).read_bytes()
        return Response(data, media_type="application/octet-stream",
                        headers={"Content-Disposition": f'attachment; filename="{campaign}.firelane"'})

    async def import_route(request: Request) -> Response:
        found = await signed_in_record(request)
        if found is None or not await signed_campaigns(api, found[1]):
            raise ApiError(401, "sign in as a campaign's GM first: a campaign is imported by a GM")
        as_name = request.query_params.get("as") or None
        if as_name is not None:
            try:
                validate_id("campaign", as_name)
            except ValueError:
                raise ApiError(400, f"as: {as_name[:64]!r} must be 1-64 characters of A-Z a-z 0-9 _ . -") from None
        data = await read_body(request, MAX_IMPORT_BYTES, "the campaign file")
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "import.firelane"
            await trio.Path(path).write_bytes(data)
            try:
                name, verified = await import_campaign(api.store, path, as_name, trust=store_trust(api.store),
                                                       progress=False)
            except (CliError, ValueError) as exc:
                line = str(exc).splitlines()[0].replace(str(path), "the file")  # not this server's scratch path
                raise ApiError(400, line[:400]) from None
        token = await gm_token(api.event_log(name), renew=True)
        await shop.sign_in(client, found[0], name, token_digest(token))
        return json_response({"name": name, "encounters": verified.encounters, "characters": verified.characters,
                              "token": token, "link": f"/workshop/{name}#gm={token}"}, status=201)

    base = "/api/workshop/campaigns/{campaign}"
    return [
        Route("/api/workshop/session", session_get, methods=["GET"]),
        Route("/api/workshop/session", session_post, methods=["POST"]),
        Route("/api/workshop/session", session_delete, methods=["DELETE"]),
        Route("/api/workshop/campaigns", campaigns_list, methods=["GET"]),
        Route("/api/workshop/campaigns", campaigns_post, methods=["POST"]),
        Route("/api/workshop/campaigns/import", import_route, methods=["POST"]),
        Route(f"{base}/systems", systems, methods=["GET"]),
        Route(f"{base}/systems/{{system}}/form", form, methods=["GET"]),
        Route(f"{base}/token/rotate", rotate, methods=["POST"]),
        Route(f"{base}/encounters", encounters, methods=["GET"]),
        Route(f"{base}/drafts", draft_create, methods=["POST"]),
        Route(f"{base}/drafts/{{draft}}", draft_get, methods=["GET"]),
        Route(f"{base}/drafts/{{draft}}", draft_put, methods=["PUT"]),
        Route(f"{base}/drafts/{{draft}}", draft_delete, methods=["DELETE"]),
        Route(f"{base}/drafts/{{draft}}/lobby", lobby, methods=["POST"]),
        Route(f"{base}/checks", checks, methods=["POST"]),
        Route(f"{base}/encounters/{{encounter}}/duplicate", duplicate, methods=["POST"]),
        Route(f"{base}/encounters/{{encounter}}/archive", archive_route, methods=["POST"]),
        Route(f"{base}/encounters/{{encounter}}/unarchive", unarchive_route, methods=["POST"]),
        Route(f"{base}/encounters/{{encounter}}/seats", seats, methods=["GET"]),
        Route(f"{base}/encounters/{{encounter}}/presence", presence, methods=["GET"]),
        Route(f"{base}/encounters/{{encounter}}/start", start, methods=["POST"]),
        Route(f"{base}/encounters/{{encounter}}/move", move, methods=["POST"]),
        Route(f"{base}/images", image_post, methods=["POST"]),
        Route(f"{base}/images/{{image}}", image_get, methods=["GET"]),
        Route(f"{base}/characters", character_create, methods=["POST"]),
        Route(f"{base}/characters/{{character}}/edit", edit_route, methods=["POST"]),
        Route(f"{base}/characters/{{character}}/retire", retire_route, methods=["POST"]),
        Route(f"{base}/characters/{{character}}/revive", revive_route, methods=["POST"]),
        Route(f"{base}/archetypes", archetypes_get, methods=["GET"]),
        Route(f"{base}/archetypes", archetypes_post, methods=["POST"]),
        Route(f"{base}/archetypes/{{archetype}}", archetype_delete, methods=["DELETE"]),
        Route(f"{base}/rest", rest_route, methods=["POST"]),
        Route(f"{base}/export", export_route, methods=["GET"]),
    ]


async def image_answer(event_log: Any, image: str) -> Response:
    if not re.fullmatch(r"[0-9a-f]{64}", image):
        raise ApiError(400, "image: not an image id")
    meta = await shop.image_meta(event_log, image)
    data = await shop.image_bytes(event_log, image)
    if meta is None or data is None:
        raise ApiError(404, f"no image {image[:16]}… in campaign {event_log.campaign!r}")
    return Response(data, media_type=meta["media_type"], headers={"Cache-Control": "private, max-age=86400"})


def rest_lines(events: list[Any]) -> list[str]:
    from firelane.events.campaign_schemas import CharacterRested, DowntimeEnded, DowntimeStarted

    lines = []
    for event in events:
        if isinstance(event, DowntimeStarted):
            lines.append(f"downtime {event.downtime}: {event.days} day(s){' of strenuous activity' if event.strenuous else ''}"
                         f" for {', '.join(event.characters)}{'; healer ' + event.healer if event.healer else ''}")
        elif isinstance(event, CharacterRested):
            lines.append(f"{event.character}: {event.status}" + "".join(f"; {note}" for note in event.notes))
        elif isinstance(event, DowntimeEnded):
            lines.append(f"downtime {event.downtime}: seed revealed; every die can be checked (firelane audit --downtime --verify)")
    return lines


__all__ = ["check_image", "image_answer", "rest_lines", "setup_problems", "workshop_routes"]
