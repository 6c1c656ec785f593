"""The emulator console (parsing and running commands) and the PGN replay, in process."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import chess
import chess.pgn
import pytest

from dgt.emulator import Console, ConsoleError, LocalLine, VirtualBoard, make_bus, parse_command
from dgt.emulator.board import start_squares
from dgt.emulator.human import Handling
from dgt.emulator.replay import replay_games, time_control
from dgt.events import Side
from dgt.protocol import ClockAck, Command, FieldUpdate, FrameParser, Piece

FAST = replace(Handling.tidy(), think_time=(0.0, 0.01))


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def make_console(board: VirtualBoard | None = None, **kwargs: object) -> tuple[Console, LocalLine]:
    line = LocalLine(board or VirtualBoard(), clock=FakeTime(), seed=1)
    console = Console(line, rng=random.Random(1), handling=FAST, speed=1e6, **kwargs)  # type: ignore[arg-type]
    return console, line


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("lift e2", "lift"),
        ("  PLACE E4 P ", "place"),
        ("place e4 .", "place"),
        ("place e4", "place"),
        ("move e7e8q", "move"),
        ("lever", "lever"),
        ("button 4", "button"),
        ("button ok", "button"),
        ("unplug", "unplug"),
        ("plug", "plug"),
        ("garbage 10", "garbage"),
        ("show", "show"),
        ("help", "help"),
        ("board 2", "board"),
    ],
)
def test_parse_good_lines(text: str, name: str) -> None:
    command = parse_command(text)
    assert command is not None
    assert command.name == name


def test_parse_values() -> None:
    assert parse_command("place e4 .").piece is Piece.OCCUPIED  # type: ignore[union-attr]
    assert parse_command("place e4 n").piece is Piece.BKNIGHT  # type: ignore[union-attr]
    assert parse_command("lift h8").square == chess.H8  # type: ignore[union-attr]
    assert parse_command("move e7e8q").move == chess.Move.from_uci("e7e8q")  # type: ignore[union-attr]
    assert parse_command("button minus").number == 1  # type: ignore[union-attr]
    assert parse_command("") is None
    assert parse_command("   # a comment") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("fly e2", "unknown command"),
        ("lift", "usage: lift"),
        ("lift z9", "not a square"),
        ("place e4 Z", "not a piece"),
        ("move e2", "not a move"),
        ("move 0000", "not a move"),
        ("button 5", "0..4"),
        ("button x", "must be a number"),
        ("garbage -1", "1..65536"),
        ("lever now", "usage: lever"),
    ],
)
def test_parse_bad_lines(text: str, message: str) -> None:
    with pytest.raises(ConsoleError, match=message) as info:
        parse_command(text)
    assert "\n" not in str(info.value)


async def test_bad_input_is_one_error_line_never_a_traceback() -> None:
    console, _ = make_console()
    for text in ("fly", "lift e4", "place e4", "move e4e5", "board 3", "lift"):
        reply = await console.execute(text)
        assert reply.startswith("error: ")
        assert "\n" not in reply


async def test_lift_place_show_and_hand() -> None:
    board = VirtualBoard()
    console, line = make_console(board)
    board.receive(bytes((Command.SEND_UPDATE_BRD,)), 0.0)
    assert await console.execute("lift e2") == ""
    assert await console.execute("place e4") == ""  # the piece in hand
    assert board.squares[chess.E4] is Piece.WPAWN
    assert await console.execute("place d5 q") == ""
    shown = await console.execute("show")
    assert "4 . . . . P . . ." in shown
    assert "5 . . . q . . . ." in shown
    assert FrameParser().feed(bytes(line.output)) == [
        FieldUpdate(52, 0),
        FieldUpdate(36, Piece.WPAWN),
        FieldUpdate(27, Piece.BQUEEN),
    ]
    assert "move e2e4" in await console.execute("help")


async def test_lever_button_garbage_unplug_plug() -> None:
    board = VirtualBoard()
    console, line = make_console(board)
    board.receive(bytes((Command.SEND_UPDATE_NICE,)), 0.0)
    await console.execute("lever")
    assert board.clock is not None
    assert board.clock.running is Side.RIGHT
    line.output.clear()
    await console.execute("button ok")
    ack = FrameParser().feed(bytes(line.output))
    assert isinstance(ack[0], ClockAck)
    line.output.clear()
    await console.execute("garbage 7")
    assert len(line.output) == 7
    assert await console.execute("unplug") == "unplugged"
    line.output.clear()
    await console.execute("garbage 7")
    assert line.output == b""  # nothing reaches a host through a pulled cable
    assert (await console.execute("plug")).startswith("plugged in")
    assert board.bus_mode  # switched on again


async def test_move_with_castling_en_passant_and_promotion() -> None:
    board = VirtualBoard(
        squares={
            chess.E1: Piece.WKING,
            chess.H1: Piece.WROOK,
            chess.E8: Piece.BKING,
            chess.B7: Piece.WPAWN,
            chess.E5: Piece.WPAWN,
            chess.D7: Piece.BPAWN,
        }
    )
    console, _ = make_console(board)
    assert await console.execute("move e1g1") == ""  # castling: the rook comes along
    assert board.squares[chess.G1] is Piece.WKING
    assert board.squares[chess.F1] is Piece.WROOK
    assert board.squares[chess.H1] is Piece.EMPTY
    assert await console.execute("move d7d5") == ""
    assert await console.execute("move e5d6") == ""  # en passant: the d5 pawn goes
    assert board.squares[chess.D6] is Piece.WPAWN
    assert board.squares[chess.D5] is Piece.EMPTY
    assert await console.execute("move e8e7") == ""
    assert await console.execute("move b7b8n") == ""  # under-promotion
    assert board.squares[chess.B8] is Piece.WKNIGHT
    assert board.squares[chess.B7] is Piece.EMPTY


async def test_move_from_an_empty_square_is_an_error() -> None:
    console, _ = make_console()
    assert (await console.execute("move e4e5")).startswith("error: no piece on e4")


async def test_console_on_a_bus_line_selects_boards() -> None:
    line = LocalLine(make_bus(2), clock=FakeTime())
    console = Console(line, handling=FAST, speed=1e6)
    assert "bus address 10002" in await console.execute("board 2")
    await console.execute("lift a2")
    assert line.device.boards[1].squares[chess.A2] is Piece.EMPTY  # type: ignore[union-attr]
    assert line.device.boards[0].squares[chess.A2] is Piece.WPAWN  # type: ignore[union-attr]


PGN = """[White "A"]
[Black "B"]
[TimeControl "60+1"]

