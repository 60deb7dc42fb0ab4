"""The campaign commands of `firelane`: characters, rest, and campaign export/import/verify.

    firelane characters                        the campaign's characters, with their state
    firelane characters ID                     one character: its sheet and its history
    firelane characters --create FILE          characters from a JSON file (see docs/campaigns.md)
    firelane characters --create-demo SYSTEM   the characters of a system's demo setup (--side S for one side)
    firelane rest CHARACTER... --days N        downtime between fights (--party for everyone who can rest)
    firelane character adjust ID --set F=V --reason R   the GM's change between fights (--add, --unset, --retire, --revive)
    firelane character release ID... --reason R   free characters from an encounter that never started (or has ended)
    firelane campaign token                    the campaign GM's sign-in link and token (--rotate: replace it)
    firelane campaign export NAME FILE         the whole campaign into a file signed with the store's key
    firelane campaign import FILE [--as NAME]  ... and back, into a store that does not have it
                                               (--trust FINGERPRINT: a file another store signed)
    firelane campaign verify FILE              check a file's signature, hash chain and every die, writing nothing
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import msgspec

from firelane.actors.campaign import adjust, create_characters, finish_open_downtime, gm_token, rest
from firelane.actors.release import release
from firelane.engine.campaign import Adjustment, CampaignState, DowntimeRequest, party
from firelane.engine.registry import demo_setup, get_system
from firelane.events.campaign_schemas import CharacterRested, DowntimeEnded, DowntimeStarted
from firelane.events.limits import MAX_SETUP_BYTES, MAX_SETUP_DEPTH, json_too_deep
from firelane.actors.store import CliError, open_store
from firelane.engine.wording import counted, explain_roll
from firelane.projections.narration import REPRODUCIBLE_DICE_WARNING
from firelane.projections.characters import campaign_characters, changes_text, character_history, downtime_audit


def chosen_seed(text: str | None, reproducible: bool) -> tuple[bytes | None, bool]:
    """The rest's seed (None: a random one) and whether its dice are reproducible: as for a fight."""
    from firelane.cli.common import chosen_seed as fight_seed

    seed, reproducible = fight_seed(text, reproducible)
    return (seed if reproducible else None), reproducible


def _store(args: argparse.Namespace, *, announce: bool = True):
    return open_store(redis_url=args.redis, data_dir=args.data_dir,
                      announce=(lambda m: print(m, file=sys.stderr, flush=True)) if announce else None)


def _read_json(path: str) -> Any:
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_SETUP_BYTES + 1)
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None
    if len(raw) > MAX_SETUP_BYTES:
        raise CliError(f"{path} is larger than {MAX_SETUP_BYTES:,} bytes")
    if json_too_deep(raw, MAX_SETUP_DEPTH):
        raise CliError(f"{path} nests deeper than {MAX_SETUP_DEPTH} levels")
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise CliError(f"{path} is not valid JSON: {exc}") from None


def characters_from(document: Any, source: str) -> list[tuple[Any, str, str, dict, str]]:
    """(system, id, name, sheet, notes) of every character a JSON document gives:
    ``{"characters": [...]}``, one character ``{"id", "system", "sheet", ...}``,
    or an encounter setup (each of its combatants becomes a character)."""
    if isinstance(document, dict) and isinstance(document.get("combatants"), list):
        system = document.get("system")
        items = [{**c, "system": system} if isinstance(c, dict) else c for c in document["combatants"]]
    elif isinstance(document, dict) and isinstance(document.get("characters"), list):
        items = document["characters"]
    elif isinstance(document, dict):
        items = [document]
    else:
        raise CliError(f"{source}: expected a character, {{\"characters\": [...]}} or an encounter setup")
    found = []
    for index, item in enumerate(items):
        where = f"{source}: character {index + 1}"
        if not isinstance(item, dict):
            raise CliError(f"{where} is not a JSON object")
        for field in ("id", "system"):
            if not isinstance(item.get(field), str) or not item[field]:
                raise CliError(f"{where}: {field!r} is missing")
        if not isinstance(item.get("sheet", {}), dict):
            raise CliError(f"{where} ({item['id']}): 'sheet' must be a JSON object")
        unknown = sorted(set(item) - {"id", "name", "system", "sheet", "notes", "side", "position", "policy"})
        if unknown:
            raise CliError(f"{where} ({item['id']}): unknown field {unknown[0]!r} (id, name, system, sheet, notes)")
        found.append((get_system(item["system"]), item["id"], str(item.get("name") or ""), dict(item.get("sheet", {})),
                      str(item.get("notes") or "")))
    if not found:
        raise CliError(f"{source} names no characters")
    return found


