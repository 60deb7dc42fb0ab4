"""What the table marks, in real Chromium: the fallen stay in the tracker
after a new round's initiative; allies offered as targets are marked as
friendly fire and attacked only once confirmed; join links that change only
the fragment join at once, and a campaign page's link in a browser with no
seat says so in one line; the replay's steps are drawn (no font glyphs) and
its speed is chosen; two combatants on one square are both seen."""

from __future__ import annotations

import json
from typing import Any

import pytest

from firelane.engine.registry import demo_setup
import msgspec

from tests.browser.table_helpers import Table, page_version, setup_with_players, show_tab, table_setup, wait_until


def ai_fight(table: Table, encounter: str, system: str, seed: str) -> dict[str, Any]:
    """An AI-only fight of a system's demo setup, run to its end by the server; its seats."""
    seats = table.create(encounter, msgspec.to_builtins(demo_setup(system)), seed=seed)
    wait_until(lambda: (table.state(encounter, seats["gm"]["token"])["state"] or {}).get("ended"), timeout=90,
               what=f"the {system} fight to end")
    return seats


@pytest.mark.parametrize("system", ["d100-zones", "rond6"])
def test_the_fallen_stay_in_the_tracker_struck_through_after_a_new_rounds_initiative(table: Table, system: str) -> None:
    encounter = f"fallen-{system}"
    seats = ai_fight(table, encounter, system, seed="fallen-1")
    state = table.state(encounter, seats["gm"]["token"])["state"]
    fallen = {cid for cid, c in state["combatants"].items() if c["out_of_fight"]}
    left_out = fallen - set(state["turn_order"])
    assert left_out, "no fallen combatant left out of the last round's order: the seed tests nothing"
    page = table.open(seats["spectator"]["link"], width=1440, height=900)
    page.wait_for_selector(".initiative .entry")
    listed = page.eval_on_selector_all(".initiative [data-initiative]", "xs => xs.map(x => [x.dataset.initiative, x.classList.contains('down')])")
    assert sorted(cid for cid, _down in listed) == sorted(state["combatants"])
    assert {cid for cid, down in listed if down} == fallen
    for cid in left_out:
        entry = page.locator(f".initiative [data-initiative='{cid}'] .who")
        assert entry.evaluate("e => getComputedStyle(e).textDecorationLine") == "line-through"
    assert not table.errors, table.errors


def _player_turn_with_ally_targets(table: Table, encounter: str, token: str, page: Any) -> tuple[str, list[str]]:
    """Pass prompts and end turns (by clicks) until a turn of the player's whose options offer an ally as a target."""
    answered: set[tuple[str, int]] = set()
    mine = set(page.eval_on_selector_all("[data-mine]", "xs => xs.map(x => x.dataset.mine)"))
    for _ in range(40):
        body = wait_until(lambda: (b := table.state(encounter, token)) and (b["awaiting"] or {}).get("kind") in ("turn", "reactions")
                          and {c for c in b["awaiting"]["combatants"] if (c, b["awaiting"].get("window")) not in answered} & mine
                          and b, timeout=60, what="the player to be asked")
        awaiting = body["awaiting"]
        wait_until(lambda: page_version(page) >= body["version"], what="the page to catch up")
        who = next(c for c in awaiting["combatants"] if c in mine and (c, awaiting.get("window")) not in answered)
        if awaiting["kind"] == "reactions":
            prompt = page.locator(f"[data-prompt='{who}'][data-window='{awaiting['window']}']")
            prompt.locator(".pass").click()
            answered.add((who, awaiting["window"]))
            prompt.wait_for(state="detached")
            continue
        state = body["state"]
        options = page.evaluate("() => window.__table.conn.view.options")
        attacks = next(c for c in options["combatants"] if c["combatant"] == who)["attacks"]
        allies = sorted({a["target"] for a in attacks if state["combatants"][a["target"]]["side"] == state["combatants"][who]["side"]})
        if allies:
            return who, allies
        before = len(table.events(encounter, token))
        page.click(f"[data-mine='{who}'] .end-turn")
        wait_until(lambda: len(table.events(encounter, token)) > before, what="the end of the turn")
    raise AssertionError("no turn of the player's offered an ally as a target")