1. e4 d5 2. exd5 Qxd5 3. Nf3 Bg4 4. Be2 Nc6 5. O-O O-O-O *

[White "C"]
[Black "D"]

1. d4 *
"""


async def test_replay_plays_the_games_and_presses_the_lever(tmp_path: Path) -> None:
    path = tmp_path / "games.pgn"
    path.write_text(PGN)
    board = VirtualBoard()
    clock = FakeTime()
    line = LocalLine(board, clock=clock)
    board.receive(bytes((Command.SEND_UPDATE_BRD,)), 0.0)
    played = await replay_games(
        line, path, speed=1e6, rng=random.Random(2), handling=FAST, pause=0.0
    )
    assert played == 2
    after_d4 = chess.Board()
    after_d4.push_san("d4")
    assert board.squares == start_squares(after_d4)  # set up again, then 1. d4
    assert board.clock is not None
    assert board.clock.right_high  # White pressed once in the last game
    updates = FrameParser().feed(bytes(line.output))
    assert updates
    assert all(isinstance(u, FieldUpdate) for u in updates)


async def test_replay_first_game_ends_in_its_final_position(tmp_path: Path) -> None:
    path = tmp_path / "one.pgn"
    path.write_text(PGN.split("\n\n[White")[0] + "\n")
    board = VirtualBoard()
    line = LocalLine(board, clock=FakeTime())
    await replay_games(line, path, speed=1e6, rng=random.Random(3), handling=FAST, pause=0)
    with path.open() as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None
    assert board.squares == start_squares(game.end().board())
    assert board.clock is not None
    assert board.clock.increment == 1.0
    assert time_control(game) == (60.0, 1.0)
