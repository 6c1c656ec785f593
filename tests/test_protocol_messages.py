"""Board-to-host messages of the DGT protocol: exact bytes, round trips through the
parser, piece codes and the board's square numbering.  Pure codec tests, no I/O.

Facts: docs/protocol.md §3 (framing, ids, dumps), §3.6 (identification),
§3.7 (battery), §3.8 (EE moves), §4 (piece codes).
"""

from __future__ import annotations

import chess
import pytest

from dgt.protocol import (
    BatteryStatus,
    BoardDump,
    BusAddress,
    ClockAck,
    ClockTimes,
    EEClockTime,
    EEMoves,
    EEPieceChange,
    EETag,
    EETagRecord,
    FieldUpdate,
    FrameParser,
    HardwareVersion,
    LongSerialNumber,
    Message,
    MessageId,
    Piece,
    SerialNumber,
    StateByte,
    Trademark,
    Unknown,
    Version,
    decode_message,
    frame,
    index_to_square,
    rotate_square,
    square_to_index,
)


def parse(data: bytes) -> list[Message]:
    """Everything a fresh parser decodes from ``data`` fed in one chunk."""
    return FrameParser().feed(data)


def start_position_fields() -> bytes:
    """The 64 raw codes of the start position in the board's field order (0 = a8),
    written out by hand from docs/protocol.md (§3.3, §4), not through the codec."""
    back_black = bytes((0x08, 0x09, 0x0A, 0x0C, 0x0B, 0x0A, 0x09, 0x08))  # r n b q k b n r
    back_white = bytes((0x02, 0x03, 0x04, 0x06, 0x05, 0x04, 0x03, 0x02))  # R N B Q K B N R
    return back_black + b"\x07" * 8 + b"\x00" * 32 + b"\x01" * 8 + back_white


# --- every message type round-trips -----------------------------------------------------

ROUND_TRIP: list[Message] = [
    BoardDump(start_position_fields()),
    BoardDump(bytes(64)),
    BoardDump(b"\x7f" * 64),  # a Pegasus without its developer key
    FieldUpdate(0, 0),
    FieldUpdate(63, 0x0C),
    FieldUpdate(52, 0x0F),
    ClockTimes.build(185, 3599, running=True, left_running=True),
    ClockTimes.build(0, 0, no_clock=True),
    ClockTimes(bytes(7)),
    ClockAck(0x10, 0x09, 0x20, 0x00),
    ClockAck(0x90, 0x81, 0xA0, 0xB1),
    ClockAck(0x10, 0x88, 0x45, 0x35),
    EEMoves(b""),
    EEMoves(bytes((0x7F, 0x7F, 0x7F, 0x6A, 0x41, 0x34, 0x71, 0x03, 0x00, 0x6B))),
    Version(3, 10),
    HardwareVersion(1, 0),
    SerialNumber("01025"),
    SerialNumber("01025 1.0"),
    LongSerialNumber("3.25012345"),
    Trademark("Digital Game Technology\r\nCopyright (c) 2021 DGT\r\n"),
    Trademark(""),
    BusAddress(1025),
    BusAddress(0x3FFF),
    BatteryStatus(88, (1, 2), (3, 4), (5, 6, 7), 1),
    BatteryStatus(100),
    StateByte(MessageId.LOCK_STATE, 0),
    StateByte(MessageId.DEVKEY_STATE, 1),
    Unknown(0xA3, b"\x01\x02"),
    Unknown(0x81, b""),
    Unknown(0xFF, bytes(range(0x80))),
    Unknown(MessageId.FIELD_UPDATE, b"\x40\x01"),  # field 64 does not exist
    Unknown(MessageId.BOARD_DUMP_50B, bytes(50)),  # draughts: framed, not decoded
]


@pytest.mark.parametrize("msg", ROUND_TRIP, ids=lambda m: type(m).__name__)
def test_every_message_round_trips_through_the_parser(msg: Message) -> None:
    assert parse(msg.to_bytes()) == [msg]


