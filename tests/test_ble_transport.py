"""The Bluetooth LE transport and ``dgt.Board`` over it, with bleak's own code talking to
a BlueZ stand-in on a private D-Bus bus (``bluez_standin``) whose peripheral is the
project's emulator in its Pegasus personality."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from typing import TypeVar

import chess
import pytest
from bluez_standin import BlueZStandIn, FakePegasus, running_standin

from dgt.ble_discovery import find_ble_boards
from dgt.board import Board, BoardState
from dgt.discovery import Confidence
from dgt.errors import ConnectionFailed, NotADgtBoard
from dgt.events import (
    BoardEvent,
    BoardFamily,
    BoardMemory,
    BoardSnapshot,
    LinkLost,
    LinkRestored,
    SquareChanged,
)
from dgt.protocol import Piece, Version
from dgt.transports import open_transport
from dgt.transports.ble import (
    NUS_SERVICE,
    BleDeviceNotFound,
    BleTransport,
    BluetoothUnavailable,
    NotAPegasus,
)

E = TypeVar("E")

pytestmark = pytest.mark.timeout(60)

HEART_RATE = "0000180d-0000-1000-8000-00805f9b34fb"


@pytest.fixture
async def bluez(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[BlueZStandIn]:
    async with running_standin(monkeypatch) as standin:
        yield standin


def make_board(target: str, **kwargs: float | bool) -> Board:
    """A Board over BLE with short time constants for tests."""
    transport = BleTransport(target, scan_timeout=float(kwargs.pop("scan_timeout", 3.0)))
    kwargs.setdefault("handshake_timeout", 4.0)
    kwargs.setdefault("reconnect_min", 0.1)
    kwargs.setdefault("reconnect_max", 0.4)
    kwargs.setdefault("read_memory", False)
    return Board(transport, **kwargs)  # type: ignore[arg-type]


async def next_of(board: Board, kind: type[E], within: float = 5.0) -> E:
    """The next event of ``kind`` (other events skipped)."""
    deadline = time.monotonic() + within
    while True:
        event = await board.next_event(max(0.01, deadline - time.monotonic()))
        if isinstance(event, kind):
            return event


def presence(squares: tuple[Piece, ...]) -> tuple[Piece, ...]:
    return tuple(Piece.EMPTY if p is Piece.EMPTY else Piece.OCCUPIED for p in squares)


def occupied(pegasus: FakePegasus) -> tuple[Piece, ...]:
    """What a presence-only mirror should hold for the virtual board."""
    return presence(pegasus.board.squares)


async def test_connect_handshake_and_dump(no_leaked_tasks: None, bluez: BlueZStandIn) -> None:
    pegasus = bluez.add_pegasus()
    transport = open_transport(f"ble:{pegasus.address}")
    assert isinstance(transport, BleTransport)
    assert transport.name == f"ble:{pegasus.address}"
    assert transport.family_hint is BoardFamily.PRESENCE_ONLY

    board = make_board(pegasus.address)
    await board.open()
    try:
        snapshot = await next_of(board, BoardSnapshot)
        assert snapshot.reason == "connect"
        assert snapshot.squares == occupied(pegasus)
        assert snapshot.squares[chess.E2] is Piece.OCCUPIED
        assert snapshot.squares[chess.E4] is Piece.EMPTY
        assert board.family is BoardFamily.PRESENCE_ONLY
        assert board.info.version == Version(1, 0)
        assert board.info.serial == "12345"
        assert "serial no: P" in (board.info.trademark or "")
        # The start-up sequence reached the board: developer key, update mode.
        assert pegasus.board.key_sent
        assert pegasus.board.mode.value == "update_board"
        # Notifications were on before the first byte went out.
        assert pegasus.log[0] == "Connect"
        assert pegasus.log.index("StartNotify") < pegasus.log.index("Write")
        ble = board.transport
        assert isinstance(ble, BleTransport)
        assert ble.device_name == "DGT_PEGASUS_12345"
        assert ble.chunk_size == 20
        assert ble.response
        assert {kind for _, kind in pegasus.writes} == {"request"}
    finally:
        await board.close()
    assert not pegasus.connected
    assert pegasus.log[-1] == "Disconnect"


@pytest.mark.parametrize("target", ["dgt_pegasus", "DGT_PEGASUS_12345", ""])
async def test_found_by_name_or_service_among_other_devices(
    bluez: BlueZStandIn, target: str
) -> None:
    bluez.add_pegasus("C0:FF:EE:00:00:01", "Polar H10", uuids=(HEART_RATE,), nus=False, rssi=-40)
    pegasus = bluez.add_pegasus(rssi=-70)
    board = make_board(target)
    await board.open()
    try:
        assert board.ready
        assert isinstance(board.transport, BleTransport)
        assert board.transport.device_address == pegasus.address
    finally:
        await board.close()
    assert bluez.peripherals[0].connects == 0


async def test_found_by_nordic_uart_service_alone(bluez: BlueZStandIn) -> None:
    """A board whose name is not DGT_PEGASUS* but that offers the Nordic UART service
    (a Centaur emulating a Pegasus advertises as PCS-REVII-...) is found by ``ble:``."""
    pegasus = bluez.add_pegasus(name="PCS-REVII-081500")
    board = make_board("")
    await board.open()
    try:
        assert board.transport.device_address == pegasus.address  # type: ignore[attr-defined]
    finally:
        await board.close()


async def test_lift_and_place_events(no_leaked_tasks: None, bluez: BlueZStandIn) -> None:
    pegasus = bluez.add_pegasus()
    board = make_board(pegasus.address)
    await board.open()
    try:
        await next_of(board, BoardSnapshot)
        pegasus.lift(chess.E2)
        lifted = await next_of(board, SquareChanged)
        assert (lifted.square, lifted.piece, lifted.previous) == (
            chess.E2, Piece.EMPTY, Piece.OCCUPIED,
        )  # fmt: skip
        pegasus.place(chess.E4)
        placed = await next_of(board, SquareChanged)
        assert (placed.square, placed.piece) == (chess.E4, Piece.OCCUPIED)
        await board.resync()
        assert board.squares == occupied(pegasus)
        assert board.corrections == 0
    finally:
        await board.close()


@pytest.mark.parametrize("notify_size", [1, 2, 3, 7])
async def test_handshake_with_notifications_cut_small(
    bluez: BlueZStandIn, notify_size: int
) -> None:
    """Every reply of the start-up sequence arrives cut into ``notify_size``-byte
    notifications (1: every byte alone) and the Board still reassembles each frame."""
    pegasus = bluez.add_pegasus(notify_size=notify_size)
    board = make_board(pegasus.address, read_memory=True, settle_delay=60)
    await board.open()
    try:
        snapshot = await next_of(board, BoardSnapshot)
        assert snapshot.squares == occupied(pegasus)
        assert board.info.version == Version(1, 0)
        assert board.info.trademark == pegasus.board.trademark
        await next_of(board, BoardMemory)  # the empty memory a Pegasus reports
        assert max(len(n) for n in pegasus.notifications) == notify_size
        assert len(pegasus.notifications) > 67 // notify_size
        pegasus.lift(chess.D7)
        event = await next_of(board, SquareChanged)
        assert (event.square, event.piece) == (chess.D7, Piece.EMPTY)
        await board.resync()  # nothing is left in flight after this dump
        assert board.bytes_received == sum(len(n) for n in pegasus.notifications)
        assert board.corrections == 0
    finally:
        await board.close()


async def test_dump_split_at_every_size(bluez: BlueZStandIn) -> None:
    """The 67-byte dump, cut into notifications of every size from 1 to 67 bytes (and
    one more), always reads back as the board's position, with nothing corrected."""
    pegasus = bluez.add_pegasus()
    board = make_board(pegasus.address, settle_delay=60)  # only the dumps asked for here
    await board.open()
    try:
        await next_of(board, BoardSnapshot)
        pegasus.lift(chess.A1)
        await next_of(board, SquareChanged)
        for size in range(1, 69):
            pegasus.notify_size = size
            before = len(pegasus.notifications)
            await board.resync()
            pieces = pegasus.notifications[before:]
            assert b"".join(pieces)[:1] == b"\x86"
            assert len(pieces) == -(-67 // size)
            assert board.squares == occupied(pegasus)
        assert board.corrections == 0
        assert board.resyncs >= 68
    finally:
        await board.close()


@pytest.mark.parametrize(("mtu", "chunk"), [(23, 20), (64, 61)])
async def test_writes_fit_the_link_and_leds_reach_the_board(
    no_leaked_tasks: None, bluez: BlueZStandIn, mtu: int, chunk: int
) -> None:
    """Writes are cut to the MTU BlueZ reports (the stand-in refuses longer ones, as
    BlueZ does) and arrive whole: 40 lit squares make a 46-byte LED frame."""
    pegasus = bluez.add_pegasus(mtu=mtu)
    board = make_board(pegasus.address)
    await board.open()
    try:
        assert board.transport.chunk_size == chunk  # type: ignore[attr-defined]
        squares = [s for s in range(64) if chess.square_rank(s) in (2, 3, 4, 5, 6)][:40]
        start = len(pegasus.received)
        await board.set_leds(squares, speed=5, repeat=1, intensity=2)
        await board.battery()  # a round trip: the LED frame has been handled by then
        assert pegasus.board.leds == frozenset(squares)
        assert pegasus.board.led_settings == {"speed": 5, "repeat": 1, "intensity": 2}
        frame = bytes(pegasus.received[start : start + 47])
        assert frame[0] == 0x60
        assert frame[1] == 45
        assert frame[-1] == 0x00
        assert all(len(data) <= chunk for data, _ in pegasus.writes)
        # Cut only where it had to be: whole on the large MTU, in 20-byte pieces on 23.
        led_writes = [data for data, _ in pegasus.writes if data[:1] == b"\x60"]
        assert len(led_writes) == 1
        assert len(led_writes[0]) == min(chunk, 47)
        await board.clear_leds()
        await board.battery()
        assert pegasus.board.leds == frozenset()
    finally:
        await board.close()


async def test_write_without_response_when_that_is_all_the_board_offers(
    bluez: BlueZStandIn,
) -> None:
    pegasus = bluez.add_pegasus(write_flags=("write-without-response",))
    board = make_board(pegasus.address)
    await board.open()
    try:
        assert not board.transport.response  # type: ignore[attr-defined]
        await board.set_leds([chess.E2, chess.E4])
        await board.battery()
        assert pegasus.board.leds == {chess.E2, chess.E4}
        assert {kind for _, kind in pegasus.writes} == {"command"}
    finally:
        await board.close()


async def test_battery_level(bluez: BlueZStandIn) -> None:
    pegasus = bluez.add_pegasus()
    pegasus.board.battery = 67
    board = make_board(pegasus.address)
    await board.open()
    try:
        status = await board.battery()
        assert status.percent == 67
        assert board.info.battery == status
        pegasus.board.charging = True
        assert (await board.battery()).charging
    finally:
        await board.close()


async def test_dropped_link_mid_game_reconnects_and_reports_moves(
    no_leaked_tasks: None, bluez: BlueZStandIn
) -> None:
    pegasus = bluez.add_pegasus()
    board = make_board(pegasus.address)
    events: list[BoardEvent] = []
    board.add_listener(events.append)
    await board.open()
    try:
        await next_of(board, BoardSnapshot)
        pegasus.lift(chess.E2)
        pegasus.place(chess.E4)
        await next_of(board, SquareChanged)
        await next_of(board, SquareChanged)

        pegasus.drop_link()
        # Black answers while the link is down: nobody hears these.
        pegasus.lift(chess.C7)
        pegasus.place(chess.C5)
        lost = await next_of(board, LinkLost)
        assert "Bluetooth link lost" in lost.reason
        snapshot = await next_of(board, BoardSnapshot)
        restored = await next_of(board, LinkRestored)
        assert snapshot.reason == "reconnect"
        assert restored.changed == {chess.C7, chess.C5}
        assert board.squares == occupied(pegasus)
        assert pegasus.connects == 2
        kinds = [type(e) for e in events if not isinstance(e, SquareChanged)]
        assert kinds[-3:] == [LinkLost, BoardSnapshot, LinkRestored]

        pegasus.lift(chess.G1)  # and the game goes on
        event = await next_of(board, SquareChanged)
        assert (event.square, event.piece) == (chess.G1, Piece.EMPTY)
    finally:
        await board.close()


@pytest.mark.slow
async def test_board_sleeps_then_wakes_up(
    bluez: BlueZStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    """The board goes to sleep (or out of range): it stops advertising and BlueZ forgets
    it.  The Board keeps looking with back-off; when the board is back (switched on again:
    it forgot its developer key) the link, the key and the position come back."""
    pegasus = bluez.add_pegasus()
    board = make_board(pegasus.address, scan_timeout=0.3)
    await board.open()
    try:
        await next_of(board, BoardSnapshot)
        starts = bluez.adapter.discovery_starts
        pegasus.vanish()
        await next_of(board, LinkLost)
        pegasus.lift(chess.B1)
        pegasus.place(chess.C3)
        deadline = time.monotonic() + 10
        while bluez.adapter.discovery_starts < starts + 3:  # three scans found nothing
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        assert board.state is not BoardState.READY
        pegasus.reappear(power_cycle=True)
        assert not pegasus.board.key_sent
        restored = await next_of(board, LinkRestored, within=10)
        assert restored.changed == {chess.B1, chess.C3}
        assert pegasus.board.key_sent
        assert board.squares == occupied(pegasus)
        failures = [
            r.getMessage() for r in caplog.records
            if r.name == "dgt.board" and "reconnect attempt" in r.getMessage()
        ]  # fmt: skip
        assert failures
        assert "no Bluetooth LE board with address" in failures[0]
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    finally:
        await board.close()


async def test_close_while_looking_for_a_lost_board(
    no_leaked_tasks: None, bluez: BlueZStandIn
) -> None:
    pegasus = bluez.add_pegasus()
    board = make_board(pegasus.address, scan_timeout=5)
    await board.open()
    pegasus.vanish()
    await next_of(board, LinkLost)
    deadline = time.monotonic() + 5
    while not bluez.adapter.discovering:  # the reconnect loop is scanning
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)  # well into the scan
    started = time.monotonic()
    await board.close()
    assert time.monotonic() - started < 2.0
    assert board.state is BoardState.CLOSED
    while bluez.adapter.discovering:  # the scan is stopped, not left running
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)


