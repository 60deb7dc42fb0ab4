"""Area templates at the table, in real Chromium, through clicks: a Bolt &
Blade player picks a frag grenade, hovers a square, sees the blast the server
previews (BB-CMB-24) with the ally it would catch flagged and the throw's
chance, then throws; the narration tells the throw. And d100-degrees' and
d100-zones' area fire, previewed the same way."""

from __future__ import annotations

import json
import time

import pytest

from tests.browser.table_helpers import Table, page_version, setup_with_players, table_setup, wait_until

# Kell throws from (2,4); Vass stands at (5,5) and Cultist Ash at (6,4): a frag
# grenade's 10 ft burst at (6,4) catches them both (and not Kell).
POSITIONS = {"kell": [2, 4], "vass": [5, 5], "ash": [6, 4], "mott": [13, 6]}
OWNER = {"kell": "alice", "vass": "bruno", "ash": "cult", "mott": "cult"}
AIM = "6,4"


def _grenade_setup() -> dict:
    setup = table_setup(reaction_deadline_ms=30_000)
    for combatant in setup["combatants"]:
        combatant["position"] = POSITIONS[combatant["id"]]
        combatant["policy"] = "human"  # nobody moves unless a page says so
    setup["seats"].append({"id": "cult", "role": "player", "name": "Cult", "combatants": ["ash", "mott"]})
    return setup


def test_a_grenade_template_is_previewed_with_the_ally_it_catches_flagged_then_thrown(table: Table) -> None:
    encounter = "grenade"
    seats = table.create(encounter, _grenade_setup())
    token = seats["gm"]["token"]
    pages = {seat: table.open(seats[seat]["link"]) for seat in ("alice", "bruno", "cult")}
    # Everyone but Kell ends their turn from their own page until Kell's turn comes.
    for _ in range(8):
        body = wait_until(lambda: (b := table.state(encounter, token)) and (b.get("awaiting") or {}).get("kind") == "turn" and b,
                          what="a turn to run")
        active = body["state"]["active"]
        if active == "kell":
            break
        page = pages[OWNER[active]]
        wait_until(lambda: page_version(page) >= body["version"], what=f"{active}'s page to catch up")
        table.end_turn(page, encounter, token, active, body["version"])
    else:
        raise AssertionError("Kell's turn never came")

    alice = pages["alice"]
    card = alice.locator("[data-mine='kell']")
    card.locator(".end-turn").wait_for()
    card.locator("[data-action='BBThrow'] button.action").click()
    square = alice.locator(f"svg.map rect.pick[data-pick='{AIM}']")
    square.wait_for()
    assert "hits-allies" in square.get_attribute("class")  # ⚠: this square's blast catches an ally
    square.hover()
    drawn = alice.locator(f"svg.map g.template.preview[data-preview='{AIM}']")
    drawn.wait_for()

    # What the server's own preview says of the command the option lists.
    options = table.get(encounter, "options", seats["alice"]["token"])
    kell = next(c for c in options["combatants"] if c["combatant"] == "kell")
    grenade = next(a for a in kell["actions"] if a["action"] == "BBThrow")
    choice = next(c for c in grenade["choices"] if c["square"] == [6, 4])
    preview = table.get(encounter, f"preview?command={json.dumps(choice['command'])}", seats["alice"]["token"])
    assert preview["allies_caught"] == ["vass"]
    assert sorted(c["combatant"] for c in preview["caught"]) == ["ash", "vass"]

    # The map draws that template and flags that ally; the tip gives the throw's chance.
    assert drawn.locator("rect").count() == len(preview["squares"]) == int(drawn.get_attribute("data-squares"))
    flagged = alice.eval_on_selector_all("svg.map .token.caught-ally", "ts => ts.map(t => t.dataset.token)")
    assert flagged == preview["allies_caught"]
    assert alice.locator("svg.map .token.caught-ally[data-token='vass'] .ally-warning").count() == 1
    caught = alice.eval_on_selector_all("svg.map .token.caught", "ts => ts.map(t => t.dataset.token).sort()")
    assert caught == ["ash", "vass"]
    tip = alice.locator(".map-tip")
    assert tip.locator(".odds").text_content() == f"{round(choice['hit_chance'] * 100)}%" == "75%"
    assert "Trooper Vass" in tip.locator(".allies-caught").text_content()
    table.shot(alice, "table-grenade-preview")

    # Throw: a click on the square sends the listed command (friendly fire confirmed, BB-CMB-24).
    before = table.state(encounter, token)["version"]
    square.click()
    thrown = wait_until(lambda: next((e for e in table.events(encounter, token) if e["n"] > before and e["type"] == "BBThrown"), None),
                        what="the throw", describe=lambda: alice.locator(".toast").all_inner_texts())
    assert thrown["data"]["combatant"] == "kell" and thrown["data"]["aimed"] == [6, 4]
    assert thrown["data"]["allies_caught"] == ["vass"]
    line = alice.locator(f".narration .line[data-n='{thrown['n']}'][data-type='BBThrown']")
    line.wait_for()
    assert "Sergeant Kell throws a frag grenade at (6,4)" in line.text_content()
    assert not table.errors, table.errors


