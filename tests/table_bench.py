"""A table at an emulated board on one explicit time line: no event loop, no sleeping.

:class:`TableBench` stands where ``dgt.Board`` + ``service.table_runner.TableRunner`` (in
the end-to-end tests: ``linked_table.LinkedTable``) stand at a real table, built from the
same pure pieces: the emulated board and its DGT 3000
(:class:`dgt.emulator.board.VirtualBoard`, :class:`dgt.emulator.clock.VirtualClock`) make
the bytes a board sends; the driver's own readers (:class:`dgt.protocol.FrameParser`,
:class:`dgt.mirror.Mirror`, :class:`dgt.clock.ClockState`) turn them into the events
``dgt.Board`` emits; each event goes to the table as a runner that keeps its table's time
gives it (``tick`` then ``feed``, at the event's time), the table is ticked every ``tick``
seconds in between, and its clock orders are encoded as ``dgt.clock.Clock`` encodes them
and handed to the emulated clock, one after another, each answered before the next.

Time is a number the test moves forward (:meth:`TableBench.advance_to`): a scenario that
lasts minutes on the clock costs milliseconds of CPU, and every instant is exact.  The path
through a pty, pyserial, the driver's tasks and the link is covered by the few end-to-end
runs kept as slow tests.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Protocol

from dgt.clock import ClockState
from dgt.emulator.board import VirtualBoard
from dgt.events import BoardEvent, BoardFamily, ClockConnection, Side
from dgt.mirror import Mirror
from dgt.protocol import BoardDump, ClockAck, ClockTimes, Command, FieldUpdate, FrameParser
from dgt.protocol.clock_codec import (
    SetNRunMode,
    encode_clock_beep,
    encode_clock_end,
    encode_clock_setnrun,
    encode_clock_text,
    encode_clock_version,
)
from dgt.protocol.commands import encode_command, encode_pegasus_key
from service.clock_orders import beep_units
from service.table import ClockOrder, TableEvent

TICK = 0.1
"""Seconds between table ticks (``linked_table.TICK``)."""


class PureTable(Protocol):
    """What the bench needs of a table (``Table`` and ``RealtimeTable`` fit)."""

    def feed(self, event: BoardEvent) -> list[TableEvent]: ...

    def tick(self, now: float) -> list[TableEvent]: ...

    def admin(self, command: str, args: Mapping[str, Any], now: float) -> list[TableEvent]: ...

    def take_clock_orders(self) -> list[ClockOrder]: ...


def order_bytes(order: ClockOrder) -> bytes:
    """The clock message ``dgt.clock.Clock`` sends for ``order`` (via
    ``service.clock_orders.send_order``, a DGT 3000)."""
    if order.kind == "set_and_run":
        mode = {
            None: SetNRunMode.PAUSED,
            Side.LEFT: SetNRunMode.LEFT_RUNS,
            Side.RIGHT: SetNRunMode.RIGHT_RUNS,
        }[order.run]
        return encode_clock_setnrun(
            float(order.left), float(order.right), mode | SetNRunMode.TOGGLE_ON_LEVER
        )
    if order.kind == "text":
        return encode_clock_text(str(order.text), beep_units(order.beep))
    if order.kind == "end_text":
        return encode_clock_end()
    if order.kind == "beep":
        return encode_clock_beep(float(order.beep) or 0.5)
    raise AssertionError(f"clock order {order.kind!r} not understood")


class TableBench:
    """``table`` at the emulated board ``vb``; the link starts at time ``start``."""

    def __init__(
        self, vb: VirtualBoard, table: PureTable, *, tick: float = TICK, start: float = 0.0
    ) -> None:
        self.vb = vb
        self.table = table
        self.tick = tick
        self.now = start
        self.events: list[TableEvent] = []
        """Every table event so far, oldest first."""
        self.sent: list[ClockOrder] = []
        """Clock orders the clock acknowledged, oldest first."""
        self.board_events: list[BoardEvent] = []
        """Every event the driver's readers produced, oldest first."""
        self._parser = FrameParser()
        self._mirror = Mirror()
        self._clock = ClockState()
        self._loaded = False
        self._linked = False
        self._orders: deque[ClockOrder] = deque()
        self._next_tick = start + tick
        # the driver's handshake (dgt.Board): update mode, then the dump; on a board with
        # piece identities the clock's times, then its version
        if vb.pegasus:
            self._mirror = Mirror(BoardFamily.PRESENCE_ONLY)
            self._host(
                encode_pegasus_key()
                + encode_command(Command.SEND_UPDATE_BRD)
                + encode_command(Command.SEND_BRD)
            )
        else:
            self._host(encode_command(Command.SEND_UPDATE_NICE) + encode_command(Command.SEND_BRD))
            self._host(encode_command(Command.SEND_CLK))
            self._host(encode_clock_version())
        # the link starts (TableRunner.attach): the clock's state and the board as it stands
        self._linked = True
        if self._clock.connected:
            self._feed(ClockConnection(self.now, True, self._clock.version, "link"))
        if self._clock.last_update is not None:
            self._feed(replace(self._clock.last_update, time=self.now))
        self._feed(self._mirror.snapshot(self.now, "connect"))
        self._send_orders()

    # -- time -----------------------------------------------------------------------------

    def advance_to(self, t: float) -> None:
        """Let time run to ``t``: the board's delayed bytes and the clock's reports fall due
        at their instants, and the table is ticked every ``tick`` seconds."""
        while True:
            due = self._next_tick
            board_due = self.vb.next_deadline()
            if board_due is not None and board_due < due:
                due = max(board_due, self.now)
            if due > t:
                break
            self.now = due
            self._receive(self.vb.poll(due))
            if due >= self._next_tick:
                self._next_tick += self.tick
                self._record(self.table.tick(due))
                self._send_orders()
        self.now = max(self.now, t)
        self._receive(self.vb.poll(self.now))

    def advance(self, seconds: float) -> None:
        self.advance_to(self.now + seconds)

    def until(self, predicate: Callable[[], bool], within: float = 5.0) -> None:
        """Let time run (tick by tick) until ``predicate`` holds; fail after ``within``
        seconds of table time."""
        deadline = self.now + within
        while not predicate():
            if self.now >= deadline:
                raise AssertionError(f"condition not met within {within} s (t={self.now:.2f})")
            self.advance(min(self.tick, deadline - self.now))

    # -- hands and commands ---------------------------------------------------------------

    def lift(self, square: int) -> None:
        self._receive(self.vb.lift(square, self.now))

    def place(self, square: int, piece: Any) -> None:
        self._receive(self.vb.place(square, piece, self.now))

    def press_lever(self) -> None:
        self._receive(self.vb.press_lever(self.now))

    def press_button(self, button: int) -> None:
        self._receive(self.vb.press_button(button, self.now))

    def act(self, action: Callable[[float], bytes]) -> None:
        """Do ``action(now)`` on the board (a ``VirtualBoard`` method) and read what it sent."""
        self._receive(action(self.now))
        self._poll_due()

    def inject(self, data: bytes) -> None:
        """Bytes on the line as if the board sent them now."""
        self._receive(data)

    def admin(self, command: str, **args: Any) -> list[TableEvent]:
        """``Table.admin`` now; its clock orders are carried out."""
        got = self.table.admin(command, args, self.now)
        self._record(got)
        self._send_orders()
        return got

    def flush(self) -> None:
        """Nothing to wait for: every order is carried out as it is issued."""

    # -- internals -----------------------------------------------------------------------

    def _host(self, data: bytes) -> None:
        self._receive(self.vb.receive(data, self.now))

    def _receive(self, data: bytes) -> None:
        if not data:
            return
        for message in self._parser.feed(data):
            for event in self._read(message):
                self.board_events.append(event)
                if self._linked:
                    self._feed(event)
        self._send_orders()

    def _read(self, message: object) -> list[BoardEvent]:
        """The events ``dgt.Board`` emits for one message from the board."""
        if isinstance(message, BoardDump):
            if not self._loaded:
                self._loaded = True
                self._mirror.load(message.pieces(self._mirror.presence_only), self.now)
                return []  # the link announces the board as it stands when it starts
            return list(self._mirror.apply_dump(message, self.now))
        if isinstance(message, FieldUpdate):
            change = self._mirror.apply_update(message, self.now)
            return [change] if change is not None else []
        if isinstance(message, ClockTimes | ClockAck):
            return self._clock.feed(message, self.now)
        return []

    def _feed(self, event: BoardEvent) -> None:
        self._record(self.table.tick(event.time) + self.table.feed(event))

    def _record(self, got: list[TableEvent]) -> None:
        self.events += got
        self._orders.extend(self.table.take_clock_orders())

    def _send_orders(self) -> None:
        """The table's orders to the clock, in order, each acknowledged before the next
        (orders a reply gives rise to join the queue behind)."""
        while self._orders:
            order = self._orders.popleft()
            answer = self.vb.receive(order_bytes(order), self.now)
            acked = any(isinstance(m, ClockAck) for m in FrameParser().feed(answer))
            if acked:
                self.sent.append(order)
            self._receive(answer)
            self._poll_due()

    def _poll_due(self) -> None:
        """What the board sends at once (the clock's new times after a setting)."""
        for _ in range(8):
            due = self.vb.next_deadline()
            if due is None or due > self.now:
                return
            data = self.vb.poll(self.now)
            if not data:
                return
            self._receive(data)
