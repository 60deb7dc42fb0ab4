"""Standing orders (issue 22): a seat's answers declared in advance, applied
at a window's deadline (or when its turn times out) when no live answer came;
the seat's answer in the log, citing the order; a live answer wins."""

from __future__ import annotations

import json

import msgspec
import pytest
import trio
import trio.testing

from firelane.actors.clock import trio_wall_clock
from firelane.actors.orders import OrdersRefused, seat_orders, set_seat_orders
from firelane.actors.policies import AIPolicy
from firelane.actors.sequencer import Sequencer, create_encounter, load_seed
from firelane.engine.orders import StandingOrder, check_orders, describe_order, turn_answer, window_answer
from firelane.engine.registry import get_system, register_system
from firelane.engine.seats import default_seats
from firelane.events import codec
from firelane.events.log import EventLog
from firelane.events.schemas import ClaimReaction, EndTurn, PassReaction, TurnTimedOut
from firelane.redisio import connect
from firelane.web.table import TableFold
from tests.test_gm_and_rewind import act, started, table_setup
from tests.test_runtime import wait_for_state
from tests.toy_system import TOY, Step

register_system(TOY, "tests.toy_system")
UNION = codec.command_union(TOY.command_types)


def order(**fields) -> StandingOrder:
    return StandingOrder(**{"combatant": "a", **fields})


def window_for_ann():
    """Ann (alice's) ends her turn; Bo steps past her: a "step" window awaits her."""
    state = started(table_setup())
    act(state, EndTurn(command_id="e", actor="a"))
    act(state, Step(command_id="s", actor=state.active, to=(5, 5)))
    assert state.window is not None and state.window.unanswered() == ["a"]
    return state


# -- pure: what an order says, and which answers --------------------------------------------


@pytest.mark.parametrize(("orders", "line"), [
    ([order(combatant="b", on="step", do="snap")], "orders[0].combatant: seat alice does not control 'b' (it controls: a)"),
    ([order(on="blink", do="snap")], "orders[0].on: Toy has no window 'blink' (known: any, turn, step, snap_hit)"),
    ([order(on="step", do="brace")], "orders[0].do: step takes pass, duck, snap, not 'brace'"),
    ([order(on="turn", do="dance")], "orders[0].do: a turn order does one of end_turn, ai, gm, not 'dance'"),
    ([order(on="step", do="snap", times=-1)], "orders[0].times: must be from 0 (every time) to 1000, not -1"),
])
def test_orders_a_seat_may_not_give_are_refused_in_one_line(orders, line: str) -> None:
    seats = default_seats(table_setup())
    assert check_orders(TOY, seats, "alice", orders) == line
    assert check_orders(TOY, seats, "gm", []) == "only a player's seat gives standing orders (for the combatants it controls)"
    assert check_orders(TOY, seats, "alice", [order(on="step", do="snap", times=1), order(on="any", do="pass"),
                                               order(on="turn", do="ai")]) is None


def test_orders_are_said_in_words() -> None:
    names = {"a": "Ann"}
    assert describe_order(TOY, names, order(on="step", do="snap", times=1)) == "Ann: when an enemy steps past me, Snap shot (once)"
    assert describe_order(TOY, names, order(on="any", do="pass")) == "Ann: in any window, pass"
    assert describe_order(TOY, names, order(on="turn", do="ai")) == "Ann: when my turn runs out of time, let the AI play it"


def test_the_first_order_that_fits_answers_and_one_used_up_or_not_offered_is_skipped() -> None:
    state = window_for_ann()
    number = state.window.window
    orders = [order(id="o1", on="snap_hit", do="brace"), order(id="o2", on="step", do="snap", times=1),
              order(id="o3", on="any", do="pass")]
    chosen, command = window_answer(TOY, state, "a", orders, {}, UNION)
    assert chosen.id == "o2" and command == ClaimReaction(command_id="", actor="a", window=number, reaction="snap")
    chosen, command = window_answer(TOY, state, "a", orders, {"o2": 1}, UNION)  # used up: the next fits
    assert chosen.id == "o3" and command == PassReaction(command_id="", actor="a", window=number)
    assert window_answer(TOY, state, "a", orders[:1], {}, UNION) is None  # no order for this window
    assert window_answer(TOY, state, "b", orders, {}, UNION) is None  # another's combatant
    assert turn_answer(TOY, state, "a", "alice", [order(id="o4", on="turn", do="gm")], {}, UNION)[1] == "gm"


# -- live ------------------------------------------------------------------------------------


@pytest.fixture
async def event_log(redis_url: str):
    client = await connect(redis_url)
    try:
        yield EventLog(client, "orders", server_key=b"k" * 32)
    finally:
        await client.aclose()