def _offered(table: Table, encounter: str, token: str, who: str, action: str) -> dict | None:
    options = table.get(encounter, "options", token)
    mine = next((c for c in options["combatants"] if c["combatant"] == who), None)
    return next((a for a in (mine or {}).get("actions", []) if a["action"] == action), None)


@pytest.mark.parametrize(("system", "action"), [("d100-degrees", "D100DSuppressingFire"), ("d100-zones", "D100ZSuppressiveFire")])
def test_each_systems_area_action_is_previewed_from_the_page(table: Table, system: str, action: str) -> None:
    """d100-degrees' killzone is aimed at a square, d100-zones' Suppressive Fire at a zone (a button):
    either way the map draws the template the server's preview computes, and rings whom it catches."""
    encounter = f"area-{system}"
    # Seeded: with "s8", d100-degrees' fight opens a window on two of the
    # player's combatants at once before the killzone is offered (see `answered`).
    seats = table.create(encounter, setup_with_players(system, settings={"reaction_deadline_ms": 20_000}), seed="s8")
    token = seats["p1"]["token"]
    page = table.open(seats["p1"]["link"])
    mine = set(page.eval_on_selector_all("[data-mine]", "xs => xs.map(x => x.dataset.mine)"))
    # (combatant, window) passed: the engine holds a window's answers until
    # every reactor has answered, so the state still awaits the ones given
    # (and the page shows them as answered, with no prompt to click).
    answered: set[tuple[str, int]] = set()

    def asked(awaiting: dict) -> list[str]:
        return [c for c in awaiting.get("combatants", []) if c in mine and (c, awaiting.get("window")) not in answered]

    for _ in range(30):
        body = wait_until(lambda: (b := table.state(encounter, token)) and (a := b.get("awaiting") or {}).get("kind") in ("turn", "reactions")
                          and asked(a) and b, timeout=40, what="the player to be asked")
        awaiting = body["awaiting"]
        who = asked(awaiting)[0]
        wait_until(lambda: page_version(page) >= body["version"], what="the page to catch up")
        if awaiting["kind"] == "reactions":
            prompt = page.locator(f"[data-prompt='{who}'][data-window='{awaiting['window']}']")
            prompt.locator(".pass").click()
            answered.add((who, awaiting["window"]))
            prompt.wait_for(state="detached")
            continue
        offered = _offered(table, encounter, token, who, action)
        if offered is not None:
            break
        table.end_turn(page, encounter, token, who, body["version"])
    else:
        raise AssertionError(f"no turn of the player's offered {action}")

    card = page.locator(f"[data-mine='{who}']")
    choice = offered["choices"][0]
    if len(offered["choices"]) == 1 and not choice["square"]:
        card.locator(f"button.action[data-action='{action}']").hover()
    else:
        card.locator(f"[data-action='{action}'] button.action").click()
        if choice["square"]:
            page.locator(f"svg.map rect.pick[data-pick='{choice['square'][0]},{choice['square'][1]}']").hover()
        else:
            card.locator(".sub-choices button.choice").first.hover()
    drawn = page.locator("svg.map g.template.preview")
    drawn.wait_for()
    preview = table.get(encounter, f"preview?command={json.dumps(choice['command'])}", token)
    assert preview["squares"] and not preview.get("refused")
    assert drawn.locator("rect").count() == len(preview["squares"])
    caught = page.eval_on_selector_all("svg.map .token.caught", "ts => ts.map(t => t.dataset.token).sort()")
    assert caught == sorted(c["combatant"] for c in preview["caught"]) and caught
    flagged = page.eval_on_selector_all("svg.map .token.caught-ally", "ts => ts.map(t => t.dataset.token).sort()")
    assert flagged == sorted(preview["allies_caught"])
    tip = page.locator(".map-tip").text_content()
    assert choice["label"] in tip
    table.shot(page, f"table-area-{system}")
    assert not table.errors, table.errors


