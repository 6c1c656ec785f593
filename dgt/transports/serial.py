"""Serial transport on pyserial's ``serial_for_url``: real ports (``/dev/ttyACM0``,
``/dev/ttyUSB0``), Bluetooth RFCOMM ports (``/dev/rfcomm0``) and any pyserial URL
(``socket://host:port``, ``rfc2217://...``, ``loop://``).

9600 baud, 8N1, no flow control, input flushed on open (bytes left over from an earlier
session would desynchronise the handshake), exclusive access where the platform has it.
Ports with a file descriptor (POSIX serial ports, pseudo-terminals and ``socket://``
URLs, the last sent without delay: ``TCP_NODELAY``) are read with ``loop.add_reader`` (or
the ``add_reader`` of the watcher the transport is given: a hall's
:class:`~dgt.transports.poller.BoardPoller`, which reads many boards in batches) and
written without blocking (``loop.add_writer`` when the line cannot take them yet);
anything else (other URL handlers) is read by a small thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import socket
import threading
from typing import Any

import serial
from serial.urlhandler import protocol_socket

from dgt.errors import ConnectionFailed, PortBusy, PortNotFound, PortPermissionDenied
from dgt.transports.base import DataCallback, LostCallback, Transport
from dgt.transports.poller import PollerClosed, ReadWatcher

logger = logging.getLogger(__name__)

BAUDRATE = 9600
READ_CHUNK = 4096
THREAD_READ_TIMEOUT = 0.05
"""Seconds a reader thread blocks in one read (bounds how long closing takes)."""


def map_open_error(port: str, exc: BaseException) -> ConnectionFailed:
    """Turn what pyserial raised on open into a one-line :mod:`dgt.errors` exception."""
    code = getattr(exc, "errno", None)
    text = str(exc)
    if code in (errno.ENOENT, errno.ENXIO, errno.ENODEV):
        return PortNotFound(port)
    if code in (errno.EACCES, errno.EPERM):
        return PortPermissionDenied(port)
    if code in (errno.EBUSY, errno.EAGAIN) or "exclusively lock" in text:
        return PortBusy(port)
    if "Could not configure port" in text:
        return ConnectionFailed(f"{port} is not a serial port (it cannot be set to 9600 baud)")
    detail = " ".join(text.split()) if text else type(exc).__name__
    return ConnectionFailed(f"cannot open {port}: {detail}")


SOCKET_SCHEME = "socket://"


class _SocketPort(protocol_socket.Serial):
    """pyserial's ``socket://`` port, its input flushed without ``select()``, which refuses
    descriptors past 1,023 (a hall of thousands of boards has them), and closed without
    a pause."""

    def reset_input_buffer(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while os.read(self.fileno(), READ_CHUNK):
                pass

    def close(self) -> None:
        """Closes at once: pyserial's close then sleeps 0.3 s (for quick reconnects), on
        the caller's thread, the event loop's (25 minutes to close 5,000 boards)."""
        sock: socket.socket | None = self._socket  # type: ignore[has-type]  # not in the stubs
        self._socket = None
        self.is_open = False
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


class SerialTransport(Transport):
    """A board on a serial port or pyserial URL.

    ``watcher``: what watches the port's descriptor for bytes to read (a port with one),
    by default the event loop the transport is opened on."""

    def __init__(
        self,
        url: str,
        *,
        baudrate: int = BAUDRATE,
        exclusive: bool = True,
        watcher: ReadWatcher | None = None,
    ) -> None:
        self.url = url
        self.baudrate = baudrate
        self.exclusive = exclusive
        self.watcher = watcher
        self._reading: ReadWatcher | None = None
        """Whom the open descriptor is registered with for reading."""
        self._port: serial.SerialBase | None = None
        self._fd: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_data: DataCallback | None = None
        self._on_lost: LostCallback | None = None
        self._out = bytearray()
        self._writing = False
        self._thread: threading.Thread | None = None
        self._stop: threading.Event | None = None  # made for the reader thread's path

    @property
    def name(self) -> str:
        return self.url

    @property
    def is_open(self) -> bool:
        return self._port is not None

    def _open_port(self) -> serial.SerialBase:
        settings: dict[str, Any] = {
            "baudrate": self.baudrate,
            "bytesize": serial.EIGHTBITS,
            "parity": serial.PARITY_NONE,
            "stopbits": serial.STOPBITS_ONE,
            "xonxoff": False,
            "rtscts": False,
            "dsrdtr": False,
            "timeout": 0,
            "exclusive": self.exclusive or None,
        }
        port: serial.SerialBase
        try:
            if self.url.startswith(SOCKET_SCHEME):
                port = _SocketPort(None, **settings)
                port.port = self.url
                port.open()
            else:
                port = serial.serial_for_url(self.url, **settings)
        except (OSError, ValueError) as exc:  # SerialException is an OSError
            raise map_open_error(self.url, exc) from None
        try:
            port.reset_input_buffer()
        except (OSError, ValueError) as exc:
            port.close()
            raise map_open_error(self.url, exc) from None
        return port

    async def open(self, on_data: DataCallback, on_lost: LostCallback) -> None:
        if self._port is not None:
            raise ConnectionFailed(f"{self.url} is already open")
        loop = asyncio.get_running_loop()
        # Opening a Bluetooth RFCOMM port can block while the link is set up.
        port = await loop.run_in_executor(None, self._open_port)
        self._loop = loop
        self._on_data = on_data
        self._on_lost = on_lost
        self._port = port
        self._out.clear()
        self._writing = False
        fd: int | None = None
        if isinstance(port, serial.serialposix.Serial):
            fd = port.fileno()
        elif isinstance(port, protocol_socket.Serial):
            fd = port.fileno()
            with socket.socket(fileno=os.dup(fd)) as sock:  # the same socket, for its option
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if fd is not None:
            os.set_blocking(fd, False)
            self._fd = fd
            reading: ReadWatcher = loop if self.watcher is None else self.watcher
            try:
                reading.add_reader(fd, self._read_ready)
            except (PollerClosed, OSError, ValueError) as exc:
                self._release()
                raise ConnectionFailed(f"cannot read {self.url}: {exc}") from None
            self._reading = reading
        else:
            port.timeout = THREAD_READ_TIMEOUT
            if self._stop is None:
                self._stop = threading.Event()
            else:
                self._stop.clear()
            self._thread = threading.Thread(
                target=self._reader_thread, args=(port,), name=f"dgt-serial {self.url}", daemon=True
            )
            self._thread.start()
        logger.debug("opened %s (%s)", self.url, "fd" if fd is not None else "thread")

    # -- reading --

    def _read_ready(self) -> None:
        fd = self._fd
        if fd is None:
            return
        try:
            data = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError as exc:
            self._lost(f"{self.url}: {exc.strerror or exc}")
            return
        if not data:
            self._lost(f"{self.url}: device disconnected")
            return
        on_data = self._on_data
        if on_data is not None:
            on_data(data)

    def _reader_thread(self, port: serial.Serial) -> None:
        loop = self._loop
        stop = self._stop
        assert loop is not None
        assert stop is not None
        while not stop.is_set():
            try:
                data = port.read(max(1, port.in_waiting))
            except (OSError, ValueError, TypeError, AttributeError) as exc:
                # pyserial raises TypeError/AttributeError when the port is closed under it
                if not stop.is_set():
                    with contextlib.suppress(RuntimeError):
                        loop.call_soon_threadsafe(self._lost, f"{self.url}: {exc}")
                return
            if data and not stop.is_set():
                with contextlib.suppress(RuntimeError):  # loop closed
                    loop.call_soon_threadsafe(self._deliver, data)

    def _deliver(self, data: bytes) -> None:
        if self._port is not None and self._on_data is not None:
            self._on_data(data)

    # -- writing --

    def write(self, data: bytes) -> None:
        port = self._port
        if port is None:
            raise ConnectionFailed(f"{self.url} is not open")
        if self._fd is None:
            try:
                port.write(data)
            except (OSError, ValueError) as exc:
                self._lost(f"{self.url}: write failed: {exc}")
            return
        if not self._out and not self._writing:
            # Nothing waiting (the usual case): the bytes straight to the line.
            try:
                n = os.write(self._fd, data)
            except BlockingIOError:
                n = 0
            except OSError as exc:
                self._lost(f"{self.url}: write failed: {exc.strerror or exc}")
                return
            if n == len(data):
                return
            data = data[n:]
        self._out += data
        if not self._writing:
            self._flush()

    def _flush(self) -> None:
        fd = self._fd
        if fd is None:
            return
        try:
            while self._out:
                n = os.write(fd, self._out)
                del self._out[:n]
        except BlockingIOError:
            if not self._writing and self._loop is not None:
                self._writing = True
                self._loop.add_writer(fd, self._flush)
            return
        except OSError as exc:
            self._lost(f"{self.url}: write failed: {exc.strerror or exc}")
            return
        if self._writing and self._loop is not None:
            self._writing = False
            self._loop.remove_writer(fd)

    # -- closing --

    def _release(self) -> None:
        if self._stop is not None:
            self._stop.set()
        port, self._port = self._port, None
        fd, self._fd = self._fd, None
        loop = self._loop
        reading, self._reading = self._reading, None
        if fd is not None and reading is not None:
            reading.remove_reader(fd)
        if fd is not None and loop is not None and self._writing:
            loop.remove_writer(fd)
        self._writing = False
        self._out.clear()
        if port is not None:
            with contextlib.suppress(OSError, ValueError, TypeError):
                port.close()

    def _lost(self, reason: str) -> None:
        if self._port is None:
            return
        on_lost = self._on_lost
        self._release()
        logger.debug("link lost: %s", reason)
        if on_lost is not None:
            on_lost(reason)

    async def close(self) -> None:
        thread = self._thread
        self._release()
        self._thread = None
        if thread is not None and thread is not threading.current_thread():
            await asyncio.get_running_loop().run_in_executor(None, thread.join, 1.0)