@pytest.mark.slow
async def test_board_that_never_answers(no_leaked_tasks: None, bluez: BlueZStandIn) -> None:
    pegasus = bluez.add_pegasus()
    pegasus.silent = True
    board = make_board(pegasus.address, handshake_timeout=1.5)
    started = time.monotonic()
    with pytest.raises(NotADgtBoard) as caught:
        await board.open()
    elapsed = time.monotonic() - started
    assert 1.4 < elapsed < 8.0
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith(f"ble:{pegasus.address} did not answer like a DGT board")
    assert pegasus.received  # it was asked
    assert not pegasus.connected  # and the link was let go
    await board.close()


@pytest.mark.slow
async def test_device_not_found(no_leaked_tasks: None, bluez: BlueZStandIn) -> None:
    bluez.add_pegasus()
    transport = BleTransport("AA:BB:CC:DD:EE:FF", scan_timeout=0.5)
    started = time.monotonic()
    with pytest.raises(BleDeviceNotFound) as caught:
        await transport.open(lambda data: None, lambda reason: None)
    assert time.monotonic() - started < 4.0
    message = str(caught.value)
    assert "\n" not in message
    assert "no Bluetooth LE board with address AA:BB:CC:DD:EE:FF seen within 0.5 s" in message
    assert isinstance(caught.value, ConnectionFailed)
    assert not transport.is_open


