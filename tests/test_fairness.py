"""Anyone can check a fight (docs/fairness.md): the log's public-key
signatures name every entry altered, inserted, removed or reordered; player
seats add client seeds that the dice mix in, so the dice after one cannot be
told from the server's seed alone; the spec's test vectors are the code's."""

from __future__ import annotations

import msgspec
import pytest
import trio

from firelane.actors.policies import AIPolicy
from firelane.actors.runtime import run_encounter
from firelane.actors.sequencer import create_encounter
from firelane.engine.dice import SeededDice, commit_seed, derive_face, dice_key
from firelane.engine.registry import register_system
from firelane.engine.simulate import run_headless
from firelane.events import codec
from firelane.events.envelope import StoredEvent
from firelane.events.log import EventLog
from firelane.events.log_signing import GroupCheck, LogSigner
from firelane.events.public_signing import SigningKey
from firelane.events.schemas import (AddClientSeed, ClientSeedAdded, CombatantSetup, EncounterSetup, EncounterStarted,
                                     EndEncounter, EndTurn, RewindEncounter, SeatSetup)
from firelane.projections.audit import iter_rolls, verify
from firelane.redisio import connect
from tests.test_runtime import wait_for_state
from tests.toy_system import TOY, Strike

register_system(TOY, "tests.toy_system")

SERVER_KEY = b"f" * 32
SEED = bytes(range(32))


def table_setup() -> EncounterSetup:
    """Ann (red) is played by seat alice; Bo and Cy (blue) by the engine's AI; bob is a player with no one."""
    return EncounterSetup(
        system="toy", settings={"reaction_deadline_ms": 50},  # Ann's reactions time out: nobody waits on them
        combatants=[
            CombatantSetup(id="a", name="Ann", side="red", position=(0, 0), sheet={"speed": 9}, policy="human"),
            CombatantSetup(id="b", name="Bo", side="blue", position=(3, 0), sheet={"speed": 0}),
            CombatantSetup(id="c", name="Cy", side="blue", position=(4, 0), sheet={"speed": 1}),
        ],
        seats=[SeatSetup(id="alice", combatants=["a"]), SeatSetup(id="bob")],
    )


@pytest.fixture
async def signed_log(redis_url: str):
    client = await connect(redis_url)
    try:
        yield EventLog(client, "fair", server_key=SERVER_KEY, signer=LogSigner(SigningKey.generate()))
    finally:
        await client.aclose()


async def send(event_log: EventLog, encounter: str, seat: str, command) -> None:
    await event_log.submit(encounter, codec.encode_command(command), seat=seat)


async def play_with_client_seeds(event_log: EventLog, encounter: str) -> list[StoredEvent]:
    """Alice strikes, adds a client seed on her first turn (bob, the GM and
    a second try are refused), strikes on her next turns, then the GM ends
    the fight."""
    await create_encounter(event_log, encounter, table_setup(), SEED)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_encounter, event_log, encounter, TOY, {c: AIPolicy(TOY) for c in ("b", "c")})
        await wait_for_state(event_log, encounter, lambda s: s.active == "a")
        await send(event_log, encounter, "alice", Strike(command_id="x0", actor="a", target="c"))
        await send(event_log, encounter, "gm", AddClientSeed(command_id="s0", actor="gm", client_seed="gm's"))
        await send(event_log, encounter, "alice", AddClientSeed(command_id="s1", actor="bob", client_seed="not mine"))
        await send(event_log, encounter, "alice", AddClientSeed(command_id="s2", actor="alice", client_seed="alice's own"))
        await send(event_log, encounter, "alice", AddClientSeed(command_id="s3", actor="alice", client_seed="again"))
        await wait_for_state(event_log, encounter, lambda s: s.client_seeds == [("alice", "alice's own")])
        await send(event_log, encounter, "alice", EndTurn(command_id="e1", actor="a"))
        for turn in range(2, 5):
            state = await wait_for_state(event_log, encounter, lambda s: s.ended or (s.active == "a" and s.round == turn))
            if state.ended:
                break
            foe = next(c for c in ("b", "c") if not state.combatants[c].out_of_fight)
            await send(event_log, encounter, "alice", Strike(command_id=f"x{turn}", actor="a", target=foe))
            await send(event_log, encounter, "alice", EndTurn(command_id=f"e{turn}", actor="a"))
        else:
            await send(event_log, encounter, "gm", EndEncounter(command_id="end", actor="gm"))
    return await event_log.read(encounter)


