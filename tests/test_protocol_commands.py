"""Host-to-board commands: one-byte commands, LED frames, the Pegasus developer key, bus
commands with their checksum, and the emulator's CommandParser.  Pure, no I/O.

Facts: docs/protocol.md §2 (commands), §2.1 (bus mode), §6.3-§6.4
(Pegasus), §7.1 (Revelation II LEDs).
"""

from __future__ import annotations

import chess
import pytest

from dgt.protocol import (
    PEGASUS_APP_KEY,
    BusCommand,
    Command,
    CommandParser,
    HostCommand,
    encode_bus_command,
    encode_clock_beep,
    encode_clock_end,
    encode_clock_setnrun,
    encode_clock_text,
    encode_clock_text_rev2,
    encode_command,
    encode_pegasus_key,
    encode_pegasus_leds,
    encode_pegasus_leds_off,
    encode_pegasus_name,
    encode_rev2_leds,
    encode_rev2_leds_off,
    encode_rev2_setting,
)

ONE_BYTE = {
    Command.SEND_RESET: 0x40,
    Command.SEND_CLK: 0x41,
    Command.SEND_BRD: 0x42,
    Command.SEND_UPDATE: 0x43,
    Command.SEND_UPDATE_BRD: 0x44,
    Command.RETURN_SERIALNR: 0x45,
    Command.RETURN_BUSADRES: 0x46,
    Command.SEND_TRADEMARK: 0x47,
    Command.SEND_HARDWARE_VERSION: 0x48,
    Command.SEND_EE_MOVES: 0x49,
    Command.TO_BUSMODE: 0x4A,
    Command.SEND_UPDATE_NICE: 0x4B,
    Command.SEND_BATTERY_STATUS: 0x4C,
    Command.SEND_VERSION: 0x4D,
    Command.STARTBOOTLOADER: 0x4E,
    Command.SEND_BRD_50B: 0x50,
    Command.SCAN_50B: 0x51,
    Command.SEND_BRD_50W: 0x52,
    Command.SCAN_50W: 0x53,
    Command.SCAN_100: 0x54,
    Command.RETURN_LONG_SERIALNR: 0x55,
    Command.SEND_UNKNOWN_V: 0x56,
    Command.SEND_LOCK_STATE: 0x59,
    Command.SEND_DEVKEY_STATE: 0x5A,
}
"""Every one-byte command with its byte from the table in docs/protocol.md (§2)."""

WITH_DATA = [Command.CLOCK_MESSAGE, Command.SET_LEDS, Command.DEVELOPER_KEY,
             Command.SET_BOARD_NAME]  # fmt: skip


@pytest.mark.parametrize(("command", "byte"), list(ONE_BYTE.items()), ids=lambda c: str(c))
def test_one_byte_commands(command: Command, byte: int) -> None:
    assert encode_command(command) == bytes((byte,))


def test_every_command_is_either_one_byte_or_has_its_own_encoder() -> None:
    assert set(Command) == set(ONE_BYTE) | set(WITH_DATA)


@pytest.mark.parametrize("command", WITH_DATA)
def test_commands_with_data_refuse_the_one_byte_encoder(command: Command) -> None:
    with pytest.raises(ValueError, match="takes data"):
        encode_command(command)


# --- LEDs and the developer key -----------------------------------------------------------


def test_pegasus_led_frame() -> None:
    """``60 <n> 05 <speed> <repeat> <intensity> <fields> 00``, n = bytes after n; e2 is
    field 52 (0x34), e4 field 36 (0x24)."""
    data = encode_pegasus_leds([chess.E2, chess.E4], speed=3, repeat=1, intensity=2)
    assert data == bytes.fromhex("60 07 05 03 01 02 34 24 00")


def test_pegasus_led_frame_defaults_and_corners() -> None:
    assert encode_pegasus_leds([chess.A8]) == bytes.fromhex("60 06 05 03 00 01 00 00")
    assert encode_pegasus_leds([chess.H1]) == bytes.fromhex("60 06 05 03 00 01 3f 00")
    assert encode_pegasus_leds([]) == bytes.fromhex("60 05 05 03 00 01 00")


def test_pegasus_led_frame_for_every_square() -> None:
    data = encode_pegasus_leds(chess.SQUARES, speed=7)
    assert data[1] == 5 + 64
    assert len(data) == 2 + data[1]
    assert sorted(data[6:-1]) == list(range(64))


def test_pegasus_leds_off() -> None:
    assert encode_pegasus_leds_off() == bytes.fromhex("60 02 00 00")