async def cmd_characters(args: argparse.Namespace) -> int:
    if args.create or args.create_demo:
        if args.create:
            wanted = characters_from(_read_json(args.create), args.create)
        else:
            setup = demo_setup(args.create_demo)
            combatants = [c for c in setup.combatants if not args.side or c.side == args.side]
            if not combatants:
                raise CliError(f"the {args.create_demo} demo has no side {args.side!r} "
                               f"(sides: {', '.join(sorted({c.side for c in setup.combatants}))})")
            wanted = [(get_system(setup.system), c.id, c.name, c.sheet, f"from the {setup.system} demo")
                      for c in combatants]
        async with _store(args) as store:
            created = await create_characters(store.event_log(args.campaign), wanted)
        print(f"created {len(created)} character{'s' if len(created) != 1 else ''} in campaign {args.campaign}: "
              f"{', '.join(created)}")
        return 0
    async with _store(args, announce=False) as store:
        event_log = store.event_log(args.campaign)
        if args.character:
            character, history = await character_history(event_log, args.character)
            if args.json:
                sys.stdout.buffer.write(msgspec.json.encode({"character": character, "history": history}) + b"\n")
                return 0
            print(character.describe())
            print(f"  sheet: {msgspec.json.encode(character.sheet).decode()}")
            for entry in history:
                print(f"  v{entry.version:<5} {entry.text}")
            return 0
        view = await campaign_characters(event_log)
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(view) + b"\n")
        return 0
    for problem in view.problems:
        print(f"warning: {problem}", file=sys.stderr)
    if not view.characters:
        print(f"campaign {args.campaign!r} has no characters yet (try: firelane characters --create-demo rond6)")
        return 0
    for character in view.characters:
        print(character.describe())
    if view.open_downtime is not None:
        print(f"downtime {view.open_downtime} has not finished: firelane rest --finish")
    return 0


def _print_rest(events: list[Any]) -> None:
    for event in events:
        if isinstance(event, DowntimeStarted):
            print(f"downtime {event.downtime}: {counted(event.days, 'day')}{' of strenuous activity' if event.strenuous else ''}"
                  f" for {', '.join(event.characters)}{'; healer ' + event.healer if event.healer else ''}"
                  f"; seed committed {event.seed_commitment[:16]}…")
            if event.reproducible_dice is True:
                print(f"  {REPRODUCIBLE_DICE_WARNING}")
        elif isinstance(event, CharacterRested):
            print(f"  {event.character}: {event.status}" + "".join(f"; {note}" for note in event.notes))
            for roll in event.rolls:
                print(f"      {explain_roll(roll, details=False)}")
        elif isinstance(event, DowntimeEnded):
            print(f"downtime {event.downtime}: seed revealed {event.seed[:16]}…; check every die with: "
                  f"firelane audit --downtime --verify")


async def cmd_rest(args: argparse.Namespace) -> int:
    seed, reproducible = chosen_seed(args.seed, args.reproducible_dice)
    if not args.finish:
        if args.party and args.characters:
            raise CliError("name the characters who rest, or --party for everyone who can; not both")
        if not args.party and not args.characters:
            raise CliError("name the characters who rest, or --party for everyone who can")
        if args.days is None:
            raise CliError("--days N: how many days the rest lasts")
    async with _store(args) as store:
        event_log = store.event_log(args.campaign)
        if args.finish:
            events = await finish_open_downtime(event_log)
            if not events:
                print("no downtime was left unfinished")
            _print_rest(events)
            return 0

        def request(state: CampaignState) -> DowntimeRequest:
            names = party(state) if args.party else list(args.characters)
            if args.party and not names:
                raise CliError(f"nobody in campaign {args.campaign!r} can rest: every character is dead or in a fight"
                               if state.characters else f"campaign {args.campaign!r} has no characters")
            return DowntimeRequest(characters=names, days=args.days, healer=args.healer or "",
                                   strenuous=args.strenuous, resupply=args.resupply)

        events = await rest(event_log, request, seed=seed, reproducible_dice=reproducible)
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(events) + b"\n")
        return 0
    _print_rest(events)
    return 0


