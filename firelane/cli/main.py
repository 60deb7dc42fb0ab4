"""`firelane`: serve, run, watch, replay and audit fights.

    firelane serve                       the campaign store's server: runs every encounter, HTTP/WebSocket API
    firelane demo [--system NAME]        a real fight between two AI squads
    firelane run ENCOUNTER [--setup F]   create (or resume) an encounter and run it to the end
    firelane create ENCOUNTER --setup F  create an encounter for `firelane serve` to run; print its seats
    firelane seats ENCOUNTER             each seat's secret token, join link and Redis user
    firelane options ENCOUNTER --seat S  what a seat may do now (moves, attacks with odds, window answers...)
    firelane replay ENCOUNTER [--at V]   narrate a stored fight; show the state at version V
    firelane watch ENCOUNTER             narrate an encounter live while another engine runs it
    firelane audit ENCOUNTER [--verify]  every roll with its modifiers and rule IDs; recompute every die
    firelane encounters [--page P]       the campaign's roster of encounters
    firelane characters [ID]             the campaign's characters; one character's history
    firelane rest CHARACTER --days N     downtime between fights, rolled with verifiable dice
    firelane campaign export|import      move a whole campaign (verifiable file) between stores
    firelane submit ENCOUNTER JSON       send a command as a frontend would, and show the answer
    firelane schema [--system S]         JSON Schema of the commands (or --events) for frontends
    firelane sim SETUP --runs 1000       Monte-Carlo balance runs: win rates, rounds, damage, reactions

Redis: ``--redis URL`` or ``FIRELANE_REDIS_URL``; without either, the data
directory's own redis-server (``--data-dir``, ``FIRELANE_DATA_DIR``, default
~/.local/share/firelane), started when none runs and stopped by the last
command to leave. With `firelane serve` running, `run` and `demo` leave the
encounter to it and narrate.
"""

from __future__ import annotations

if __name__ == "__main__":  # `python -m firelane.cli.main`: the entry point that answers signals while loading
    import sys

    from firelane.__main__ import main as _main

    sys.exit(_main())

import argparse
import hashlib
import signal
import sys
import time
from contextlib import aclosing
from typing import Any, NoReturn, Union

import msgspec
import trio

from firelane.actors.lease import EncounterBusy
from firelane.actors.runtime import TaskKeptFailing, default_policies, run_encounter
from firelane.actors.seating import acl_user
from firelane.actors.sequencer import (
    EncounterExists,
    command_key,
    create_encounter,
    encounter_setup,
    ensure_encounter,
    seat_tokens,
)
from firelane.engine.registry import UnknownSystem, demo_setup, get_system, system_names
from firelane.engine.seats import ENGINE_SEAT, GM, default_seats, seat_by_id, seat_controlling
from firelane.engine.setup_check import SetupError, decode_setup
from firelane.events import codec
from firelane.events.log import EventLog, InboxClosed, InboxFull
from firelane.events.schemas import CommandRejected, EncounterSetup, EncounterStarted, SeatSetup, SeedRevealed
from firelane.cli import campaign as campaign_cli, signals as stop_signals
from firelane.cli import sim as sim_command
from firelane.actors.store import CliError, ServeInfo, Store, open_store
from firelane.engine.core import Rejected
from firelane.events.options_schemas import SeatOptions
from firelane.projections.narration import REPRODUCIBLE_DICE_WARNING, Narrator, colour_enabled, describe_options, print_line
from firelane.web.demo_server import DEFAULT_PORT, serve_table, table_link
from firelane.logs import configure_logging
from firelane.projections.audit import Verifier, audit_entries, revealed_seed, verify
from firelane.projections.replay import stream_frames
from firelane.projections.roster import roster_page
from firelane.projections.turn_state import fold_stream, log_system, system_of
from firelane.redisio import RedisConnectionError, RedisError, RedisServerError


def seed_from(text: str | None) -> bytes:
    """A 32-byte seed from any text (an int, a word, hex); random when not given.

    A seed from a text is as guessable as the text (a player found ``7341`` in
    7,342 tries from the published commitment): only for reproducible dice."""
    if text is None:
        from firelane.engine.dice import new_seed

        return new_seed()
    return hashlib.blake2b(text.encode(), digest_size=32, person=b"firelane-cli").digest()


def chosen_seed(text: str | None, reproducible: bool, *, implied: bool = False) -> tuple[bytes, bool]:
    """The seed of a new fight or rest and whether its dice are reproducible:
    secret random dice, unless the creator gave a seed text and asked for
    reproducible dice (``implied``: `firelane demo`, whose --seed asks for it)."""
    if text is None:
        if reproducible:
            raise CliError("--reproducible-dice needs --seed TEXT (without a seed text the dice are secret and random)")
        return seed_from(None), False
    if not (reproducible or implied):
        raise CliError("--seed TEXT makes dice anyone who knows or guesses the text can predict: add --reproducible-dice "
                       "to allow it (the log and every view of it then say so), or leave --seed out for secret random dice")
    return seed_from(text), True