@pytest.mark.parametrize("msg", ROUND_TRIP, ids=lambda m: type(m).__name__)
def test_header_counts_the_whole_frame(msg: Message) -> None:
    data = msg.to_bytes()
    assert data[0] == msg.ID
    assert (data[1] << 7) | data[2] == len(data)
    assert all(b < 0x80 for b in data[1:])


# --- exact bytes per message --------------------------------------------------------------


def test_field_update_bytes() -> None:
    assert FieldUpdate(12, 1).to_bytes() == bytes.fromhex("8e 00 05 0c 01")
    assert parse(bytes.fromhex("8e 00 05 0c 01")) == [FieldUpdate(12, 1)]


def test_field_update_square_is_python_chess_numbering() -> None:
    assert FieldUpdate(0, 1).square == chess.A8
    assert FieldUpdate(7, 1).square == chess.H8
    assert FieldUpdate(52, 1).square == chess.E2
    assert FieldUpdate(63, 1).square == chess.H1


def test_field_update_with_a_field_beyond_63_is_unknown() -> None:
    assert parse(bytes.fromhex("8e 00 05 40 01")) == [Unknown(0x8E, b"\x40\x01")]


def test_board_dump_bytes_and_pieces() -> None:
    fields = start_position_fields()
    data = BoardDump(fields).to_bytes()
    assert data[:3] == bytes.fromhex("86 00 43")
    assert data[3:] == fields
    [dump] = parse(data)
    assert isinstance(dump, BoardDump)
    pieces = dump.pieces()
    expected = chess.Board().piece_map()
    for square in chess.SQUARES:
        want = expected[square].symbol() if square in expected else "."
        assert pieces[square].symbol == want, chess.square_name(square)


def test_board_dump_from_pieces_is_the_inverse_of_pieces() -> None:
    dump = BoardDump(start_position_fields())
    assert BoardDump.from_pieces(dump.pieces()) == dump


def test_board_dump_presence_only_never_reads_as_pawns() -> None:
    fields = bytes(1 if i < 16 or i >= 48 else 0 for i in range(64))  # Pegasus: 00/01
    pieces = BoardDump(fields).pieces(presence_only=True)
    assert pieces[chess.E2] is Piece.OCCUPIED
    assert pieces[chess.A8] is Piece.OCCUPIED
    assert pieces[chess.E4] is Piece.EMPTY
    assert Piece.WPAWN not in pieces
    assert set(BoardDump(b"\x7f" * 64).pieces(presence_only=True)) == {Piece.UNKNOWN}


def test_version_bytes_and_text() -> None:
    assert Version(3, 10).to_bytes() == bytes.fromhex("93 00 05 03 0a")
    assert str(Version(3, 10)) == "3.10"
    assert str(Version(1, 2)) == "1.02"


def test_hardware_version_bytes() -> None:
    assert HardwareVersion(1, 0).to_bytes() == bytes.fromhex("96 00 05 01 00")
    assert parse(bytes.fromhex("96 00 05 02 07")) == [HardwareVersion(2, 7)]


def test_serial_number_five_digits() -> None:
    data = bytes.fromhex("91 00 08") + b"01025"
    assert SerialNumber("01025").to_bytes() == data
    assert parse(data) == [SerialNumber("01025")]


def test_serial_number_old_nine_character_reading() -> None:
    """The 1998 header: 5 digits, a space and "1.0" (total size 12)."""
    data = bytes.fromhex("91 00 0c") + b"01025 1.0"
    assert parse(data) == [SerialNumber("01025 1.0")]


