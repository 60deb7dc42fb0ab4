"""Two players in two browser contexts, and an AI side, play a Bolt & Blade
fight to its end through clicks only: moving by clicking a highlighted
square, attacking by clicking a target, and claiming Reactive Fire
(BB-CMB-10) and Dive for Cover (BB-CMB-17) from their prompts, whose
countdown to the window's deadline runs."""

from __future__ import annotations

from typing import Any

from tests.browser.table_helpers import Table, page_version, table_setup, wait_until

OWNER = {"kell": "alice", "vass": "bruno"}


def _asked(table: Table, encounter: str, token: str, answered: set[tuple[str, int]]) -> dict | None:
    """The state when a player is asked (or the fight ended). A window's
    answers stay with the engine until every reactor has answered, so a
    player who answered is still listed: ``answered`` leaves them out."""
    body = table.state(encounter, token)
    awaiting = body.get("awaiting") or {}
    if awaiting.get("kind") == "ended":
        return body
    waiting = [c for c in awaiting.get("combatants", []) if c in OWNER and (c, awaiting.get("window")) not in answered]
    if awaiting.get("kind") in ("turn", "reactions") and waiting:
        body["who"] = waiting[0]
        return body
    return None


def _square_towards_enemies(page: Any, state: dict[str, Any], who: str) -> str:
    """The highlighted square nearest an enemy, safe ones first (a player's plain choice)."""
    squares = page.eval_on_selector_all("svg.map rect.reach", "rs => rs.map(r => [r.dataset.square, r.classList.contains('safe')])")
    me = state["combatants"][who]
    enemies = [c["position"] for c in state["combatants"].values() if c["side"] != me["side"] and not c["out_of_fight"]]

    def key(item: list) -> tuple:
        x, y = map(int, item[0].split(","))
        return (not item[1], min(max(abs(x - ex), abs(y - ey)) for ex, ey in enemies), item[0])

    return min(squares, key=key)[0]


def test_two_players_and_the_ai_play_a_fight_to_the_end_by_clicks(table: Table) -> None:
    encounter = "bb-clicks"
    seats = table.create(encounter, table_setup(reaction_deadline_ms=30_000, max_rounds=8), seed="table-test-2")
    token = seats["gm"]["token"]
    pages = {"kell": table.open(seats["alice"]["link"]), "vass": table.open(seats["bruno"]["link"])}
    answered: set[tuple[str, int]] = set()
    done = {"move": 0, "attack": 0, "reactive_fire": 0, "dive_for_cover": 0}
    moved_in: set[tuple[str, int]] = set()
    counted = False
    for _ in range(400):
        body = wait_until(lambda: _asked(table, encounter, token, answered), timeout=45, what="a player to be asked",
                          describe=lambda: table.state(encounter, token)["awaiting"])
        awaiting, state = body["awaiting"], body["state"]
        if awaiting["kind"] == "ended":
            break
        who = body["who"]
        page = pages[who]
        # A person acts on what the page shows: wait until it shows this version.
        wait_until(lambda: page_version(page) >= body["version"], what=f"{who}'s page to catch up")
        before = len(table.events(encounter, token))
        if awaiting["kind"] == "reactions":
            prompt = page.locator(f"[data-prompt='{who}'][data-window='{awaiting['window']}']")
            prompt.wait_for()
            if not counted:  # the prompt's countdown to the window's deadline runs
                first = int(prompt.locator(".countdown").get_attribute("data-left-ms"))
                page.wait_for_timeout(1_000)
                second = int(prompt.locator(".countdown").get_attribute("data-left-ms"))
                assert 0 < second < first <= awaiting["deadline_ms"] == 30_000 and first - second >= 600, (first, second)
                counted = True
            chosen = None
            for reaction in ("reactive_fire", "dive_for_cover"):
                choice = prompt.locator(f"[data-reaction='{reaction}'] button.choice")
                if choice.count():
                    table.shot(page, f"table-prompt-{reaction}")
                    choice.first.click()
                    chosen = reaction
                    break
            if chosen is None:
                keep = prompt.locator("[data-reaction='continue'] button.choice")
                (keep.first if keep.count() else prompt.locator(".pass")).click()
            else:
                done[chosen] += 1
            answered.add((who, awaiting["window"]))
            # The page says the answer is in, and shows no prompt for it any more.
            page.wait_for_selector(f"[data-prompt='{who}'][data-window='{awaiting['window']}']", state="detached")
            continue
        else:
            card = page.locator(f"[data-mine='{who}']")
            card.locator(".end-turn").wait_for()
            turn = (who, len([e for e in table.events(encounter, token) if e["type"] == "TurnStarted"]))
            targets = page.locator("svg.map .token.targetable")
            if targets.count():
                # Attack: the chance to hit is on the target before the click.
                target = targets.first
                assert target.locator(".chance-badge text").text_content().endswith("%")
                table.shot(page, "table-bolt-and-blade")
                target.click()
                page.locator(".attack-pop .confirm-attack").first.click()
                done["attack"] += 1
            elif turn not in moved_in and page.locator("svg.map rect.reach").count():
                square = _square_towards_enemies(page, state, who)
                page.locator(f"svg.map rect.reach[data-square='{square}']").click()
                moved_in.add(turn)
                done["move"] += 1
            else:
                card.locator(".end-turn").click()
        wait_until(lambda: len(table.events(encounter, token)) > before, what=f"{who}'s click to land",
                   describe=lambda: (page.locator(".toast").all_inner_texts(), table.state(encounter, token)["awaiting"],
                                     [(e["n"], e["type"]) for e in table.events(encounter, token)[-4:]]))
    final = table.state(encounter, token)["state"]
    assert final["ended"], "the fight did not reach its end"
    events = table.events(encounter, token)
    claims = {(e["data"]["combatant"], e["data"]["reaction"]) for e in events if e["type"] == "ReactionClaimed"}
    assert any(r == "reactive_fire" and c in OWNER for c, r in claims), claims
    assert any(r == "dive_for_cover" and c in OWNER for c, r in claims), claims
    moved = {e["data"]["combatant"] for e in events if e["type"] == "Moved"}
    attacked = {e["data"]["attacker"] for e in events if e["type"] == "AttackResolved" and e["data"]["kind"] == "attack"}
    assert OWNER.keys() & moved and OWNER.keys() & attacked and done["move"] and done["attack"] and counted
    assert not any(e["type"] == "CommandRejected" and e["data"]["actor"] in OWNER for e in events), \
        [e["data"] for e in events if e["type"] == "CommandRejected"]
    assert not table.errors, table.errors