def seconds(text: str) -> float:
    """An argparse type: a duration in seconds, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 seconds or more, not {text}")
    return value


def allowed_host(text: str) -> str:
    """An argparse type: a host name or IP address (no scheme, port or path)."""
    from firelane.web.guard import host_name

    try:
        return host_name(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def tcp_port(text: str) -> int:
    """An argparse type: a TCP port number, 0-65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is from 0 to 65535, not {value}")
    return value


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _store(args: argparse.Namespace, *, announce: bool = True):
    return open_store(redis_url=args.redis, data_dir=args.data_dir, announce=_stderr if announce else None)


async def _narrate_live(event_log: EventLog, encounter: str, narrator: Narrator, pace: float, *, print_from: int = 0,
                        quiet: bool = False) -> Any:
    """Follow the log and print each event (from version ``print_from`` on)
    until the seed is revealed; returns the final state."""
    system = None
    state = None
    async with aclosing(event_log.follow(encounter, "0-0", block_ms=500)) as batches:
        async for batch in batches:
            for stored in batch:
                event = codec.decode_event(stored)
                if system is None:
                    system = system_of([stored])
                    state = system.initial_state()
                    state.encounter = encounter
                system.evolve(state, event)
                if stored.version >= print_from and not quiet:
                    print_line(narrator.line(stored.version, event, state))
                    if pace:
                        await trio.sleep(pace)
                if isinstance(event, SeedRevealed):
                    return state
    return state


def _summary(state: Any, events: int, elapsed: float) -> str:
    standing = [c.name for c in state.combatants.values() if not c.out_of_fight]
    return (
        f"{events} events in {elapsed:.2f}s; {state.round} rounds; winner: {state.winner or 'none'} "
        f"({state.end_reason}); still standing: {', '.join(standing) or 'no one'}"
    )


def _narrator(args: argparse.Namespace) -> Narrator:
    return Narrator(colour=colour_enabled(sys.stdout, False if args.no_color else None), details=args.details)


async def _run_live(args: argparse.Namespace, store: Store, event_log: EventLog, encounter: str, quiet: bool) -> int:
    """Run the encounter's engine here, or, when `firelane serve` runs this
    store, leave it to the server and narrate it."""
    meta = await event_log.encounter_meta(encounter)
    if meta is None:
        raise CliError(f"encounter {encounter!r} does not exist in campaign {event_log.campaign!r}")
    system = get_system(msgspec.json.decode(meta)["system"])
    narrator = _narrator(args)
    began = time.perf_counter()
    serve = await store.serve_info()
    if serve is not None:
        _stderr(f"firelane serve (pid {serve.pid}) runs it; watch it in a browser: {_watch_link(serve, event_log, encounter, await seat_tokens(event_log, encounter))}")
        state = await _narrate_live(event_log, encounter, narrator, args.pace, quiet=quiet)
    else:
        start = await encounter_setup(event_log, encounter)
        policies = default_policies(system, {c.id: c.policy for c in start.combatants})
        if args.pace:
            # Watchable in a browser: this process serves the table while the
            # fight runs, the AI paced (web/demo_server.py).
            async with trio.open_nursery() as web:
                api = await serve_table(store, web)
                _stderr(f"watch it in a browser: {table_link(api, event_log.campaign, encounter, (await seat_tokens(event_log, encounter)).get('spectator', ''))}")
                observers = [] if quiet else [lambda: _narrate_live(event_log, encounter, narrator, 0)]
                state = await run_encounter(event_log, encounter, system, policies, observers=observers, pace=args.pace)
                web.cancel_scope.cancel()
        else:
            observers = [] if quiet else [lambda: _narrate_live(event_log, encounter, narrator, args.pace)]
            state = await run_encounter(event_log, encounter, system, policies, observers=observers)
    elapsed = time.perf_counter() - began
    print(_summary(state, state.version, elapsed), flush=True)
    spectator = (await seat_tokens(event_log, encounter)).get("spectator", "")
    if serve is not None:
        print(f"replay it in a browser: {table_link(serve.api, event_log.campaign, encounter, spectator, replay=True)}", flush=True)
    else:
        print(f"replay it in a browser: firelane serve, then open "
              f"{table_link(f'http://127.0.0.1:{DEFAULT_PORT}', event_log.campaign, encounter, spectator, replay=True)}"
              + ("" if args.pace else "   (watch one live: --pace 0.5)"), flush=True)
    return 0


def _watch_link(serve: ServeInfo, event_log: EventLog, encounter: str, tokens: dict[str, str]) -> str:
    token = tokens.get("spectator", "")
    return f"{serve.api}/table/{event_log.campaign}/{encounter}#token={token}"


