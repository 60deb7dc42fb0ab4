"""The encounter commands of `firelane`: demo, run, create, start, seats, options, replay, watch, audit,
encounters, submit and schema (the parser is firelane/cli/main.py)."""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import aclosing
from typing import Any, Union

import msgspec
import trio

from firelane.actors.runtime import default_policies, run_encounter
from firelane.actors.seating import acl_user
from firelane.actors.lobby_seeds import LobbySeedRefused, add_lobby_client_seed
from firelane.actors.workshop import in_lobby, start_lobby
from firelane.actors.sequencer import (
    EncounterExists,
    command_key,
    create_encounter,
    encounter_setup,
    ensure_encounter,
    seat_tokens,
)
from firelane.engine.command_schema import command_schema
from firelane.engine.registry import demo_setup, get_system
from firelane.engine.seats import ENGINE_SEAT, GM, default_seats, seat_by_id, seat_controlling
from firelane.engine.setup_check import decode_setup
from firelane.events import codec
from firelane.events.log import EventLog, InboxClosed, InboxFull
from firelane.events.schemas import ClientSeedAdded, CommandRejected, EncounterSetup, EncounterStarted, SeatSetup, SeedRevealed
from firelane.cli import campaign as campaign_cli
from firelane.actors.store import CliError, ServeInfo, Store
from firelane.engine.core import Rejected, resting_points_of
from firelane.events.options_schemas import SeatOptions
from firelane.engine.wording import combatant_names, counted
from firelane.projections.narration import REPRODUCIBLE_DICE_WARNING, Narrator, colour_enabled, describe_options, print_line
from firelane.web.demo_server import DEFAULT_PORT, serve_table, table_link
from firelane.actors.fairness import key_description, published_log_key
from firelane.projections.audit import VerificationReport, Verifier, audit_entries, revealed_seed, verify
from firelane.engine.branches import Branches
from firelane.projections.replay import stream_frames, undone_spans
from firelane.projections.roster import out_of_action as roster_out_of_action, roster_page
from firelane.projections.turn_state import fold_stream, log_system, system_of
from firelane.cli.common import chosen_seed, cli_store, stderr_line


def _progress_line(state: Any, events: int) -> str:
    sides: dict[str, list[int]] = {}
    for c in state.combatants.values():
        counts = sides.setdefault(c.side, [0, 0])
        counts[0] += not c.out_of_fight
        counts[1] += 1
    standing = ", ".join(f"{side} {up} of {total}" for side, (up, total) in sorted(sides.items()))
    return f"round {state.round or 0} · {events} events · standing: {standing}"


async def _narrate_live(event_log: EventLog, encounter: str, narrator: Narrator, pace: float, *, print_from: int = 0,
                        quiet: bool = False, progress: bool = False) -> Any:
    """Follow the log and print each event (from version ``print_from`` on)
    until the seed is revealed; returns the final state. With ``progress``
    (a demo in a terminal), one line, rewritten as each round starts, instead
    of every event: a fight is hundreds of lines, `firelane replay` has them."""
    system = None
    state = None
    shown_round = -1
    async with aclosing(event_log.follow(encounter, "0-0", block_ms=500)) as batches:
        async for batch in batches:
            for stored in batch:
                event = codec.decode_event(stored)
                if system is None:
                    system = system_of([stored])
                    state = system.initial_state()
                    state.encounter = encounter
                system.evolve(state, event)
                if progress and not quiet:
                    if state.round != shown_round or isinstance(event, SeedRevealed):
                        shown_round = state.round
                        sys.stdout.write("\r\x1b[K" + _progress_line(state, stored.version))
                        sys.stdout.write("\n" if isinstance(event, SeedRevealed) else "")
                        sys.stdout.flush()
                elif stored.version >= print_from and not quiet:
                    print_line(narrator.line(stored.version, event, state))
                    if pace:
                        await trio.sleep(pace)
                if isinstance(event, SeedRevealed):
                    return state
    return state


