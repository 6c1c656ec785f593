"""Unit tests of the virtual board, its clock and the bus line: pure, fake time, no I/O.

Every answer is decoded with dgt.protocol's own parsers, so these tests also check that the
emulator speaks the encoding the driver reads.
"""

from __future__ import annotations

import chess
import pytest

from dgt.emulator.board import EE_CAPACITY, BoardMode, VirtualBoard, start_squares
from dgt.emulator.bus import BusLine, make_bus
from dgt.emulator.clock import ClockModel, VirtualClock
from dgt.events import Side
from dgt.protocol import (
    BatteryStatus,
    BoardDump,
    BusAddress,
    BusCommand,
    BusFrameParser,
    BusMessageId,
    Button,
    ClockAck,
    ClockTimes,
    Command,
    EEMoves,
    FieldUpdate,
    FrameParser,
    HardwareVersion,
    LongSerialNumber,
    Piece,
    SerialNumber,
    StateByte,
    Trademark,
    Version,
    clock_message,
    encode_bus_command,
    encode_clock_beep,
    encode_clock_button,
    encode_clock_display,
    encode_clock_end,
    encode_clock_setnrun,
    encode_clock_text,
    encode_clock_version,
    encode_pegasus_key,
    encode_pegasus_leds,
    encode_pegasus_leds_off,
    encode_rev2_leds,
    encode_rev2_leds_off,
    encode_rev2_setting,
)
from dgt.protocol.eeprom import EEClockTime, EEPieceChange, EETag, EETagRecord

E2, E4, E7, E5 = chess.E2, chess.E4, chess.E7, chess.E5


def cmd(*codes: int) -> bytes:
    return bytes(codes)


def decode(data: bytes) -> list[object]:
    parser = FrameParser()
    messages = parser.feed(data)
    assert parser.pending == 0, "a frame was cut short"
    assert parser.discarded == 0, "the board sent bytes that are no frame"
    return list(messages)


def one(data: bytes) -> object:
    messages = decode(data)
    assert len(messages) == 1, messages
    return messages[0]


def nice_board(**kwargs: object) -> VirtualBoard:
    board = VirtualBoard(**kwargs)  # type: ignore[arg-type]
    assert board.receive(cmd(Command.SEND_UPDATE_NICE), 0.0) == b""
    return board


# --- identification and modes ---------------------------------------------------------


def test_powers_up_in_bus_mode_and_any_single_command_switches_to_idle() -> None:
    board = VirtualBoard()
    assert board.bus_mode
    assert one(board.receive(cmd(Command.SEND_VERSION), 0.0)) == Version(3, 10)
    assert not board.bus_mode
    assert board.mode is BoardMode.IDLE


def test_unknown_bytes_do_not_leave_bus_mode() -> None:
    board = VirtualBoard()
    assert board.receive(b"\x00\x20\x3f", 0.0) == b""
    assert board.bus_mode


def test_identification_answers() -> None:
    board = VirtualBoard(serial="01025")
    assert one(board.receive(cmd(Command.RETURN_SERIALNR), 0)) == SerialNumber("01025")
    # the bus address is the serial number as a 14-bit number: 01025 -> 08 01 (H14)
    answer = board.receive(cmd(Command.RETURN_BUSADRES), 0)
    assert answer == bytes((0x90, 0, 5, 0x08, 0x01))
    assert one(answer) == BusAddress(1025)
    assert one(board.receive(cmd(Command.RETURN_LONG_SERIALNR), 0)) == LongSerialNumber(
        "0000001025"
    )
    trademark = one(board.receive(cmd(Command.SEND_TRADEMARK), 0))
    assert isinstance(trademark, Trademark)
    assert "DGT" in trademark.text
    assert "01025" in trademark.text


def test_classic_usb_board_has_no_battery_but_bluetooth_board_has() -> None:
    assert VirtualBoard().receive(cmd(Command.SEND_BATTERY_STATUS), 0) == b""
    answer = VirtualBoard(bluetooth=True, battery=64).receive(cmd(Command.SEND_BATTERY_STATUS), 0)
    assert len(answer) == 12  # as real boards send it (docs/protocol.md §3.2)
    status = one(answer)
    assert isinstance(status, BatteryStatus)
    assert status.percent == 64
    assert not status.charging