async def test_connection_refused(bluez: BlueZStandIn) -> None:
    pegasus = bluez.add_pegasus()
    pegasus.refuse = "le-connection-abort-by-remote"
    board = make_board(pegasus.address)
    with pytest.raises(ConnectionFailed) as caught:
        await board.open()
    message = str(caught.value)
    assert "\n" not in message
    assert "connection refused (le-connection-abort-by-remote)" in message
    await board.close()


async def test_device_without_nordic_uart_service(bluez: BlueZStandIn) -> None:
    heart = bluez.add_pegasus("C0:FF:EE:00:00:01", "Polar H10", uuids=(HEART_RATE,), nus=False)
    transport = BleTransport(heart.address, scan_timeout=2)
    with pytest.raises(NotAPegasus, match="has no Nordic UART service"):
        await transport.open(lambda data: None, lambda reason: None)
    assert not heart.connected


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        ({"own_name": False}, "BlueZ (bluetoothd) is not running"),
        ({"adapter": False}, "no Bluetooth adapter found"),
        ({"powered": False}, "Bluetooth adapter is switched off"),
    ],
)
async def test_no_usable_bluetooth(
    monkeypatch: pytest.MonkeyPatch, setup: dict[str, bool], words: str
) -> None:
    async with running_standin(monkeypatch, **setup):
        transport = BleTransport("", scan_timeout=1)
        with pytest.raises(BluetoothUnavailable) as caught:
            await transport.open(lambda data: None, lambda reason: None)
        assert words in str(caught.value)
        assert "\n" not in str(caught.value)
        with pytest.raises(BluetoothUnavailable):
            await find_ble_boards(0.2)