def _summary(state: Any, events: int, elapsed: float) -> str:
    names = combatant_names(state)
    standing = [names[cid] for cid, c in state.combatants.items() if not c.out_of_fight]
    return (
        f"{counted(events, 'event')} in {elapsed:.2f}s; {counted(state.round, 'round')}; winner: {state.winner or 'none'} "
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
    if await in_lobby(event_log, encounter):
        raise CliError(f"encounter {encounter!r} waits in its lobby: start it first with "
                       f"firelane start {encounter} --campaign {event_log.campaign}")
    system = get_system(msgspec.json.decode(meta)["system"])
    narrator = _narrator(args)
    began = time.perf_counter()
    serve = await store.serve_info()
    progress = getattr(args, "progress", False)
    if serve is not None:
        stderr_line(f"firelane serve (pid {serve.pid}) runs it; watch it in a browser: {_watch_link(serve, event_log, encounter, await seat_tokens(event_log, encounter))}")
        state = await _narrate_live(event_log, encounter, narrator, args.pace, quiet=quiet, progress=progress)
    else:
        start = await encounter_setup(event_log, encounter)
        policies = default_policies(system, {c.id: c.policy for c in start.combatants})
        if args.pace:
            # Watchable in a browser: this process serves the table while the
            # fight runs, the AI paced (web/demo_server.py).
            async with trio.open_nursery() as web:
                api = await serve_table(store, web)
                stderr_line(f"watch it in a browser: {table_link(api, event_log.campaign, encounter, (await seat_tokens(event_log, encounter)).get('spectator', ''))}")
                observers = [] if quiet else [lambda: _narrate_live(event_log, encounter, narrator, 0)]
                state = await run_encounter(event_log, encounter, system, policies, observers=observers, pace=args.pace)
                web.cancel_scope.cancel()
        else:
            observers = [] if quiet else [lambda: _narrate_live(event_log, encounter, narrator, args.pace, progress=progress)]
            state = await run_encounter(event_log, encounter, system, policies, observers=observers)
    elapsed = time.perf_counter() - began
    print(_summary(state, state.version, elapsed), flush=True)
    spectator = (await seat_tokens(event_log, encounter)).get("spectator", "")
    if serve is not None:
        print(f"replay it in a browser: {table_link(serve.api, event_log.campaign, encounter, spectator, replay=True)}", flush=True)
    elif getattr(args, "serve_after", False):
        pass  # the demo serves the table itself once the fight is over, and prints its live link then (cmd_demo)
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
    # In a terminal a demo shows its progress in one line (--narrate: every event) and then
    # serves its replay until Ctrl-C; piped, it prints every event and where to replay it.
    interactive = sys.stdout.isatty() and sys.stdin.isatty()
    args.progress = interactive and not args.narrate and not args.pace
    args.serve_after = interactive and not args.pace
    system = get_system(args.system)
    setup = demo_setup(args.system)
    # A demo is a showcase of the AI against itself: its --seed asks for a fight anyone can replay.
    seed, reproducible = chosen_seed(args.seed, args.reproducible_dice, implied=True)
    encounter = args.encounter or _encounter_id(f"demo-{system.name}")
    async with cli_store(args) as store:
        event_log = store.event_log(args.campaign)
        try:
            await create_encounter(event_log, encounter, setup, seed, reproducible_dice=reproducible)
        except EncounterExists as exc:
            raise CliError(f"{exc}; resume it with: firelane run {encounter}") from None
        stderr_line(f"encounter {encounter} in campaign {args.campaign} — {system.title}")
        if reproducible:
            stderr_line(REPRODUCIBLE_DICE_WARNING)
        code = await _run_live(args, store, event_log, encounter, quiet=args.quiet)
        report = verify(await event_log.read(encounter, include_invalid=True))
        print(f"audit: {report.rolls} rolls, {report.dice} dice recomputed from the revealed seed: "
              f"{'all verified' if report.ok else 'PROBLEMS: ' + '; '.join(report.problems[:5])}")
        print(f"replay: firelane replay {encounter} --campaign {args.campaign}   audit: firelane audit {encounter} --verify --campaign {args.campaign}")
        if args.serve_after and await store.serve_info() is None:
            args.serving_replay = True  # Ctrl-C now only stops the serving (main.py, _stopped)
            await _serve_replay(store, event_log, encounter)
        return code if report.ok else 1


async def _serve_replay(store: Store, event_log: EventLog, encounter: str) -> None:
    """Serve the table until Ctrl-C, so the replay link printed is live (a
    demo in a terminal: a link to a port where nothing runs helps no one)."""
    spectator = (await seat_tokens(event_log, encounter)).get("spectator", "")
    async with trio.open_nursery() as web:
        api = await serve_table(store, web)
        print(f"replay it in a browser: {table_link(api, event_log.campaign, encounter, spectator, replay=True)}", flush=True)
        print("serving the table until you press Ctrl-C", flush=True)
        await trio.sleep_forever()


async def cmd_run(args: argparse.Namespace) -> int:
    setup = None
    if args.setup:
        setup = _read_setup(args.setup)
    elif args.demo_setup:
        setup = demo_setup(args.demo_setup)
    seed, reproducible = chosen_seed(args.seed, args.reproducible_dice)
    async with cli_store(args) as store:
        event_log = store.event_log(args.campaign)
        if await event_log.encounter_meta(args.encounter) is None:
            if setup is None:
                raise CliError(f"encounter {args.encounter!r} does not exist; give --setup FILE or --demo-setup SYSTEM to create it")
            await ensure_encounter(event_log, args.encounter, setup, seed, reproducible_dice=reproducible)
            if reproducible:
                stderr_line(REPRODUCIBLE_DICE_WARNING)
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
    async with cli_store(args) as store:
        event_log = store.event_log(args.campaign)
        try:
            await create_encounter(event_log, args.encounter, setup, seed, reproducible_dice=reproducible,
                                   lobby=args.lobby)
        except EncounterExists as exc:
            raise CliError(str(exc)) from None
    stderr_line(f"created encounter {args.encounter} in campaign {args.campaign}"
                + (f"; it waits in the lobby until: firelane start {args.encounter} --campaign {args.campaign}"
                   if args.lobby else "")
                + (f"; {REPRODUCIBLE_DICE_WARNING}" if reproducible else ""))
    return await cmd_seats(args)


async def cmd_start(args: argparse.Namespace) -> int:
    """Start an encounter waiting in its lobby: `firelane serve` takes it up at once."""
    async with cli_store(args, announce=False) as store:
        event_log = store.event_log(args.campaign)
        if await event_log.encounter_meta(args.encounter) is None:
            raise CliError(f"encounter {args.encounter!r} does not exist in campaign {args.campaign!r}")
        length = await event_log.version(args.encounter)
        tail = await event_log.read_from_version(args.encounter, max(0, length - 3)) if length else []
        if any(s.type in ("EncounterEnded", "SeedRevealed") for s in tail):
            raise CliError(f"encounter {args.encounter!r} has ended (its characters were released before it started)"
                           if await in_lobby(event_log, args.encounter) else f"encounter {args.encounter!r} has ended")
        if not await start_lobby(event_log, args.encounter):
            raise CliError(f"encounter {args.encounter!r} is not in the lobby: it has started already")
        serve = await store.serve_info()
    if serve is not None:
        print(f"started encounter {args.encounter}; firelane serve (pid {serve.pid}) runs it")
    else:
        print(f"started encounter {args.encounter}; run it with firelane serve, or here: firelane run {args.encounter}"
              f" --campaign {args.campaign}")
    return 0


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
    # Standing in the engine's eyes but out of action (RonD6's Incapacitated, R6-21): said so, not "up".
    out_of_action = roster_out_of_action(state)
    for c in state.combatants.values():
        extra = {k: getattr(c, k) for k in c.__struct_fields__ if k not in base and isinstance(getattr(c, k), (int, str, bool)) and not isinstance(getattr(c, k), bool)}
        name = c.name or c.id
        status = "DOWN" if c.out_of_fight else out_of_action.get(name, "up")
        conditions = ",".join(c.conditions) or "-"
        extras = " ".join(f"{k}={v}" for k, v in list(extra.items())[:6])
        lines.append(f"  {c.id:<10} {name:<22} {c.side:<10} pos={c.position} {status:<4} init={c.initiative} conditions={conditions} {extras}")
    return lines


async def cmd_replay(args: argparse.Namespace) -> int:
    async with cli_store(args, announce=False) as store:
        event_log = store.event_log(args.campaign)
        length, system = await _check_stored(event_log, args.encounter)
        upto = length if args.at is None else args.at
        if not 0 <= upto <= length:
            raise CliError(f"--at {upto} is outside the log (0..{length})")
        narrator = _narrator(args)
        # What the GM's rewinds undid, the later ones too: a line is marked
        # as it is printed, before the rewind that undoes it comes.
        undone = Branches(await undone_spans(event_log, args.encounter))
        # Streamed page by page: a log of any length replays in bounded memory.
        state = None
        async with aclosing(stream_frames(event_log, args.encounter, upto=upto)) as frames:
            async for stored_event, event, state in frames:
                if not args.state_only:
                    print_line(narrator.line(stored_event.version, event, state,
                                             undone_by=undone.undone_by(stored_event.version)))
                    if args.pace:
                        await trio.sleep(args.pace)
        if state is None:  # --at 0: the state before the first event
            state = system.initial_state()
            state.encounter = args.encounter
    for line in _state_table(state):
        print(line)
    undone_by = undone.undone_by(state.version)
    if undone_by is not None:
        print(f"  (version {state.version} is on a branch the GM's rewind at version {undone_by} undid: "
              f"this state no longer counts)")
    if undone.spans and upto == length:
        print("undone by the GM's rewinds: " + "; ".join(
            f"{f'{low}-{high}' if high > low else low} (rewind at {by})" for low, high, by in undone.spans))
    return 0


async def cmd_watch(args: argparse.Namespace) -> int:
    """Narrate an encounter as another engine runs it (a terminal frontend), until it ends."""
    async with cli_store(args, announce=False) as store:
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
    async with cli_store(args, announce=False) as store:
        event_log = store.event_log(args.campaign)
        await _check_stored(event_log, args.encounter)
        store_key = store.signing_key().public_key.hex()
        # Streamed page by page; verification keeps only the dice positions seen.
        verifier = Verifier(await revealed_seed(event_log, args.encounter), args.campaign) if args.verify else None
        undone = Branches(await undone_spans(event_log, args.encounter))
        set_apart: list[Any] = []  # the rolls the GM's rewinds undid, listed after the rest
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
                if not args.json:
                    for stored, event in zip(trusted, events):
                        if isinstance(event, ClientSeedAdded):
                            print(f"v{stored.version} client seed added by seat {event.seat}: {event.client_seed!r} "
                                  f"(every die after it mixes it in)")
                for entry in audit_entries(trusted, events, undone):
                    if args.json:
                        out.write((b"" if first else b",") + msgspec.json.encode(entry))
                        first = False
                    elif entry.undone_by is not None:
                        set_apart.append(entry)
                    else:
                        print(entry.explain())
                if verifier is not None:
                    verifier.feed(page)
        if args.json:
            out.write(b"]\n")
            out.flush()
        elif undone.spans:
            print(f"\nundone by the GM's rewinds ({len(set_apart)} rolls; they no longer count, and their dice are "
                  f"verified like the others):")
            for low, high, by in undone.spans:
                print(f"  events {low}-{high}, undone by the rewind at v{by}:" if high > low
                      else f"  event {low}, undone by the rewind at v{by}:")
                for entry in set_apart:
                    if low <= entry.version <= high:
                        print(f"    {entry.explain()}")
    if verifier is None:
        return 0
    report = verifier.report()
    verdict = sys.stderr if args.json else sys.stdout  # with --json, stdout is the JSON alone
    if report.client_seeds:
        print(f"client seeds: {', '.join(f'{seat} at v{version}' for version, seat, _text in report.client_seeds)} "
              f"(mixed into every die after each)", file=verdict)
    if report.ok:
        print(f"verified: seed matches its commitment; {report.dice} dice in {report.rolls} rolls recomputed, all match"
              + (f" ({REPRODUCIBLE_DICE_WARNING})" if report.reproducible_dice else "")
              + f"; {_signature_verdict(report, store_key)}", file=verdict)
        return 0
    print(f"verification FAILED ({len(report.problems)} problems):", file=verdict)
    for problem in report.problems:
        print(f"  {problem}", file=verdict)
    print(_signature_verdict(report, store_key), file=verdict)
    return 1


def _signature_verdict(report: VerificationReport, store_key: str) -> str:
    """One line on the log's public-key signatures (their failures are among the problems)."""
    if not report.log_public_key:
        return f"signatures: none ({report.unsigned})"
    whose = ("this store's key" if report.log_public_key == store_key
             else "NOT this store's key: compare it with the one published when the encounter was created")
    covered = f"covering v1-v{report.signed_through}" if report.signatures else "none valid"
    line = f"signatures: {report.signatures} valid, {covered}, key {report.log_key_fingerprint} ({whose})"
    return line + (f"; {report.unsigned}" if report.unsigned else "")


async def cmd_encounters(args: argparse.Namespace) -> int:
    if args.page < 1 or not 1 <= args.per_page <= 1000:
        raise CliError("--page must be at least 1 and --per-page from 1 to 1000")
    async with cli_store(args, announce=False) as store:
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
    async with cli_store(args, announce=False) as store:
        event_log = store.event_log(args.campaign)
        tokens = await seat_tokens(event_log, args.encounter)
        if not tokens:
            raise CliError(f"encounter {args.encounter!r} does not exist in campaign {args.campaign!r}")
        setup = await encounter_setup(event_log, args.encounter)
        serve = await store.serve_info()
        redis_where = (serve.redis if serve is not None and serve.redis else
                       (f"unix://{store.socket_path}" if store.socket_path else store.redis_display))
        log_key = key_description(await published_log_key(event_log, args.encounter))
    seats = default_seats(setup)
    rows = []
    for seat in seats:
        token = tokens.get(seat.id, "")
        link = f"{serve.api}/table/{args.campaign}/{args.encounter}#token={token}" if serve else None
        rows.append({"seat": seat.id, "role": seat.role, "name": seat.name, "combatants": seat.combatants,
                     "token": token, "link": link, "redis_user": acl_user(args.campaign, args.encounter, seat.id),
                     "log": event_log.log_key(args.encounter),
                     "inbox": event_log.inbox_key(args.encounter, seat.id) if seat.role != "spectator" else None,
                     "options": event_log.options_key(args.encounter, seat.id)})
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode({"redis": redis_where, "seats": rows,
                                                     "log_signing_key": log_key}) + b"\n")
        return 0
    print(f"encounter {args.encounter} in campaign {args.campaign}; Redis for direct clients: {redis_where}")
    print(f"  the log is signed with the Ed25519 key {log_key['fingerprint']} ({log_key['public_key']})"
          if log_key["public_key"] else "  the log is not signed (started by an older firelane)")
    for row in rows:
        controls = ", ".join(row["combatants"]) or ("-" if row["role"] != "gm" else "GM commands")
        print(f"  {row['seat']:<12} {row['role']:<9} controls: {controls}")
        print(f"      token: {row['token']}")
        print(f"      join:  {row['link'] or '(start firelane serve for the web link)'}")
        print(f"      redis: user {row['redis_user']!r}, password = the token; read {row['log']} and {row['options']}"
              + (f", write {row['inbox']}" if row["inbox"] else ""))
    return 0


