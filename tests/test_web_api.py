"""The HTTP and WebSocket API of `firelane serve`, driven as a frontend would,
against a real `firelane serve` on its own data directory."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import trio
from trio_websocket import ConnectionClosed, open_websocket_url

from tests.api_contract import api_contract  # noqa: F401 - the fixture: every exchange checked against /api/openapi.json
from tests.cli_helpers import create_seats, REPO, Served, firelane

pytestmark = pytest.mark.usefixtures("api_contract")



@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    data = tmp_path_factory.mktemp("web") / "data"
    server = Served(data)
    try:
        yield server
    finally:
        code, stderr = server.stop()
        assert code == 0, stderr


def url(served: Served, encounter: str, what: str) -> str:
    return f"{served.api}/api/campaigns/default/encounters/{encounter}/{what}"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def wait_for_state(served: Served, encounter: str, token: str, predicate, timeout: float = 20) -> dict:
    with httpx.Client(timeout=10) as http:
        give_up = time.monotonic() + timeout
        while time.monotonic() < give_up:
            body = http.get(url(served, encounter, "state"), headers=bearer(token)).json()
            if body["state"] is not None and predicate(body):
                return body
            time.sleep(0.05)
    raise AssertionError("the state never satisfied the predicate")


def test_a_seat_token_opens_its_seat_and_nothing_else(served: Served, tmp_path: Path) -> None:
    tokens = create_seats(served, "auth", tmp_path)
    with httpx.Client(timeout=10) as http:
        seat = http.get(url(served, "auth", "seat"), headers=bearer(tokens["red"])).json()
        assert seat["seat"]["id"] == "red" and seat["seat"]["combatants"] == ["a"] and seat["system"] == "toy"
        assert http.get(url(served, "auth", "seat")).status_code == 401
        assert http.get(url(served, "auth", "seat"), headers=bearer("not-a-token")).status_code == 403
        assert http.get(url(served, "auth", "seat"), params={"token": tokens["gm"]}).json()["seat"]["role"] == "gm"
        missing = http.get(url(served, "nope", "seat"), headers=bearer(tokens["red"]))
        assert missing.status_code == 404 and "does not exist" in missing.json()["error"]
        other = http.get(url(served, "auth", "events"), headers=bearer(create_seats(served, "auth2", tmp_path)["red"]))
        assert other.status_code == 403  # a token of another encounter opens nothing here
        spectator = http.post(url(served, "auth", "commands"), headers=bearer(tokens["spectator"]),
                              content=b'{"type":"EndTurn","command_id":"s","actor":"a"}')
        assert spectator.status_code == 403


def test_commands_go_through_the_seat_that_sent_them(served: Served, tmp_path: Path) -> None:
    tokens = create_seats(served, "cmds", tmp_path)
    body = wait_for_state(served, "cmds", tokens["red"], lambda b: b["state"]["active"] == "a")
    assert body["awaiting"]["kind"] == "turn" and body["awaiting"]["combatants"] == ["a"]
    with httpx.Client(timeout=20) as http:
        # Red may not act for Bo, whose seat is blue's: the engine says so in the log.
        foreign = http.post(url(served, "cmds", "commands"), params={"wait": 10}, headers=bearer(tokens["red"]),
                            content=b'{"type":"EndTurn","command_id":"c1","actor":"b"}').json()
        assert foreign["rejected"] is True and foreign["seat"] == "red"
        assert foreign["events"][0]["data"]["reason"] == "seat 'red' does not control 'b' (it controls: a)"
        assert foreign["events"][0]["c"] == "red/c1"
        done = http.post(url(served, "cmds", "commands"), params={"wait": 10}, headers=bearer(tokens["red"]),
                         content=b'{"type":"EndTurn","command_id":"c2","actor":"a"}').json()
        assert done["rejected"] is False and [e["type"] for e in done["events"]][0] == "TurnEnded"
        # A body that is no command at all is refused at the door, with the reason; nothing is stored.
        malformed = http.post(url(served, "cmds", "commands"), params={"wait": 10}, headers=bearer(tokens["blue"]),
                              content=b'{"type": "EndTurn", ')
        assert malformed.status_code == 400 and malformed.json()["error"].startswith("malformed JSON")
        ended = http.post(url(served, "cmds", "commands"), params={"wait": 10}, headers=bearer(tokens["gm"]),
                          content=b'{"type":"EndEncounter","command_id":"g","actor":"gm","reason":"done for tonight"}').json()
        assert ended["rejected"] is False and ended["events"][0]["data"]["reason"] == "done for tonight"
        state = wait_for_state(served, "cmds", tokens["spectator"], lambda b: b["state"]["seed_revealed"])
        assert state["state"]["ended"] and state["state"]["end_reason"] == "done for tonight"
        # Once the engine has closed the ended encounter's inboxes (right after
        # the seed's reveal), a command is refused at the door: nothing is stored.
        give_up = time.monotonic() + 10
        while True:
            late = http.post(url(served, "cmds", "commands"), headers=bearer(tokens["red"]),
                             content=b'{"type":"EndTurn","command_id":"late","actor":"a"}')
            if late.status_code == 409 or time.monotonic() > give_up:
                break
            time.sleep(0.05)
        assert late.status_code == 409, late.text
        assert late.json()["error"] == "encounter 'cmds' has ended: it takes no more commands"



def test_the_first_read_of_an_encounters_events_has_all_of_them(served: Served, tmp_path: Path) -> None:
    # The API follows an encounter's log from the first request about it: that
    # request's answer must not be the little the follower has read so far.
    tokens = create_seats(served, "first-read", tmp_path)
    give_up = time.monotonic() + 20
    while True:  # the fight has begun, seen without the web API
        options = firelane("options", "first-read", "--seat", "red", "--json", "--data-dir", str(served.data_dir))
        if options.returncode == 0 and json.loads(options.stdout)["version"] >= 4:
            break
        assert time.monotonic() < give_up, options.stderr
        time.sleep(0.1)
    logged = json.loads(options.stdout)["version"]
    with httpx.Client(timeout=10) as http:
        answer = http.get(url(served, "first-read", "events"), params={"after": 0}, headers=bearer(tokens["red"])).json()
    assert answer["version"] >= logged
    assert [e["n"] for e in answer["events"]] == list(range(1, answer["version"] + 1))


def test_a_resent_command_gets_its_first_answer_at_once(served: Served, tmp_path: Path) -> None:
    # The README: "re-sending the same command with the same id is safe (applied
    # once)": a frontend whose POST lost its answer sends it again and must get
    # that answer, not a wait for events the engine never writes for a duplicate.
    tokens = create_seats(served, "resend", tmp_path)
    wait_for_state(served, "resend", tokens["red"], lambda b: b["state"]["active"] == "a")
    end_turn = b'{"type":"EndTurn","command_id":"r1","actor":"a"}'
    with httpx.Client(timeout=20) as http:
        first = http.post(url(served, "resend", "commands"), params={"wait": 10}, headers=bearer(tokens["red"]),
                          content=end_turn)
        assert first.status_code == 200 and first.json()["rejected"] is False
        started = time.monotonic()
        again = http.post(url(served, "resend", "commands"), params={"wait": 10}, headers=bearer(tokens["red"]),
                          content=end_turn)
        assert again.status_code == 200, again.text
        assert time.monotonic() - started < 5  # answered from the log, not after the whole wait
        assert again.json()["rejected"] is False and again.json()["events"] == first.json()["events"]
        # A refusal is an answer too, and re-sending it gets the same refusal.
        foreign = b'{"type":"EndTurn","command_id":"r2","actor":"a"}'
        refused = http.post(url(served, "resend", "commands"), params={"wait": 10}, headers=bearer(tokens["blue"]),
                            content=foreign).json()
        refused_again = http.post(url(served, "resend", "commands"), params={"wait": 10}, headers=bearer(tokens["blue"]),
                                  content=foreign).json()
        assert refused["rejected"] is True and refused_again["events"] == refused["events"]
        # The same id with another body is refused, as before, with a refusal of its own.
        other = http.post(url(served, "resend", "commands"), params={"wait": 10}, headers=bearer(tokens["red"]),
                          content=b'{"type":"PassReaction","command_id":"r1","actor":"a","window":1}').json()
        assert other["rejected"] is True
        assert "was already used by seat 'red' for another command" in other["events"][0]["data"]["reason"]
        assert other["events"][0]["n"] > first.json()["events"][-1]["n"]


def test_a_used_id_sent_again_for_a_combatant_not_the_seats_is_refused(served: Served, tmp_path: Path) -> None:
    # The README: "the same id with another body is rejected". Here red re-uses
    # an id for a command for Bo, whom red does not control: an answer of some
    # kind must come, or the frontend waits for nothing.
    tokens = create_seats(served, "reuse", tmp_path)
    wait_for_state(served, "reuse", tokens["red"], lambda b: b["state"]["active"] == "a")
    with httpx.Client(timeout=20) as http:
        first = http.post(url(served, "reuse", "commands"), params={"wait": 10}, headers=bearer(tokens["red"]),
                          content=b'{"type":"EndTurn","command_id":"u1","actor":"a"}')
        assert first.json()["rejected"] is False
        other = http.post(url(served, "reuse", "commands"), params={"wait": 3}, headers=bearer(tokens["red"]),
                          content=b'{"type":"EndTurn","command_id":"u1","actor":"b"}')
        assert other.status_code == 200, other.text
        assert other.json()["rejected"] is True


def test_the_gm_closing_a_window_keeps_the_answers_already_given(served: Served, tmp_path: Path) -> None:
    # Blue answers for Bo and not for Cy; the GM closes the window: Bo's answer
    # counts (it came in time), only Cy timed out, and Blue's request is answered.
    setup = {"system": "toy", "combatants": [
        {"id": "a", "name": "Ann", "side": "red", "position": [0, 0], "policy": "human"},
        {"id": "b", "name": "Bo", "side": "blue", "position": [3, 0], "policy": "human"},
        {"id": "c", "name": "Cy", "side": "blue", "position": [3, 2], "policy": "human"}]}
    (tmp_path / "held.json").write_text(json.dumps(setup))
    created = firelane("create", "held", "--setup", str(tmp_path / "held.json"), "--data-dir", str(served.data_dir),
                       "--json")
    assert created.returncode == 0, created.stderr
    tokens = {seat["seat"]: seat["token"] for seat in json.loads(created.stdout)["seats"]}
    with httpx.Client(timeout=20) as http:
        def send(seat: str, command: dict, wait: int = 10) -> httpx.Response:
            return http.post(url(served, "held", "commands"), params={"wait": wait}, headers=bearer(tokens[seat]),
                             content=json.dumps(command))

        for turn in range(3):  # end Bo's and Cy's turns until it is Ann's
            active = wait_for_state(served, "held", tokens["gm"], lambda b: b["state"]["active"])["state"]["active"]
            if active == "a":
                break
            assert send("blue", {"type": "EndTurn", "command_id": f"e{turn}", "actor": active}).json()["rejected"] is False
        stepped = send("red", {"type": "Step", "command_id": "s1", "actor": "a", "to": [1, 0]}).json()
        window = next(e["data"]["window"] for e in stepped["events"] if e["type"] == "ReactionWindowOpened")
        held = send("blue", {"type": "ClaimReaction", "command_id": "duck-b", "actor": "b", "window": window,
                             "reaction": "duck"}, wait=1)
        assert held.status_code == 202 and held.json()["answered"] is False  # held: Cy has not answered
        closed = send("gm", {"type": "GMSkipTurn", "command_id": "g1", "actor": "gm", "reason": "Cy is away"}).json()
        ordered = next(e["data"] for e in closed["events"] if e["type"] == "ReactionsOrdered")
        assert ordered["timed_out"] == ["c"]
        assert [claim["combatant"] for claim in ordered["order"]] == ["b"]


async def collect(ws, until_version: int) -> list[dict]:
    received = []
    with trio.fail_after(20):
        while not received or received[-1]["n"] < until_version:
            received.append(json.loads(await ws.get_message()))
    return received


async def test_the_websocket_resumes_after_a_reconnect_with_nothing_lost_or_doubled(served: Served, tmp_path: Path) -> None:
    tokens = await trio.to_thread.run_sync(create_seats, served, "ws", tmp_path)
    ws_url = url(served, "ws", "ws").replace("http://", "ws://")
    async with httpx.AsyncClient(timeout=20) as http:
        async def version() -> int:
            return (await http.get(url(served, "ws", "events"), headers=bearer(tokens["gm"]))).json()["version"]

        async def end_turn(command_id: str) -> None:
            body = (await http.get(url(served, "ws", "state"), headers=bearer(tokens["gm"]))).json()
            active = body["state"]["active"]
            seat = "red" if active == "a" else "blue"
            answer = await http.post(url(served, "ws", "commands"), params={"wait": 10}, headers=bearer(tokens[seat]),
                                     content=json.dumps({"type": "EndTurn", "command_id": command_id, "actor": active}))
            assert answer.json()["rejected"] is False

        with trio.fail_after(20):
            while await version() < 4:
                await trio.sleep(0.05)
        first: list[dict] = []
        async with open_websocket_url(f"{ws_url}?token={tokens['spectator']}&after=0") as ws:
            first = await collect(ws, await version())
            await end_turn("t1")
            first += await collect(ws, await version())
        # Offline while the fight goes on...
        for i in range(3):
            await end_turn(f"t{i + 2}")
        async with open_websocket_url(f"{ws_url}?token={tokens['spectator']}&after={first[-1]['n']}") as ws:
            second = await collect(ws, await version())
        everything = (await http.get(url(served, "ws", "events"), headers=bearer(tokens["gm"]))).json()["events"]
    received = first + second
    assert [e["n"] for e in received] == list(range(1, len(received) + 1))
    assert received == everything
    assert [e["type"] for e in received].count("TurnEnded") == 4
    # A bad token is refused before anything is sent.
    with pytest.raises(ConnectionClosed) as closed:
        async with open_websocket_url(f"{ws_url}?token=wrong") as ws:
            await ws.get_message()
    assert closed.value.reason.code == 4403


def _readme_gm_rulings() -> list[dict]:
    """The GMRule commands of the README's block of GM commands, as written."""
    readme = (REPO / "README.md").read_text()
    block = readme.split("The GM seat sends", 1)[1].split("```", 2)[1]
    return [json.loads(line) for line in block.splitlines() if '"type": "GMRule"' in line]


