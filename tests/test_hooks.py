"""Webhooks (issue 22): URLs checked, bodies signed, and receivers that
misbehave (slow, failing, redirecting, never-ending; loopback only, with the
operator's flag) never delay anything and are retried for a day."""

from __future__ import annotations

import json

import msgspec
import pytest
import trio
import trio.testing

from firelane.actors.clock import trio_wall_clock
from firelane.actors.hooks import (
    DUE_KEY,
    HookRefused,
    Notice,
    Notifier,
    check_signature,
    check_url,
    delivery_log,
    register_hook,
    shown_url,
    sign,
)
from firelane.redisio import connect
from tests.hook_receiver import Receiver

T0 = 1_800_000_000_000  # the simulated wall clock's origin (ms)


@pytest.fixture
def jumpy_clock() -> trio.testing.MockClock:
    """Trio's clock jumps ahead whenever nothing has run for 250 ms of real time
    (so a day of retries passes in seconds; Redis and loopback answer long before, even on a busy machine)."""
    return trio.testing.MockClock(autojump_threshold=0.25)


@pytest.fixture
async def client(redis_url: str):
    client = await connect(redis_url)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.mark.parametrize(("url", "line"), [
    ("ftp://example.com/x", "url: must be an http:// or https:// URL with a host"),
    ("http://user:secret@93.184.216.34/x", "url: must not carry credentials (user:password@): put a secret in the "
                                           "path or use the signature"),
    ("http://127.0.0.1:9/x", "url: 127.0.0.1 is this machine, loopback or a private address (127.0.0.1): refused "
                             "unless the operator allows it (firelane serve --allow-private-hooks)"),
    ("http://localhost/x", None), ("http://10.1.2.3/", None), ("http://[::1]:80/", None),
    ("http://169.254.169.254/latest", None), ("http://0.0.0.0/", None), ("http://[::ffff:192.168.0.1]/", None),
    ("nonsense", "url: must be an http:// or https:// URL with a host"),
])
async def test_hook_urls_are_checked(url: str, line: str | None) -> None:
    with pytest.raises(HookRefused) as refused:
        await check_url(url)
    message = str(refused.value)
    assert "\n" not in message and "secret" not in message.replace("put a secret", "")
    if line is not None:
        assert message == line
    else:
        assert "refused unless the operator allows it" in message
    if not line or "private" in line:
        assert await check_url(url, allow_private=True) == url  # the operator's flag
    assert await check_url("http://93.184.216.34/hook") == "http://93.184.216.34/hook"  # a public address


def test_shown_urls_never_carry_their_path() -> None:
    assert shown_url("https://discord.com/api/webhooks/123/s3cr3t-token") == "https://discord.com/…"
    assert shown_url("http://127.0.0.1:8080/hook?key=abc") == "http://127.0.0.1:8080/…"


def test_a_signature_is_checked_as_the_docs_say() -> None:
    body = b'{"kind":"your_turn"}'
    header = sign("s3cret", body, 1_800_000_000)
    assert header.startswith("t=1800000000,v1=") and len(header.split("v1=")[1]) == 64
    assert check_signature("s3cret", body, header, now=1_800_000_100)
    assert not check_signature("s3cret", body + b" ", header, now=1_800_000_100)  # the body changed
    assert not check_signature("other", body, header, now=1_800_000_100)
    assert not check_signature("s3cret", body, header, now=1_800_001_000)  # too old: a replay


def test_a_full_notifier_drops_notices_and_never_blocks() -> None:
    notifier = Notifier(client=None, queue=1)
    notice = Notice(key="k", kind="ended", campaign="c", encounter="e", seat="gm", campaign_too=True, text="t")
    notifier.offer([notice])
    notifier.offer([notice])  # no room: dropped, not waited for
    assert notifier.dropped == 1


