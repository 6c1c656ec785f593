"""Requests in words, for the warning after a dropped link."""

from __future__ import annotations

from dgt.protocol import Command, encode_bus_command, encode_clock_version, encode_command
from dgt.protocol.constants import BusCommand
from dgt.protocol.request_names import describe_written


def test_one_request() -> None:
    memory = encode_command(Command.SEND_EE_MOVES)
    assert describe_written(memory) == "the board-memory request (0x49)"


def test_several_requests_in_one_write() -> None:
    data = bytes((Command.RETURN_SERIALNR, Command.RETURN_LONG_SERIALNR, Command.SEND_TRADEMARK))
    assert describe_written(data) == (
        "the serial-number request (0x45), long-serial-number request (0x55) and "
        "trademark request (0x47)"
    )


def test_multi_byte_and_bus_commands() -> None:
    assert describe_written(encode_clock_version()) == "the clock command (0x2b)"
    assert describe_written(encode_bus_command(BusCommand.PING, 5)) == (
        "the bus command (0x87) to address 5"
    )
    assert describe_written(b"\x2b\x09") == "nothing"  # a command cut short
    assert describe_written(b"\x3f") == "the command (0x3f)"
