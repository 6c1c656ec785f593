"""Shared fixtures.  Keep this file generic: any test module may use what is here.

* ``slow``: end-to-end runs (a pty, the bus line, the BLE stand-in, the web server, Chromium,
  benches, subprocesses) and exhaustive sweeps; ``./test.sh -m "not slow"`` is the quick
  loop, ``./test.sh`` runs everything.  Whole modules are listed in ``SLOW_MODULES``.
* the guard (``guard``, autouse: on for every test): fails an async test that leaves asyncio
  tasks behind (``no_leaked_tasks``, which it requests for every coroutine test), and any
  test that logs a record at ERROR or above.  A test that expects an error log takes the
  ``error_log`` fixture and claims each such record with ``error_log.expect(text)`` (which
  asserts it was logged).  A leak or an error log that lives in service code another part
  of the project owns is allowed only by name, with a reason, until that code is fixed:
  ``@pytest.mark.allow_lingering_tasks("...")`` / ``@pytest.mark.allow_error_log("...")``.
* ``FakePtyBoard`` / ``fake_board``: a small scripted DGT board answering raw bytes on a
  real pseudo-terminal (the host opens a stable symlink to it, so ``unplug``/``plug`` can
  swap the pty underneath like a USB board re-enumerating).  It is deliberately simple: the
  full emulator lives in ``dgt.emulator``.
* ``nats_broker``: a real ``nats-server`` with JetStream (``tests/nats_broker.py``) on a free
  port, its files in the test's directory; without a ``nats-server`` binary the test fails
  (``./setup.sh test`` installs one), as the browser tests do without Chromium.
* ``move_on``: a hand moving a piece on an emulated board served on a pty;
  ``replay_squares``: the board as a consumer of a driver's events sees it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import select
import threading
import time
import tty
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import chess
import pytest
from nats_broker import Broker, server_binary

from dgt.emulator import EmulatorServer, VirtualBoard
from dgt.events import BoardEvent, BoardSnapshot, SquareChanged
from dgt.protocol import (
    BoardDump,
    ClockAck,
    ClockCommand,
    ClockTimes,
    Command,
    CommandParser,
    EEMoves,
    FieldUpdate,
    LongSerialNumber,
    Piece,
    SerialNumber,
    Trademark,
    Version,
    decode_clock_setnrun,
    square_to_index,
)
from dgt.protocol.eeprom import EEPieceChange, EETag, EETagRecord
from service import event_loop

if event_loop.name() == "uvloop":
    # The tests run on the loop the service runs on (service.event_loop): uvloop where it
    # is installed; `DGT_EVENT_LOOP=asyncio ./test.sh` runs them on asyncio's own.
    import uvloop

    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())

FAST: dict[str, Any] = {
    "handshake_retry": 0.3,
    "settle_delay": 0.05,
    "reconnect_min": 0.05,
    "reconnect_max": 0.2,
}
"""dgt.Board options for tests: quick retries, settle and reconnect back-off."""


SLOW_MODULES = frozenset(
    {
        "test_bench_recognition.py",
        "test_bench_smoke.py",
        "test_ble_cli.py",
        "test_browser.py",
        "test_browser_alternatives.py",
        "test_browser_variants.py",
        "test_demo.py",
        "test_hall_bench.py",
        "test_monitor.py",
        "test_recognize_cli.py",
        "test_recognize_e2e.py",
    }
)
"""Modules that are end-to-end runs as a whole (Chromium pages, the benches, the command-line
programs in subprocesses, the demo on pseudo-terminals; and every module with ``browser`` in
its name, the Chromium pages): every test in them is ``slow``.
Single slow tests elsewhere carry ``@pytest.mark.slow`` themselves."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SLOW_MODULES or "browser" in item.path.name:  # Chromium pages
            item.add_marker(pytest.mark.slow)


