"""dgt.Board against the real emulator (dgt.emulator) served on a pseudo-terminal, and the
in-process emulator transport."""

from __future__ import annotations

import asyncio
import io
import random
import threading
from pathlib import Path

import chess
import chess.pgn
import pytest
from conftest import FAST, move_on, replay_squares, wait_until

from dgt import Board, LedKind, SyncBoard
from dgt.emulator.board import VirtualBoard
from dgt.emulator.pty import EmulatorServer
from dgt.emulator.replay import replay_games
from dgt.errors import LinkClosed, NotSupported, PortNotFound
from dgt.events import (
    BoardEvent,
    BoardFamily,
    BoardMemory,
    BoardSnapshot,
    ButtonPressed,
    ClockConnection,
    LeverMoved,
    LinkLost,
    LinkRestored,
    Side,
    SquareChanged,
)
from dgt.protocol import ClockCommand, Piece
from dgt.transports.emulator import EmulatorTransport

pytestmark = pytest.mark.usefixtures("no_leaked_tasks")

DEMO = Path(__file__).parent.parent / "dgt" / "emulator" / "data" / "demo.pgn"


async def test_handshake_and_events_over_pty(tmp_path: Path) -> None:
    vb = VirtualBoard(ee_moves=True)
    async with (
        EmulatorServer(vb, link=tmp_path / "dgt") as server,
        Board(server.path, read_memory=True, **FAST) as board,
    ):
        events: list[BoardEvent] = []
        board.add_listener(events.append)
        assert list(board.squares) == list(vb.board_frame())
        assert board.info.serial == "12345"
        assert board.family is BoardFamily.PIECE_IDENTITY
        await wait_until(lambda: any(isinstance(e, BoardMemory) for e in events))
        memory = next(e for e in events if isinstance(e, BoardMemory))
        assert memory.records  # the previous session stored in the board
        await wait_until(lambda: board.clock.version is not None)
        assert board.clock.version is not None
        assert board.clock.version[0] == 2
        move_on(server, vb, chess.E2, chess.E4)
        await wait_until(lambda: len([e for e in events if isinstance(e, SquareChanged)]) == 2)
        assert list(board.squares) == list(vb.board_frame())
        # clock through the board
        ack = await board.clock.set_and_run(600, 590, run=Side.LEFT)
        assert ack.ok
        assert ack.command == ClockCommand.SETNRUN
        assert (await board.clock.show_text("DGT 3000")).ok
        assert (await board.clock.beep(0.1)).command == ClockCommand.BEEP
        assert (await board.clock.end_text()).command in (ClockCommand.END, 0x81)
        server.act(vb.press_lever)
        await wait_until(lambda: any(isinstance(e, LeverMoved) for e in events))
        server.act(lambda now: vb.press_button(4, now))
        await wait_until(lambda: any(isinstance(e, ButtonPressed) for e in events))
        assert board.clock.left is not None
        assert board.clock.left <= 600
        with pytest.raises(NotSupported):
            await board.set_leds([chess.E2])


@pytest.mark.slow
async def test_replayed_game_with_link_faults_keeps_mirror_equal(tmp_path: Path) -> None:
    """Garbage and pulled cables at random moments during a replayed game: after every
    recovery the mirror equals the emulator's board, and no event is lost."""
    rng = random.Random(2024)
    vb = VirtualBoard()
    game = chess.pgn.read_game(io.StringIO(DEMO.read_text(encoding="utf-8")))
    assert game is not None
    async with (
        EmulatorServer(vb, link=tmp_path / "dgt", seed=5) as server,
        Board(server.path, read_memory=False, **FAST) as board,
    ):
        events: list[BoardEvent] = []
        board.add_listener(events.append)
        events.append(board.mirror.snapshot(0.0, "connect"))
        player = asyncio.create_task(
            replay_games(server, [game], speed=60, rng=random.Random(1), pause=0)
        )
        faults = 0
        try:
            while not player.done():
                await asyncio.sleep(rng.uniform(0.05, 0.4))
                if player.done():
                    break
                if rng.random() < 0.6:
                    server.garbage(rng.randrange(1, 40))
                else:
                    server.unplug()
                    await asyncio.sleep(rng.uniform(0.05, 0.3))
                    server.plug()
                    await wait_until(lambda: board.ready, 5)
                faults += 1
                await wait_until(lambda: board.ready, 5)
                await board.resync()
                # The game goes on meanwhile: the mirror catches up with the board between
                # two piece movements.
                await wait_until(lambda: list(board.squares) == list(vb.board_frame()), 2)
        finally:
            if not player.done():
                player.cancel()
        await player
        await wait_until(lambda: board.ready, 5)
        await board.resync()
        assert faults >= 5
        assert list(board.squares) == list(vb.board_frame())
        assert replay_squares(events) == list(board.squares)
        lost = [e for e in events if isinstance(e, LinkLost)]
        restored = [e for e in events if isinstance(e, LinkRestored)]
        assert len(lost) == len(restored)