def test_reset_and_update_modes() -> None:
    board = VirtualBoard()
    for code, mode in (
        (Command.SEND_UPDATE, BoardMode.UPDATE),
        (Command.SEND_UPDATE_BRD, BoardMode.UPDATE_BOARD),
        (Command.SEND_UPDATE_NICE, BoardMode.UPDATE_NICE),
        (Command.SEND_RESET, BoardMode.IDLE),
    ):
        assert board.receive(cmd(code), 0.0) == b""
        assert board.mode is mode


def test_send_clk_and_send_brd_do_not_change_the_mode() -> None:
    board = nice_board()
    assert isinstance(one(board.receive(cmd(Command.SEND_CLK), 0.1)), ClockTimes)
    assert isinstance(one(board.receive(cmd(Command.SEND_BRD), 0.2)), BoardDump)
    assert board.mode is BoardMode.UPDATE_NICE


def test_dump_is_the_start_position_in_field_order() -> None:
    board = VirtualBoard()
    dump = one(board.receive(cmd(Command.SEND_BRD), 0))
    assert isinstance(dump, BoardDump)
    assert dump.fields[0] == Piece.BROOK  # a8 is field 0
    assert dump.fields[60] == Piece.WKING  # e1 is field 60
    assert dump.pieces() == start_squares()
    assert board.board_frame() == start_squares()


def test_to_busmode_and_bus_command_switch_back_without_processing() -> None:
    board = VirtualBoard()
    board.receive(cmd(Command.SEND_RESET), 0)
    assert board.receive(cmd(Command.TO_BUSMODE), 0) == b""
    assert board.bus_mode
    board.receive(cmd(Command.SEND_RESET), 0)
    # a bus command in single-board mode switches to bus mode and is not processed (H14)
    assert board.receive(encode_bus_command(BusCommand.PING, board.bus_address), 0) == b""
    assert board.bus_mode
    reply = BusFrameParser().feed(board.receive(encode_bus_command(BusCommand.PING, 12345), 0))
    assert [m.id for m in reply] == [BusMessageId.PING]


def test_bootloader_silences_the_board_until_power_up() -> None:
    board = VirtualBoard()
    board.receive(cmd(Command.STARTBOOTLOADER), 0)
    assert board.receive(cmd(Command.SEND_VERSION), 1) == b""
    board.power_up(2)
    assert one(board.receive(cmd(Command.SEND_VERSION), 3)) == Version(3, 10)


def test_draughts_commands_get_no_answer_on_a_chess_board() -> None:
    board = VirtualBoard()
    for code in (Command.SEND_BRD_50B, Command.SEND_BRD_50W, Command.SCAN_100):
        assert board.receive(cmd(code), 0) == b""


def test_commands_split_anywhere_are_read_the_same() -> None:
    data = encode_clock_version() + cmd(Command.SEND_VERSION) + encode_clock_text("HELLO")
    whole = nice_board().receive(data, 0.0)
    board = nice_board()
    pieces = b"".join(board.receive(bytes((b,)), 0.0) for b in data)
    assert pieces == whole
    assert len(decode(whole)) == 3


# --- pieces -----------------------------------------------------------------------------


def test_field_updates_only_in_update_modes() -> None:
    board = VirtualBoard()
    board.receive(cmd(Command.SEND_RESET), 0)
    assert board.lift(E2, 0.1) == b""  # IDLE: nothing sent
    board.receive(cmd(Command.SEND_UPDATE_BRD), 0.2)
    assert one(board.place(E4, Piece.WPAWN, 0.3)) == FieldUpdate(36, Piece.WPAWN)
    assert one(board.lift(E4, 0.4)) == FieldUpdate(36, 0)
    assert board.lift(E4, 0.5) == b""  # nothing changed
    assert board.squares[E2] is Piece.EMPTY