class ErrorLog(logging.Handler):
    """Every record at ERROR or above logged during one test (setup, call and teardown),
    from any logger that propagates to the root."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []
        self.expected: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def expect(self, text: str) -> list[logging.LogRecord]:
        """Claim the error records whose message contains ``text`` (at least one must have
        been logged): the guard lets them pass."""
        got = [r for r in self.records if text in r.getMessage()]
        assert got, f"no error-level record containing {text!r}: {self.messages()}"
        self.expected.extend(r for r in got if r not in self.expected)
        return got

    def unexpected(self) -> list[logging.LogRecord]:
        return [r for r in self.records if r not in self.expected]

    def messages(self) -> list[str]:
        return [f"{r.name}: {r.getMessage()}" for r in self.records]


_error_log_key = pytest.StashKey[ErrorLog]()


def _is_async_test(item: pytest.Item) -> bool:
    function = getattr(item, "function", None)
    return function is not None and inspect.iscoroutinefunction(function)


@pytest.fixture(autouse=True)
def guard(request: pytest.FixtureRequest) -> Iterator[None]:
    """On for every test: no error-level log record unless claimed (``error_log``), and for
    a coroutine test no asyncio task left behind (``no_leaked_tasks``)."""
    handler = ErrorLog()
    request.node.stash[_error_log_key] = handler
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        if _is_async_test(request.node):
            request.getfixturevalue("no_leaked_tasks")
        yield
    finally:
        root.removeHandler(handler)
    unexpected = handler.unexpected()
    if unexpected and request.node.get_closest_marker("allow_error_log") is None:
        pytest.fail(
            "error-level log records (claim an expected one with the error_log fixture): "
            + "; ".join(f"{r.name}: {r.getMessage()}" for r in unexpected),
            pytrace=False,
        )


@pytest.fixture
def error_log(request: pytest.FixtureRequest, guard: None) -> ErrorLog:
    """The error-level records of this test; ``expect(text)`` claims (and asserts) them."""
    handler: ErrorLog = request.node.stash[_error_log_key]
    return handler


@pytest.fixture
async def no_leaked_tasks(request: pytest.FixtureRequest) -> AsyncIterator[None]:
    """Fail the test if it leaves tasks on the event loop (requested by ``guard`` for every
    coroutine test; naming it in a test is harmless).  The tasks are cancelled and awaited
    either way, so one leak does not spill into the next test."""
    before = asyncio.all_tasks()
    yield
    await asyncio.sleep(0)
    leaked = [t for t in asyncio.all_tasks() - before if t is not asyncio.current_task()]
    for task in leaked:
        task.cancel()
    if leaked:
        await asyncio.gather(*leaked, return_exceptions=True)
    if leaked and request.node.get_closest_marker("allow_lingering_tasks") is None:
        names = sorted(f"{t.get_name()} ({t.get_coro()!r})" for t in leaked)
        pytest.fail(f"test left {len(leaked)} asyncio task(s) behind: {names}", pytrace=False)


def start_squares() -> list[Piece]:
    """The start position, python-chess order (0 = a1), board frame."""
    squares = [Piece.EMPTY] * 64
    for square, piece in chess.Board().piece_map().items():
        squares[square] = Piece.from_symbol(piece.symbol())
    return squares


PEGASUS_TRADEMARK = (
    "Digital Game Technology\r\nCopyright (c) 2021 DGT\r\n"
    "software version: 1.00, build: 210722\r\nhardware version: 1.00, serial no: P000012345"
)


class FakePtyBoard:
    """A scripted DGT board (with a DGT 3000) on a pty, answered from a thread.

    ``path`` is a symlink to the current pty slave.  ``silent`` makes it ignore the host
    (a dead link that stays open); ``echo`` makes it a non-DGT device that echoes bytes;
    ``clock_answers`` False makes the clock stop acknowledging.
    """

    def __init__(self, directory: Path, *, pegasus: bool = False, clock: bool = True) -> None:
        self.path = str(directory / "dgtboard")
        self.pegasus = pegasus
        self.squares: list[Piece] = start_squares()
        if pegasus:
            self.squares = [Piece.OCCUPIED if p is not Piece.EMPTY else p for p in self.squares]
        self.mode = "idle"
        self.keyed = not pegasus
        self.clock = clock
        self.clock_answers = True
        self.silent = False
        self.echo = False
        self.left, self.right = 300, 300
        self.right_high = False
        self.received = bytearray()
        self.commands: list[tuple[int, bytes]] = []
        self.ee = EEMoves.from_records(
            [EETagRecord(EETag.POWERUP), EEPieceChange(square_to_index(chess.E2), 1)]
        ).to_bytes()
        self.lock = threading.RLock()
        self._master: int | None = None
        self._slave: int | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._parser = CommandParser()

    # --- life cycle --

    def plug(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave, tty.TCSANOW)  # raw before the path is published
        self._master, self._slave = master, slave
        self._parser = CommandParser()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        os.symlink(os.ttyname(slave), self.path)
        self._stop.clear()
        self._thread = threading.Thread(target=self._serve, name="fake-dgt-board", daemon=True)
        self._thread.start()

    def unplug(self) -> None:
        """Pull the cable: the pty disappears (the host reads EIO), and so does the path."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)
            self._thread = None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        for fd in (self._master, self._slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = None
        self.mode = "idle"

    # --- the line --

    def send(self, data: bytes) -> None:
        with self.lock:
            if self._master is not None:
                os.write(self._master, data)

    def _serve(self) -> None:
        master = self._master
        assert master is not None
        while not self._stop.is_set():
            ready, _, _ = select.select([master], [], [], 0.02)
            if not ready:
                continue
            try:
                data = os.read(master, 4096)
            except OSError:
                continue  # no slave open yet (EIO): keep waiting
            with self.lock:
                self.received += data
                if self.echo:
                    os.write(master, data)
                    continue
                if self.silent:
                    continue
                for cmd in self._parser.feed(data):
                    self.commands.append((cmd.code, cmd.data))
                    self._answer(cmd.code, cmd.data)

    def _answer(self, code: int, data: bytes) -> None:
        reply = b""
        if code == Command.SEND_RESET:
            self.mode = "idle"
        elif code == Command.SEND_VERSION:
            reply = Version(1, 0).to_bytes() if self.pegasus else Version(3, 10).to_bytes()
        elif code == Command.RETURN_SERIALNR:
            reply = SerialNumber("12345").to_bytes()
        elif code == Command.RETURN_LONG_SERIALNR and not self.pegasus:
            reply = LongSerialNumber("0000012345").to_bytes()
        elif code == Command.SEND_TRADEMARK:
            text = PEGASUS_TRADEMARK if self.pegasus else "Digital Game Technology"
            reply = Trademark(text).to_bytes()
        elif code == Command.SEND_BRD:
            reply = self.dump()
        elif code == Command.SEND_UPDATE_NICE:
            self.mode = "nice"
        elif code == Command.SEND_UPDATE:
            self.mode = "update"
        elif code == Command.SEND_UPDATE_BRD:
            self.mode = "brd"
        elif code == Command.SEND_EE_MOVES:
            reply = self.ee
        elif code == Command.DEVELOPER_KEY:
            self.keyed = True
        elif code == Command.CLOCK_MESSAGE:
            reply = self._clock_command(data)
        elif code == Command.SEND_CLK:
            reply = self.times().to_bytes()
        if reply:
            os.write(self._master, reply)  # type: ignore[arg-type]

    def _clock_command(self, data: bytes) -> bytes:
        if not self.clock or not self.clock_answers or self.mode not in ("nice", "update"):
            return b""
        sub = data[1] if len(data) > 1 else -1
        if sub == ClockCommand.VERSION:
            return ClockAck(0x10, 0x09, 0x20, 0).to_bytes()
        if sub == ClockCommand.SETNRUN:
            self.left, self.right, _ = decode_clock_setnrun(data[2:9])
            return ClockAck(0x10, sub, 0, 0).to_bytes() + self.times().to_bytes()
        return ClockAck(0x10, sub, 0, 0).to_bytes()

    # --- the board --

    def dump(self) -> bytes:
        if not self.keyed:
            return BoardDump(bytes([0x7F] * 64)).to_bytes()
        return BoardDump.from_pieces(self.squares).to_bytes()

    def field(self, square: int, piece: Piece) -> bytes:
        return FieldUpdate(square_to_index(square), piece.to_wire()).to_bytes()

    def set_square(self, square: int, piece: Piece, *, report: bool = True) -> None:
        with self.lock:
            if self.pegasus and piece is not Piece.EMPTY:
                piece = Piece.OCCUPIED
            self.squares[square] = piece
            if report and self.mode in ("nice", "update", "brd"):
                self.send(self.field(square, piece))

    def lift(self, square: int) -> None:
        self.set_square(square, Piece.EMPTY)

    def place(self, square: int, piece: Piece) -> None:
        self.set_square(square, piece)

    def times(self, running: bool = True) -> ClockTimes:
        return ClockTimes.build(
            self.left,
            self.right,
            running=running,
            right_high=self.right_high,
            left_running=not self.right_high,
            no_clock=not self.clock,
        )

    def send_times(self) -> None:
        with self.lock:
            if self.mode in ("nice", "update"):
                self.send(self.times().to_bytes())

    def press_lever(self) -> None:
        with self.lock:
            self.right_high = not self.right_high
        self.send_times()

    def press_button(self, button: int) -> None:
        """``button`` 0..4 = back, plus, run, minus, ok."""
        with self.lock:
            if self.mode in ("nice", "update"):
                self.send(ClockAck(0x10, 0x88, 0x01 | (4 << button), 0x31 + button).to_bytes())


@pytest.fixture
def nats_broker(tmp_path: Path) -> Iterator[Broker]:
    binary = server_binary()
    if binary is None:
        pytest.fail("no nats-server binary: run ./setup.sh test (it installs the broker)")
    broker = Broker(binary, tmp_path / "nats")
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def fake_board(tmp_path: Path) -> Iterator[FakePtyBoard]:
    """A plugged-in FakePtyBoard with a DGT 3000."""
    board = FakePtyBoard(tmp_path)
    board.plug()
    yield board
    board.unplug()


@pytest.fixture
def make_fake_board(tmp_path: Path) -> Iterator[Callable[..., FakePtyBoard]]:
    """Factory for FakePtyBoards with options (``pegasus=True``, ``clock=False``)."""
    made: list[FakePtyBoard] = []

    def make(**kwargs: bool) -> FakePtyBoard:
        directory = tmp_path / f"board{len(made)}"
        directory.mkdir()
        board = FakePtyBoard(directory, **kwargs)
        board.plug()
        made.append(board)
        return board

    yield make
    for board in made:
        board.unplug()


async def wait_until(predicate: Callable[[], bool], within: float = 5.0) -> None:
    """Poll ``predicate`` on the event loop until true; fail after ``within`` s."""
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


def move_on(server: EmulatorServer, board: VirtualBoard, from_square: int, to_square: int) -> None:
    """A hand moves the piece on ``from_square`` of ``board`` (served by ``server``) to
    ``to_square``: a lift, then a place (squares are python-chess numbers)."""
    piece = board.squares[from_square]
    server.act(lambda now: board.lift(from_square, now))
    server.act(lambda now: board.place(to_square, piece, now))


def replay_squares(events: Iterable[BoardEvent]) -> list[Piece]:
    """The board as a consumer of a driver's events sees it: each snapshot, then the square
    changes on it.  Fails if a change comes before any snapshot or does not start from what
    the square held (an event was lost)."""
    squares: list[Piece] = []
    for event in events:
        if isinstance(event, BoardSnapshot):
            squares = list(event.squares)
        elif isinstance(event, SquareChanged):
            assert squares, f"a change before the first snapshot: {event}"
            assert squares[event.square] is event.previous, f"event lost before {event}"
            squares[event.square] = event.piece
    return squares