def test_revelation_led_frames() -> None:
    assert encode_rev2_leds(chess.E2, chess.E4) == bytes.fromhex("60 04 01 34 24 00")
    assert encode_rev2_leds(chess.A8, chess.H1, on=False) == bytes.fromhex("60 04 00 00 3f 00")
    assert encode_rev2_leds_off() == bytes.fromhex("60 04 00 40 40 00")


@pytest.mark.parametrize(
    ("setting", "enabled", "hex_"),
    [(1, False, "60 04 02 01 00 00"), (1, True, "60 04 02 01 01 00"),
     (2, False, "60 04 02 02 00 00"), (2, True, "60 04 02 02 01 00")],
)  # fmt: skip
def test_revelation_settings(setting: int, enabled: bool, hex_: str) -> None:
    assert encode_rev2_setting(setting, enabled) == bytes.fromhex(hex_)


def test_pegasus_developer_key_of_the_dgt_app() -> None:
    assert bytes.fromhex("be f5 ae dd a9 5f") == PEGASUS_APP_KEY
    assert encode_pegasus_key() == bytes.fromhex("63 07 be f5 ae dd a9 5f 00")


def test_pegasus_developer_key_seen_in_a_start_burst() -> None:
    key = bytes.fromhex("8e 87 b0 18 b6 f4")
    assert encode_pegasus_key(key) == bytes.fromhex("63 07 8e 87 b0 18 b6 f4 00")


def test_pegasus_name_counts_the_bytes_after_the_size() -> None:
    assert encode_pegasus_name("DGT") == bytes.fromhex("65 04 44 47 54 00")


# --- bus commands -----------------------------------------------------------------------


def test_bus_command_checksum() -> None:
    """0x81 0x10 0x06: sum 0x97, bit 7 cleared -> 0x17."""
    assert encode_bus_command(BusCommand.SEND_CLK, (0x10 << 7) | 0x06) == bytes.fromhex(
        "81 10 06 17"
    )


def test_bus_ping_to_every_board() -> None:
    assert encode_bus_command(BusCommand.PING, 0) == bytes.fromhex("87 00 00 07")


@pytest.mark.parametrize("command", list(BusCommand))
def test_bus_commands_for_the_largest_address(command: BusCommand) -> None:
    data = encode_bus_command(command, 0x3FFF)
    assert data == bytes((command, 0x7F, 0x7F, (command + 0x7F + 0x7F) & 0x7F))


def test_bus_command_bytes_match_the_fact_sheet() -> None:
    assert [int(c) for c in BusCommand] == list(range(0x81, 0x8E))


# --- CommandParser ----------------------------------------------------------------------

SESSION: list[tuple[bytes, HostCommand]] = [
    (encode_command(Command.SEND_RESET), HostCommand(0x40)),
    (encode_command(Command.SEND_UPDATE_NICE), HostCommand(0x4B)),
    (encode_pegasus_key(), HostCommand(0x63, PEGASUS_APP_KEY + b"\x00")),
    (encode_clock_text("READY"), HostCommand(0x2B, b"\x03\x0cREADY   \x00\x00")),
    (encode_command(Command.SEND_BRD), HostCommand(0x42)),
    (encode_clock_setnrun(300, 300),
     HostCommand(0x2B, bytes((0x03, 0x0A, 0, 5, 0, 0, 5, 0, 0x0C, 0x00)))),
    (encode_pegasus_leds([chess.E2]), HostCommand(0x60, bytes.fromhex("05 03 00 01 34 00"))),
    (encode_bus_command(BusCommand.SEND_BRD, 1025), HostCommand(0x82, b"", 1025)),
    (encode_rev2_leds_off(), HostCommand(0x60, bytes.fromhex("00 40 40 00"))),
    (encode_clock_beep(1), HostCommand(0x2B, bytes.fromhex("03 0b 10 00"))),
    (encode_clock_end(), HostCommand(0x2B, bytes.fromhex("03 03 00"))),
    (encode_clock_text_rev2("abc"), HostCommand(0x2B, b"\x03\x0dabc        \x00\x00")),
    (encode_pegasus_leds_off(), HostCommand(0x60, b"\x00\x00")),
    (encode_bus_command(BusCommand.PING, 0), HostCommand(0x87, b"", 0)),
    (encode_command(Command.SEND_VERSION), HostCommand(0x4D)),
]  # fmt: skip
SESSION_BYTES = b"".join(data for data, _ in SESSION)
SESSION_COMMANDS = [command for _, command in SESSION]


def test_command_parser_reads_a_whole_session() -> None:
    assert CommandParser().feed(SESSION_BYTES) == SESSION_COMMANDS