def test_a_second_combatant_of_the_seat_answers_the_same_window_without_waiting_for_the_first(table: Table) -> None:
    """The engine holds a window's answers until every reactor has answered;
    the page must not stay busy on the first of its combatants' answers (it
    would have to, if it waited for the answer), or the second could not
    answer until that wait ran out. Seeded: d100-degrees' fight with "s8"
    asks two of the player's combatants in one window."""
    encounter = "two-in-a-window"
    seats = table.create(encounter, setup_with_players("d100-degrees", settings={"reaction_deadline_ms": 60_000}), seed="s8")
    token = seats["p1"]["token"]
    page = table.open(seats["p1"]["link"])
    mine = set(page.eval_on_selector_all("[data-mine]", "xs => xs.map(x => x.dataset.mine)"))
    for _ in range(40):
        body = wait_until(lambda: (b := table.state(encounter, token)) and (a := b.get("awaiting") or {}).get("kind") in ("turn", "reactions")
                          and any(c in mine for c in a.get("combatants", [])) and b, timeout=40, what="the player to be asked")
        awaiting = body["awaiting"]
        asked = [c for c in awaiting["combatants"] if c in mine]
        wait_until(lambda: page_version(page) >= body["version"], what="the page to catch up")
        if awaiting["kind"] == "reactions" and len(asked) >= 2:
            break
        if awaiting["kind"] == "reactions":
            prompt = page.locator(f"[data-prompt='{asked[0]}'][data-window='{awaiting['window']}']")
            prompt.locator(".pass").click()
            prompt.wait_for(state="detached")
            continue
        table.end_turn(page, encounter, token, asked[0], body["version"])
    else:
        raise AssertionError("no window asked two of the player's combatants")
    window = awaiting["window"]
    first, second = asked[0], asked[1]
    page.locator(f"[data-prompt='{first}'][data-window='{window}'] .pass").click()
    clicked = time.monotonic()
    # The first answer is taken (its prompt goes) and the second combatant can
    # answer at once: not only when the page's wait for the first runs out (10 s).
    page.locator(f"[data-prompt='{first}'][data-window='{window}']").wait_for(state="detached", timeout=30_000)
    second_pass = page.locator(f"[data-prompt='{second}'][data-window='{window}'] .pass")
    second_pass.wait_for()
    while second_pass.is_disabled():
        time.sleep(0.05)
    assert time.monotonic() - clicked < 5, "the page stayed busy on the first answer"
    # The first answer is held: the window is still open, waiting for the second.
    held = table.state(encounter, token)
    assert held["awaiting"]["kind"] == "reactions" and held["awaiting"]["window"] == window
    second_pass.click()
    wait_until(lambda: (a := table.state(encounter, token)["awaiting"]).get("window") != window or a.get("kind") != "reactions",
               what="the window to close once both have answered")
    passed = [e for e in table.get(encounter, "events?after=0", token)["events"]
              if e["type"] == "ReactionPassed" and e["data"].get("window") == window]
    assert {e["data"]["combatant"] for e in passed} >= {first, second}
