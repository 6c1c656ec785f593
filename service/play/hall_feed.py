"""The eboards API over the boards of a hall (``dgt-service run --play``, ``demo --play``).

A club running the hall can also play online from its boards: lichess's and chess.com's
DGT pages open the same local API as with ``dgt-service play``, served beside the hall's
web server by the same :class:`~service.play.server.PlayServer`.  Each table of the hall
is one board of the API (:class:`HallBoardLink`), with an
:class:`~service.play.eboard.Eboard` of its own fed the board events the table's runner
reads (:attr:`service.table_runner.TableRunner.board_listeners`): the hall's table, its
log and its pages are untouched -- a ``setup`` restarts only the API's reading of that
board, never the table's game or record.

* **Names.**  A board is listed under its serial number once its runner opened it (under
  ``table-ID`` until then; a name it had before still finds it).  Two boards with the same
  serial number are told apart by their table: ``SERIAL-ID``.
* **States** follow the runner's link (:func:`eboard_state`): ``ACTIVE`` while the board
  is connected, ``NOTRESPONDING`` while it is lost or cannot be opened, ``INACTIVE``
  before it was first opened.
* **LEDs** stay the hall's: its LED driver keeps showing the table's game, so a ``setup``
  lights nothing here.
* One ticker lets every board's settle delay pass (:data:`~service.play.server.TICK`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from dgt.board import BoardInfo
from dgt.events import BoardEvent
from dgt.tasks import cancel_and_wait
from service.play.eboard import Eboard, EboardState
from service.play.server import (
    DEFAULT_HOST,
    DEFAULT_ORIGINS,
    DEFAULT_PORT,
    PLAY_SETTLE,
    TICK,
    OriginPolicy,
    PlayServer,
)
from service.table_runner import Connection

__all__ = ["FedRunner", "HallBoardLink", "HallPlay", "eboard_state"]

log = logging.getLogger(__name__)


class RunnerBoardView(Protocol):
    """What a hall link reads of a runner's board."""

    @property
    def info(self) -> BoardInfo: ...

    @property
    def ready(self) -> bool: ...


class FedRunner(Protocol):
    """What a hall link needs of a table's runner (a
    :class:`~service.table_runner.TableRunner` is one)."""

    @property
    def id(self) -> str: ...

    @property
    def port(self) -> str | None: ...

    @property
    def board(self) -> RunnerBoardView | None: ...

    @property
    def link(self) -> Connection: ...

    @property
    def board_listeners(self) -> list[Callable[[BoardEvent], None]]: ...


def eboard_state(link: Connection, board_ready: bool) -> EboardState:
    """A runner's link as LiveChess names a board's state."""
    if link is Connection.UP:
        return EboardState.ACTIVE if board_ready else EboardState.NOTRESPONDING
    if link is Connection.CONNECTING:
        return EboardState.INACTIVE
    return EboardState.NOTRESPONDING


class HallBoardLink:
    """One hall table's board as the API shows it (a
    :class:`~service.play.server.FeedLink`): the runner's board events go to the eboard
    as they happen.  ``group``: every link of the hall (to keep names unique)."""

    def __init__(
        self, runner: FedRunner, *, settle: float, group: Sequence[HallBoardLink] = ()
    ) -> None:
        self.runner = runner
        self.group = group
        self.eboard = Eboard(f"table-{runner.id}", runner.port or "", settle=settle)
        self.eboard.state = EboardState.INACTIVE
        self.on_change: Callable[[], None] = lambda: None
        self._serial: str | None = None

    @property
    def serialnr(self) -> str:
        return self.eboard.serialnr

    def start(self) -> None:
        self.runner.board_listeners.append(self._event)

    async def stop(self) -> None:
        with contextlib.suppress(ValueError):
            self.runner.board_listeners.remove(self._event)

    def setup_done(self) -> None:
        """Nothing to light: the hall's LED driver keeps the board's LEDs."""

    def tick(self, now: float) -> None:
        self.refresh()
        self.eboard.tick(now)
        self.on_change()

    def refresh(self) -> None:
        """Take the board's name and state from the runner."""
        runner = self.runner
        board = runner.board
        self.eboard.state = eboard_state(runner.link, board is not None and board.ready)
        if board is None or runner.link is not Connection.UP:
            return
        serial = board.info.serial or board.info.long_serial
        if not serial or serial == self._serial:
            return
        self._serial = serial
        taken = {link.eboard.serialnr for link in self.group if link is not self}
        name = serial if serial not in taken else f"{serial}-{runner.id}"
        if name != self.eboard.serialnr:
            log.info("table %s: board %s", runner.id, name)
            self.eboard.serialnr = name

    def _event(self, event: BoardEvent) -> None:
        self.refresh()
        self.eboard.feed(event)
        self.on_change()


class HallPlay:
    """The play API over ``runners`` (a hall's tables, in their order): a
    :class:`~service.play.server.PlayServer` of :class:`HallBoardLink` s and their ticker.
    Start it before the hall opens its boards, so that each eboard reads its board from
    its first event."""

    def __init__(
        self,
        runners: Iterable[FedRunner],
        *,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        origins: Iterable[str] = (),
        settle: float = PLAY_SETTLE,
    ) -> None:
        self.links: list[HallBoardLink] = []
        for runner in runners:
            self.links.append(HallBoardLink(runner, settle=settle, group=self.links))
        policy = OriginPolicy([*DEFAULT_ORIGINS, *origins])
        self.server = PlayServer(self.links, host=host, port=port, origins=policy)
        self._ticker: asyncio.Task[None] | None = None

    async def start(self) -> str:
        """Start serving; returns the address.  Raises
        :class:`~service.play.server.PlayServerError` when the port is taken."""
        address = await self.server.start()
        self._ticker = asyncio.create_task(self._tick(), name="play-hall-ticks")
        return address

    async def close(self) -> None:
        await cancel_and_wait(self._ticker)
        self._ticker = None
        await self.server.close()

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(TICK)
            now = time.monotonic()
            for link in self.links:
                link.tick(now)