async def cmd_submit(args: argparse.Namespace) -> int:
    payload = args.json.encode()
    async with cli_store(args, announce=False) as store:
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
        if await in_lobby(event_log, args.encounter):
            return await _submit_in_lobby(event_log, args.encounter, seat_by_id(seats, seat), raw)
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


async def _submit_in_lobby(event_log: EventLog, encounter: str, seat: SeatSetup | None, raw: dict) -> int:
    """In the lobby a player seat may only add its client seed (actors/lobby_seeds.py),
    kept for the start, whose opening dice mix it in (docs/fairness.md)."""
    if raw.get("type") != "AddClientSeed" or seat is None:
        raise CliError(f"encounter {encounter!r} waits in its lobby: until firelane start {encounter}, "
                       "a player seat may only add its client seed (AddClientSeed)")
    if raw.get("actor") != seat.id:
        raise CliError(f"a client seed is the seat's own: send it with actor {seat.id!r}")
    text = raw.get("client_seed")
    try:
        await add_lobby_client_seed(event_log, encounter, seat, text if isinstance(text, str) else "")
    except LobbySeedRefused as exc:
        raise CliError(str(exc)) from None
    print(f"client seed of seat {seat.id} kept for the start: {text!r} (the opening dice will mix it in)")
    return 0