@pytest.mark.parametrize(("data", "command"), SESSION)
def test_command_parser_each_command_alone(data: bytes, command: HostCommand) -> None:
    assert CommandParser().feed(data) == [command]


def test_command_parser_split_anywhere() -> None:
    for cut in range(len(SESSION_BYTES) + 1):
        parser = CommandParser()
        out = parser.feed(SESSION_BYTES[:cut]) + parser.feed(SESSION_BYTES[cut:])
        assert out == SESSION_COMMANDS, cut


def test_command_parser_split_at_every_pair_of_points() -> None:
    data = SESSION_BYTES[:40]
    expected = CommandParser().feed(data)
    for a in range(len(data) + 1):
        for b in range(a, len(data) + 1):
            parser = CommandParser()
            out = parser.feed(data[:a]) + parser.feed(data[a:b]) + parser.feed(data[b:])
            assert out == expected, (a, b)


def test_command_parser_one_byte_at_a_time() -> None:
    parser = CommandParser()
    out = [c for i in range(len(SESSION_BYTES)) for c in parser.feed(SESSION_BYTES[i : i + 1])]
    assert out == SESSION_COMMANDS


def test_command_parser_waits_for_the_rest_of_a_sized_command() -> None:
    parser = CommandParser()
    data = encode_clock_text("WAIT")
    assert parser.feed(data[:1]) == []
    assert parser.feed(data[1:2]) == []
    assert parser.feed(data[2:-1]) == []
    assert parser.feed(data[-1:] + b"\x42") == [
        HostCommand(0x2B, b"\x03\x0cWAIT    \x00\x00"),
        HostCommand(0x42),
    ]


def test_command_parser_drops_a_bus_command_with_a_bad_checksum() -> None:
    """The whole damaged command is dropped (as the docstring promises): its address and
    checksum bytes must not come out as one-byte commands.  Here the address LSB is 0x40,
    which would otherwise reset the board."""
    parser = CommandParser()
    bad = bytes.fromhex("82 00 40 43")  # checksum should be 0x42
    good = encode_bus_command(BusCommand.SEND_CLK, 5)
    assert parser.feed(bad + good) == [HostCommand(0x81, b"", 5)]
    assert parser.bad_checksums == 1


def test_command_parser_resyncs_on_a_bus_command_inside_a_damaged_one() -> None:
    """A bus command cut short (``81 10``) and then a whole one: only a command byte has
    bit 7 set, so the damaged command ends at the next such byte.  Dropping a fixed four
    bytes would eat the good command's first two bytes and read its address LSB and
    checksum as one-byte commands."""
    parser = CommandParser()
    good = encode_bus_command(BusCommand.SEND_BRD, 1025)
    assert parser.feed(b"\x81\x10" + good) == [HostCommand(0x82, b"", 1025)]
    assert parser.bad_checksums == 1


def test_command_parser_keeps_high_bytes_inside_sized_data() -> None:
    """The developer key holds bytes with bit 7 set: they are data, not bus commands."""
    assert CommandParser().feed(encode_pegasus_key() + b"\x4d") == [
        HostCommand(0x63, PEGASUS_APP_KEY + b"\x00"),
        HostCommand(0x4D),
    ]


def test_command_parser_rejects_a_bus_address_byte_with_bit_7() -> None:
    """``81 82 08 0b`` has a matching checksum but 0x82 cannot be an address byte (7 bits):
    it is the start of the next command, and no command may carry an address beyond 14
    bits."""
    ping = encode_bus_command(BusCommand.PING, 0)
    out = CommandParser().feed(bytes.fromhex("81 82 08 0b") + ping)
    assert all(c.address is None or c.address <= 0x3FFF for c in out)
    assert out[-1] == HostCommand(0x87, b"", 0)


def test_a_classic_board_reads_an_led_frame_as_one_byte_commands() -> None:
    """A board that only knows the clock message as a sized command: the LED frame's bytes
    are one-byte commands to it (0x40 among them is a reset)."""
    parser = CommandParser(frozenset({Command.CLOCK_MESSAGE}))
    out = parser.feed(encode_rev2_leds_off() + encode_clock_end())
    assert out == [HostCommand(b) for b in (0x60, 0x04, 0x00, 0x40, 0x40, 0x00)] + [
        HostCommand(0x2B, bytes.fromhex("03 03 00"))
    ]


def test_command_parser_reset_drops_a_partial_command() -> None:
    parser = CommandParser()
    assert parser.feed(encode_clock_text("HALF")[:5]) == []
    parser.reset()
    assert parser.feed(b"\x42") == [HostCommand(0x42)]
