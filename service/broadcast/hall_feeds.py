"""The hall's games in the one order every feed keeps, and who is told when they change.

:class:`FeedOrder` gives each game a place once, when the feeds first see it, and never
moves it: a new game is appended in the order it began, never inserted among the games
already shown (lichess's relay matches a polled game to its chapter first by ``GameId``,
then by position in the round; an insertion sent games to the wrong chapters).  In the
lichess feed a game is placed when it first is lichess-ready (its players named).  The games
a hall rebuilt at start are placed by game number, then board (every board's first game
before any second one).

:class:`HallFeeds` reads the hall for the feeds (the web's PGN feeds, the lichess pusher,
the LiveChess folder): it subscribes to the hall once, notes new games as their tables'
updates are committed, keeps each finished game's text (it no longer changes) and rewrites
a table's current game only after an update of that table.  Listeners
(:meth:`HallFeeds.listen`) are told ``(table_id, monotonic time of the commit, whether it
held a move)``; they must only note it (the hall calls them after each commit).
:func:`hall_feeds` gives the one :class:`HallFeeds` of a hall.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Generic, Protocol, TypeVar, cast

from service.broadcast.lichess_pgn import FeedEntry, FeedGame, entries, tags_of
from service.config import TableConfig
from service.hall import GameEntry, Update

logger = logging.getLogger(__name__)

GameKey = tuple[str, int]
"""A game: its table's id and its number at the table."""

_NO_PGN = frozenset({"board", "clock", "connection"})
"""Output types that never change a game's PGN (the board's pieces, the clock's times, the
link): an update of only these does not have the table's game written again."""

Listener = Callable[[str, float, bool], None]
"""Told ``(table_id, monotonic time of the commit, whether a move was among its outputs)``."""


K = TypeVar("K", bound=Hashable)


class FeedTable(Protocol):
    """What the feeds read of a table (a hall's :class:`service.hall.HallTable`, a read
    replica's table)."""

    @property
    def id(self) -> str: ...

    @property
    def config(self) -> TableConfig: ...

    @property
    def games(self) -> list[GameEntry]: ...

    def game_pgn(self, entry: GameEntry) -> str: ...


class FeedHall(Protocol):
    """What the feeds read of a hall (:class:`service.hall.Hall`, a read replica)."""

    @property
    def runners(self) -> Mapping[str, FeedTable]: ...

    def games(self) -> Sequence[tuple[FeedTable, GameEntry]]: ...

    def shown(self, table_id: str) -> FeedTable: ...

    def game(self, table_id: str, number: int) -> tuple[FeedTable, GameEntry] | None: ...

    def subscribe(self, callback: Callable[[Update], None]) -> None: ...

    def unsubscribe(self, callback: Callable[[Update], None]) -> None: ...


class FeedOrder(Generic[K]):
    """Places of games in the feeds: the first noted first, never moved."""

    def __init__(self) -> None:
        self._places: dict[K, int] = {}

    def note(self, keys: Iterable[K]) -> None:
        """Give each of ``keys`` not placed yet the next place, in the order given."""
        for key in keys:
            if key not in self._places:
                self._places[key] = len(self._places)

    def place(self, key: K) -> int:
        """The place of ``key`` (noting it last if it is new)."""
        self.note((key,))
        return self._places[key]

    def __len__(self) -> int:
        return len(self._places)