def test_capture_in_one_step_reports_the_new_piece_only() -> None:
    board = nice_board()
    board.lift(chess.D1, 0.1)
    update = one(board.place(chess.D7, Piece.WQUEEN, 0.2))
    assert update == FieldUpdate(11, Piece.WQUEEN)  # d7 is field 11; never shown empty


def test_new_square_may_be_reported_before_the_old_one_empties() -> None:
    board = nice_board()
    first = one(board.place(E4, Piece.WPAWN, 0.1))
    second = one(board.lift(E2, 0.11))
    assert first == FieldUpdate(36, 1)
    assert second == FieldUpdate(52, 0)


def test_reversed_board_reports_63_minus_square() -> None:
    board = nice_board(reversed=True)
    update = one(board.lift(E2, 0.1))
    assert isinstance(update, FieldUpdate)
    assert update.square == 63 - E2
    dump = one(board.receive(cmd(Command.SEND_BRD), 0.2))
    assert isinstance(dump, BoardDump)
    assert dump.pieces()[63 - chess.E1] is Piece.WKING
    assert dump.pieces()[chess.A1] is Piece.BROOK  # Black's h8 rook sits at the board's a1
    assert board.squares[chess.E1] is Piece.WKING  # players' frame unchanged


def test_custom_position_and_magic_pieces() -> None:
    board = VirtualBoard(squares={chess.E1: Piece.WKING, chess.E8: Piece.BKING})
    board.receive(cmd(Command.SEND_UPDATE_BRD), 0)
    assert one(board.place(chess.D4, Piece.DRAW, 0.1)) == FieldUpdate(35, 0x0D)
    with pytest.raises(ValueError, match="unknown"):
        board.place(chess.D5, Piece.UNKNOWN, 0.2)


# --- Pegasus ------------------------------------------------------------------------------


def test_pegasus_reports_0x7f_until_the_developer_key() -> None:
    board = VirtualBoard(pegasus=True)
    assert not board.bus_mode
    assert one(board.receive(cmd(Command.SEND_VERSION), 0)) == Version(1, 0)
    locked = one(board.receive(cmd(Command.SEND_BRD), 0))
    assert isinstance(locked, BoardDump)
    assert set(locked.fields) == {0x7F}
    board.receive(cmd(Command.SEND_UPDATE_BRD), 0)
    assert board.lift(E2, 0.1) == b""  # locked: nothing reported
    assert board.receive(encode_pegasus_key(), 0.2) == b""  # no reply to the key (DD)
    dump = one(board.receive(cmd(Command.SEND_BRD), 0.3))
    assert isinstance(dump, BoardDump)
    assert set(dump.fields) == {0, 1}
    assert dump.pieces(presence_only=True)[E2] is Piece.EMPTY
    assert dump.pieces(presence_only=True)[chess.E1] is Piece.OCCUPIED
    assert board.board_frame()[chess.E1] is Piece.OCCUPIED


def test_pegasus_presence_only_updates() -> None:
    board = VirtualBoard(pegasus=True)
    board.receive(encode_pegasus_key() + cmd(Command.SEND_UPDATE_BRD), 0)
    assert one(board.place(E4, Piece.WPAWN, 0.1)) == FieldUpdate(36, 1)
    assert board.place(E4, Piece.WQUEEN, 0.2) == b""  # a piece replaced: occupancy unchanged
    assert one(board.lift(E4, 0.3)) == FieldUpdate(36, 0)
    assert board.squares[E4] is Piece.EMPTY