def _seat_for(seats: list[SeatSetup], actor: object) -> str:
    """The seat a trusted terminal speaks through for ``actor``: the GM's for
    "gm", a player seat for its own id, the controlling seat of a human
    combatant, the engine's otherwise."""
    if actor == GM:
        return next(seat.id for seat in seats if seat.role == "gm")
    if any(seat.id == actor and seat.role == "player" for seat in seats):
        return str(actor)  # a seat acting as itself (AddClientSeed)
    seat = seat_controlling(seats, actor) if isinstance(actor, str) else None
    if seat is not None:
        return seat.id
    return next(seat.id for seat in seats if seat.role == "gm")


async def cmd_options(args: argparse.Namespace) -> int:
    """What a seat may do now: each combatant's moves, attacks, actions or
    window answers, with the command to send (see events/options_schemas.py)."""
    async with cli_store(args, announce=False) as store:
        event_log = store.event_log(args.campaign)
        length, system = await _check_stored(event_log, args.encounter)
        state = system.initial_state()
        state.encounter = args.encounter
        await fold_stream(system, state, event_log, args.encounter)
        try:
            options = system.options(state, args.seat)
        except Rejected as exc:
            raise CliError(exc.reason) from None
        if options.gm is not None:  # where a rewind may go, among the newest 20,000 versions (as the API says)
            tail = await event_log.read_from_version(args.encounter, max(0, state.version - 20_000))
            held = [(s.version, s.command_id) for s in tail if s.version <= state.version]
            options = system.with_rewind_targets(options, state, resting_points_of(held))
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(options) + b"\n")
        return 0
    for line in describe_options(options, state):
        print(line)
    return 0