async def cmd_audit_downtime(args: argparse.Namespace) -> int:
    """`firelane audit --downtime [--verify] [--json]`: every downtime roll, and its dice recomputed."""
    async with _store(args, announce=False) as store:
        entries, report = await downtime_audit(store.event_log(args.campaign))
    reproducible = (f"downtime {', '.join(map(str, report.reproducible_rests))}: {REPRODUCIBLE_DICE_WARNING}"
                    if report.reproducible_rests else "")
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(entries) + b"\n")
    else:
        if reproducible:
            print(reproducible)
        for entry in entries:
            print(entry.explain())
    if not args.verify:
        return 0
    verdict = sys.stderr if args.json else sys.stdout  # with --json, stdout is the JSON alone
    if report.ok:
        print(f"verified: every rest's seed matches its commitment; {report.dice} dice in {report.rolls} rolls "
              f"recomputed, all match" + (f" ({reproducible})" if reproducible else ""), file=verdict)
        return 0
    print(f"verification FAILED ({len(report.problems)} problems):", file=verdict)
    for problem in report.problems:
        print(f"  {problem}", file=verdict)
    return 1


def _field_value(text: str, option: str) -> tuple[str, Any]:
    """FIELD=VALUE, the value parsed as JSON when it is JSON (2, true, {"a": 1}, "text"), else the text itself."""
    field, sep, raw = text.partition("=")
    if not sep or not field.strip():
        raise CliError(f"{option} {text[:80]!r}: give FIELD=VALUE")
    try:
        value = msgspec.json.decode(raw.encode())
    except msgspec.DecodeError:
        value = raw
    return field.strip(), value


def adjustment_from(args: argparse.Namespace) -> Adjustment:
    sets = dict(_field_value(item, "--set") for item in args.set or [])
    adds: dict[str, Any] = {}
    for item in args.add or []:
        field, value = _field_value(item, "--add")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise CliError(f"--add {item[:80]!r}: the amount must be a number")
        adds[field] = adds.get(field, 0) + value
    if args.name is not None:
        sets["name"] = args.name
    if not (sets or adds or args.unset or args.retire or args.revive):
        raise CliError("nothing to adjust: give --set FIELD=VALUE, --add FIELD=N, --unset FIELD, --name, --retire or --revive")
    return Adjustment(set=sets, add=adds, unset=list(args.unset or []), retire=args.retire, revive=args.revive,
                      reason=args.reason or "")


async def cmd_character(args: argparse.Namespace) -> int:
    if args.action == "adjust":
        wanted = adjustment_from(args)
        async with _store(args, announce=False) as store:
            written = await adjust(store.event_log(args.campaign), args.character, wanted, via="cli")
        (event,) = written
        if args.json:
            sys.stdout.buffer.write(msgspec.json.encode(event) + b"\n")
            return 0
        what = [f"renamed from {event.renamed_from} to {event.name}"] if event.renamed_from else []
        what += [changes_text([c]) for c in event.changes]
        print(f"adjusted {event.character} ({event.name}): {'; '.join(what) or 'no sheet change'}; now {event.status}")
        for note in event.notes:
            print(f"  {note}")
        return 0
    async with _store(args, announce=False) as store:
        released = await release(store.event_log(args.campaign), args.characters, args.reason or "", via="cli")
    if args.json:
        sys.stdout.buffer.write(msgspec.json.encode(released) + b"\n")
        return 0
    if released.event is None:
        print(f"already released from {released.encounter}")
    else:
        how = "before it started" if released.encounter_status == "not started" else "after it ended"
        for outcome in released.event.characters:
            print(f"released {outcome.character} from {released.encounter} {how}: {outcome.status}"
                  + "".join(f"; {note}" for note in outcome.notes if not note.startswith("released before")))
    print(released.finished)
    return 0


def _warn_unbalanced(verified: Any) -> None:
    if verified.unbalanced:
        print(f"warning: {verified.unbalanced} roll(s) whose listed parts do not add up to their total (a rule "
              f"system's bookkeeping, shown by firelane audit --verify too); every die matches its seed",
              file=sys.stderr)


def _signed_by(verified: Any) -> str:
    """Whose signature the file carries, in words."""
    if verified.unsigned:
        return "UNSIGNED (accepted with --accept-unsigned: anyone could have made or changed it)"
    whose = "this store's key" if verified.own_key else "a key you trust (--trust), not this store's"
    return f"signed by key {verified.fingerprint} ({whose})"