def _encounter_id(prefix: str) -> str:
    return f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{int(time.time() * 1000) % 1000:03d}"


def _read_setup(path: str) -> EncounterSetup:
    try:
        with open(path, "rb") as handle:
            raw = handle.read(2 * 1024 * 1024)
    except OSError as exc:
        raise CliError(f"cannot read setup {path}: {exc.strerror}") from None
    return decode_setup(raw, source=path)


async def cmd_demo(args: argparse.Namespace) -> int:
    system = get_system(args.system)
    setup = demo_setup(args.system)
    # A demo is a showcase of the AI against itself: its --seed asks for a fight anyone can replay.
    seed, reproducible = chosen_seed(args.seed, args.reproducible_dice, implied=True)
    encounter = args.encounter or _encounter_id(f"demo-{system.name}")
    async with _store(args) as store:
        event_log = store.event_log(args.campaign)
        try:
            await create_encounter(event_log, encounter, setup, seed, reproducible_dice=reproducible)
        except EncounterExists as exc:
            raise CliError(f"{exc}; resume it with: firelane run {encounter}") from None
        _stderr(f"encounter {encounter} in campaign {args.campaign} — {system.title}")
        if reproducible:
            _stderr(REPRODUCIBLE_DICE_WARNING)
        code = await _run_live(args, store, event_log, encounter, quiet=args.quiet)
        report = verify(await event_log.read(encounter, include_invalid=True))
        print(f"audit: {report.rolls} rolls, {report.dice} dice recomputed from the revealed seed: "
              f"{'all verified' if report.ok else 'PROBLEMS: ' + '; '.join(report.problems[:5])}")
        print(f"replay: firelane replay {encounter} --campaign {args.campaign}   audit: firelane audit {encounter} --verify --campaign {args.campaign}")
        return code if report.ok else 1


async def cmd_run(args: argparse.Namespace) -> int:
    setup = None
    if args.setup:
        setup = _read_setup(args.setup)
    elif args.demo_setup:
        setup = demo_setup(args.demo_setup)
    seed, reproducible = chosen_seed(args.seed, args.reproducible_dice)
    async with _store(args) as store:
        event_log = store.event_log(args.campaign)
        if await event_log.encounter_meta(args.encounter) is None:
            if setup is None:
                raise CliError(f"encounter {args.encounter!r} does not exist; give --setup FILE or --demo-setup SYSTEM to create it")
            await ensure_encounter(event_log, args.encounter, setup, seed, reproducible_dice=reproducible)
            if reproducible:
                _stderr(REPRODUCIBLE_DICE_WARNING)
        return await _run_live(args, store, event_log, args.encounter, quiet=args.quiet)


async def cmd_create(args: argparse.Namespace) -> int:
    """Create an encounter without running it (`firelane serve` runs it, or a
    later `firelane run`), and print its seats."""
    if args.setup:
        setup = _read_setup(args.setup)
    elif args.demo_setup:
        setup = demo_setup(args.demo_setup)
    else:
        raise CliError("give --setup FILE or --demo-setup SYSTEM")
    seed, reproducible = chosen_seed(args.seed, args.reproducible_dice)
    async with _store(args) as store:
        event_log = store.event_log(args.campaign)
        try:
            await create_encounter(event_log, args.encounter, setup, seed, reproducible_dice=reproducible)
        except EncounterExists as exc:
            raise CliError(str(exc)) from None
    _stderr(f"created encounter {args.encounter} in campaign {args.campaign}"
            + (f"; {REPRODUCIBLE_DICE_WARNING}" if reproducible else ""))
    return await cmd_seats(args)


async def _check_stored(event_log: EventLog, encounter: str) -> tuple[int, Any]:
    """The log's length and rule system (loading it makes its events decodable);
    a clear error if the encounter has no events."""
    length = await event_log.version(encounter)
    if not length:
        if await event_log.encounter_meta(encounter) is not None:
            raise CliError(f"encounter {encounter!r} has not started: its log is empty until an engine runs it "
                           f"(firelane serve, or firelane run {encounter})")
        raise CliError(f"encounter {encounter!r} does not exist in campaign {event_log.campaign!r} "
                       f"(firelane encounters --campaign {event_log.campaign} lists them)")
    return length, await log_system(event_log, encounter)


def _report_invalid(event_log_entries: list) -> None:
    for stored in event_log_entries:
        if stored.problem.startswith("log tampered"):
            print(f"warning: {stored.problem} (log entry {stored.entry_id})", file=sys.stderr)
        elif stored.problem:
            print(f"warning: log entry {stored.entry_id} skipped: {stored.problem}", file=sys.stderr)