async def cmd_schema(args: argparse.Namespace) -> int:
    """JSON Schema of a system's commands (what a frontend may send) or of all its events."""
    system = get_system(args.system)
    if args.events:
        from firelane.events.schemas import GENERIC_EVENTS

        types = tuple(GENERIC_EVENTS) + tuple(system.event_types)
        target: Any = Union[types]  # noqa: UP007 - a runtime union for msgspec
    elif args.options:
        target = SeatOptions
    else:
        # The commands a seat may send (the engine's own left out), window answers' options typed per reaction.
        document = command_schema([system])
        sys.stdout.buffer.write(msgspec.json.format(msgspec.json.encode(document)) + b"\n")
        return 0
    sys.stdout.buffer.write(msgspec.json.format(msgspec.json.encode(msgspec.json.schema(target))) + b"\n")
    return 0


async def cmd_orders(args: argparse.Namespace) -> int:
    """A seat's standing orders: shown, added to, removed, cleared or set from a file."""
    from firelane.actors.orders import OrdersRefused, seat_orders, set_seat_orders

    async with cli_store(args, announce=False) as store:
        event_log = store.event_log(args.campaign)
        try:
            shown = await seat_orders(event_log, args.encounter, args.seat)
            kept = [{k: o[k] for k in ("id", "combatant", "on", "do", "times")} for o in shown["orders"]]
            changed: list[dict[str, Any]] | None = None
            if args.set:
                try:
                    with open(args.set, "rb") as file:
                        body = file.read()
                except OSError as exc:
                    raise CliError(f"cannot read {args.set}: {exc.strerror}") from None
                shown = await set_seat_orders(event_log, args.encounter, args.seat, body)
            elif args.add:
                combatant, on, do = args.add
                changed = kept + [{"combatant": combatant, "on": on, "do": do, "times": args.times}]
            elif args.remove:
                if not any(o["id"] == args.remove for o in kept):
                    raise CliError(f"seat {args.seat} has no order {args.remove!r} "
                                   f"(its orders: {', '.join(o['id'] for o in kept) or 'none'})")
                changed = [o for o in kept if o["id"] != args.remove]
            elif args.clear:
                changed = []
            if changed is not None:
                shown = await set_seat_orders(event_log, args.encounter, args.seat, msgspec.json.encode({"orders": changed}))
        except OrdersRefused as exc:
            raise CliError(str(exc)) from None
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(shown) + b"\n")
        return 0
    if not shown["orders"]:
        print(f"seat {args.seat} has no standing orders")
    for order in shown["orders"]:
        used = f" — answered {order['used']} time{'s' if order['used'] != 1 else ''}" if order["used"] else ""
        print(f"{order['id']}  {order['text']}{used}")
    if args.catalogue:
        print("orders it may give:")
        for kind in shown["catalogue"]["windows"] + [shown["catalogue"]["turn"]]:
            print(f"  on {kind['on']} ({kind['label']}): " + ", ".join(f"{d['do']} ({d['label']})" for d in kind["do"]))
    return 0


