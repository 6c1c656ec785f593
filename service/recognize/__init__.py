"""Move recognition: turns the driver's board events into chess actions.

:class:`Recognizer` is fed :mod:`dgt.events` one by one (and :meth:`Recognizer.tick` now and
then); it returns :mod:`service.recognize.events`.  :func:`recognize` runs a whole stream,
:func:`game_pgn` writes a recognised game as PGN.
"""

from __future__ import annotations

from service.recognize.events import (
    Amend,
    Lift,
    Mismatch,
    MoveEvent,
    NewGame,
    Place,
    RecognizerEvent,
    Result,
    Takeback,
)
from service.recognize.pgn import GameRecord, RecordedMove, game_pgn
from service.recognize.recognizer import (
    CENTRE,
    DEFAULT_SETTLE,
    InvalidPromotionError,
    NoPromotionError,
    Recognizer,
    RecognizerError,
    ReplacementError,
    recognize,
)

__all__ = [
    "CENTRE",
    "DEFAULT_SETTLE",
    "Amend",
    "GameRecord",
    "InvalidPromotionError",
    "Lift",
    "Mismatch",
    "MoveEvent",
    "NewGame",
    "NoPromotionError",
    "Place",
    "Recognizer",
    "RecognizerError",
    "RecognizerEvent",
    "RecordedMove",
    "ReplacementError",
    "Result",
    "Takeback",
    "game_pgn",
    "recognize",
]