def _state_table(state: Any) -> list[str]:
    lines = [f"state at version {state.version}: round {state.round}, active: {state.active or '-'}"
             f"{', window ' + str(state.window.window) + ' open' if state.window else ''}"
             f"{', ENDED: ' + str(state.winner) + ' (' + state.end_reason + ')' if state.ended else ''}"]
    base = {"id", "name", "side", "position", "initiative", "out_of_fight", "reaction_used", "conditions", "policy"}
    for c in state.combatants.values():
        extra = {k: getattr(c, k) for k in c.__struct_fields__ if k not in base and isinstance(getattr(c, k), (int, str, bool)) and not isinstance(getattr(c, k), bool)}
        status = "DOWN" if c.out_of_fight else "up"
        conditions = ",".join(c.conditions) or "-"
        extras = " ".join(f"{k}={v}" for k, v in list(extra.items())[:6])
        lines.append(f"  {c.id:<10} {c.name:<22} {c.side:<10} pos={c.position} {status:<4} init={c.initiative} conditions={conditions} {extras}")
    return lines


async def cmd_replay(args: argparse.Namespace) -> int:
    async with _store(args, announce=False) as store:
        event_log = store.event_log(args.campaign)
        length, system = await _check_stored(event_log, args.encounter)
        upto = length if args.at is None else args.at
        if not 0 <= upto <= length:
            raise CliError(f"--at {upto} is outside the log (0..{length})")
        narrator = _narrator(args)
        # Streamed page by page: a log of any length replays in bounded memory.
        state = None
        async with aclosing(stream_frames(event_log, args.encounter, upto=upto)) as frames:
            async for stored_event, event, state in frames:
                if not args.state_only:
                    print_line(narrator.line(stored_event.version, event, state))
                    if args.pace:
                        await trio.sleep(args.pace)
        if state is None:  # --at 0: the state before the first event
            state = system.initial_state()
            state.encounter = args.encounter
    for line in _state_table(state):
        print(line)
    return 0


async def cmd_watch(args: argparse.Namespace) -> int:
    """Narrate an encounter as another engine runs it (a terminal frontend), until it ends."""
    async with _store(args, announce=False) as store:
        event_log = store.event_log(args.campaign)
        if await event_log.encounter_meta(args.encounter) is None:
            raise CliError(f"encounter {args.encounter!r} does not exist in campaign {args.campaign!r}")
        print_from = await event_log.version(args.encounter) + 1 if args.from_now else 0
        await _narrate_live(event_log, args.encounter, _narrator(args), args.pace, print_from=print_from)
    return 0


async def cmd_audit(args: argparse.Namespace) -> int:
    if args.downtime or args.encounter is None:
        if args.encounter is not None or not args.downtime:
            raise CliError("give an ENCOUNTER, or --downtime for the campaign's rests")
        return await campaign_cli.cmd_audit_downtime(args)
    async with _store(args, announce=False) as store:
        event_log = store.event_log(args.campaign)
        await _check_stored(event_log, args.encounter)
        # Streamed page by page; verification keeps only the dice positions seen.
        verifier = Verifier(await revealed_seed(event_log, args.encounter)) if args.verify else None
        first = True
        out = sys.stdout.buffer
        if args.json:
            out.write(b"[")
        async with aclosing(event_log.iter_read(args.encounter, include_invalid=True)) as pages:
            async for page in pages:
                trusted = [s for s in page if not s.problem]
                if not args.json:
                    _report_invalid(page)
                events = [codec.decode_event(s) for s in trusted]
                if not args.json and events and isinstance(events[0], EncounterStarted) and events[0].reproducible_dice:
                    print(REPRODUCIBLE_DICE_WARNING)  # (with --json, the verdict says it)
                for entry in audit_entries(trusted, events):
                    if args.json:
                        out.write((b"" if first else b",") + msgspec.json.encode(entry))
                        first = False
                    else:
                        print(entry.explain())
                if verifier is not None:
                    verifier.feed(page)
        if args.json:
            out.write(b"]\n")
            out.flush()
    if verifier is None:
        return 0
    report = verifier.report()
    verdict = sys.stderr if args.json else sys.stdout  # with --json, stdout is the JSON alone
    if report.ok:
        print(f"verified: seed matches its commitment; {report.dice} dice in {report.rolls} rolls recomputed, all match"
              + (f" ({REPRODUCIBLE_DICE_WARNING})" if report.reproducible_dice else ""), file=verdict)
        return 0
    print(f"verification FAILED ({len(report.problems)} problems):", file=verdict)
    for problem in report.problems:
        print(f"  {problem}", file=verdict)
    return 1


