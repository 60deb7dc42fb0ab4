"""The GM's workshop API (docs/workshop-api.md), driven over real HTTP against
the API served in this process on a real redis-server: the sign-in cookie and
its CSRF and Origin checks, rotation, drafts (whole or not at all, stale
versions refused), the checks, images, the lobby (nothing rolled before the
start), presence over real WebSockets, the start, the GM's move, characters,
archetypes, rests, export and import, several campaigns; and every route
refused to a seat's token."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
import trio
from hypercorn.trio import serve as hypercorn_serve
from PIL import Image
from trio_websocket import open_websocket_url

from firelane.actors.campaign import gm_token
from firelane.actors.runtime import default_policies, run_encounter
from firelane.actors.store import open_store
from firelane.actors.workshop import create_campaign
from firelane.engine.registry import demo_setup, get_system, system_names
from firelane.web.app import Api, make_app
from firelane.web.guard import ServedNames, hypercorn_config

CAMPAIGN = "home"
ZONES_DEMO = demo_setup("d100-zones")


def humans(setup: Any = ZONES_DEMO, count: int = 8) -> dict[str, Any]:
    """The zones demo's setup JSON, its first ``count`` combatants played by people (one seat per side: rangers, raiders)."""
    given = msgspec.json.decode(msgspec.json.encode(setup))
    for combatant in given["combatants"][:count]:
        combatant["policy"] = "human"
    return given


class Shop:
    def __init__(self, base: str, api: Api, token: str) -> None:
        self.base = base
        self.api = api
        self.token = token

    def api_routes(self) -> list[tuple[str, str]]:
        from firelane.web.workshop import workshop_routes

        return [(method, route.path) for route in workshop_routes(self.api) for method in sorted(route.methods or ())
                if method != "HEAD"]

    def url(self, path: str) -> str:
        return f"{self.base}/api/workshop/campaigns/{CAMPAIGN}{path}"

    @asynccontextmanager
    async def browser(self, token: str | None = None) -> AsyncIterator[httpx.AsyncClient]:
        """A browser signed in as the GM: its cookie, and the CSRF header on every request."""
        async with httpx.AsyncClient(base_url=self.base, timeout=20) as http:
            answer = await http.post("/api/workshop/session", json={"campaign": CAMPAIGN, "token": token or self.token})
            assert answer.status_code == 200, answer.text
            http.headers["X-Firelane-CSRF"] = answer.json()["csrf"]
            yield http


@pytest.fixture
async def shop(redis_url: str, tmp_path: Path) -> AsyncIterator[Shop]:
    async with open_store(redis_url=redis_url, data_dir=tmp_path / "data") as store:
        token = await create_campaign(store.event_log(CAMPAIGN))
        assert token is not None
        async with trio.open_nursery() as nursery:
            api = Api(store, nursery)
            names = ServedNames()
            binds = await nursery.start(lambda task_status: hypercorn_serve(
                make_app(api, names), hypercorn_config("127.0.0.1", 0), task_status=task_status))
            names.add_urls(binds)
            yield Shop(binds[0].rstrip("/"), api, token)
            nursery.cancel_scope.cancel()


def png(width: int = 64, height: int = 48, mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, (width, height)).save(out, "PNG")
    return out.getvalue()


async def new_draft(http: httpx.AsyncClient, shop: Shop, setup: dict[str, Any], draft: str = "raid") -> dict[str, Any]:
    answer = await http.post(shop.url("/drafts"), json={"id": draft, "setup": setup})
    assert answer.status_code == 201, answer.text
    return answer.json()


# ------------------------------------------------------------------ signing in