def test_pegasus_only_commands() -> None:
    board = VirtualBoard(pegasus=True)
    assert one(board.receive(cmd(Command.SEND_HARDWARE_VERSION), 0)) == HardwareVersion(1, 0)
    assert one(board.receive(cmd(Command.SEND_LOCK_STATE), 0)) == StateByte(0xA4, 0)
    assert one(board.receive(cmd(Command.SEND_DEVKEY_STATE), 0)) == StateByte(0xA5, 0)
    assert decode(board.receive(cmd(Command.SEND_UNKNOWN_V), 0))[0].ID == 0xA3  # type: ignore[attr-defined]
    board.receive(encode_pegasus_key(), 0)
    assert one(board.receive(cmd(Command.SEND_DEVKEY_STATE), 0)) == StateByte(0xA5, 1)
    battery = one(board.receive(cmd(Command.SEND_BATTERY_STATUS), 0))
    assert isinstance(battery, BatteryStatus)
    assert one(board.receive(cmd(Command.SEND_EE_MOVES), 0)) == EEMoves(b"")
    assert board.receive(cmd(Command.SEND_RESET), 0) == b""
    trademark = one(board.receive(cmd(Command.SEND_TRADEMARK), 0))
    assert isinstance(trademark, Trademark)
    assert len(trademark.text.split("\r\n")) == 4
    # no clock port, no bus mode
    assert board.receive(cmd(Command.SEND_CLK), 0) == b""
    assert board.receive(encode_bus_command(BusCommand.PING, board.bus_address), 0) == b""
    # Pegasus-only letters mean nothing to a classic board
    classic = VirtualBoard()
    assert classic.receive(cmd(Command.SEND_HARDWARE_VERSION), 0) == b""
    assert classic.bus_mode


def test_pegasus_leds() -> None:
    board = VirtualBoard(pegasus=True)
    board.receive(encode_pegasus_leds([E2, E4]), 0)
    assert board.leds == frozenset()  # locked: LEDs do nothing
    board.receive(encode_pegasus_key() + encode_pegasus_leds([E2, E4], speed=5, repeat=1), 0)
    assert board.leds == {E2, E4}
    assert board.led_settings == {"speed": 5, "repeat": 1, "intensity": 1}
    board.receive(encode_pegasus_leds_off(), 0)
    assert board.leds == frozenset()


def test_revelation_leds_and_settings() -> None:
    board = VirtualBoard(revelation=True)
    assert one(board.receive(cmd(Command.SEND_VERSION), 0)) == Version(3, 25)
    serial = one(board.receive(cmd(Command.RETURN_LONG_SERIALNR), 0))
    assert isinstance(serial, LongSerialNumber)
    assert serial.text.startswith("3.25")
    board.receive(encode_rev2_leds(E2, E4), 0)
    assert board.leds == {E2, E4}
    board.receive(encode_rev2_leds_off(), 0)
    assert board.leds == frozenset()
    board.receive(encode_rev2_setting(2, False), 0)
    assert board.led_settings["auto_reverse"] == 0


def test_led_frame_to_a_classic_board_is_read_as_one_byte_commands() -> None:
    # PI#165: an LED frame stalled a classic board.  Its bytes are commands there: the
    # all-off frame 60 04 00 40 40 00 holds two resets, which end the update mode.
    board = nice_board()
    assert board.receive(encode_rev2_leds_off(), 0.1) == b""
    assert board.mode is BoardMode.IDLE
    assert board.lift(E2, 0.2) == b""  # the host waits for updates that never come
    assert board.leds == frozenset()


# --- memory (EE moves) ----------------------------------------------------------------


def ee(board: VirtualBoard, now: float = 0.0) -> EEMoves:
    message = one(board.receive(cmd(Command.SEND_EE_MOVES), now))
    assert isinstance(message, EEMoves)
    return message


def test_ee_moves_power_up_records_and_eof() -> None:
    board = VirtualBoard()
    records = ee(board).records
    assert records[:4] == (
        EETagRecord(EETag.NOP),
        EETagRecord(EETag.NOP),
        EETagRecord(EETag.NOP),
        EETagRecord(EETag.POWERUP),
    )
    pieces = [r for r in records if isinstance(r, EEPieceChange)]
    assert len(pieces) == 32
    assert EETagRecord(EETag.BEGINPOS) in records
    assert records[-1] == EETagRecord(EETag.EOF)
    # the download itself is logged
    assert ee(board).records[-2] == EETagRecord(EETag.DOWNLOADED)


