"""Serve a virtual board (or a bus line of them) on a TCP port of 127.0.0.1.

A host opens the URL :meth:`TcpEmulatorServer.start` returns (``socket://127.0.0.1:PORT``)
through pyserial's URL handler, as it would a board behind a serial-to-network bridge
(ser2net and the like).  It is the same board as :class:`~dgt.emulator.pty.EmulatorServer`
serves on a pseudo-terminal, without the kernel's limit on pseudo-terminals
(``/proc/sys/kernel/pty/max``, 4,096 by default): one listening socket and one connection
per board, so thousands of boards fit in one process (bench/hall.py at 5,000 tables).

One host at a time: a new connection replaces the one before (as a host reopening a serial
port does).  While no host is connected, what the board sends is lost, as on a cable with
nobody at the other end.  :meth:`unplug` closes the connection and stops listening (a host's
reads end and its connects are refused); :meth:`plug` listens again on the same port.
Both ends send without delay (``TCP_NODELAY``): a serial line does not hold bytes back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket

from dgt.emulator.pty import Device, EmulatorServer

__all__ = ["TcpEmulatorServer"]

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
READ_CHUNK = 4096


class TcpEmulatorServer(EmulatorServer):
    """A :class:`VirtualBoard` or :class:`BusLine` on a TCP port of 127.0.0.1 (``port`` 0:
    one the system picks); the same life cycle, actions and timing as
    :class:`~dgt.emulator.pty.EmulatorServer`, and :attr:`path` is the pyserial URL."""

    def __init__(
        self,
        device: Device,
        *,
        port: int = 0,
        power_cycle: bool = True,
        seed: int | None = None,
        restart_after: float | None = 1.0,
    ) -> None:
        super().__init__(device, power_cycle=power_cycle, seed=seed, restart_after=restart_after)
        self._port = port
        self._listener: socket.socket | None = None
        self._conn: socket.socket | None = None

    async def start(self) -> str:
        """Listen on 127.0.0.1; returns the ``socket://`` URL for hosts to open."""
        if self._loop is not None:
            raise RuntimeError("emulator server already started")
        self._loop = asyncio.get_running_loop()
        self._epoch = self._loop.time() - self.device.last_now
        self._open_pty()
        log.info("emulator serving %r on %s", self.device, self.path)
        return self.path

    @property
    def path(self) -> str:
        """The URL hosts open (valid after :meth:`start`)."""
        if self._loop is None:
            raise RuntimeError("emulator server not started")
        return f"socket://{HOST}:{self._port}"

    @property
    def plugged(self) -> bool:
        return self._listener is not None

    # -- the line: a listening socket and at most one connection --------------------------

    def _open_pty(self) -> None:
        assert self._loop is not None
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((HOST, self._port))
            listener.listen(4)
            listener.setblocking(False)
        except BaseException:
            listener.close()
            raise
        self._port = listener.getsockname()[1]
        self._listener = listener
        self._pty_name = f"{HOST}:{self._port}"
        self._loop.add_reader(listener.fileno(), self._accept)

    def _accept(self) -> None:
        listener = self._listener
        if listener is None:
            return
        try:
            conn, _ = listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            log.debug("emulator accept: %s", exc)
            return
        conn.setblocking(False)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._close_conn()  # a host reopening the port replaces the one before
        assert self._loop is not None
        self._conn = conn
        self._master = conn.fileno()
        self._loop.add_reader(self._master, self._on_readable)
        self._reschedule()

    def _close_conn(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._conn is not None and self._loop is not None:
            fd = self._conn.fileno()
            self._loop.remove_reader(fd)
            if self._writing:
                self._loop.remove_writer(fd)
        self._writing = False
        if self._conn is not None:
            with contextlib.suppress(OSError):
                self._conn.close()
        self._conn = None
        self._master = None
        self._pending.clear()

    def _close_pty(self) -> None:
        self._close_conn()
        if self._listener is not None:
            if self._loop is not None:
                self._loop.remove_reader(self._listener.fileno())
            with contextlib.suppress(OSError):
                self._listener.close()
        self._listener = None
        self._pty_name = None

    # -- data -----------------------------------------------------------------------------

    def _on_readable(self) -> None:
        conn = self._conn
        if conn is None:
            return
        try:
            data = conn.recv(READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            log.debug("emulator read: %s", exc)
            data = b""
        if not data:  # the host closed its end: wait for the next one
            self._close_conn()
            return
        self._from_host(data)

    def __repr__(self) -> str:
        state = self._pty_name or ("unplugged" if self._loop else "not started")
        return f"<TcpEmulatorServer {state}>"
