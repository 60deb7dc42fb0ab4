#!/usr/bin/env python3
"""firelane benchmarks: every figure of issue 12's goals, measured in one run
on this machine and reported as ratios taken within that run (absolute rates on
a shared 2-core machine swing 3-4x between runs; ratios do not).

Usage:
    ./dev bench                 the full run (a few minutes), a readable table
    ./dev bench --json          the same as ONE JSON object on stdout
    ./dev bench --quick --json  smaller sizes, same keys, under 2 minutes
Progress goes to stderr.

What each key measures (docs/benchmarks.md says how to read them):

- ``live_over_pure_cpu_<system>`` / ``_max``: CPU seconds (time.process_time of
  this process: sequencer, actors, tap, Redis client) per event of AI fights on
  the live runtime, over the CPU per event of the same fights (same setups and
  seeds, identical logs) in the pure in-memory loop. Redis's own CPU is not in
  it (``redis_cpu_over_engine_cpu`` gives it). ``live_decodes_per_event`` and
  ``live_evolves_per_event`` count codec.decode_body and evolve calls.
- ``live_signed_over_unsigned_cpu``: the same live fights with the log signed
  as a store signs it (an Ed25519 signature per group of entries,
  events/log_signing.py) over unsigned, CPU per event; the median over the
  systems and runs (target: at most 1.05).
- ``copy_share_pure_<system>`` / ``_bb_128`` / ``_max``: the share of the pure
  loop's CPU spent in ``copy_state``.
- ``bb_ai_ms_per_command_128`` (and ``_8``): CPU ms in Bolt & Blade's
  ``choose_command`` per AI command with 128 combatants (the demo tiled 4x4 on
  a 96x64 map) and with the demo's 8.
- ``window_p50_ms_<R>`` / ``window_p99_ms_<R>``, R = 5, 50, 100 reactors: time
  from a window's opening (its first reactor asked) to its closing event
  durable in Redis, inside the engine (toy system: one runner steps past R
  watchers who all pass; the engine's players answer in place, so a follower
  sees opening and closing in one batch).
  ``window_p50_growth_exponent``: the log-log slope from 5 to 100 reactors
  (1 = linear, 2 = quadratic).
- ``replay_over_decode_limit``: the streaming turn-state fold (XRANGE pages,
  decode, evolve; `projections.turn_state.fold_stream`) in events/s, over
  msgspec's decode rate of the same bodies (each decoded by its type's reused
  Decoder, bodies already in memory). On a log of 1M events (the Bolt & Blade
  demo's rounds repeated; 200k in --quick). ``replay_1m_s``: seconds for 1M
  events at that rate. ``replay_rss_growth_mb``: peak RSS growth during it.
- ``resume_ms_1m``: a restarted sequencer's ``load()`` on that log, with the
  snapshot the sequencer would have written at most 1000 events before its end.
- ``redis_bytes_per_event``: Redis's MEMORY USAGE of every key of the live
  fights' campaign (logs, inboxes, applied-command hashes...) per event;
  ``event_body_bytes_mean``: the JSON bodies alone.
- ``sim_2_over_1``: wall time of ``firelane sim`` on 1 worker over 2 workers
  (the median of 3 pairs of runs, ``_range`` their lowest and highest).
- ``workers_2_over_1``: 64 concurrent Bolt & Blade encounters run by
  ``firelane serve --workers 2`` against ``--workers 1``, events per second
  until 90 % of the events are written (``_whole_run``: to the last one); the
  median of 3 pairs of runs, ``_range`` their lowest and highest.
  ``serve_remote_p50_ms_<N>`` / ``_p99_``: the round trips of a bot playing
  one combatant from its seat in 8 of those fights (submit to its events read
  back, window answers included), with N workers busy with all 64 (the round
  trips of the 3 runs pooled).

- ``workshop_draft_save_ms_p50`` / ``_p99``: the round trip of the workshop's
  draft save (``PUT …/drafts/{d}``, docs/workshop-api.md) over HTTP to the API
  served in this process, signed in with the GM's cookie and CSRF header: a
  100x100 map with 1,000 walls, 60 cover squares and 50 combatants
  (``workshop_draft_bytes`` of setup JSON), each save at the version the last
  one returned. ``workshop_checks_ms_p50`` / ``_p99``: the checks of that
  setup (``POST …/checks``: every combatant's sheet, then the whole setup),
  what the builder asks as the GM types.

- ``idle_encounters``: how many fights a play-by-post server runs at once in
  the ``idle`` section (10,000; 1,000 with ``--quick``), each waiting on a
  person: ``idle_serve_rss_mb`` (serve's RSS), ``idle_redis_connections``
  (Redis's clients but the bench's own), ``idle_cpu_core_share`` (serve's CPU
  while they wait, in cores), ``idle_seat_p99_ms`` / ``_p50_`` (a seat's
  command round trip meanwhile), ``idle_restart_s`` (serve stopped with
  SIGTERM and started again, until the new one holds every encounter's lease;
  ``idle_seat_max_ms_after_restart``: the slowest of 20 seats' commands right
  after), ``idle_first_start_s`` (the first serve, until every one has
  published its seats' views).

``--only SECTION[,SECTION]`` (live, ai, windows, replay, sim, workers, workshop, idle)
measures those alone.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import aclosing, contextmanager
from pathlib import Path
from typing import Any

import msgspec
import trio

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from firelane.actors.combatant import CombatantActor  # noqa: E402
from firelane.actors.policies import AIPolicy, ScriptedPolicy  # noqa: E402
from firelane.actors.runtime import run_encounter  # noqa: E402
from firelane.actors.sequencer import Sequencer, create_encounter  # noqa: E402
from firelane.engine import state as state_module  # noqa: E402
from firelane.engine.registry import demo_setup, get_system, register_system  # noqa: E402
from firelane.engine.simulate import fallback_command, run_headless  # noqa: E402
from firelane.events import codec  # noqa: E402
from firelane.events.log import Batch, EventLog  # noqa: E402
from firelane.events.log_signing import LogSigner  # noqa: E402
from firelane.events.public_signing import SigningKey  # noqa: E402
from firelane.events.schemas import (  # noqa: E402
    CombatantSetup, EncounterEnded, EncounterSetup, RoundStarted, SeatSetup, Terrain)
from firelane.projections.snapshots import encode_snapshot, snapshot_key  # noqa: E402
from firelane.projections.turn_state import fold_stream  # noqa: E402
from firelane.redisio import EmbeddedRedis, connect  # noqa: E402
from tests.toy_system import TOY  # noqa: E402

register_system(TOY, "tests.toy_system")

SYSTEMS = ["bolt-and-blade", "d100-degrees", "d100-zones", "rond6"]
SECTIONS = ["live", "ai", "windows", "replay", "sim", "workers", "workshop", "idle"]


def progress(message: str) -> None:
    print(f"  … {message}", file=sys.stderr, flush=True)


def key_of(system: str) -> str:
    return system.replace("-", "_")


def seed_of(i: int) -> bytes:
    return f"bench-seed-{i}".encode().ljust(32, b".")


# --------------------------------------------------------------------------- instruments


class Counters:
    """Counts decodes and evolves, and the CPU spent in copy_state, while installed."""

    def __init__(self) -> None:
        self.decodes = 0
        self.evolves = 0
        self.copy_cpu = 0.0
        self.copies = 0


@contextmanager
def instrumented(systems: list[Any], counters: Counters) -> Iterator[None]:
    """Wrap codec.decode_body, each system's evolve and every module's copy_state."""
    original_decode = codec.decode_body
    original_copy = state_module.copy_state
    clock = time.process_time

    def decode_body(tag, schema, data):
        counters.decodes += 1
        return original_decode(tag, schema, data)

    def copy_state(state):
        began = clock()
        try:
            return original_copy(state)
        finally:
            counters.copy_cpu += clock() - began
            counters.copies += 1

    patched_modules = [m for m in list(sys.modules.values())
                       if m is not None and getattr(m, "copy_state", None) is original_copy]
    codec.decode_body = decode_body
    for module in patched_modules:
        module.copy_state = copy_state
    for system in systems:
        bound = system.evolve

        def evolve(state, event, _bound=bound):
            counters.evolves += 1
            return _bound(state, event)

        system.evolve = evolve
    try:
        yield
    finally:
        codec.decode_body = original_decode
        for module in patched_modules:
            module.copy_state = original_copy
        for system in systems:
            del system.evolve


@contextmanager
def timed_ai(system: Any, sink: list[float]) -> Iterator[None]:
    """Record the CPU seconds of each choose_command call."""
    bound = system.choose_command
    clock = time.process_time

    def choose_command(state, combatant):
        began = clock()
        try:
            return bound(state, combatant)
        finally:
            sink.append(clock() - began)

    system.choose_command = choose_command
    try:
        yield
    finally:
        del system.choose_command


async def redis_cpu(client) -> float:
    info = (await client.execute("INFO", "cpu")).decode()
    fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
    return float(fields["used_cpu_user"]) + float(fields["used_cpu_sys"])


# --------------------------------------------------------------------------- live vs pure


async def live_fights(url: str, campaign: str, system_name: str, fights: int, *,
                      signer: LogSigner | None = None) -> dict[str, float]:
    """The system's demo fights on the live runtime. The CPU is measured on a
    plain pass, as the pure loop's is; a second, instrumented pass (another
    campaign) counts the decodes and evolves. With ``signer``, the log is
    signed as a store's is (events/log_signing.py) and the second pass is
    left out."""
    client = await connect(url, max_connections=64)
    system = get_system(system_name)
    setup = demo_setup(system_name)

    async def play(event_log: EventLog) -> tuple[list[str], float, float]:
        encounters = [f"{key_of(system_name)}-{i}" for i in range(fights)]
        for i, encounter in enumerate(encounters):
            await create_encounter(event_log, encounter, setup, seed_of(i))
        gc.collect()
        cpu_began, wall_began = time.process_time(), time.perf_counter()
        async with trio.open_nursery() as nursery:
            for encounter in encounters:
                policies = {c.id: AIPolicy(system) for c in setup.combatants}
                nursery.start_soon(run_encounter, event_log, encounter, system, policies)
        return encounters, time.process_time() - cpu_began, time.perf_counter() - wall_began

    event_log = EventLog(client, campaign, signer=signer)
    redis_before = await redis_cpu(client)
    encounters, cpu, wall = await play(event_log)
    redis = await redis_cpu(client) - redis_before
    counters = Counters()
    if signer is None:
        with instrumented([system], counters):
            await play(EventLog(client, f"{campaign}-counted"))
    logs = [[s.data for s in await event_log.read(e)] for e in encounters]
    await client.aclose()
    events = sum(len(log) for log in logs)
    return {"events": events, "cpu": cpu, "wall": wall, "redis_cpu": redis, "decodes": counters.decodes,
            "evolves": counters.evolves, "logs": logs}


def pure_fights(system_name: str, fights: int, setup: EncounterSetup | None = None,
                max_commands: int | None = None) -> dict[str, Any]:
    """The same fights in the pure loop. The CPU is measured on a plain pass
    (no timers, nothing encoded), as the live runtime's is; a second,
    instrumented pass gives the shares (AI, copy_state) and the counts."""
    system = get_system(system_name)
    setup = setup or demo_setup(system_name)

    def play() -> list[list[Any]]:
        logs = []
        commands = 0
        for i in range(fights):
            log: list[Any] = []
            for _command, batch, _state in run_headless(system, setup, seed_of(i), encounter=f"{key_of(system_name)}-{i}"):
                log.extend(batch)
                commands += 1
                if max_commands is not None and commands >= max_commands:
                    break
            logs.append(log)
        return logs

    gc.collect()
    began = time.process_time()
    plain = play()
    cpu = time.process_time() - began
    counters = Counters()
    ai: list[float] = []
    gc.collect()
    with instrumented([system], counters), timed_ai(system, ai):
        began = time.process_time()
        play()
        instrumented_cpu = time.process_time() - began
    logs = [[codec.encode_event(e).data for e in log] for log in plain]
    events = sum(len(log) for log in logs)
    return {"events": events, "cpu": cpu, "copy_cpu": counters.copy_cpu * cpu / instrumented_cpu,
            "decodes": counters.decodes, "evolves": counters.evolves, "ai_cpu": sum(ai) * cpu / instrumented_cpu,
            "ai_calls": len(ai), "logs": logs}


def tiled_bolt_and_blade(tiles_x: int = 4, tiles_y: int = 4) -> EncounterSetup:
    """The Bolt & Blade demo repeated on a grid of tiles: 8 x tiles combatants."""
    demo = demo_setup("bolt-and-blade")
    width, height = demo.terrain.width, demo.terrain.height
    raw = msgspec.to_builtins(demo.terrain)
    walls, cover, difficult = [], [], []
    combatants = []
    for tx in range(tiles_x):
        for ty in range(tiles_y):
            dx, dy = tx * width, ty * height
            walls += [[w[0] + dx, w[1] + dy] for w in raw["walls"]]
            cover += [{**c, "x": c["x"] + dx, "y": c["y"] + dy} for c in raw["cover"]]
            difficult += [[d[0] + dx, d[1] + dy] for d in raw.get("difficult", [])]
            for c in demo.combatants:
                combatants.append(msgspec.structs.replace(
                    c, id=f"{c.id}-{tx}{ty}", name=f"{c.name} {tx}{ty}", position=(c.position[0] + dx, c.position[1] + dy)))
    terrain = msgspec.convert({**raw, "width": width * tiles_x, "height": height * tiles_y, "walls": walls,
                               "cover": cover, "difficult": difficult}, Terrain)
    return msgspec.structs.replace(demo, combatants=combatants, terrain=terrain, name="Ash Street x16")


async def redis_memory(url: str, campaign: str) -> int:
    client = await connect(url)
    total, cursor = 0, b"0"
    while True:
        cursor, keys = await client.execute("SCAN", cursor, "MATCH", f"firelane:{{{campaign}}}:*", "COUNT", 1000)
        for key in keys:
            total += await client.execute("MEMORY", "USAGE", key, "SAMPLES", "0") or 0
        if cursor in (b"0", 0):
            break
    await client.aclose()
    return total


# --------------------------------------------------------------------------- reaction windows


class PassingPolicy:
    """Always passes, so every step opens a window for all reactors again.
    Notes when a window's first reactor is asked: the window is open in the
    engine's state from then on."""

    def __init__(self, first_asked: dict[int, float]) -> None:
        self.first_asked = first_asked

    def choose(self, state, combatant, *, last_rejected):
        if state.window is not None:
            self.first_asked.setdefault(state.window.window, time.perf_counter())
        return fallback_command(state, combatant)