def test_ee_records_moves_clock_times_and_quick_bit() -> None:
    board = VirtualBoard()
    board.receive(cmd(Command.SEND_RESET), 0)
    board.lift(E2, 1.0)
    board.place(E4, Piece.WPAWN, 1.1)  # within 250 ms: the 'r' bit
    board.press_lever(2.0)  # starts the clock: nothing halted, nothing written
    board.press_lever(3.0)  # right presses after 1 s: its time is written
    tail = ee(board, 4.0).records[-4:-1]
    assert tail[0] == EEPieceChange(52, 0, False)
    assert tail[1] == EEPieceChange(36, Piece.WPAWN, True)
    assert tail[2] == EEClockTime(left=False, seconds=299)


def test_ee_moves_waiting_at_connect() -> None:
    fresh = ee(VirtualBoard()).records
    waiting = ee(VirtualBoard(ee_moves=True)).records
    assert len(waiting) > len(fresh)
    assert any(isinstance(r, EEClockTime) for r in waiting)
    assert waiting.count(EETagRecord(EETag.POWERUP)) == 2


def test_ee_moves_capped_at_0x1f00() -> None:
    board = VirtualBoard()
    board.receive(cmd(Command.SEND_RESET), 0)
    now = 0.0
    for _ in range(1100):  # 8 bytes of records per round trip of the pawn
        board.lift(E2, now + 1)
        board.lift(chess.D2, now + 2)
        board.place(E2, Piece.WPAWN, now + 3)
        board.place(chess.D2, Piece.WPAWN, now + 4)
        now += 4
    raw = board.receive(cmd(Command.SEND_EE_MOVES), now)
    assert len(raw) == EE_CAPACITY + 3
    message = one(raw)
    assert isinstance(message, EEMoves)
    assert message.data[-1] == EETag.EOF


def test_same_field_changing_again_overwrites_its_record() -> None:
    board = VirtualBoard()
    board.receive(cmd(Command.SEND_RESET), 0)
    before = len(board.memory)
    board.lift(E2, 1.0)
    board.place(E2, Piece.WPAWN, 2.0)  # the pawn is put back: one record, overwritten (H14)
    assert len(board.memory) == before + 2
    assert ee(board).records[-2] == EEPieceChange(52, Piece.WPAWN)


def test_begin_position_rotated_tag() -> None:
    records = ee(VirtualBoard(reversed=True)).records
    assert EETagRecord(EETag.BEGINPOS_ROT) in records
    assert EETagRecord(EETag.BEGINPOS) not in records


# --- clock -----------------------------------------------------------------------------


def test_clock_acks_in_the_real_encoding_only_in_update_and_nice() -> None:
    board = VirtualBoard()
    for mode in (Command.SEND_RESET, Command.SEND_UPDATE_BRD):
        board.receive(cmd(mode), 0)
        assert board.receive(encode_clock_version(), 0) == b""
    for mode in (Command.SEND_UPDATE, Command.SEND_UPDATE_NICE):
        board.receive(cmd(mode), 0)
        raw = board.receive(encode_clock_version(), 0)
        # ack (0x10, 0x09, 0x20, 0) = DGT 3000 version 2.0, as seen in a real log (PI#108)
        assert raw == bytes((0x8D, 0, 10, 0x0A, 0x10, 0x09, 0x0A, 0x20, 0x00, 0x00))
        ack = one(raw)
        assert isinstance(ack, ClockAck)
        assert ack.ok
        assert ack.version == (2, 0)


@pytest.mark.parametrize(
    ("message", "sub"),
    [
        (encode_clock_display("123456", beep=True), 0x01),
        (encode_clock_end(), 0x03),
        (encode_clock_button(), 0x08),
        (encode_clock_beep(1.0), 0x0B),
        (encode_clock_text("HELLO", beep=3), 0x0C),
    ],
)
def test_every_clock_command_is_acked(message: bytes, sub: int) -> None:
    board = nice_board()
    ack = one(board.receive(message, 0.1))
    assert isinstance(ack, ClockAck)
    assert ack.ok
    assert ack.command == sub
    assert not ack.spontaneous