async def test_the_sign_in_link_sets_a_strict_http_only_cookie_and_unsafe_calls_need_the_csrf_header(shop: Shop) -> None:
    async with httpx.AsyncClient(base_url=shop.base, timeout=20) as http:
        assert (await http.get("/api/workshop/session")).json() == {"signed_in": False, "campaigns": [], "csrf": None}
        wrong = await http.post("/api/workshop/session", json={"campaign": CAMPAIGN, "token": "nope"})
        assert wrong.status_code == 403 and wrong.json()["error"].startswith("this is not campaign home's GM token")
        missing = await http.post("/api/workshop/session", json={"campaign": "elsewhere", "token": "nope"})
        assert missing.status_code == 404 and missing.json() == {"error": "no campaign 'elsewhere' in this store"}
        foreign = await http.post("/api/workshop/session", json={"campaign": CAMPAIGN, "token": shop.token},
                                  headers={"Origin": "https://evil.example"})
        assert foreign.status_code == 403 and foreign.json()["error"].startswith("cross-site request refused")
        assert (await http.get(shop.url("/encounters"))).status_code == 401
        signed = await http.post("/api/workshop/session", json={"campaign": CAMPAIGN, "token": shop.token},
                                 headers={"Origin": shop.base})
        assert signed.status_code == 200 and signed.json()["campaigns"] == [CAMPAIGN]
        cookie = signed.headers["set-cookie"].lower()
        assert "firelane_gm=" in cookie and "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
        csrf = signed.json()["csrf"]
        assert (await http.get("/api/workshop/session")).json() == {"signed_in": True, "campaigns": [CAMPAIGN], "csrf": csrf}
        assert (await http.get(shop.url("/encounters"))).status_code == 200  # a read needs no CSRF header
        body = {"system": "d100-zones", "name": "Ambush"}
        no_header = await http.post(shop.url("/drafts"), json=body)
        assert no_header.status_code == 403
        assert no_header.json() == {"error": "missing or wrong X-Firelane-CSRF header (reload the page)"}
        wrong_header = await http.post(shop.url("/drafts"), json=body, headers={"X-Firelane-CSRF": csrf + "x"})
        assert wrong_header.status_code == 403
        cross = await http.post(shop.url("/drafts"), json=body,
                                headers={"X-Firelane-CSRF": csrf, "Origin": "http://attacker.test"})
        assert cross.status_code == 403 and "cross-site" in cross.json()["error"]
        made = await http.post(shop.url("/drafts"), json=body, headers={"X-Firelane-CSRF": csrf, "Origin": shop.base})
        assert made.status_code == 201 and made.json()["id"] == "ambush"
        out = await http.delete("/api/workshop/session", headers={"X-Firelane-CSRF": csrf})
        assert out.json() == {"signed_in": False, "campaigns": []}
        assert (await http.get(shop.url("/encounters"))).status_code == 401


async def test_rotating_the_token_signs_out_every_browser_but_the_one_that_rotated(shop: Shop) -> None:
    async with shop.browser() as first, shop.browser() as second:
        assert (await second.get(shop.url("/encounters"))).status_code == 200
        rotated = await first.post(shop.url("/token/rotate"))
        assert rotated.status_code == 200 and rotated.json()["link"] == f"/workshop/{CAMPAIGN}#gm={rotated.json()['token']}"
        assert (await first.get(shop.url("/encounters"))).status_code == 200
        gone = await second.get(shop.url("/encounters"))
        assert gone.status_code == 403 and "rotated" in gone.json()["error"]
        old = await second.get(shop.url("/encounters"), headers={"Authorization": f"Bearer {shop.token}"})
        assert old.status_code == 403
        # The CLI's rotation (firelane campaign token --rotate) signs out the one that rotated too.
        await gm_token(shop.api.event_log(CAMPAIGN), renew=True)
        assert (await first.get(shop.url("/encounters"))).status_code == 403


async def test_a_script_uses_the_gm_token_and_a_seat_token_opens_no_workshop_route(shop: Shop) -> None:
    async with shop.browser() as http:
        await new_draft(http, shop, humans())
        lobby = (await http.post(shop.url("/drafts/raid/lobby"), json={"version": 1})).json()
    tokens = [seat["link"].partition("#token=")[2] for seat in lobby["seats"]]
    assert len(tokens) == 4 and all(tokens)  # the GM seat, two sides' players, the spectator
    routes = [r for r in shop.api_routes() if r[1].startswith("/api/workshop/campaigns/{campaign}")]
    assert len(routes) == 28  # every route of docs/workshop-api.md under a campaign
    async with httpx.AsyncClient(base_url=shop.base, timeout=20) as http:
        for method, path in routes:
            url = path.format(campaign=CAMPAIGN, draft="raid", encounter="raid", character="kell", image="0" * 64,
                              archetype="a", system="rond6")
            for token in tokens:
                answer = await http.request(method, url, headers={"Authorization": f"Bearer {token}"},
                                            content=b"{}")
                assert answer.status_code == 403, (method, url, answer.text)
                assert answer.json() == {"error": "this token is not the campaign's GM token"}
        script = await http.get(shop.url("/encounters"), headers={"Authorization": f"Bearer {shop.token}"})
        assert script.status_code == 200 and [row["id"] for row in script.json()["lobby"]] == ["raid"]
        for method, path in [("GET", "/api/workshop/campaigns"), ("POST", "/api/workshop/campaigns"),
                             ("POST", "/api/workshop/campaigns/import")]:
            answer = await http.request(method, path, headers={"Authorization": f"Bearer {tokens[0]}"}, content=b"{}")
            assert answer.status_code == 401


# ------------------------------------------------------------------ drafts and checks


