"""What the arbiter reports: irregularities, claims and rulings.

Every item is a frozen dataclass with ``time`` (the time of the input that caused it), a
``type`` and :meth:`to_json`.  ``article`` cites the rule applied: ``"FIDE 7.5.1"``,
``"US speed 11"``, ``"T20 time-out"``.  Sides are colours (True = White).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from service.variants.base import Color


class IrregularityKind(StrEnum):
    """What went against the rules (the value is the ``kind`` of the JSON, the stored row
    and the web text)."""

    TOUCH_MOVE = "touch-move"
    CASTLING_AFTER_ROOK = "castling-after-rook"
    RELEASED_PIECE = "released-piece"
    ILLEGAL_MOVE = "illegal-move"
    PAWN_NOT_PROMOTED = "pawn-not-promoted"
    PRESS_WITHOUT_MOVE = "press-without-move"
    PART_INCOMPLETE = "part-incomplete"
    DISPLACED_PIECES = "displaced-pieces"
    TAKEBACK = "takeback"
    FLAG = "flag"


class ClaimKind(StrEnum):
    """What a claim is about: an irregularity of the opponent's (offered to the player) or
    a draw or flag a player claims."""

    TOUCH_MOVE = "touch-move"
    CASTLING_AFTER_ROOK = "castling-after-rook"
    RELEASED_PIECE = "released-piece"
    ILLEGAL_MOVE = "illegal-move"
    FLAG = "flag"
    THREEFOLD = "threefold"
    FIFTY_MOVES = "fifty-moves"
    MICHIGAN = "michigan"
    INSUFFICIENT_LOSING_CHANCES = "insufficient-losing-chances"


class ClaimStatus(StrEnum):
    """Where a claim stands: ``offered`` (the claimant decides), ``made`` (the arbiter
    rules), or closed as ``accepted``, ``rejected``, ``lapsed`` or ``closed`` (the game
    ended first)."""

    OFFERED = "offered"
    MADE = "made"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    LAPSED = "lapsed"
    CLOSED = "closed"


class RulingKind(StrEnum):
    """What a ruling does to the game (see :class:`Ruling`)."""

    RESULT = "result"
    PENALTY_TIME = "penalty-time"
    RESTORE = "restore"
    MUST_MOVE = "must-move"
    STAND = "stand"
    PROMOTE = "promote"
    CLOCK = "clock"
    REJECT = "reject"
    NOTE = "note"


def side_name(side: Color | None) -> str | None:
    if side is None:
        return None
    return "white" if side else "black"


@dataclass(frozen=True, slots=True)
class Irregularity:
    """Something happened against the rules (or needing attention): ``kind`` says what
    (:class:`IrregularityKind`)."""

    time: float
    kind: IrregularityKind
    side: Color | None
    article: str
    message: str
    squares: tuple[str, ...] = ()
    detail: Mapping[str, Any] = field(default_factory=dict)

    @property
    def type(self) -> str:  # not a ClassVar: mypyc makes it a field (mypyc#1122)
        return "irregularity"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "time": self.time,
            "kind": self.kind,
            "side": side_name(self.side),
            "article": self.article,
            "message": self.message,
            "squares": list(self.squares),
            **dict(self.detail),
        }


@dataclass(frozen=True, slots=True)
class Claim:
    """A claim a player may make (``status`` ``offered``: the arbiter waits for the
    claimant's decision), has made (``made``: waiting for the arbiter's ruling), or that was
    decided (``accepted``, ``rejected``) or ran out (``lapsed``, ``closed``): see
    :class:`ClaimStatus`; ``kind``: :class:`ClaimKind`."""

    time: float
    id: str
    kind: ClaimKind
    claimant: Color | None
    against: Color | None
    article: str
    status: ClaimStatus
    message: str
    detail: Mapping[str, Any] = field(default_factory=dict)

    @property
    def type(self) -> str:  # not a ClassVar: mypyc makes it a field (mypyc#1122)
        return "claim"

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "time": self.time,
            "id": self.id,
            "kind": self.kind,
            "claimant": side_name(self.claimant),
            "against": side_name(self.against),
            "article": self.article,
            "status": self.status,
            "message": self.message,
            **dict(self.detail),
        }


@dataclass(frozen=True, slots=True)
class Ruling:
    """A decision and what it does to the game.

    ``kind``: ``result`` (the game ends: ``result``, ``reason``), ``penalty-time`` (seconds
    added to ``add_time`` colours' clocks), ``restore`` (the position before the irregularity
    must be set up again: ``restore_ply``), ``must-move`` (the touched piece on ``square``
    must be moved / captured), ``stand`` (an illegal move stands: ``uci``, ``fen``),
    ``promote`` (the pawn on ``square`` is replaced by a queen: ``uci``), ``clock`` (the clock is
    set back to the side that must act), ``reject`` (a claim was not upheld), ``note``."""

    time: float
    kind: RulingKind
    article: str
    message: str
    side: Color | None = None
    result: str | None = None
    reason: str | None = None
    claim: str | None = None
    add_time: Mapping[Color, float] = field(default_factory=dict)
    restore_ply: int | None = None
    square: str | None = None
    run: Color | None = None
    uci: str | None = None
    fen: str | None = None

    @property
    def type(self) -> str:  # not a ClassVar: mypyc makes it a field (mypyc#1122)
        return "ruling"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "type": self.type,
            "time": self.time,
            "kind": self.kind,
            "article": self.article,
            "message": self.message,
            "side": side_name(self.side),
        }
        if self.result is not None:
            data["result"] = self.result
            data["reason"] = self.reason
        if self.claim is not None:
            data["claim"] = self.claim
        if self.add_time:
            data["add_time"] = {side_name(c): s for c, s in self.add_time.items()}
        if self.restore_ply is not None:
            data["restore_ply"] = self.restore_ply
        if self.square is not None:
            data["square"] = self.square
        if self.run is not None:
            data["run"] = side_name(self.run)
        if self.uci is not None:
            data["uci"] = self.uci
        if self.fen is not None:
            data["fen"] = self.fen
        return data


ArbiterEvent = Irregularity | Claim | Ruling