async def test_a_player_seat_adds_a_client_seed_and_every_later_die_mixes_it_in(signed_log: EventLog) -> None:
    stored = await play_with_client_seeds(signed_log, "mixed")
    events = [codec.decode_event(s) for s in stored]
    refusals = [e.reason for e in events if type(e).__name__ == "CommandRejected"]
    assert any("player seat" in r for r in refusals)  # the GM's seat
    assert any("send it with actor 'alice'" in r for r in refusals)  # alice naming bob
    assert any("added its client seed already" in r for r in refusals)
    added = [(s.version, e) for s, e in zip(stored, events) if isinstance(e, ClientSeedAdded)]
    assert [(e.seat, e.client_seed) for _v, e in added] == [("alice", "alice's own")]
    at = added[0][0]
    mixed = dice_key(SEED, [("alice", "alice's own")])
    dice_after = [die for s, e in zip(stored, events) if s.version > at for _f, roll in iter_rolls(e) for die in roll.dice]
    assert len(dice_after) >= 3  # Ann's strikes, and the AI's
    assert all(die.face == derive_face(mixed, die.at, die.k, die.sides) for die in dice_after)
    # From the server's seed alone they cannot be told: the same positions give other faces.
    from_seed_alone = [derive_face(SEED, die.at, die.k, die.sides) for die in dice_after]
    assert from_seed_alone != [die.face for die in dice_after]
    dice_before = [die for s, e in zip(stored, events) if s.version < at for _f, roll in iter_rolls(e) for die in roll.dice]
    assert dice_before and all(die.face == derive_face(SEED, die.at, die.k, die.sides) for die in dice_before)
    report = verify(stored, events, campaign="fair")
    assert report.ok, report.problems
    assert report.client_seeds == [(at, "alice", "alice's own")]
    assert report.signatures >= 1 and report.signed_through == stored[-1].version and not report.unsigned


async def play_with_a_rewind(event_log: EventLog, encounter: str) -> list[StoredEvent]:
    """Alice adds a client seed and strikes with it next round; the GM
    rewinds to before her seed; the fight goes on, and the GM ends it."""
    await create_encounter(event_log, encounter, table_setup(), SEED)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_encounter, event_log, encounter, TOY, {c: AIPolicy(TOY) for c in ("b", "c")})
        await wait_for_state(event_log, encounter, lambda s: s.active == "a")
        await send(event_log, encounter, "alice", AddClientSeed(command_id="seed", actor="alice", client_seed="x"))
        added = await wait_for_state(event_log, encounter, lambda s: bool(s.client_seeds))
        await send(event_log, encounter, "alice", EndTurn(command_id="e1", actor="a"))
        turn = await wait_for_state(event_log, encounter, lambda s: s.active == "a" and s.round == 2)
        await send(event_log, encounter, "alice", Strike(command_id="x2", actor="a", target="c"))
        await wait_for_state(event_log, encounter, lambda s: s.version > turn.version)
        await send(event_log, encounter, "gm", RewindEncounter(command_id="back", actor="gm", to_version=added.version - 1,
                                                               reason="before the seed"))
        await wait_for_state(event_log, encounter, lambda s: s.undone and not s.client_seeds)
        await send(event_log, encounter, "alice", Strike(command_id="x1", actor="a", target="c"))
        await send(event_log, encounter, "alice", EndTurn(command_id="e1b", actor="a"))
        await wait_for_state(event_log, encounter, lambda s: s.ended or (s.active == "a" and s.round == 2))
        await send(event_log, encounter, "gm", EndEncounter(command_id="end", actor="gm"))
    return await event_log.read(encounter)


