"""Hostile uploads to the GM's workshop over real HTTP (the server of
tests/test_workshop_api.py): damaged and two-faced images are refused."""

from __future__ import annotations

import io

import pytest
import trio
from PIL import Image

from tests.test_workshop_api import Shop, png, shop  # noqa: F401 - `shop` is the fixture


def jpeg(width: int = 256, height: int = 256) -> bytes:
    out = io.BytesIO()
    Image.effect_noise((width, height), 64).convert("RGB").save(out, "JPEG", quality=90)
    return out.getvalue()


async def test_a_truncated_jpeg_is_refused_as_damaged(shop: Shop) -> None:
    whole = jpeg()
    async with shop.browser() as http:
        assert (await http.post(shop.url("/images"), content=whole, headers={"Content-Type": "image/jpeg"})).status_code == 201
        cut = await http.post(shop.url("/images"), content=whole[: len(whole) * 2 // 3],
                              headers={"Content-Type": "image/jpeg"})
    assert cut.status_code == 400, cut.text
    assert cut.json()["error"] == "the image is damaged (it ends early)"


async def test_a_png_carrying_a_page_after_its_end_is_refused(shop: Shop) -> None:
    page = b"<html><script>fetch('/api/workshop/session')</script></html>" + b"IEND\xaeB`\x82"  # a false end, too
    polyglot = png() + page
    async with shop.browser() as http:
        sent = await http.post(shop.url("/images"), content=polyglot, headers={"Content-Type": "image/png"})
    assert sent.status_code == 400, sent.text
    assert sent.json()["error"] == f"the image has {len(page)} bytes after its end (a file hidden in it?)"


def with_private_details(kind: str) -> bytes:
    """A picture as a phone makes it: Exif with a GPS position (and, for
    JPEG, a turned orientation), plus a comment, text or XMP where the format has them."""
    from PIL import PngImagePlugin

    picture = Image.effect_noise((96, 64), 64).convert("RGB")
    exif = Image.Exif()
    exif[0x0112] = 6  # turned: the browser shows it upright by this
    exif[0x010F] = "PhoneMaker"
    exif.get_ifd(0x8825).update({1: "N", 2: (51.0, 30.0, 26.0), 3: "W", 4: (0.0, 7.0, 39.0)})
    out = io.BytesIO()
    if kind == "JPEG":
        picture.save(out, "JPEG", exif=exif.tobytes(), comment=b"GM home: 12 Secret Lane")
    elif kind == "PNG":
        text = PngImagePlugin.PngInfo()
        text.add_text("Comment", "GM home: 12 Secret Lane")
        picture.save(out, "PNG", pnginfo=text, exif=exif.tobytes())
    else:
        picture.save(out, "WEBP", exif=exif.tobytes(), xmp=b"<x:xmpmeta>GM home: 12 Secret Lane</x:xmpmeta>")
    return out.getvalue()


@pytest.mark.parametrize("kind", ["JPEG", "PNG", "WEBP"])
async def test_an_image_is_served_without_where_and_when_it_was_taken(shop: Shop, kind: str) -> None:
    sent = with_private_details(kind)
    assert b"PhoneMaker" in sent and b"Secret Lane" in sent
    async with shop.browser() as http:
        kept = await http.post(shop.url("/images"), content=sent, headers={"Content-Type": f"image/{kind.lower()}"})
        assert kept.status_code == 201, kept.text
        served = (await http.get(shop.url(f"/images/{kept.json()['image']}"))).content
    assert kept.json()["bytes"] == len(served)
    assert b"PhoneMaker" not in served and b"Secret Lane" not in served
    with Image.open(io.BytesIO(served)) as image:
        exif = image.getexif()
        assert exif.get_ifd(0x8825) == {} and 0x010F not in exif
        assert exif.get(0x0112, 1) == (6 if kind == "JPEG" else 1)
        image.load()  # still a whole picture
        with Image.open(io.BytesIO(sent)) as original:
            assert image.tobytes() == original.tobytes()  # the pixels untouched


# Open to anyone by design (docs): the pages' shells, the contract, health, and the campaign's
# roster and characters ("the reads take no token", web/campaign.py).
PUBLIC = {"/", "/favicon.ico", "/api/openapi.json", "/api/asyncapi.json", "/api/health", "/api/schema",
          "/table/{campaign}/{encounter}", "/characters/{campaign}/{character}", "/api/workshop/session",
          "/workshop", "/workshop/{campaign}", "/workshop/{campaign}/build/{draft}",
          "/workshop/{campaign}/lobby/{encounter}", "/api/campaigns/{campaign}/encounters",
          "/api/campaigns/{campaign}/characters", "/api/campaigns/{campaign}/characters/{character}"}


async def test_no_route_answers_an_outsider_with_data_or_a_crash(shop: Shop) -> None:
    """Every route the app serves, every method, with no credential at all
    (and with a made-up one): refused, never a 2xx with data, never a 500."""
    from starlette.routing import Mount, Route

    from firelane.web.app import make_app
    from firelane.web.guard import ServedNames

    app = make_app(shop.api, ServedNames())
    params = {"campaign": "home", "encounter": "raid", "character": "kell", "hook": "h1", "draft": "raid",
              "image": "0" * 64, "archetype": "a1", "seat": "alice", "system": "rond6"}
    answered: dict[str, int] = {}
    async with __import__("httpx").AsyncClient(base_url=shop.base, timeout=20) as http:
        for route in app.routes:
            if isinstance(route, Mount) or not isinstance(route, Route) or route.path in PUBLIC:
                continue
            path = route.path
            for name, value in params.items():
                path = path.replace("{" + name + "}", value)
            assert "{" not in path, route.path
            for method in sorted((route.methods or {"GET"}) - {"HEAD"}):
                for headers in ({}, {"Authorization": "Bearer 0123456789abcdef0123456789abcdef"}):
                    answer = await http.request(method, path, headers=headers, json={})
                    answered[f"{method} {route.path} {bool(headers)}"] = answer.status_code
    wrong = {k: v for k, v in answered.items() if not 400 <= v < 500}
    assert not wrong, sorted(wrong.items())
    assert len(answered) > 40


async def test_what_outsiders_may_read_holds_no_token(shop: Shop) -> None:
    """The roster and characters are open to anyone: a lobby's and a running
    fight's seat tokens and the GM token stay out of them."""
    from tests.test_workshop_api import humans, new_draft

    async with shop.browser() as http:
        await new_draft(http, shop, humans())
        lobby = await http.post(shop.url("/drafts/raid/lobby"), json={"version": 1})
        assert lobby.status_code == 200, lobby.text
        tokens = [s["link"].partition("#token=")[2] for s in lobby.json()["seats"] if "#token=" in s.get("link", "")]
        assert len(tokens) >= 3
        secrets_now = [*tokens, shop.token]
        readable = []
        async with __import__("httpx").AsyncClient(base_url=shop.base, timeout=20) as outsider:
            for path in ("/api/campaigns/home/encounters", "/api/campaigns/home/encounters?page=1",
                         "/api/campaigns/home/characters", "/api/openapi.json", "/api/asyncapi.json"):
                readable.append((await outsider.get(path)).text)
            assert (await http.post(shop.url("/encounters/raid/start"))).status_code == 200
            for path in ("/api/campaigns/home/encounters", "/api/campaigns/home/characters"):
                readable.append((await outsider.get(path)).text)
    for text in readable:
        for secret in secrets_now:
            assert secret not in text
    assert "raid" in readable[0]  # the roster does list the lobby


async def test_two_gms_making_the_same_campaign_at_once_never_share_its_token(shop: Shop) -> None:
    """Two signed-in GMs (of other campaigns) ask for the same new campaign
    name at the same moment: one gets it, the other 409 — never both its token."""
    answers: list = []
    async with shop.browser() as first, shop.browser() as second:
        async def make(http, index: int) -> None:
            answers.append(await http.post("/api/workshop/campaigns", json={"name": "contested"}))

        async with trio.open_nursery() as nursery:
            for index in range(12):
                nursery.start_soon(make, (first, second)[index % 2], index)
    made = [a for a in answers if a.status_code == 201]
    assert len(made) == 1, [a.json().get("token", "")[:6] for a in made]
    assert sorted({a.status_code for a in answers}) == [201, 409]
    assert all(a.json() == {"error": "campaign 'contested' already exists"} for a in answers if a.status_code == 409)


async def test_making_a_campaign_is_one_step_so_racing_makers_never_share_its_token(shop: Shop, redis_url: str) -> None:
    """Two servers on one store (each its own connection) make the same campaign at once."""
    from firelane.actors.workshop import create_campaign
    from firelane.events.log import EventLog
    from firelane.redisio import connect

    store = shop.api.store
    clients = [await connect(redis_url) for _ in range(6)]
    tokens: list = []

    async def make(client) -> None:
        tokens.append(await create_campaign(EventLog(client, "raced", server_key=store.server_key,
                                                     signer=store.log_signer())))

    try:
        async with trio.open_nursery() as nursery:
            for client in clients:
                nursery.start_soon(make, client)
    finally:
        for client in clients:
            await client.aclose()
    assert len([t for t in tokens if t is not None]) == 1, tokens
