"""The table page's stream of diffs (``/api/stream?table=ID&diff=1``): a whole state first,
then only what changed (new moves appended, clocks, status), which rebuilds the table's state
exactly; a slow reader gets one diff from what it holds to the newest state; the old form of
the stream is unchanged."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import chess
import pytest
from chromium import HallSite, hall_site

from service.commands.demo import TransportLine
from service.web.state_diff import apply_diff, moves_from, state_diff

WAIT = 5.0
PLAYERS = {"white": "Ann Able", "black": "Bob Baker", "round": "1", "rules": "casual"}


# --- the pure diff -------------------------------------------------------------------------


def test_a_diff_rebuilds_the_new_state() -> None:
    e4 = {"ply": 1, "san": "e4"}
    e5 = {"ply": 2, "san": "e5", "final": False}
    old = {"phase": "playing", "moves": [e4, e5], "clocks": {"white": 10}, "gone": 1}
    e5_final = {"ply": 2, "san": "e5", "final": True}
    nf3 = {"ply": 3, "san": "Nf3"}
    new: dict[str, Any] = {
        "phase": "playing",
        "moves": [e4, e5_final, nf3],
        "clocks": {"white": 9},
        "new": 2,
    }
    diff = state_diff(old, new)
    assert diff == {
        "set": {"clocks": {"white": 9}, "new": 2},
        "unset": ["gone"],
        "moves_from": 1,
        "moves": [e5_final, nf3],
    }
    assert apply_diff(old, diff) == new
    assert state_diff(new, new) == {}
    # Moves only appended: only the new ones go.
    longer = {**new, "moves": [*new["moves"], {"ply": 4}]}
    assert state_diff(new, longer) == {"moves_from": 3, "moves": [{"ply": 4}]}
    # A new game: the list starts again.
    assert state_diff(new, {**new, "moves": []}) == {"moves_from": 0, "moves": []}
    assert moves_from([e4], [e4]) is None
    assert moves_from([e4, e5], [e4]) == 1


def test_moves_from_finds_the_first_move_that_differs() -> None:
    moves = [{"ply": ply, "san": f"m{ply}"} for ply in range(1, 41)]
    copies = [dict(move) for move in moves]  # equal, not the same objects
    assert moves_from(moves, copies) is None
    assert moves_from(moves, [*copies, {"ply": 41}]) == 40
    changed = [*moves[:25], {"ply": 26, "san": "other"}, *moves[26:]]
    assert moves_from(moves, changed) == 25
    assert moves_from(changed, moves) == 25
    assert moves_from(moves, moves[:30]) == 30  # moves taken back from the end
    assert moves_from(moves[:30], changed) == 25
    assert moves_from([], moves) == 0
    assert moves_from([], []) is None
    # Keys gone or new, whatever their order; the set ones in the new state's order.
    old = {"a": 1, "b": 2, "moves": moves}
    new = {"c": 3, "a": 1, "moves": changed}
    diff = state_diff(old, new)
    assert diff == {"set": {"c": 3}, "unset": ["b"], "moves_from": 25, "moves": changed[25:]}
    assert list(diff) == ["set", "unset", "moves_from", "moves"]
    assert apply_diff(old, diff) == new
    assert state_diff({"b": 1, "a": 2}, {"a": 2, "b": 1}) == {}


# --- the stream ----------------------------------------------------------------------------


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[HallSite]:
    async with hall_site(tmp_path, {"1": PLAYERS, "2": PLAYERS}, token="diff-test-token") as s:
        yield s


async def read_messages(response: aiohttp.ClientResponse) -> AsyncIterator[tuple[str, Any]]:
    """(event name, data) of each SSE message."""
    event, data = "message", []
    async for raw in response.content:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            data.append(line[6:])
        elif not line and data:
            yield event, json.loads("\n".join(data))
            event, data = "message", []


def play(line: TransportLine, uci: str) -> None:
    move = chess.Move.from_uci(uci)
    piece = line.device.squares[move.from_square]
    line.act(lambda now: line.device.lift(move.from_square, now))
    line.act(lambda now: line.device.place(move.to_square, piece, now))
    line.act(line.device.press_lever)


async def test_the_diff_stream_sends_the_state_once_then_what_changed(site: HallSite) -> None:
    line = TransportLine(site.boards["1"])
    async with (
        aiohttp.ClientSession() as session,
        session.get(site.url + "/api/stream?table=1&diff=1") as response,
    ):
        assert response.status == 200
        messages = read_messages(response)
        kind, first = await asyncio.wait_for(anext(messages), WAIT)
        assert kind == "state"
        assert first["table"] == "1"
        assert first["start"] == chess.STARTING_FEN
        assert first["pgn"] == "/games/1-1.pgn"
        assert first["state"]["settings"]["white"] == "Ann Able"
        held = first["state"]
        sizes: list[int] = []
        ucis = ["e2e4", "e7e5", "g1f3", "b8c6"]
        for index, uci in enumerate(ucis):
            play(line, uci)
            while len([m for m in held["moves"] if m.get("final")]) <= index:
                kind, message = await asyncio.wait_for(anext(messages), WAIT)
                assert kind == "diff", kind
                assert "state" not in message
                assert "events" not in message
                diff = message["diff"]
                if "moves" in diff:
                    # never the whole list again: at most the last move held and the new ones
                    assert diff["moves_from"] >= len(held["moves"]) - 1
                    sizes.append(len(diff["moves"]))
                held = apply_diff(held, diff)
        assert [m["uci"] for m in held["moves"]] == ucis
        assert max(sizes) <= 2
        # What the page holds is the table's state (the clocks' as_of aside).
        now = site.hall.state("1")
        for key in ("moves", "fen", "board", "phase", "settings", "last_move", "set_right"):
            assert held[key] == now[key], key


async def test_the_old_stream_is_unchanged(site: HallSite) -> None:
    line = TransportLine(site.boards["1"])
    async with (
        aiohttp.ClientSession() as session,
        session.get(site.url + "/api/stream?table=1") as response,
    ):
        messages = read_messages(response)
        kind, first = await asyncio.wait_for(anext(messages), WAIT)
        assert kind == "state"
        assert set(first) == {"table", "state", "server_time"}
        play(line, "e2e4")
        while True:
            kind, message = await asyncio.wait_for(anext(messages), WAIT)
            assert kind == "state"
            assert set(message) == {"table", "state", "server_time", "events"}
            if message["state"]["moves"] and message["state"]["moves"][-1]["final"]:
                break
        assert message["state"] == site.hall.state("1") | {"clocks": message["state"]["clocks"]}


async def test_a_slow_reader_gets_one_diff_to_the_newest_state(site: HallSite) -> None:
    server = site.server
    assert server is not None
    hub = server.hub
    client = hub.open(["1"], True, None, diff=True)
    try:
        base = json.loads(hub.first_payload(client, "1"))["state"]
        line = TransportLine(site.boards["1"])
        for count, uci in enumerate(("e2e4", "e7e5"), start=1):
            play(line, uci)
            for _ in range(100):
                await asyncio.sleep(0.05)
                moves = site.hall.state("1")["moves"]
                if len(moves) == count and moves[-1]["final"]:
                    break
        data = await asyncio.wait_for(hub.next_write(client), WAIT)
        assert data is not None
        frames = data.decode().split("\n\n")
        assert frames[-1] == ""  # every frame ends with its blank line
        batch = [tuple(f.removeprefix("event: ").split("\ndata: ")) for f in frames[:-1]]
        assert [kind for kind, _ in batch] == ["diff"]
        held = apply_diff(base, json.loads(batch[0][1])["diff"])
        assert [m["uci"] for m in held["moves"]] == ["e2e4", "e7e5"]
        assert held["fen"] == site.hall.state("1")["fen"]
        assert hub.merged >= 1
    finally:
        hub.drop(client)


async def test_diff_needs_a_table_and_takes_1_or_0(site: HallSite) -> None:
    async with aiohttp.ClientSession() as session:
        for query, status in (
            ("?diff=1", 400),
            ("?table=1&diff=yes", 400),
            ("?table=9&diff=1", 404),
        ):
            async with session.get(site.url + "/api/stream" + query) as response:
                assert response.status == status
                assert "error" in await response.json()


async def test_a_table_followed_whole_and_by_diffs_is_read_once_an_update(
    site: HallSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = site.server
    assert server is not None
    hub = server.hub
    whole = hub.open(["1"], True)
    diffs = hub.open(["1"], True, None, diff=True)
    try:
        held = json.loads(hub.first_payload(diffs, "1"))["state"]
        reads: list[str] = []
        updates: list[str] = []
        state = site.hall.state

        def read(table_id: str) -> dict[str, Any]:
            reads.append(table_id)
            return state(table_id)

        monkeypatch.setattr(site.hall, "state", read)
        site.hall.subscribe(lambda update: updates.append(update.table_id))  # after the hub
        play(TransportLine(site.boards["1"]), "e2e4")
        last: dict[str, Any] = {}
        while not (last.get("moves") and last["moves"][-1]["final"]):
            data = await asyncio.wait_for(hub.next_write(whole), WAIT)
            assert data is not None
            for frame in data.decode().split("\n\n")[:-1]:
                kind, body = frame.removeprefix("event: ").split("\ndata: ")
                assert kind == "state"
                last = json.loads(body)["state"]
        data = await asyncio.wait_for(hub.next_write(diffs), WAIT)
        assert data is not None
        for frame in data.decode().split("\n\n")[:-1]:
            kind, body = frame.removeprefix("event: ").split("\ndata: ")
            assert kind == "diff"
            held = apply_diff(held, json.loads(body)["diff"])
        followed = [table_id for table_id in updates if table_id == "1"]
        assert followed
        assert reads == followed  # one read of the table an update, for both streams
        assert held == last  # the same state, whole and rebuilt from diffs
    finally:
        hub.drop(whole)
        hub.drop(diffs)
