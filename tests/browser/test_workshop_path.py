"""The GM's whole path in Chromium, by clicks and drags only (issue 20):
sign in, make a campaign and two characters, build a map with walls and
cover facing one way, place the characters and two archetypes, seat two
players, open the lobby, let the players join by their links in their own
browsers, start, play the first round, and find the fight on the campaign
home. Then a shorter path in each other system: build, start, first turn.
The API is read only to check outcomes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.browser.table_helpers import Table, wait_until
from tests.browser.workshop_helpers import drag_onto_map, join, map_point, paint_line, sign_in, token_square, wait_checked



def seat_links(page: Any) -> dict[str, str]:
    """Each seat's invite link, as the lobby shows it (by the seat's name)."""
    page.wait_for_selector(".ws-seat-links li input.ws-link")
    return {row.get_attribute("data-seat"): row.locator("input.ws-link").input_value()
            for row in page.locator(".ws-seat-links > li").all()}


def shots(table: Table, page: Any, name: str) -> None:
    """Screenshots at 1440×900 and 390×844 (with FIRELANE_SCREENSHOTS set), then back to the wide screen."""
    for width, height in ((1440, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(150)
        table.shot(page, f"{name}-{width}")
    page.set_viewport_size({"width": 1440, "height": 900})


def token_of(link: str) -> str:
    return link.split("#token=", 1)[1]


def state_of(table: Table, campaign: str, encounter: str, token: str) -> dict[str, Any]:
    response = table.http.get(f"{table.served.api}/api/campaigns/{campaign}/encounters/{encounter}/state",
                              headers={"Authorization": f"Bearer {token}"})
    response.raise_for_status()
    return response.json()


def events_of(table: Table, campaign: str, encounter: str, token: str) -> list[dict[str, Any]]:
    response = table.http.get(f"{table.served.api}/api/campaigns/{campaign}/encounters/{encounter}/events?after=0",
                              headers={"Authorization": f"Bearer {token}"})
    response.raise_for_status()
    return response.json()["events"]


def make_character(page: Any, name: str, system_title: str) -> None:
    page.click("[data-do=new-character]")
    form = page.locator("form[data-form=new]")
    form.locator("[data-field=character-name]").fill(name)
    form.locator("select[data-character-system]").select_option(label=system_title)
    page.wait_for_timeout(300)  # the system's form and its first archetype
    form.locator("[data-do=save-character]").click()
    page.wait_for_selector(f".ws-characters li[data-character='{name}']")


def new_encounter(page: Any, name: str, system_title: str) -> None:
    page.fill("input[aria-label=\"the new encounter's name\"]", name)
    page.select_option("select[data-new-system]", label=system_title)
    page.click("[data-do=new-encounter]")
    page.wait_for_selector(".ws-builder")
    page.wait_for_selector("[data-carry]")


def add_seat(page: Any, name: str) -> None:
    page.click("[data-tab=seats]")
    page.fill("input[aria-label=\"new seat's name\"]", name)
    page.click("[data-do=add-seat]")
    page.wait_for_selector(f".ws-seats li[data-seat='{name}']")


def give_to(page: Any, combatant_name: str, seat_name: str) -> None:
    page.click("[data-tab=tokens]")
    page.click(f".ws-combatants li[data-combatant='{combatant_name}'] .ws-pick")
    page.locator(".ws-combatant select[data-seat-of]").select_option(label=seat_name)


def open_lobby(page: Any) -> None:
    wait_checked(page)
    page.click("[data-do=lobby]")
    page.wait_for_selector(".ws-lobby[data-state=lobby]", timeout=20_000)


def start(page: Any) -> None:
    page.click("[data-do=start]")
    page.click("[data-confirm-yes=Start]")
    page.wait_for_selector(".ws-lobby[data-state=running]", timeout=20_000)


def play_until(table: Table, campaign: str, encounter: str, token: str, pages: list[Any], done: Any, what: str) -> None:
    """Let the AI act and the players pass reactions and end their turns (by clicks) until ``done(state, events)``."""
    def step() -> bool:
        state = state_of(table, campaign, encounter, token)
        if done(state, events_of(table, campaign, encounter, token)):
            return True
        for page in pages:  # a player passes each reaction offered and ends each turn
            for choice in (".prompt .pass:not([disabled])", ".end-turn:not([disabled])"):
                button = page.locator(choice)
                if button.count():
                    button.first.click(timeout=5_000)
        return False
    wait_until(step, timeout=90, what=what, describe=lambda: (
        [e["type"] for e in events_of(table, campaign, encounter, token)][-12:],
        [page.locator("body").inner_text()[:300] for page in pages]))


def test_the_gms_whole_path(table: Table) -> None:
    gm = sign_in(table, "first-steps")
    # A campaign of its own, made and switched to from the page.
    gm.click("[data-do=new-campaign]")
    gm.fill("input[aria-label=\"the new campaign's name\"]", "saga")
    gm.click("[data-do=create-campaign]")
    gm.wait_for_selector(".ws-home[data-campaign=saga]")
    assert gm.locator("select[data-campaigns]").input_value() == "saga"
    make_character(gm, "Kell", "Bolt & Blade")
    make_character(gm, "Vass", "Bolt & Blade")

    new_encounter(gm, "Hab-block ambush", "Bolt & Blade")
    # Walls down the middle with a doorway, and heavy cover facing east in front of the party.
    paint_line(gm, "wall", (9, 0), (9, 5))
    paint_line(gm, "wall", (9, 8), (9, 12))
    gm.click("[data-tool=cover]")
    gm.select_option("select[data-cover-level]", "heavy")
    assert gm.locator("[data-facing=east]").get_attribute("aria-pressed") == "true"
    gm.mouse.click(*map_point(gm, (4, 6)))
    gm.mouse.click(*map_point(gm, (4, 7)))
    assert gm.locator("svg.ws-map [data-cover]").count() == 2
    assert gm.locator("svg.ws-map [data-cover='4,6']").get_attribute("data-facing") == "1,0"
    assert gm.locator("svg.ws-map [data-cover='4,6']").get_attribute("data-level") == "heavy"
    # Undo takes the last cover away, redo brings it back.
    gm.click("[data-do=undo]")
    assert gm.locator("svg.ws-map [data-cover]").count() == 1
    gm.click("[data-do=redo]")
    assert gm.locator("svg.ws-map [data-cover]").count() == 2

    drag_onto_map(gm, "Kell", (3, 6))
    drag_onto_map(gm, "Vass", (3, 7))
    archetypes = gm.locator(".ws-palette-group:has(h4:text('Archetypes')) [data-carry]").all()
    first, second = archetypes[0].get_attribute("data-carry"), archetypes[1].get_attribute("data-carry")
    drag_onto_map(gm, first, (14, 6))
    drag_onto_map(gm, second, (14, 8))
    assert token_square(gm, "Kell") == (3, 6)
    assert token_square(gm, first) == (14, 6)
    # A token dragged on the map moves; onto a wall it is refused.
    gm.click("[data-tool=tokens]")
    gm.mouse.move(*map_point(gm, (14, 8)))
    gm.mouse.down()
    gm.mouse.move(*map_point(gm, (9, 2)), steps=6)
    gm.mouse.up()
    assert token_square(gm, second) == (14, 8)
    assert "is a wall" in gm.locator(".ws-banner.bad").inner_text()

    add_seat(gm, "Ana")
    add_seat(gm, "Bo")
    give_to(gm, "Kell", "Ana")
    give_to(gm, "Vass", "Bo")
    gm.click(".ws-combatants li[data-combatant='Kell'] .ws-pick")
    wait_checked(gm)
    gm.locator(".ws-banner.bad").wait_for(state="detached", timeout=10_000)  # the refusal's notice fades
    shots(table, gm, "workshop-builder")
    gm.click("[data-do=save]")
    gm.wait_for_selector("[data-do=save]:text('Saved')")
    open_lobby(gm)

    links = seat_links(gm)
    assert set(links) >= {"Ana", "Bo"}
    players = [join(table, links["Ana"]), join(table, links["Bo"])]
    wait_until(lambda: gm.locator(".ws-seat-links li[data-seat=Ana][data-present='1']").count()
               and gm.locator(".ws-seat-links li[data-seat=Bo][data-present='1']").count(), what="both players to show as present")
    gm.click("[data-qr-of=Ana]")
    assert gm.locator(f"svg.ws-qr[data-qr='{links['Ana']}']").count() == 1
    shots(table, gm, "workshop-lobby")
    token = token_of(links["Ana"])
    assert state_of(table, "saga", "hab-block-ambush", token).get("state") is None  # nothing rolled before Start

    start(gm)
    for page in players:
        page.wait_for_selector(".app header .status.live", timeout=20_000)
    play_until(table, "saga", "hab-block-ambush", token, players,
               lambda state, events: (state.get("state") or {}).get("round", 0) >= 2, "the first round to be played")
    kinds = [e["type"] for e in events_of(table, "saga", "hab-block-ambush", token)]
    assert kinds.count("TurnEnded") + kinds.count("TurnSkipped") + kinds.count("TurnTimedOut") >= 4
    started = next(e for e in events_of(table, "saga", "hab-block-ambush", token) if e["type"] == "EncounterStarted")
    terrain = started["data"]["setup"]["terrain"]
    assert [9, 0] in terrain["walls"] and [9, 12] in terrain["walls"] and [9, 6] not in terrain["walls"]
    assert {"x": 4, "y": 6, "level": "heavy", "facing": [[1, 0]]} in terrain["cover"]

    gm.goto(f"{table.served.api}/workshop/saga")
    gm.wait_for_selector(".ws-state[data-state=running] li[data-encounter='Hab-block ambush']")
    shots(table, gm, "workshop-campaign-home")
    assert table.errors == []


@pytest.mark.parametrize("system_title", ["RonD6", "d100 zones", "d100 degrees"])
def test_a_shorter_path_in_each_other_system(table: Table, system_title: str) -> None:
    gm = sign_in(table, f"short-{system_title.split()[0].lower()}")
    new_encounter(gm, "Skirmish", system_title)
    paint_line(gm, "wall", (8, 2), (8, 6))
    archetypes = gm.locator(".ws-palette-group:has(h4:text('Archetypes')) [data-carry]").all()
    ours, theirs = archetypes[0].get_attribute("data-carry"), archetypes[-1].get_attribute("data-carry")
    drag_onto_map(gm, ours, (4, 4))
    drag_onto_map(gm, theirs, (11, 4))
    names = gm.locator(".ws-combatants li[data-combatant]").all()
    mine = names[0].get_attribute("data-combatant")
    gm.click(f".ws-combatants li[data-combatant='{mine}'] .ws-pick")
    gm.locator(".ws-combatant [data-field=side] input").fill("party")
    add_seat(gm, "Ana")
    give_to(gm, mine, "Ana")
    open_lobby(gm)
    links = seat_links(gm)
    player = join(table, links["Ana"])
    token = token_of(links["Ana"])
    encounter = gm.url.rsplit("/", 1)[1]
    start(gm)
    player.wait_for_selector(".app header .status.live", timeout=20_000)
    play_until(table, gm.url.split("/")[-3], encounter, token, [player],
               lambda state, events: any(e["type"] in ("TurnEnded", "TurnSkipped", "EncounterEnded") for e in events), "the first turn")
    assert table.errors == []