def test_serial_number_of_ten_characters_as_a_pegasus_clone_sends_it() -> None:
    """One Pegasus implementation answers the serial-number request (45) with its long
    serial number under the serial-number id: total size 13."""
    data = bytes.fromhex("91 00 0d") + b"P123456789"
    assert SerialNumber("P123456789").to_bytes() == data
    assert parse(data) == [SerialNumber("P123456789")]
    for cut in range(1, len(data)):  # split anywhere, and after garbage
        parser = FrameParser()
        out = parser.feed(b"\x01\x7f" + data[:cut]) + parser.feed(data[cut:])
        assert out == [SerialNumber("P123456789")], cut


@pytest.mark.parametrize(("size", "text"), [(8, "01025"), (12, "01025 1.0"), (13, "0000001025")])
def test_serial_number_of_every_size_a_board_sends(size: int, text: str) -> None:
    data = bytes((0x91, 0, size)) + text.encode()
    assert parse(data + FieldUpdate(1, 1).to_bytes()) == [SerialNumber(text), FieldUpdate(1, 1)]


@pytest.mark.parametrize("size", [0, 3, 4, 5, 7, 9, 10, 11, 14, 15, 20])
def test_serial_number_of_another_size_is_rejected(size: int) -> None:
    data = bytes((0x91, 0, size)) + b"0" * (size - 3)
    assert parse(data + FieldUpdate(1, 1).to_bytes()) == [FieldUpdate(1, 1)]


def test_long_serial_number_bytes() -> None:
    data = bytes.fromhex("a2 00 0d") + b"3.25012345"
    assert LongSerialNumber("3.25012345").to_bytes() == data
    assert parse(data) == [LongSerialNumber("3.25012345")]


def test_trademark_keeps_line_breaks() -> None:
    text = "DGT Projects\r\nCopyright 2021\r\nSW 1.0\r\nHW P123456789"
    data = bytes((0x92, 0, len(text) + 3)) + text.encode()
    assert Trademark(text).to_bytes() == data
    assert parse(data) == [Trademark(text)]


def test_trademark_of_256_characters_uses_both_length_bytes() -> None:
    text = "x" * 256
    data = Trademark(text).to_bytes()
    assert data[:3] == bytes((0x92, 259 >> 7, 259 & 0x7F))
    assert parse(data) == [Trademark(text)]


def test_bus_address_of_serial_01025_is_08_01() -> None:
    assert BusAddress(1025).to_bytes() == bytes.fromhex("90 00 05 08 01")
    assert parse(bytes.fromhex("90 00 05 08 01")) == [BusAddress(1025)]


def test_battery_status_bytes() -> None:
    msg = BatteryStatus(88, (1, 2), (3, 4), (5, 6, 7), 1)
    assert msg.to_bytes() == bytes.fromhex("a0 00 0c 58 01 02 03 04 05 06 07 01")
    assert msg.charging
    assert not BatteryStatus(50, status=0x02).charging


BATTERY_PAYLOAD = bytes((0x58, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x01))


@pytest.mark.parametrize("size", range(7, 13))
def test_battery_status_of_every_tolerated_length(size: int) -> None:
    """Sizes 7 (the header constant) to 12 (real boards): fields are read in order,
    missing trailing fields read as 0."""
    payload = BATTERY_PAYLOAD[: size - 3]
    [msg] = parse(bytes((0xA0, 0, size)) + payload)
    assert isinstance(msg, BatteryStatus)
    padded = payload.ljust(9, b"\x00")
    assert msg.percent == 0x58
    assert msg.time_left == (padded[1], padded[2])
    assert msg.on_time == (padded[3], padded[4])
    assert msg.standby == (padded[5], padded[6], padded[7])
    assert msg.status == padded[8]


@pytest.mark.parametrize("size", [3, 4, 5, 6, 13, 14])
def test_battery_status_of_an_impossible_length_is_rejected(size: int) -> None:
    data = bytes((0xA0, 0, size)) + b"\x01" * (size - 3)
    assert parse(data + FieldUpdate(2, 2).to_bytes()) == [FieldUpdate(2, 2)]


