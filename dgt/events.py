"""Typed events a :class:`dgt.Board` emits.

Every event carries ``time``: seconds on the monotonic clock of the process that received
the bytes (``time.monotonic()``), so events can be ordered and intervals measured; it is
never wall-clock time.  Squares are python-chess numbers (0 = a1 ... 63 = h8) *in the
board's own frame*: as if the connector were on White's left.  A board turned round is
detected from the start position one layer up (``service.recognize``), which maps
``square -> 63 - square``.

These events are the whole contract between the driver and everything above it: the
recogniser, the arbiter and the recorder consume nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from dgt.protocol.constants import Piece
from dgt.protocol.slots import slot_setters


class Side(Enum):
    """A side of the clock as seen from its front.  The driver never guesses which side is
    White: that is learned one layer up from the first press."""

    LEFT = "left"
    RIGHT = "right"

    # Members are singletons, equal only to themselves: hashed by identity too (Enum's own
    # hash runs Python code, and sides key dictionaries on every clock report).
    __hash__ = object.__hash__


class BoardFamily(Enum):
    PIECE_IDENTITY = "piece-identity"  # classic e-Boards, Revelation II: each square's piece
    PRESENCE_ONLY = "presence-only"  # Pegasus: each square only "occupied" or not


@dataclass(frozen=True, slots=True)
class SquareChanged:
    """One square's content changed (a lift shows ``Piece.EMPTY``)."""

    time: float
    square: int
    piece: Piece
    previous: Piece

    def __init__(self, time: float, square: int, piece: Piece, previous: Piece) -> None:
        _SC_TIME(self, time)  # the slots set straight (dgt.protocol.slots)
        _SC_SQUARE(self, square)
        _SC_PIECE(self, piece)
        _SC_PREVIOUS(self, previous)


_SC_TIME, _SC_SQUARE, _SC_PIECE, _SC_PREVIOUS = slot_setters(SquareChanged)


class _SquareChangedDraft:
    """A :class:`SquareChanged` being built: the same slots, not frozen (see
    :func:`square_changed`)."""

    __slots__ = ("time", "square", "piece", "previous")  # SquareChanged's, in its order  # noqa: RUF023
    time: float
    square: int
    piece: Piece
    previous: Piece


def square_changed(time: float, square: int, piece: Piece, previous: Piece) -> SquareChanged:
    """``SquareChanged(time, square, piece, previous)``, built at a third of the cost: the
    fields set on a draft of the same layout (plain attribute stores, which a frozen class
    refuses), the draft then made the event.  For the driver's
    every square change."""
    draft = _SquareChangedDraft()
    draft.time = time
    draft.square = square
    draft.piece = piece
    draft.previous = previous
    draft.__class__ = SquareChanged  # type: ignore[assignment]
    return draft  # type: ignore[return-value]  # a SquareChanged now (cast() is a call)


@dataclass(frozen=True, slots=True)
class BoardSnapshot:
    """The whole board as dumped by the board: after the handshake, after a reconnect and
    after a re-sync.  ``squares[s]`` is the content of square ``s`` (0 = a1)."""

    time: float
    squares: tuple[Piece, ...]
    reason: str  # "connect", "resync", "reconnect"


@dataclass(frozen=True, slots=True)
class ClockUpdate:
    """Times and state reported by the clock (about once a second while it runs)."""

    time: float
    left: float  # seconds left on the left display
    right: float
    running: bool
    lever_high: Side  # which side of the lever is up
    left_flag: bool = False
    right_flag: bool = False
    battery_low: bool = False
    turn: Side | None = None  # side whose time runs, from the status bits; may be None

    def __init__(
        self,
        time: float,
        left: float,
        right: float,
        running: bool,
        lever_high: Side,
        left_flag: bool = False,
        right_flag: bool = False,
        battery_low: bool = False,
        turn: Side | None = None,
    ) -> None:
        _CU_TIME(self, time)  # the slots set straight (dgt.protocol.slots)
        _CU_LEFT(self, left)
        _CU_RIGHT(self, right)
        _CU_RUNNING(self, running)
        _CU_LEVER_HIGH(self, lever_high)
        _CU_LEFT_FLAG(self, left_flag)
        _CU_RIGHT_FLAG(self, right_flag)
        _CU_BATTERY_LOW(self, battery_low)
        _CU_TURN(self, turn)