@pytest.mark.parametrize("system", ["d100-degrees", "d100-zones", "rond6"])
def test_allies_offered_as_targets_are_marked_and_attacked_only_once_confirmed(table: Table, system: str) -> None:
    encounter = f"ally-{system}"
    seats = table.create(encounter, setup_with_players(system, settings={"reaction_deadline_ms": 60_000}), seed="ally-1")
    token = seats["gm"]["token"]
    page = table.open(seats["p1"]["link"], width=1440, height=900)
    who, allies = _player_turn_with_ally_targets(table, encounter, token, page)
    ally = allies[0]
    page.wait_for_selector(f"svg.map [data-token='{ally}'].targetable")
    marked = page.eval_on_selector_all("svg.map .token.targetable", "ts => ts.map(t => [t.dataset.token, t.classList.contains('ally-target')])")
    state = table.state(encounter, token)["state"]
    side = state["combatants"][who]["side"]
    assert marked and all(is_ally == (state["combatants"][cid]["side"] == side) for cid, is_ally in marked), marked
    badge = page.locator(f"svg.map [data-token='{ally}'] .chance-badge")
    assert "ally" in badge.get_attribute("class") and badge.locator("text").text_content().startswith("⚠")
    # The attack on an ally asks first; "No" sends nothing.
    before = len(table.events(encounter, token))
    page.click(f"svg.map [data-token='{ally}']")
    pop = page.locator(f".attack-pop[data-attack-on='{ally}']")
    assert "friendly fire" in pop.locator(".ally-note").first.text_content()
    pop.locator(".confirm-attack").first.click()
    pop.locator("[data-confirm='friendly-fire']").wait_for()
    table.shot(page, f"table-friendly-fire-{system}")
    pop.locator("[data-confirm-no='friendly-fire']").click()
    page.wait_for_timeout(700)
    assert len(table.events(encounter, token)) == before
    pop.locator(".confirm-attack").first.click()
    pop.locator("[data-confirm-yes='friendly-fire']").click()
    landed = wait_until(lambda: [e for e in table.events(encounter, token)[before:] if f"'target': '{ally}'" in str(e["data"])],
                        what="the confirmed attack on the ally",
                        describe=lambda: [(e["type"], e["data"]) for e in table.events(encounter, token)[before:]][:6])
    assert landed and not [e for e in table.events(encounter, token)[before:] if e["type"] == "CommandRejected"]
    assert not table.errors, table.errors


def test_a_join_link_changing_only_the_fragment_joins_and_a_seatless_browser_is_told_in_one_line(table: Table) -> None:
    seats = table.create("links", table_setup(reaction_deadline_ms=60_000), seed="links-1")
    page = table.open(seats["alice"]["link"])
    assert page.get_attribute("header .seat", "data-seat") == "alice"
    page.goto(seats["bruno"]["link"])  # the same page, another fragment: no reload
    wait_until(lambda: page.get_attribute("header .seat", "data-seat") == "bruno", what="Bruno's seat")
    page.wait_for_selector("[data-mine='vass']")
    assert page.locator("[data-mine='kell']").count() == 0 and page.locator(".fatal").count() == 0
    # A browser that never sat at the fight follows the campaign page's link to it.
    stranger = table.new_context().new_page()
    table.watch(stranger, "the campaign page")
    stranger.goto(table.served.api + "/")
    stranger.click("[data-encounter='links'] a.replay-link")
    line = stranger.locator("[data-no-seat='links']")
    line.wait_for()
    assert "holds no seat" in line.text_content() and "firelane seats links" in line.text_content()
    assert stranger.locator("text=Cannot join").count() == 0
    assert not table.errors, table.errors