async def test_no_system_bus(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/dgt/bus_socket")
    transport = BleTransport("", scan_timeout=1)
    with pytest.raises(BluetoothUnavailable, match="system D-Bus cannot be reached"):
        await transport.open(lambda data: None, lambda reason: None)


async def test_transport_reports_loss_once_and_not_after_close(bluez: BlueZStandIn) -> None:
    pegasus = bluez.add_pegasus(notify_size=4)
    transport = BleTransport(pegasus.address, scan_timeout=2)
    received: list[bytes] = []
    lost: list[str] = []
    await transport.open(received.append, lost.append)
    transport.write(b"\x40\x4d")  # reset, version: answered 93 00 05 01 00
    deadline = time.monotonic() + 5
    while sum(map(len, received)) < 5:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)
    assert received == pegasus.notifications  # handed on exactly as notified
    assert b"".join(received) == Version(1, 0).to_bytes()
    pegasus.drop_link()
    while not lost:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)
    assert len(lost) == 1
    assert "link lost" in lost[0]
    assert not transport.is_open
    with pytest.raises(ConnectionFailed, match="is not open"):
        transport.write(b"\x42")
    await transport.close()

    # Open again, close from our side: no loss reported.
    await transport.open(received.append, lost.append)
    assert transport.is_open
    await transport.close()
    await asyncio.sleep(0.1)
    assert len(lost) == 1
    assert not pegasus.connected


