"""The eboards API's pure core: board events in, the feed (board, SAN since the last setup,
clock) and the answers to the calls out (service.play.eboard, service.play.api)."""

from __future__ import annotations

import json
from typing import Any

import chess
import pytest

from dgt.events import BoardSnapshot, ClockUpdate, LeverMoved, Side, SquareChanged
from dgt.protocol.constants import Piece
from service.play.api import Api, Session
from service.play.eboard import Eboard, SetupError, parse_setup_fen

START = chess.STARTING_FEN


def snapshot(board: chess.Board, t: float, *, presence: bool = False, rotated: bool = False):
    cells = [Piece.EMPTY] * 64
    for square, piece in board.piece_map().items():
        raw = 63 - square if rotated else square
        cells[raw] = Piece.OCCUPIED if presence else Piece.from_symbol(piece.symbol())
    return BoardSnapshot(t, tuple(cells), "connect")


class Hand:
    """Plays moves on an :class:`Eboard` as board events, one square change every 0.2 s,
    ticking the board every 0.1 s; keeps every SAN list the feed showed."""

    def __init__(self, board: Eboard, position: chess.Board, *, presence: bool = False,
                 rotated: bool = False, t: float = 0.0) -> None:  # fmt: skip
        self.eboard = board
        self.position = position.copy()
        self.presence = presence
        self.rotated = rotated
        self.t = t
        self.seen: list[list[str]] = []
        self.send(snapshot(position, t, presence=presence, rotated=rotated))

    def send(self, event: object) -> None:
        self.eboard.feed(event)  # type: ignore[arg-type]
        self._look()

    def _look(self) -> None:
        san = self.eboard.san()
        if not self.seen or self.seen[-1] != san:
            self.seen.append(san)

    def wait(self, seconds: float) -> None:
        end = self.t + seconds
        while self.t < end - 1e-9:
            self.t = round(self.t + 0.1, 6)
            self.eboard.tick(self.t)
            self._look()

    def change(self, square: int, symbol: str | None) -> None:
        self.wait(0.2)
        piece = Piece.EMPTY if symbol is None else (
            Piece.OCCUPIED if self.presence else Piece.from_symbol(symbol)
        )  # fmt: skip
        raw = 63 - square if self.rotated else square
        self.send(SquareChanged(self.t, raw, piece, Piece.EMPTY))

    def move(self, uci: str, *, rook_first: bool = False) -> None:
        board = self.position
        move = board.parse_uci(uci)
        before = dict(board.piece_map())
        board.push(move)
        after = board.piece_map()
        lifts = [s for s in before if s not in after or after[s] != before[s]]
        places = [s for s in after if before.get(s) != after[s]]
        if rook_first:
            lifts.sort(key=lambda s: before[s].piece_type != chess.ROOK)
            places.sort(key=lambda s: after[s].piece_type != chess.ROOK)
            for lift, place in zip(lifts, places, strict=True):
                self.change(lift, None)
                self.change(place, after[place].symbol())
            return
        # captured piece (a square occupied before and after) off first, then the mover
        lifts.sort(key=lambda s: s not in after)
        for square in lifts:
            self.change(square, None)
        for square in places:
            self.change(square, after[square].symbol())


def test_a_move_is_listed_only_once_complete() -> None:
    board = Eboard("12345")
    hand = Hand(board, chess.Board())
    hand.move("e2e4")
    assert board.san() == []  # provisional: the settle delay has not passed
    hand.wait(2.5)
    assert board.san() == ["e4"]
    hand.move("e7e5")
    hand.move("g1f3")  # completes e5 at once
    assert board.san() == ["e4", "e5"]
    hand.wait(2.5)
    assert board.san() == ["e4", "e5", "Nf3"]
    assert board.feed_param()["board"] == hand.position.board_fen()


def test_captures_castling_both_ways_and_a_promotion_each_listed_once() -> None:
    board = Eboard("12345")
    game = chess.Board()
    hand = Hand(board, game)
    moves = ["e2e4", "d7d5", "e4d5", "d8d5", "b1c3", "d5a5", "g1f3", "c8g4", "f1e2",
             "b8c6", "e1g1", "e8c8", "d2d4", "g4f3", "e2f3", "c6d4"]  # fmt: skip
    for index, uci in enumerate(moves):
        hand.move(uci, rook_first=index == 11)  # the queen-side castling rook first
        hand.wait(2.5)
    sans = board.san()
    assert sans == ["e4", "d5", "exd5", "Qxd5", "Nc3", "Qa5", "Nf3", "Bg4", "Be2", "Nc6",
                    "O-O", "O-O-O", "d4", "Bxf3", "Bxf3", "Nxd4"]  # fmt: skip
    # the list only ever grew, one move at a time: no rook move before the castling
    for shorter, longer in zip(hand.seen, hand.seen[1:], strict=False):
        assert longer == [*shorter, longer[-1]]
    promo = chess.Board("8/4P1k1/8/8/8/8/6K1/8 w - - 0 1")
    board = Eboard("1")
    hand = Hand(board, promo)
    board.setup(promo.fen(), hand.t)
    hand.move("e7e8q")
    hand.wait(2.5)
    assert board.san() == ["e8=Q"]


