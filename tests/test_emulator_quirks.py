"""The virtual board playing a clone (:class:`dgt.emulator.board.Quirk`): pure, time passed
in."""

from __future__ import annotations

import pytest

from dgt.emulator.board import Quirk, VirtualBoard
from dgt.protocol import Command, FrameParser, LongSerialNumber, SerialNumber, Version


def ask(board: VirtualBoard, *codes: int, now: float = 1.0) -> list[object]:
    return list(FrameParser().feed(board.receive(bytes(codes), now)))


def test_a_dgt_board_has_no_quirks() -> None:
    board = VirtualBoard()
    assert board.quirks == frozenset()
    assert ask(board, Command.RETURN_SERIALNR) == [SerialNumber("12345")]
    [memory] = ask(board, Command.SEND_EE_MOVES)
    assert memory.ID == 0x8F  # type: ignore[attr-defined]
    assert not board.take_link_drop()


def test_ten_character_serial_answers_45_with_the_long_serial() -> None:
    board = VirtualBoard(pegasus=True, long_serial="P123456789", quirks=["ten-character-serial"])
    assert board.quirks == {Quirk.TEN_CHARACTER_SERIAL}
    data = board.receive(bytes((Command.RETURN_SERIALNR,)), 1.0)
    assert data == bytes.fromhex("91 00 0d") + b"P123456789"
    assert ask(board, Command.RETURN_LONG_SERIALNR) == [LongSerialNumber("P123456789")]


def test_drops_on_memory_request_crashes_until_power_up() -> None:
    board = VirtualBoard(ee_moves=True, quirks=[Quirk.DROPS_ON_MEMORY_REQUEST])
    # what came before the request in the same write is answered; what follows is lost
    out = ask(board, Command.SEND_VERSION, Command.SEND_EE_MOVES, Command.RETURN_SERIALNR)
    assert out == [Version(3, 10)]
    assert board.crashed
    assert board.take_link_drop()
    assert not board.take_link_drop()  # reported once
    assert ask(board, Command.SEND_VERSION, now=2.0) == []
    assert board.poll(5.0) == b""
    board.power_up(6.0)
    assert not board.crashed
    assert ask(board, Command.SEND_VERSION, now=7.0) == [Version(3, 10)]


def test_an_unknown_quirk_is_refused() -> None:
    with pytest.raises(ValueError, match="crash-on-reset"):
        VirtualBoard(quirks=["crash-on-reset"])