class ClosingTimesLog(EventLog):
    """The event log, noting when each ReactionWindowClosed is durable in
    Redis (its append returned)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.closed_at: dict[int, float] = {}

    async def append_batches(self, encounter, expected_version, batches):
        results = await super().append_batches(encounter, expected_version, batches)
        now = time.perf_counter()
        for batch in batches:
            for entry in batch.entries:
                if entry.type == "ReactionWindowClosed":
                    self.closed_at[msgspec.json.decode(entry.data)["window"]] = now
        return results


async def window_latency(url: str, reactors: int, windows: int) -> list[float]:
    """Seconds from a window's opening (its first reactor asked) to its
    closing event durable in Redis, one per window. The reactors are the
    engine's own players (AI seats): since the engine's players answer in
    place and a slice of commands is appended in one round trip, a follower
    of the log sees the opening and the closing in one batch, so the time has
    to be taken inside the engine process."""
    client = await connect(url, max_connections=64)
    event_log = ClosingTimesLog(client, "windows")
    encounter = f"windows-{reactors}"
    combatants = [CombatantSetup(id="runner", name="Runner", side="red", position=(0, 0), sheet={"speed": 99})]
    combatants += [CombatantSetup(id=f"w{i:03d}", name=f"Watcher {i}", side="blue", position=(i % 10, 5 + i // 10))
                   for i in range(reactors)]
    setup = EncounterSetup(system="toy", combatants=combatants, settings={"max_rounds": 1})
    await create_encounter(event_log, encounter, setup, b"w" * 32)
    steps = [{"type": "Step", "to": [k % 20, 1]} for k in range(windows)] + [{"type": "EndTurn"}]
    first_asked: dict[int, float] = {}
    policies = {"runner": ScriptedPolicy(TOY, steps)}
    policies.update({c.id: PassingPolicy(first_asked) for c in combatants[1:]})
    await run_encounter(event_log, encounter, TOY, policies)
    await client.aclose()
    missing = set(first_asked) ^ set(event_log.closed_at)
    if missing:
        raise RuntimeError(f"windows opened or closed without the other: {sorted(missing)[:5]}")
    return [event_log.closed_at[w] - first_asked[w] for w in sorted(first_asked)]


def big_draft() -> dict[str, Any]:
    """A builder's big draft: a 100x100 map, 1,000 walls, 60 cover squares, 50 combatants (d100-zones sheets)."""
    demo = demo_setup("d100-zones")
    walls = [[10 + (i % 80), 5 + 7 * (i // 80)] for i in range(1000)]
    cover = [{"x": 3 + i, "y": 98, "level": "light", "facing": [[0, -1]]} for i in range(60)]
    combatants = []
    for i in range(50):
        template = demo.combatants[i % len(demo.combatants)]
        combatants.append({"id": f"c{i}", "name": f"{template.name} {i}", "side": template.side,
                           "position": [2 + 2 * (i % 40), 2 + 2 * (i // 40)], "policy": "ai",
                           "sheet": msgspec.to_builtins(template.sheet)})
    return {"system": "d100-zones", "name": "Bench hall", "combatants": combatants,
            "terrain": {"width": 100, "height": 100, "square_size": 1.5, "unit": "m", "walls": walls, "cover": cover}}


async def workshop_round_trips(url: str, saves: int) -> dict[str, Any]:
    """Draft saves and checks over HTTP to the API served in this process (see the module doc)."""
    import httpx
    from hypercorn.trio import serve as hypercorn_serve

    from firelane.actors.store import open_store
    from firelane.actors.workshop import create_campaign
    from firelane.web.app import Api, make_app
    from firelane.web.guard import ServedNames, hypercorn_config

    setup = big_draft()
    with tempfile.TemporaryDirectory(prefix="firelane-bench-shop-") as data:
        async with open_store(redis_url=url, data_dir=Path(data)) as store:
            token = await create_campaign(store.event_log("bench-shop"))
            async with trio.open_nursery() as nursery:
                api = Api(store, nursery)
                names = ServedNames()
                binds = await nursery.start(lambda task_status: hypercorn_serve(
                    make_app(api, names), hypercorn_config("127.0.0.1", 0), task_status=task_status))
                base = binds[0].rstrip("/")
                async with httpx.AsyncClient(base_url=base, timeout=30) as http:
                    signed = await http.post("/api/workshop/session", json={"campaign": "bench-shop", "token": token})
                    http.headers["X-Firelane-CSRF"] = signed.json()["csrf"]
                    shop = "/api/workshop/campaigns/bench-shop"
                    made = await http.post(f"{shop}/drafts", json={"id": "hall", "setup": setup})
                    if made.status_code != 201:
                        raise SystemExit(f"bench: the workshop draft was refused: {made.text[:300]}")
                    version = made.json()["version"]
                    checked = (await http.post(f"{shop}/checks", json=setup)).json()
                    if not checked["ok"]:
                        raise SystemExit(f"bench: the workshop draft has problems: {checked['problems'][:2]}")
                    save_times, check_times = [], []
                    for n in range(saves):
                        setup["name"] = f"Bench hall, edit {n}"  # each save a change, as a GM's edit is
                        began = time.perf_counter()
                        answer = await http.put(f"{shop}/drafts/hall", json={"version": version, "setup": setup})
                        save_times.append(time.perf_counter() - began)
                        if answer.status_code != 200:
                            raise SystemExit(f"bench: a draft save was refused: {answer.text[:300]}")
                        version = answer.json()["version"]
                        if n % 5 == 0:
                            began = time.perf_counter()
                            await http.post(f"{shop}/checks", json=setup)
                            check_times.append(time.perf_counter() - began)
                nursery.cancel_scope.cancel()
    return {
        "workshop_draft_save_ms_p50": round(percentile(save_times, 0.5) * 1000, 2),
        "workshop_draft_save_ms_p99": round(percentile(save_times, 0.99) * 1000, 2),
        "workshop_checks_ms_p50": round(percentile(check_times, 0.5) * 1000, 1),
        "workshop_checks_ms_p99": round(percentile(check_times, 0.99) * 1000, 1),
        "workshop_draft_bytes": len(msgspec.json.encode(setup)),
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


# --------------------------------------------------------------------------- replay and resume


def long_log_chunks(length: int, chunk: int = 5000) -> Iterator[list[Any]]:
    """A Bolt & Blade demo fight's opening, then its rounds repeated to ``length`` events."""
    system = get_system("bolt-and-blade")
    events = [e for _c, batch, _s in run_headless(system, demo_setup("bolt-and-blade"), seed_of(0), encounter="long")
              for e in batch]
    first_round = next(i for i, e in enumerate(events) if isinstance(e, RoundStarted))
    end = next(i for i, e in enumerate(events) if isinstance(e, EncounterEnded))
    entries = [codec.encode_event(e) for e in events]
    rounds = entries[first_round:end]
    opening = entries[:first_round]
    written = 0
    while written < length:
        size = min(chunk, length - written)
        yield [opening[written + i] if written + i < first_round else rounds[(written + i - first_round) % len(rounds)]
               for i in range(size)]
        written += size


async def replay_and_resume(url: str, length: int) -> dict[str, Any]:
    client = await connect(url)
    event_log = EventLog(client, "replay")
    encounter = "long"
    progress(f"replay: writing a {length:,}-event log")
    version = 0
    for chunk in long_log_chunks(length):
        await event_log.append_batches(encounter, version, [Batch(entries=chunk, command_id=f"c{version}")])
        version += len(chunk)
    system = get_system("bolt-and-blade")

    progress("replay: msgspec's decode rate of the same bodies")
    decoders: dict[bytes, Any] = {}
    decode_time = 0.0
    count = 0
    async for rows in event_log.iter_pages(encounter):
        bodies = [(fields[3], fields[7]) for _id, fields in rows]
        for tag, _ in bodies:
            if tag not in decoders:
                decoders[tag] = msgspec.json.Decoder(codec.event_type_for(tag.decode()))
        began = time.perf_counter()
        for tag, data in bodies:
            decoders[tag].decode(data)
        decode_time += time.perf_counter() - began
        count += len(bodies)
    decode_rate = count / decode_time

    progress("replay: the streaming turn-state fold")
    gc.collect()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    state = system.initial_state()
    state.encounter = encounter
    snapshot: list[bytes] = []

    def keep_snapshot(end) -> None:
        if not snapshot and length - state.version <= 1000:
            snapshot.append(encode_snapshot(system, state, end.entry_id, end.inbox_cursors))

    began = time.perf_counter()
    await fold_stream(system, state, event_log, encounter, on_page=keep_snapshot)
    replay_time = time.perf_counter() - began
    rss_growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
    assert state.version == length

    progress("resume: a restarted sequencer on the long log, from its snapshot")
    await client.execute("SET", snapshot_key("replay", encounter), snapshot[0])
    resumes = []
    for _ in range(5):
        sequencer = Sequencer(event_log, encounter, system, b"r" * 32)
        began = time.perf_counter()
        await sequencer.load()
        resumes.append(time.perf_counter() - began)
        assert sequencer.state.version == length
    await client.execute("DEL", event_log.log_key(encounter), event_log.applied_key(encounter))
    await client.aclose()
    replay_rate = length / replay_time
    return {
        "replay_log_events": length,
        "replay_events_per_s": round(replay_rate),
        "decode_limit_events_per_s": round(decode_rate),
        "replay_over_decode_limit": round(replay_rate / decode_rate, 3),
        "replay_1m_s": round(1_000_000 / replay_rate, 2),
        "replay_rss_growth_mb": round(rss_growth / 1024, 1),
        "resume_ms_1m": round(statistics.median(resumes) * 1000, 1),
        "resume_tail_events": length - msgspec.msgpack.decode(snapshot[0])["version"],
    }


# --------------------------------------------------------------------------- firelane sim


def sim_seconds(workers: int, runs: int) -> float:
    began = time.perf_counter()
    subprocess.run([sys.executable, "-m", "firelane", "sim", "--demo-setup", "bolt-and-blade",
                    "--runs", str(runs), "--workers", str(workers), "--seed", "bench", "--json"],
                   check=True, capture_output=True, cwd=REPO, timeout=1800)
    return time.perf_counter() - began


# --------------------------------------------------------------------------- firelane serve --workers


REMOTE_PROBES = 8  # of the served fights, those with a combatant played from a seat


class TimedRemotePlayer(CombatantActor):
    """A frontend outside the engine (a bot at its seat): it follows the log,
    plays its combatant with the system's AI through its seat's inbox, and
    notes each command's round trip, from its submission to its events (or its
    rejection) read back from the log. Window answers included: those wait
    until every reactor has answered."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent_at: float | None = None
        self.round_trips: list[float] = []

    async def _maybe_act(self) -> None:
        sent = self.commands_sent
        began = time.perf_counter()
        await super()._maybe_act()
        if self.commands_sent > sent:
            self.sent_at = began

    def _apply(self, batch: list[Any]) -> None:
        outstanding = self._outstanding
        super()._apply(batch)
        if outstanding and not self._outstanding and self.sent_at is not None:
            self.round_trips.append(time.perf_counter() - self.sent_at)
            self.sent_at = None


def with_remote_player(setup: EncounterSetup) -> tuple[EncounterSetup, str]:
    """The setup with its first combatant played from a seat (policy human)."""
    first = setup.combatants[0]
    combatants = [msgspec.structs.replace(first, policy="human"), *setup.combatants[1:]]
    seats = [SeatSetup(id="bot", combatants=[first.id])]
    return msgspec.structs.replace(setup, combatants=combatants, seats=seats), first.id


async def serve_throughput(workers: int, encounters: int, system_name: str) -> dict[str, float]:
    """``encounters`` AI fights created on a fresh store, then run by `firelane
    serve --workers N`: events per wall second until every one has ended. In
    REMOTE_PROBES of them one combatant is played from outside by a bot at its seat
    (TimedRemotePlayer): the p99 of its commands' round trips, window answers
    included, is the latency a frontend sees while the server is this busy."""
    from firelane.redisio.datadir import shared_server

    data = tempfile.mkdtemp(prefix="firelane-bench-serve-")
    system = get_system(system_name)
    # The bots run in this process, which holds what the earlier measures
    # built: frozen out of the collector, its full collections (pauses of
    # this process, not of the server) stay out of the round trips.
    gc.collect()
    gc.freeze()
    try:
        async with shared_server(data) as server:
            from firelane.redisio.datadir import DataDir

            client = await connect(server.url, max_connections=64)
            event_log = EventLog(client, "serve", server_key=bytes.fromhex(DataDir(data).secrets().log_key))
            names = [f"f{i:03d}" for i in range(encounters)]
            remote: list[TimedRemotePlayer] = []
            for i, name in enumerate(names):
                setup = demo_setup(system_name)
                if i < REMOTE_PROBES:
                    setup, combatant = with_remote_player(setup)
                    remote.append(TimedRemotePlayer(event_log, name, combatant, system, AIPolicy(system), block_ms=200))
                await create_encounter(event_log, name, setup, seed_of(i))
            serve = subprocess.Popen([sys.executable, "-m", "firelane", "serve", "--data-dir", data,
                                      "--port", "0", "--workers", str(workers)], cwd=REPO,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                async with trio.open_nursery() as nursery:
                    for player in remote:
                        nursery.start_soon(player.run)
                    with trio.fail_after(900):
                        pending = set(names)
                        while pending:
                            await trio.sleep(0.5)  # (the times come from the entries' ids, not from this loop)
                            for name in list(pending):
                                last = await client.execute("XREVRANGE", event_log.log_key(name), "+", "-", "COUNT", 1)
                                if last and dict(zip(last[0][1][::2], last[0][1][1::2])).get(b"t") == b"SeedRevealed":
                                    pending.discard(name)
                # Every event's time by the Redis clock (its entry id, ms), from
                # the first event of any fight: process start-up is not the
                # engine's rate, and the polling above costs nothing of it.
                times: list[int] = []
                for name in names:
                    after = "-"
                    while True:
                        page = await client.execute("XRANGE", event_log.log_key(name), after, "+", "COUNT", 5000)
                        times += [int(entry_id.split(b"-")[0]) for entry_id, _fields in page]
                        if len(page) < 5000:
                            break
                        after = b"(" + page[-1][0]
                times.sort()
                events = len(times)
                elapsed = (times[-1] - times[0]) / 1000
                # Up to the moment 90 % of the events were written: encounters
                # are not moved between running workers, so the last ones run
                # on whichever worker holds them while the other has finished.
                ninety = int(0.9 * events)
                elapsed_90 = (times[ninety - 1] - times[0]) / 1000
            finally:
                serve.terminate()
                serve.wait(timeout=60)
                await client.aclose()
    finally:
        shutil.rmtree(data, ignore_errors=True)
    gc.unfreeze()
    round_trips = [t for player in remote for t in player.round_trips]
    return {"events_per_s": events / elapsed, "events_per_s_90": ninety / elapsed_90, "round_trips": round_trips}


# --------------------------------------------------------------------------- idle: a play-by-post server

IDLE_ENCOUNTERS = 10_000
IDLE_ENCOUNTERS_QUICK = 1_000
IDLE_PER_CAMPAIGN = 100  # a play-by-post server holds many campaigns, each with a few fights running
IDLE_SEAT_PROBES = 200


def all_human(setup: EncounterSetup) -> EncounterSetup:
    """The setup with every combatant played by a person, one seat per side:
    once started, the encounter waits on a human for ever (no turn timer)."""
    combatants = [msgspec.structs.replace(c, policy="human") for c in setup.combatants]
    sides: dict[str, list[str]] = {}
    for combatant in combatants:
        sides.setdefault(combatant.side, []).append(combatant.id)
    seats = [SeatSetup(id=f"p{index + 1}", combatants=ids) for index, ids in enumerate(sides.values())]
    return msgspec.structs.replace(setup, combatants=combatants, seats=seats)


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (serve --workers N starts its workers as children)."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        try:
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            children = []
        pending += [int(child) for child in children]
    return found


def tree_rss_mb(pid: int) -> float:
    total_kb = 0
    for member in process_tree(pid):
        try:
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kb += int(line.split()[1])
        except OSError:
            pass
    return total_kb / 1024


def tree_cpu_s(pid: int) -> float:
    ticks = 0
    for member in process_tree(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


async def redis_ms(client) -> int:
    seconds, micros = await client.execute("TIME")
    return int(seconds) * 1000 + int(micros) // 1000


async def waiting_since(client, logs: dict[str, EventLog], names: list[tuple[str, str]], since_ms: int) -> int:
    """How many of the encounters have published their first seat's options
    (what the engine does when it goes to wait for the seats) at or after
    ``since_ms`` on Redis's clock: resumed, and waiting."""
    ready = 0
    for start in range(0, len(names), 1000):
        chunk = names[start:start + 1000]
        replies = await client.pipeline([("XREVRANGE", logs[campaign].options_key(encounter, "p1"), "+", "-", "COUNT", 1)
                                         for campaign, encounter in chunk])
        for reply in replies:
            if isinstance(reply, list) and reply and int(reply[0][0].split(b"-")[0]) >= since_ms:
                ready += 1
    return ready


async def wait_all_waiting(client, logs: dict[str, EventLog], names: list[tuple[str, str]], since_ms: int,
                           serve: subprocess.Popen, what: str, limit_s: float) -> float:
    began = time.perf_counter()
    with trio.fail_after(limit_s):
        while True:
            if serve.poll() is not None:
                raise SystemExit(f"bench: firelane serve stopped ({serve.returncode}) while {what}")
            ready = await waiting_since(client, logs, names, since_ms)
            if ready == len(names):
                return time.perf_counter() - began
            progress(f"  {what}: {ready:,} of {len(names):,} waiting after {time.perf_counter() - began:.0f} s")
            await trio.sleep(2)


async def wait_all_leased(client, names: list[tuple[str, str]], serve: subprocess.Popen, limit_s: float) -> None:
    """Until the new serve holds every encounter's sequencer lease (it takes the
    lease, then folds the log from its snapshot and waits: a restarted engine
    does not publish the seats' views again when they are of the same version)."""
    from firelane.actors.lease import lease_key

    began = time.perf_counter()
    mine = f":{serve.pid}:".encode()
    with trio.fail_after(limit_s):
        while True:
            if serve.poll() is not None:
                raise SystemExit(f"bench: firelane serve stopped ({serve.returncode}) while resuming")
            held = 0
            for start in range(0, len(names), 1000):
                replies = await client.pipeline([("GET", lease_key(campaign, encounter))
                                                 for campaign, encounter in names[start:start + 1000]])
                held += sum(1 for reply in replies if isinstance(reply, bytes) and mine in reply)
            if held == len(names):
                return
            progress(f"  resuming: {held:,} of {len(names):,} taken up after {time.perf_counter() - began:.0f} s")
            await trio.sleep(1)


def start_idle_serve(data: str, log_path: Path) -> subprocess.Popen:
    with open(log_path, "ab") as log_file:
        return subprocess.Popen([sys.executable, "-m", "firelane", "serve", "--data-dir", data, "--port", "0"],
                                cwd=REPO, stdout=subprocess.DEVNULL, stderr=log_file)


async def idle_scale(encounters: int, *, cpu_window_s: float, probes: int) -> dict[str, Any]:
    """``encounters`` Bolt & Blade fights, every combatant a person's, run by
    one `firelane serve` while each waits on a human: serve's memory, its
    Redis connections, its CPU while they wait, a seat's command round trip
    meanwhile, and a restart until every one is waiting again."""
    from firelane.actors.sequencer import fold_log
    from firelane.events.schemas import EndTurn
    from firelane.redisio.datadir import DataDir, shared_server

    async def probe_seats(first: int, count: int) -> list[float]:
        """Seats' EndTurn commands, one at a time, each timed until its answer is in the log."""
        round_trips = []
        for probe in range(first, first + count):
            campaign, encounter = names[(probe * 7919) % len(names)]
            event_log = logs[campaign]
            state, _cursors = await fold_log(event_log, encounter, system)
            seat = next(s.id for s in state.seats if state.active in s.combatants)
            command_id = f"probe-{probe}"
            last = await client.execute("XREVRANGE", event_log.log_key(encounter), "+", "-", "COUNT", 1)
            after = last[0][0].decode()
            payload = codec.encode_command(EndTurn(command_id=command_id, actor=state.active))
            sent = time.perf_counter()
            await event_log.submit(encounter, payload, seat=seat)
            answer = None
            with trio.fail_after(60):
                while answer is None:
                    reply = await client.execute("XREAD", "BLOCK", 5000, "STREAMS",
                                                 event_log.log_key(encounter), after)
                    for _stream, entries in reply or []:
                        for entry_id, flat in entries:
                            after = entry_id.decode()
                            fields = dict(zip(flat[::2], flat[1::2]))
                            if fields.get(b"c") == f"{seat}/{command_id}".encode():
                                answer = fields
                                break
            round_trips.append(time.perf_counter() - sent)
            if answer.get(b"t") == b"CommandRejected":
                raise SystemExit(f"bench: a probe's EndTurn was refused: {answer.get(b'd', b'')[:300]!r}")
            await trio.sleep(0.05)
        return round_trips

    data = tempfile.mkdtemp(prefix="firelane-bench-idle-")
    system = get_system("bolt-and-blade")
    setup = all_human(demo_setup("bolt-and-blade"))
    campaigns = [f"pbp{index:03d}" for index in range(max(1, encounters // IDLE_PER_CAMPAIGN))]
    names = [(campaigns[index % len(campaigns)], f"f{index:05d}") for index in range(encounters)]
    log_path = Path(data) / "serve-stderr.log"
    result: dict[str, Any] = {}
    try:
        async with shared_server(data) as server:
            client = await connect(server.url, max_connections=32, client_name="firelane-bench")
            key = bytes.fromhex(DataDir(data).secrets().log_key)
            logs = {campaign: EventLog(client, campaign, server_key=key) for campaign in campaigns}
            progress(f"idle: creating {encounters:,} encounters in {len(campaigns)} campaigns")
            began = time.perf_counter()
            limit = trio.CapacityLimiter(16)

            async def create(campaign: str, encounter: str) -> None:
                async with limit:
                    await create_encounter(logs[campaign], encounter, setup, seed_of(int(encounter[1:])))

            async with trio.open_nursery() as nursery:
                for campaign, encounter in names:
                    nursery.start_soon(create, campaign, encounter)
            result["idle_create_s"] = round(time.perf_counter() - began, 1)
            started_ms = await redis_ms(client)
            serve = start_idle_serve(data, log_path)
            try:
                progress("idle: firelane serve starts them all")
                result["idle_first_start_s"] = round(await wait_all_waiting(
                    client, logs, names, started_ms, serve, "starting", 1800), 1)
                await trio.sleep(5)  # the start's garbage collected, its buffers settled
                result["idle_serve_rss_mb"] = round(tree_rss_mb(serve.pid), 1)
                listed = (await client.execute("CLIENT", "LIST")).decode().splitlines()
                result["idle_redis_connections"] = sum(1 for line in listed if "name=firelane-bench" not in line)
                progress(f"idle: CPU of serve over {cpu_window_s:.0f} s while they all wait")
                cpu_before, wall_before = tree_cpu_s(serve.pid), time.perf_counter()
                await trio.sleep(cpu_window_s)
                result["idle_cpu_core_share"] = round(
                    (tree_cpu_s(serve.pid) - cpu_before) / (time.perf_counter() - wall_before), 3)
                progress(f"idle: {probes} seats' commands while they all wait")
                round_trips = await probe_seats(0, probes)
                result["idle_seat_p50_ms"] = round(percentile(round_trips, 0.5) * 1000, 1)
                result["idle_seat_p99_ms"] = round(percentile(round_trips, 0.99) * 1000, 1)
                progress("idle: restarting firelane serve (SIGTERM, then a new one)")
                serve.terminate()
                serve.wait(timeout=600)
                began = time.perf_counter()
                serve = start_idle_serve(data, log_path)
                await wait_all_leased(client, names, serve, 1800)
                result["idle_restart_s"] = round(time.perf_counter() - began, 1)
                after = await probe_seats(probes, 20)  # every one answers again (other encounters than before)
                result["idle_seat_max_ms_after_restart"] = round(max(after) * 1000, 1)
            finally:
                serve.terminate()
                try:
                    serve.wait(timeout=600)
                except subprocess.TimeoutExpired:
                    serve.kill()
                await client.aclose()
    finally:
        if log_path.exists() and log_path.stat().st_size:
            tail = log_path.read_text(errors="replace").splitlines()[-5:]
            progress("idle: serve's last log lines: " + " | ".join(line[:200] for line in tail))
        shutil.rmtree(data, ignore_errors=True)
    result["idle_encounters"] = encounters
    return result


# --------------------------------------------------------------------------- the run


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    quick = args.quick

    def wanted(section: str) -> bool:
        return not args.only or section in args.only

    fights = 2 if quick else 4
    repeats = 1 if quick else 3
    wall_repeats = 1 if quick else 3  # the wall-clock scaling figures (sim, serve) scatter most by run
    result: dict[str, Any] = {"quick": quick, "cores": os.cpu_count(), "load_avg_1min_start": os.getloadavg()[0],
                              "notes": {}}
    notes = result["notes"]
    data_dir = tempfile.mkdtemp(prefix="firelane-bench-")
    server = EmbeddedRedis(data_dir, persist=False)
    await server.astart()
    try:
        # 1. live vs pure, per system; copy share; decodes and evolves per event; Redis memory
        if wanted("live"):
            ratios: dict[str, list[float]] = {s: [] for s in SYSTEMS}
            signed_ratios: list[float] = []
            detail: dict[str, dict[str, Any]] = {}
            memory_events = 0
            # One unmeasured fight of each system on both first: the modules the
            # runtime imports on first use and the first calls' caches are then
            # paid by neither side's measured pass.
            progress("warming up: one fight of each system, live and pure")
            for system_name in SYSTEMS:
                await live_fights(server.url, "warm-up", system_name, 1)
                pure_fights(system_name, 1)
            for repeat in range(repeats):
                for system_name in SYSTEMS:
                    progress(f"live vs pure: {fights} {system_name} fights (run {repeat + 1}/{repeats})")
                    live = await live_fights(server.url, f"live{repeat}", system_name, fights)
                    pure = pure_fights(system_name, fights)
                    if live["logs"] != pure["logs"]:
                        raise SystemExit(f"bench: the live {system_name} logs differ from the pure loop's")
                    ratio = (live["cpu"] / live["events"]) / (pure["cpu"] / pure["events"])
                    ratios[system_name].append(ratio)
                    # The same fights with the log signed, right after the unsigned ones.
                    signed = await live_fights(server.url, f"signed{repeat}", system_name, fights,
                                               signer=LogSigner(SigningKey.generate()))
                    signed_ratios.append((signed["cpu"] / signed["events"]) / (live["cpu"] / live["events"]))
                    if repeat == 0:
                        memory_events += live["events"]
                        body_bytes = [len(body) for log in live["logs"] for body in log]
                        detail[system_name] = {
                            "events": live["events"],
                            "live_events_per_cpu_s": round(live["events"] / live["cpu"]),
                            "pure_events_per_cpu_s": round(pure["events"] / pure["cpu"]),
                            "live_decodes_per_event": round(live["decodes"] / live["events"], 2),
                            "live_evolves_per_event": round(live["evolves"] / live["events"], 2),
                            "pure_decodes_per_event": round(pure["decodes"] / pure["events"], 2),
                            "pure_evolves_per_event": round(pure["evolves"] / pure["events"], 2),
                            "copy_share_pure": round(pure["copy_cpu"] / pure["cpu"], 3),
                            "ai_share_pure": round(pure["ai_cpu"] / pure["cpu"], 3),
                            "redis_cpu_over_engine_cpu": round(live["redis_cpu"] / live["cpu"], 3),
                            "body_bytes": body_bytes,
                        }
                if repeat == 0:
                    result["redis_bytes_per_event"] = round(await redis_memory(server.url, "live0") / memory_events)
            for system_name in SYSTEMS:
                result[f"live_over_pure_cpu_{key_of(system_name)}"] = round(statistics.median(ratios[system_name]), 2)
            result["live_over_pure_cpu_max"] = max(result[f"live_over_pure_cpu_{key_of(s)}"] for s in SYSTEMS)
            result["live_signed_over_unsigned_cpu"] = round(statistics.median(signed_ratios), 3)
            all_bodies = [b for d in detail.values() for b in d.pop("body_bytes")]
            result["event_body_bytes_mean"] = round(statistics.fmean(all_bodies))
            result["live_decodes_per_event"] = round(
                sum(d["live_decodes_per_event"] * d["events"] for d in detail.values()) / memory_events, 2)
            result["live_evolves_per_event"] = round(
                sum(d["live_evolves_per_event"] * d["events"] for d in detail.values()) / memory_events, 2)
            result["redis_cpu_over_engine_cpu"] = round(
                statistics.fmean(d["redis_cpu_over_engine_cpu"] for d in detail.values()), 3)
            result["live_events_per_cpu_s_min"] = min(d["live_events_per_cpu_s"] for d in detail.values())
            for system_name in SYSTEMS:
                result[f"copy_share_pure_{key_of(system_name)}"] = detail[system_name]["copy_share_pure"]
            if repeats > 1:
                notes["live_over_pure_cpu"] = f"median of {repeats} runs, each ratio taken within its run"

        # 2. Bolt & Blade AI at 8 and 128 combatants
        if wanted("ai"):
            commands_128 = 40 if quick else 200
            progress(f"Bolt & Blade AI: 128 combatants, the first {commands_128} commands")
            big = pure_fights("bolt-and-blade", 1, setup=tiled_bolt_and_blade(), max_commands=commands_128)
            small = pure_fights("bolt-and-blade", fights)
            result["bb_ai_ms_per_command_8"] = round(1000 * small["ai_cpu"] / small["ai_calls"], 3)
            result["bb_ai_ms_per_command_128"] = round(1000 * big["ai_cpu"] / big["ai_calls"], 2)
            result["bb_ai_128_over_8"] = round(result["bb_ai_ms_per_command_128"] / result["bb_ai_ms_per_command_8"], 1)
            result["bb_ai_share_pure_8"] = round(small["ai_cpu"] / small["cpu"], 3)
            result["copy_share_pure_bb_128"] = round(big["copy_cpu"] / big["cpu"], 3)
            result["copy_share_pure_max"] = max(result[k] for k in (f"copy_share_pure_{key_of(s)}" for s in [*SYSTEMS, "bb-128"])
                                                 if k in result)
            notes["bb_128"] = (f"the demo tiled 4x4 (128 combatants, 96x64 squares); the first {commands_128} commands "
                               "of one fight; ms are CPU ms in choose_command per call")

        # 3. reaction windows
        if wanted("windows"):
            window_counts = {5: 40, 50: 30, 100: 20} if quick else {5: 100, 50: 100, 100: 100}
            for reactors, windows in window_counts.items():
                progress(f"reaction windows: {reactors} reactors, {windows} windows")
                latencies = await window_latency(server.url, reactors, windows)
                result[f"window_p50_ms_{reactors}"] = round(percentile(latencies, 0.5) * 1000, 2)
                result[f"window_p99_ms_{reactors}"] = round(percentile(latencies, 0.99) * 1000, 2)
            result["window_p50_growth_exponent"] = round(
                math.log(result["window_p50_ms_100"] / result["window_p50_ms_5"]) / math.log(100 / 5), 2)
            if quick:
                notes["windows"] = f"quick: {window_counts} windows per reactor count, so p99 is close to the maximum"

        # 4. replay and resume on a long log
        if wanted("replay"):
            length = 200_000 if quick else 1_000_000
            result.update(await replay_and_resume(server.url, length))
            if quick:
                notes["replay"] = (f"quick: measured on a {length:,}-event log; replay_1m_s is 1M events at that rate, "
                                   "resume_ms_1m is the resume on that log (it folds only the tail after the snapshot)")

        # 5. the workshop's draft saves and checks
        if wanted("workshop"):
            saves = 50 if quick else 200
            progress(f"workshop: {saves} draft saves of a 100x100 map with 50 combatants, checks every 5th")
            result.update(await workshop_round_trips(server.url, saves))
    finally:
        await server.astop()
        shutil.rmtree(data_dir, ignore_errors=True)

    # 5. firelane sim scaling
    if wanted("sim"):
        runs = 60 if quick else 200
        sim_ratios, sim_rates = [], []
        for repeat in range(wall_repeats):
            progress(f"firelane sim: {runs} Bolt & Blade demo fights on 1 worker, then on 2 (run {repeat + 1}/{wall_repeats})")
            one = await trio.to_thread.run_sync(sim_seconds, 1, runs)
            two = await trio.to_thread.run_sync(sim_seconds, 2, runs)
            sim_ratios.append(one / two)
            sim_rates.append(runs / one)
        result["sim_2_over_1"] = round(statistics.median(sim_ratios), 2)
        result["sim_2_over_1_range"] = [round(min(sim_ratios), 2), round(max(sim_ratios), 2)]
        result["sim_fights_per_s_1"] = round(statistics.median(sim_rates), 1)
        notes["sim"] = (f"wall time of the whole command (process start-up included), {runs} fights; the median of "
                        f"{wall_repeats} pairs of runs (1 worker, then 2), each ratio taken within its pair")

    # 6. the multi-worker server
    if wanted("workers"):
        encounters = 64
        ratios_90, ratios_whole, rates_1 = [], [], []
        round_trips: dict[int, list[float]] = {1: [], 2: []}
        for repeat in range(wall_repeats):
            progress(f"firelane serve: {encounters} concurrent Bolt & Blade fights on 1 worker, then on 2 "
                     f"(run {repeat + 1}/{wall_repeats})")
            one_worker = await serve_throughput(1, encounters, "bolt-and-blade")
            two_workers = await serve_throughput(2, encounters, "bolt-and-blade")
            ratios_90.append(two_workers["events_per_s_90"] / one_worker["events_per_s_90"])
            ratios_whole.append(two_workers["events_per_s"] / one_worker["events_per_s"])
            rates_1.append(one_worker["events_per_s"])
            round_trips[1] += one_worker["round_trips"]
            round_trips[2] += two_workers["round_trips"]
        result["workers_2_over_1"] = round(statistics.median(ratios_90), 2)
        result["workers_2_over_1_range"] = [round(min(ratios_90), 2), round(max(ratios_90), 2)]
        result["workers_2_over_1_whole_run"] = round(statistics.median(ratios_whole), 2)
        result["serve_events_per_s_1"] = round(statistics.median(rates_1))
        for workers, trips in round_trips.items():
            result[f"serve_remote_p50_ms_{workers}"] = round(percentile(trips, 0.5) * 1000, 1) if trips else float("nan")
            result[f"serve_remote_p99_ms_{workers}"] = round(percentile(trips, 0.99) * 1000, 1) if trips else float("nan")
            result[f"serve_remote_commands_{workers}"] = len(trips)
        notes["workers"] = (f"{encounters} Bolt & Blade demo fights created first, then run by firelane serve --workers N "
                            "on the same store; events per second from the first event of any until 90 % of all the events "
                            "were written (Redis's clock; _whole_run: to the last event, the tail where one worker has finished "
                            f"its encounters and the other has not included); in {REMOTE_PROBES} of them one combatant is played by a bot at its seat (from this "
                            "process, through its inbox): serve_remote_* are its commands' round trips, window answers "
                            f"included, while the server is busy with all 64. The median of {wall_repeats} pairs of runs "
                            "(1 worker, then 2), each ratio taken within its pair; the round trips of all the runs pooled")
    # 7. a play-by-post server: many encounters, each waiting on a person
    if wanted("idle"):
        encounters = IDLE_ENCOUNTERS_QUICK if quick else IDLE_ENCOUNTERS
        result.update(await idle_scale(encounters, cpu_window_s=15 if quick else 30,
                                       probes=IDLE_SEAT_PROBES // 2 if quick else IDLE_SEAT_PROBES))
        notes["idle"] = (f"{encounters:,} Bolt & Blade demo fights (every combatant a person's, one seat a side, "
                         f"{IDLE_PER_CAMPAIGN} a campaign) run by one firelane serve, each waiting on a person"
                         + (" (quick: 1,000, not the goal's 10,000)" if quick else "")
                         + "; rss and CPU of serve's process; Redis connections: every client but the bench's; CPU: "
                         "serve's over the window, in cores; seat p99: a seat's EndTurn submitted to its inbox until "
                         "its answer is read from the log, one at a time, while all the others wait; restart: SIGTERM, "
                         "then a new serve until it holds every encounter's lease (it then folds the log from its "
                         "snapshot and waits; a restarted engine writes no seat views of the same version again), and "
                         "idle_seat_max_ms_after_restart: the slowest of 20 seats' commands in other encounters "
                         "right after. The load average says how busy the shared machine was")
    if wanted("live"):
        result["live_detail"] = detail
    result["load_avg_1min_end"] = os.getloadavg()[0]
    notes["load_avg"] = "the machine's 1-minute load average at the start and the end (2 cores; above 1, others were using it)"
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, same keys, under 2 minutes")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--only", type=lambda text: text.split(","), default=[], metavar="SECTION[,SECTION]",
                        help=f"measure these sections only (of {', '.join(SECTIONS)}); figures are ratios within one run, "
                             "so compare a section's figures only with the same section's")
    args = parser.parse_args()
    unknown = [name for name in args.only if name not in SECTIONS]
    if unknown:
        parser.error(f"--only: no section {', '.join(unknown)} (the sections: {', '.join(SECTIONS)})")
    began = time.perf_counter()
    result = trio.run(measure, args)
    result["bench_seconds"] = round(time.perf_counter() - began, 1)
    if args.json:
        sys.stdout.buffer.write(msgspec.json.format(msgspec.json.encode(result), indent=2) + b"\n")
        return
    for key, value in result.items():
        if isinstance(value, dict):
            print(f"{key}:")
            for inner, item in value.items():
                print(f"    {inner}: {item}")
        else:
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
