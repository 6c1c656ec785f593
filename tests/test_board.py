"""dgt.Board end to end: pyserial over a real pseudo-terminal to a scripted board."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import chess
import pytest
from conftest import FAST, ErrorLog, FakePtyBoard, replay_squares, wait_until

from dgt import Board, BoardState, LedKind
from dgt.errors import ClockNotAnswering, LinkClosed, NotADgtBoard, NotSupported, PortNotFound
from dgt.events import (
    BoardEvent,
    BoardFamily,
    BoardMemory,
    BoardSnapshot,
    ButtonPressed,
    ClockConnection,
    ClockUpdate,
    LeverMoved,
    LinkLost,
    LinkRestored,
    Side,
    SquareChanged,
)
from dgt.protocol import ClockCommand, Command, FieldUpdate, Piece, encode_pegasus_leds_off
from dgt.transports.emulator import EmulatorTransport

pytestmark = pytest.mark.usefixtures("no_leaked_tasks")


class Collector:
    """Records every event a board emits (listener), in order."""

    def __init__(self, board: Board) -> None:
        self.events: list[BoardEvent] = []
        board.add_listener(self.events.append)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    async def wait_for(self, kind: type, count: int = 1, within: float = 5.0) -> list[Any]:
        await wait_until(lambda: len(self.of(kind)) >= count, within)
        return self.of(kind)


async def test_handshake_snapshot_memory_and_clock_version(fake_board: FakePtyBoard) -> None:
    async with Board(fake_board.path, read_memory=True, **FAST) as board:
        assert board.state is BoardState.READY
        first = await board.next_event(timeout=2)
        assert isinstance(first, BoardSnapshot)
        assert first.reason == "connect"
        assert list(first.squares) == fake_board.squares
        assert board.info.version is not None
        assert str(board.info.version) == "3.10"
        assert board.info.serial == "12345"
        assert board.info.long_serial == "0000012345"
        assert board.family is BoardFamily.PIECE_IDENTITY
        assert board.info.leds is None
        seen: list[BoardEvent] = []
        while not (any(isinstance(e, BoardMemory) for e in seen) and board.clock.version):
            seen.append(await board.next_event(timeout=3))
        memory = next(e for e in seen if isinstance(e, BoardMemory))
        assert len(memory.records) == 2
        assert ClockConnection(seen[-1].time, True, (2, 0), "version") in seen or any(
            isinstance(e, ClockConnection) and e.version == (2, 0) for e in seen
        )
    codes = [code for code, _ in fake_board.commands]
    # reset + version first, update mode before the dump (no change can fall between).
    assert codes[:2] == [Command.SEND_RESET, Command.SEND_VERSION]
    assert codes.index(Command.SEND_UPDATE_NICE) < codes.index(Command.SEND_BRD)
    assert board.state is BoardState.CLOSED


async def test_lifts_and_places_become_square_changes(fake_board: FakePtyBoard) -> None:
    async with Board(fake_board.path, read_memory=False, **FAST) as board:
        got = Collector(board)
        fake_board.lift(chess.E2)
        fake_board.place(chess.E4, Piece.WPAWN)
        fake_board.lift(chess.D7)
        fake_board.place(chess.D5, Piece.BPAWN)
        changes = await got.wait_for(SquareChanged, 4)
        assert [(c.square, c.piece, c.previous) for c in changes] == [
            (chess.E2, Piece.EMPTY, Piece.WPAWN),
            (chess.E4, Piece.WPAWN, Piece.EMPTY),
            (chess.D7, Piece.EMPTY, Piece.BPAWN),
            (chess.D5, Piece.BPAWN, Piece.EMPTY),
        ]
        times = [c.time for c in changes]
        assert times == sorted(times)
        await board.resync()
        assert list(board.squares) == fake_board.squares
        assert len(got.of(SquareChanged)) == 4  # the re-dump found nothing to correct


async def test_a_consumer_gets_every_event_in_order_and_the_queue_none(
    fake_board: FakePtyBoard, error_log: ErrorLog
) -> None:
    consumed: list[BoardEvent] = []

    def consumer(event: BoardEvent) -> None:
        consumed.append(event)
        if isinstance(event, SquareChanged) and event.square == chess.E4:
            raise RuntimeError("consumer broke")

    async with Board(fake_board.path, read_memory=False, **FAST) as board:
        heard = Collector(board)
        await wait_until(lambda: board.pending_events() > 0, 2)  # the connect snapshot
        board.consume(consumer)
        assert board.pending_events() == 0
        assert isinstance(consumed[0], BoardSnapshot)
        fake_board.lift(chess.E2)
        fake_board.place(chess.E4, Piece.WPAWN)
        fake_board.lift(chess.D7)
        await wait_until(lambda: len([e for e in consumed if isinstance(e, SquareChanged)]) == 3)
        assert [e.square for e in consumed if isinstance(e, SquareChanged)] == [
            chess.E2, chess.E4, chess.D7,
        ]  # fmt: skip
        assert board.pending_events() == 0  # nothing queued beside the consumer
        assert consumed[1:] == heard.events  # listeners still hear each event
        waiting = asyncio.create_task(anext(board.events(), None))
        await asyncio.sleep(0.05)
        assert not waiting.done()
    assert await asyncio.wait_for(waiting, 2) is None  # events() ends at the close
    error_log.expect("event consumer failed")  # that error was the point


async def test_clock_times_lever_and_buttons(fake_board: FakePtyBoard) -> None:
    async with Board(fake_board.path, read_memory=False, **FAST) as board:
        # the board asks for the clock's times when it connects: take that answer first
        await wait_until(lambda: board.clock.left is not None)
        got = Collector(board)
        fake_board.send_times()
        fake_board.press_lever()
        fake_board.press_button(4)
        fake_board.press_button(0)
        presses = await got.wait_for(ButtonPressed, 2)
        assert [p.button for p in presses] == ["ok", "back"]
        updates = got.of(ClockUpdate)
        assert updates[0].left == 300
        assert updates[0].lever_high is Side.LEFT
        assert got.of(LeverMoved) == [LeverMoved(updates[1].time, Side.RIGHT)]
        assert board.clock.lever is Side.RIGHT
        assert board.clock.left == 300


async def test_clock_commands_round_trip(fake_board: FakePtyBoard) -> None:
    async with Board(fake_board.path, read_memory=False, **FAST) as board:
        got = Collector(board)
        ack = await board.clock.set_and_run(125, 65, run=Side.LEFT)
        assert ack.ok
        assert ack.command == ClockCommand.SETNRUN
        assert (await board.clock.show_text("Hello")).command == ClockCommand.ASCII
        assert (await board.clock.beep(0.2)).command == ClockCommand.BEEP
        assert (await board.clock.end_text()).command == ClockCommand.END
        await got.wait_for(ClockUpdate)
        assert (board.clock.left, board.clock.right) == (125, 65)
    subs = [data[1] for code, data in fake_board.commands if code == Command.CLOCK_MESSAGE]
    assert subs[-4:] == [ClockCommand.SETNRUN, ClockCommand.ASCII, ClockCommand.BEEP,
                         ClockCommand.END]  # fmt: skip


async def test_clock_that_stops_acking_is_reported(fake_board: FakePtyBoard) -> None:
    async with Board(fake_board.path, read_memory=False, clock_timeout=0.1, **FAST) as board:
        await wait_until(lambda: board.clock.version is not None)
        got = Collector(board)
        fake_board.clock_answers = False
        with pytest.raises(ClockNotAnswering, match="0x0b"):
            await asyncio.wait_for(board.clock.beep(0.1), 2.0)
        sent = [d for c, d in fake_board.commands if c == Command.CLOCK_MESSAGE and d[1] == 0x0B]
        assert len(sent) == 3
        lost = got.of(ClockConnection)
        assert lost
        assert lost[-1].connected is False
        assert board.clock.connected is False
        fake_board.clock_answers = True
        assert (await board.clock.beep(0.1)).ok
        await wait_until(lambda: board.clock.connected is True)


async def test_garbage_on_the_line_mirror_recovers(fake_board: FakePtyBoard) -> None:
    rng = random.Random(7)
    async with Board(fake_board.path, read_memory=False, **FAST) as board:
        got = Collector(board)
        got.events.append(board.mirror.snapshot(0.0, "connect"))
        moves = [(chess.E2, chess.E4), (chess.G8, chess.F6), (chess.G1, chess.F3),
                 (chess.B8, chess.C6), (chess.F1, chess.C4)]  # fmt: skip
        for origin, target in moves:
            piece = fake_board.squares[origin]
            fake_board.lift(origin)
            # A field update swallowed by garbage: the board changes, the host never hears.
            fake_board.set_square(target, piece, report=False)
            fake_board.send(fake_board.field(target, piece)[:3] + bytes(rng.randrange(256)
                            for _ in range(rng.randrange(1, 12))))  # fmt: skip
            await asyncio.sleep(0.02)
        await wait_until(lambda: list(board.squares) == fake_board.squares, 5.0)
        assert board.corrections >= len(moves)
        # No event lost: replaying the events gives the real board.
        assert replay_squares(got.events) == fake_board.squares


async def test_unplug_plug_reports_changed_squares(fake_board: FakePtyBoard) -> None:
    async with Board(fake_board.path, read_memory=False, **FAST) as board:
        got = Collector(board)
        fake_board.unplug()
        (lost,) = await got.wait_for(LinkLost)
        assert board.state is not BoardState.READY
        # Moves while the cable is out.
        fake_board.set_square(chess.E2, Piece.EMPTY, report=False)
        fake_board.set_square(chess.E4, Piece.WPAWN, report=False)
        fake_board.set_square(chess.G8, Piece.EMPTY, report=False)
        await asyncio.sleep(0.3)  # a few failed attempts (port gone)
        fake_board.plug()
        (restored,) = await got.wait_for(LinkRestored)
        assert restored.changed == frozenset({chess.E2, chess.E4, chess.G8})
        assert restored.downtime >= 0.3
        snapshot = got.of(BoardSnapshot)[-1]
        assert snapshot.reason == "reconnect"
        assert got.events.index(snapshot) == got.events.index(restored) - 1
        assert list(board.squares) == fake_board.squares
        # Still alive after the reconnect.
        fake_board.lift(chess.D2)
        change = (await got.wait_for(SquareChanged))[-1]
        assert change.square == chess.D2
        assert lost.time < restored.time


@pytest.mark.slow
async def test_dead_link_found_by_liveness_check(fake_board: FakePtyBoard) -> None:
    async with Board(
        fake_board.path, read_memory=False, liveness_idle=0.2, liveness_timeout=0.2, **FAST
    ) as board:
        got = Collector(board)
        await asyncio.sleep(0.5)
        assert not got.of(LinkLost)  # a live board answers the probe
        fake_board.silent = True
        (lost,) = await got.wait_for(LinkLost, within=3)
        assert "no answer" in lost.reason
        fake_board.silent = False
        await got.wait_for(LinkRestored, within=5)
        await wait_until(lambda: board.ready)  # LinkRestored comes a few turns before ready


async def test_pegasus_is_presence_only_with_leds(make_fake_board: Callable[..., Any]) -> None:
    fake = make_fake_board(pegasus=True, clock=False)
    async with Board(fake.path, **FAST) as board:
        assert board.family is BoardFamily.PRESENCE_ONLY
        assert board.info.leds is LedKind.PEGASUS
        assert set(board.squares) == {Piece.OCCUPIED, Piece.EMPTY}
        assert board.squares[chess.E2] is Piece.OCCUPIED
        got = Collector(board)
        fake.lift(chess.E2)
        fake.place(chess.E4, Piece.WPAWN)
        changes = await got.wait_for(SquareChanged, 2)
        assert changes[1].piece is Piece.OCCUPIED
        await board.set_leds([chess.E2, chess.E4])
        await board.clear_leds()
        with pytest.raises(NotSupported):
            await board.clock.beep()
        await wait_until(lambda: encode_pegasus_leds_off() in bytes(fake.received))
    codes = [code for code, _ in fake.commands]
    assert Command.DEVELOPER_KEY in codes
    assert Command.SEND_UPDATE_BRD in codes
    assert Command.SEND_UPDATE_NICE not in codes
    assert codes.index(Command.DEVELOPER_KEY) < codes.index(Command.SEND_BRD)


async def test_leds_refused_on_a_classic_board(fake_board: FakePtyBoard) -> None:
    async with Board(fake_board.path, read_memory=False, **FAST) as board:
        with pytest.raises(NotSupported, match="no LEDs"):
            await board.set_leds([chess.E2])
    assert Command.SET_LEDS not in [code for code, _ in fake_board.commands]


@pytest.mark.slow
async def test_wrong_port_and_not_a_board(fake_board: FakePtyBoard) -> None:
    with pytest.raises(PortNotFound, match="no such port /nonexistent/tty"):
        await Board.connect("/nonexistent/tty")
    fake_board.echo = True  # a modem-like device: answers, but not like a DGT board
    with pytest.raises(NotADgtBoard, match=r"within 0\.6 s") as info:
        await Board.connect(fake_board.path, handshake_timeout=0.6, handshake_retry=0.2)
    assert "\n" not in str(info.value)


async def test_closed_board_refuses_commands(fake_board: FakePtyBoard) -> None:
    board = await Board.connect(fake_board.path, read_memory=False, **FAST)
    events = board.events()
    await board.close()
    await board.close()  # idempotent
    seen = [e async for e in events]
    assert isinstance(seen[0], BoardSnapshot)
    with pytest.raises(LinkClosed):
        await board.clock.beep()
    with pytest.raises(LinkClosed):
        await board.next_event(timeout=0.1)
    with pytest.raises(LinkClosed):
        board.write(b"B")
    with pytest.raises(LinkClosed):
        await board.open()


async def test_field_update_before_dump_is_not_applied_twice(fake_board: FakePtyBoard) -> None:
    """Updates that arrive before the first dump are covered by the dump itself."""
    fake_board.mode = "nice"
    fake_board.send(FieldUpdate(0, 0).to_bytes())  # flushed by reset_input_buffer, or ignored
    async with Board(fake_board.path, read_memory=False, **FAST) as board:
        assert list(board.squares) == fake_board.squares


def test_a_listener_added_or_removed_by_a_listener_counts_from_the_next_event() -> None:
    """Listeners are called in the order they were added; one that a listener adds or
    removes while an event is handed out is called (or no longer called) from the next."""
    board = Board(EmulatorTransport(), liveness_idle=0, reconnect=False)
    seen: list[tuple[str, float]] = []

    def late(event: BoardEvent) -> None:
        seen.append(("late", event.time))

    def first(event: BoardEvent) -> None:
        seen.append(("first", event.time))
        board.remove_listener(first)
        board.remove_listener(second)
        board.add_listener(late)

    def second(event: BoardEvent) -> None:
        seen.append(("second", event.time))

    board.consume(lambda event: seen.append(("consumer", event.time)))
    board.add_listener(first)
    board.add_listener(second)
    board.remove_listener(print)  # not a listener: nothing happens
    board._emit(LeverMoved(1.0, Side.LEFT))
    board._emit(LeverMoved(2.0, Side.RIGHT))
    assert seen == [
        ("consumer", 1.0), ("first", 1.0), ("second", 1.0), ("consumer", 2.0), ("late", 2.0),
    ]  # fmt: skip