def test_the_replay_draws_its_steps_and_plays_at_the_speed_chosen(table: Table) -> None:
    seats = ai_fight(table, "replay-speed", "bolt-and-blade", seed="speed-1")
    page = table.open(seats["spectator"]["link"] + "&replay")
    bar = page.locator(".replay-bar")
    bar.wait_for()
    for step in ("start", "one back", "play", "one on", "end"):
        button = bar.locator(f"button[title='{step}']")
        assert button.text_content().strip() == "" and button.locator("svg.icon path").count() == 1, step
        drawn = button.locator("svg.icon").bounding_box()
        assert drawn and drawn["width"] >= 10 and drawn["height"] >= 10
    assert bar.locator(".speed[aria-pressed='true']").text_content() == "4×"  # faster than the old 3 a second
    bar.locator("button[title='start']").click()
    page.wait_for_selector(".replay-bar[data-replay-at='0']")
    bar.locator(".speed[data-speed='16']").click()
    bar.locator("button[title='play']").click()
    page.wait_for_timeout(2_000)
    bar.locator("button[title='pause']").click()
    reached = int(bar.get_attribute("data-replay-at"))
    assert 20 <= reached <= 40, reached  # 16 events a second for about 2 s
    assert not table.errors, table.errors


def test_two_combatants_on_one_square_are_both_seen(table: Table) -> None:
    seats = table.create("stacked", table_setup(reaction_deadline_ms=60_000), seed="stacked-1")
    token = seats["gm"]["token"]
    started = wait_until(lambda: table.state("stacked", token)["state"], what="the fight to start")
    mott = started["combatants"]["mott"]["position"]
    # No move ends on a body now, not even the GM's (engine/occupancy.py): the engine refuses Ash on Mott's square.
    # A stack is still possible in a log written before that rule, so the page is shown one as such a log reads:
    # its view of the fight with Ash standing where Mott fell.
    context = table.new_context()

    def stacked_view(route: Any) -> None:
        try:
            response = route.fetch()
            body = json.loads(response.body())
        except Exception:  # the page went away mid-request (the test's end): nothing to show
            return
        state = body.get("state") if isinstance(body, dict) else None
        if isinstance(state, dict) and state["combatants"]["mott"]["out_of_fight"]:
            state["combatants"]["ash"]["position"] = mott
        route.fulfill(response=response, json=body)

    context.route("**/view?*", stacked_view)
    page = context.new_page()
    table.watch(page, seats["alice"]["link"])
    page.goto(seats["alice"]["link"])
    page.wait_for_selector(".app header .status.live", timeout=20_000)
    for changes, combatant, refused in (({"out_of_fight": True}, "mott", False), ({"position": mott}, "ash", True)):
        answer = table.post("stacked", token, {"type": "GMAdjust", "command_id": f"set-{combatant}", "actor": "gm",
                                               "combatant": combatant, "changes": changes, "reason": "set up"}).json()
        assert bool(answer["rejected"]) == refused, answer
    assert answer["events"][0]["data"]["reason"].endswith("lies: no move ends on a body"), answer
    square = f"{mott[0]},{mott[1]}"
    wait_until(lambda: page.locator(f"svg.map [data-pos='{square}']").count() == 2, what="both tokens on the square")
    centres = page.eval_on_selector_all(f"svg.map [data-pos='{square}'] .body", "cs => cs.map(c => [c.getAttribute('cx'), c.getAttribute('cy')])")
    assert len(set(map(tuple, centres))) == 2, centres  # drawn apart, not one over the other
    assert page.locator(f"svg.map [data-pos='{square}'][data-stack='2']").count() == 2
    assert page.locator("svg.map .stack-badge text").text_content() == "2"
    ash = page.locator("svg.map [data-token='ash'] .body").bounding_box()
    assert ash and ash["width"] >= 12
    assert not table.errors, table.errors