class HallFeeds:
    """The hall's games in feed order (see the module docstring)."""

    def __init__(self, hall: FeedHall) -> None:
        # a proxy: the registry's value must not keep its (weak) key alive
        self.hall: FeedHall = cast(FeedHall, weakref.proxy(hall))
        self.order: FeedOrder[GameKey] = FeedOrder()
        self.ready_order: FeedOrder[str] = FeedOrder()
        """Places in the lichess feed: a game (segment) is appended there when it first is
        lichess-ready (a game gets its players' names after it was placed in the order)."""
        self._listeners: list[Listener] = []
        self._dirty: set[str] = set(hall.runners)
        self._games: dict[GameKey, FeedGame] = {}
        self._entries: dict[GameKey, list[FeedEntry]] = {}
        self._known: dict[str, int] = {}
        boards = self.boards()
        rebuilt = [(runner.id, entry.number) for runner, entry in hall.games()]
        rebuilt.sort(key=lambda key: (key[1], boards.get(key[0], 0), key[0]))
        self.order.note(rebuilt)
        for table_id, number in rebuilt:
            self._known[table_id] = max(self._known.get(table_id, 0), number)
        hall.subscribe(self._updated)

    def close(self) -> None:
        self.hall.unsubscribe(self._updated)

    # --- change notes (called by the hall after each commit) --------------------------

    def listen(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def unlisten(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _updated(self, update: Update) -> None:
        table_id = update.table_id
        if any(event.get("type") not in _NO_PGN for event in update.events):
            self._dirty.add(table_id)
        runner = self.hall.runners.get(table_id)
        if runner is not None and len(runner.games) > self._known.get(table_id, 0):
            known = self._known.get(table_id, 0)
            self.order.note((table_id, entry.number) for entry in runner.games[known:])
            self._known[table_id] = len(runner.games)
        now = time.monotonic()
        moved = any(event.get("type") == "move" for event in update.events)
        for listener in list(self._listeners):
            try:
                listener(table_id, now, moved)
            except Exception:
                logger.exception("feed listener failed")

    # --- reading ----------------------------------------------------------------------

    def boards(self) -> dict[str, int]:
        """Each table's board number: its config's ``board``, else its position."""
        return {
            runner.id: runner.config.board if runner.config.board is not None else position
            for position, runner in enumerate(self.hall.runners.values(), 1)
        }

    def games(self, round_name: str | None = None) -> list[FeedGame]:
        """Every game (of ``round_name``), in feed order, as of the last commit."""
        boards = self.boards()
        dirty, self._dirty = self._dirty, set()
        found: list[tuple[int, FeedGame]] = []
        for runner, entry in self.hall.games():
            key = (runner.id, entry.number)
            game = self._game(runner, entry, boards.get(runner.id, 0), runner.id in dirty)
            if game is None or (round_name is not None and game.round != round_name):
                continue
            found.append((self.order.place(key), game))
        found.sort(key=lambda item: item[0])
        return [game for _, game in found]

    def refresh(self, table_ids: Iterable[str]) -> None:
        """Write again now the games of those of ``table_ids`` that changed since (a reader
        that calls this as changes come spreads the writing over time instead of doing
        every table's at its next read)."""
        boards: dict[str, int] | None = None
        for table_id in table_ids:
            if table_id not in self._dirty or table_id not in self.hall.runners:
                continue
            boards = boards if boards is not None else self.boards()
            self._dirty.discard(table_id)
            runner = self.hall.shown(table_id)
            for entry in runner.games:
                self.order.note(((table_id, entry.number),))
                self._game(runner, entry, boards.get(table_id, 0), True)

    def entries(self, round_name: str | None = None) -> list[FeedEntry]:
        """The feed entries of :meth:`games` (a game's segments one after another)."""
        out: list[FeedEntry] = []
        for game in self.games(round_name):
            out.extend(self._entries[(game.table_id, game.number)])
        return out

    def lichess_entries(
        self, round_name: str | None = None, entries: list[FeedEntry] | None = None
    ) -> list[FeedEntry]:
        """The lichess-ready entries (of ``entries`` when given, else read), each where it
        was first ready: appended, never inserted among those already shown."""
        if entries is None:
            entries = self.entries(round_name)
        ready = [e for e in entries if e.lichess_ready]
        self.ready_order.note(e.game_id for e in ready)
        return sorted(ready, key=lambda e: self.ready_order.place(e.game_id))

    def entries_of(self, game: FeedGame) -> list[FeedEntry]:
        """The feed entries of a game :meth:`games` gave."""
        return self._entries[(game.table_id, game.number)]

    def game_entries(self, table_id: str, number: int) -> list[FeedEntry] | None:
        """The feed entries of game ``number`` of a table (None: no such game)."""
        found = self.hall.game(table_id, number)
        if found is None:
            return None
        runner, entry = found
        board = self.boards().get(runner.id, 0)
        self.order.note(((runner.id, entry.number),))
        if self._game(runner, entry, board, runner.id in self._dirty) is None:
            return None
        return self._entries[(runner.id, entry.number)]

    def _game(
        self, runner: FeedTable, entry: GameEntry, board: int, dirty: bool
    ) -> FeedGame | None:
        """The game of ``entry``, written again only when its table changed."""
        key = (runner.id, entry.number)
        game = self._games.get(key)
        finished = entry.pgn is not None
        same = game is not None and game.board == board and game.finished == finished
        if game is not None and same and not dirty:
            return game
        try:
            pgn = runner.game_pgn(entry)
        except Exception:
            logger.exception("table %s: cannot write the PGN", runner.id)
            return game
        if game is not None and same and game.pgn == pgn:
            return game
        game = FeedGame(
            f"{runner.id}-{entry.number}",
            runner.id,
            entry.number,
            board,
            tags_of(pgn).get("Round", entry.round),
            pgn,
            finished,
        )
        self._games[key] = game
        self._entries[key] = entries(game)
        return game


_FEEDS: weakref.WeakKeyDictionary[FeedHall, HallFeeds] = weakref.WeakKeyDictionary()


def hall_feeds(hall: FeedHall) -> HallFeeds:
    """The one :class:`HallFeeds` of ``hall`` (made on first use)."""
    feeds = _FEEDS.get(hall)
    if feeds is None:
        feeds = _FEEDS[hall] = HallFeeds(hall)
    return feeds