async def cmd_encounters(args: argparse.Namespace) -> int:
    if args.page < 1 or not 1 <= args.per_page <= 1000:
        raise CliError("--page must be at least 1 and --per-page from 1 to 1000")
    async with _store(args, announce=False) as store:
        page = await roster_page(store.event_log(args.campaign), args.page, args.per_page)
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(page) + b"\n")
        return 0
    if not page.total:
        print(f"campaign {args.campaign!r} has no encounters yet (try: firelane demo)")
        return 0
    if page.page > page.pages:
        raise CliError(f"--page {page.page} is past the last page ({page.pages} of {page.per_page} encounters each; "
                       f"{page.total} in all)")
    for row in page.rows:
        print(row.describe())
    if page.pages > 1:
        print(f"page {page.page} of {page.pages} ({page.total} encounters); next: --page {page.page + 1}"
              if page.page < page.pages else f"page {page.page} of {page.pages} ({page.total} encounters)")
    return 0


async def cmd_seats(args: argparse.Namespace) -> int:
    """Each seat of an encounter: who it is, its secret token, its join link, its Redis user."""
    async with _store(args, announce=False) as store:
        event_log = store.event_log(args.campaign)
        tokens = await seat_tokens(event_log, args.encounter)
        if not tokens:
            raise CliError(f"encounter {args.encounter!r} does not exist in campaign {args.campaign!r}")
        setup = await encounter_setup(event_log, args.encounter)
        serve = await store.serve_info()
        redis_where = (serve.redis if serve is not None and serve.redis else
                       (f"unix://{store.socket_path}" if store.socket_path else store.redis_display))
    seats = default_seats(setup)
    rows = []
    for seat in seats:
        token = tokens.get(seat.id, "")
        link = f"{serve.api}/table/{args.campaign}/{args.encounter}#token={token}" if serve else None
        rows.append({"seat": seat.id, "role": seat.role, "name": seat.name, "combatants": seat.combatants,
                     "token": token, "link": link, "redis_user": acl_user(args.campaign, args.encounter, seat.id),
                     "log": event_log.log_key(args.encounter),
                     "inbox": event_log.inbox_key(args.encounter, seat.id) if seat.role != "spectator" else None})
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode({"redis": redis_where, "seats": rows}) + b"\n")
        return 0
    print(f"encounter {args.encounter} in campaign {args.campaign}; Redis for direct clients: {redis_where}")
    for row in rows:
        controls = ", ".join(row["combatants"]) or ("-" if row["role"] != "gm" else "GM commands")
        print(f"  {row['seat']:<12} {row['role']:<9} controls: {controls}")
        print(f"      token: {row['token']}")
        print(f"      join:  {row['link'] or '(start firelane serve for the web link)'}")
        print(f"      redis: user {row['redis_user']!r}, password = the token; read {row['log']}"
              + (f", write {row['inbox']}" if row["inbox"] else ""))
    return 0


async def cmd_submit(args: argparse.Namespace) -> int:
    payload = args.json.encode()
    async with _store(args, announce=False) as store:
        event_log = store.event_log(args.campaign)
        # Only the log's tail: whether it has ended, and where the answer will follow.
        length = await event_log.version(args.encounter)
        stored = await event_log.read_from_version(args.encounter, max(0, length - 3)) if length else []
        meta = await event_log.encounter_meta(args.encounter)
        if not stored and meta is None:
            raise CliError(f"encounter {args.encounter!r} does not exist in campaign {args.campaign!r}")
        if meta is not None:
            get_system(msgspec.json.decode(meta)["system"])  # so the system's own events decode in the answer
        if any(s.type == "EncounterEnded" for s in stored[-3:]):
            raise CliError(f"encounter {args.encounter!r} has ended; it takes no more commands")
        try:
            raw = msgspec.json.decode(payload)
        except msgspec.DecodeError:
            raw = None
        raw = raw if isinstance(raw, dict) else {}
        seats = default_seats(await encounter_setup(event_log, args.encounter))
        if args.seat is not None and args.seat != ENGINE_SEAT:
            # The engine reads only its seats' inboxes: a command sent anywhere else would never be answered.
            chosen = seat_by_id(seats, args.seat)
            if chosen is None:
                raise CliError(f"encounter {args.encounter!r} has no seat {args.seat!r} "
                               f"(its seats: {', '.join(s.id for s in seats)})")
            if chosen.role == "spectator":
                raise CliError(f"seat {args.seat!r} is a spectator's: it can watch, not act")
        seat = args.seat or _seat_for(seats, raw.get("actor"))
        after = stored[-1].entry_id if stored else "0-0"
        try:
            inbox_id = await event_log.submit(args.encounter, payload, seat=seat)
        except (InboxClosed, InboxFull) as exc:
            raise CliError(str(exc)) from None
        command_id = raw.get("command_id") if isinstance(raw.get("command_id"), str) else ""
        wanted = {command_key(seat, f"inbox:{inbox_id}")} | ({command_key(seat, command_id)} if command_id else set())
        with trio.move_on_after(args.wait):
            async with aclosing(event_log.follow(args.encounter, after, block_ms=200)) as batches:
                async for batch in batches:
                    answer = [s for s in batch if s.command_id in wanted]
                    if answer:
                        events = [codec.decode_event(s) for s in answer]
                        for s, event in zip(answer, events):
                            print(f"{s.version} {s.type} {msgspec.json.encode(event).decode()}")
                        return 2 if any(isinstance(e, CommandRejected) for e in events) else 0
        print(f"submitted as inbox entry {inbox_id} of seat {seat}; no answer within {args.wait}s "
              f"(is the encounter running? firelane run {args.encounter})")
        return 3