async def test_a_draft_is_saved_whole_or_not_at_all_and_a_stale_tab_gets_changed_elsewhere(shop: Shop) -> None:
    async with shop.browser() as tab_one, shop.browser() as tab_two:
        draft = await new_draft(tab_one, shop, humans())
        assert draft["version"] == 1 and draft["setup"] == humans()
        setup = humans()
        setup["name"] = "Raid at dusk"
        saved = await tab_one.put(shop.url("/drafts/raid"), json={"version": 1, "setup": setup})
        assert saved.status_code == 200 and saved.json()["version"] == 2
        stale = await tab_two.put(shop.url("/drafts/raid"), json={"version": 1, "setup": humans()})
        assert stale.status_code == 409
        assert stale.json() == {"error": "changed elsewhere: this draft is at version 2, not 1 (reload it)", "version": 2}
        broken = humans()
        broken["combatants"][0]["position"] = "middle"
        bad = await tab_two.put(shop.url("/drafts/raid"), json={"version": 2, "setup": broken})
        assert bad.status_code == 400
        assert bad.json() == {"error": "setup: combatants[0].position: Expected `array | null`, got `str`"}
        typo = humans()
        typo["terain"] = {}
        unknown = await tab_two.put(shop.url("/drafts/raid"), json={"version": 2, "setup": typo})
        assert unknown.status_code == 400 and unknown.json()["error"].startswith("setup: terain: unknown field; known:")
        kept = (await tab_two.get(shop.url("/drafts/raid"))).json()
        assert kept["version"] == 2 and kept["setup"] == setup  # nothing half-saved
        assert (await tab_two.put(shop.url("/drafts/raid"), json={"version": 2, "setup": setup, "extra": 1})).json() == {
            "error": "extra: unknown field (this takes: version, setup, background)"}
        taken = await tab_two.post(shop.url("/drafts"), json={"id": "raid", "system": "rond6"})
        assert taken.status_code == 409 and taken.json() == {"error": "id: 'raid' is already taken by a draft"}
        copy = await tab_two.post(shop.url("/encounters/raid/duplicate"), json={"name": "Raid again"})
        assert copy.status_code == 201 and copy.json()["id"] == "raid-copy"
        assert copy.json()["setup"] == {**setup, "name": "Raid again"}
        listed = (await tab_two.get(shop.url("/encounters"))).json()
        assert sorted(row["id"] for row in listed["draft"]) == ["raid", "raid-copy"]
        assert (await tab_two.delete(shop.url("/drafts/raid-copy"))).json() == {"deleted": "raid-copy"}
        assert (await tab_two.get(shop.url("/drafts/raid-copy"))).status_code == 404
        empty = await tab_two.post(shop.url("/drafts"), json={"system": "bolt-and-blade", "name": "Empty Hall"})
        assert empty.json()["id"] == "empty-hall" and empty.json()["setup"]["terrain"] == {"width": 20, "height": 15}
        nosys = await tab_two.post(shop.url("/drafts"), json={"system": "chess"})
        assert nosys.status_code == 400 and nosys.json()["error"].startswith("system: unknown rule system 'chess'")


async def test_the_checks_list_every_combatants_problem_with_its_field_path(shop: Shop) -> None:
    setup = humans()
    setup["combatants"][1]["position"] = list(setup["combatants"][0]["position"])  # on Ives's square
    setup["combatants"][2]["sheet"] = {**setup["combatants"][2]["sheet"], "hp": 0}
    setup["combatants"][5]["sheet"] = {"armour": "plate_mail", "weapons": ["pistol"]}
    async with shop.browser() as http:
        checked = (await http.post(shop.url("/checks"), json=setup)).json()
        assert checked["ok"] is False
        assert [(p["path"], p["message"]) for p in checked["problems"]] == [
            ("combatants[2].sheet.hp", "must be at least 1 (got 0)"),
            ("combatants[5].sheet.armour", "names no armour of d100-zones: 'plate_mail' (known: kevlar_vest, "
                                           "leather_jacket, none, riot_armour)"),
            ("combatants[1].position", "(6, 6) is already taken by rg-ives"),
        ]
        # The same setup through firelane create's own check names the first of them.
        fine = humans()
        fine["combatants"][5]["sheet"] = {"armour": "riot_armour", "weapons": ["pistol", "machete"]}
        assert (await http.post(shop.url("/checks"), json=fine)).json() == {"ok": True, "problems": []}
        degrees = msgspec.json.decode(msgspec.json.encode(demo_setup("d100-degrees")))
        degrees["combatants"][0]["sheet"] = {"weapon_skill": 40, "ballistic_skill": 40, "agility": 35, "wounds": 12,
                                             "armour": "flak_vest", "weapons": ["lasgun"]}
        assert (await http.post(shop.url("/checks"), json=degrees)).json() == {"ok": True, "problems": []}
        refused = await http.post(shop.url("/drafts/nope/lobby"), json={"version": 1})
        assert refused.status_code == 404


# ------------------------------------------------------------------ images