(
    _CU_TIME, _CU_LEFT, _CU_RIGHT, _CU_RUNNING, _CU_LEVER_HIGH, _CU_LEFT_FLAG, _CU_RIGHT_FLAG,
    _CU_BATTERY_LOW, _CU_TURN,
) = slot_setters(ClockUpdate)  # fmt: skip


@dataclass(frozen=True, slots=True)
class LeverMoved:
    """The clock lever changed position: someone pressed the clock.  ``high`` is the side
    now up, whose time now runs; the player on the other side just pressed."""

    time: float
    high: Side

    def __init__(self, time: float, high: Side) -> None:
        _LM_TIME(self, time)  # the slots set straight (dgt.protocol.slots)
        _LM_HIGH(self, high)


_LM_TIME, _LM_HIGH = slot_setters(LeverMoved)


class _ClockUpdateDraft:
    """A :class:`ClockUpdate` being built: the same slots, not frozen (see
    :func:`clock_update`)."""

    __slots__ = (  # noqa: RUF023  # ClockUpdate's, in its order
        "time", "left", "right", "running", "lever_high", "left_flag", "right_flag",
        "battery_low", "turn",
    )  # fmt: skip
    time: float
    left: float
    right: float
    running: bool
    lever_high: Side
    left_flag: bool
    right_flag: bool
    battery_low: bool
    turn: Side | None


def clock_update(
    time: float,
    left: float,
    right: float,
    running: bool,
    lever_high: Side,
    left_flag: bool,
    right_flag: bool,
    battery_low: bool,
    turn: Side | None,
) -> ClockUpdate:
    """``ClockUpdate(...)`` with every field given, built at a third of the cost (as
    :func:`square_changed`): for the clock report every board sends once a second."""
    draft = _ClockUpdateDraft()
    draft.time = time
    draft.left = left
    draft.right = right
    draft.running = running
    draft.lever_high = lever_high
    draft.left_flag = left_flag
    draft.right_flag = right_flag
    draft.battery_low = battery_low
    draft.turn = turn
    draft.__class__ = ClockUpdate  # type: ignore[assignment]
    return draft  # type: ignore[return-value]  # a ClockUpdate now (cast() is a call)


@dataclass(frozen=True, slots=True)
class ButtonPressed:
    """A button on the DGT 3000 was pressed (``button`` one of back, plus, run, minus,
    ok); ``mask`` keeps the raw bit mask for combined presses."""

    time: float
    button: str
    mask: int = 0


@dataclass(frozen=True, slots=True)
class ClockConnection:
    """A clock appeared on or disappeared from the board (or stopped answering)."""

    time: float
    connected: bool
    version: tuple[int, int] | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class BoardMemory:
    """Records the board had stored in its memory (EE moves), drained at connect."""

    time: float
    records: tuple[object, ...]


@dataclass(frozen=True, slots=True)
class LinkLost:
    time: float
    reason: str


@dataclass(frozen=True, slots=True)
class LinkRestored:
    """The link is back and a fresh dump was read; ``changed`` lists the squares whose
    content differs from the mirror before the loss (pieces moved while the link was down).
    A :class:`BoardSnapshot` with reason ``"reconnect"`` comes right before it."""

    time: float
    changed: frozenset[int] = field(default_factory=frozenset)
    downtime: float = 0.0


BoardEvent = (
    SquareChanged
    | BoardSnapshot
    | ClockUpdate
    | LeverMoved
    | ButtonPressed
    | ClockConnection
    | BoardMemory
    | LinkLost
    | LinkRestored
)