def test_clock_text_and_end() -> None:
    board = nice_board()
    board.receive(encode_clock_text("BEST MOV"), 0.1)
    assert board.clock is not None
    assert board.clock.text == "BEST MOV"
    board.receive(encode_clock_end(), 0.2)
    assert board.clock.text is None
    board.receive(encode_clock_display("123456"), 0.3)
    assert board.clock.text == "123456"


def test_malformed_clock_message_is_not_acked() -> None:
    board = nice_board()
    assert board.receive(b"\x2b\x03\x03\x09\x01", 0) == b""  # no end marker
    assert board.receive(clock_message(0x09, b"\x01"), 0) == b""  # wrong length


def test_setnrun_needs_mode_23() -> None:
    board = nice_board(clock=VirtualClock(mode23=False))
    ack = one(board.receive(encode_clock_setnrun(60, 60, 0x01), 0.1))
    assert isinstance(ack, ClockAck)
    assert ack.ack0 == 0x40
    assert not ack.ok


def test_setnrun_runs_the_clock_and_times_fall_with_now() -> None:
    board = nice_board()
    ack = one(board.receive(encode_clock_setnrun(600, 300, 0x01 | 0x08), 10.0))
    assert isinstance(ack, ClockAck)
    assert ack.ok
    assert ack.command == 0x0A
    first = one(board.poll(10.0))  # NICE: the times changed
    assert isinstance(first, ClockTimes)
    assert (first.left, first.right, first.running) == (600, 300, True)
    assert board.poll(10.5) == b""  # still shows 10:00
    deadline = board.next_deadline()
    assert deadline is not None
    assert 11.0 <= deadline < 11.01
    later = one(board.poll(25.0))
    assert isinstance(later, ClockTimes)
    assert (later.left, later.right) == (585, 300)
    assert later.status & 0x08  # left running: 0x08 as recorded from a real board (§10)


def test_lever_switches_sides_and_is_recorded() -> None:
    board = nice_board()
    clock = board.clock
    assert clock is not None
    board.receive(encode_clock_setnrun(100, 100, 0x01 | 0x08), 0.0)
    board.poll(0.0)
    pressed = one(board.press_lever(10.0))  # NICE: the change goes out at once
    assert isinstance(pressed, ClockTimes)
    assert pressed.right_high
    assert pressed.status == 0x13  # running, right high, right's turn (§10)
    assert clock.running is Side.RIGHT
    assert clock.times(20.0) == (90.0, 90.0)
    board.press_lever(25.0)
    assert clock.running is Side.LEFT
    assert clock.times(30.0) == (85.0, 85.0)


def test_first_lever_press_starts_a_clock_set_by_hand_with_increment() -> None:
    clock = VirtualClock(left=60, right=60, increment=2)
    assert clock.frame(0).status == 0  # stopped, left high
    clock.press_lever(1.0)  # left presses (left was high? no: left high means left runs)
    assert clock.running is Side.RIGHT
    clock.press_lever(11.0)  # right presses after 10 s and gets the increment
    assert clock.times(11.0) == (60.0, 52.0)


def test_flag_falls_and_clock_blocks_at_zero() -> None:
    clock = VirtualClock(left=3, right=3)
    clock.press_lever(0.0)
    frame = clock.frame(10.0)
    assert frame.right == 0
    assert frame.right_flag
    assert not frame.running
    assert clock.next_change(10.0) is None


def test_update_mode_sends_times_at_least_every_second() -> None:
    board = VirtualBoard()
    board.receive(cmd(Command.SEND_UPDATE), 0.0)
    times = []
    now = 0.0
    while now < 5.0:
        deadline = board.next_deadline()
        assert deadline is not None
        assert deadline - now <= 1.0 + 1e-6
        now = deadline
        times += [(now, m) for m in decode(board.poll(now))]
    assert len(times) >= 4
    assert all(isinstance(m, ClockTimes) and not m.running for _, m in times)


