"""Hostile webhooks: a seat that owns a DNS name points it at a public address
while the hook is checked and at this machine when it is posted to (DNS
rebinding). The post must go only to an address that was checked."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from firelane.actors.hooks import DUE_KEY, HookRefused, Notice, Notifier, check_url, delivery_log, register_hook
from firelane.redisio import connect
from tests.hook_receiver import Receiver

PUBLIC = "93.184.216.34"


class RebindingResolver(trio.abc.HostnameResolver):
    """Answers a public address for the first `honest` look-ups of the
    attacker's name, then loopback (as a DNS server with a zero TTL can)."""

    def __init__(self, name: str, honest: int) -> None:
        self.name, self.honest, self.asked = name, honest, 0

    async def getaddrinfo(self, host, port, family=0, type=0, proto=0, flags=0):  # noqa: A002 - trio's names
        host = host.decode() if isinstance(host, bytes) else host
        if host != self.name:
            return await trio.socket.getaddrinfo(host, port, family, type, proto, flags)
        self.asked += 1
        address = PUBLIC if self.asked <= self.honest else "127.0.0.1"
        return [(trio.socket.AF_INET, trio.socket.SOCK_STREAM, 6, "", (address, int(port)))]

    async def getnameinfo(self, sockaddr, flags):
        raise OSError("not used")


@pytest.mark.parametrize("honest", [1, 2])  # rebinds after registering, or after the check before posting
async def test_a_rebinding_name_never_reaches_this_machine(redis_url: str, honest: int) -> None:
    client = await connect(redis_url)
    try:
        await client.execute("DEL", DUE_KEY)
        resolver = RebindingResolver("rebind.attacker.example", honest)
        trio.socket.set_custom_hostname_resolver(resolver)
        async with trio.open_nursery() as nursery:
            receiver = await nursery.start(Receiver().serve)
            hook = await register_hook(client, campaign="hostile", encounter=f"rebind{honest}", seat="alice",
                                       url=f"http://rebind.attacker.example:{receiver.port}/steal",
                                       format="json", allow_private=False)
            notifier = Notifier(client, allow_private=False, poll_s=3600)
            nursery.start_soon(notifier.run)
            await trio.sleep(0)
            notifier.offer([Notice(key=f"hostile/rebind{honest}/v1/your_turn/a", kind="your_turn", campaign="hostile",
                                   encounter=f"rebind{honest}", seat="alice", campaign_too=False,
                                   text="It is Ann's turn.")])
            rows: list = []
            with trio.move_on_after(8):
                while not rows:
                    await trio.sleep(0.05)
                    rows = await delivery_log(client, hook.id, count=10)
            nursery.cancel_scope.cancel()
        trio.socket.set_custom_hostname_resolver(None)
        assert rows, "no delivery was attempted"
        assert receiver.at("/steal") == []  # loopback was never posted to
        assert rows[0]["outcome"] == "refused"
        assert "127.0.0.1" in rows[0]["detail"] and "steal" not in rows[0]["detail"]
    finally:
        await client.aclose()


async def test_a_delivery_in_flight_when_serve_stops_is_sent_again_by_the_next(redis_url: str) -> None:
    """SIGTERM cancels the notifier while a receiver is still answering: the
    delivery it had claimed must not vanish with it."""
    client = await connect(redis_url)
    try:
        await client.execute("DEL", DUE_KEY)
        async with trio.open_nursery() as nursery:
            receiver = await nursery.start(Receiver().serve)
            await register_hook(client, campaign="hostile", encounter="stopped", seat="alice",
                                url=receiver.url("/slow"), format="json", allow_private=True)
            async with trio.open_nursery() as first_serve:
                notifier = Notifier(client, allow_private=True, poll_s=3600)
                first_serve.start_soon(notifier.run)
                await trio.sleep(0)
                notifier.offer([Notice(key="hostile/stopped/v1/your_turn/a", kind="your_turn", campaign="hostile",
                                       encounter="stopped", seat="alice", campaign_too=False, text="It is Ann's turn.")])
                with trio.fail_after(5):
                    await receiver.wait_for("/slow")
                first_serve.cancel_scope.cancel()  # serve stops (as on SIGTERM) mid-post
            assert len(receiver.at("/slow")) == 1
            next_serve = Notifier(client, allow_private=True, poll_s=0.2)
            nursery.start_soon(next_serve.run)
            with trio.fail_after(5):
                await receiver.wait_for("/slow", 2)  # the next serve posts it again
            nursery.cancel_scope.cancel()
        sent = {r.headers["firelane-delivery"] for r in receiver.at("/slow")}
        assert len(sent) == 1  # the same delivery id: the receiver can tell it is a repeat
    finally:
        await client.aclose()


class HangingResolver(RebindingResolver):
    """Answers the registration, then never answers again (a name server that stalls)."""

    async def getaddrinfo(self, host, port, family=0, type=0, proto=0, flags=0):  # noqa: A002 - trio's names
        host = host.decode() if isinstance(host, bytes) else host
        if host == self.name and self.asked >= self.honest:
            await trio.sleep_forever()
        return await super().getaddrinfo(host, port, family, type, proto, flags)


@pytest.fixture
def jumpy_clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0.25)


async def test_a_name_that_never_resolves_costs_one_timeout_not_a_delivery_slot_for_ever(redis_url: str, jumpy_clock) -> None:
    client = await connect(redis_url)
    try:
        await client.execute("DEL", DUE_KEY)
        trio.socket.set_custom_hostname_resolver(HangingResolver("stall.attacker.example", 1))
        async with trio.open_nursery() as nursery:
            hook = await register_hook(client, campaign="hostile", encounter="stall", seat="alice",
                                       url="http://stall.attacker.example/x", format="json", allow_private=False)
            notifier = Notifier(client, allow_private=False, poll_s=3600)
            nursery.start_soon(notifier.run)
            await trio.sleep(0)
            notifier.offer([Notice(key="hostile/stall/v1/your_turn/a", kind="your_turn", campaign="hostile",
                                   encounter="stall", seat="alice", campaign_too=False, text="It is Ann's turn.")])
            started = trio.current_time()
            rows: list = []
            with trio.move_on_after(60):
                while not rows:
                    await trio.sleep(1)
                    rows = await delivery_log(client, hook.id, count=10)
            took = trio.current_time() - started
            nursery.cancel_scope.cancel()
        trio.socket.set_custom_hostname_resolver(None)
        assert rows and rows[0]["outcome"] == "refused"
        assert rows[0]["detail"] == "url: the host 'stall.attacker.example' did not resolve within 5 s"
        assert took < 7
    finally:
        await client.aclose()


async def test_registering_a_name_that_never_resolves_is_refused_in_seconds(jumpy_clock) -> None:
    trio.socket.set_custom_hostname_resolver(HangingResolver("stall.attacker.example", 0))
    try:
        started = trio.current_time()
        with pytest.raises(HookRefused) as refused, trio.fail_after(60):
            await check_url("https://stall.attacker.example/x")
        assert str(refused.value) == "url: the host 'stall.attacker.example' did not resolve within 5 s"
        assert trio.current_time() - started == pytest.approx(5, abs=0.5)
    finally:
        trio.socket.set_custom_hostname_resolver(None)
