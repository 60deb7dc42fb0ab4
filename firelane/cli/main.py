"""`firelane`: serve, run, watch, replay and audit fights.

    firelane serve                       the campaign store's server: runs every encounter, HTTP/WebSocket API
    firelane demo [--system NAME]        a real fight between two AI squads
    firelane run ENCOUNTER [--setup F]   create (or resume) an encounter and run it to the end
    firelane create ENCOUNTER --setup F  create an encounter for `firelane serve` to run; print its seats
    firelane seats ENCOUNTER             each seat's secret token, join link and Redis user
    firelane orders ENCOUNTER --seat S   a seat's standing orders (--add, --remove, --clear, --set)
    firelane hooks ENCOUNTER --seat S    a seat's webhooks (--add URL, --remove, --deliveries; --campaign-hooks)
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

import argparse
import signal
import sys
from typing import NoReturn

import msgspec
import trio

from firelane.actors.lease import EncounterBusy
from firelane.actors.runtime import TaskKeptFailing
from firelane.engine.registry import UnknownSystem, system_names
from firelane.engine.setup_check import SetupError
from firelane import stop_signals
from firelane.cli import campaign as campaign_cli
from firelane.cli import sim as sim_command
from firelane.actors.store import CliError
from firelane.logs import configure_logging
from firelane.redisio import RedisConnectionError, RedisError, RedisServerError
from firelane.cli.common import allowed_host, seconds, tcp_port
from firelane.cli.encounters import (
    cmd_demo,
    cmd_run,
    cmd_create,
    cmd_start,
    cmd_replay,
    cmd_watch,
    cmd_audit,
    cmd_encounters,
    cmd_seats,
    cmd_submit,
    cmd_options,
    cmd_orders,
    cmd_hooks,
    cmd_schema,
)


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


def _add_common_options(parser: argparse.ArgumentParser, *, defaults: bool) -> None:
    def default(value: object) -> object:
        return value if defaults else argparse.SUPPRESS

    parser.add_argument("--campaign", default=default("default"), help="campaign name (default: default)")
    parser.add_argument("--redis", metavar="URL", default=default(None),
                        help="Redis URL (redis://host:port/db or unix:///path); default: embedded server")
    parser.add_argument("--data-dir", metavar="DIR", default=default(None), help="embedded server's data directory")
    parser.add_argument("--no-color", action="store_true", default=default(False), help="plain output")
    parser.add_argument("--log", metavar="LEVEL", default=default(None),
                        help="engine log level on stderr (debug, info, warning)")
    parser.add_argument("--details", action="store_true", default=default(False),
                        help="show each roll's details in the narration")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="firelane", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # The common options go before the subcommand (`firelane --campaign x characters`) or after it.
    # The top-level parser holds their defaults; each subcommand's copy leaves an option it was
    # not given unset (SUPPRESS), so a value given before the subcommand is not overwritten.
    _add_common_options(parser, defaults=True)
    common = argparse.ArgumentParser(add_help=False)
    _add_common_options(common, defaults=False)
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
    demo.add_argument("--narrate", action="store_true", help="in a terminal, print every event (piped output always has them) "
                                                               "instead of one line of progress")
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
    create.add_argument("--lobby", action="store_true",
                        help="wait in the lobby: the seats can join, nothing is rolled until firelane start ENCOUNTER "
                             "(without it the fight starts at once, as scripts expect)")
    create.set_defaults(handler=cmd_create)

    start = sub.add_parser("start", parents=[common], help="start an encounter waiting in its lobby (firelane create --lobby, "
                                                           "or the workshop page)")
    start.add_argument("encounter")
    start.set_defaults(handler=cmd_start)

    options = sub.add_parser("options", parents=[common], help="what a seat may do now, with the command for each option")
    options.add_argument("encounter")
    options.add_argument("--seat", required=True, help="the seat (its id, e.g. gm or a player's)")
    options.add_argument("--json", action="store_true", help="the typed options as JSON (firelane schema --options)")
    options.set_defaults(handler=cmd_options)

    orders = sub.add_parser("orders", parents=[common], help="a seat's standing orders: what it answers while away")
    orders.add_argument("encounter")
    orders.add_argument("--seat", required=True, help="the player's seat whose orders these are")
    orders_change = orders.add_mutually_exclusive_group()
    orders_change.add_argument("--add", nargs=3, metavar=("COMBATANT", "ON", "DO"),
                               help="add an order: e.g. kell fire_lane reactive_fire, or kell turn ai")
    orders_change.add_argument("--remove", metavar="ID", help="remove the order with this id (e.g. o3)")
    orders_change.add_argument("--clear", action="store_true", help="remove every order of the seat")
    orders_change.add_argument("--set", metavar="FILE", help='replace them with a JSON file: {"orders": [...]}')
    orders.add_argument("--times", type=int, default=0, help="with --add: answer only the first N times (0: always)")
    orders.add_argument("--catalogue", action="store_true", help="also list the orders the rule system takes")
    orders.add_argument("--json", action="store_true", help="machine-readable")
    orders.set_defaults(handler=cmd_orders)

    hooks = sub.add_parser("hooks", parents=[common], help="webhooks of a seat or of the campaign: your turn, a window, a "
                                                           "GM ruling, the end")
    hooks.add_argument("encounter", nargs="?", default="")
    hooks.add_argument("--seat", help="the seat whose hooks these are (a player's or the GM's)")
    hooks.add_argument("--campaign-hooks", action="store_true", help="the campaign's hooks (its GM's: rulings, ends)")
    hooks_change = hooks.add_mutually_exclusive_group()
    hooks_change.add_argument("--add", metavar="URL", help="register a hook posting to URL (its secret is shown once)")
    hooks_change.add_argument("--remove", metavar="ID", help="remove a hook")
    hooks_change.add_argument("--deliveries", metavar="ID", help="a hook's delivery log, newest first")
    hooks.add_argument("--format", choices=("json", "discord", "slack"), default="json", help="with --add: the body's shape")
    hooks.add_argument("--kinds", metavar="KIND,...", help="with --add: what it is sent (your_turn, window, gm_ruling, "
                                                           "ended; default all)")
    hooks.add_argument("--allow-private", action="store_true",
                       help="with --add: allow a loopback or private address (as serve --allow-private-hooks)")
    hooks.add_argument("--json", action="store_true", help="machine-readable")
    hooks.set_defaults(handler=cmd_hooks)

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
    serve.add_argument("--allow-private-hooks", action="store_true",
                       help="let webhooks post to loopback and private addresses (refused by default: a hook could "
                            "otherwise reach this machine's or its network's own services)")
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
    """The command was stopped by a signal (see firelane.stop_signals)."""


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
    if args is not None and getattr(args, "serving_replay", False):
        print("firelane: stopped serving the table; the fight is over and stored", file=sys.stderr)
        return 0
    words = sys.argv[1:] if argv is None else argv
    command = args.command if args is not None else (words[0] if words else None)
    resume = "; resume with: firelane run ENCOUNTER" if command in ("run", "demo") else ""
    worker = bool(getattr(args, "engine_only", False)) if args is not None else "--engine-only" in words
    return stop_signals.answer(command, worker=worker, resume=resume)