def test_a_takeback_shortens_the_list() -> None:
    board = Eboard("12345")
    hand = Hand(board, chess.Board())
    hand.move("e2e4")
    hand.wait(2.5)
    hand.move("e7e5")
    hand.wait(2.5)
    assert board.san() == ["e4", "e5"]
    hand.change(chess.E5, None)
    hand.change(chess.E7, "p")
    hand.wait(2.5)
    assert board.san() == ["e4"]


def test_setup_from_a_game_in_progress_restarts_the_reading() -> None:
    position = chess.Board()
    for uci in ("e2e4", "c7c5", "g1f3"):
        position.push_uci(uci)
    board = Eboard("12345")
    hand = Hand(board, position)  # no start position on the board: nothing read
    assert board.recognizer.game is None
    board.setup(position.fen(), hand.t)
    assert board.san() == []
    assert board.led_squares() == frozenset()
    hand.move("d7d6")
    hand.move("d2d4")
    hand.wait(2.5)
    assert board.san() == ["d6", "d4"]


def test_setup_of_a_chess960_position_and_its_castling() -> None:
    fen = "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w GEge - 0 1"
    assert parse_setup_fen(fen).variant == "chess960"
    position = chess.Board(fen, chess960=True)
    board = Eboard("12345")
    hand = Hand(board, position)
    board.setup(fen, hand.t)
    for uci in ("e2e3", "e7e6"):
        hand.move(uci)
        hand.wait(2.5)
    # White castles king-side: the king f1 -> g1, the rook g1 -> f1 (a swap)
    hand.change(chess.F1, None)
    hand.change(chess.G1, None)
    hand.change(chess.F1, "R")
    hand.change(chess.G1, "K")
    hand.wait(2.5)
    assert board.san()[-1] == "O-O"


def test_a_board_turned_round_reads_flipped_and_shows_white_at_the_bottom() -> None:
    board = Eboard("12345")
    hand = Hand(board, chess.Board(), rotated=True)
    assert board.flipped
    hand.move("e2e4")
    hand.wait(2.5)
    param = board.feed_param()
    assert param["san"] == ["e4"]
    assert param["flipped"] is True
    assert param["board"] == hand.position.board_fen()


def test_a_presence_only_board_gives_the_game_position() -> None:
    board = Eboard("P0001")
    hand = Hand(board, chess.Board(), presence=True)
    for uci in ("e2e4", "d7d5", "e4d5"):
        hand.move(uci)
        hand.wait(2.5)
    assert board.presence_only
    assert board.san() == ["e4", "d5", "exd5"]
    assert board.feed_param()["board"] == hand.position.board_fen()


def test_the_clock_by_colour_learned_from_the_first_press() -> None:
    board = Eboard("12345")
    hand = Hand(board, chess.Board())
    hand.send(ClockUpdate(hand.t, 300.0, 290.0, True, Side.LEFT))
    assert board.feed_param()["clock"] == {"white": 300, "black": 290, "run": True}
    hand.move("e2e4")
    # White pressed on the right: the right side is White's
    hand.send(LeverMoved(hand.t + 0.3, Side.LEFT))
    assert board.san() == ["e4"]  # the press completes the move
    hand.send(ClockUpdate(hand.t + 0.4, 280.0, 295.0, True, Side.LEFT))
    assert board.feed_param()["clock"] == {"white": 295, "black": 280, "run": True}


def test_leds_show_where_the_board_differs_from_the_setup_until_it_matches() -> None:
    position = chess.Board()
    position.push_uci("e2e4")
    board = Eboard("12345")
    hand = Hand(board, chess.Board(), rotated=True)
    board.setup(position.fen(), hand.t)
    # board frame of a board turned round: e2 is 63 - 12, e4 is 63 - 28
    assert board.led_squares() == {63 - chess.E2, 63 - chess.E4}
    hand.change(chess.E2, None)
    hand.change(chess.E4, "P")
    assert board.led_squares() == frozenset()


@pytest.mark.parametrize(
    "fen", ["", "not a fen", "8/8/8/8/8/8/8/8 w - - 0 1", "kk6/8/8/8/8/8/8/KK6 w - - 0 1"]
)
def test_setup_refuses_what_is_no_position(fen: str) -> None:
    with pytest.raises(SetupError):
        Eboard("1").setup(fen, 0.0)


