"""A GM's rewind leaves the branch it abandons in the log, marked as undone
everywhere: in the engine's state, on every event of the API (``stands``,
``undone_by``, a rewind's ``undoes``), on the page's narration lines, in
`firelane replay` and in `firelane audit` (which lists undone rolls apart).
A rewind may only go to a version that stands. A GM's refused command is
narrated to the GM alone."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from trio_websocket import open_websocket_url

from firelane.engine.branches import Branches, undo, undone_by
from firelane.engine.core import Rejected
from firelane.engine.dice import FixedDice
from firelane.engine.registry import register_system
from firelane.events.schemas import (
    CombatantSetup,
    EncounterSetup,
    EndTurn,
    RewindEncounter,
    StartEncounter,
)
from firelane.projections.replay import undone_in
from tests.cli_helpers import Served, firelane, serve_for_module
from tests.toy_system import TOY, Strike

register_system(TOY, "tests.toy_system")


# -- the spans, pure ------------------------------------------------------------------


def test_a_rewind_undoes_what_still_stood_after_its_target_and_an_undone_version_stays_undone() -> None:
    branches = Branches()
    assert branches.rewound(93, 76) == [(77, 92, 93)]
    # A later rewind further back undoes what stood since (the first rewind too), not 77-92 again.
    assert branches.rewound(120, 50) == [(51, 76, 120), (93, 119, 120)]
    assert branches.spans == [(51, 76, 120), (77, 92, 93), (93, 119, 120)]
    assert [undone_by(branches.spans, v) for v in (50, 51, 76, 77, 92, 93, 119, 120, 121)] == [
        None, 120, 120, 93, 93, 120, 120, None, None]
    # A rewind to the version just before it undoes nothing.
    assert undo(branches.spans, 130, 131) == []


def _started_toy() -> tuple[Any, list, list[str]]:
    """A toy fight just started (Ann's turn), with its events and their command ids."""
    setup = EncounterSetup(system="toy", settings={"hit_on": 1}, combatants=[
        CombatantSetup(id="a", name="Ann", side="red", position=(0, 0), sheet={"speed": 9}, policy="human"),
        CombatantSetup(id="b", name="Bo", side="blue", position=(3, 0), sheet={"hp": 1}, policy="human"),
        CombatantSetup(id="c", name="Cy", side="blue", position=(5, 0), policy="human")])
    state, events, ids = TOY.initial_state(), [], []
    _run(state, events, StartEncounter(command_id="s", actor="sequencer", setup=setup, seed_commitment="x"), ids, (1, 1, 1))
    return state, events, ids


def _run(state: Any, events: list, command: Any, ids: list[str], faces=(6,)) -> None:
    for event in TOY.decide(state, command, FixedDice(list(faces))):
        TOY.evolve(state, event)
        events.append(event)
        ids.append(command.command_id)


def _rewind(state: Any, events: list, ids: list[str], to_version: int, command_id: str) -> None:
    from firelane.engine.core import resting_points

    past = TOY.initial_state()
    for event in events[:to_version]:
        TOY.evolve(past, event)
    restore = TOY.rewind_to(state, RewindEncounter(command_id=command_id, actor="gm", to_version=to_version, reason="oops"),
                            past, resting_points(ids))
    _run(state, events, restore, ids)


def test_the_state_keeps_what_each_rewind_undid_and_a_rewind_may_not_go_to_an_undone_version() -> None:
    from firelane.engine.core import resting_points

    state, events, ids = _started_toy()
    assert state.active == "a"
    before_strike = state.version
    _run(state, events, Strike(command_id="k1", actor="a", target="b"), ids)
    assert state.combatants["b"].out_of_fight
    struck = state.version
    _run(state, events, EndTurn(command_id="e1", actor="a"), ids)
    _rewind(state, events, ids, before_strike, "r1")
    rewind_at = state.version
    assert not state.combatants["b"].out_of_fight and state.active == "a"
    assert state.undone == [(before_strike + 1, rewind_at - 1, rewind_at)]
    assert undone_in(events) == state.undone
    # A version of the undone branch (between two commands: after the strike) is no target any more.
    with pytest.raises(Rejected) as refused:
        TOY.check_rewind(state, RewindEncounter(command_id="r2", actor="gm", to_version=struck, reason="x"),
                         resting_points(ids))
    assert refused.value.reason == (f"version {struck} was undone by the rewind at version {rewind_at}: rewind to a "
                                    f"version that stands, such as {before_strike}")
    assert struck not in TOY.rewind_targets(state, resting_points(ids))
    assert before_strike in TOY.rewind_targets(state, resting_points(ids))
    # The rewind's own version stands: a rewind may go there (and undoes only what stood after it).
    _run(state, events, Strike(command_id="k2", actor="a", target="c"), ids)
    _rewind(state, events, ids, rewind_at, "r3")
    assert state.undone == [(before_strike + 1, rewind_at - 1, rewind_at), (rewind_at + 1, state.version - 1, state.version)]
    assert state.combatants["c"].hp == 2


# -- live: the API, the page's lines, the CLI -----------------------------------------

SETUP = {"system": "toy", "settings": {"hit_on": 1}, "combatants": [
    {"id": "a", "name": "Ann", "side": "red", "position": [0, 0], "policy": "human", "sheet": {"speed": 9}},
    {"id": "b", "name": "Bo", "side": "blue", "position": [3, 0], "policy": "human", "sheet": {"hp": 1}},
    {"id": "c", "name": "Cy", "side": "blue", "position": [5, 0], "policy": "human"}]}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serve_for_module(tmp_path_factory, "undone")


class Table:
    """One encounter of `SETUP` on the served API, with every seat's token."""

    def __init__(self, served: Served, encounter: str, tmp_path: Path) -> None:
        setup = tmp_path / f"{encounter}.json"
        setup.write_text(json.dumps(SETUP))
        result = firelane("create", encounter, "--setup", str(setup), "--data-dir", str(served.data_dir), "--json")
        assert result.returncode == 0, result.stderr
        self.tokens = {seat["seat"]: seat["token"] for seat in json.loads(result.stdout)["seats"]}
        self.served, self.encounter = served, encounter
        self.base = f"{served.api}/api/campaigns/default/encounters/{encounter}"
        self.http = httpx.Client(timeout=20)

    def get(self, what: str, seat: str = "spectator", **params: Any) -> Any:
        answer = self.http.get(f"{self.base}/{what}", params=params, headers={"Authorization": f"Bearer {self.tokens[seat]}"})
        assert answer.status_code == 200, answer.text
        return answer.json()

    def send(self, seat: str, command: dict[str, Any]) -> dict[str, Any]:
        answer = self.http.post(f"{self.base}/commands", params={"wait": 10}, content=json.dumps(command),
                                headers={"Authorization": f"Bearer {self.tokens[seat]}"})
        assert answer.status_code == 200, answer.text
        return answer.json()

    def wait(self, predicate, timeout: float = 30) -> dict[str, Any]:
        give_up = time.monotonic() + timeout
        while time.monotonic() < give_up:
            body = self.get("state")
            if body["state"] is not None and predicate(body["state"]):
                return body
            time.sleep(0.05)
        raise AssertionError("the state never came")


@pytest.fixture(scope="module")
def rewound(served: Served, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Ann strikes Bo down and ends her turn; the GM rewinds to before the
    strike; the GM then asks for a rewind into the undone branch (refused) and
    an adjustment of a field no one has (refused)."""
    table = Table(served, "rewound", tmp_path_factory.mktemp("rw"))
    start = table.wait(lambda s: s["active"] == "a")["version"]
    strike = table.send("red", {"type": "Strike", "command_id": "k1", "actor": "a", "target": "b"})
    assert not strike["rejected"] and [e["type"] for e in strike["events"]][-1] == "CombatantDown"
    down_at = strike["events"][-1]["n"]
    assert not table.send("red", {"type": "EndTurn", "command_id": "e1", "actor": "a"})["rejected"]
    rewind = table.send("gm", {"type": "RewindEncounter", "command_id": "g1", "actor": "gm", "to_version": start,
                               "reason": "Bo was behind the crates"})
    assert not rewind["rejected"], rewind
    rewind_at = rewind["events"][0]["n"]
    refused = table.send("gm", {"type": "RewindEncounter", "command_id": "g2", "actor": "gm", "to_version": down_at,
                                "reason": "back to the strike"})
    assert refused["rejected"] and f"was undone by the rewind at version {rewind_at}" in refused["events"][0]["data"]["reason"]
    bad = table.send("gm", {"type": "GMAdjust", "command_id": "g3", "actor": "gm", "combatant": "b",
                            "changes": {"luck": 3}, "reason": "test"})
    assert bad["rejected"]
    again = table.send("red", {"type": "Strike", "command_id": "k2", "actor": "a", "target": "c"})
    assert not again["rejected"]
    return {"table": table, "start": start, "down_at": down_at, "rewind_at": rewind_at, "struck_again": again["events"][0]["n"],
            "refusals": [refused["events"][0]["n"], bad["events"][0]["n"]]}


def test_every_event_of_the_api_says_whether_it_stands_and_a_rewind_names_what_it_undid(rewound: dict[str, Any]) -> None:
    table, start, rewind_at = rewound["table"], rewound["start"], rewound["rewind_at"]
    events = table.get("events", after=0)["events"]
    for event in events:
        undone = start < event["n"] < rewind_at
        assert event["stands"] is (not undone), event
        assert event.get("undone_by") == (rewind_at if undone else None), event
    down = next(e for e in events if e["type"] == "CombatantDown")
    assert down["data"]["combatant"] == "b" and down["undone_by"] == rewind_at
    rewind = next(e for e in events if e["type"] == "EncounterRewound")
    assert rewind["n"] == rewind_at and rewind["stands"] is True and rewind["undoes"] == [[start + 1, rewind_at - 1]]
    # The state that stands: Bo is up again.
    assert table.get("state")["state"]["combatants"]["b"]["out_of_fight"] is False

    async def over_the_socket() -> list[dict[str, Any]]:
        received: list[dict[str, Any]] = []
        ws = f"{table.base}/ws".replace("http://", "ws://")
        async with open_websocket_url(f"{ws}?token={table.tokens['spectator']}&after=0") as socket:
            with trio.fail_after(20):
                while not received or received[-1]["n"] < events[-1]["n"]:
                    received.append(json.loads(await socket.get_message()))
        return received

    assert trio.run(over_the_socket) == events


def test_the_pages_lines_mark_the_undone_branch_and_the_gms_refusals_are_the_gms_alone(rewound: dict[str, Any]) -> None:
    table, start, rewind_at, refusals = rewound["table"], rewound["start"], rewound["rewind_at"], rewound["refusals"]
    for seat in ("spectator", "red", "gm"):
        view = table.get("view", seat=seat, after=0)
        lines = {line["n"]: line for line in view["lines"]}
        for n, line in lines.items():
            undone = start < n < rewind_at
            assert line["stands"] is (not undone) and line.get("undone_by") == (rewind_at if undone else None), (seat, line)
        assert lines[rewind_at]["undoes"] == [[start + 1, rewind_at - 1]]
        assert "events " + f"{start + 1}–{rewind_at - 1} undone" in "".join(t for t, _c in lines[rewind_at]["segs"])
        assert view["undone"] == [[start + 1, rewind_at - 1, rewind_at]]
        assert view["rewinds"][str(rewind_at)]["to"] == start
        assert view["rewinds"][str(rewind_at)]["reason"] == "Bo was behind the crates"
        # The GM's refused commands: in the GM's narration only.
        shown = [n for n in refusals if n in lines]
        assert shown == (refusals if seat == "gm" else []), seat
        # Older lines (GET …/lines) are marked the same way.
        older = {line["n"]: line for line in table.get("lines", seat=seat, before=rewind_at + 1, limit=1000)["lines"]}
        assert older[rewound["down_at"]]["undone_by"] == rewind_at and older[start]["stands"] is True
    # The replay at a version of the undone branch says so, and shows that branch's state.
    at_down = table.get("view", at=rewound["down_at"], lines=0)
    assert at_down["at_undone_by"] == rewind_at and at_down["state"]["combatants"]["b"]["out_of_fight"] is True
    now = table.get("view", lines=0)
    assert now["at_undone_by"] is None and now["state"]["combatants"]["b"]["out_of_fight"] is False
    # Every line after the start is a place a rewind could land, but for those inside a command's events.
    gm_lines = {line["n"]: line for line in table.get("view", seat="gm", after=0)["lines"]}
    assert gm_lines[start + 1]["batch_start"] is True and gm_lines[start + 2]["batch_start"] is False


def test_replay_marks_the_undone_lines_and_audit_lists_their_rolls_apart(served: Served, rewound: dict[str, Any]) -> None:
    start, rewind_at, down_at = rewound["start"], rewound["rewind_at"], rewound["down_at"]
    replay = firelane("replay", "rewound", "--data-dir", str(served.data_dir))
    assert replay.returncode == 0, replay.stderr
    lines = {int(line.split()[0]): line for line in replay.stdout.splitlines() if line.strip()[:1].isdigit()}
    assert f"[undone at {rewind_at}]" in lines[down_at] and "Bo is down" in lines[down_at]
    assert "[undone" not in lines[start] and "[undone" not in lines[rewind_at]
    assert f"events {start + 1}–{rewind_at - 1} undone" in lines[rewind_at]
    assert f"undone by the GM's rewinds: {start + 1}-{rewind_at - 1} (rewind at {rewind_at})" in replay.stdout
    at = firelane("replay", "rewound", "--at", str(down_at), "--state-only", "--data-dir", str(served.data_dir))
    assert f"(version {down_at} is on a branch the GM's rewind at version {rewind_at} undid" in at.stdout, at.stdout
    audit = firelane("audit", "rewound", "--data-dir", str(served.data_dir))
    assert audit.returncode == 0, audit.stderr
    standing, _, apart = audit.stdout.partition("undone by the GM's rewinds")
    strike = next(line for line in apart.splitlines() if "AttackResolved" in line)
    assert strike.strip().startswith(f"v{start + 1} AttackResolved.roll [undone by the rewind at v{rewind_at}]")
    assert f"events {start + 1}-{rewind_at - 1}, undone by the rewind at v{rewind_at}:" in apart
    assert [line.split()[0] for line in standing.splitlines() if "AttackResolved" in line] == [f"v{rewound['struck_again']}"]
    as_json = json.loads(firelane("audit", "rewound", "--json", "--data-dir", str(served.data_dir)).stdout)
    assert [(e["version"], e["undone_by"]) for e in as_json] == [(start + 1, rewind_at), (rewound["struck_again"], None)]


def test_a_client_following_live_learns_what_a_rewind_undoes_from_the_rewind_itself(served: Served, tmp_path: Path) -> None:
    table = Table(served, "live-rewind", tmp_path)
    start = table.wait(lambda s: s["active"] == "a")["version"]
    ws = f"{table.base}/ws".replace("http://", "ws://")

    async def follow() -> list[dict[str, Any]]:
        received: list[dict[str, Any]] = []
        async with open_websocket_url(f"{ws}?token={table.tokens['red']}&after={start}") as socket:
            strike = await trio.to_thread.run_sync(table.send, "red", {"type": "Strike", "command_id": "k1", "actor": "a", "target": "b"})
            assert not strike["rejected"]
            rewind = await trio.to_thread.run_sync(table.send, "gm", {
                "type": "RewindEncounter", "command_id": "g1", "actor": "gm", "to_version": start, "reason": "no"})
            assert not rewind["rejected"]
            with trio.fail_after(20):
                while not received or received[-1]["type"] != "EncounterRewound":
                    received.append(json.loads(await socket.get_message()))
        return received

    received = trio.run(follow)
    # Sent as they happened, the strike's events stood; the rewind says which it undid.
    *struck, rewind = received
    assert struck and all(e["stands"] is True and "undone_by" not in e for e in struck)
    assert rewind["undoes"] == [[start + 1, rewind["n"] - 1]] == [[struck[0]["n"], struck[-1]["n"]]]
    # Read again now, the same events say they were undone, and by which rewind.
    again = table.get("events", after=start)["events"]
    assert [(e["n"], e.get("undone_by")) for e in again[:-1]] == [(e["n"], rewind["n"]) for e in struck]


# -- the stored log: undone spans from a snapshot and the rewinds after it ----------


async def test_the_undone_spans_of_a_stored_log_come_from_its_snapshot_and_the_rewinds_after_it(redis_url: str) -> None:
    """`firelane replay` and `audit` learn what was undone before printing a
    line: from the engine's snapshot (its state keeps the spans) and a pass
    over the rest of the log, or over all of it without a snapshot."""
    from firelane.events import codec
    from firelane.events.log import Batch, EventLog
    from firelane.projections.replay import undone_spans
    from firelane.projections.snapshots import save_snapshot, snapshot_key
    from firelane.redisio import connect

    state, events, ids = _started_toy()
    for round_ in range(3):  # strike, end the turn, rewind to before the strike: three times over
        before = state.version
        _run(state, events, Strike(command_id=f"k{round_}", actor="a", target="c"), ids)
        _run(state, events, EndTurn(command_id=f"e{round_}", actor="a"), ids)
        _rewind(state, events, ids, before, f"r{round_}")
    assert len(state.undone) == 3 and undone_in(events) == state.undone
    client = await connect(redis_url)
    try:
        log = EventLog(client, "spans")
        entries = [codec.encode_event(e) for e in events]
        written = 0
        for command_id in dict.fromkeys(ids):  # one batch per command, in order
            batch = [entry for entry, cid in zip(entries, ids) if cid == command_id]
            await log.append_batches("enc", written, [Batch(entries=batch, command_id=command_id)])
            written += len(batch)
        assert await undone_spans(log, "enc") == state.undone  # no snapshot: the whole log
        # A snapshot after the second rewind: its spans, then the third rewind from the tail.
        second = [i for i, e in enumerate(events, start=1) if type(e).__name__ == "EncounterRewound"][1]
        at = TOY.initial_state()
        at.encounter = "enc"
        for event in events[:second]:
            TOY.evolve(at, event)
        stored = await log.read("enc")
        await save_snapshot(log, snapshot_key("spans", "enc"), TOY, at, stored[second - 1].entry_id)
        at.encounter = "enc"  # what the engine's state of this encounter says (the pure start above names none)
        assert len(at.undone) == 2
        assert await undone_spans(log, "enc") == state.undone
        # The snapshot is what is read before its entry (the engine's own, checked against the log):
        # a span only it holds shows, so the log before it was not read again.
        at.undone = [(1, 1, 2), *at.undone]
        await save_snapshot(log, snapshot_key("spans", "enc"), TOY, at, stored[second - 1].entry_id)
        assert await undone_spans(log, "enc") == [(1, 1, 2), *state.undone]
    finally:
        await client.aclose()