async def test_a_background_image_is_checked_kept_and_served_with_the_encounter(shop: Shop) -> None:
    async with shop.browser() as http:
        sent = await http.post(shop.url("/images"), content=png(), headers={"Content-Type": "image/png"})
        assert sent.status_code == 201
        image = sent.json()
        assert image["width"] == 64 and image["height"] == 48 and image["media_type"] == "image/png"
        not_image = await http.post(shop.url("/images"), content=b"hello, not a picture",
                                    headers={"Content-Type": "image/png"})
        assert not_image.status_code == 415 and not_image.json() == {"error": "the file is not a PNG, JPEG or WebP image"}
        gif = await http.post(shop.url("/images"), content=b"GIF89a", headers={"Content-Type": "image/gif"})
        assert gif.status_code == 415
        lying = await http.post(shop.url("/images"), content=png(), headers={"Content-Type": "image/jpeg"})
        assert lying.status_code == 415 and lying.json()["error"] == "the file is a PNG image, not JPEG as its type says"
        bomb = await http.post(shop.url("/images"), content=png(10_000, 10_000, "1"), headers={"Content-Type": "image/png"})
        assert bomb.status_code == 400 and bomb.json()["error"] == "the image is 10000×10000 pixels; the limit is 50,000,000 pixels"
        huge = await http.post(shop.url("/images"), content=b"\x89PNG" + b"0" * (10 * 1024 * 1024),
                               headers={"Content-Type": "image/png"})
        assert huge.status_code == 413
        damaged = await http.post(shop.url("/images"), content=png()[:60], headers={"Content-Type": "image/png"})
        assert damaged.status_code in (400, 415)
        placed = {"image": image["image"], "offset": [-1.5, 2], "scale": 70}
        bad_scale = await http.post(shop.url("/drafts"), json={"id": "lit", "setup": humans(),
                                                                "background": {**placed, "scale": 0}})
        assert bad_scale.json() == {"error": "background.scale: must be the image pixels of one square, from 1 to 10000"}
        unknown = await http.post(shop.url("/drafts"), json={"id": "lit", "setup": humans(),
                                                              "background": {**placed, "image": "a" * 64}})
        assert unknown.json() == {"error": "background.image: no uploaded image has this id in this campaign"}
        draft = (await http.post(shop.url("/drafts"), json={"id": "lit", "setup": humans(), "background": placed})).json()
        assert draft["background"] == {"image": image["image"], "offset": [-1.5, 2.0], "scale": 70.0}
        assert (await http.get(shop.url(f"/images/{image['image']}"))).content == png()
        lobby = (await http.post(shop.url("/drafts/lit/lobby"), json={"version": 1})).json()
    player = next(s for s in lobby["seats"] if s["role"] == "player")["link"].partition("#token=")[2]
    async with httpx.AsyncClient(base_url=shop.base, timeout=20) as http:
        seat = (await http.get(f"/api/campaigns/{CAMPAIGN}/encounters/lit/seat", params={"token": player})).json()
        assert seat["lobby"] is True
        assert seat["background"] == {"offset": [-1.5, 2.0], "scale": 70.0, "width": 64, "height": 48,
                                      "url": f"/api/campaigns/{CAMPAIGN}/encounters/lit/background"}
        served = await http.get(seat["background"]["url"], params={"token": player})
        assert served.status_code == 200 and served.content == png() and served.headers["content-type"] == "image/png"
        assert (await http.get(seat["background"]["url"])).status_code == 401


# ------------------------------------------------------------------ the lobby, the start, the GM's move


