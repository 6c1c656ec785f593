"""What a host wrote, in words: the requests named in a link-lost warning.

A board that cannot answer a request may drop the link instead (a clone board crashing on
the board-memory request, docs/protocol.md §8): the driver names the last request it wrote
before the link went, so the one-line warning says what to leave off.  Pure.
"""

from __future__ import annotations

from dgt.protocol.constants import Command
from dgt.protocol.parser import CommandParser, HostCommand

__all__ = ["describe_written", "request_name", "written_commands"]

_NAMES: dict[int, str] = {
    Command.SEND_RESET: "reset",
    Command.SEND_CLK: "clock-times request",
    Command.SEND_BRD: "board-dump request",
    Command.SEND_UPDATE: "update-mode command",
    Command.SEND_UPDATE_BRD: "update-mode command",
    Command.SEND_UPDATE_NICE: "update-mode command",
    Command.RETURN_SERIALNR: "serial-number request",
    Command.RETURN_BUSADRES: "bus-address request",
    Command.SEND_TRADEMARK: "trademark request",
    Command.SEND_HARDWARE_VERSION: "hardware-version request",
    Command.SEND_EE_MOVES: "board-memory request",
    Command.TO_BUSMODE: "bus-mode command",
    Command.SEND_BATTERY_STATUS: "battery request",
    Command.SEND_VERSION: "version request",
    Command.STARTBOOTLOADER: "boot-loader command",
    Command.RETURN_LONG_SERIALNR: "long-serial-number request",
    Command.SEND_UNKNOWN_V: "Pegasus state request",
    Command.SEND_LOCK_STATE: "lock-state request",
    Command.SEND_DEVKEY_STATE: "developer-key-state request",
    Command.SET_LEDS: "LED command",
    Command.DEVELOPER_KEY: "developer key",
    Command.SET_BOARD_NAME: "board-name command",
    Command.CLOCK_MESSAGE: "clock command",
}


def request_name(command: HostCommand) -> str:
    """``"board-memory request (0x49)"``; a bus command names its address."""
    if command.address is not None:
        return f"bus command (0x{command.code:02x}) to address {command.address}"
    return f"{_NAMES.get(command.code, 'command')} (0x{command.code:02x})"


def written_commands(data: bytes | bytearray) -> list[HostCommand]:
    """The commands in bytes a host wrote in one go (a trailing partial command is left
    out)."""
    return CommandParser().feed(bytes(data))


def describe_written(data: bytes) -> str:
    """The commands in one write, in words: ``"the board-memory request (0x49)"``, ``"the
    serial-number request (0x45), long-serial-number request (0x55) and trademark request
    (0x47)"``; ``"nothing"`` when the bytes hold no whole command."""
    names = [request_name(command) for command in written_commands(data)]
    if not names:
        return "nothing"
    if len(names) == 1:
        return f"the {names[0]}"
    return f"the {', '.join(names[:-1])} and {names[-1]}"
