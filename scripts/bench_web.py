#!/usr/bin/env python3
"""The table page's two figures, measured on a real `firelane serve` and Debian's chromium.

Usage:
    .venv/bin/python scripts/bench_web.py [--json] [--runs 5] [--clients 20] [--rate 25] [--turns 400]

- ``web_first_paint_ms_500``: milliseconds from navigation start until the
  page has drawn an ended Bolt & Blade encounter of ``web_first_paint_events``
  (>= 500) events: map, initiative and the narration's newest 300 lines (its
  window; older lines come on demand) (the page's ``window.__table.firstPaint``,
  taken in the animation frame after its first full render). A fresh browser
  context each run (nothing cached); the median of ``--runs`` (and ``_max``).
- ``web_first_paint_ms_10k`` (and ``_max``): the same for an ended fight of
  ``web_first_paint_events_10k`` (>= 10,000) events (the demo, everyone too
  tough to fall, over many rounds); ``web_first_paint_ms_10k_cold``: the
  first of those loads, when the server folds and narrates the whole log for
  its first view (the others find that fold made).
- ``ws_event_p99_ms_20`` (and ``_p50``, ``_max``): for each event and each of
  ``--clients`` WebSocket clients connected at once, the time from the
  event's append (its Redis stream entry ID is the server's clock, in ms) to
  the client receiving it. The load: every combatant of the table setup is a
  player's, and the bench ends the running turn through its player's inbox
  ``--rate`` times a second (``--turns`` in all): each turn is TurnEnded and
  TurnStarted (and a round's start), so the load is steady and alike every run.
- ``ws_page_event_p99_ms`` (and ``_p50``, ``_max``): the same for one real
  page connected beside them (its socket's receive times), and
  ``ws_page_caught_up``: whether the page drew the last event's narration line.

- ``builder_open_ms_100x100_50`` (and ``_max``): the GM's encounter builder
  opening a draft of a 100×100 map with 50 tokens (``builder_open``);
  ``--builder-only`` measures just that.

The clients run in this process (trio-websocket), the server in its own; all
on this 2-core machine, so the clients' own work is in the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec
import trio
from trio_websocket import open_websocket_url

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from firelane.engine.registry import demo_setup  # noqa: E402
from firelane.actors.store import open_store  # noqa: E402

OWNER = {"kell": "alice", "vass": "bruno", "ash": "cult", "mott": "cult"}  # seats of the fan-out table
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


def say(text: str) -> None:
    print(f"bench_web: {text}", file=sys.stderr, flush=True)


def firelane(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "firelane", *args, "--data-dir", str(data)],
                          capture_output=True, text=True, cwd=REPO, timeout=300)


class Server:
    def __init__(self, data: Path) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "firelane", "serve", "--data-dir", str(data),
                                         "--port", "0"], stderr=subprocess.PIPE, text=True, cwd=REPO)
        assert self.process.stderr is not None
        for line in self.process.stderr:
            match = re.search(r"API and table at (http://\S+?)/ ", line)
            if match:
                self.api = match.group(1)
                break
        else:
            raise SystemExit("bench_web: firelane serve did not start")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)


def create(data: Path, encounter: str, *args: str) -> dict[str, dict[str, str]]:
    result = firelane(data, "create", encounter, *args, "--json")
    if result.returncode:
        raise SystemExit(f"bench_web: create failed: {result.stderr}")
    return {s["seat"]: s for s in json.loads(result.stdout)["seats"]}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]


def wait_ended(api: str, encounter: str, token: str, timeout: float = 120) -> int:
    import httpx

    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        body = httpx.get(f"{api}/api/campaigns/default/encounters/{encounter}/state",
                         headers={"Authorization": f"Bearer {token}"}, timeout=10).json()
        if body["state"] and body["state"]["ended"] and body["version"] and body["state"]["seed_revealed"]:
            return int(body["version"])
        time.sleep(0.2)
    raise SystemExit("bench_web: the encounter did not end")


NARRATION_WINDOW = 300  # the lines the page draws at first (panels.js WINDOW)


def paint_times(browser, link: str, events: int, runs: int) -> list[float]:
    """``runs`` first paints of the page at ``link`` (an ended fight of ``events`` events), each in a fresh context."""
    times = []
    for _ in range(runs):
        context = browser.new_context(viewport={"width": 1440, "height": 880})
        page = context.new_page()
        page.goto(link)
        page.wait_for_function("() => window.__table && window.__table.firstPaint", timeout=60_000)
        drawn = page.evaluate("() => document.querySelectorAll('.narration .line').length")
        if drawn != min(events, NARRATION_WINDOW):
            raise SystemExit(f"bench_web: the page drew {drawn} lines of {events}")
        times.append(page.evaluate("() => window.__table.firstPaint"))
        context.close()
    return times


def first_paint(browser, server: Server, data: Path, runs: int) -> dict[str, object]:
    seed, seats = 0, None
    for seed in range(3, 40):  # the first demo seed whose fight has at least 500 events
        seats = create(data, f"paint-{seed}", "--demo-setup", "bolt-and-blade", "--seed", str(seed), "--reproducible-dice")
        events = wait_ended(server.api, f"paint-{seed}", seats["spectator"]["token"])
        if events >= 500:
            break
    assert seats is not None
    times = paint_times(browser, seats["spectator"]["link"], events, runs)
    say(f"first paint of {events} events: {', '.join(f'{t:.0f}' for t in times)} ms")
    return {"web_first_paint_ms_500": round(statistics.median(times), 1), "web_first_paint_ms_500_max": round(max(times), 1),
            "web_first_paint_events": events}


def first_paint_long(browser, server: Server, data: Path, runs: int, tmp: Path) -> dict[str, object]:
    """The first paint of an ended fight of at least 10,000 events: the demo with
    everyone too tough to fall, fought by the AI over many rounds."""
    setup = msgspec.to_builtins(demo_setup("bolt-and-blade"))
    for combatant in setup["combatants"]:
        combatant["sheet"]["vitality"] = 1_000_000
    setup["settings"]["max_rounds"] = 150
    path = tmp / "long.json"
    path.write_text(json.dumps(setup))
    seats = create(data, "paint-long", "--setup", str(path), "--seed", "long", "--reproducible-dice")
    events = wait_ended(server.api, "paint-long", seats["spectator"]["token"], timeout=600)
    if events < 10_000:
        raise SystemExit(f"bench_web: the long fight has {events} events, fewer than 10,000")
    times = paint_times(browser, seats["spectator"]["link"], events, runs + 1)
    say(f"first paint of {events} events: {', '.join(f'{t:.0f}' for t in times)} ms (the first cold)")
    return {"web_first_paint_ms_10k": round(statistics.median(times[1:]), 1), "web_first_paint_ms_10k_max": round(max(times[1:]), 1),
            "web_first_paint_ms_10k_cold": round(times[0], 1), "web_first_paint_events_10k": events}


async def fan_out(server: Server, data: Path, seats: dict, clients: int, rate: float, count: int) -> dict[str, object]:
    encounter = "fanout"
    base = server.api.replace("http://", "ws://") + f"/api/campaigns/default/encounters/{encounter}/ws"
    token = seats["spectator"]["token"]
    received: list[dict[int, float]] = [dict() for _ in range(clients)]
    async with open_store(data_dir=data, client_name="bench-web") as store:
        event_log = store.event_log("default")
        start_version = await event_log.version(encounter)
        ready = trio.Event()
        connected = 0
        final: list[int] = []

        turns: list[str] = []  # who starts a turn, in order: client 0 tells the players' driver
        turn_seen = trio.Event()

        async def client(index: int) -> None:
            nonlocal connected, turn_seen
            async with open_websocket_url(f"{base}?token={token}&after={start_version}") as socket:
                connected += 1
                if connected == clients:
                    ready.set()
                got = received[index]
                while True:
                    message = await socket.get_message()
                    now = time.time() * 1000
                    got[int(message[5:message.index(",")])] = now  # '{"n":123,...': the version, without a full parse
                    if index == 0 and '"type":"TurnStarted"' in message:
                        turns.append(json.loads(message)["data"]["combatant"])
                        turn_seen.set()
                        turn_seen = trio.Event()

        async def players(cancel: trio.CancelScope) -> None:
            """Each player ends the running turn, ``rate`` turns a second at most:
            every turn is TurnEnded and TurnStarted (and a round's start), the
            bookkeeping of a real fight, through the same sequencer and log."""
            await ready.wait()
            active = (await state_of())["active"]
            step = 1 / rate
            began = trio.current_time()
            for i in range(count):
                seen = len(turns)
                command = {"type": "EndTurn", "command_id": f"bench-{i}", "actor": active}
                await event_log.submit(encounter, json.dumps(command).encode(), seat=OWNER[active])
                while len(turns) == seen:
                    await turn_seen.wait()
                active = turns[-1]
                await trio.sleep_until(began + (i + 1) * step)
            final.append(await event_log.version(encounter))
            while any(max(got, default=0) < final[0] for got in received):
                await trio.sleep(0.05)
            cancel.cancel()

        async def state_of() -> dict:
            from firelane.projections.turn_state import fold_stream, log_system

            system = await log_system(event_log, encounter)
            state = system.initial_state()
            await fold_stream(system, state, event_log, encounter)
            return {"active": state.active}

        with trio.fail_after(120 + 2 * count / rate):
            async with trio.open_nursery() as nursery:
                for index in range(clients):
                    nursery.start_soon(client, index)
                nursery.start_soon(players, nursery.cancel_scope)
        appended = {s.version: int(s.entry_id.split("-")[0]) for s in await event_log.read(encounter)
                    if s.version > start_version}
    latencies = [got[n] - appended[n] for got in received for n in got if n in appended]
    seconds = (max(appended.values()) - min(appended.values())) / 1000 or 1.0
    return {"appended": appended, "latencies": latencies, "start": start_version, "last": final[0], "seconds": seconds}


BIG_MAP = 100  # squares a side of the builder's map
BIG_MAP_TOKENS = 50


def builder_open(browser, server: Server, data: Path, runs: int) -> dict[str, object]:
    """Milliseconds from navigation start until the builder has drawn a draft of a 100×100 map with 50 tokens
    (and 285 walls): the page's ``window.__workshop.mapDrawn``, in the animation frame after its first render,
    after loading its modules, the session and the draft. The GM is signed in once (its cookie in a browser
    context's storage state); each run a fresh context (nothing cached); the median of ``runs`` (and ``_max``)."""
    import httpx

    token = firelane(data, "campaign", "token", "--campaign", "bench").stdout
    token = (re.search(r"#gm=(\S+)", token).group(1) if "#gm=" in token else token.strip().split()[-1])
    api = f"{server.api}/api/workshop/campaigns/bench"
    auth = {"Authorization": f"Bearer {token}"}
    form = httpx.get(f"{api}/systems/bolt-and-blade/form", headers=auth, timeout=30).json()
    archetypes = form["archetypes"]
    combatants = [{"id": f"npc-{n}", "name": f"{archetypes[n % len(archetypes)]['name']} {n + 1}",
                   "side": "enemies" if n % 2 else "party", "position": [(n * 7) % BIG_MAP, 10 + (n * 13) % 80],
                   "policy": "ai", "sheet": archetypes[n % len(archetypes)]["sheet"]} for n in range(BIG_MAP_TOKENS)]
    walls = [[50, y] for y in range(0, 100) if y % 10] + [[x, 95] for x in range(0, 100) if x != 50] + \
            [[x, y] for x in range(20, 30) for y in range(30, 70) if x in (20, 29) or y in (30, 69)]
    setup = {"system": "bolt-and-blade", "name": "The big map", "combatants": combatants,
             "terrain": {"width": BIG_MAP, "height": BIG_MAP, "square_size": 5, "unit": "ft", "walls": walls,
                         "cover": [{"x": 40 + n, "y": 40, "level": "heavy", "facing": [[0, 1]]} for n in range(20)]}}
    made = httpx.post(f"{api}/drafts", headers=auth, json={"id": "big-map", "setup": setup}, timeout=30)
    if made.status_code != 201:
        raise SystemExit(f"bench_web: the big draft was refused: {made.text}")
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(f"{server.api}/workshop/bench#gm={token}")
    page.wait_for_selector(".ws-home", timeout=30_000)
    signed_in = context.storage_state()
    context.close()
    times = []
    for _ in range(runs):
        context = browser.new_context(viewport={"width": 1440, "height": 900}, storage_state=signed_in)
        page = context.new_page()
        page.goto(f"{server.api}/workshop/bench/build/big-map")
        page.wait_for_function("() => window.__workshop && window.__workshop.mapDrawn", timeout=60_000)
        drawn = page.evaluate("() => document.querySelectorAll('svg.ws-map [data-token]').length")
        if drawn != BIG_MAP_TOKENS:
            raise SystemExit(f"bench_web: the builder drew {drawn} tokens of {BIG_MAP_TOKENS}")
        times.append(page.evaluate("() => window.__workshop.mapDrawn"))
        context.close()
    return {"builder_open_ms_100x100_50": round(statistics.median(times), 1),
            "builder_open_ms_100x100_50_max": round(max(times), 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    parser.add_argument("--runs", type=int, default=5, help="page loads for the first-paint figure")
    parser.add_argument("--clients", type=int, default=20, help="WebSocket clients besides the page")
    parser.add_argument("--rate", type=float, default=25.0, help="turns ended per second (2-3 events each)")
    parser.add_argument("--turns", type=int, default=400, help="turns ended while the clients listen")
    parser.add_argument("--builder-only", action="store_true", help="only the builder's figure (builder_open_ms_100x100_50)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("FIRELANE_CHROMIUM", "/usr/bin/chromium")
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="firelane-bench-web-") as tmp, sync_playwright() as playwright:
        data = Path(tmp) / "data"
        server = Server(data)
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            results.update(builder_open(browser, server, data, args.runs))
            if args.builder_only:
                print(json.dumps(results) if args.json else "\n".join(f"{k}: {v}" for k, v in results.items()))
                return 0
            results.update(first_paint(browser, server, data, args.runs))
            results.update(first_paint_long(browser, server, data, args.runs, Path(tmp)))
            setup = json.loads((REPO / "docs/examples/bolt-and-blade-table.json").read_text())
            for combatant in setup["combatants"]:
                combatant["policy"] = "human"  # nothing moves but the GM's adjustments
            setup["seats"].append({"id": "cult", "role": "player", "combatants": ["ash", "mott"]})
            setup["settings"]["max_rounds"] = 100_000
            path = Path(tmp) / "fanout.json"
            path.write_text(json.dumps(setup))
            seats = create(data, "fanout", "--setup", str(path))
            wait_started = time.monotonic()
            while firelane(data, "replay", "fanout", "--state-only").stdout.count("active:") == 0:
                if time.monotonic() - wait_started > 30:
                    raise SystemExit("bench_web: the fan-out encounter did not start")
                time.sleep(0.2)
            page = browser.new_context(viewport={"width": 1440, "height": 880}).new_page()
            page.goto(seats["spectator"]["link"])
            page.wait_for_function("() => window.__table && window.__table.firstPaint", timeout=30_000)
            profiler = None
            if os.environ.get("BENCH_WEB_PROFILE"):  # py-spy on the server during the fan-out (a developer's aid)
                profiler = subprocess.Popen(["py-spy", "record", "-f", "speedscope", "-o", os.environ["BENCH_WEB_PROFILE"],
                                             "--pid", str(server.process.pid), "--nonblocking"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            out = trio.run(fan_out, server, data, seats, args.clients, args.rate, args.turns)
            if profiler is not None:
                profiler.send_signal(2)
                profiler.wait(timeout=60)
            page.wait_for_function(f"() => window.__table.conn.lastLine >= {out['last']}", timeout=30_000)
            arrivals = page.evaluate("() => window.__table.conn.arrivals")
            page_latencies = [at - out["appended"][n] for n, at in arrivals if n in out["appended"]]
            lat = out["latencies"]
            events = len(out["appended"])
            if len(lat) != args.clients * events or len(page_latencies) != events:
                raise SystemExit(f"bench_web: {len(lat)} of {args.clients * events} client deliveries, "
                                 f"{len(page_latencies)} of {events} page deliveries")
            results.update({
                f"ws_event_p50_ms_{args.clients}": round(percentile(lat, 0.5), 1),
                f"ws_event_p99_ms_{args.clients}": round(percentile(lat, 0.99), 1),
                f"ws_event_max_ms_{args.clients}": round(max(lat), 1),
                "ws_page_event_p50_ms": round(percentile(page_latencies, 0.5), 1),
                "ws_page_event_p99_ms": round(percentile(page_latencies, 0.99), 1),
                "ws_page_event_max_ms": round(max(page_latencies), 1),
                "ws_page_caught_up": True,
                "ws_events": events, "ws_turns_per_s": args.rate,
                "ws_events_per_s": round(events / out["seconds"], 1), "ws_clients": args.clients,
                "load_average_1m": round(os.getloadavg()[0], 2),
            })
        finally:
            browser.close()
            server.stop()
    if args.json:
        print(json.dumps(results))
    else:
        for key, value in results.items():
            print(f"{key:<32} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
