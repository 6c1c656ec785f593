"""A real ``nats-server`` with JetStream for the tests: file storage in a directory of the
test, a free port on 127.0.0.1; it can be killed (SIGKILL) and started again on the same
port and directory.  :func:`server_binary` finds the binary (on the PATH, beside the Python
running the tests, or in /usr/sbin where Debian puts it)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def server_binary() -> str | None:
    """The ``nats-server`` to run, or None when there is none."""
    found = shutil.which("nats-server")
    if found:
        return found
    for candidate in (Path(sys.executable).parent / "nats-server", Path("/usr/sbin/nats-server")):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Broker:
    """One ``nats-server -js`` process (started by :meth:`start`)."""

    def __init__(
        self, binary: str, store_dir: Path, port: int | None = None, config: str | None = None
    ) -> None:
        """``config``: the text of a server config file (users, permissions) besides the
        options given here."""
        self.binary = binary
        self.config = config
        self.store_dir = store_dir
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.log = store_dir.parent / f"nats-{self.port}.log"

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self, timeout: float = 5.0) -> None:
        """Start the server and wait until it takes connections."""
        assert self.process is None, "already running"
        self.store_dir.mkdir(parents=True, exist_ok=True)
        command = [self.binary, "-js", "-sd", str(self.store_dir), "-a", "127.0.0.1"]
        command += ["-p", str(self.port)]
        if self.config is not None:
            path = self.store_dir.parent / f"nats-{self.port}.conf"
            path.write_text(self.config, encoding="utf-8")
            command += ["-c", str(path)]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"nats-server stopped at start: see {self.log}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2),
            ):
                return
            time.sleep(0.01)
        raise RuntimeError(f"nats-server did not listen on {self.port} within {timeout} s")

    def kill(self) -> None:
        """SIGKILL: no chance to write anything more."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(5)
        self.process = None

    def restart(self) -> None:
        self.kill()
        self.start()

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        self.process = None