def _seat_for(seats: list[SeatSetup], actor: object) -> str:
    """The seat a trusted terminal speaks through for ``actor``: the GM's for
    "gm", the controlling seat of a human combatant, the engine's otherwise."""
    if actor == GM:
        return next(seat.id for seat in seats if seat.role == "gm")
    seat = seat_controlling(seats, actor) if isinstance(actor, str) else None
    if seat is not None:
        return seat.id
    return next(seat.id for seat in seats if seat.role == "gm")


async def cmd_options(args: argparse.Namespace) -> int:
    """What a seat may do now: each combatant's moves, attacks, actions or
    window answers, with the command to send (see events/options_schemas.py)."""
    async with _store(args, announce=False) as store:
        event_log = store.event_log(args.campaign)
        length, system = await _check_stored(event_log, args.encounter)
        state = system.initial_state()
        state.encounter = args.encounter
        await fold_stream(system, state, event_log, args.encounter)
    try:
        options = system.options(state, args.seat)
    except Rejected as exc:
        raise CliError(exc.reason) from None
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(options) + b"\n")
        return 0
    for line in describe_options(options):
        print(line)
    return 0


async def cmd_schema(args: argparse.Namespace) -> int:
    """JSON Schema of a system's commands (what a frontend may send) or of all its events."""
    system = get_system(args.system)
    if args.events:
        from firelane.events.schemas import GENERIC_EVENTS

        types = tuple(GENERIC_EVENTS) + tuple(system.event_types)
        target: Any = Union[types]  # noqa: UP007 - a runtime union for msgspec
    else:
        target = codec.command_union(system.command_types)
    if args.options:
        target = SeatOptions
    sys.stdout.buffer.write(msgspec.json.format(msgspec.json.encode(msgspec.json.schema(target))) + b"\n")
    return 0


async def cmd_serve(args: argparse.Namespace) -> int:
    from firelane.cli.serve import serve

    return await serve(args)


_REPRODUCIBLE_HELP = ("allow --seed TEXT: the same text gives the same dice, so anyone who knows or guesses it can "
                      "predict every roll; the log, the roster, the audit and the page say so")


