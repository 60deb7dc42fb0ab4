"""The `firelane` CLI end to end, as a user runs it, against the harness's redis-server
(and once with its own embedded server on a data directory)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path


from tests.cli_helpers import ENGINE_ENV, REPO, firelane, redis_servers_of


def test_demo_runs_a_fight_replays_and_verifies(redis_url: str) -> None:
    demo = firelane("demo", "--system", "toy", "--seed", "cli", "--encounter", "fight1", "--redis", redis_url)
    assert demo.returncode == 0, demo.stderr
    assert "Encounter Toy skirmish (toy) begins" in demo.stdout
    assert "Initiative" in demo.stdout and "arbiter order" in demo.stdout
    assert "Encounter over:" in demo.stdout
    assert "all verified" in demo.stdout

    replay = firelane("replay", "fight1", "--redis", redis_url, "--at", "4")
    assert replay.returncode == 0, replay.stderr
    lines = replay.stdout.splitlines()
    assert lines[3].strip().startswith("4 ") and "turn" in lines[3]
    assert lines[4].startswith("state at version 4: round 1")

    audit = firelane("audit", "fight1", "--redis", redis_url, "--verify")
    assert audit.returncode == 0, audit.stderr
    assert "[TOY-1] d6:" in audit.stdout
    assert audit.stdout.strip().splitlines()[-1].startswith("verified: seed matches its commitment")

    as_json = json.loads(firelane("audit", "fight1", "--redis", redis_url, "--json").stdout)
    assert as_json and as_json[0]["roll"]["rule"] in {"TOY-1", ""}
    # With --json, stdout is the JSON alone; the verdict goes to stderr.
    verified_json = firelane("audit", "fight1", "--redis", redis_url, "--json", "--verify")
    assert verified_json.returncode == 0, verified_json.stderr
    assert json.loads(verified_json.stdout) == as_json
    assert verified_json.stderr.startswith("verified: seed matches its commitment")

    roster = firelane("encounters", "--redis", redis_url)
    assert "fight1" in roster.stdout and "ended" in roster.stdout

    again = firelane("demo", "--system", "toy", "--encounter", "fight1", "--redis", redis_url)
    assert again.returncode == 2 and "already exists" in again.stderr


def test_clear_errors_for_bad_input(redis_url: str) -> None:
    unknown = firelane("demo", "--system", "chess", "--redis", redis_url)
    assert unknown.returncode == 2
    assert "unknown rule system 'chess'" in unknown.stderr and "bolt-and-blade" in unknown.stderr
    missing = firelane("replay", "nope", "--redis", redis_url)
    assert missing.returncode == 2 and "encounter 'nope' does not exist in campaign 'default'" in missing.stderr
    bad_id = firelane("replay", "bad id!", "--redis", redis_url)
    assert bad_id.returncode == 2 and "encounter" in bad_id.stderr
    at = firelane("demo", "--system", "toy", "--encounter", "f2", "--redis", redis_url, "--quiet")
    assert at.returncode == 0
    outside = firelane("replay", "f2", "--redis", redis_url, "--at", "100000")
    assert outside.returncode == 2 and "outside the log" in outside.stderr
    ended = firelane("submit", "f2", '{"type":"EndTurn","command_id":"x","actor":"a"}', "--redis", redis_url)
    assert ended.returncode == 2 and "has ended" in ended.stderr
    no_server = firelane("encounters", "--redis", "unix:///nonexistent/redis.sock")
    assert no_server.returncode == 2 and "cannot connect to Redis" in no_server.stderr


def start_engine_for_humans(redis_url: str, tmp_path: Path, encounter: str) -> subprocess.Popen[str]:
    """`firelane run` on a toy encounter whose two combatants are both played
    by humans (frontends), so the engine waits for commands until stopped.
    Returns once the encounter is registered."""
    setup = {"system": "toy", "combatants": [
        {"id": "a", "name": "Ann", "side": "red", "position": [0, 0], "policy": "human"},
        {"id": "b", "name": "Bo", "side": "blue", "position": [3, 0], "policy": "human"}]}
    setup_file = tmp_path / f"{encounter}.json"
    setup_file.write_text(json.dumps(setup))
    engine = subprocess.Popen([sys.executable, "-m", "firelane", "run", encounter, "--setup", str(setup_file),
                               "--redis", redis_url, "--quiet"], env=ENGINE_ENV, cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while f"{encounter} " not in firelane("encounters", "--redis", redis_url).stdout:
        if time.monotonic() > deadline:
            engine.kill()
            raise AssertionError(f"the engine never created {encounter}: {engine.communicate()[1]}")
        time.sleep(0.1)
    return engine


def test_submit_reports_a_rejection_from_a_running_engine(redis_url: str, tmp_path: Path) -> None:
    engine = start_engine_for_humans(redis_url, tmp_path, "h1")
    watcher = None
    try:
        watcher = subprocess.Popen([sys.executable, "-m", "firelane", "watch", "h1", "--redis", redis_url, "--no-color"],
                                   env=ENGINE_ENV, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        malformed = firelane("submit", "h1", '{"type": "Strike", ', "--redis", redis_url, "--wait", "20")
        assert malformed.returncode == 2, malformed.stdout + malformed.stderr
        assert "CommandRejected" in malformed.stdout and "malformed JSON" in malformed.stdout
        unknown = firelane("submit", "h1", '{"type":"Strike","command_id":"s1","actor":"zed","target":"a"}',
                           "--redis", redis_url, "--wait", "20")
        assert unknown.returncode == 2 and "unknown combatant 'zed'" in unknown.stdout
        # The GM ends the fight from the terminal; the engine reveals the seed and stops.
        # Acting as the engine is refused, whatever seat it comes from.
        forged = firelane("submit", "h1", '{"type":"EndEncounter","command_id":"x","actor":"sequencer","reason":"mine"}',
                          "--redis", redis_url, "--wait", "20")
        assert forged.returncode == 2 and "is the engine's alone" in forged.stdout
        ended = firelane("submit", "h1", '{"type":"EndEncounter","command_id":"gm-end","actor":"gm","reason":"called off"}',
                         "--redis", redis_url, "--wait", "20")
        assert ended.returncode == 0 and "EncounterEnded" in ended.stdout and "called off" in ended.stdout
        assert engine.wait(timeout=30) == 0
        # The watcher, another terminal frontend, narrated all of it live and stopped at the end.
        watched, _ = watcher.communicate(timeout=30)
    finally:
        for process in (engine, watcher):
            if process is not None and process.poll() is None:
                process.kill()
                process.communicate()
    assert "Encounter h1 (toy) begins" in watched
    assert "refused an unreadable command from an unknown sender: malformed JSON" in watched
    assert "unknown combatant 'zed'" in watched
    assert "Encounter over: no winner (called off)" in watched and "seed revealed" in watched


def test_embedded_server_keeps_the_campaign_across_runs(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = firelane("demo", "--system", "toy", "--seed", "p", "--encounter", "kept", "--data-dir", str(data), "--quiet")
    assert first.returncode == 0, first.stderr
    assert "started Redis" in first.stderr or "started Valkey" in first.stderr
    roster = firelane("encounters", "--data-dir", str(data))
    assert roster.returncode == 0 and "kept" in roster.stdout and "ended" in roster.stdout
    assert not (data / "redis.sock").exists(), "the embedded server must be stopped on exit"


def test_schema_describes_every_command_a_frontend_may_send() -> None:
    for system in ("bolt-and-blade", "d100-degrees", "d100-zones", "rond6"):
        result = firelane("schema", "--system", system)
        assert result.returncode == 0, result.stderr
        schema = json.loads(result.stdout)
        tags = set(schema["$defs"])
        assert {"EndTurn", "ClaimReaction", "PassReaction"} <= tags
        assert len(tags) > 6, f"{system} lists no commands of its own"
        assert set(schema["$defs"]["ClaimReaction"]["required"]) == {"type", "command_id", "actor", "window", "reaction"}
    events = json.loads(firelane("schema", "--events", "--system", "bolt-and-blade").stdout)
    assert {"EncounterStarted", "ReactionsOrdered", "SeedRevealed"} <= set(events["$defs"])


def test_a_second_engine_on_the_same_encounter_is_refused(redis_url: str, tmp_path: Path) -> None:
    first = start_engine_for_humans(redis_url, tmp_path, "twice")
    try:
        deadline = time.monotonic() + 30
        while "running" not in firelane("encounters", "--redis", redis_url).stdout:
            assert time.monotonic() < deadline, "the first engine never started the encounter"
            time.sleep(0.1)
        second = firelane("run", "twice", "--redis", redis_url, "--quiet")
        assert second.returncode == 2
        assert "encounter 'twice' is being run by another engine" in second.stderr
        assert first.poll() is None  # the first engine is unaffected
    finally:
        first.kill()
        first.communicate()


def test_the_documented_example_setup_runs_to_the_end_and_verifies(redis_url: str) -> None:
    """docs/examples/bolt-and-blade-corridor.json, as the README tells a table to run its own fight."""
    run = firelane("run", "corridor", "--setup", str(REPO / "docs" / "examples" / "bolt-and-blade-corridor.json"),
                   "--seed", "example", "--reproducible-dice", "--redis", redis_url, "--quiet")
    assert run.returncode == 0, run.stderr
    assert "winner:" in run.stdout
    audit = firelane("audit", "corridor", "--verify", "--redis", redis_url)
    assert audit.returncode == 0 and "verified: seed matches its commitment" in audit.stdout


def test_options_give_a_command_that_submit_sends_and_prints_with_the_systems_own_events(tmp_path: Path) -> None:
    """A RonD6 fight played from the terminal: `firelane options --json` lists
    what the active seat may do; `firelane submit` sends one listed command
    through that seat and prints the answer, RonD6's own events included."""
    from firelane.engine.registry import demo_setup
    import msgspec

    data = tmp_path / "data"
    setup = msgspec.to_builtins(demo_setup("rond6"))
    for combatant in setup["combatants"]:
        combatant["policy"] = "human"
    path = tmp_path / "rond6.json"
    path.write_text(json.dumps(setup))
    engine = subprocess.Popen([sys.executable, "-m", "firelane", "run", "duel", "--setup", str(path),
                               "--data-dir", str(data), "--quiet"], env=ENGINE_ENV, cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            seats = firelane("seats", "duel", "--data-dir", str(data), "--json")
            if seats.returncode == 0:
                options = [json.loads(firelane("options", "duel", "--seat", s["seat"], "--data-dir", str(data), "--json").stdout)
                           for s in json.loads(seats.stdout)["seats"] if s["role"] == "player"]
                active = [(o, c) for o in options if o and o["combatants"] for c in o["combatants"] if c["its_turn"]]
                if active:
                    break
            assert time.monotonic() < deadline, "no seat ever had a turn"
            time.sleep(0.2)
        seat_options, combatant = active[0]
        listed = [choice["command"] for action in combatant["actions"] for choice in action["choices"]]
        command = {**listed[0], "command_id": "from-the-terminal"}
        answer = firelane("submit", "duel", json.dumps(command), "--data-dir", str(data), "--wait", "20")
        assert answer.returncode == 0, answer.stdout + answer.stderr
        assert "Traceback" not in answer.stderr and answer.stdout.split()[1].startswith("R6")
    finally:
        # Stopped as a person stops it (SIGTERM), so the data dir's last user
        # stops its redis-server; a SIGKILL would leave that server running.
        engine.terminate()
        try:
            engine.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            engine.kill()
            engine.communicate()
    deadline = time.monotonic() + 15
    while redis_servers_of(data):
        assert time.monotonic() < deadline, "the data dir's redis-server outlived its last user"
        time.sleep(0.1)


def _one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The one line naming what is wrong; no traceback, exit code 2."""
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    return line


def test_bad_option_values_are_refused_before_anything_runs(redis_url: str, tmp_path: Path) -> None:
    cases = [
        (["demo", "--system", "toy", "--pace", "-1"], "argument --pace: must be 0 seconds or more, not -1"),
        (["run", "p1", "--demo-setup", "toy", "--pace", "nan"], "argument --pace: must be 0 seconds or more, not nan"),
        (["submit", "p1", "{}", "--wait", "-2"], "argument --wait: must be 0 seconds or more, not -2"),
        (["serve", "--port", "99999"], "argument --port: a port is from 0 to 65535, not 99999"),
        (["serve", "--redis-port", "-1"], "argument --redis-port: a port is from 0 to 65535, not -1"),
        (["create", "p1", "--setup", "x.json", "--demo-setup", "toy"], "argument --demo-setup: not allowed with argument --setup"),
        (["schema", "--events", "--options"], "argument --options: not allowed with argument --events"),
    ]
    for args, message in cases:
        line = _one_error_line(firelane(*args, "--redis", redis_url))
        assert line == f"firelane {args[0]}: error: {message} (see firelane {args[0]} --help)", line
    assert "p1" not in firelane("encounters", "--redis", redis_url).stdout  # nothing was created


def test_an_encounter_not_started_yet_and_a_wrong_seat_get_one_line_each(redis_url: str, redis_server) -> None:
    created = firelane("create", "later", "--demo-setup", "toy", "--redis", redis_url)
    assert created.returncode == 0, created.stderr
    for command in (["options", "later", "--seat", "gm"], ["replay", "later"], ["audit", "later", "--verify"]):
        line = _one_error_line(firelane(*command, "--redis", redis_url))
        assert line == ("firelane: error: encounter 'later' has not started: its log is empty until an engine runs it "
                        "(firelane serve, or firelane run later)"), line
    seats = [s["seat"] for s in json.loads(firelane("seats", "later", "--redis", redis_url, "--json").stdout)["seats"]]
    # A seat the encounter does not have would never be answered: refused at once, naming the seats.
    wrong = firelane("submit", "later", '{"type":"EndTurn","command_id":"c1","actor":"a"}', "--seat", "zed",
                     "--redis", redis_url)
    assert _one_error_line(wrong) == f"firelane: error: encounter 'later' has no seat 'zed' (its seats: {', '.join(seats)})"
    watching = firelane("submit", "later", '{"type":"EndTurn","command_id":"c1","actor":"a"}', "--seat", "spectator",
                        "--redis", redis_url)
    assert _one_error_line(watching) == "firelane: error: seat 'spectator' is a spectator's: it can watch, not act"
    # Nothing was written to an inbox: only the engine's (its start) exists.
    assert redis_server.command_sync("KEYS", "firelane:{default}:enc:later:inbox:*") == [
        b"firelane:{default}:enc:later:inbox:engine"]


def test_create_with_a_lobby_waits_for_firelane_start(redis_url: str) -> None:
    """`firelane create --lobby` makes the seats and rolls nothing; `firelane run` refuses it until
    `firelane start`; a plain `firelane create` starts at once, as scripts expect."""
    created = firelane("create", "waits", "--demo-setup", "toy", "--lobby", "--redis", redis_url)
    assert created.returncode == 0, created.stderr
    assert "it waits in the lobby until: firelane start waits --campaign default" in created.stderr
    refused = firelane("run", "waits", "--redis", redis_url)
    assert _one_error_line(refused) == ("firelane: error: encounter 'waits' waits in its lobby: start it first with "
                                        "firelane start waits --campaign default")
    started = firelane("start", "waits", "--redis", redis_url)
    assert started.returncode == 0 and started.stdout.startswith("started encounter waits; run it with firelane serve")
    again = firelane("start", "waits", "--redis", redis_url)
    assert _one_error_line(again) == "firelane: error: encounter 'waits' is not in the lobby: it has started already"
    played = firelane("run", "waits", "--redis", redis_url, "--quiet")
    assert played.returncode == 0 and "winner:" in played.stdout
    unknown = firelane("start", "nothing", "--redis", redis_url)
    assert _one_error_line(unknown) == "firelane: error: encounter 'nothing' does not exist in campaign 'default'"


def test_a_roster_page_past_the_last_says_so(redis_url: str) -> None:
    assert firelane("demo", "--system", "toy", "--encounter", "only", "--redis", redis_url, "--quiet").returncode == 0
    total = len(json.loads(firelane("encounters", "--redis", redis_url, "--json").stdout)["rows"])
    line = _one_error_line(firelane("encounters", "--page", str(total + 1), "--per-page", "1", "--redis", redis_url))
    assert line == f"firelane: error: --page {total + 1} is past the last page ({total} of 1 encounters each; {total} in all)"


def _console_script() -> list[str]:
    """The `firelane` console script as pip writes it from pyproject.toml (not
    the installed copy, which may predate a change of the entry point)."""
    entry = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]["firelane"]
    module, function = entry.split(":")
    return [sys.executable, "-c", f"import sys; from {module} import {function}; sys.exit({function}())"]


def _interrupt_while_loading(program: list[str], *args: str) -> tuple[int, list[str]]:
    """Run ``program`` and press Ctrl-C while it is importing the CLI; its exit
    code and its stderr without the import timings."""
    # -X importtime reports each module on stderr as its import ends: once
    # msgspec (cli.py's first import of a dependency) is in, cli.py itself is
    # loading, and it has hundreds of milliseconds to go. (Sooner, a Ctrl-C may
    # land in Python's own start, before any of firelane's code runs.)
    process = subprocess.Popen([program[0], "-X", "importtime", *program[1:], *args], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, env=ENGINE_ENV, cwd=REPO)
    assert process.stderr is not None
    lines = []
    for line in process.stderr:
        lines.append(line)
        if line.startswith("import time:") and line.rsplit("|", 1)[-1].strip() == "msgspec":
            process.send_signal(signal.SIGINT)
            break
    lines += process.stderr.readlines()
    code = process.wait(timeout=60)
    assert any(line.rsplit("|", 1)[-1].strip() == "msgspec" for line in lines), "".join(lines)
    return code, [line.rstrip("\n") for line in lines if not line.startswith("import time:")]


def test_ctrl_c_while_the_cli_is_still_loading_is_its_usual_line_not_a_traceback(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    interrupted = "firelane: interrupted (SIGINT); nothing is lost: the log keeps every event"
    cases = [
        (_console_script(), ("schema",), [interrupted], 130),
        (_console_script(), ("sim", "--demo-setup", "d100-degrees", "--runs", "10"), [interrupted], 130),
        ([sys.executable, "-m", "firelane"], ("encounters", "--data-dir", data), [interrupted], 130),
        # serve stops with 0 (README); the engine processes it starts say nothing (it speaks for them).
        ([sys.executable, "-m", "firelane"], ("serve", "--data-dir", data, "--port", "0"),
         ["firelane serve: stopped before serving; nothing was running"], 0),
        ([sys.executable, "-m", "firelane"], ("serve", "--engine-only", "--workers", "2", "--data-dir", data), [], 0),
    ]
    for program, args, said, exit_code in cases:
        code, stderr = _interrupt_while_loading(program, *args)
        # The same line a command says once loaded (serve's counts its encounters once it serves).
        assert (code, stderr) == (exit_code, said), (args, stderr)
    assert not (tmp_path / "data").exists(), "a command went on past the Ctrl-C (its data dir was made)"
