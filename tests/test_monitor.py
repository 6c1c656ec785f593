"""``dgt-service monitor``: the demo runs with nothing plugged in, records faithfully, and
bad input gets one line."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from dgt.emulator.board import Quirk, VirtualBoard
from dgt.emulator.pty import EmulatorServer
from dgt.events import BoardSnapshot, SquareChanged
from dgt.protocol import BoardDump, FieldUpdate, FrameParser, Piece
from dgt.recording import Chunk, read_record


def dgt_service(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "service.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_demo_shows_moves_and_records_every_chunk(tmp_path: Path) -> None:
    record = tmp_path / "demo.jsonl"
    result = dgt_service(
        "monitor", "--demo", "--plain", "--seconds", "6", "--speed", "6", "--seed", "3",
        "--record", str(record),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "board dump (connect): rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR" in out
    assert "lift  e2 (P)" in out  # every demo game opens 1. e4
    assert "place e4 P" in out
    assert "clock pressed" in out
    assert "Traceback" not in result.stderr

    items = list(read_record(record))
    header = json.loads(record.read_text().splitlines()[0])
    assert header["format"] == "dgt-record"
    chunks = [i for i in items if isinstance(i, Chunk)]
    events = [i for i in items if not isinstance(i, Chunk)]
    assert any(c.direction == "tx" for c in chunks)

    # The position the recorded events describe is the one the recorded bytes describe.
    from_events: list[Piece] = []
    for event in events:
        if isinstance(event, BoardSnapshot):
            from_events = list(event.squares)
        elif isinstance(event, SquareChanged):
            from_events[event.square] = event.piece
    parser = FrameParser()
    from_bytes: list[Piece] = []
    updates = 0
    for chunk in chunks:
        if chunk.direction != "rx":
            continue
        for message in parser.feed(chunk.data):
            if isinstance(message, BoardDump):
                from_bytes = list(message.pieces())
            elif isinstance(message, FieldUpdate):
                from_bytes[message.square] = Piece.from_wire(message.code)
                updates += 1
    assert updates >= 4
    assert from_events == from_bytes
    assert from_events != list(BoardDump(bytes(64)).pieces())


def test_monitor_needs_a_port_or_demo() -> None:
    result = dgt_service("monitor")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "dgt-service monitor: give a PORT (see 'dgt-service scan'),"
        " or --demo to try without a board"
    ]


def test_monitor_on_a_missing_port_is_one_line(tmp_path: Path) -> None:
    result = dgt_service("monitor", str(tmp_path / "ttyACM9"))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "no such port" in lines[0]


def test_monitor_on_something_that_is_not_a_board(tmp_path: Path) -> None:
    silent = tmp_path / "not-a-board"
    silent.write_bytes(b"")
    result = dgt_service("monitor", str(silent))
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_record_to_an_unwritable_place_is_one_line(tmp_path: Path) -> None:
    result = dgt_service("monitor", "--demo", "--record", str(tmp_path / "no" / "dir" / "x"))
    assert result.returncode == 2
    assert result.stderr.startswith("dgt-service monitor: cannot write")
    assert len(result.stderr.strip().splitlines()) == 1


def test_demo_asks_for_the_board_memory_only_with_read_memory() -> None:
    args = ("monitor", "--demo", "--plain", "--seconds", "2", "--speed", "6", "--seed", "3")
    without = dgt_service(*args)
    assert without.returncode == 0, without.stderr
    assert "board dump (connect)" in without.stdout
    assert "board memory" not in without.stdout
    asked = dgt_service(*args, "--read-memory")
    assert asked.returncode == 0, asked.stderr
    assert "board memory: " in asked.stdout


async def test_monitor_on_a_clone_that_drops_on_the_memory_request(tmp_path: Path) -> None:
    """A Centaur-like clone on a real pty: without --read-memory the monitor stays connected;
    with it, the warning names the request the board dropped the link after."""
    board = VirtualBoard(quirks=[Quirk.DROPS_ON_MEMORY_REQUEST])
    async with EmulatorServer(board, link=tmp_path / "clone", restart_after=0.3) as server:

        async def monitor(*extra: str) -> tuple[int, str, str]:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "service.cli", "monitor", server.path, "--plain",
                "--seconds", "2", *extra,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            out, err = await asyncio.wait_for(process.communicate(), 60)
            assert process.returncode is not None
            return process.returncode, out.decode(), err.decode()

        code, out, err = await monitor()
        assert code == 0, err
        assert server.drops == 0
        assert "link lost" not in out + err
        code, out, err = await monitor("--read-memory")
        assert code == 0, err
        assert server.drops == 1
        [warning] = [line for line in err.splitlines() if "link lost" in line]
        assert "after the board-memory request (0x49)" in warning
        assert "--read-memory" in warning
        assert "Traceback" not in err