async def test_the_lobby_rolls_nothing_shows_who_is_there_and_the_start_begins_the_fight(shop: Shop) -> None:
    event_log = shop.api.event_log(CAMPAIGN)
    async with shop.browser() as http:
        await new_draft(http, shop, humans())
        stale = await http.post(shop.url("/drafts/raid/lobby"), json={"version": 3})
        assert stale.status_code == 409
        lobby = await http.post(shop.url("/drafts/raid/lobby"), json={"version": 1})
        assert lobby.status_code == 200, lobby.text
        seats = {s["id"]: s for s in lobby.json()["seats"]}
        assert {k: (v["role"], v["combatants"]) for k, v in seats.items()} == {
            "gm": ("gm", []), "rangers": ("player", ["Sgt. Ives", "Moss", "Doc Pell", "Quinn"]),
            "raiders": ("player", ["Krag", "Sable", "Vex", "Otto"]), "spectator": ("spectator", [])}
        assert (await http.get(shop.url("/drafts/raid"))).status_code == 404  # the draft became the encounter
        rangers = seats["rangers"]["link"].partition("#token=")[2]
        assert seats["rangers"]["link"] == f"/table/{CAMPAIGN}/raid#token={rangers}"
        early = await http.post(f"/api/campaigns/{CAMPAIGN}/encounters/raid/commands", content=json.dumps(
            {"type": "EndTurn", "command_id": "early", "actor": "rg-ives"}), headers={"Authorization": f"Bearer {rangers}"})
        assert early.status_code == 409
        assert early.json() == {"error": "the fight has not started yet: the GM starts it from the lobby"}
        ws_url = shop.base.replace("http", "ws") + f"/api/campaigns/{CAMPAIGN}/encounters/raid/ws?token={rangers}"
        async with open_websocket_url(ws_url):
            for _ in range(50):
                presence = (await http.get(shop.url("/encounters/raid/presence"))).json()
                if presence["seats"][1]["connected"]:
                    break
                await trio.sleep(0.05)
            assert presence == {"encounter": "raid", "state": "lobby", "seats": [
                {"id": "gm", "connected": 0}, {"id": "rangers", "connected": 1}, {"id": "raiders", "connected": 0},
                {"id": "spectator", "connected": 0}]}
        listed = (await http.get(shop.url("/encounters"))).json()
        assert [r["id"] for r in listed["lobby"]] == ["raid"] and listed["running"] == []
        await trio.sleep(0.3)
        assert await event_log.version("raid") == 0  # nothing rolled, no AI acted
        started = await http.post(shop.url("/encounters/raid/start"))
        assert started.json() == {"encounter": "raid", "state": "running"}
        again = await http.post(shop.url("/encounters/raid/start"))
        assert again.status_code == 409 and again.json() == {"error": "encounter 'raid' is not in the lobby (it is running)"}
        async with trio.open_nursery() as nursery:
            system = get_system("d100-zones")
            setup = ZONES_DEMO
            policies = default_policies(system, {c["id"]: c["policy"] for c in humans()["combatants"]})
            nursery.start_soon(lambda: run_encounter(event_log, "raid", system, policies, lease_wait_s=0.3))
            with trio.fail_after(15):
                while await event_log.version("raid") < 3:
                    await trio.sleep(0.05)
            # The GM drags a token: a wall and an occupied square are refused, a free square is taken.
            wall = setup.terrain.walls[0]
            into_wall = await http.post(shop.url("/encounters/raid/move"),
                                        json={"combatant": "rg-ives", "to": [wall.x, wall.y], "reason": "test"})
            assert into_wall.status_code == 400 and into_wall.json() == {"error": f"position ({wall.x}, {wall.y}) is inside a wall"}
            onto = await http.post(shop.url("/encounters/raid/move"),
                                   json={"combatant": "rg-ives", "to": [4, 9], "reason": "test"})
            assert onto.status_code == 400 and onto.json() == {"error": "position (4, 9) is taken by Moss"}
            no_reason = await http.post(shop.url("/encounters/raid/move"), json={"combatant": "rg-ives", "to": [1, 1]})
            assert no_reason.status_code == 400 and no_reason.json()["error"].startswith("reason:")
            moved = await http.post(shop.url("/encounters/raid/move"),
                                    json={"combatant": "rg-ives", "to": [2, 2], "reason": "the floor gave way"})
            assert moved.status_code == 200, moved.text
            assert moved.json()["event"]["type"] == "GMAdjusted"
            assert moved.json()["event"]["data"] == {"type": "GMAdjusted", "combatant": "rg-ives", "changes": {"position": [2, 2]},
                                                     "reason": "the floor gave way"}
            listed = (await http.get(shop.url("/encounters"))).json()
            assert [r["id"] for r in listed["running"]] == ["raid"]
            nursery.cancel_scope.cancel()


# ------------------------------------------------------------------ characters, archetypes, rests


async def test_characters_from_archetypes_edited_retired_and_revived(shop: Shop) -> None:
    async with shop.browser() as http:
        systems = (await http.get(shop.url("/systems"))).json()["systems"]
        assert [s["name"] for s in systems] == system_names()  # the four built in (and any plugin loaded)
        assert {"bolt-and-blade": "Bolt & Blade", "rond6": "RonD6"}.items() <= {s["name"]: s["title"] for s in systems}.items()
        form = (await http.get(shop.url("/systems/d100-degrees/form"))).json()
        armour = next(f for f in form["fields"] if f["path"] == "armour")
        assert armour == {"path": "armour", "label": "Armour", "kind": "catalogue", "catalogue": "armour", "default": "none"}
        assert [a["id"] for a in form["catalogues"]["armour"]] == ["none", "hide_jacket", "flak_vest", "carapace"]
        ganger = next(a for a in form["archetypes"] if a["id"] == "ganger")
        made = await http.post(shop.url("/characters"), json={"name": "Kell", "system": "d100-degrees",
                                                              "sheet": ganger["sheet"]})
        assert made.status_code == 201, made.text
        kell = made.json()["character"]
        assert kell["id"] == "kell" and kell["sheet"]["armour_name"] == ganger["sheet"]["armour"]
        assert isinstance(kell["sheet"]["armour"], int) and isinstance(kell["sheet"]["weapons"][0], dict)
        twice = await http.post(shop.url("/characters"), json={"name": "Kell", "system": "d100-degrees", "sheet": {}})
        assert twice.status_code == 409
        bad = await http.post(shop.url("/characters"), json={"id": "ash", "name": "Ash", "system": "rond6",
                                                             "sheet": {"armour": "chainmail"}})
        assert bad.status_code == 400 and bad.json()["error"].startswith(
            "character 'ash': combatant 'ash': sheet field 'armour' names no armour of RonD6: 'chainmail'")
        edited = await http.post(shop.url("/characters/kell/edit"), json={"set": {"willpower": 44}, "reason": "trained"})
        assert edited.status_code == 200 and edited.json()["character"]["sheet"]["willpower"] == 44
        # The form picks armour by name in an edit too: the sheet keeps its points and its name.
        armoured = await http.post(shop.url("/characters/kell/edit"), json={"set": {"armour": "carapace"}, "reason": "loot"})
        assert armoured.status_code == 200, armoured.text
        assert {k: armoured.json()["character"]["sheet"][k] for k in ("armour", "armour_name")} == {
            "armour": 5, "armour_name": "carapace"}
        no_reason = await http.post(shop.url("/characters/kell/retire"), json={})
        assert no_reason.status_code == 400 and no_reason.json()["error"].startswith("reason:")
        retired = await http.post(shop.url("/characters/kell/retire"), json={"reason": "went home"})
        assert retired.json()["character"]["retired"] is True
        revived = await http.post(shop.url("/characters/kell/revive"), json={"reason": "came back"})
        assert revived.json()["character"]["retired"] is False
        missing = await http.post(shop.url("/characters/nobody/retire"), json={"reason": "x"})
        assert missing.status_code == 404
        # Every system's bestiary makes characters its own start takes.
        for system in ("bolt-and-blade", "d100-zones", "rond6"):
            first = (await http.get(shop.url(f"/systems/{system}/form"))).json()["archetypes"][0]
            answer = await http.post(shop.url("/characters"), json={"id": f"npc-{system}", "name": first["name"],
                                                                    "system": system, "sheet": first["sheet"]})
            assert answer.status_code == 201, (system, answer.text)