def test_nice_mode_sends_nothing_while_the_clock_stands() -> None:
    board = nice_board()
    assert board.next_deadline() is None
    assert board.poll(30.0) == b""


def test_update_board_mode_sends_no_clock_data() -> None:
    board = VirtualBoard()
    board.receive(cmd(Command.SEND_UPDATE_BRD) + encode_clock_setnrun(60, 60, 1), 0.0)
    assert board.poll(5.0) == b""
    assert board.press_lever(6.0) == b""


def test_button_presses_are_spontaneous_acks() -> None:
    board = nice_board()
    for number, button, mask in (
        (0, Button.BACK, 0x05),
        (1, Button.MINUS, 0x21),
        (2, Button.RUN, 0x11),
        (3, Button.PLUS, 0x09),
        (4, Button.OK, 0x41),
    ):
        ack = one(board.press_button(number, 1.0))
        assert isinstance(ack, ClockAck)
        assert ack.spontaneous
        assert ack.button is button
        assert ack.button_mask == mask
    board.receive(cmd(Command.SEND_UPDATE_BRD), 2.0)
    assert board.press_button(Button.OK, 3.0) == b""
    with pytest.raises(ValueError, match="button"):
        board.press_button(7, 3.0)


def test_no_clock_connected_flag() -> None:
    board = VirtualBoard(clock=None)
    times = one(board.receive(cmd(Command.SEND_CLK), 0))
    assert isinstance(times, ClockTimes)
    assert not times.clock_connected
    board.receive(cmd(Command.SEND_UPDATE_NICE), 0)
    assert board.receive(encode_clock_version(), 0) == b""  # nothing to answer
    assert board.press_lever(1) == b""
    ready, times = decode(board.attach_clock(VirtualClock(), 2.0))
    assert isinstance(ready, ClockAck)
    assert ready.ack1 == 0x81
    assert isinstance(times, ClockTimes)
    assert times.clock_connected
    gone = one(board.detach_clock(3.0))
    assert isinstance(gone, ClockTimes)
    assert not gone.clock_connected


def test_xl_clock_version_and_no_text() -> None:
    board = nice_board(clock=VirtualClock(model=ClockModel.XL))
    ack = one(board.receive(encode_clock_version(), 0))
    assert isinstance(ack, ClockAck)
    assert ack.version == (1, 2)
    text = one(board.receive(encode_clock_text("HI"), 0))
    assert isinstance(text, ClockAck)
    assert not text.ok


# --- bus mode ----------------------------------------------------------------------------


@pytest.fixture
def bus() -> BusLine:
    return make_bus(3)


def bus_replies(data: bytes) -> list:  # type: ignore[type-arg]
    parser = BusFrameParser()
    replies = parser.feed(data)
    assert parser.bad_checksums == 0
    return replies


def test_bus_addressed_commands_get_addressed_replies(bus: BusLine) -> None:
    replies = bus_replies(bus.receive(encode_bus_command(BusCommand.SEND_VERSION, 10002), 0))
    assert len(replies) == 1
    assert replies[0].address == 10002
    assert replies[0].version() == Version(3, 10)
    dump = bus_replies(bus.receive(encode_bus_command(BusCommand.SEND_BRD, 10003), 0))[0]
    assert dump.board_dump().pieces() == start_squares()
    clock = bus_replies(bus.receive(encode_bus_command(BusCommand.SEND_CLK, 10001), 0))[0]
    assert isinstance(clock.clock(), ClockTimes)
    assert all(b.bus_mode for b in bus.boards)


def test_bus_bad_checksum_is_ignored(bus: BusLine) -> None:
    good = encode_bus_command(BusCommand.PING, 10001)
    bad = good[:3] + bytes(((good[3] + 1) & 0x7F,))
    assert bus.receive(bad, 0) == b""
    # the line resyncs: the next good command is answered
    assert [r.address for r in bus_replies(bus.receive(good, 0))] == [10001]