def test_a_players_narration_says_which_entries_it_does_not_show(table: Table) -> None:
    seats = table.create("gaps", table_setup(reaction_deadline_ms=60_000), seed="gaps-1")
    token = seats["gm"]["token"]
    alice = table.open(seats["alice"]["link"])
    refused = table.post("gaps", token, {"type": "GMAdjust", "command_id": "stale", "actor": "gm", "combatant": "kell",
                                         "changes": {"vitality": 999}, "reason": "x"}).json()
    n = refused["events"][0]["n"]
    # Events after it come from a click: the GM skips the running turn.
    gm = table.open(seats["gm"]["link"])
    gm.wait_for_selector(".gm [data-gm='skip']:not([disabled])")
    gm.click(".gm [data-gm='skip']")
    gm.click(".gm .confirm [data-confirm-yes='Skip']")
    wait_until(lambda: page_version(alice) > n, what="the skip on Alice's page")
    gap = alice.locator(f".narration .line.gap[data-gap='1']")
    gap.wait_for()
    assert gap.text_content().strip().endswith(f"entry {n} not shown: the GM's own")
    # Every version is accounted for: a line, or the gap note.
    numbers = alice.eval_on_selector_all(".narration .line:not(.gap)", "ls => ls.map(l => Number(l.dataset.n))")
    assert n not in numbers and sorted(numbers + [n]) == list(range(1, max(numbers) + 1))
    hidden = alice.eval_on_selector_all(".narration .line", "ls => ls.filter(l => !l.getClientRects().length).length")
    assert hidden == 0
    assert not table.errors, table.errors


def test_an_overwatch_shows_its_area_when_its_watcher_is_hovered(table: Table) -> None:
    seats = table.create("overwatch", table_setup(reaction_deadline_ms=60_000), seed="overwatch-1")
    token = seats["gm"]["token"]
    pages = {"kell": table.open(seats["alice"]["link"]), "vass": table.open(seats["bruno"]["link"])}
    answered: set[tuple[str, int]] = set()
    for _ in range(20):  # pass the players' prompts until one of their turns
        body = wait_until(lambda: (b := table.state("overwatch", token)) and (a := b["awaiting"] or {}).get("kind") in ("turn", "reactions")
                          and [c for c in a["combatants"] if c in pages and (c, a.get("window")) not in answered] and b,
                          timeout=60, what="a player to be asked")
        awaiting = body["awaiting"]
        who = next(c for c in awaiting["combatants"] if c in pages and (c, awaiting.get("window")) not in answered)
        page = pages[who]
        wait_until(lambda: page_version(page) >= body["version"], what="the page to catch up")
        if awaiting["kind"] == "turn":
            break
        page.click(f"[data-prompt='{who}'][data-window='{awaiting['window']}'] .pass")
        answered.add((who, awaiting["window"]))
    page.click(f"[data-mine='{who}'] [data-action='BBOverwatch'] button.action")
    square = page.locator("svg.map rect.pick").first.get_attribute("data-pick")
    page.click(f"svg.map rect.pick[data-pick='{square}']")
    area = page.locator(f"svg.map .overwatch[data-overwatch='{who}']")
    area.wait_for()
    watched = table.state("overwatch", token)["state"]["combatants"][who]["overwatch_area"]
    assert area.locator("rect").count() == len(watched) > 0
    assert "shown" not in area.get_attribute("class")
    page.hover(f"svg.map [data-token='{who}'] .body")
    wait_until(lambda: "shown" in area.get_attribute("class"), what="the area filled while its watcher is hovered")
    assert area.locator("rect").first.evaluate("r => Number(getComputedStyle(r).fillOpacity)") > 0.1
    page.mouse.move(2, 2)
    wait_until(lambda: "shown" not in area.get_attribute("class"), what="the area back to its outline")
    assert not table.errors, table.errors


