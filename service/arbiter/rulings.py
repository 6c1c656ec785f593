"""What the arbiter reports: irregularities, claims and rulings.

Every item is a frozen dataclass with ``time`` (the time of the input that caused it), a
``type`` and :meth:`to_json`.  ``article`` cites the rule applied: ``"FIDE 7.5.1"``,
``"US speed 11"``, ``"T20 time-out"``.  Sides are colours (True = White).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from service.variants.base import Color


def side_name(side: Color | None) -> str | None:
    if side is None:
        return None
    return "white" if side else "black"


@dataclass(frozen=True, slots=True)
class Irregularity:
    """Something happened against the rules (or needing attention): ``kind`` is one of
    ``touch-move``, ``castling-after-rook``, ``released-piece``, ``illegal-move``,
    ``illegal-move-corrected``, ``pawn-not-promoted``, ``press-without-move``,
    ``wrong-press``, ``displaced-pieces``, ``takeback``, ``flag``."""

    type: ClassVar[str] = "irregularity"
    time: float
    kind: str
    side: Color | None
    article: str
    message: str
    squares: tuple[str, ...] = ()
    detail: Mapping[str, Any] = field(default_factory=dict)

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
    """A claim a player may make (``status`` ``"offered"``: the arbiter waits for the
    claimant's decision), has made (``"made"``: waiting for the arbiter's ruling), or that was
    decided (``"accepted"``, ``"rejected"``) or ran out (``"lapsed"``).  ``kind`` one of
    ``touch-move``, ``castling-after-rook``, ``illegal-move``, ``flag``, ``threefold``,
    ``fifty-moves``, ``michigan``, ``insufficient-losing-chances``."""

    type: ClassVar[str] = "claim"
    time: float
    id: str
    kind: str
    claimant: Color | None
    against: Color | None
    article: str
    status: str
    message: str
    detail: Mapping[str, Any] = field(default_factory=dict)

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

    type: ClassVar[str] = "ruling"
    time: float
    kind: str
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
