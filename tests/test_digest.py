""""While you were away" (issue 22): the digest of what happened since a seat
last looked, pure and over the API."""

from __future__ import annotations

from firelane.engine.dice import FixedDice
from firelane.engine.registry import register_system
from firelane.events.schemas import EndTurn
from firelane.projections.digest import seat_digest
from tests.test_gm_and_rewind import started, table_setup
from tests.toy_system import TOY, Strike

register_system(TOY, "tests.toy_system")


def test_the_digest_says_who_acted_the_hits_taken_how_ones_own_stand_and_what_awaits() -> None:
    state = started(table_setup(turn_timer="1d"))
    assert state.active == "a"
    since = state.version
    events = []

    def act(command, faces=()):
        for event in TOY.decide_or_reject(state, command, FixedDice(faces)):
            TOY.evolve(state, event)
            events.append((state.version, event))

    act(EndTurn(command_id="e1", actor="a"))
    while state.active in ("b", "c"):
        act(Strike(command_id=f"s{state.version}", actor=state.active, target="a"), faces=(6,))
        act(EndTurn(command_id=f"e{state.version}", actor=state.active))
    digest = seat_digest(TOY, state, "alice", since, events, {"turn": 1_800_000_000_000, "window": None})
    # In the order they acted (Cy's initiative is higher than Bo's).
    assert [(a["name"], a["turns"], a["attacks"]) for a in digest["acted"]] == [("Ann", 1, 0), ("Cy", 1, 1), ("Bo", 1, 1)]
    assert [(h["name"], h["by_name"], h["amount"]) for h in digest["hits"]] == [("Ann", "Cy", 1), ("Ann", "Bo", 1)]
    assert digest["mine"][0]["name"] == "Ann" and digest["mine"][0]["health"]["value"] == state.combatants["a"].hp
    assert state.active == "a"  # round 2: Ann's turn again
    assert digest["awaits"] == [{"kind": "turn", "combatant": "a", "name": "Ann", "deadline_at_ms": 1_800_000_000_000}]
    assert digest["summary"][:2] == [
        "Acted: Ann (1 turn); Cy (1 turn, 1 attack); Bo (1 turn, 1 attack).",
        "Hits taken: Ann 2 times (2 damage, from Bo, Cy).",
    ]
    hp = state.combatants["a"].hp
    assert digest["summary"][2:] == [f"Ann: standing, {hp} of 2 hit points.", "Awaits you: Ann's turn."]  # (the toy's health)
    assert digest["events"] == len(events) and digest["since"] == since
    # Nothing new: it says so.
    quiet = seat_digest(TOY, state, "alice", state.version, events, {})
    assert quiet["summary"][0] == "Nothing has happened since you last looked." and quiet["events"] == 0
    # The GM's digest counts everyone's hits, and awaits nothing of the GM's own here.
    gm = seat_digest(TOY, state, "gm", since, events, {})
    assert len(gm["hits"]) == 2 and gm["mine"] == []