async def test_a_rewind_to_before_a_client_seed_undoes_it_for_the_dice(signed_log: EventLog) -> None:
    stored = await play_with_a_rewind(signed_log, "rewound")
    events = [codec.decode_event(s) for s in stored]
    rewind = next(s.version for s, e in zip(stored, events) if type(e).__name__ == "EncounterRewound")
    added = next(s.version for s, e in zip(stored, events) if isinstance(e, ClientSeedAdded))
    mixed = dice_key(SEED, [("alice", "x")])
    dice = [(s.version, die) for s, e in zip(stored, events) for _f, roll in iter_rolls(e) for die in roll.dice]
    between = [die for version, die in dice if added < version < rewind]
    after = [die for version, die in dice if version > rewind]
    assert between and after
    assert all(die.face == derive_face(mixed, die.at, die.k, die.sides) for die in between)
    assert all(die.face == derive_face(SEED, die.at, die.k, die.sides) for die in after)  # the seed undone with its branch
    report = verify(stored, events, campaign="fair")
    assert report.ok, report.problems
    assert report.signed_through == stored[-1].version


def test_a_client_seed_changes_the_dice_after_it_and_not_before() -> None:
    """The same fight, the same seed and commands: one contribution, and only
    the dice after it change (the pure loop)."""
    key = dice_key(SEED, [("alice", "x")])
    assert key != SEED and len(key) == 32
    assert dice_key(SEED, []) == SEED  # no contribution: the dice are the seed's, as before
    plain = [SeededDice(SEED, 7).roll(20).face for _ in range(1)] + [SeededDice(SEED, at).roll(20).face for at in range(8, 40)]
    mixed = [SeededDice(key, 7).roll(20).face] + [SeededDice(key, at).roll(20).face for at in range(8, 40)]
    assert plain != mixed
    assert dice_key(SEED, [("alice", "x"), ("bob", "y")]) != dice_key(SEED, [("bob", "y"), ("alice", "x")])


def rows_of(stored: list[StoredEvent]) -> list[tuple[int, tuple[bytes, ...], bytes]]:
    return [(s.version, (str(s.version).encode(), s.type.encode(), str(s.schema).encode(), s.command_id.encode(),
                         s.causation.encode(), s.inbox_cursor.encode(), s.data), s.signature.encode()) for s in stored]


def check(rows, public_key: bytes, encounter: str) -> GroupCheck:
    groups = GroupCheck("fair", encounter, public_key)
    for version, fields, signature in rows:
        groups.feed(version, fields, signature)
    return groups


async def test_the_signatures_name_what_was_altered_inserted_removed_or_reordered(signed_log: EventLog) -> None:
    stored = await play_with_client_seeds(signed_log, "tamper")
    start = codec.decode_event(stored[0])
    assert isinstance(start, EncounterStarted)
    key = bytes.fromhex(start.log_public_key)
    assert key == signed_log.signer.key.public_key
    rows = rows_of(stored)
    intact = check(rows, key, "tamper")
    assert not intact.problems and intact.signed_through == stored[-1].version and not intact.unsigned_tail(len(rows))
    assert check(rows, key, "another-encounter").problems  # a log moved to another encounter
    middle = len(rows) // 2
    version, fields, signature = rows[middle]

    altered = list(rows)
    altered[middle] = (version, fields[:6] + (fields[6].replace(b"}", b' ,"x":1}', 1),), signature)
    inserted = rows[:middle] + [rows[middle]] + rows[middle:]
    removed = rows[:middle] + rows[middle + 1:]
    reordered = rows[:middle] + [rows[middle + 1], rows[middle]] + rows[middle + 2:]
    forged = rows[:-1] + [(rows[-1][0], rows[-1][1], b"00" * 64)]
    last = rows[-1][0]
    for tampered, at in ((altered, version), (inserted, version), (removed, version), (reordered, version),
                         (forged, last)):
        groups = check(tampered, key, "tamper")
        # The failure names the group holding the tampered entry (by version).
        assert any(_covers(p, at) for p in groups.problems), groups.problems
    # Entries cut from the end are "not signed yet", not silently fine.
    cut = rows[:-1]
    assert check(cut, key, "tamper").unsigned_tail(len(cut))


def _covers(problem: str, version: int) -> bool:
    """Whether a problem ("v12-v27: ..." or "v12: ...") names a span holding ``version``."""
    span = problem.split(":", 1)[0].replace("v", "").split("-")
    return (len(span) == 2 and int(span[0]) <= version <= int(span[1])) or span == [str(version)]