def _trust(args: argparse.Namespace) -> Any:
    """What verify accepts: the data dir's own key (if it has one; verify makes none), and --trust."""
    from firelane.events.public_signing import parse_fingerprint
    from firelane.actors.store import default_data_dir, store_signing_key
    from firelane.actors.campaign_io import Trust
    from firelane.redisio.datadir import DataDir

    key = store_signing_key(DataDir(args.data_dir or default_data_dir()), create=False)
    try:
        trusted = frozenset(parse_fingerprint(f) for f in args.trust or [])
    except ValueError as exc:
        raise CliError(f"--trust {exc}") from None
    return Trust(own_key=key.fingerprint if key is not None else None, trusted=trusted,
                 accept_unsigned=args.accept_unsigned)


async def cmd_campaign(args: argparse.Namespace) -> int:
    from firelane.actors.campaign_io import export_campaign, import_campaign, store_trust, verify_export

    if args.action == "token":
        async with _store(args, announce=False) as store:
            event_log = store.event_log(args.campaign)
            if not args.new:
                from firelane.actors.workshop import create_campaign

                await create_campaign(event_log)  # a campaign named for the first time starts here (its token)
            token = await gm_token(event_log, renew=args.new)
            serve = await store.serve_info()
        if args.token_only:
            print(token)
            return 0
        if args.new:
            print(f"new GM token for campaign {args.campaign}: every browser signed in with the old one is signed out")
        base = serve.api if serve is not None else "http://127.0.0.1:8740"
        print(f"GM sign-in link: {base}/workshop/{args.campaign}#gm={token}"
              + ("" if serve is not None else "   (once firelane serve runs)"))
        print(f"GM token (Authorization: Bearer, for scripts): {token}")
        return 0
    if args.action == "verify":
        verified = await verify_export(args.file, trust=_trust(args))
        _warn_unbalanced(verified)
        print(f"{args.file}: campaign {verified.campaign!r}, {verified.encounters} encounters, {verified.characters} "
              f"characters, {verified.rests} rests, {verified.entries} entries; {_signed_by(verified)}; hash chain intact "
              f"(ends {verified.chain}); {verified.dice} dice in {verified.rolls} rolls recomputed from the revealed "
              f"seeds, all match")
        return 0
    if args.action == "export":
        async with _store(args, announce=False) as store:
            summary = await export_campaign(store, args.name, args.file)
        print(f"exported campaign {summary.campaign!r} to {summary.path}: {summary.encounters} encounters, "
              f"{summary.entries} entries in {summary.streams} streams; signed by this store's key {summary.fingerprint}; "
              f"chain {summary.chain}")
        return 0
    async with _store(args, announce=False) as store:
        try:
            trust = store_trust(store, args.trust or [], accept_unsigned=args.accept_unsigned)
        except ValueError as exc:
            raise CliError(f"--trust {exc}") from None
        name, verified = await import_campaign(store, args.file, args.as_name, trust=trust)
    _warn_unbalanced(verified)
    print(f"imported {args.file} as campaign {name!r}: {verified.encounters} encounters, {verified.characters} characters, "
          f"{verified.rests} rests, {verified.entries} entries; {_signed_by(verified)}; chain {verified.chain} and "
          f"{verified.dice} dice verified; new seat tokens: firelane seats ENCOUNTER --campaign {name}")
    return 0


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    characters = sub.add_parser("characters", parents=[common],
                                help="the campaign's characters; one character's history; --create FILE")
    characters.add_argument("character", nargs="?", help="show this character: its sheet and its history")
    characters.add_argument("--create", metavar="FILE", help="create characters from a JSON file (docs/campaigns.md)")
    characters.add_argument("--create-demo", metavar="SYSTEM", help="create the characters of a system's demo setup")
    characters.add_argument("--side", help="with --create-demo: only this side's combatants")
    characters.add_argument("--json", action="store_true", help="machine-readable")
    characters.set_defaults(handler=cmd_characters)

    resting = sub.add_parser("rest", parents=[common], help="downtime: characters rest for some days (rolled, verifiable)")
    resting.add_argument("characters", nargs="*", metavar="CHARACTER", help="who rests")
    resting.add_argument("--days", type=int, help="how long, in days")
    resting.add_argument("--party", action="store_true", help="everyone who can rest (alive, not in a fight)")
    resting.add_argument("--healer", metavar="CHARACTER", help="a character giving medical care (RonD6, d100-zones)")
    resting.add_argument("--strenuous", action="store_true", help="travel or hard work instead of rest")
    resting.add_argument("--resupply", action="store_true", help="refill magazines, grenades and reloads")
    resting.add_argument("--finish", action="store_true", help="only finish a rest that was interrupted")
    resting.add_argument("--seed", help="seed text for the rest; needs --reproducible-dice (default: secret random dice)")
    resting.add_argument("--reproducible-dice", action="store_true",
                         help="allow --seed TEXT: anyone who knows or guesses the text can predict every roll; "
                              "the rest's start records it")
    resting.add_argument("--json", action="store_true", help="the rest's events as JSON")
    resting.set_defaults(handler=cmd_rest)

    character = sub.add_parser("character", help="the GM's hand: adjust a character between fights, or release it")
    character_actions = character.add_subparsers(dest="action", required=True)
    adjusting = character_actions.add_parser(
        "adjust", parents=[common], help="change a character between fights (checked as a fight's start checks a sheet)")
    adjusting.add_argument("character", help="the character's id")
    adjusting.add_argument("--set", action="append", metavar="FIELD=VALUE",
                           help="set a sheet field (a path: fate_points, ammo.rifle, weapons.0.damage; name=... renames); "
                                "the value is read as JSON when it is JSON")
    adjusting.add_argument("--add", action="append", metavar="FIELD=N",
                           help="add N to a number (award Character Points: --add character_points=2; negative takes away)")
    adjusting.add_argument("--unset", action="append", metavar="FIELD", help="remove a sheet field")
    adjusting.add_argument("--name", help="rename the character")
    adjusting.add_argument("--retire", action="store_true", help="take the character out of play (no fights, no rests)")
    adjusting.add_argument("--revive", action="store_true",
                           help="bring a retired character back into play, a dead one back to life")
    adjusting.add_argument("--reason", help="why (required): it goes into the character's history")
    adjusting.add_argument("--json", action="store_true", help="the event written, as JSON")
    adjusting.set_defaults(handler=cmd_character)
    releasing = character_actions.add_parser(
        "release", parents=[common], help="free characters from an encounter that never started (or ended unrecorded)")
    releasing.add_argument("characters", nargs="+", metavar="CHARACTER")
    releasing.add_argument("--reason", help="why (required): it goes into the characters' history")
    releasing.add_argument("--json", action="store_true", help="machine-readable")
    releasing.set_defaults(handler=cmd_character)

    campaign = sub.add_parser("campaign", help="export, import or verify a whole campaign; its GM token")
    actions = campaign.add_subparsers(dest="action", required=True)
    export = actions.add_parser("export", parents=[common], help="write a campaign into a verifiable file")
    export.add_argument("name", help="the campaign")
    export.add_argument("file", help="the file to write")
    export.set_defaults(handler=cmd_campaign)
    importing = actions.add_parser("import", parents=[common], help="import a file into this store")
    importing.add_argument("file")
    importing.add_argument("--as", dest="as_name", metavar="NAME", help="the campaign's name here (default: the file's)")
    verify = actions.add_parser("verify", parents=[common],
                                help="check a file (signature, hash chain, dice) without importing")
    verify.add_argument("file")
    for checking in (importing, verify):
        checking.add_argument("--trust", action="append", metavar="FINGERPRINT",
                              help="also accept a file signed by this key (another store's: its export printed the "
                                   "fingerprint); this store's own key is always accepted")
        checking.add_argument("--accept-unsigned", action="store_true",
                              help="accept an unsigned file (format 1, from a firelane before signed exports), "
                                   "which proves nothing about who made it or whether it was changed")
        checking.set_defaults(handler=cmd_campaign)
    token = actions.add_parser("token", parents=[common],
                               help="print the campaign GM's sign-in link for the workshop page, and its token for the API")
    token.add_argument("--new", "--rotate", dest="new", action="store_true",
                       help="replace it with a new one: the old one stops working and every browser signed in with it "
                            "is signed out")
    token.add_argument("--token-only", action="store_true", help="print the token alone (for scripts)")
    token.set_defaults(handler=cmd_campaign)