class _Parser(argparse.ArgumentParser):
    """A bad option or value is one line, what is wrong and where to look (not
    the usage block above it); every subcommand's parser is one of these."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="firelane", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--campaign", default="default", help="campaign name (default: default)")
    common.add_argument("--redis", metavar="URL", help="Redis URL (redis://host:port/db or unix:///path); default: embedded server")
    common.add_argument("--data-dir", metavar="DIR", help="embedded server's data directory")
    common.add_argument("--no-color", action="store_true", help="plain output")
    common.add_argument("--log", metavar="LEVEL", help="engine log level on stderr (debug, info, warning)")
    common.add_argument("--details", action="store_true", help="show each roll's details in the narration")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", parents=[common], help="run a fight between two AI squads")
    demo.add_argument("--system", default="bolt-and-blade", help=f"rule system: {', '.join(system_names())}")
    demo.add_argument("--seed", help="any text; the same seed gives the same fight (default: random). Implies "
                                     "--reproducible-dice: the log and the page say anyone can predict the rolls")
    demo.add_argument("--reproducible-dice", action="store_true", help=argparse.SUPPRESS)  # what --seed implies here
    demo.add_argument("--encounter", help="encounter ID (default: demo-<system>-<time>)")
    demo.add_argument("--pace", type=seconds, default=0.0,
                      help="seconds between the AI's commands; the fight is then served in a browser while it runs")
    demo.add_argument("--quiet", action="store_true", help="only the summary")
    demo.set_defaults(handler=cmd_demo)

    run = sub.add_parser("run", parents=[common], help="create (or resume) an encounter and run it to the end")
    run.add_argument("encounter")
    run_from = run.add_mutually_exclusive_group()
    run_from.add_argument("--setup", metavar="FILE", help="EncounterSetup JSON for a new encounter")
    run_from.add_argument("--demo-setup", metavar="SYSTEM", help="use a system's demo setup for a new encounter")
    run.add_argument("--seed", help="seed text for a new encounter; needs --reproducible-dice (default: secret random dice)")
    run.add_argument("--reproducible-dice", action="store_true", help=_REPRODUCIBLE_HELP)
    run.add_argument("--pace", type=seconds, default=0.0,
                     help="seconds between the AI's commands; the fight is then served in a browser while it runs")
    run.add_argument("--quiet", action="store_true")
    run.set_defaults(handler=cmd_run)

    replay = sub.add_parser("replay", parents=[common], help="narrate a stored encounter; state at any version")
    replay.add_argument("encounter")
    replay.add_argument("--at", type=int, help="stop at this version (number of events) and show the state")
    replay.add_argument("--state-only", action="store_true", help="print only the state table")
    replay.add_argument("--pace", type=seconds, default=0.0)
    replay.set_defaults(handler=cmd_replay)

    watch = sub.add_parser("watch", parents=[common], help="narrate an encounter live as another engine runs it")
    watch.add_argument("encounter")
    watch.add_argument("--from-now", action="store_true", help="skip what has already happened")
    watch.add_argument("--pace", type=seconds, default=0.0)
    watch.set_defaults(handler=cmd_watch)

    audit = sub.add_parser("audit", parents=[common], help="every roll explained; --verify recomputes the dice")
    audit.add_argument("encounter", nargs="?", help="the encounter (or --downtime for the campaign's rests)")
    audit.add_argument("--downtime", action="store_true", help="the rolls of the campaign's downtime instead")
    audit.add_argument("--verify", action="store_true", help="recompute every die from the revealed seed")
    audit.add_argument("--json", action="store_true", help="machine-readable entries")
    audit.set_defaults(handler=cmd_audit)

    encounters = sub.add_parser("encounters", parents=[common], help="the campaign's roster")
    encounters.add_argument("--page", type=int, default=1, help="which page of the roster (default 1)")
    encounters.add_argument("--per-page", type=int, default=100, help="encounters per page (default 100, at most 1000)")
    encounters.add_argument("--json", action="store_true", help="machine-readable")
    encounters.set_defaults(handler=cmd_encounters)
    campaign_cli.add_parsers(sub, common)

    schema = sub.add_parser("schema", parents=[common], help="JSON Schema of a system's commands (or --events) for frontends")
    schema.add_argument("--system", default="bolt-and-blade", help=f"rule system: {', '.join(system_names())}")
    schema_of = schema.add_mutually_exclusive_group()
    schema_of.add_argument("--events", action="store_true", help="the events instead of the commands")
    schema_of.add_argument("--options", action="store_true", help="what `firelane options --json` and the API's options answer")
    schema.set_defaults(handler=cmd_schema)

    submit = sub.add_parser("submit", parents=[common], help="send a command JSON to an encounter's inbox")
    submit.add_argument("encounter")
    submit.add_argument("json", help='e.g. {"type":"EndTurn","command_id":"c1","actor":"a1"}')
    submit.add_argument("--seat", help="the seat to send it as (default: the seat controlling its actor; the GM's for \"gm\")")
    submit.add_argument("--wait", type=seconds, default=5.0, help="seconds to wait for the answer")
    submit.set_defaults(handler=cmd_submit)

    create = sub.add_parser("create", parents=[common], help="create an encounter (for firelane serve to run) and print its seats")
    create.add_argument("encounter")
    create_from = create.add_mutually_exclusive_group()
    create_from.add_argument("--setup", metavar="FILE", help="EncounterSetup JSON")
    create_from.add_argument("--demo-setup", metavar="SYSTEM", help="a system's demo setup")
    create.add_argument("--seed", help="seed text; needs --reproducible-dice (default: secret random dice)")
    create.add_argument("--reproducible-dice", action="store_true", help=_REPRODUCIBLE_HELP)
    create.add_argument("--json", action="store_true", help="print the seats as JSON")
    create.set_defaults(handler=cmd_create)

    options = sub.add_parser("options", parents=[common], help="what a seat may do now, with the command for each option")
    options.add_argument("encounter")
    options.add_argument("--seat", required=True, help="the seat (its id, e.g. gm or a player's)")
    options.add_argument("--json", action="store_true", help="the typed options as JSON (firelane schema --options)")
    options.set_defaults(handler=cmd_options)

    seats = sub.add_parser("seats", parents=[common], help="each seat's token, join link and Redis user")
    seats.add_argument("encounter")
    seats.add_argument("--json", action="store_true", help="machine-readable")
    seats.set_defaults(handler=cmd_seats)

    serve = sub.add_parser("serve", parents=[common], help="run every encounter of the store and serve the HTTP/WebSocket API")
    serve.add_argument("--host", default="127.0.0.1", help="address of the HTTP API (default 127.0.0.1)")
    serve.add_argument("--port", type=tcp_port, default=8740, help="port of the HTTP API (default 8740; 0 picks a free one)")
    serve.add_argument("--allowed-host", action="append", default=[], type=allowed_host, metavar="NAME",
                       help="also answer requests for this host name or address (repeatable; always answered: "
                            "the --host, localhost, 127.0.0.1 and [::1]; any other Host header gets 400)")
    serve.add_argument("--workers", type=int, default=1,
                       help="engine processes; encounters are spread over them and taken over when one dies (default 1)")
    serve.add_argument("--engine-only", action="store_true", help=argparse.SUPPRESS)  # a worker of another serve
    serve.add_argument("--appendfsync", choices=("everysec", "always"),
                       help="AOF fsync policy of the embedded redis-server, kept in the data dir "
                            "(everysec: may lose the last second on a power cut; always: loses no acknowledged command)")
    serve.add_argument("--redis-port", type=tcp_port,
                       help="also serve the embedded Redis on this TCP port of 127.0.0.1 for direct seat clients "
                            "(kept in the data dir; 0 turns it off again; default: unix socket only)")
    serve.set_defaults(handler=cmd_serve)

    sim_command.add_parser(sub, [])
    return parser


def _first_of(group: BaseExceptionGroup, kind: type[BaseException]) -> BaseException | None:
    """The first ``kind`` exception inside a (nested) exception group from trio's nurseries."""
    matching = group.subgroup(lambda e: isinstance(e, kind))
    if matching is None:
        return None
    first: BaseException = matching
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    return first


