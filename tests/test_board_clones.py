"""dgt.Board against boards that are not quite DGT (issue 19): the emulator plays the clone
(:class:`dgt.emulator.board.Quirk`) on a real pseudo-terminal and the driver opens it through
pyserial, as it opens a USB board; and the same quirks through the in-process transport."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from conftest import FAST, wait_until

from dgt import Board, BoardState, SyncBoard
from dgt.emulator.board import Quirk, VirtualBoard
from dgt.emulator.pty import EmulatorServer
from dgt.errors import ConnectionFailed
from dgt.events import BoardEvent, BoardFamily, BoardMemory, LinkLost, LinkRestored
from dgt.protocol import Command
from dgt.protocol.request_names import written_commands
from dgt.transports.emulator import EmulatorTransport

pytestmark = pytest.mark.usefixtures("no_leaked_tasks")

DROPS = [Quirk.DROPS_ON_MEMORY_REQUEST]


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


async def test_a_pegasus_clone_answering_with_ten_characters_has_a_serial(tmp_path: Path) -> None:
    """Before: the 13-byte answer was dropped as garbage and the serial read as none."""
    vb = VirtualBoard(pegasus=True, long_serial="P123456789", quirks=[Quirk.TEN_CHARACTER_SERIAL])
    async with (
        EmulatorServer(vb, link=tmp_path / "peg") as server,
        Board(server.path, **FAST) as board,
    ):
        assert board.family is BoardFamily.PRESENCE_ONLY
        assert board.info.serial == "P123456789"
        assert board.info.long_serial == "P123456789"
        # The keep-alive is the same request: its answer is read, not taken for garbage.
        parser = board._parser
        before = parser.discarded
        board.write(bytes((Command.RETURN_SERIALNR,)))
        await asyncio.sleep(0.3)
        assert parser.discarded == before
        assert board.state is BoardState.READY


@pytest.mark.slow
async def test_the_memory_is_not_asked_for_by_default_so_the_clone_stays(tmp_path: Path) -> None:
    """Before: every Board asked for the memory after its first handshake, and a Centaur
    running a classic-board emulation dropped the link right after connecting."""
    vb = VirtualBoard(ee_moves=True, quirks=DROPS)
    async with (
        EmulatorServer(vb, link=tmp_path / "dgt", restart_after=0.1) as server,
        Board(server.path, **FAST) as board,
    ):
        events: list[BoardEvent] = []
        board.add_listener(events.append)
        await asyncio.sleep(0.5)
        assert server.drops == 0
        assert board.state is BoardState.READY
        assert not [e for e in events if isinstance(e, LinkLost | BoardMemory)]


@pytest.mark.slow
async def test_a_drop_after_the_memory_request_is_named_in_the_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vb = VirtualBoard(quirks=DROPS)
    with caplog.at_level(logging.WARNING, "dgt.board"):
        async with (
            EmulatorServer(vb, link=tmp_path / "dgt", restart_after=0.2) as server,
            Board(server.path, read_memory=True, **FAST) as board,
        ):
            events: list[BoardEvent] = []
            board.add_listener(events.append)
            await wait_until(lambda: any(isinstance(e, LinkLost) for e in events))
            assert server.drops == 1
            [warning] = [w for w in warnings_of(caplog) if "link lost" in w]
            assert "\n" not in warning
            assert "the board dropped the link" in warning
            assert "s after the board-memory request (0x49)" in warning
            assert "some clone boards cannot answer it" in warning
            assert "read_memory" in warning
            # The board restarts; the memory is asked for once per Board, so it stays.
            await wait_until(lambda: any(isinstance(e, LinkRestored) for e in events))
            await asyncio.sleep(0.3)
            assert server.drops == 1
            assert board.state is BoardState.READY
            assert list(board.squares) == list(vb.board_frame())


@pytest.mark.slow
async def test_a_lost_link_long_after_any_request_names_none(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vb = VirtualBoard()
    with caplog.at_level(logging.WARNING, "dgt.board"):
        async with (
            EmulatorServer(vb, link=tmp_path / "dgt") as server,
            Board(server.path, liveness_idle=30, **FAST) as board,
        ):
            events: list[BoardEvent] = []
            board.add_listener(events.append)
            await asyncio.sleep(1.3)  # the clock-times retries are over by now
            server.unplug()
            await wait_until(lambda: any(isinstance(e, LinkLost) for e in events))
    [warning] = [w for w in warnings_of(caplog) if "link lost" in w]
    assert "dropped the link" not in warning


async def test_in_process_clone_drops_on_the_memory_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    transport = EmulatorTransport(quirks=DROPS)
    with caplog.at_level(logging.WARNING, "dgt.board"):
        async with Board(transport, read_memory=True, **FAST) as board:
            events: list[BoardEvent] = []
            board.add_listener(events.append)
            await wait_until(lambda: any(isinstance(e, LinkRestored) for e in events))
            # LinkRestored comes with the first board dump, still in the handshake
            await wait_until(lambda: board.state is BoardState.READY)
    [warning] = [w for w in warnings_of(caplog) if "link lost" in w]
    assert "after the board-memory request (0x49)" in warning


async def test_a_drop_during_the_handshake_names_the_request() -> None:
    """A board that crashed on a handshake request: the one-line error says which."""
    vb = VirtualBoard()
    transport = EmulatorTransport(vb)
    board = Board(transport, reconnect=False, **FAST)
    real_receive = vb.receive

    def crash_on_serial(data: bytes, now: float) -> bytes:
        if Command.RETURN_SERIALNR in data:
            vb.crashed = True
            vb._link_dropped = True
            return b""
        return real_receive(data, now)

    vb.receive = crash_on_serial  # type: ignore[method-assign]
    with pytest.raises(ConnectionFailed) as info:
        await board.open()
    message = str(info.value)
    assert "\n" not in message
    assert "the board dropped the link" in message
    assert "the serial-number request (0x45)" in message
    await board.close()


def test_sync_board_does_not_ask_for_the_memory_unless_told() -> None:
    transport = EmulatorTransport(quirks=DROPS)
    with SyncBoard(transport, **FAST) as board:
        board.resync()
        assert board.info.serial == "12345"
    assert Command.SEND_EE_MOVES not in [c.code for c in written_commands(transport.written)]
    transport = EmulatorTransport(ee_moves=True)
    with SyncBoard(transport, read_memory=True, **FAST) as board:
        memory = None
        while memory is None:
            event = board.next_event(timeout=3)
            memory = event if isinstance(event, BoardMemory) else None
        assert memory.records
