"""A fight's dice depend on a secret nobody outside can guess, and that secret
stays secret on disk (issue 17, items 4 and "seeds at rest").

- A seed text (``--seed 7341``) is as guessable as the text: a player found it
  from the public commitment in 7,342 tries. So `create`, `run` and `rest`
  refuse it unless the creator asks for reproducible dice, and then the log,
  the roster, the audit and the narration say so (the page: test_table_view
  and tests/browser/test_table_dice.py).
- Whatever a user can create without that flag withstands the player's attack:
  no small text seed reproduces its commitment or its dice.
- The seed of a running fight (or an unfinished rest) is sealed in Redis, so
  neither its hex nor its bytes are in the data dir's files; stores written
  before sealing (the seed in clear hex) still run and verify.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import AsyncIterator
from pathlib import Path

import msgspec
import pytest
import trio

import firelane.actors.campaign as campaign_actor
from firelane.actors.campaign import create_characters, downtime_seed_key, finish_open_downtime, rest
from firelane.actors.runtime import default_policies, run_encounter
from firelane.actors.sequencer import create_encounter, ensure_encounter, load_seed, sealed_seed, seed_key
from firelane.engine.campaign import DowntimeRequest
from firelane.engine.dice import commit_seed, derive_face, new_seed
from firelane.engine.registry import get_system, register_system
from firelane.events import codec
from firelane.events.campaign_log import CAMPAIGN_STREAM, CampaignLog
from firelane.events.campaign_schemas import DowntimeEnded, DowntimeStarted
from firelane.events.log import EventLog
from firelane.events.schemas import Die, EncounterStarted, SeedRevealed
from firelane.events.sealing import open_seed
from firelane.actors.store import open_store
from firelane.projections.audit import iter_rolls, verify
from firelane.redisio import connect
from tests.cli_helpers import cli_ok, cli_refused, firelane, spawn
from tests.toy_system import TOY
from tests.toy_system import setup as toy_setup

register_system(TOY, "tests.toy_system")
get_system("bolt-and-blade")  # its events decode here

SERVER_KEY = b"k" * 32
CANDIDATES = 10_000  # the player's brute force: every text "0" .. "9999"


async def log_of(data_dir: Path, encounter: str) -> list:
    async with open_store(data_dir=data_dir) as store:
        return await store.event_log("default").read(encounter)


# ------------------------------------------------------------------ the player's attack


def text_seeds(text: str) -> list[bytes]:
    """What a seed text may have been turned into: the CLI's derivation (the
    one the player attacked), and the obvious others."""
    raw = text.encode()
    return [hashlib.blake2b(raw, digest_size=32, person=b"firelane-cli").digest(), raw.ljust(32, b"\0"),
            hashlib.sha256(raw).digest()]


def guessed(commitment: str, dice: list[Die]) -> list[str]:
    """Every candidate text whose seed gives the public commitment, or all the dice shown so far."""
    found = []
    for number in range(CANDIDATES):
        for seed in text_seeds(str(number)):
            if commit_seed(seed) == commitment or (dice and all(
                    derive_face(seed, d.at, d.k, d.sides) == d.face for d in dice)):
                found.append(str(number))
    return found


def public_dice(stored: list) -> list[Die]:
    """The first dice a player sees in the log before the reveal: 64 bits' worth,
    so a wrong seed matches them all by chance once in 2^64 tries."""
    dice, bits = [], 0.0
    for entry in stored:
        event = codec.decode_event(entry)
        if isinstance(event, SeedRevealed):
            break
        for die in (die for _field, roll in iter_rolls(event) for die in roll.dice):
            if bits < 64:
                dice.append(die)
                bits += math.log2(die.sides)
    assert not stored or bits >= 64, f"the fight shows only {bits:.0f} bits of dice"
    return dice


@pytest.mark.parametrize("how", [
    ["create", "{e}", "--demo-setup", "toy", "--seed", "7341"],
    ["run", "{e}", "--demo-setup", "bolt-and-blade", "--seed", "7341", "--quiet"],
    ["create", "{e}", "--demo-setup", "toy"],
    ["run", "{e}", "--demo-setup", "bolt-and-blade", "--quiet"],
], ids=["create-seed-text", "run-seed-text", "create", "run"])
async def test_no_fight_made_without_asking_for_reproducible_dice_can_be_guessed(tmp_path: Path, how: list[str]) -> None:
    """The issue's attack, on every fight a user can make without --reproducible-dice:
    no text of 0..9999 gives its commitment or its dice."""
    data = tmp_path / "data"
    result = firelane(*[part.format(e="e") for part in how], "--data-dir", str(data))
    if result.returncode != 0:
        assert result.returncode == 2 and "--reproducible-dice" in result.stderr, result.stderr
        return  # refused: there is no fight to attack
    stored = await log_of(data, "e") if "run" in how else []
    if stored:
        started = codec.decode_event(stored[0])
        assert isinstance(started, EncounterStarted) and not started.reproducible_dice
        commitment = started.seed_commitment
    else:  # created, waiting for an engine: the commitment is already public in its queued start
        async with open_store(data_dir=data) as store:
            (queued,) = await store.event_log("default").read_inbox("e", "engine", count=1)
        start = json.loads(queued.fields[b"p"])
        assert start["type"] == "StartEncounter" and "reproducible_dice" not in start
        commitment = start["seed_commitment"]
    assert guessed(commitment, public_dice(stored)) == []


def test_the_brute_force_finds_a_reproducible_seed_text(tmp_path: Path) -> None:
    """The check above is a real attack: it finds the seed of a fight whose creator asked for reproducible dice."""
    data = tmp_path / "data"
    cli_ok("run", "open", "--demo-setup", "bolt-and-blade", "--seed", "7341", "--reproducible-dice", "--quiet",
       "--data-dir", str(data))
    stored = trio.run(log_of, data, "open")
    assert guessed(codec.decode_event(stored[0]).seed_commitment, public_dice(stored)) == ["7341"]


# ------------------------------------------------------------------ the flag, refused and shown


def test_a_seed_text_is_refused_without_the_flag_and_shown_everywhere_with_it(tmp_path: Path) -> None:
    store = ["--data-dir", str(tmp_path / "data")]
    for command in (["create", "e", "--demo-setup", "toy"], ["run", "e", "--demo-setup", "toy", "--quiet"],
                    ["rest", "--party", "--days", "1"]):
        line = cli_refused(*command, "--seed", "7341", *store)
        assert "--seed TEXT makes dice anyone who knows or guesses the text can predict: add --reproducible-dice" in line
    assert "--reproducible-dice needs --seed TEXT" in cli_refused("create", "e", "--demo-setup", "toy", "--reproducible-dice",
                                                                *store)
    assert json.loads(cli_ok("encounters", "--json", *store).splitlines()[-1])["total"] == 0  # nothing was created

    warning = "reproducible dice: anyone who knows the seed text can predict every roll"
    created = firelane("create", "waits", "--demo-setup", "toy", "--seed", "7341", "--reproducible-dice", *store)
    assert created.returncode == 0 and warning in created.stderr, created.stderr
    assert warning in firelane("run", "fight", "--demo-setup", "toy", "--seed", "7341", "--reproducible-dice",
                               "--quiet", *store).stderr
    cli_ok("run", "plain", "--demo-setup", "toy", "--quiet", *store)
    # The log: the start records it; an ordinary start is written as ever (no such field).
    stored = trio.run(log_of, tmp_path / "data", "fight")
    assert b'"reproducible_dice":true' in stored[0].data
    assert codec.decode_event(stored[0]).seed_commitment == commit_seed(text_seeds("7341")[0])  # anyone can check it
    assert b"reproducible_dice" not in trio.run(log_of, tmp_path / "data", "plain")[0].data
    # The roster, waiting or run; the narration; the audit.
    rows = {row["encounter"]: row for row in json.loads(cli_ok("encounters", "--json", *store).splitlines()[-1])["rows"]}
    assert (rows["waits"]["reproducible_dice"], rows["fight"]["reproducible_dice"], rows["plain"]["reproducible_dice"]) \
        == (True, True, False)
    listing = {line.split()[0]: line for line in cli_ok("encounters", *store).splitlines() if line.strip()}
    assert warning in listing["fight"] and warning in listing["waits"] and warning not in listing["plain"]
    assert warning in cli_ok("replay", "fight", *store).splitlines()[0]
    assert warning not in cli_ok("replay", "plain", *store)
    audit = cli_ok("audit", "fight", "--verify", *store)
    assert audit.startswith(warning) and f"all match ({warning})" in audit
    assert warning not in cli_ok("audit", "plain", "--verify", *store)
    # A rest with a seed text: its start records it, and the rest says so.
    cli_ok("characters", "--create-demo", "d100-zones", "--side", "rangers", *store)
    rested = cli_ok("rest", "--party", "--days", "1", "--seed", "7341", "--reproducible-dice", *store)
    assert warning in rested
    assert "reproducible" not in cli_ok("rest", "--party", "--days", "1", *store)
    audited = cli_ok("audit", "--downtime", "--verify", *store).strip().splitlines()
    assert audited[0] == f"downtime 1: {warning}" and audited[-1].endswith(f"all match (downtime 1: {warning})")


def test_a_demo_seed_asks_for_reproducible_dice_and_says_so(tmp_path: Path) -> None:
    store = ["--data-dir", str(tmp_path / "data")]
    seeded = firelane("demo", "--system", "toy", "--seed", "7341", "--encounter", "shown", *store)
    assert seeded.returncode == 0 and "reproducible dice: anyone who knows the seed text" in seeded.stderr + seeded.stdout
    assert codec.decode_event(trio.run(log_of, tmp_path / "data", "shown")[0]).reproducible_dice
    cli_ok("demo", "--system", "toy", "--encounter", "secret", "--quiet", *store)
    assert not codec.decode_event(trio.run(log_of, tmp_path / "data", "secret")[0]).reproducible_dice


# ------------------------------------------------------------------ seeds at rest


def files_holding(directory: Path, *secrets: bytes) -> list[str]:
    return sorted(str(path.relative_to(directory)) for path in directory.rglob("*")
                  if path.is_file() and any(secret in path.read_bytes() for secret in secrets))


def test_a_running_fights_seed_is_in_no_file_of_the_data_dir_and_the_fight_still_verifies(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = ["--data-dir", str(data)]
    cli_ok("create", "waiting", "--demo-setup", "toy", *store)  # waiting for an engine: its seed is secret, in Redis
    # A fight under way (paced, so it is still running while the files are read).
    running = spawn("run", "running", "--demo-setup", "bolt-and-blade", "--pace", "0.02", "--quiet", *store)

    async def mid_fight() -> dict[str, bytes]:
        async with open_store(data_dir=data) as opened:
            event_log = opened.event_log("default")
            with trio.fail_after(60):
                while await event_log.version("running") < 20:
                    await trio.sleep(0.05)
            seeds = {encounter: await load_seed(event_log, encounter) for encounter in ("waiting", "running")}
            await trio.sleep(1.5)  # the AOF is written (and fsynced) within a second of each write
            assert not any(s.type == "SeedRevealed" for s in await event_log.read("running")), "the fight is still on"
            return seeds

    try:
        seeds = trio.run(mid_fight)
        assert list(data.rglob("*.aof")), "the store keeps an append-only file"
        assert files_holding(data, *[secret for seed in seeds.values() for secret in (seed.hex().encode(), seed)]) == []
        _out, err = running.communicate(timeout=120)
        assert running.returncode == 0, err
    finally:
        if running.poll() is None:
            running.kill()
            running.communicate()
    cli_ok("run", "waiting", "--quiet", *store)
    for encounter, seed in seeds.items():
        verdict = cli_ok("audit", encounter, "--verify", *store).splitlines()[-1]
        assert verdict.startswith("verified: seed matches its commitment"), verdict
        revealed = codec.decode_event(trio.run(log_of, data, encounter)[-1])
        assert isinstance(revealed, SeedRevealed) and revealed.seed == seed.hex()


@pytest.fixture
async def event_log(redis_url: str) -> AsyncIterator[EventLog]:
    client = await connect(redis_url)
    try:
        yield EventLog(client, "secrets", server_key=SERVER_KEY)
    finally:
        await client.aclose()


async def fight(event_log: EventLog, encounter: str) -> None:
    """Run the encounter to its end, its AI playing."""
    await run_encounter(event_log, encounter, TOY, default_policies(TOY, {c.id: c.policy for c in toy_setup().combatants}))


async def test_a_store_written_before_sealing_still_runs_and_verifies(event_log: EventLog) -> None:
    seed = new_seed()
    await create_encounter(event_log, "old", toy_setup(), seed)
    key = seed_key("secrets", "old")
    assert seed.hex().encode() not in await event_log.client.execute("GET", key)
    await event_log.client.execute("SET", key, seed.hex())  # as firelane kept it before: the hex in clear
    assert await load_seed(event_log, "old") == seed
    await fight(event_log, "old")
    report = verify(await event_log.read("old"))
    assert report.ok and report.dice > 0, report.problems


async def test_a_sealed_seed_opens_only_where_it_was_stored_and_with_the_stores_key(event_log: EventLog) -> None:
    await create_encounter(event_log, "here", toy_setup(), new_seed())
    await create_encounter(event_log, "there", toy_setup(), new_seed())
    here = await event_log.client.execute("GET", seed_key("secrets", "here"))
    await event_log.client.execute("SET", seed_key("secrets", "there"), here)  # moved to another encounter
    with pytest.raises(LookupError, match="the seed of encounter 'there' in campaign 'secrets' does not open"):
        await load_seed(event_log, "there")
    other_store = EventLog(event_log.client, "secrets", server_key=b"o" * 32)
    with pytest.raises(LookupError, match="does not open with this store's key"):
        await load_seed(other_store, "here")
    with pytest.raises(ValueError, match="a seed needs at least 128 bits"):
        await create_encounter(event_log, "short", toy_setup(), b"7341")


async def test_a_retried_creation_keeps_the_reproducibility_its_seed_was_stored_with(event_log: EventLog) -> None:
    """A creation that stored a seed text's seed and died before queuing the start:
    a retry without the flag (and another seed) still starts with the stored seed, and says it is reproducible."""
    text_seed = text_seeds("7341")[0]
    await event_log.client.execute("SET", seed_key("secrets", "retried"),
                                   sealed_seed(event_log, "retried", text_seed, reproducible_dice=True))
    assert await ensure_encounter(event_log, "retried", toy_setup(), new_seed()) == text_seed
    await fight(event_log, "retried")
    started = codec.decode_event((await event_log.read("retried", count=1))[0])
    assert started.reproducible_dice and started.seed_commitment == commit_seed(text_seed)


async def test_an_unfinished_rests_seed_is_sealed_and_an_old_clear_one_still_finishes(
        event_log: EventLog, monkeypatch: pytest.MonkeyPatch) -> None:
    await create_characters(event_log, [(TOY, "ann", "Ann", {"hp": 3}, "")])
    finish = campaign_actor._finish

    async def interrupted(stream):
        raise RuntimeError("the rest was interrupted after its start")

    monkeypatch.setattr(campaign_actor, "_finish", interrupted)
    with pytest.raises(RuntimeError, match="interrupted"):
        await rest(event_log, DowntimeRequest(characters=["ann"], days=1))
    monkeypatch.setattr(campaign_actor, "_finish", finish)
    stream = CampaignLog.of(event_log)
    stored = await event_log.client.execute("GET", downtime_seed_key(stream, 1))
    ended = await finish_open_downtime(event_log)
    revealed = bytes.fromhex(next(e for e in ended if isinstance(e, DowntimeEnded)).seed)
    assert revealed.hex().encode() not in stored and revealed not in stored
    # A rest interrupted under an older firelane: its seed in clear hex still finishes it.
    monkeypatch.setattr(campaign_actor, "_finish", interrupted)
    with pytest.raises(RuntimeError):
        await rest(event_log, DowntimeRequest(characters=["ann"], days=1))
    monkeypatch.setattr(campaign_actor, "_finish", finish)
    seed = open_seed(SERVER_KEY, "secrets", downtime_seed_key(stream, 2),
                     await event_log.client.execute("GET", downtime_seed_key(stream, 2))).seed_bytes
    await event_log.client.execute("SET", downtime_seed_key(stream, 2), seed.hex())
    ended = await finish_open_downtime(event_log)
    assert next(e for e in ended if isinstance(e, DowntimeEnded)).seed == seed.hex()
    starts = [codec.decode_event(s) for s in await stream.read(CAMPAIGN_STREAM) if s.type == "DowntimeStarted"]
    assert all(isinstance(s, DowntimeStarted) and s.reproducible_dice is msgspec.UNSET for s in starts)
