"""``games.with_identities``: the proof ``bench/recognition.py`` gives that a presence-only
game read wrong could not have been read right.  It gives the pieces of a game to the
readings of a presence-only board (the same squares emptied and occupied at the same times);
when a piece-identity board's reading of the result is that game, the readings are a
handling of it.  A handling two games share is one no recogniser can tell apart."""

from __future__ import annotations

import chess
from games import Game, Stream, read_times, recognise, with_identities

from dgt.events import BoardEvent, BoardSnapshot, LeverMoved, Side, SquareChanged
from dgt.protocol.constants import Piece

TWO_CAPTURES = "4k3/8/8/3p1n2/4P3/8/8/4K3 w - - 0 1"
"""White pawn e4 can take the pawn on d5 or the knight on f5."""


def presence_stream(fen: str, steps: list[tuple[float, str, bool]], moves: list[str]) -> Stream:
    """A presence-only stream from ``fen``: (time, square, occupied after) steps."""
    board = chess.Board(fen)
    occupied = tuple(
        Piece.OCCUPIED if board.piece_at(square) else Piece.EMPTY for square in chess.SQUARES
    )
    events: list[BoardEvent] = [BoardSnapshot(0.0, occupied, "connect")]
    for time, name, full in steps:
        if name == "press":
            events.append(LeverMoved(time, Side.RIGHT))
            continue
        piece, before = (Piece.OCCUPIED, Piece.EMPTY) if full else (Piece.EMPTY, Piece.OCCUPIED)
        events.append(SquareChanged(time, chess.parse_square(name), piece, before))
    game = Game("test", fen, tuple(chess.Move.from_uci(uci) for uci in moves))
    return Stream(game, events)


KNOCKED = [
    (1.0, "e4", False),  # the pawn lifted
    (1.2, "f5", False),  # f5 and d5 both emptied while the pawn is in the hand
    (1.5, "d5", False),
    (1.8, "f5", True),  # f5 filled first: the knight set back, or the pawn landing
    (2.1, "d5", True),
    (2.5, "press", True),
]


def identity_reading(item: Stream, ucis: list[str]) -> list[str] | None:
    presence = recognise(item)
    labelled = with_identities(item, ucis, read_times(presence.events))
    if labelled is None:
        return None
    assert all(
        e.piece is not Piece.OCCUPIED for e in labelled.events if isinstance(e, SquareChanged)
    )
    return recognise(labelled).ucis


def test_both_captures_are_handlings_of_the_same_readings() -> None:
    """exf5 with d5 knocked over, or exd5 with f5 knocked over: given either game's pieces,
    the readings are read as that game by a piece-identity board."""
    item = presence_stream(TWO_CAPTURES, KNOCKED, ["e4d5"])
    assert recognise(item).ucis == ["e4f5"]  # the likelier reading: f5 set down first
    assert identity_reading(item, ["e4f5"]) == ["e4f5"]
    assert identity_reading(item, ["e4d5"]) == ["e4d5"]


def test_readings_no_handling_of_a_game_gives_are_not_given_its_pieces() -> None:
    """The pawn on e4 never leaves: no handling of exd5 gives these readings."""
    item = presence_stream(
        TWO_CAPTURES,
        [(1.0, "d5", False), (1.4, "d5", True), (2.0, "press", True)],
        ["e4d5"],
    )
    assert identity_reading(item, ["e4d5"]) != ["e4d5"]


def test_a_place_reported_before_its_lift_takes_the_piece_lifted_next() -> None:
    """Nf3 where f3 reads occupied 0.03 s before g1 reads empty (one scan)."""
    start = chess.STARTING_FEN
    item = presence_stream(start, [(1.0, "f3", True), (1.03, "g1", False)], ["g1f3"])
    labelled = with_identities(item, ["g1f3"], [1.03])
    assert labelled is not None
    changes = [(e.square, e.piece) for e in labelled.events if isinstance(e, SquareChanged)]
    assert changes == [(chess.F3, Piece.WKNIGHT), (chess.G1, Piece.EMPTY)]