async def test_unplug_plug_lists_squares_moved_meanwhile(tmp_path: Path) -> None:
    vb = VirtualBoard()
    async with (
        EmulatorServer(vb, link=tmp_path / "dgt") as server,
        Board(server.path, read_memory=False, **FAST) as board,
    ):
        events: list[BoardEvent] = []
        board.add_listener(events.append)
        server.unplug()
        await wait_until(lambda: any(isinstance(e, LinkLost) for e in events))
        move_on(server, vb, chess.G1, chess.F3)
        await asyncio.sleep(0.2)
        server.plug()
        await wait_until(lambda: any(isinstance(e, LinkRestored) for e in events))
        restored = next(e for e in events if isinstance(e, LinkRestored))
        assert restored.changed == frozenset({chess.G1, chess.F3})
        assert list(board.squares) == list(vb.board_frame())


async def test_pegasus_and_revelation_leds(tmp_path: Path) -> None:
    peg = VirtualBoard(pegasus=True)
    async with (
        EmulatorServer(peg, link=tmp_path / "peg") as server,
        Board(server.path, **FAST) as board,
    ):
        assert board.family is BoardFamily.PRESENCE_ONLY
        assert board.info.leds is LedKind.PEGASUS
        assert list(board.squares) == list(peg.board_frame())
        assert Piece.OCCUPIED in board.squares
        await board.set_leds([chess.E2, chess.E4])
        await wait_until(lambda: peg.leds == frozenset({chess.E2, chess.E4}))
        await board.clear_leds()
        await wait_until(lambda: not peg.leds)
    rev = VirtualBoard(revelation=True)
    async with (
        EmulatorServer(rev, link=tmp_path / "rev") as server,
        Board(server.path, read_memory=False, **FAST) as board,
    ):
        assert board.info.leds is LedKind.REV2
        await board.set_leds([chess.D2, chess.D4])
        await wait_until(lambda: rev.leds == frozenset({chess.D2, chess.D4}))


async def test_reversed_board_mirror_is_in_board_frame(tmp_path: Path) -> None:
    vb = VirtualBoard(reversed=True)
    async with (
        EmulatorServer(vb, link=tmp_path / "dgt") as server,
        Board(server.path, read_memory=False, **FAST) as board,
    ):
        assert list(board.squares) == list(vb.board_frame())
        assert board.squares[chess.D1] is Piece.BKING  # turned round: Black's king near a1


async def test_emulator_transport_in_process() -> None:
    transport = EmulatorTransport()
    async with Board(transport, read_memory=False, **FAST) as board:
        events: list[BoardEvent] = []
        board.add_listener(events.append)
        assert list(board.squares) == list(transport.board.board_frame())
        transport.lift(chess.E2)
        transport.place(chess.E4, Piece.WPAWN)
        await wait_until(lambda: len([e for e in events if isinstance(e, SquareChanged)]) == 2)
        await wait_until(lambda: board.clock.version is not None)
        transport.unplug()
        transport.lift(chess.D2)
        transport.plug()
        await wait_until(lambda: any(isinstance(e, LinkRestored) for e in events))
        restored = next(e for e in events if isinstance(e, LinkRestored))
        assert restored.changed == frozenset({chess.D2})
        assert any(isinstance(e, ClockConnection) and e.connected for e in events)


def test_sync_board_basics(tmp_path: Path) -> None:
    vb = VirtualBoard()
    transport = EmulatorTransport(vb)
    with SyncBoard(transport, read_memory=False, **FAST) as board:
        first = board.next_event(timeout=2)
        assert isinstance(first, BoardSnapshot)
        assert first.reason == "connect"
        assert board.squares == vb.board_frame()
        ack = board.set_and_run(60, 60)
        assert ack.ok
        assert board.show_text("hi").ok
        board.resync()
    assert board.closed
    with pytest.raises(LinkClosed):
        board.beep()
    with pytest.raises(LinkClosed):
        board.resync()
    rest = list(board)  # the buffered events, then the end
    assert all(not isinstance(e, LinkLost) for e in rest)


def test_sync_board_connect_error_is_one_line() -> None:
    with pytest.raises(PortNotFound) as info:
        SyncBoard("/nonexistent/ttyACM9")
    assert "\n" not in str(info.value)
    assert not [t for t in threading.enumerate() if t.name == "dgt-sync-board"]


async def test_emulator_transport_garbage_is_recovered() -> None:
    transport = EmulatorTransport()
    async with Board(transport, read_memory=False, **FAST) as board:
        transport.inject(b"\x8e\x00\x05\x34")  # a field update cut short ...
        transport.lift(chess.E2)  # ... swallows the start of this one
        await wait_until(lambda: list(board.squares) == list(transport.board.board_frame()))
        assert board.squares[chess.E2] is Piece.EMPTY