def test_two_combatants_with_one_name_are_told_apart(table: Table) -> None:
    setup = table_setup(reaction_deadline_ms=60_000)
    for combatant in setup["combatants"]:
        if combatant["id"] in ("ash", "mott"):
            combatant["name"] = "Cultist"
    seats = table.create("namesakes", setup, seed="namesakes-1")
    page = table.open(seats["spectator"]["link"])
    page.wait_for_selector("svg.map [data-token='mott']")
    marks = {cid: page.locator(f"svg.map [data-token='{cid}'] .initials").text_content() for cid in ("ash", "mott", "kell")}
    assert marks == {"ash": "C1", "mott": "C2", "kell": "SK"}, marks
    names = {cid: page.locator(f".initiative [data-initiative='{cid}'] .who").text_content() for cid in ("ash", "mott")}
    assert names == {"ash": "Cultist 1", "mott": "Cultist 2"}, names
    assert page.locator("svg.map [data-token='mott'] title").text_content().startswith("Cultist 2")
    assert not table.errors, table.errors


@pytest.mark.parametrize("by", ["mouse", "finger"])
def test_an_overwatch_square_previews_its_area_before_it_is_chosen(table: Table, by: str) -> None:
    # BBOverwatch is one of Bolt & Blade's previewable commands (BB-CMB-13): its area shows before the choice.
    encounter = f"overwatch-preview-{by}"
    seats = table.create(encounter, table_setup(reaction_deadline_ms=60_000), seed="overwatch-1")
    token = seats["gm"]["token"]
    touch = by == "finger"
    players = {"kell": "alice", "vass": "bruno"}
    pages = {who: table.open(seats[seat]["link"], touch=touch, width=1024 if touch else 1440, height=768 if touch else 880)
             for who, seat in players.items()}
    answered: set[tuple[str, int]] = set()
    for _ in range(20):  # pass the players' prompts until one of their turns
        body = wait_until(lambda: (b := table.state(encounter, token)) and (a := b["awaiting"] or {}).get("kind") in ("turn", "reactions")
                          and [c for c in a["combatants"] if c in pages and (c, a.get("window")) not in answered] and b,
                          timeout=60, what="a player to be asked")
        awaiting = body["awaiting"]
        who = next(c for c in awaiting["combatants"] if c in pages and (c, awaiting.get("window")) not in answered)
        page = pages[who]
        wait_until(lambda: page_version(page) >= body["version"], what="the page to catch up")
        if awaiting["kind"] == "turn":
            break
        page.click(f"[data-prompt='{who}'][data-window='{awaiting['window']}'] .pass")
        answered.add((who, awaiting["window"]))
    if touch:
        show_tab(page, "act")
    page.locator(f"[data-mine='{who}'] [data-action='BBOverwatch'] button.action").click()
    if touch:
        show_tab(page, "map")
    pick = page.locator("svg.map rect.pick").first
    square = pick.get_attribute("data-pick")
    x, y = map(int, square.split(","))
    expected = table.get(encounter, "preview?command=" + json.dumps(
        {"type": "BBOverwatch", "command_id": "", "actor": who, "center": [x, y]}), seats[players[who]]["token"])
    assert expected["squares"], expected
    if touch:
        pick.tap()
    else:
        pick.hover()
    preview = page.locator(f"svg.map .template.preview[data-preview='{square}']")
    preview.wait_for()
    assert preview.locator("rect").count() == int(preview.get_attribute("data-squares")) == len(expected["squares"])
    assert table.state(encounter, token)["state"]["combatants"][who]["overwatch_area"] in (None, [])  # not chosen yet
    if touch:
        assert page.locator(".map-tip .tap-again").is_visible()
        page.locator(f"svg.map rect.pick[data-pick='{square}']").tap()
    else:
        pick.click()
    wait_until(lambda: table.state(encounter, token)["state"]["combatants"][who]["overwatch_area"], what="the Overwatch chosen")
    assert sorted(map(tuple, table.state(encounter, token)["state"]["combatants"][who]["overwatch_area"])) == sorted(
        map(tuple, expected["squares"]))
    assert not table.errors, table.errors