async def _window_for_ann(event_log: EventLog, encounter: str, mock_clock, orders: list[dict], *, live=None):
    """Ann ends her turn; the AI's Bo or Cy steps past her; the window's hour
    runs out (or ``live`` answers first). Returns the stored log."""
    await create_encounter(event_log, encounter, table_setup(reaction_deadline="1h"), b"s" * 32)
    seed = await load_seed(event_log, encounter)
    players = {"b": AIPolicy(TOY), "c": AIPolicy(TOY)}
    async with trio.open_nursery() as nursery:
        nursery.start_soon(Sequencer(event_log, encounter, TOY, seed, wall_clock=trio_wall_clock(0), players=players).run)
        await wait_for_state(event_log, encounter, lambda s: s.active == "a", pause=0)
        await set_seat_orders(event_log, encounter, "alice", json.dumps({"orders": orders}).encode())
        await event_log.submit(encounter, codec.encode_command(EndTurn(command_id="done", actor="a")), seat="alice")
        state = await wait_for_state(event_log, encounter, lambda s: s.window is not None, pause=0)
        if live is not None:
            await event_log.submit(encounter, codec.encode_command(live(state.window.window)), seat="alice")
        else:
            await trio.testing.wait_all_tasks_blocked(0.05)
            mock_clock.jump(3600.5)
        await wait_for_state(event_log, encounter, lambda s: s.window is None, pause=0)
        nursery.cancel_scope.cancel()
    return await event_log.read(encounter)


async def test_an_order_answers_a_window_at_its_deadline_as_the_seats_answer_citing_it(event_log: EventLog, mock_clock) -> None:
    stored = await _window_for_ann(event_log, "by-order", mock_clock, [{"combatant": "a", "on": "step", "do": "duck",
                                                                        "times": 1}])
    claimed = next(s for s in stored if s.type == "ReactionClaimed")
    window = codec.decode_event(next(s for s in stored if s.type == "ReactionWindowOpened")).window
    assert claimed.command_id == f"alice/order-o1-w{window}" and claimed.causation == "order:alice:o1"
    assert codec.decode_event(claimed).reaction == "duck"
    fold = TableFold("by-order")  # the page's line says so
    fold.catch_up(stored)
    words = "".join(text for text, _classes in fold.lines[claimed.version]["segs"])
    assert words.endswith("— by a standing order"), words
    shown = await seat_orders(event_log, "by-order", "alice")
    assert [(o["id"], o["used"], o["text"]) for o in shown["orders"]] == [
        ("o1", 1, "Ann: when an enemy steps past me, Duck (once)")]


async def test_a_live_answer_inside_the_window_wins_over_the_order(event_log: EventLog, mock_clock) -> None:
    stored = await _window_for_ann(event_log, "live-wins", mock_clock, [{"combatant": "a", "on": "step", "do": "duck"}],
                                   live=lambda window: ClaimReaction(command_id="live", actor="a", window=window,
                                                                     reaction="snap"))
    claimed = next(s for s in stored if s.type == "ReactionClaimed")
    assert claimed.command_id == "alice/live" and codec.decode_event(claimed).reaction == "snap"
    assert not any(s.causation.startswith("order:") for s in stored)
    assert (await seat_orders(event_log, "live-wins", "alice"))["orders"][0]["used"] == 0


async def test_a_turn_order_says_how_a_timed_out_turn_is_spent(event_log: EventLog, mock_clock) -> None:
    encounter = "turn-order"
    await create_encounter(event_log, encounter, table_setup(turn_timer="12h"), b"s" * 32)
    seed = await load_seed(event_log, encounter)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(Sequencer(event_log, encounter, TOY, seed, wall_clock=trio_wall_clock(0)).run)
        await wait_for_state(event_log, encounter, lambda s: s.active == "a", pause=0)
        await set_seat_orders(event_log, encounter, "alice", b'{"orders": [{"combatant": "a", "on": "turn", "do": "gm"}]}')
        await trio.testing.wait_all_tasks_blocked(0.05)
        mock_clock.jump(12 * 3600 + 1)
        await wait_for_state(event_log, encounter, lambda s: s.time_up == "turn", pause=0)
        nursery.cancel_scope.cancel()
    timed_out = next(s for s in await event_log.read(encounter) if s.type == "TurnTimedOut")
    assert codec.decode_event(timed_out) == TurnTimedOut(round=1, combatant="a", then="gm")
    assert timed_out.causation == "order:alice:o1"


async def test_orders_are_kept_per_seat_with_ids_never_reused(event_log: EventLog) -> None:
    encounter = "ids"
    await create_encounter(event_log, encounter, table_setup(), b"s" * 32)
    with pytest.raises(OrdersRefused, match="has not started"):
        await seat_orders(event_log, encounter, "alice")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(Sequencer(event_log, encounter, TOY, await load_seed(event_log, encounter)).run)
        await wait_for_state(event_log, encounter, lambda s: s.started)
        nursery.cancel_scope.cancel()
    first = await set_seat_orders(event_log, encounter, "alice", b'{"orders": [{"combatant": "a", "on": "step", "do": "duck"}]}')
    kept = first["orders"][0]
    # Edited (its id kept), and one more, whose made-up id is not taken: it gets a new one.
    body = {"orders": [{**{k: kept[k] for k in ("id", "combatant", "on")}, "do": "snap"},
                       {"id": "o1", "combatant": "a", "on": "any", "do": "pass"}]}
    second = await set_seat_orders(event_log, encounter, "alice", msgspec.json.encode(body))
    assert [(o["id"], o["do"]) for o in second["orders"]] == [("o1", "snap"), ("o2", "pass")]
    with pytest.raises(OrdersRefused) as refused:
        await set_seat_orders(event_log, encounter, "alice", b'{"orders": [{"combatant": "a", "on": "step"}]}')
    assert str(refused.value) == "orders: Object missing required field `do` - at `$.orders[0]`"
    with pytest.raises(OrdersRefused, match="only a player's seat"):
        await set_seat_orders(event_log, encounter, "gm", b'{"orders": []}')
    assert (await seat_orders(event_log, encounter, "gm"))["orders"] == []
    catalogue = (await seat_orders(event_log, encounter, "alice"))["catalogue"]
    assert [k["on"] for k in catalogue["windows"]] == ["any", "step", "snap_hit"]
    assert [d["do"] for d in catalogue["turn"]["do"]] == ["end_turn", "ai", "gm"]