def test_bus_broadcast_ping_replies_spread_over_1_1_s(bus: BusLine) -> None:
    assert bus.receive(encode_bus_command(BusCommand.PING, 0), 0.0) == b""
    arrivals: list[tuple[float, int]] = []
    while (deadline := bus.next_deadline()) is not None:
        arrivals += [(deadline, r.address) for r in bus_replies(bus.poll(deadline))]
    assert sorted(a for _, a in arrivals) == [10001, 10002, 10003]
    assert all(0.0 <= t <= 1.1 for t, _ in arrivals)


def test_bus_ignore_next_ping(bus: BusLine) -> None:
    reply = bus_replies(bus.receive(encode_bus_command(BusCommand.IGNORE_NEXT_BUS_PING, 10002), 0))
    assert [r.id for r in reply] == [BusMessageId.PING]
    bus.receive(encode_bus_command(BusCommand.PING, 0), 0.0)
    out = bus.poll(2.0)
    assert sorted(r.address for r in bus_replies(out)) == [10001, 10003]


def test_bus_changes_repeat_and_from_start(bus: BusLine) -> None:
    board = bus.board(10002)
    first = bus_replies(bus.receive(encode_bus_command(BusCommand.SEND_CHANGES, 10002), 0))[0]
    assert first.id == BusMessageId.UPDATE
    assert EETagRecord(EETag.POWERUP) in first.records()
    bus.receive(encode_bus_command(BusCommand.SET_START_GAME, 10002), 1.0)
    written = bus_replies(bus.poll(1.1))
    assert [r.id for r in written] == [BusMessageId.START_GAME_WRITTEN]
    board.lift(E2, 2.0)
    board.place(E4, Piece.WPAWN, 3.0)
    changes = bus_replies(bus.receive(encode_bus_command(BusCommand.SEND_CHANGES, 10002), 4))[0]
    moves = [r for r in changes.records() if isinstance(r, EEPieceChange)]
    assert moves[-2:] == [EEPieceChange(52, 0), EEPieceChange(36, Piece.WPAWN)]
    again = bus_replies(bus.receive(encode_bus_command(BusCommand.REPEAT_CHANGES, 10002), 5))[0]
    assert again.data == changes.data
    empty = bus_replies(bus.receive(encode_bus_command(BusCommand.SEND_CHANGES, 10002), 6))[0]
    assert empty.data == b""
    start = bus_replies(bus.receive(encode_bus_command(BusCommand.SEND_FROM_START, 10002), 7))[0]
    records = start.records()
    assert records[0] == EETagRecord(EETag.START_TAG)
    assert sum(isinstance(r, EEPieceChange) for r in records) >= 32


def test_bus_send_all_d(bus: BusLine) -> None:
    replies = bus_replies(bus.receive(encode_bus_command(BusCommand.SEND_ALL_D, 10001), 0))
    assert [r.id for r in replies] == [
        BusMessageId.UPDATE,
        BusMessageId.BWTIME,
        BusMessageId.BRD_DUMP,
    ]


def test_bus_end_busmode_broadcast_and_reset(bus: BusLine) -> None:
    bus.receive(encode_bus_command(BusCommand.RESET, 10001), 0.0)
    # a reset takes some seconds: the board hears nothing meanwhile
    assert bus_replies(bus.receive(encode_bus_command(BusCommand.PING, 10001), 1.0)) == []
    assert len(bus_replies(bus.receive(encode_bus_command(BusCommand.PING, 10001), 3.0))) == 1
    bus.receive(encode_bus_command(BusCommand.END_BUSMODE, 0), 4.0)
    assert not any(b.bus_mode for b in bus.boards)


def test_single_board_command_on_a_bus_line_switches_every_board(bus: BusLine) -> None:
    answer = bus.receive(cmd(Command.SEND_VERSION), 0)
    assert decode(answer) == [Version(3, 10)] * 3  # all answer at once: a collision on a real bus
    assert not any(b.bus_mode for b in bus.boards)


def test_bus_line_rejects_duplicate_addresses() -> None:
    with pytest.raises(ValueError, match="differ"):
        BusLine([VirtualBoard(), VirtualBoard()])