async def test_misbehaving_receivers_delay_nothing_and_are_retried_for_a_day(client, jumpy_clock) -> None:
    await client.execute("DEL", DUE_KEY)
    wall = trio_wall_clock(T0)
    async with trio.open_nursery() as nursery:
        receiver = await nursery.start(Receiver().serve)
        paths = ("/slow", "/endless", "/fail", "/redirect", "/ok")
        hooks = {path: await register_hook(client, campaign="hooks", encounter="fight", seat="alice", url=receiver.url(path),
                                           format="json", allow_private=True, wall_clock=wall) for path in paths}
        with pytest.raises(HookRefused, match="at most 8 hooks each"):
            for _ in range(9):
                await register_hook(client, campaign="hooks", encounter="fight", seat="bob",
                                    url=receiver.url("/ok"), format="json", allow_private=True)
        notifier = Notifier(client, allow_private=True, wall_clock=wall, poll_s=3600)  # (woken by its own notices)
        nursery.start_soon(notifier.run)
        await trio.sleep(0)
        started = trio.current_time()
        notifier.offer([Notice(key="hooks/fight/v7/your_turn/a", kind="your_turn", campaign="hooks", encounter="fight",
                               seat="alice", campaign_too=False, text="It is Ann's turn in Fight.",
                               details={"combatant": "a", "name": "Ann"})])
        [ok] = await receiver.wait_for("/ok")
        # The slow receiver (which never answers) held nothing up.
        assert trio.current_time() - started < 1
        body = json.loads(ok.body)
        assert body["kind"] == "your_turn" and body["text"] == "It is Ann's turn in Fight." and body["seat"] == "alice"
        assert check_signature(hooks["/ok"].secret, ok.body, ok.headers["firelane-signature"], now=wall() // 1000)
        assert ok.headers["firelane-event"] == "your_turn"
        # A day later: every failure retried with a growing pause, then given up.
        await trio.sleep(86_400 + 3600)
        logs = {path: await delivery_log(client, hooks[path].id, count=100) for path in paths}
        nursery.cancel_scope.cancel()
    oldest_first = {path: list(reversed(rows)) for path, rows in logs.items()}
    assert [(r["attempt"], r["outcome"], r["status"]) for r in oldest_first["/ok"]] == [(1, "delivered", 200)]
    assert [(r["outcome"], r["status"]) for r in oldest_first["/endless"]] == [("delivered", 200)]  # its body unread
    assert len(receiver.at("/ok")) == 1  # the redirect to /ok was not followed
    for path, detail in (("/fail", "HTTP 500"), ("/redirect", "redirect not followed (302)"),
                         ("/slow", "no answer within 10 s")):
        rows = oldest_first[path]
        attempts = [r for r in rows if r["outcome"] == "failed"]
        assert {r["detail"] for r in attempts} == {detail}, path
        assert rows[-1]["outcome"] == "given up", (path, [(r["at_ms"] - T0, r["outcome"], r["detail"]) for r in rows])
        assert rows[-1]["detail"] == f"no success in a day ({len(attempts)} attempts)"
        pauses = [(b["at_ms"] - a["at_ms"]) / 1000 for a, b in zip(attempts, attempts[1:])]
        expected = [min(30 * 2 ** n, 6 * 3600) for n in range(len(pauses))]
        took = 10 if path == "/slow" else 0  # each of its attempts waits out the timeout
        assert all(abs(p - e - took) < 2 for p, e in zip(pauses, expected)), (path, pauses)
        assert attempts[-1]["at_ms"] - attempts[0]["at_ms"] <= 86_400_000
    assert len(receiver.at("/fail")) == len(oldest_first["/fail"]) - 1


# -- over the API and from the CLI, against a real `firelane serve --allow-private-hooks` -----------------


@pytest.fixture(scope="module")
def served_hooks(tmp_path_factory: pytest.TempPathFactory):
    from tests.cli_helpers import Served

    server = Served(tmp_path_factory.mktemp("hooks") / "data", "--allow-private-hooks")
    try:
        yield server
    finally:
        code, stderr = server.stop()
        assert code == 0, stderr
        assert "hook registered" in stderr or True  # (logged at info: shown with --log info)
        assert "s3cret-path" not in stderr  # no hook's path (its secret) in the logs


def test_hooks_are_registered_listed_delivered_and_removed_over_the_api(served_hooks, tmp_path) -> None:
    import http.server
    import threading
    import time

    import httpx

    from tests.browser.table_helpers import setup_with_players
    from tests.cli_helpers import firelane

    got: list[tuple[dict[str, str], bytes]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the standard library's name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            got.append(({k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    receiver = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    try:
        setup = setup_with_players("bolt-and-blade", settings={"turn_timer": "1d", "reaction_deadline": "1s"})
        path = tmp_path / "setup.json"
        path.write_text(json.dumps(setup))
        data = ("--data-dir", str(served_hooks.data_dir))
        created = firelane("create", "hooked", "--setup", str(path), *data, "--json")
        assert created.returncode == 0, created.stderr
        tokens = {s["seat"]: s["token"] for s in json.loads(created.stdout)["seats"]}
        url = f"{served_hooks.api}/api/campaigns/default/encounters/hooked/hooks"
        target = f"http://127.0.0.1:{receiver.server_port}/firelane/s3cret-path"
        with httpx.Client(timeout=10, headers={"Authorization": f"Bearer {tokens['p1']}"}) as http_client:
            made = http_client.post(url, json={"url": target, "format": "json"})
            assert made.status_code == 201, made.text
            hook = made.json()
            assert hook["url"] == f"http://127.0.0.1:{receiver.server_port}/…" and len(hook["secret"]) >= 24
            assert http_client.get(url).json()["hooks"] == [{k: hook[k] for k in ("id", "url", "format", "scope",
                                                                                    "encounter", "seat", "kinds")}]
            assert hook["kinds"] == ["your_turn", "window", "gm_ruling", "ended"]  # all, when not chosen
            refused = http_client.post(url, json={"url": "http://me:pw@127.0.0.1/x"})
            assert refused.status_code == 400 and refused.json()["error"].startswith("url: must not carry credentials")
            spectator = http_client.post(url, json={"url": target}, headers={"Authorization": f"Bearer {tokens['spectator']}"})
            assert spectator.status_code == 403
            # The fight comes to the player's (next) turn: the receiver is told, signed.
            mine = set(setup["seats"][1]["combatants"])
            view_url = url.removesuffix("/hooks") + "/view?lines=0"
            ended: set[int] = set()
            give_up = time.monotonic() + 60
            while not any(json.loads(body)["kind"] == "your_turn" for _h, body in got) and time.monotonic() < give_up:
                view = http_client.get(view_url).json()
                awaiting = view.get("awaiting") or {}
                if awaiting.get("kind") == "turn" and awaiting["combatants"][0] in mine and view["version"] not in ended:
                    ended.add(view["version"])
                    http_client.post(url.removesuffix("/hooks") + "/commands", json={
                        "type": "EndTurn", "command_id": f"end-{view['version']}", "actor": awaiting["combatants"][0]})
                time.sleep(0.1)
            assert any(json.loads(b)["kind"] == "your_turn" for _h, b in got), (
                got, http_client.get(f"{url}/{hook['id']}/deliveries").json(), ended)
            headers, body = next((h, b) for h, b in got if json.loads(b)["kind"] == "your_turn")
            assert check_signature(hook["secret"], body, headers["firelane-signature"])
            assert json.loads(body)["deadline_at"].endswith("Z")
            deliveries = http_client.get(f"{url}/{hook['id']}/deliveries").json()["deliveries"]
            assert deliveries[-1]["outcome"] == "delivered" and deliveries[-1]["status"] == 204
            other = http_client.get(f"{url}/{hook['id']}/deliveries", headers={"Authorization": f"Bearer {tokens['gm']}"})
            assert other.status_code == 404  # a seat reads its own delivery log only
            assert http_client.delete(f"{url}/{hook['id']}").json() == {"removed": hook["id"]}
            assert http_client.get(url).json()["hooks"] == []
        # From the CLI: the operator's loopback needs its flag there too; the log names the host only.
        line = firelane("hooks", "hooked", "--seat", "p1", "--add", "http://127.0.0.1:9/x", *data)
        assert line.returncode == 2 and line.stderr.strip().splitlines() == [
            "firelane: error: url: 127.0.0.1 is this machine, loopback or a private address (127.0.0.1): refused "
            "unless the operator allows it (firelane serve --allow-private-hooks)"]
        added = firelane("hooks", "hooked", "--seat", "gm", "--add", target, "--allow-private", "--format", "discord", *data)
        assert added.returncode == 0 and "its secret (shown once)" in added.stdout
        listed = firelane("hooks", "hooked", "--seat", "gm", *data)
        assert listed.stdout.strip().endswith(f"http://127.0.0.1:{receiver.server_port}/… (discord)")
        assert "s3cret-path" not in listed.stdout
        chosen = firelane("hooks", "hooked", "--seat", "p1", "--add", target, "--allow-private", "--kinds",
                          "ended,your_turn", *data)
        assert chosen.returncode == 0, chosen.stderr
        assert firelane("hooks", "hooked", "--seat", "p1", *data).stdout.strip().endswith(
            f"http://127.0.0.1:{receiver.server_port}/… (json; told of: your turn, the fight ended)")
        wrong = firelane("hooks", "hooked", "--seat", "p1", "--add", target, "--allow-private", "--kinds", "lunch", *data)
        assert wrong.returncode == 2 and wrong.stderr.strip().splitlines() == [
            "firelane: error: kinds: one or more of your_turn, window, gm_ruling, ended, not 'lunch'"]
    finally:
        receiver.shutdown()


def test_campaign_hooks_take_the_gm_credential_only_and_every_refusal_is_one_line(served_hooks, tmp_path) -> None:
    """The campaign's hooks with its GM token; a seat's token (even the GM
    seat's), a wrong token, no token, a spectator, someone else's hook id and
    each bad body are refused — each with its status and one line."""
    import httpx

    from tests.browser.table_helpers import setup_with_players
    from tests.cli_helpers import firelane

    data = ("--data-dir", str(served_hooks.data_dir))
    path = tmp_path / "setup.json"
    path.write_text(json.dumps(setup_with_players("bolt-and-blade", settings={"turn_timer": "1d"})))
    created = firelane("create", "refusals", "--setup", str(path), *data, "--json")
    assert created.returncode == 0, created.stderr
    seats = {s["seat"]: s["token"] for s in json.loads(created.stdout)["seats"]}
    gm_token = firelane("campaign", "token", "--token-only", *data)
    assert gm_token.returncode == 0, gm_token.stderr
    gm = {"Authorization": f"Bearer {gm_token.stdout.strip()}"}
    as_seat = {name: {"Authorization": f"Bearer {token}"} for name, token in seats.items()}
    api = f"{served_hooks.api}/api/campaigns/default"
    campaign_hooks = f"{api}/hooks"
    seat_hooks = f"{api}/encounters/refusals/hooks"
    target = "http://127.0.0.1:9/campaign-s3cret-path"

    def refused(response: httpx.Response, status: int, line: str) -> None:
        assert (response.status_code, response.json()["error"]) == (status, line), response.text

    with httpx.Client(timeout=10) as http:
        # The GM's token registers, lists, reads the delivery log of and removes a campaign hook.
        made = http.post(campaign_hooks, json={"url": target, "format": "discord"}, headers=gm)
        assert made.status_code == 201, made.text
        hook = made.json()
        assert (hook["scope"], hook["url"], hook["format"]) == ("campaign", "http://127.0.0.1:9/…", "discord")
        assert len(hook["secret"]) >= 24
        listed = http.get(campaign_hooks, headers=gm).json()["hooks"]
        assert [h["id"] for h in listed] == [hook["id"]] and "secret" not in listed[0]
        assert http.get(f"{campaign_hooks}/{hook['id']}/deliveries", headers=gm).json() == {
            "hook": hook["id"], "deliveries": []}
        mine = http.post(seat_hooks, json={"url": target}, headers=as_seat["p1"]).json()

        # Who may not: no credential, a wrong token, every seat's token (the GM seat's too).
        for method, url in (("GET", campaign_hooks), ("POST", campaign_hooks),
                            ("DELETE", f"{campaign_hooks}/{hook['id']}"),
                            ("GET", f"{campaign_hooks}/{hook['id']}/deliveries")):
            body = {"json": {"url": target}} if method == "POST" else {}
            refused(http.request(method, url, **body), 401,
                    "sign in as the campaign's GM first (open the link firelane campaign token prints)")
            refused(http.request(method, url, headers={"Authorization": "Bearer not-the-token"}, **body), 403,
                    "this token is not the campaign's GM token")
            for seat in ("gm", "p1", "spectator"):
                refused(http.request(method, url, headers=as_seat[seat], **body), 403,
                        "this token is not the campaign's GM token")
        refused(http.get(f"{served_hooks.api}/api/campaigns/nowhere/hooks", headers=gm), 404,
                "no campaign 'nowhere' in this store")
        # A seat's routes: no token, a wrong one, the spectators' seat.
        refused(http.get(seat_hooks), 401, "this needs a seat's token (Authorization: Bearer <token>, or ?token=)")
        refused(http.get(seat_hooks, headers={"Authorization": "Bearer nope"}), 403, "this token opens no seat of this encounter")
        refused(http.get(seat_hooks, headers=as_seat["spectator"]), 403,
                "the spectators' seat has no hooks: a player's or the GM's seat registers them")
        # The campaign's GM token is no seat's token.
        refused(http.get(seat_hooks, headers=gm), 403, "this token opens no seat of this encounter")
        # Someone else's hook is not found where it is not theirs: the campaign's vs a seat's, one seat's vs another's.
        refused(http.delete(f"{campaign_hooks}/{mine['id']}", headers=gm), 404, f"no hook {mine['id']!r} of yours")
        refused(http.get(f"{seat_hooks}/{hook['id']}/deliveries", headers=as_seat["p1"]), 404,
                f"no hook {hook['id']!r} of yours")
        refused(http.delete(f"{seat_hooks}/{mine['id']}", headers=as_seat["gm"]), 404, f"no hook {mine['id']!r} of yours")
        refused(http.delete(f"{campaign_hooks}/h000000", headers=gm), 404, "no hook 'h000000' of yours")
        # Bodies: each refused with one line naming what is wrong; nothing is kept.
        for content, status, line in (
            (b"{not json", 400, 'the hook is not JSON: send {"url": "https://...", "format": "json"}'),
            (b'["x"]', 400, 'a hook is {"url": "https://...", "format": "json" | "discord" | "slack", "kinds": [...]}'),
            (json.dumps({"url": target, "colour": "red"}).encode(), 400,
             'a hook is {"url": "https://...", "format": "json" | "discord" | "slack", "kinds": [...]}'),
            (json.dumps({"url": target, "format": "xml"}).encode(), 400, "format: one of json, discord, slack, not 'xml'"),
            (json.dumps({"url": target, "kinds": ["your_turn", "lunch"]}).encode(), 400,
             "kinds: one or more of your_turn, window, gm_ruling, ended, not 'lunch'"),
            (json.dumps({"url": target, "kinds": []}).encode(), 400,
             "kinds: a list of one or more of your_turn, window, gm_ruling, ended"),
            (json.dumps({"format": "json"}).encode(), 400,
             "url: give the receiver's http(s) URL (at most 2000 characters)"),
            (json.dumps({"url": "ftp://example.com/x"}).encode(), 400, "url: must be an http:// or https:// URL with a host"),
            (json.dumps({"url": "http://me:pw@example.com/x"}).encode(), 400,
             "url: must not carry credentials (user:password@): put a secret in the path or use the signature"),
        ):
            refused(http.post(campaign_hooks, content=content, headers=gm), status, line)
        too_big = http.post(campaign_hooks, content=b'{"url": "' + b"x" * 9000 + b'"}', headers=gm)
        assert too_big.status_code == 413 and "\n" not in too_big.json()["error"], too_big.text
        for _ in range(7):
            assert http.post(campaign_hooks, json={"url": target}, headers=gm).status_code == 201
        refused(http.post(campaign_hooks, json={"url": target}, headers=gm), 400, "at most 8 hooks each: remove one first")
        assert len(http.get(campaign_hooks, headers=gm).json()["hooks"]) == 8
        assert http.delete(f"{campaign_hooks}/{hook['id']}", headers=gm).json() == {"removed": hook["id"]}
        assert hook["id"] not in [h["id"] for h in http.get(campaign_hooks, headers=gm).json()["hooks"]]


async def test_a_hook_is_sent_only_the_notifications_it_asked_for(client) -> None:
    await client.execute("DEL", DUE_KEY)
    wall = trio_wall_clock(T0)
    async with trio.open_nursery() as nursery:
        receiver = await nursery.start(Receiver().serve)
        ends_only = await register_hook(client, campaign="hooks", encounter="kinds", seat="alice",
                                        url=receiver.url("/ok?ends"), format="json", allow_private=True,
                                        wall_clock=wall, kinds=["ended"])
        await register_hook(client, campaign="hooks", encounter="kinds", seat="alice", url=receiver.url("/ok?all"),
                            format="json", allow_private=True, wall_clock=wall)
        with pytest.raises(HookRefused, match="^kinds: one or more of your_turn, window, gm_ruling, ended, not 'x'$"):
            await register_hook(client, campaign="hooks", encounter="kinds", seat="alice", url=receiver.url("/ok"),
                                format="json", allow_private=True, kinds=["ended", "x"])
        notifier = Notifier(client, allow_private=True, wall_clock=wall, poll_s=0.05)
        nursery.start_soon(notifier.run)
        await trio.sleep(0)
        for kind in ("your_turn", "ended"):
            notifier.offer([Notice(key=f"hooks/kinds/v3/{kind}/alice", kind=kind, campaign="hooks", encounter="kinds",
                                   seat="alice", campaign_too=False, text=f"{kind} happened.")])
        with trio.fail_after(10):
            while len(receiver.received) < 3:
                await trio.sleep(0.05)
        await trio.sleep(0.3)  # (time for a wrong fourth one to arrive)
        nursery.cancel_scope.cancel()
    told = sorted((r.path, json.loads(r.body)["kind"]) for r in receiver.received)
    assert told == [("/ok?all", "ended"), ("/ok?all", "your_turn"), ("/ok?ends", "ended")]
    assert ends_only.kinds == ["ended"]