def test_the_readmes_gm_rulings_are_recorded_in_the_table_example(served: Served, tmp_path: Path) -> None:
    """The README's GMRule examples, in the fight they are about (the Bolt & Blade
    table example: kell, the imperium, the cult): the players pass and end turns
    until the GM's options have a pending call, then the GM sends them. The
    README's call names a Dive for Cover window: it is sent with the number of
    the window open here; the rest is as written, the GM's own ruling whole."""
    rulings = _readme_gm_rulings()
    called = [ruling for ruling in rulings if ruling["call"]]
    assert len(called) == 1 and any(ruling["call"] == "" for ruling in rulings), rulings
    created = firelane("create", "readme-gm", "--setup", str(REPO / "docs" / "examples" / "bolt-and-blade-table.json"),
                       "--seed", "readme", "--reproducible-dice", "--data-dir", str(served.data_dir), "--json")
    assert created.returncode == 0, created.stderr
    tokens = {seat["seat"]: seat["token"] for seat in json.loads(created.stdout)["seats"]}
    answered: set[tuple[str, int]] = set()  # a window answer is held until the window closes: answer each once
    sent = 0
    with httpx.Client(timeout=20) as http:
        def options(seat: str) -> dict:
            # {"seat", "version": 0, "options": null} until serve has started the fight
            return http.get(url(served, "readme-gm", "options"), headers=bearer(tokens[seat])).json()

        def pending_calls() -> list[dict]:
            gm = options("gm").get("gm")
            return gm["calls"] if gm else []

        def send(seat: str, command: dict, wait: int | None = 10) -> httpx.Response:
            return http.post(url(served, "readme-gm", "commands"), params={"wait": wait} if wait else {},
                             headers=bearer(tokens[seat]), content=json.dumps(command))

        def a_players_answer() -> tuple[str, dict] | None:
            for seat in ("alice", "bruno"):
                for combatant in options(seat).get("combatants", []):
                    window = combatant["window"]
                    if window and (combatant["combatant"], window["window"]) not in answered:
                        answered.add((combatant["combatant"], window["window"]))
                        return seat, window["pass_command"]
                    if not window and combatant["its_turn"] and combatant["end_turn"]:
                        return seat, combatant["end_turn"]
            return None

        give_up = time.monotonic() + 120
        while not (calls := pending_calls()):
            assert time.monotonic() < give_up, "no GM call in 120 s"
            # One command at a time, then the GM looks again: a window the GM
            # must see stays open until its reactor answers.
            answer = a_players_answer()
            if answer is None:
                time.sleep(0.05)  # not started yet, the cult's AI is playing, or a window waits for its last answer
                continue
            seat, command = answer
            sent += 1
            queued = send(seat, {**command, "command_id": f"{seat}-{sent}"}, wait=None)
            assert queued.status_code == 202, queued.text
        assert re.fullmatch(r"dive_for_cover:\d+", called[0]["call"]), called
        assert [call["id"].split(":")[0] for call in calls] == ["dive_for_cover"], calls
        for ruling in rulings:
            command = {**ruling, "call": calls[0]["id"]} if ruling["call"] else ruling
            reply = send("gm", command).json()
            assert reply["rejected"] is False, reply
            (ruled,) = [event["data"] for event in reply["events"] if event["type"] == "GMRuled"]
            assert (ruled["call"], ruled["ruling"], ruled["reason"]) == (command["call"], ruling["ruling"], ruling["reason"])
        assert pending_calls() == []  # the call is settled