class _Interrupted(Exception):
    """The command was stopped by a signal (see firelane.cli.signals)."""


async def _run_with_signals(args: argparse.Namespace) -> int:
    """Run the command; SIGINT, SIGTERM or SIGHUP cancels it, so every
    ``finally`` and context manager runs (engines stop between two appends,
    the data dir's server is left or stopped cleanly). A second signal cancels
    the cleanup waits that may be cut short (stop_signals.cleanup_scope)."""
    result: list[int] = []
    with trio.open_signal_receiver(*stop_signals.STOP_SIGNALS) as signals:
        command_scope = trio.CancelScope()
        # Shielded: it must hear a second signal while the command cleans up.
        listening = trio.CancelScope(shield=True)

        async def listen() -> None:
            with listening:
                if stop_signals.requested():  # arrived before trio's receiver was open
                    command_scope.cancel()
                async for signum in signals:
                    stop_signals.note(signum)
                    command_scope.cancel()

        async def command() -> None:
            try:
                with command_scope:
                    result.append(await args.handler(args))
            finally:
                listening.cancel()

        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(listen)
                nursery.start_soon(command)
        except (Exception, BaseExceptionGroup):
            if not stop_signals.requested() or result:
                raise
            # Failing while it stops (e.g. Redis gone meanwhile): the stop is what was asked for.
    if result:
        return result[0]
    raise _Interrupted()


_USER_ERRORS = (CliError, UnknownSystem, SetupError, ValueError, LookupError, OSError, msgspec.DecodeError,
                EncounterBusy, RedisConnectionError, RedisError, RedisServerError)


def _message(exc: BaseException) -> str:
    return UnknownSystem.__str__(exc) if isinstance(exc, UnknownSystem) else str(exc).splitlines()[0]


def main(argv: list[str] | None = None) -> int:
    args = None
    try:
        args = build_parser().parse_args(argv)
        if getattr(args, "sync_handler", None) is not None:
            # No trio, no Redis (firelane sim): it handles Ctrl-C itself; SIGTERM and SIGHUP are one too.
            stop_signals.as_keyboard_interrupt()
            code = args.sync_handler(args)  # type: ignore[no-any-return]
            return stop_signals.exit_code(args.command) if code == 130 and stop_signals.requested() else code
        configure_logging(args.log)
        stop_signals.hold()
        return trio.run(_run_with_signals, args)
    except (_Interrupted, stop_signals.StopRequested):
        return _stopped(args, argv)
    except KeyboardInterrupt:
        stop_signals.note(signal.SIGINT)
        return _stopped(args, argv)
    except _USER_ERRORS as exc:
        print(f"firelane: error: {_message(exc)}", file=sys.stderr)
        return 2
    except BaseExceptionGroup as group:
        known = _first_of(group, _USER_ERRORS)  # type: ignore[arg-type]
        if known is not None:
            print(f"firelane: error: {_message(known)}", file=sys.stderr)
            return 2
        failed = _first_of(group, TaskKeptFailing)
        if failed is None:
            raise
        print(f"firelane: error: {failed}; the log is intact — fix the cause and resume with: firelane run ENCOUNTER", file=sys.stderr)
        return 1


def _stopped(args: argparse.Namespace | None, argv: list[str] | None) -> int:
    """One line (serve says its own) and the documented exit code, after a stop signal."""
    words = sys.argv[1:] if argv is None else argv
    command = args.command if args is not None else (words[0] if words else None)
    resume = "; resume with: firelane run ENCOUNTER" if command in ("run", "demo") else ""
    worker = bool(getattr(args, "engine_only", False)) if args is not None else "--engine-only" in words
    return stop_signals.answer(command, worker=worker, resume=resume)
