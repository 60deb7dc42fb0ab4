"""A RonD6 fight in real Chromium, played by clicks: a player's agent declares
two actions, spends one on Wait (R6-08), and interrupts the next enemy's declared action
from the page's prompt."""

from __future__ import annotations

from tests.browser.table_helpers import Table, setup_with_players, wait_until


def test_a_rond6_player_waits_and_interrupts_from_the_prompt(table: Table) -> None:
    """R6-08 at the table: Wait, then claim the interrupt when an enemy declares."""
    seats = table.create("r6-wait", setup_with_players("rond6", settings={"reaction_deadline_ms": 30_000}))
    token = seats["gm"]["token"]
    page = table.open(seats["p1"]["link"])
    mine = set(page.eval_on_selector_all("[data-mine]", "xs => xs.map(x => x.dataset.mine)"))
    waited: set[str] = set()
    # (combatant, window) passed: the engine holds a window's answers until every
    # reactor has answered, so the state still awaits one this page has answered.
    answered: set[tuple[str, int]] = set()
    claimed = None
    for _ in range(80):
        body = wait_until(lambda: _asked(table, token, mine, answered), timeout=40, what="the player to be asked",
                          describe=lambda: [(e["n"], e["type"], str(e["data"])[:160]) for e in table.events("r6-wait", token)
                                            if e["type"] in ("ReactionWindowOpened", "R6ActionDeclared", "ActionTaken", "ReactionClaimed", "CommandRejected")])
        awaiting = body["awaiting"]
        who = next(c for c in awaiting["combatants"] if c in mine and (c, awaiting.get("window")) not in answered)
        before = len(table.events("r6-wait", token))
        if awaiting["kind"] == "reactions":
            prompt = page.locator(f"[data-prompt='{who}'][data-window='{awaiting['window']}']")
            prompt.wait_for()
            interrupt = prompt.locator("[data-reaction='interrupt'] button.choice")
            if who in waited and interrupt.count():
                label = interrupt.first.get_attribute("data-choice")
                table.shot(page, "table-rond6-wait-prompt")
                interrupt.first.click()
                claimed = (who, label)
                break
            prompt.locator(".pass").click()
            answered.add((who, awaiting["window"]))
            prompt.wait_for(state="detached")
            continue  # held until every reactor has answered: nothing new in the log yet, maybe
        else:
            card = page.locator(f"[data-mine='{who}']")
            card.locator(".end-turn").wait_for()
            if who not in waited and not waited:
                declare = card.locator("[data-action='R6DeclareActions'] button.action")
                if declare.count():
                    declare.click()
                    card.locator("button.choice", has_text="declare 2 actions").click()
                    wait_until(lambda: card.locator("button[data-action='R6Wait']").count(), what="Wait offered")
                    card.locator("button[data-action='R6Wait']").click()
                    wait_until(lambda: any(e["type"] == "ActionTaken" and e["data"].get("action") == "wait"
                                           and e["data"]["combatant"] == who for e in table.events("r6-wait", token))
                               or any(e["type"] == "R6ActionDeclared" and e["data"]["combatant"] == who
                                      and e["data"]["action"] == "R6Wait" for e in table.events("r6-wait", token)),
                               what=f"{who}'s Wait to land")
                    waited.add(who)
                    before = len(table.events("r6-wait", token))
                    if not _still_its_turn(table, token, who):
                        continue
            card.locator(".end-turn").click()
        wait_until(lambda: len(table.events("r6-wait", token)) > before, what=f"{who}'s answer to land")
    assert claimed is not None, "no enemy declared an action while a player's agent waited"
    who, label = claimed
    events = wait_until(lambda: (es := table.events("r6-wait", token)) and any(
        e["type"] == "ReactionClaimed" and e["data"]["combatant"] == who and e["data"]["reaction"] == "interrupt" for e in es) and es,
        what="the interrupt claimed")
    claim = next(e for e in events if e["type"] == "ReactionClaimed" and e["data"]["combatant"] == who)
    opened = next(e for e in events if e["type"] == "ReactionWindowOpened" and e["data"]["window"] == claim["data"]["window"])
    interrupted = opened["data"]["actor"]

    def acted(es: list[dict], combatant: str, after: int) -> int | None:
        return next((e["n"] for e in es if e["n"] > after and e["type"] == "ActionTaken" and e["data"]["combatant"] == combatant), None)

    events = wait_until(lambda: (es := table.events("r6-wait", token)) and acted(es, interrupted, claim["n"]) and es,
                        what="the interrupted action to go on")
    queued = next(e for e in events if e["type"] == "R6InterruptQueued" and e["data"]["combatant"] == who)
    assert queued["n"] > claim["n"]
    # The waiter acts first: its interrupting action is taken before the declared action it interrupted.
    assert acted(events, who, queued["n"]) < acted(events, interrupted, claim["n"])
    page.wait_for_selector(f".line[data-n='{queued['n']}']")
    assert not table.errors, table.errors


def _still_its_turn(table: Table, token: str, who: str) -> bool:
    awaiting = table.state("r6-wait", token).get("awaiting") or {}
    return awaiting.get("kind") == "turn" and who in awaiting.get("combatants", [])


def _asked(table: Table, token: str, mine: set[str], answered: set[tuple[str, int]]) -> dict | None:
    body = table.state("r6-wait", token)
    awaiting = body.get("awaiting") or {}
    if awaiting.get("kind") in ("turn", "reactions") and any(
            c in mine and (c, awaiting.get("window")) not in answered for c in awaiting.get("combatants", [])):
        return body
    return None