async def test_archetypes_saved_by_the_gm_rests_and_campaigns(shop: Shop) -> None:
    async with shop.browser() as http:
        saved = await http.post(shop.url("/archetypes"), json={"id": "thug", "name": "Thug", "system": "rond6",
                                                               "sheet": {"armour": "armoured_jacket", "weapons": ["knife"]}})
        assert saved.status_code == 201
        wrong = await http.post(shop.url("/archetypes"), json={"id": "x", "name": "X", "system": "rond6",
                                                               "sheet": {"move": 0}})
        assert wrong.status_code == 400 and wrong.json() == {"error": "sheet.move: must be at least 1 (got 0)"}
        listed = (await http.get(shop.url("/archetypes"), params={"system": "rond6"})).json()["archetypes"]
        assert [a["id"] for a in listed if a["source"] == "campaign"] == ["thug"]
        assert "ganger" in [a["id"] for a in listed if a["source"] == "system"]
        assert (await http.delete(shop.url("/archetypes/thug"))).json() == {"deleted": "thug"}
        assert (await http.delete(shop.url("/archetypes/thug"))).status_code == 404
        ganger = next(a for a in listed if a["id"] == "ganger")
        await http.post(shop.url("/characters"), json={"name": "Rook", "system": "rond6", "sheet": ganger["sheet"]})
        bad_days = await http.post(shop.url("/rest"), json={"party": True, "days": 0})
        assert bad_days.json() == {"error": "days: must be a whole number from 1 to 365"}
        rested = await http.post(shop.url("/rest"), json={"party": True, "days": 2})
        assert rested.status_code == 200, rested.text
        assert rested.json()["lines"][0] == "downtime 1: 2 day(s) for rook"
        garbage = await http.post("/api/workshop/campaigns/import", content=b"not an export\n")
        assert garbage.status_code == 400
        assert garbage.json() == {"error": "the file is not a firelane campaign export (its lines are '<chain> <json>')"}
        exported = await http.get(shop.url("/export"))
        assert exported.status_code == 200 and exported.headers["content-disposition"].endswith('.firelane"')
        imported = await http.post("/api/workshop/campaigns/import", params={"as": "copy"}, content=exported.content)
        assert imported.status_code == 201, imported.text
        assert imported.json()["name"] == "copy" and imported.json()["characters"] == 1
        made = await http.post("/api/workshop/campaigns", json={"name": "second"})
        assert made.status_code == 201 and made.json()["link"].startswith("/workshop/second#gm=")
        assert (await http.post("/api/workshop/campaigns", json={"name": "second"})).status_code == 409
        names = [c["name"] for c in (await http.get("/api/workshop/campaigns")).json()["campaigns"]]
        assert names == ["copy", "home", "second"]
        assert (await http.get("/api/workshop/campaigns/second/encounters")).status_code == 200
        empty = await http.get("/api/workshop/campaigns/second/export")
        assert empty.status_code == 409 and empty.json() == {
            "error": "campaign 'second' has no encounters and no characters in this store: nothing to export"}
        bad_name = await http.post("/api/workshop/campaigns", json={"name": "no spaces"})
        assert bad_name.json() == {"error": "name: 'no spaces' must be 1-64 characters of A-Z a-z 0-9 _ . -"}
        no_csrf = await http.delete("/api/workshop/session", headers={"X-Firelane-CSRF": ""})
        assert no_csrf.status_code == 403  # signing out is a change too: a foreign page cannot sign the GM out


# ------------------------------------------------------------------ with a real `firelane serve`


