"""The DGT board protocol: byte values, messages, encoders and frame parsers.  Pure: no I/O.

Facts: docs/protocol.md.  Squares in the public API are python-chess
numbers (0 = a1) in the board's own frame; the board's field numbers (0 = a8) appear only
in raw fields (``FieldUpdate.index``, ``BoardDump.fields``).
"""

from dgt.protocol.bus import BusMessage, encode_bus_command
from dgt.protocol.clock_codec import (
    Button,
    ClockAck,
    ClockStatus,
    ClockTimes,
    SetNRunMode,
    clock_message,
    decode_bwtime,
    decode_clock_setnrun,
    encode_clock_beep,
    encode_clock_button,
    encode_clock_display,
    encode_clock_end,
    encode_clock_icons,
    encode_clock_setnrun,
    encode_clock_text,
    encode_clock_text_rev2,
    encode_clock_version,
)
from dgt.protocol.commands import (
    PEGASUS_APP_KEY,
    encode_command,
    encode_pegasus_key,
    encode_pegasus_leds,
    encode_pegasus_leds_off,
    encode_pegasus_name,
    encode_rev2_leds,
    encode_rev2_leds_off,
    encode_rev2_setting,
)
from dgt.protocol.constants import (
    BusCommand,
    BusMessageId,
    ClockCommand,
    Command,
    MessageId,
    Piece,
    index_to_square,
    rotate_square,
    square_to_index,
)
from dgt.protocol.eeprom import EEClockTime, EEPieceChange, EERecord, EETag, EETagRecord
from dgt.protocol.messages import (
    BatteryStatus,
    BoardDump,
    BusAddress,
    EEMoves,
    FieldUpdate,
    HardwareVersion,
    LongSerialNumber,
    Message,
    SerialNumber,
    StateByte,
    Trademark,
    Unknown,
    Version,
    decode_message,
    frame,
)
from dgt.protocol.parser import BusFrameParser, CommandParser, FrameParser, HostCommand

__all__ = [
    "PEGASUS_APP_KEY", "BatteryStatus", "BoardDump", "BusAddress", "BusCommand",
    "BusFrameParser", "BusMessage", "BusMessageId", "Button", "ClockAck", "ClockCommand",
    "ClockStatus", "ClockTimes", "Command", "CommandParser", "EEClockTime", "EEMoves",
    "EEPieceChange", "EERecord", "EETag", "EETagRecord", "FieldUpdate", "FrameParser",
    "HardwareVersion", "HostCommand", "LongSerialNumber", "Message", "MessageId", "Piece",
    "SerialNumber", "SetNRunMode", "StateByte", "Trademark", "Unknown", "Version",
    "clock_message", "decode_bwtime", "decode_clock_setnrun", "decode_message",
    "encode_bus_command", "encode_clock_beep", "encode_clock_button", "encode_clock_display",
    "encode_clock_end", "encode_clock_icons", "encode_clock_setnrun", "encode_clock_text",
    "encode_clock_text_rev2", "encode_clock_version", "encode_command", "encode_pegasus_key",
    "encode_pegasus_leds", "encode_pegasus_leds_off", "encode_pegasus_name",
    "encode_rev2_leds", "encode_rev2_leds_off", "encode_rev2_setting", "frame",
    "index_to_square", "rotate_square", "square_to_index",
]  # fmt: skip