async def cmd_hooks(args: argparse.Namespace) -> int:
    """A seat's webhooks (or, with --campaign-hooks, the campaign's): list, add, remove, deliveries."""
    from firelane.actors.hooks import (KIND_WORDS, HookRefused, delivery_log, hook_json, owned_hooks, owner_key,
                                       register_hook, remove_hook)

    if not args.campaign_hooks and not (args.encounter and args.seat):
        raise CliError("give ENCOUNTER and --seat S (a seat's hooks), or --campaign-hooks (the campaign's)")
    async with cli_store(args, announce=False) as store:
        event_log = store.event_log(args.campaign)
        encounter, seat = ("", "") if args.campaign_hooks else (args.encounter, args.seat)
        if seat:
            seats = default_seats(await encounter_setup(event_log, encounter))
            found = seat_by_id(seats, seat)
            if found is None or found.role == "spectator":
                raise CliError(f"encounter {encounter} has no player's or GM's seat {seat!r} "
                               f"(seats: {', '.join(s.id for s in seats if s.role != 'spectator')})")
        owner = owner_key(args.campaign, encounter, seat)
        client = event_log.client
        if args.add:
            try:
                hook = await register_hook(client, campaign=args.campaign, encounter=encounter, seat=seat, url=args.add,
                                           format=args.format, allow_private=args.allow_private,
                                           kinds=args.kinds.split(",") if args.kinds else None)
            except HookRefused as exc:
                raise CliError(str(exc)) from None
            shown: Any = {**hook_json(hook), "secret": hook.secret}
            if not args.json:
                print(f"{hook.id}  {hook_json(hook)['url']} ({hook.format}); its secret (shown once): {hook.secret}")
        elif args.remove:
            if not await remove_hook(client, owner, args.remove):
                raise CliError(f"no hook {args.remove!r} here")
            shown = {"removed": args.remove}
            if not args.json:
                print(f"removed {args.remove}")
        elif args.deliveries:
            if not await client.execute("SISMEMBER", owner, args.deliveries):
                raise CliError(f"no hook {args.deliveries!r} here")
            shown = await delivery_log(client, args.deliveries)
            if not args.json:
                for row in shown:
                    at = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(row["at_ms"] / 1000))
                    status = f" HTTP {row['status']}" if row["status"] else ""
                    print(f"{at} UTC  {row['kind']}  attempt {row['attempt']}: {row['outcome']}{status}"
                          f"{' — ' + row['detail'] if row['detail'] else ''}")
        else:
            shown = [hook_json(h) for h in await owned_hooks(client, owner)]
            if not args.json:
                for hook in shown:
                    told = "" if len(hook["kinds"]) == len(KIND_WORDS) else \
                        "; told of: " + ", ".join(KIND_WORDS[k] for k in hook["kinds"])
                    print(f"{hook['id']}  {hook['url']} ({hook['format']}{told})")
                if not shown:
                    print("no hooks")
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(shown) + b"\n")
    return 0