def test_every_system_has_orders_built_from_its_windows_and_reactions() -> None:
    for name in ("bolt-and-blade", "d100-degrees", "d100-zones", "rond6"):
        system = get_system(name)
        assert system.orders.windows, name
        for kind in system.orders.windows:
            assert kind.label and kind.reactions
            for reaction in kind.reactions:
                assert reaction in system.labels.reactions, (name, reaction)  # a word for every answer


# -- over the API and from the CLI, against a real `firelane serve` -------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    from tests.cli_helpers import serve_for_module

    yield from serve_for_module(tmp_path_factory, "orders")


def test_orders_are_shown_and_edited_over_the_api_and_from_the_cli(served, tmp_path) -> None:
    import time

    import httpx

    from tests.browser.table_helpers import setup_with_players
    from tests.cli_helpers import firelane

    setup = setup_with_players("bolt-and-blade")
    kell = setup["seats"][1]["combatants"][0]
    name = next(c["name"] for c in setup["combatants"] if c["id"] == kell)
    path = tmp_path / "setup.json"
    path.write_text(json.dumps(setup))
    data = ("--data-dir", str(served.data_dir))
    created = firelane("create", "standing", "--setup", str(path), *data, "--json")
    assert created.returncode == 0, created.stderr
    tokens = {s["seat"]: s["token"] for s in json.loads(created.stdout)["seats"]}
    url = f"{served.api}/api/campaigns/default/encounters/standing/orders"
    with httpx.Client(timeout=10, headers={"Authorization": f"Bearer {tokens['p1']}"}) as http:
        give_up = time.monotonic() + 60
        while (response := http.get(url)).status_code == 409 and time.monotonic() < give_up:
            time.sleep(0.1)  # the engine starts it
        assert response.status_code == 200 and response.json()["orders"] == []
        added = firelane("orders", "standing", "--seat", "p1", "--add", kell, "fire_lane", "reactive_fire", "--times", "1", *data)
        assert added.returncode == 0, added.stderr
        assert added.stdout.splitlines() == [f"o1  {name}: when an enemy crosses my fire lane, Reactive Fire (once)"]
        shown = http.get(url).json()
        assert [(o["id"], o["on"], o["do"], o["times"]) for o in shown["orders"]] == [("o1", "fire_lane", "reactive_fire", 1)]
        assert shown["combatants"][0] == {"id": kell, "name": name}
        # The page's editor puts the whole list back.
        body = {"orders": [shown["orders"][0] | {"used": 0},
                           {"combatant": kell, "on": "ranged_hit", "do": "dive_for_cover"}]}
        assert http.put(url, json=body).status_code == 400  # "used" and "text" are not the order's to set
        body = {"orders": [{k: shown["orders"][0][k] for k in ("id", "combatant", "on", "do", "times")},
                           {"combatant": kell, "on": "ranged_hit", "do": "dive_for_cover"}]}
        kept = http.put(url, json=body)
        assert kept.status_code == 200 and [o["id"] for o in kept.json()["orders"]] == ["o1", "o2"]
        refused = http.put(url, json={"orders": [{"combatant": kell, "on": "ranged_hit", "do": "reactive_fire"}]})
        assert refused.status_code == 400
        assert refused.json()["error"] == "orders[0].do: ranged_hit takes pass, dive_for_cover, not 'reactive_fire'"
        gm = http.get(url, headers={"Authorization": f"Bearer {tokens['gm']}"}).json()
        assert gm["orders"] == []  # a seat sees its own orders only
    shown = firelane("orders", "standing", "--seat", "p1", "--remove", "o1", *data)
    assert shown.stdout.splitlines() == [f"o2  {name}: when I am hit (cover within reach), Dive for Cover"]
    wrong = firelane("orders", "standing", "--seat", "p1", "--add", kell, "turn", "dance", *data)
    assert wrong.returncode == 2 and wrong.stderr.strip().splitlines() == [
        "firelane: error: orders[1].do: a turn order does one of end_turn, ai, gm, BBTakeCover, BBAim, BBOverwatch, "
        "BBReload, not 'dance'"]