def test_the_calls_as_a_site_makes_them() -> None:
    board = Eboard("12345", "/dev/ttyACM0")
    hand = Hand(board, chess.Board())
    api = Api({"12345": board})
    session = Session()

    def call(message: object) -> list[Any]:
        return api.handle(session, json.dumps(message), hand.t)

    subscribe = {"feed": "eboardevent", "id": 1, "param": {"serialnr": "12345"}}
    (boards,) = call({"id": 1, "call": "eboards"})
    assert (boards["response"], boards["id"]) == ("call", 1)
    (entry,) = boards["param"]
    assert (entry["serialnr"], entry["state"]) == ("12345", "ACTIVE")
    answer, feed = call({"id": 2, "call": "subscribe", "param": subscribe})
    assert answer == {"response": "call", "id": 2, "param": None}
    assert (feed["response"], feed["id"]) == ("feed", 1)
    assert feed["param"]["san"] == []
    assert feed["param"]["board"] == chess.STARTING_BOARD_FEN
    hand.move("e2e4")
    hand.wait(2.5)
    (update,) = session.updates(api.boards)
    assert update["param"]["san"] == ["e4"]
    assert session.updates(api.boards) == []  # nothing changed: nothing sent
    position = chess.Board()
    position.push_uci("e2e4")
    setup = {"id": 1, "method": "setup", "param": {"fen": position.fen()}}
    answer, feed = call({"id": 3, "call": "call", "param": setup})
    assert answer == {"response": "call", "id": 3, "param": None}
    assert feed["param"]["san"] == []

    def refused(message: dict[str, Any], words: str) -> None:
        (bad,) = call(message)
        assert (bad["response"], bad["id"]) == ("error", message["id"])
        assert words in bad["param"]["message"]

    refused({"id": 5, "call": "sources"}, "unknown call 'sources'")
    refused({"id": 6, "call": "call", "param": {**setup, "method": "fly"}}, "unknown method")
    refused({"id": 7, "call": "call", "param": {**setup, "param": {"fen": "xx"}}}, "FEN")
    refused({"id": 8, "call": "call", "param": {**setup, "param": {}}}, "param.fen")
    other = {**subscribe, "id": 2, "param": {"serialnr": "999"}}
    refused({"id": 9, "call": "subscribe", "param": other}, "no board '999'")
    refused({"id": 10, "call": "subscribe", "param": {**subscribe, "feed": "x"}}, "feed")
    refused({"id": 11, "call": "unsubscribe", "param": {"id": 7}}, "no feed 7")
    assert api.handle(session, "{", 0.0)[0]["response"] == "error"
    assert api.handle(session, "[1]", 0.0)[0]["response"] == "error"
    (ok,) = call({"id": 12, "call": "unsubscribe", "param": {"id": 1}})
    assert ok["response"] == "call"
    assert session.feeds == {}


def test_after_setup_a_start_position_on_the_board_waits_for_the_setup() -> None:
    """The site sets up the position after the opponent's 1. e4 while the board still shows
    the start: the reading stays on the setup; the opponent's move made on the board is no
    move of the list (the board now shows the setup), the player's reply is."""
    position = chess.Board()
    position.push_uci("e2e4")
    board = Eboard("12345")
    hand = Hand(board, chess.Board())
    board.setup(position.fen(), hand.t)
    assert board.san() == []
    assert board.led_squares() == {chess.E2, chess.E4}
    hand.position = chess.Board()
    hand.move("e2e4")
    hand.wait(2.5)
    assert board.san() == []
    assert board.led_squares() == frozenset()
    hand.move("c7c5")
    hand.wait(2.5)
    assert board.san() == ["c5"]


def test_a_slow_castling_rook_first_is_sent_as_castling_never_as_the_rook_move() -> None:
    """The rook set on f1 and the king following more than the settle delay later: the
    rook move, complete by the delay, is held back (it may be half a castling) and the
    castling goes out; a rook move to f1 that no king follows goes out after the hold."""
    position = chess.Board("r3k2r/pppq1ppp/2npbn2/4p3/4P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 0 1")
    board = Eboard("12345", settle=1.0)
    hand = Hand(board, position)
    board.setup(position.fen(), hand.t)
    hand.change(chess.H1, None)
    hand.change(chess.F1, "R")
    hand.wait(1.3)  # complete by the settle delay, not yet listed
    assert board.san() == []
    hand.change(chess.E1, None)
    hand.change(chess.G1, "K")
    hand.wait(3.0)
    assert hand.seen == [[], ["O-O"]]
    hand.position.push_uci("e1g1")
    hand.move("a8d8")  # half of ...O-O-O, or a rook move: held, then listed
    hand.wait(1.2)
    assert board.san() == ["O-O"]
    hand.wait(1.5)
    assert board.san() == ["O-O", "Rd8"]
    hand.move("a1d1")  # White castled: no castling to wait for, listed after the settle delay
    hand.wait(1.2)
    assert board.san() == ["O-O", "Rd8", "Rad1"]
