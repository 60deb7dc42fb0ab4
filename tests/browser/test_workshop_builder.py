"""The encounter builder's parts, by clicks, drags and taps in Chromium
(issue 20): setup JSON imported and exported in an exact round trip (through
the page and the store), undo and redo, a second tab's save refused as
"changed elsewhere", a sheet's problem shown next to its field as it is typed,
a background image uploaded and aligned (and a file that is not an image
refused in one line), a token dragged by touch, d100-zones' range bands, and
during a fight the GM dragging a token: a GM adjustment, confirmed, with its
reason."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.browser.table_helpers import Table, table_setup, wait_until
from tests.browser.workshop_helpers import drag_onto_map, map_point, paint_line, sign_in, token_square
from tests.cli_helpers import REPO

CORRIDOR = REPO / "docs" / "examples" / "bolt-and-blade-corridor.json"


def new_encounter(page: Any, name: str, system_title: str = "Bolt & Blade") -> None:
    page.fill("input[aria-label=\"the new encounter's name\"]", name)
    page.select_option("select[data-new-system]", label=system_title)
    page.click("[data-do=new-encounter]")
    page.wait_for_selector(".ws-builder [data-carry]")


def in_order(text: str) -> Any:
    """JSON with every object as its list of (key, value) pairs: equal only with the same fields in the same order
    (a number keeps its value: the page writes 5.0 as 5, which the setup reads the same)."""
    return json.loads(text, object_pairs_hook=list)


def exported(page: Any) -> str:
    page.click("[data-tab=json]")
    return page.locator("textarea[data-json=export]").input_value()


def test_setup_json_round_trip_undo_and_changed_elsewhere(table: Table, tmp_path: Path) -> None:
    gm = sign_in(table, "round-trip")
    new_encounter(gm, "Corridor")
    original = CORRIDOR.read_text()
    gm.click("[data-tab=json]")
    gm.click("summary:text('Paste setup JSON')")
    gm.fill("textarea[data-json=import]", original)
    gm.click("[data-do=import-text]")
    # Exactly the file, field for field and in its order.
    assert json.loads(exported(gm)) == json.loads(original)
    assert in_order(exported(gm)) == in_order(original)
    with gm.expect_download() as download:
        gm.click("[data-do=export]")
    saved_file = tmp_path / "exported.json"
    download.value.save_as(saved_file)
    assert json.loads(saved_file.read_text()) == json.loads(original)
    assert gm.locator("svg.ws-map path.wall").get_attribute("d").count("M") == 8
    # Undo brings back the empty draft, redo the import.
    gm.click("[data-do=undo]")
    assert json.loads(exported(gm))["combatants"] == []
    gm.click("[data-do=redo]")
    assert json.loads(exported(gm)) == json.loads(original)
    gm.click("[data-do=save]")
    gm.wait_for_selector("[data-do=save]:text('Saved')")
    # Through the store and back: the same setup.
    gm.reload()
    gm.wait_for_selector(".ws-builder [data-carry]")
    assert json.loads(exported(gm)) == json.loads(original)

    # A second tab saves first; this tab's save is refused, and nothing of it is half-saved.
    other = gm.context.new_page()
    other.goto(gm.url)
    other.wait_for_selector(".ws-builder [data-carry]")
    paint_line(other, "wall", (0, 0), (0, 2))
    other.click("[data-do=save]")
    other.wait_for_selector("[data-do=save]:text('Saved')")
    paint_line(gm, "difficult", (1, 8), (3, 8))
    gm.click("[data-do=save]")
    banner = gm.locator("[data-save-error]")
    banner.wait_for()
    assert banner.inner_text().startswith("changed elsewhere")
    other.reload()
    other.wait_for_selector(".ws-builder [data-carry]")
    stored = json.loads(exported(other))
    assert [0, 0] in stored["terrain"]["walls"] and not stored["terrain"].get("difficult")
    assert table.errors == []


def test_sheet_problems_as_typed_and_the_background_image(table: Table, tmp_path: Path) -> None:
    gm = sign_in(table, "sheets")
    new_encounter(gm, "Checked")
    drag_onto_map(gm, "Cultist", (3, 3))
    card = gm.locator(".ws-combatant")
    card.wait_for()
    # A number out of its range: one line next to the field, from the page at once and from the server's checks.
    level = card.locator(".ws-field[data-field=level]")
    level.locator("input").fill("99")
    wait_until(lambda: level.locator(".problem").count() > 0, what="the level's problem")
    assert all("level" in line.lower() for line in level.locator(".problem").all_inner_texts())
    assert card.locator(".ws-field[data-field=vitality] .problem").count() == 0
    table.shot(gm, "workshop-builder-problem")
    level.locator("input").fill("2")
    wait_until(lambda: level.locator(".problem").count() == 0, what="the level's problem to go")
    # Weapons picked by name from the catalogue.
    weapons = card.locator(".ws-field[data-field=weapons]")
    before = weapons.locator(".ws-chip").count()
    option = weapons.locator("select.ws-add option").nth(1)
    label = option.inner_text()
    weapons.locator("select.ws-add").select_option(label=label)
    assert weapons.locator(".ws-chip").count() == before + 1
    assert label in weapons.inner_text()

    # The GM keeps this NPC as an archetype of the campaign: it joins the list to drag from.
    card.locator(".ws-field[data-field=name] input").fill("Cellar thug")
    card.get_by_role("button", name="Save as an archetype").click()
    gm.locator(".ws-palette [data-carry='Cellar thug']").wait_for()

    # Settings with their labels and units: a duration typed in seconds is kept in milliseconds.
    gm.click("[data-tab=settings]")
    deadline = gm.locator(".ws-settings .ws-field[data-field=reaction_deadline_ms]")
    assert "Reaction deadline" in deadline.inner_text() and "seconds" in deadline.inner_text()
    deadline.locator("input").fill("45")
    rounds = gm.locator(".ws-settings .ws-field[data-field=max_rounds] label").inner_text()
    assert "rounds" in rounds and "_" not in rounds  # a label in words, with its unit
    table.shot(gm, "workshop-builder-settings")
    assert json.loads(exported(gm))["settings"]["reaction_deadline_ms"] == 45000
    gm.click("[data-tab=tokens]")

    # The background: an image that is not one is refused in one line; a PNG is kept and aligned.
    not_image = tmp_path / "map.png"
    not_image.write_text("this is not a picture")
    gm.set_input_files("input[data-upload=background]", str(not_image))
    refusal = gm.locator("[data-upload-error]")
    refusal.wait_for()
    assert "\n" not in refusal.inner_text().strip() and "PNG" in refusal.inner_text()
    picture = io.BytesIO()
    Image.new("RGB", (400, 300), (40, 90, 60)).save(picture, format="PNG")
    image_file = tmp_path / "cellar.png"
    image_file.write_bytes(picture.getvalue())
    gm.set_input_files("input[data-upload=background]", str(image_file))
    background = gm.locator("svg.ws-map image.background")
    background.wait_for(state="attached")
    gm.fill(".ws-field[data-field='background.scale'] input", "20")
    gm.fill(".ws-field[data-field='background.offset.x'] input", "1.5")
    gm.fill(".ws-field[data-field='background.offset.y'] input", "-1")
    assert background.get_attribute("width") == "20"  # 400 px at 20 px a square
    assert background.get_attribute("height") == "15"
    assert (background.get_attribute("x"), background.get_attribute("y")) == ("1.5", "-1")
    gm.click("[data-do=save]")
    gm.wait_for_selector("[data-do=save]:text('Saved')")
    gm.reload()
    background = gm.locator("svg.ws-map image.background")
    background.wait_for(state="attached")
    assert (background.get_attribute("x"), background.get_attribute("width")) == ("1.5", "20")
    loaded = gm.evaluate("async (url) => (await fetch(url)).status", background.get_attribute("href"))
    assert loaded == 200
    assert table.errors == []


def touch_drag(page: Any, start: tuple[float, float], end: tuple[float, float]) -> None:
    """A finger's drag (touch events through the DevTools protocol: playwright's touchscreen only taps)."""
    session = page.context.new_cdp_session(page)
    session.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": start[0], "y": start[1]}]})
    for step in range(1, 9):
        x = start[0] + (end[0] - start[0]) * step / 8
        y = start[1] + (end[1] - start[1]) * step / 8
        session.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]})
    session.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def test_a_phone_drags_tokens_and_paints_by_touch_and_zones_show_their_bands(table: Table) -> None:
    gm = sign_in(table, "phone")
    gm.close()
    context = table.browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    table.contexts.append(context)
    phone = context.new_page()
    phone.on("pageerror", lambda error: table.errors.append(f"phone: {error}"))
    from tests.browser.workshop_helpers import gm_token
    phone.goto(f"{table.served.api}/workshop/phone#gm={gm_token(table, 'phone')}")
    phone.wait_for_selector(".ws-home")
    new_encounter(phone, "Zones", "d100 zones")
    phone.locator("[data-carry]").first.tap()  # a tap picks the token; the next tap on the map places it
    phone.wait_for_selector(".ws-banner:text('Tap a square')")
    phone.touchscreen.tap(*map_point(phone, (2, 2)))
    wait_until(lambda: phone.locator("svg.ws-map [data-token]").count() == 1, what="the token placed by taps")
    name = phone.locator(".ws-combatants li[data-combatant]").first.get_attribute("data-combatant")
    assert token_square(phone, name) == (2, 2)
    touch_drag(phone, map_point(phone, (2, 2)), map_point(phone, (5, 4)))
    wait_until(lambda: token_square(phone, name) == (5, 4), what="the token dragged by a finger")
    # d100-zones: the selected token's range bands (2 m squares: Engaged 1 square, Close 7, Far 25).
    phone.locator(f".ws-combatants li[data-combatant='{name}'] .ws-pick").tap()
    bands = {b.get_attribute("data-band") for b in phone.locator("svg.ws-map [data-band]").all()}
    assert bands == {"engaged", "close", "far"}
    phone.locator("[data-tool=wall]").tap()
    phone.locator(".ws-map-scroll").scroll_into_view_if_needed()
    touch_drag(phone, map_point(phone, (8, 1)), map_point(phone, (8, 5)))
    # One stroke down column 8 from row 1 through row 5 (Chromium may report the lifted finger a little further on).
    walls = [tuple(map(int, m)) for m in re.findall(r"M(\d+) (\d+)h", phone.locator("svg.ws-map path.wall").get_attribute("d"))]
    assert walls[:5] == [(8, y) for y in range(1, 6)] and all(x == 8 for x, _ in walls) and len(walls) <= 6, walls
    assert table.errors == []


@pytest.mark.parametrize("by", ["mouse", "finger"])
def test_the_gm_drags_a_token_during_a_fight(table: Table, by: str) -> None:
    encounter = f"dragged-by-{by}"
    seats = table.create(encounter, table_setup(reaction_deadline_ms=600_000, turn_timer_ms=600_000))
    if by == "mouse":
        gm = table.open(seats["gm"]["link"])
    else:
        context = table.browser.new_context(viewport={"width": 1024, "height": 768}, has_touch=True, is_mobile=True)
        table.contexts.append(context)
        gm = context.new_page()
        gm.on("pageerror", lambda error: table.errors.append(f"gm: {error}"))
        gm.goto(seats["gm"]["link"])
        gm.wait_for_selector(".app header .status.live", timeout=20_000)
        gm.locator("[data-gm=drag-by-touch]").check()  # a finger's drag is the map's own pan until the GM says otherwise
    state = table.state(encounter, seats["gm"]["token"])["state"]
    who, mover = next((cid, c) for cid, c in state["combatants"].items() if c["position"] and not c["out_of_fight"])
    walls = {tuple(w) if isinstance(w, list) else (w["x"], w["y"]) for w in state["terrain"]["walls"]}
    taken = {tuple(c["position"]) for c in state["combatants"].values() if c["position"]}
    free = next((x, y) for y in range(state["terrain"]["height"]) for x in range(state["terrain"]["width"])
                if (x, y) not in walls and (x, y) not in taken)

    def centre(square: tuple[int, int]) -> tuple[float, float]:
        # The table's map draws a square 40 units wide (map.js); its screen matrix places it.
        return tuple(gm.evaluate("""([x, y]) => { const svg = document.querySelector("svg.map"), p = svg.createSVGPoint();
            p.x = x * 40 + 20; p.y = y * 40 + 20; const q = p.matrixTransform(svg.getScreenCTM()); return [q.x, q.y]; }""", list(square)))

    gm.locator("svg.map").scroll_into_view_if_needed()
    if by == "mouse":
        gm.mouse.move(*centre(tuple(mover["position"])))
        gm.mouse.down()
        gm.mouse.move(*centre(free), steps=10)
        gm.mouse.up()
    else:
        touch_drag(gm, centre(tuple(mover["position"])), centre(free))
    ask = gm.locator(".gm-move[data-confirm=Move]")
    ask.wait_for()
    assert mover["name"] in ask.inner_text() and f"({free[0]}, {free[1]})" in ask.inner_text()
    ask.locator("[data-move-reason]").fill("fell through the rotten floor")
    ask.locator("[data-confirm-yes=Move]").click()
    wait_until(lambda: table.state(encounter, seats["gm"]["token"])["state"]["combatants"][who]["position"] == list(free),
               what="the token to move")
    adjusted = [e for e in table.events(encounter, seats["gm"]["token"]) if e["type"] in ("GMAdjusted", "StateAdjusted")
                and "fell through the rotten floor" in json.dumps(e["data"])]
    assert adjusted, "the move is recorded with its reason"
    assert table.errors == []


def test_the_gm_cannot_drag_a_token_onto_a_body(table: Table) -> None:
    # engine/occupancy.py: no move ends on a body; the page says so before asking, in the engine's words.
    encounter = "dragged-onto-a-body"
    seats = table.create(encounter, table_setup(reaction_deadline_ms=600_000, turn_timer_ms=600_000))
    token = seats["gm"]["token"]
    state = wait_until(lambda: table.state(encounter, token)["state"], what="the fight to start")
    standing = [(cid, c) for cid, c in sorted(state["combatants"].items()) if c["position"] and not c["out_of_fight"]]
    (fallen, body), (who, mover) = standing[-1], standing[0]
    answer = table.post(encounter, token, {"type": "GMAdjust", "command_id": "fell", "actor": "gm", "combatant": fallen,
                                           "changes": {"out_of_fight": True}, "reason": "set up"}).json()
    assert not answer["rejected"], answer
    gm = table.open(seats["gm"]["link"])
    wait_until(lambda: gm.locator(f"svg.map [data-token='{fallen}']").count() == 1, what="the body on the map")

    def centre(square: list[int]) -> tuple[float, float]:
        return tuple(gm.evaluate("""([x, y]) => { const svg = document.querySelector("svg.map"), p = svg.createSVGPoint();
            p.x = x * 40 + 20; p.y = y * 40 + 20; const q = p.matrixTransform(svg.getScreenCTM()); return [q.x, q.y]; }""", square))

    gm.locator("svg.map").scroll_into_view_if_needed()
    gm.mouse.move(*centre(mover["position"]))
    gm.mouse.down()
    gm.mouse.move(*centre(body["position"]), steps=10)
    gm.mouse.up()
    ask = gm.locator(".gm-move[data-confirm=Move]")
    ask.wait_for()
    x, y = body["position"]
    assert ask.locator(".problem").text_content() == f"position ({x}, {y}) is where {body['name']} lies: no move ends on a body"
    ask.locator("[data-move-reason]").fill("try it")
    assert ask.locator("[data-confirm-yes=Move]").is_disabled()
    # The engine, the authority, says the same to a command sent past the page.
    refused = table.post(encounter, token, {"type": "GMAdjust", "command_id": "onto", "actor": "gm", "combatant": who,
                                            "changes": {"position": body["position"]}, "reason": "try it"}).json()
    assert refused["rejected"] and refused["events"][0]["data"]["reason"] == ask.locator(".problem").text_content()
    assert table.state(encounter, token)["state"]["combatants"][who]["position"] == mover["position"]
    assert table.errors == []