async def test_a_log_without_a_key_verifies_its_dice_and_says_it_is_not_signed(redis_url: str) -> None:
    client = await connect(redis_url)
    try:
        unsigned = EventLog(client, "old", server_key=SERVER_KEY)
        stored = await play_with_client_seeds(unsigned, "before-signing")
    finally:
        await client.aclose()
    report = verify(stored, campaign="old")
    assert report.ok, report.problems
    assert report.signatures == 0 and "not signed" in report.unsigned


def test_the_demo_fights_are_unchanged_by_client_seeds() -> None:
    """A fight with no contribution rolls with the seed itself (the pinned demo logs stand)."""
    from firelane.engine.registry import demo_setup, get_system
    batches = list(run_headless(get_system("bolt-and-blade"), demo_setup("bolt-and-blade"), SEED))
    dice = [die for _c, events, _s in batches for e in events for _f, roll in iter_rolls(e) for die in roll.dice]
    assert dice and all(die.face == derive_face(SEED, die.at, die.k, die.sides) for die in dice)
    assert commit_seed(SEED) == msgspec.json.decode(codec.encode_event(batches[0][1][0]).data)["seed_commitment"]


def test_the_cli_publishes_the_key_and_audit_verifies_the_signatures(tmp_path) -> None:
    """`seats --json` publishes the store's key when the encounter is created;
    the log's start carries the same; `audit --verify` checks every signature."""
    import json

    from tests.cli_helpers import firelane

    data = str(tmp_path / "data")
    created = firelane("create", "signed", "--demo-setup", "toy", "--data-dir", data, "--json")
    assert created.returncode == 0, created.stderr
    seats = json.loads(firelane("seats", "signed", "--data-dir", data, "--json").stdout)
    published = seats["log_signing_key"]
    assert published["algorithm"] == "Ed25519" and len(published["public_key"]) == 64
    ran = firelane("run", "signed", "--demo-setup", "toy", "--data-dir", data, "--quiet")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(firelane("seats", "signed", "--data-dir", data, "--json").stdout)["log_signing_key"] == published
    audit = firelane("audit", "signed", "--verify", "--data-dir", data)
    assert audit.returncode == 0, audit.stderr
    verdict = audit.stdout.strip().splitlines()[-1]
    assert verdict.startswith("verified: seed matches its commitment")
    assert f"key {published['fingerprint']} (this store's key)" in verdict and "signatures: " in verdict
    assert "not signed" not in verdict


def test_firelane_submit_sends_a_client_seed_through_the_seat_it_names() -> None:
    from firelane.cli.encounters import _seat_for
    from firelane.engine.seats import default_seats

    seats = default_seats(table_setup())
    assert _seat_for(seats, "alice") == "alice"  # AddClientSeed's actor: the seat itself
    assert _seat_for(seats, "a") == "alice"  # Ann, whom alice plays
    assert _seat_for(seats, "gm") == "gm"


async def test_signatures_stay_right_through_refused_and_repeated_appends(signed_log: EventLog) -> None:
    """A version conflict, a repeated command and a second writer's appends:
    each time the signer finds the open group again from the log."""
    from firelane.events.envelope import NewEntry
    from firelane.events.log import VersionConflict

    def entries(*types: str) -> list[NewEntry]:
        return [NewEntry(type=t, schema=1, data=b'{"type":"%s"}' % t.encode()) for t in types]

    await signed_log.append("groups", 0, entries("EncounterStarted", "RoundStarted"), command_id="engine/start")
    with pytest.raises(VersionConflict):
        await signed_log.append("groups", 1, entries("TurnStarted"), command_id="engine/x")
    repeated = await signed_log.append("groups", 2, entries("RoundStarted", "TurnStarted"), command_id="engine/start")
    assert repeated.duplicate
    other = EventLog(signed_log.client, "fair", server_key=SERVER_KEY, signer=LogSigner(signed_log.signer.key))
    await other.append("groups", 2, entries("TurnStarted", "TurnEnded"), command_id="engine/y")  # another process
    await signed_log.append("groups", 4, entries("SeedRevealed"), command_id="sequencer/reveal-seed")
    stored = await signed_log.read("groups")
    assert [s.version for s in stored] == [1, 2, 3, 4, 5]
    groups = check(rows_of(stored), signed_log.signer.key.public_key, "groups")
    assert not groups.problems and groups.signed_through == 5 and groups.signatures >= 1
