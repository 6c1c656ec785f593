"""Emulated boards in a second process, on a pseudo-terminal (a helper of the latency
benches, not a script).

The boards run in their own process, as boards at the far end of a cable would, so the
driver under test in the bench's process reads the pty through pyserial with nothing of
the emulator's work on its own event loop.  The two processes talk over one pipe: the
bench sends requests (any picklable object; None stops the boards), the child acts on
each in its emulator's event loop and may answer on the same pipe.

Bench side::

    with EmulatorProcess(emulator_process, count, prefix="dgt-bus-bench-") as boards:
        ...  # open the driver on boards.path; boards.send(request); boards.recv()

Child side (``emulator_process`` is a module-level function of the script, so that the
spawned process can import it)::

    def emulator_process(link: str, pipe: Connection, ready: Connection, count: int) -> None:
        serve_on_pty(make_bus(count), link, pipe, ready, on_request)
"""

from __future__ import annotations

import asyncio
import multiprocessing
import tempfile
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Self

from dgt.emulator import BusLine, EmulatorServer, VirtualBoard

__all__ = ["EmulatorProcess", "serve_on_pty"]

START_TIMEOUT = 30.0
"""Seconds the child has to publish its pty before the bench gives up."""


def serve_on_pty(
    device: VirtualBoard | BusLine,
    link: str,
    pipe: Connection,
    ready: Connection,
    on_request: Callable[[EmulatorServer, Any], None],
) -> None:
    """In the child: serve ``device`` on a pty published at ``link``, send the pty's path
    on ``ready``, and call ``on_request(server, request)`` for each request read from
    ``pipe`` until a None (or the bench's end of the pipe closes)."""

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        stop = loop.create_future()

        def on_readable() -> None:
            while pipe.poll():
                try:
                    request = pipe.recv()
                except EOFError:
                    request = None
                if request is None:
                    if not stop.done():
                        stop.set_result(None)
                    return
                on_request(server, request)

        async with EmulatorServer(device, link=link) as server:
            loop.add_reader(pipe.fileno(), on_readable)
            ready.send(server.path)
            await stop
            loop.remove_reader(pipe.fileno())

    asyncio.run(serve())


class EmulatorProcess:
    """The bench's end: spawns ``target(link, pipe, ready, *args)`` in a new process and
    waits until the boards' pty is published (:attr:`path`); leaving the ``with`` block
    stops the boards (if :meth:`stop` was not called) and waits for the process."""

    def __init__(
        self, target: Callable[..., None], *args: object, prefix: str, link_name: str = "dgt"
    ) -> None:
        self._target = target
        self._args = args
        self._prefix = prefix
        self._link_name = link_name
        self._stopped = False
        self.path = ""
        """The pty (its stable link) to open the driver on."""

    def __enter__(self) -> Self:
        ctx = multiprocessing.get_context("spawn")
        self._tmp = tempfile.TemporaryDirectory(prefix=self._prefix)
        self._pipe, theirs = ctx.Pipe(duplex=True)
        ready_r, ready_w = ctx.Pipe(duplex=False)
        link = str(Path(self._tmp.name) / self._link_name)
        self._child = ctx.Process(
            target=self._target, args=(link, theirs, ready_w, *self._args), daemon=True
        )
        self._child.start()
        if not ready_r.poll(START_TIMEOUT):
            self._child.kill()
            self._tmp.cleanup()
            raise SystemExit("the emulator process did not start")
        self.path = ready_r.recv()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
        self._child.join(10)
        self._tmp.cleanup()

    def send(self, request: object) -> None:
        """A request to the child (None stops it: use :meth:`stop`)."""
        self._pipe.send(request)

    def recv(self) -> Any:
        """The child's next answer (blocks until it comes)."""
        return self._pipe.recv()

    def poll(self, timeout: float) -> bool:
        """Whether an answer is there within ``timeout`` seconds."""
        return self._pipe.poll(timeout)

    def stop(self) -> None:
        """Stop the boards (the child may still send a last answer).  Idempotent."""
        if not self._stopped:
            self._stopped = True
            self._pipe.send(None)