def test_firelane_serve_leaves_a_lobby_alone_until_it_is_started(tmp_path: Path) -> None:
    """A lobby made by `firelane create --lobby` is not run by `firelane serve`
    (its log stays empty: nothing rolled, no AI acted) until `firelane start`;
    the sign-in link `firelane campaign token` prints signs a browser in to that server."""
    import time

    from tests.cli_helpers import Served, firelane

    served = Served(tmp_path / "data")
    try:
        store = ["--data-dir", str(served.data_dir)]
        assert firelane("create", "brawl", "--demo-setup", "toy", "--lobby", *store).returncode == 0
        time.sleep(1.5)  # serve has long found it (it polls its lobby every 0.25 s)
        roster = json.loads(firelane("encounters", "--json", *store).stdout)["rows"]
        assert [(r["encounter"], r["events"]) for r in roster] == [("brawl", 0)]
        link = firelane("campaign", "token", *store).stdout.splitlines()[0]
        assert link.startswith(f"GM sign-in link: {served.api}/workshop/default#gm=")
        token = link.partition("#gm=")[2]
        with httpx.Client(base_url=served.api, timeout=20) as http:
            signed = http.post("/api/workshop/session", json={"campaign": "default", "token": token})
            assert signed.status_code == 200
            lobby = http.get("/api/workshop/campaigns/default/encounters").json()["lobby"]
            assert [row["id"] for row in lobby] == ["brawl"]
            started = http.post("/api/workshop/campaigns/default/encounters/brawl/start",
                                headers={"X-Firelane-CSRF": signed.json()["csrf"]})
            assert started.json() == {"encounter": "brawl", "state": "running"}
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                ended = http.get("/api/workshop/campaigns/default/encounters").json()["ended"]
                if ended:
                    break
                time.sleep(0.2)
            assert [row["id"] for row in ended] == ["brawl"] and ended[0]["events"] > 3  # played to its end
            csrf = {"X-Firelane-CSRF": signed.json()["csrf"]}
            assert http.post("/api/workshop/campaigns/default/encounters/brawl/archive", headers=csrf).json() == {
                "encounter": "brawl", "archived": True}
            listed = http.get("/api/workshop/campaigns/default/encounters").json()
            assert listed["ended"] == [] and [row["id"] for row in listed["archived"]] == ["brawl"]
            http.post("/api/workshop/campaigns/default/encounters/brawl/unarchive", headers=csrf)
            assert [row["id"] for row in http.get("/api/workshop/campaigns/default/encounters").json()["ended"]] == ["brawl"]
            again = http.post("/api/workshop/campaigns/default/encounters/brawl/duplicate", headers=csrf, json={})
            assert again.status_code == 201 and again.json()["setup"]["system"] == "toy"
    finally:
        code, stderr = served.stop()
    assert code == 0, stderr


# ------------------------------------------------------------------ bad bodies, one line each

JSON_ROUTES = [("POST", "/drafts"), ("PUT", "/drafts/raid"), ("POST", "/drafts/raid/lobby"), ("POST", "/checks"),
               ("POST", "/encounters/raid/duplicate"), ("POST", "/encounters/fight/move"), ("POST", "/characters"),
               ("POST", "/characters/kell/edit"), ("POST", "/characters/kell/retire"),
               ("POST", "/characters/kell/revive"), ("POST", "/archetypes"), ("POST", "/rest")]


async def test_every_json_body_that_is_no_object_is_refused_with_one_line(shop: Shop) -> None:
    async with shop.browser() as http:
        await new_draft(http, shop, humans(), "fight")
        assert (await http.post(shop.url("/drafts/fight/lobby"), json={"version": 1})).status_code == 200
        await new_draft(http, shop, humans())
        for method, path in JSON_ROUTES:
            for body, error in ((b"{not json", "the request is not valid JSON: "),
                                (b"[1, 2]", "the request must be a JSON object"),
                                (b"[" * 80 + b"]" * 80, "the request nests deeper than 64 levels")):
                answer = await http.request(method, shop.url(path), content=body)
                assert answer.status_code == 400, (method, path, answer.text)
                assert answer.json()["error"].startswith(error) and "\n" not in answer.json()["error"]
            if path not in ("/checks",):
                unknown = await http.request(method, shop.url(path), json={"bogus": 1})
                assert unknown.status_code == 400 and unknown.json()["error"].startswith("bogus: unknown field"), (
                    method, path, unknown.text)


