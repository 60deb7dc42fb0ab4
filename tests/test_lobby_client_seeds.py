"""Client seeds added in the lobby (docs/fairness.md section 3): the seed's
commitment is published while the fight waits, each player seat adds its
seed (over the API with its token, or as its Redis user), and the GM's
Start records them right after EncounterStarted, before the opening
initiative, whose dice mix them in, so the opening is no longer the
server's seed's alone. The audit and the page's verifier agree."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import trio

from firelane.actors.lobby_seeds import LobbySeedRefused, add_lobby_client_seed, lobby_seed_key
from firelane.actors.runtime import default_policies, run_encounter
from firelane.actors.sequencer import load_seed
from firelane.engine.dice import commit_seed, derive_face, dice_key
from firelane.engine.registry import get_system
from firelane.events import codec
from firelane.events.schemas import ClientSeedAdded, EncounterStarted, InitiativeRolled, SeatSetup
from firelane.projections.audit import iter_rolls, verify
from firelane.actors.fairness import raw_entry
from firelane.redisio import RedisError
from tests.api_contract import api_contract  # noqa: F401 - the fixture: every exchange checked against /api/openapi.json
from tests.test_trust_boundary import seat_client
from tests.test_workshop_api import CAMPAIGN, Shop, humans, new_draft, shop  # noqa: F401 (the fixture)

NODE = shutil.which("node")
pytestmark = pytest.mark.usefixtures("api_contract")


async def test_two_players_add_seeds_in_the_lobby_and_the_opening_initiative_mixes_them_in(
        shop: Shop, redis_url: str, tmp_path: Path) -> None:  # noqa: F811
    event_log = shop.api.event_log(CAMPAIGN)
    base = f"/api/campaigns/{CAMPAIGN}/encounters/raid"
    async with shop.browser() as http:
        await new_draft(http, shop, humans())
        lobby = (await http.post(shop.url("/drafts/raid/lobby"), json={"version": 1})).json()
        tokens = {s["id"]: s["link"].partition("#token=")[2] for s in lobby["seats"]}

        def as_seat(seat: str) -> dict[str, str]:
            return {"Authorization": f"Bearer {tokens[seat]}"}

        async def add(seat: str, text: str, actor: str | None = None):
            return await http.post(f"{base}/commands", headers=as_seat(seat), content=json.dumps(
                {"type": "AddClientSeed", "command_id": f"seed-{seat}", "actor": actor or seat, "client_seed": text}))

        # The commitment is published before any seat may contribute.
        seat_view = (await http.get(f"{base}/seat", headers=as_seat("rangers"))).json()
        assert seat_view["lobby"] is True and len(seat_view["seed_commitment"]) == 64
        offered = (await http.get(f"{base}/options", headers=as_seat("rangers"))).json()
        assert offered["client_seed"] == {"command": {"type": "AddClientSeed", "actor": "rangers", "client_seed": ""},
                                          "max_chars": 64}
        for seat in ("gm", "spectator"):
            assert (await http.get(f"{base}/options", headers=as_seat(seat))).json()["client_seed"] is None

        added = await add("rangers", "rangers' own")
        assert added.status_code == 200 and added.json() == {"seat": "rangers", "lobby": True, "client_seed": "rangers' own"}
        assert (await http.get(f"{base}/options", headers=as_seat("rangers"))).json()["client_seed"] is None
        refusals = [await add("rangers", "again"), await add("gm", "the GM's"), await add("spectator", "watching"),
                    await add("raiders", "not ours", actor="rangers"), await add("raiders", "x" * 65)]
        assert [(r.status_code, r.json()) for r in refusals] == [
            (409, {"error": "this seat has added its client seed already (one each)"}),
            (409, {"error": "only a player seat adds a client seed, not the gm's seat"}),
            (403, {"error": "a spectator's seat can watch, not act"}),
            (403, {"error": "a client seed is the seat's own: send it with actor 'raiders'"}),
            (409, {"error": "a client seed is 1 to 64 printable characters"}),
        ]
        early = await http.post(f"{base}/commands", headers=as_seat("rangers"), content=json.dumps(
            {"type": "EndTurn", "command_id": "early", "actor": "rg-ives"}))
        assert early.status_code == 409  # nothing else is taken in the lobby

        # The raiders add theirs as their Redis user, into their own lobby stream only.
        raiders = await seat_client(redis_url, CAMPAIGN, "raid", "raiders", tokens["raiders"])
        try:
            with pytest.raises(RedisError, match="NOPERM"):
                await raiders.execute("XADD", lobby_seed_key(event_log, "raid", "rangers"), "*", "client_seed", "theirs")
            await raiders.execute("XADD", lobby_seed_key(event_log, "raid", "raiders"), "*", "client_seed", "dé 🎲 raiders")
        finally:
            await raiders.aclose()
        assert await event_log.version("raid") == 0  # nothing rolled yet

        started = await http.post(shop.url("/encounters/raid/start"))
        assert started.json() == {"encounter": "raid", "state": "running"}
        late = SeatSetup(id="rangers", role="player")
        with pytest.raises(LobbySeedRefused, match="^the fight has started: the lobby takes no more client seeds"):
            await add_lobby_client_seed(event_log, "raid", late, "too late")
        system = get_system("d100-zones")
        policies = default_policies(system, {c["id"]: c["policy"] for c in humans()["combatants"]})
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: run_encounter(event_log, "raid", system, policies, lease_wait_s=0.3))
            with trio.fail_after(20):
                while not any(s.type == "InitiativeRolled" for s in await event_log.read("raid")):
                    await trio.sleep(0.05)
            # After the start, a second seed from a seat that added one in the lobby is refused in the log.
            again = await add("rangers", "once more")
            assert again.status_code == 202
            ended = await http.post(f"{base}/commands?wait=10", headers=as_seat("gm"), content=json.dumps(
                {"type": "EndEncounter", "command_id": "end", "actor": "gm"}))
            assert ended.status_code == 200, ended.text
            with trio.fail_after(20):
                while not any(s.type == "SeedRevealed" for s in await event_log.read("raid")):
                    await trio.sleep(0.05)
            nursery.cancel_scope.cancel()
        assert (await http.get(f"{base}/options", headers=as_seat("rangers"))).json()["client_seed"] is None

    stored = await event_log.read("raid")
    events = [codec.decode_event(s) for s in stored]
    seed = await load_seed(event_log, "raid")
    assert isinstance(events[0], EncounterStarted) and events[0].seed_commitment == seat_view["seed_commitment"] == commit_seed(seed)
    # The start's own batch: the commitment, then both contributions, then the opening dice.
    opening = [(s.type, e) for s, e in zip(stored, events) if s.command_id == stored[0].command_id]
    contributions = [(e.seat, e.client_seed) for _t, e in opening if isinstance(e, ClientSeedAdded)]
    assert contributions == [("rangers", "rangers' own"), ("raiders", "dé 🎲 raiders")]
    assert [t for t, _e in opening][:3] == ["EncounterStarted", "ClientSeedAdded", "ClientSeedAdded"]
    initiative = [die for _t, e in opening if isinstance(e, InitiativeRolled) for _f, roll in iter_rolls(e) for die in roll.dice]
    assert len(initiative) >= 4
    mixed = dice_key(seed, contributions)
    assert [d.face for d in initiative] == [derive_face(mixed, d.at, d.k, d.sides) for d in initiative]
    assert [d.face for d in initiative] != [derive_face(seed, d.at, d.k, d.sides) for d in initiative]
    refused = [e.reason for e in events if type(e).__name__ == "CommandRejected"]
    assert refused == ["this seat has added its client seed already (one each)"]

    report = verify(stored, events, campaign=CAMPAIGN)
    assert report.ok, report.problems
    assert [(seat, text) for _v, seat, text in report.client_seeds] == contributions
    if NODE is None and not __import__("os").environ.get("CI"):
        pytest.skip("node is needed to run the page's verifier")
    from tests.test_verifier_node import run_node
    public_key = events[0].log_public_key
    (summary,) = run_node([{"campaign": CAMPAIGN, "encounter": "raid", "publishedKey": public_key,
                            "entries": [raw_entry(s.entry_id, s) for s in stored]}], tmp_path)
    assert summary["ok"], summary["problems"][:5]
    assert (summary["dice"], summary["rolls"]) == (report.dice, report.rolls)
    assert [(c["seat"], c["clientSeed"]) for c in summary["clientSeeds"]] == contributions


def test_firelane_submit_adds_lobby_seeds_and_audit_verify_checks_the_opening_with_them(redis_url: str, tmp_path: Path) -> None:
    """From the terminal: `firelane submit` keeps each player seat's seed while
    the fight waits (refusing a second, the GM's, and anything else), `firelane
    start` and `run` play it, and `audit --verify` recomputes the opening
    initiative with both seeds."""
    import msgspec

    from firelane.engine.registry import demo_setup
    from tests.cli_helpers import firelane

    setup = msgspec.to_builtins(demo_setup("bolt-and-blade"))
    setup["seats"] = [{"id": "p1", "role": "player"}, {"id": "p2", "role": "player"}]
    path = tmp_path / "setup.json"
    path.write_text(json.dumps(setup))
    store = ("--redis", redis_url)
    assert firelane("create", "cli-lobby", "--setup", str(path), "--lobby", *store).returncode == 0

    def submit(actor: str, text: str, kind: str = "AddClientSeed"):
        return firelane("submit", "cli-lobby", json.dumps({"type": kind, "command_id": "s", "actor": actor,
                                                            "client_seed": text}), *store)

    kept = submit("p1", "p1's words")
    assert kept.returncode == 0 and kept.stdout.startswith("client seed of seat p1 kept for the start: \"p1's words\"")
    assert submit("p2", "p2 🎲").returncode == 0
    for refused, line in [
        (submit("p1", "again"), "firelane: error: this seat has added its client seed already (one each)"),
        (submit("gm", "mine"), "firelane: error: only a player seat adds a client seed, not the gm's seat"),
        (firelane("submit", "cli-lobby", json.dumps({"type": "EndEncounter", "command_id": "e", "actor": "gm"}), *store),
         "firelane: error: encounter 'cli-lobby' waits in its lobby: until firelane start cli-lobby, a player seat may "
         "only add its client seed (AddClientSeed)"),
    ]:
        assert refused.returncode == 2 and refused.stderr.strip().splitlines() == [line], refused.stderr
    assert firelane("start", "cli-lobby", *store).returncode == 0
    late = submit("p1", "too late")
    assert late.returncode in (0, 2, 3) and "kept for the start" not in late.stdout  # a command now, not a lobby seed
    played = firelane("run", "cli-lobby", *store, "--quiet")
    assert played.returncode == 0, played.stderr
    audit = firelane("audit", "cli-lobby", "--verify", *store)
    assert audit.returncode == 0, audit.stderr
    assert "v2 client seed added by seat p1: \"p1's words\"" in audit.stdout
    assert "v3 client seed added by seat p2: 'p2 🎲'" in audit.stdout
    assert audit.stdout.strip().splitlines()[-1].startswith("verified: seed matches its commitment")


def test_the_outsiders_verifier_checks_the_specs_lobby_fight_as_the_audit_does(tmp_path: Path) -> None:
    """docs/examples/verify_fight.py, written from docs/fairness.md alone, on
    the spec's lobby fight (its two lobby seeds recorded by the start, before
    the opening initiative): valid, with the same dice and seeds as the audit."""
    from firelane.events.envelope import StoredEvent
    from tests.test_fairness_spec import vectors
    from tests.test_outsider_verifier import run_verifier

    (vector,) = [v for v in vectors() if v["kind"] == "lobby-fight"]
    entries = [{"id": f"1-{e['n']}", **e} for e in vector["entries"]]
    stored = [StoredEvent(entry_id=e["id"], version=e["n"], encounter=vector["encounter"], type=e["t"], schema=e["s"],
                          data=e["d"].encode(), command_id=e["c"], causation=e["k"], inbox_cursor=e["q"], signature=e["g"])
              for e in entries]
    report = verify(stored, campaign=vector["campaign"])
    status, summary = run_verifier({"campaign": vector["campaign"], "encounter": vector["encounter"],
                                    "version": entries[-1]["n"], "entries": entries,
                                    "public_key": vector["public_key"]}, tmp_path)
    assert report.ok and status == 0 and summary["ok"], summary["problems"]
    assert (summary["rolls"], summary["dice"]) == (report.rolls, report.dice) == (2, 2)
    assert summary["client_seeds"] == [list(seed) for seed in report.client_seeds] == [
        [2, "alice", "alice's own"], [3, "bob", "dé 🎲 42"]]
