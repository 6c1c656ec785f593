"""Encoders for host-to-board commands other than clock messages: one-byte commands, the
LED frames of the Revelation II and the Pegasus, and the Pegasus developer key."""

from __future__ import annotations

from collections.abc import Iterable

from dgt.protocol.constants import Command, square_to_index


def encode_command(command: Command) -> bytes:
    """A one-byte command (reset, send board, update modes, serial number, ...)."""
    if command in (
        Command.CLOCK_MESSAGE,
        Command.SET_LEDS,
        Command.DEVELOPER_KEY,
        Command.SET_BOARD_NAME,
    ):
        raise ValueError(f"{command.name} takes data: use its own encoder")
    return bytes((command,))


# --- Revelation II LEDs: 60 04 <pattern> <from> <to> 00 --------------------------------

REV2_LED_OFF = 0
REV2_LED_ON = 1
REV2_LED_SETTINGS = 2


def encode_rev2_leds(from_square: int, to_square: int, on: bool = True) -> bytes:
    """Light (or clear) the squares from..to (python-chess numbers, board frame)."""
    return bytes(
        (
            Command.SET_LEDS,
            0x04,
            REV2_LED_ON if on else REV2_LED_OFF,
            square_to_index(from_square),
            square_to_index(to_square),
            0x00,
        )
    )


def encode_rev2_leds_off() -> bytes:
    """All LEDs off (firmware later than 3.21)."""
    return bytes((Command.SET_LEDS, 0x04, REV2_LED_OFF, 0x40, 0x40, 0x00))


def encode_rev2_setting(setting: int, enabled: bool) -> bytes:
    """Settings: 1 = LEDs dim on a piece change, 2 = auto-reverse of the board."""
    return bytes((Command.SET_LEDS, 0x04, REV2_LED_SETTINGS, setting, int(enabled), 0x00))


# --- Pegasus LEDs: 60 <n> 05 <speed> <repeat> <intensity> <squares...> 00 --------------


def encode_pegasus_leds(
    squares: Iterable[int], speed: int = 3, repeat: int = 0, intensity: int = 1
) -> bytes:
    """Light squares (python-chess numbers, board frame).  ``repeat`` 0 keeps pulsing,
    1 blinks once; ``intensity`` lower is brighter; ``speed`` 1..7 (faster)."""
    fields = bytes(square_to_index(s) for s in squares)
    return (
        bytes(
            (Command.SET_LEDS, 5 + len(fields), 0x05, speed & 0x7F, repeat & 0x7F, intensity & 0x7F)
        )
        + fields
        + b"\x00"
    )


def encode_pegasus_leds_off() -> bytes:
    return bytes((Command.SET_LEDS, 0x02, 0x00, 0x00))


PEGASUS_APP_KEY = bytes((0xBE, 0xF5, 0xAE, 0xDD, 0xA9, 0x5F))
"""The developer key the DGT app sends; without a key the Pegasus reports 0x7F everywhere."""


def encode_pegasus_key(key: bytes = PEGASUS_APP_KEY) -> bytes:
    return bytes((Command.DEVELOPER_KEY, len(key) + 1)) + key + b"\x00"


def encode_pegasus_name(name: str) -> bytes:
    """Rename a Pegasus (uncertain: one source only)."""
    raw = name.encode("ascii", "replace")
    return bytes((Command.SET_BOARD_NAME, len(raw) + 1)) + raw + b"\x00"