def test_pegasus_state_bytes() -> None:
    assert StateByte(0xA4, 0).to_bytes() == bytes.fromhex("a4 00 04 00")
    assert parse(bytes.fromhex("a5 00 04 01")) == [StateByte(0xA5, 1)]


@pytest.mark.parametrize("msg_id", [0x80, 0x81, 0x87, 0x97, 0xA1, 0xA3, 0xA6, 0xC0, 0xFF])
def test_unknown_ids_become_unknown(msg_id: int) -> None:
    data = bytes((msg_id, 0, 6, 1, 2, 3))
    assert parse(data) == [Unknown(msg_id, b"\x01\x02\x03")]


def test_decode_message_never_raises_on_short_payloads() -> None:
    """The decoder alone (without the parser's size check) falls back to Unknown."""
    for msg_id in range(0x80, 0x100):
        for n in range(12):
            msg = decode_message(msg_id, bytes(range(n)))
            assert msg_id == msg.ID


def test_frame_header() -> None:
    assert frame(0x8F, b"") == bytes.fromhex("8f 00 03")
    assert frame(0x8F, bytes(200))[:3] == bytes((0x8F, 203 >> 7, 203 & 0x7F))


# --- EE moves ---------------------------------------------------------------------------


def test_ee_piece_change_record() -> None:
    assert EEMoves.from_records([EEPieceChange(52, 1)]).data == bytes.fromhex("41 34")
    assert EEMoves.from_records([EEPieceChange(52, 0)]).data == bytes.fromhex("40 34")
    assert EEMoves.from_records([EEPieceChange(0, 0x0C, quick=True)]).data == bytes.fromhex("5c 00")
    assert EEMoves(bytes.fromhex("5c 00 40 3f")).records == (
        EEPieceChange(0, 0x0C, quick=True),
        EEPieceChange(63, 0),
    )


def test_ee_clock_time_record_is_bcd() -> None:
    seconds = 1 * 3600 + 23 * 60 + 45
    assert EEMoves.from_records([EEClockTime(True, seconds)]).data == bytes.fromhex("71 23 45")
    assert EEMoves.from_records([EEClockTime(False, seconds)]).data == bytes.fromhex("61 23 45")
    assert EEMoves(bytes.fromhex("69 59 59 70 00 07")).records == (
        EEClockTime(False, 9 * 3600 + 59 * 60 + 59),
        EEClockTime(True, 7),
    )


def test_ee_clock_time_saturates_at_the_largest_clock_time() -> None:
    data = EEMoves.from_records([EEClockTime(True, 10 * 3600)]).data
    assert EEMoves(data).records == (EEClockTime(True, 9 * 3600 + 59 * 60 + 59),)


@pytest.mark.parametrize("tag", list(EETag))
def test_ee_tags_are_one_byte(tag: EETag) -> None:
    assert EEMoves.from_records([EETagRecord(tag)]).data == bytes((tag,))
    assert EEMoves(bytes((tag,))).records == (EETagRecord(tag),)


def test_ee_power_on_stream() -> None:
    """Power-on: three NOPs, POWERUP, one change per piece found; a download ends in EOF."""
    data = bytes.fromhex("7f 7f 7f 6a 41 30 41 31 6f 70 02 59 6b")
    records = EEMoves(data).records
    assert records == (
        EETagRecord(EETag.NOP),
        EETagRecord(EETag.NOP),
        EETagRecord(EETag.NOP),
        EETagRecord(EETag.POWERUP),
        EEPieceChange(48, 1),
        EEPieceChange(49, 1),
        EETagRecord(EETag.BEGINPOS),
        EEClockTime(True, 2 * 60 + 59),
        EETagRecord(EETag.EOF),
    )
    assert EEMoves.from_records(records).data == data
    assert parse(EEMoves(data).to_bytes()) == [EEMoves(data)]


