"""Serve a virtual board (or a bus line of them) on a real pseudo-terminal.

Any host program opens the path :meth:`EmulatorServer.start` returns as it would open a
USB board (pyserial, 9600 8N1; the baud rate does not matter on a pty).  The server runs
on the event loop it was started on, so it can live inside another program's loop
(``dgt-service monitor --demo`` runs one next to the driver).

Pitfalls handled (docs/protocol.md §11): the pty is put in raw mode with
``TCSANOW`` *before* its path is published, so no host byte is ever flushed or echoed; the
server keeps its own handle on the slave side, so the pty survives a host closing and
reopening it.  :meth:`unplug` closes the pty (the host's reads and writes fail, as with a
pulled USB cable) and :meth:`plug` makes a new one; a stable symlink (like a udev
symlink) always points at the current pty, so a host can reopen the same path.  A board
that drops its link (a clone crashing on a request, :class:`~dgt.emulator.board.Quirk`) is
unplugged the same way, and switched on and served again ``restart_after`` seconds later.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import shutil
import tempfile
import termios
import tty
from collections.abc import Callable
from pathlib import Path

from dgt.emulator.board import VirtualBoard
from dgt.emulator.bus import BusLine

__all__ = ["Device", "EmulatorServer"]

log = logging.getLogger(__name__)

Device = VirtualBoard | BusLine
"""What a server serves: one board, or several boards on one bus line."""

MAX_PENDING = 1 << 20
"""Bytes kept for a host that does not read; beyond that the line loses them, as a serial
line without flow control does."""


class EmulatorServer:
    """A :class:`VirtualBoard` or :class:`BusLine` on a pseudo-terminal.

    ``link`` is the stable path to publish (a symlink to the current ``/dev/pts/N``); by
    default one in a fresh temporary folder.  ``power_cycle`` makes :meth:`plug` switch the
    board on again, as a USB-powered board is when its cable comes back (a Bluetooth board
    keeps its power: pass False).  ``restart_after``: seconds after a board dropped its link
    (a quirk) until it is switched on and served again (None: it stays unplugged).
    """

    def __init__(
        self,
        device: Device,
        *,
        link: str | os.PathLike[str] | None = None,
        power_cycle: bool = True,
        seed: int | None = None,
        restart_after: float | None = 1.0,
    ) -> None:
        self.device = device
        self.power_cycle = power_cycle
        self.restart_after = restart_after
        self._restart: asyncio.TimerHandle | None = None
        self.drops = 0
        """Times the board dropped its link (a quirk)."""
        self._link_arg = Path(link) if link is not None else None
        self._link: Path | None = None
        self._tempdir: Path | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._epoch = 0.0
        self._master: int | None = None
        self._slave: int | None = None
        self._pty_name: str | None = None
        self._pending = bytearray()
        self._writing = False
        self._timer: asyncio.TimerHandle | None = None
        self._rng = random.Random(seed)
        self.received = 0
        """Bytes read from hosts so far."""
        self.sent = 0
        """Bytes written to hosts so far."""

    # -- life cycle ---------------------------------------------------------------------

    async def start(self) -> str:
        """Open the pty and publish it; returns the stable path for hosts to open."""
        if self._loop is not None:
            raise RuntimeError("emulator server already started")
        self._loop = asyncio.get_running_loop()
        self._epoch = self._loop.time() - self.device.last_now
        if self._link_arg is None:
            self._tempdir = Path(tempfile.mkdtemp(prefix="dgt-emulator-"))
            self._link = self._tempdir / "dgt-board"
        else:
            self._link = self._link_arg.absolute()
        self._open_pty()
        log.info("emulator serving %r on %s -> %s", self.device, self._link, self._pty_name)
        return str(self._link)

    async def close(self) -> None:
        """Close the pty, remove the link.  Idempotent."""
        if self._loop is None:
            return
        if self._restart is not None:
            self._restart.cancel()
            self._restart = None
        self._close_pty()
        if self._tempdir is not None:
            shutil.rmtree(self._tempdir, ignore_errors=True)
            self._tempdir = None
        self._loop = None

    async def __aenter__(self) -> EmulatorServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def path(self) -> str:
        """The stable path hosts open (valid after :meth:`start`)."""
        if self._link is None:
            raise RuntimeError("emulator server not started")
        return str(self._link)

    @property
    def pty_name(self) -> str | None:
        """The current ``/dev/pts/N`` (None while unplugged)."""
        return self._pty_name

    @property
    def plugged(self) -> bool:
        return self._master is not None

    def now(self) -> float:
        """The device's time (seconds)."""
        if self._loop is None:
            raise RuntimeError("emulator server not started")
        return self._loop.time() - self._epoch

    # -- pty ----------------------------------------------------------------------------

    def _open_pty(self) -> None:
        assert self._loop is not None
        assert self._link is not None
        master, slave = os.openpty()
        try:
            # Raw before anyone can know the path, and TCSANOW so nothing is flushed.
            tty.setraw(slave, termios.TCSANOW)
            os.set_blocking(master, False)
            name = os.ttyname(slave)
            self._publish(name)
        except BaseException:
            os.close(master)
            os.close(slave)
            raise
        self._master, self._slave, self._pty_name = master, slave, name
        self._loop.add_reader(master, self._on_readable)
        self._reschedule()

    def _publish(self, target: str) -> None:
        assert self._link is not None
        tmp = self._link.with_name(f".{self._link.name}.{os.getpid()}.tmp")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        os.symlink(target, tmp)
        os.replace(tmp, self._link)  # atomic: a host never sees a half-made link

    def _close_pty(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._master is not None and self._loop is not None:
            self._loop.remove_reader(self._master)
            if self._writing:
                self._loop.remove_writer(self._master)
        self._writing = False
        for fd in (self._master, self._slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = None
        self._pty_name = None
        self._pending.clear()
        if self._link is not None:
            with contextlib.suppress(FileNotFoundError):
                if self._link.is_symlink():
                    self._link.unlink()

    def unplug(self) -> None:
        """Pull the cable: the pty closes (the host's reads fail) and the path vanishes."""
        if not self.plugged:
            return
        log.info("emulator unplugged (%s)", self._pty_name)
        self._close_pty()

    def plug(self) -> str:
        """Put the cable back: a new pty behind the same stable path (the board is
        switched on again when ``power_cycle``).  Returns the path."""
        if self._loop is None:
            raise RuntimeError("emulator server not started")
        if not self.plugged:
            if self.power_cycle:
                self.device.power_up(self.now())
            self._open_pty()
            log.info("emulator plugged in (%s)", self._pty_name)
        return self.path

    # -- data ---------------------------------------------------------------------------

    def _on_readable(self) -> None:
        if self._master is None:
            return
        try:
            data = os.read(self._master, 4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:  # EIO: no slave open (cannot happen while we hold one)
            log.debug("emulator read: %s", exc)
            return
        if data:
            self._from_host(data)

    def _from_host(self, data: bytes) -> None:
        """Bytes the host sent: the board's answer goes out, a link drop it asks for is
        made."""
        self.received += len(data)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("host -> board: %s", data.hex(" "))
        self.send(self.device.receive(data, self.now()))
        if isinstance(self.device, VirtualBoard) and self.device.take_link_drop():
            self._drop_link()
            return
        self._reschedule()

    def _drop_link(self) -> None:
        """The board dropped its link: unplugged now, back after ``restart_after``."""
        assert self._loop is not None
        self.drops += 1
        log.info("emulated board dropped the link (%s)", self._pty_name)
        self._close_pty()
        if self.restart_after is not None:
            self._restart = self._loop.call_later(self.restart_after, self._restart_board)

    def _restart_board(self) -> None:
        self._restart = None
        if self._loop is None or self.plugged:
            return
        self.device.power_up(self.now())
        self._open_pty()
        log.info("emulated board restarted (%s)", self._pty_name)

    def send(self, data: bytes) -> None:
        """Put bytes on the line to the host (lost while unplugged)."""
        if not data or self._master is None:
            return
        if log.isEnabledFor(logging.DEBUG):
            log.debug("board -> host: %s", data.hex(" "))
        self._pending += data
        if len(self._pending) > MAX_PENDING:
            del self._pending[: len(self._pending) - MAX_PENDING]
        self._flush()

    def _flush(self) -> None:
        assert self._loop is not None
        while self._pending and self._master is not None:
            try:
                n = os.write(self._master, self._pending)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:
                log.debug("emulator write: %s", exc)
                self._pending.clear()
                break
            self.sent += n
            del self._pending[:n]
        want = bool(self._pending) and self._master is not None
        if want and not self._writing:
            assert self._master is not None
            self._loop.add_writer(self._master, self._flush)
            self._writing = True
        elif not want and self._writing:
            if self._master is not None:
                self._loop.remove_writer(self._master)
            self._writing = False

    def act(self, action: Callable[[float], bytes]) -> bytes:
        """Run a physical action on the device at the current time and send what the board
        sends because of it, e.g. ``server.act(lambda now: board.lift(12, now))``.  Actions
        still happen while unplugged (pieces move on a board without power too)."""
        data = action(self.now())
        self.send(data)
        self._reschedule()
        return data

    def garbage(self, count: int) -> bytes:
        """Put ``count`` random bytes on the line (line noise)."""
        data = self._rng.randbytes(count)
        self.send(data)
        return data

    def _reschedule(self) -> None:
        if self._loop is None:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._master is None:
            return
        deadline = self.device.next_deadline()
        if deadline is not None:
            self._timer = self._loop.call_at(deadline + self._epoch, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self.send(self.device.poll(self.now()))
        self._reschedule()

    def __repr__(self) -> str:
        state = self._pty_name or ("unplugged" if self._loop else "not started")
        return f"<EmulatorServer {self._link} {state}>"
