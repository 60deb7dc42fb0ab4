"""An area template at the table, in real Chromium, through clicks: a Bolt &
Blade player picks a frag grenade, hovers a square, sees the blast the server
previews (BB-CMB-24) with the ally it would catch flagged and the throw's
chance, then throws; the narration tells the throw."""

from __future__ import annotations

import json

from tests.browser.table_helpers import Table, page_version, table_setup, wait_until

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
        before = body["version"]
        page.click(f"[data-mine='{active}'] .end-turn")
        wait_until(lambda: table.state(encounter, token)["version"] > before, what=f"{active}'s End turn to land")
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