@pytest.mark.parametrize(
    ("data", "records"),
    [
        ("41", ()),
        ("61", ()),
        ("61 23", ()),
        ("7f 71 00", (EETagRecord(EETag.NOP),)),
        ("41 30 5c", (EEPieceChange(48, 1),)),
    ],
)
def test_ee_record_cut_short_at_the_end_is_dropped(
    data: str, records: tuple[EETagRecord | EEPieceChange, ...]
) -> None:
    assert EEMoves(bytes.fromhex(data)).records == records


def test_ee_moves_of_the_largest_size() -> None:
    data = bytes.fromhex("41 34") * 0xF80  # 0x1F00 bytes: the whole ring buffer
    msg = EEMoves(data)
    raw = msg.to_bytes()
    assert raw[:3] == bytes((0x8F, 0x1F03 >> 7, 0x1F03 & 0x7F))
    assert parse(raw) == [msg]
    assert len(msg.records) == 0xF80


def test_ee_moves_larger_than_the_ring_buffer_is_rejected() -> None:
    raw = EEMoves(b"\x7f" * 0x1F01).to_bytes()
    assert parse(raw + FieldUpdate(3, 3).to_bytes()) == [FieldUpdate(3, 3)]


# --- piece codes ------------------------------------------------------------------------


def test_piece_codes_king_before_queen() -> None:
    assert [Piece.from_wire(c).symbol for c in range(13)] == list(".PRNBKQprnbkq")


@pytest.mark.parametrize(
    ("code", "piece"),
    [(0x0D, Piece.DRAW), (0x0E, Piece.WHITE_WINS), (0x0F, Piece.BLACK_WINS)],
)
def test_magic_pieces(code: int, piece: Piece) -> None:
    assert Piece.from_wire(code) is piece
    assert piece.to_wire() == code
    assert not piece.is_chessman
    assert parse(FieldUpdate(10, code).to_bytes()) == [FieldUpdate(10, code)]


def test_undefined_codes_decode_as_unknown() -> None:
    assert {Piece.from_wire(c) for c in range(0x10, 0x80)} == {Piece.UNKNOWN}


def test_presence_only_decoding() -> None:
    assert Piece.from_wire(0, presence_only=True) is Piece.EMPTY
    assert Piece.from_wire(1, presence_only=True) is Piece.OCCUPIED
    assert Piece.from_wire(0x7F, presence_only=True) is Piece.UNKNOWN
    assert {Piece.from_wire(c, presence_only=True) for c in range(1, 0x7F)} == {Piece.OCCUPIED}
    assert Piece.OCCUPIED.to_wire() == 0x01


def test_piece_symbols_round_trip() -> None:
    for piece in Piece:
        assert Piece.from_symbol(piece.symbol) is piece
    with pytest.raises(ValueError, match="unknown piece symbol"):
        Piece.from_symbol("Z")


def test_chessmen() -> None:
    assert {p for p in Piece if p.is_chessman} == {Piece.from_wire(c) for c in range(1, 13)}


# --- square numbering -------------------------------------------------------------------


def test_field_index_corners() -> None:
    assert index_to_square(0) == chess.A8
    assert index_to_square(7) == chess.H8
    assert index_to_square(56) == chess.A1
    assert index_to_square(63) == chess.H1


def test_field_index_formula_for_every_square() -> None:
    """idx = (8 - rank) * 8 + file, with rank 1..8 and file a=0..h=7."""
    for square in chess.SQUARES:
        rank = chess.square_rank(square) + 1
        index = (8 - rank) * 8 + chess.square_file(square)
        assert square_to_index(square) == index
        assert index_to_square(index) == square


def test_rotated_board_maps_each_square_to_its_opposite() -> None:
    assert rotate_square(chess.A1) == chess.H8
    assert rotate_square(chess.E2) == chess.D7
    assert all(rotate_square(rotate_square(s)) == s for s in chess.SQUARES)