@pytest.mark.slow
async def test_find_ble_boards_lists_pegasus_boards(bluez: BlueZStandIn) -> None:
    bluez.add_pegasus("C0:FF:EE:00:00:01", "Polar H10", uuids=(HEART_RATE,), nus=False)
    bluez.add_pegasus("C0:FF:EE:00:00:02", "PCS-REVII-081500", rssi=-45)
    bluez.add_pegasus("F0:5E:CD:12:34:56", "DGT_PEGASUS_12345", rssi=-71)
    bluez.add_pegasus("F0:5E:CD:65:43:21", "dgt_pegasus_54321", rssi=-50, uuids=())
    boards = await find_ble_boards(0.5)
    assert [(b.address, b.confidence) for b in boards] == [
        ("F0:5E:CD:65:43:21", Confidence.HIGH),
        ("F0:5E:CD:12:34:56", Confidence.HIGH),
        ("C0:FF:EE:00:00:02", Confidence.MEDIUM),
    ]
    first = boards[0]
    assert first.name == "dgt_pegasus_54321"
    assert first.rssi in (-50, -51)
    assert first.port == "ble:F0:5E:CD:65:43:21"
    assert boards[2].reason == "Nordic UART service"
    assert NUS_SERVICE in bluez.peripherals[1].uuids