async def test_refusals_of_each_route_name_the_field(shop: Shop) -> None:
    async with shop.browser() as http:
        await new_draft(http, shop, humans())
        cases = [
            ("POST", "/drafts", {"id": "bad id!", "system": "rond6"},
             400, "id: 'bad id!' must be 1-64 characters of A-Z a-z 0-9 _ . -"),
            ("POST", "/drafts", {"setup": "x"}, 400, "setup: must be a setup (a JSON object, as firelane create --setup takes)"),
            ("POST", "/drafts", {"name": "x"}, 400, "system: missing"),
            ("PUT", "/drafts/raid", {"version": "1", "setup": humans()}, 400, "version: must be a whole number from 1 to 9007199254740992"),
            ("PUT", "/drafts/nothing", {"version": 1, "setup": humans()}, 404, "no draft 'nothing' in campaign 'home'"),
            ("POST", "/drafts/raid/lobby", {}, 400, "version: must be a whole number from 1 to 9007199254740992"),
            ("POST", "/encounters/nothing/duplicate", {}, 404, "no draft or encounter 'nothing' in campaign 'home'"),
            ("POST", "/encounters/raid/archive", None, 404, "no encounter 'raid' in campaign 'home'"),
            ("POST", "/encounters/raid/start", None, 404,
             "no encounter 'raid' in campaign 'home' (a draft has no seats yet: open its lobby)"),
            ("GET", "/encounters/raid/seats", None, 404,
             "no encounter 'raid' in campaign 'home' (a draft has no seats yet: open its lobby)"),
            ("POST", "/characters", {"name": "", "system": "rond6"}, 400, "name: must not be empty"),
            ("POST", "/characters", {"name": "A", "system": "rond6", "sheet": []}, 400, "sheet: must be a JSON object"),
            ("POST", "/characters/kell/edit", {"set": [], "reason": "r"}, 400, "set: must be an object of sheet fields"),
            ("POST", "/characters/kell/edit", {"add": {"x": "1"}, "reason": "r"}, 400,
             "add: must be an object of sheet fields and numbers"),
            ("POST", "/archetypes", {"name": "A", "system": "rond6", "sheet": {}}, 400, "id: missing"),
            ("POST", "/rest", {"days": 2}, 400, "characters: name who rests, or give party: true (not both)"),
            ("POST", "/rest", {"party": "yes", "days": 2}, 400, "party: must be true or false"),
            ("GET", "/images/xyz", None, 400, "image: not an image id"),
            ("GET", "/systems/chess/form", None, 404, f"unknown rule system 'chess'; known: {', '.join(system_names())}"),
        ]
        for method, path, body, status, error in cases:
            answer = await http.request(method, shop.url(path), json=body)
            assert (answer.status_code, answer.json()) == (status, {"error": error}), (method, path)
        # A running or lobby encounter cannot be archived; an ended one can, and comes back.
        await http.post(shop.url("/drafts/raid/lobby"), json={"version": 1})
        early = await http.post(shop.url("/encounters/raid/archive"))
        assert early.status_code == 409 and early.json() == {
            "error": "encounter 'raid' has not ended: only an ended encounter is archived"}
        move = await http.post(shop.url("/encounters/raid/move"), json={"combatant": "rg-ives", "to": [1, 1], "reason": "r"})
        assert move.status_code == 409 and move.json() == {"error": "encounter 'raid' is not running (it is lobby)"}
        bad_to = await http.post(shop.url("/encounters/raid/move"), json={"combatant": "rg-ives", "to": [1], "reason": "r"})
        assert bad_to.json() == {"error": "to: must be a square [x, y] of whole numbers"}
        one = await http.delete("/api/workshop/session", params={"campaign": "home"})
        assert one.json() == {"signed_in": False, "campaigns": []}


async def test_a_character_released_from_a_lobby_ends_it_unplayed(shop: Shop) -> None:
    """A lobby's campaign characters are enlisted; releasing one ends the encounter before any
    turn (the release's own path for a fight that never started), and the home lists it ended."""
    async with shop.browser() as http:
        form = (await http.get(shop.url("/systems/d100-zones/form"))).json()
        ranger = next(a for a in form["archetypes"] if a["id"] == "ranger")
        assert (await http.post(shop.url("/characters"), json={"id": "ives", "name": "Ives", "system": "d100-zones",
                                                               "sheet": ranger["sheet"]})).status_code == 201
        setup = humans()
        setup["combatants"][0] = {"id": "ives", "character": "ives", "side": "rangers", "position": [6, 6],
                                  "policy": "human"}
        await new_draft(http, shop, setup)
        assert (await http.post(shop.url("/checks"), json=setup)).json() == {"ok": True, "problems": []}
        opened = await http.post(shop.url("/drafts/raid/lobby"), json={"version": 1})
        assert opened.status_code == 200, opened.text
        busy = await http.post(shop.url("/characters/ives/retire"), json={"reason": "x"})
        assert busy.status_code == 409  # enlisted in the lobby's fight
        released = await http.post(f"/api/campaigns/{CAMPAIGN}/characters/ives/release", json={"reason": "left early"},
                                   headers={"Authorization": f"Bearer {shop.token}"})
        assert released.status_code == 200, released.text
        listed = (await http.get(shop.url("/encounters"))).json()
        assert listed["lobby"] == [] and [row["id"] for row in listed["ended"]] == ["raid"]
        assert (await http.post(shop.url("/encounters/raid/start"))).json() == {
            "error": "encounter 'raid' is not in the lobby (it is ended)"}
