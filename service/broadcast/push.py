"""Rounds pushed to a lichess broadcast (``[broadcast]`` in the config).

lichess takes a round's games on ``POST {url}/api/broadcast/round/{id}/push`` (a Bearer token
with scope ``study:write``; the body a multi-game PGN of at most 512 KiB) and answers per
game: ``{"games": [{"tags": {...}, "moves": N} | {"tags": {...}, "error": "..."}]}``.

The :class:`Pusher` listens to the feeds (:mod:`service.broadcast.hall_feeds`) of a
:class:`PushSource`: the hall of ``dgt-service run``, or the read replica of every edge's
tables at the centre (``dgt-service central``): the games, their order and their PGN are the
same there.  A committed change only marks its table (nothing else runs on the source's
turn).  Its own task
then, for each configured round:

* notes each lichess-ready game's text when it changed (the delay: a game is pushed as it
  stood ``delay`` seconds ago, so each text waits that long before it can be shown);
* pushes the round's games, all of them in the feeds' one order, when what would be shown
  differs from what lichess last accepted, at most every ``interval`` seconds, one push in
  flight; over 512 KiB the games are cut into several bodies (never a game), and only
  bodies that changed are sent;
* reads the answer per game and keeps it (:meth:`Pusher.status`, ``GET /api/broadcast``);
  a refused game is logged once per refusal;
* when lichess cannot be reached (no connection, time-out, 429, 5xx) it tries again with
  back-off (1 s doubling to 60 s); nothing is lost, as the next push carries the state of
  every game then.  A push refused whole (401 bad token, 404 unknown round, a round with an
  upstream URL) is tried again after 60 s.

Games lichess cannot read (20-chess, realtime), games whose player is unnamed and games
after the hundredth of a round (lichess shows 100 a round) are never pushed; they are listed
as flagged.  The token is read once (:func:`read_token`) and never
logged or shown.

The rounds can be changed while the service runs (:meth:`Pusher.configure_round`, the admin
page's broadcast panel through ``POST /api/admin/broadcast``): a round's lichess round id,
whether it is pushed (a round switched off shows state ``off`` and pushes nothing until it is
switched on again, which pushes it whole), its delay, or a round added.  A new lichess round id
starts that round afresh (nothing counts as shown there yet).  Each round changed so is kept
beside the database (``DB.broadcast.json``, :mod:`service.broadcast.kept_rounds`: its
lichess round id, on/off and delay, never the token) and applied over the config's
``[broadcast]`` at the next start: the admin's last change wins until the file is deleted.
A hall keeps them beside its store; another source names its database (the centre's).

An event pushes from one place.  Two pushers of the same lichess round (an edge's and the
centre's) each push the games *they* see: each push replaces the round's games on lichess,
so the round flickers between an edge's tables and all tables, and each edge's push takes
the other edges' games away.  With several halls, push from the centre (it sees every
edge's games, in one order); an edge pushes only a round of its own tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import time
import weakref
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import aiohttp

from dgt.tasks import cancel_and_wait, cancelling
from service.broadcast.hall_feeds import FeedHall, HallFeeds, hall_feeds
from service.broadcast.kept_rounds import kept_path, load_rounds, save_rounds
from service.broadcast.lichess_pgn import MAX_PUSH_BYTES, FeedEntry, joined, pack
from service.broadcast.round_setting import RoundChange
from service.broadcast.round_setting import RoundSettingError as RoundSettingError
from service.broadcast.round_setting import round_change as round_change
from service.config import BroadcastConfig, BroadcastRound, ConfigError
from service.hall import Hall

logger = logging.getLogger(__name__)

BACKOFF = (1.0, 60.0)
"""Seconds before trying an unreachable lichess again: first, and the cap (doubling)."""
MAX_GAMES = 100
"""Games lichess shows in a round at most (a push that would make more chapters is refused
whole): the games after the first hundred, in the feeds' order, are not pushed."""
REFUSED_RETRY = 60.0
"""Seconds before trying again a push lichess refused whole."""
PUSH_TIMEOUT = 20.0
"""Seconds a push may take before lichess counts as unreachable."""
USER_AGENT = "dgt-service (DGT board relay)"


class PushError(Exception):
    """A push that did not go through."""


class LichessUnreachable(PushError):
    """No answer, a time-out, or lichess busy (429, 5xx): tried again with back-off."""


class LichessRefused(PushError):
    """lichess refused the push whole (bad token, unknown round, upstream URL...)."""


class PushSource(FeedHall, Protocol):
    """What the pusher reads: the games its feeds read (:class:`FeedHall`), as of the
    source's last commit (:meth:`settle` first commits what is queued, where there is a
    queue).  :class:`service.hall.Hall` and
    :class:`service.scaleout.replica.ReplicaHall` are push sources."""

    def settle(self) -> None: ...


class PushClient(Protocol):
    """Where pushes go (lichess, or a stand-in in the tests)."""

    async def push(self, lichess_id: str, body: bytes) -> list[dict[str, Any]]:
        """Push ``body``; the per-game answers.  Raises :class:`PushError`."""
        ...

    async def close(self) -> None: ...


def read_token(config: BroadcastConfig, environ: Mapping[str, str] | None = None) -> str:
    """The lichess token from the file or the environment variable the config names.
    Raises :class:`ConfigError` (the message never holds the token)."""
    environ = os.environ if environ is None else environ
    if config.token_file is not None:
        try:
            token = config.token_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise ConfigError(
                f"[broadcast] token_file: cannot read {config.token_file}: {reason}"
            ) from None
        where = str(config.token_file)
    else:
        name = config.token_env or ""
        token = environ.get(name, "").strip()
        where = f"${name}"
    if not token or any(c.isspace() for c in token):
        raise ConfigError(
            f"[broadcast]: no lichess token in {where} (a token with scope study:write, "
            "alone on one line)"
        )
    return token


class LichessClient:
    """Pushes to lichess over HTTPS with the Bearer token."""

    def __init__(self, url: str, token: str, *, timeout: float = PUSH_TIMEOUT) -> None:
        self.url = url.rstrip("/")
        self.__token = token
        self.timeout = timeout
        self._session: aiohttp.ClientSession | None = None

    def __repr__(self) -> str:
        return f"LichessClient({self.url!r}, token=<hidden>)"

    async def push(self, lichess_id: str, body: bytes) -> list[dict[str, Any]]:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                headers={"User-Agent": USER_AGENT},
            )
        address = f"{self.url}/api/broadcast/round/{lichess_id}/push"
        headers = {
            "Authorization": f"Bearer {self.__token}",
            "Content-Type": "text/plain; charset=utf-8",
        }
        try:
            async with self._session.post(address, data=body, headers=headers) as response:
                status = response.status
                try:
                    answer: Any = await response.json(content_type=None)
                except ValueError:
                    answer = None
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise LichessUnreachable(_one_line(exc) or type(exc).__name__) from None
        if status == 429 or status >= 500:
            raise LichessUnreachable(f"lichess answered {status}")
        if status != 200:
            said = answer.get("error") if isinstance(answer, dict) else None
            raise LichessRefused(f"lichess answered {status}: {str(said or 'no reason')[:200]}")
        games = answer.get("games") if isinstance(answer, dict) else None
        if not isinstance(games, list):
            raise LichessRefused("lichess answered 200 without a games list")
        return [g for g in games if isinstance(g, dict)]

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _one_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:200]


@dataclass(slots=True)
class GameAnswer:
    """lichess's last answer about one game."""

    game_id: str
    board: int
    white: str
    black: str
    moves: int | None = None
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "game": self.game_id,
            "board": self.board,
            "white": self.white,
            "black": self.black,
            "moves": self.moves,
            "error": self.error,
        }


@dataclass(slots=True)
class _Round:
    config: BroadcastRound
    history: dict[str, deque[tuple[float, str]]] = field(default_factory=dict)
    """Per game: (time noted, text) since the last one old enough to be shown."""
    order: list[str] = field(default_factory=list)
    entries: dict[str, FeedEntry] = field(default_factory=dict)
    flagged: list[FeedEntry] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)
    """The bodies lichess last accepted, in order."""
    shown: dict[str, str] = field(default_factory=dict)
    """Per game: the text lichess last got."""
    answers: dict[str, GameAnswer] = field(default_factory=dict)
    changed: dict[str, float] = field(default_factory=dict)
    """Per table: when its first move not pushed yet was committed (monotonic; inf: a
    change without a move)."""
    not_before: float = 0.0
    failures: int = 0
    state: str = "waiting"
    last_error: str | None = None
    pushes: int = 0
    bytes: int = 0
    last_push: float | None = None
    pending: bool = False
    """A committed change not read yet (or, without a delay, not pushed yet)."""
    retry: bool = False
    """The last push failed: pushed again at ``not_before``."""
    last_built: float = -math.inf
    """When what lichess should show was last worked out (monotonic)."""
    refusals_logged: set[tuple[str, str]] = field(default_factory=set)
    over_limit: list[str] = field(default_factory=list)
    """Games past the most lichess shows in a round (:data:`MAX_GAMES`): not pushed."""
    enabled: bool = True
    """Pushed (switched off on the admin page: nothing is pushed)."""
    generation: int = 0
    """Counts the changes of the lichess round id (a push under way for an older one is
    not recorded)."""


class Pusher:
    """Pushes the configured rounds of a source's games to lichess (see the module
    docstring).  The rounds changed on the admin page are kept beside ``database``; by
    default, for a :class:`~service.hall.Hall`, beside its store (``keep_rounds=False``:
    not kept)."""

    def __init__(
        self,
        hall: PushSource,
        config: BroadcastConfig,
        client: PushClient,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        max_bytes: int = MAX_PUSH_BYTES,
        max_games: int = MAX_GAMES,
        backoff: tuple[float, float] = BACKOFF,
        refused_retry: float = REFUSED_RETRY,
        keep_rounds: bool = True,
        database: Path | None = None,
    ) -> None:
        self.hall = hall
        self.config = config
        self.client = client
        self.feeds = hall_feeds(hall)
        self._clock = clock
        self._wall = wall_clock
        self.max_bytes = max_bytes
        self.max_games = max_games
        self.backoff = backoff
        self.refused_retry = refused_retry
        self._rounds = [_Round(r, pending=True) for r in config.rounds]
        if database is None and isinstance(hall, Hall):
            database = hall.store.path
        self.database: Path | None = database if keep_rounds else None
        """Beside it the rounds changed on the admin page are kept (None: not kept)."""
        self._kept: dict[str, RoundChange] = {}
        """Each round changed on the admin page (since the file was last deleted): its
        whole settings."""
        if self.database is not None:
            self._apply_kept()
        self._changed: dict[str, float] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.latencies: deque[float] = deque(maxlen=100_000)
        """Seconds from a move's commit to the push carrying it leaving (the first move of
        a table since its last push)."""
        self.read_times: deque[float] = deque(maxlen=100_000)
        """Seconds each reading of the rounds' games (or writing of the games that changed,
        as changes come) held the event loop."""
        self.push_log: deque[tuple[float, int]] = deque(maxlen=100_000)
        """(monotonic time, bytes) of every push sent."""

    # --- running ----------------------------------------------------------------------

    def start(self) -> None:
        self.feeds.listen(self._note)
        _PUSHERS[self.feeds] = self
        self._task = asyncio.get_running_loop().create_task(self._run(), name="lichess pushes")
        self._wake.set()

    async def close(self) -> None:
        self.feeds.unlisten(self._note)
        await cancel_and_wait(self._task)
        self._task = None
        await self.client.close()
        if _PUSHERS.get(self.feeds) is self:
            del _PUSHERS[self.feeds]

    def _note(self, table_id: str, when: float, moved: bool) -> None:
        """A commit changed ``table_id`` (called on the hall's turn: only noted)."""
        if moved:
            self._changed[table_id] = min(when, self._changed.get(table_id, math.inf))
        else:
            self._changed.setdefault(table_id, math.inf)
        self._wake.set()

    async def _run(self) -> None:
        while True:
            if not self._wake.is_set():
                due = self._next_due()
                timeout = None if due is None else max(0.0, due - self._clock())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout)
                if cancelling():  # a cancel that met a change: 3.11's wait_for returned it
                    raise asyncio.CancelledError
            self._wake.clear()
            try:
                await self.step()
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("lichess pushes: a step failed")
                await asyncio.sleep(1.0)

    def _due(self, rs: _Round) -> float:
        """When ``rs`` should next be pushed (inf: nothing waits): at ``not_before`` once a
        change or a failed push waits; for a delayed round, also once a noted text becomes
        old enough to be shown."""
        if not rs.enabled:
            return math.inf
        due = rs.not_before if rs.pending or rs.retry else math.inf
        delay = rs.config.delay
        if delay > 0:
            shown_at = [
                t + delay
                for history in rs.history.values()
                for t, _ in history
                if t + delay > rs.last_built
            ]
            if shown_at:
                due = min(due, max(rs.not_before, min(shown_at)))
        return due

    def _next_due(self) -> float | None:
        due = min((self._due(rs) for rs in self._rounds), default=math.inf)
        return None if due == math.inf else due

    # --- one step: note the changes, push what is due -----------------------------------

    async def step(self) -> None:
        """Note what changed and push every round that is due (one push at a time).  The
        games are read only when a round is due or waits out a delay (each change of a
        delayed round is noted with its time)."""
        now = self._clock()
        changed, self._changed = self._changed, {}
        if changed:
            started = time.perf_counter()
            self.feeds.refresh(changed)
            self.read_times.append(time.perf_counter() - started)
        for rs in self._rounds:
            for table_id, when in changed.items():
                rs.changed[table_id] = min(when, rs.changed.get(table_id, math.inf))
            if changed:
                rs.pending = True
        if any(rs.pending and (rs.config.delay > 0 or now >= rs.not_before) for rs in self._rounds):
            started = time.perf_counter()
            self._read(now)
            self.read_times.append(time.perf_counter() - started)
        for rs in self._rounds:
            if self._due(rs) <= now:
                await self._push(rs)

    def _read(self, now: float) -> None:
        """Read the configured rounds' games from the feeds."""
        wanted = {rs.config.round for rs in self._rounds}
        ready: dict[str, list[FeedEntry]] = {name: [] for name in wanted}
        flagged: dict[str, list[FeedEntry]] = {name: [] for name in wanted}
        self.hall.settle()
        every = self.feeds.entries()
        for entry in self.feeds.lichess_entries(entries=every):
            if entry.round in ready:
                ready[entry.round].append(entry)
        for entry in every:
            if entry.round in flagged and not entry.lichess_ready:
                flagged[entry.round].append(entry)
        for rs in self._rounds:
            rs.flagged = flagged[rs.config.round]
            self._capture(rs, ready[rs.config.round], now)
            if rs.config.delay > 0:
                rs.pending = False  # each change is a noted text now, shown when old enough

    def _capture(self, rs: _Round, entries: Sequence[FeedEntry], now: float) -> None:
        rs.order = []
        gone = set(rs.history) - {e.game_id for e in entries}
        for game_id in gone:  # out of the round or no longer lichess-ready
            del rs.history[game_id]
        for entry in entries:
            rs.order.append(entry.game_id)
            rs.entries[entry.game_id] = entry
            history = rs.history.setdefault(entry.game_id, deque())
            if not history or history[-1][1] != entry.text:
                history.append((now, entry.text))

    def _visible(self, rs: _Round) -> list[tuple[str, str]]:
        """(game id, text) of each game as it stood ``delay`` seconds ago, in order."""
        limit = self._clock() - rs.config.delay
        out: list[tuple[str, str]] = []
        for game_id in rs.order:
            history = rs.history[game_id]
            while len(history) > 1 and history[1][0] <= limit:
                history.popleft()
            if history[0][0] <= limit:
                out.append((game_id, history[0][1]))
        return out

    # --- changed while running (the admin page) ----------------------------------------

    def configure_round(self, change: RoundChange) -> None:
        """Change a round's lichess round id, switch it on or off, change its delay, or add
        a round (which needs its lichess round id); the round's settings are then kept
        beside the database (:mod:`service.broadcast.kept_rounds`) for the next start.
        Raises :class:`RoundSettingError`."""
        rs = self._change(change)
        logger.info(
            "round %s: pushed to lichess round %s, %s, delay %g s (changed on the admin page)",
            rs.config.round,
            rs.config.lichess_id,
            "on" if rs.enabled else "off",
            rs.config.delay,
        )
        self._kept[rs.config.round] = RoundChange(
            rs.config.round, rs.config.lichess_id, rs.enabled, rs.config.delay
        )
        if self.database is not None:
            save_rounds(self.database, self._kept.values())
        self._wake.set()

    def _change(self, change: RoundChange) -> _Round:
        rs = next((r for r in self._rounds if r.config.round == change.round), None)
        if rs is None:
            if change.lichess_id is None:
                raise RoundSettingError(
                    f"round {change.round!r} is not pushed yet: give its lichess round id"
                )
            config = BroadcastRound(change.round, change.lichess_id, change.delay or 0.0)
            rs = _Round(config, pending=True)
            self._rounds.append(rs)
        elif change.lichess_id is not None and change.lichess_id != rs.config.lichess_id:
            rs.config = replace(rs.config, lichess_id=change.lichess_id)
            rs.generation += 1
            rs.sent, rs.shown, rs.answers = [], {}, {}
            rs.refusals_logged = set()
            rs.state, rs.last_error, rs.failures = "waiting", None, 0
            rs.retry, rs.not_before = False, 0.0
        if change.delay is not None and change.delay != rs.config.delay:
            rs.config = replace(rs.config, delay=change.delay)
        if change.enabled is not None:
            rs.enabled = change.enabled
        rs.pending = True
        return rs

    def _apply_kept(self) -> None:
        """Apply the rounds kept from the admin page over the config's (at start)."""
        assert self.database is not None
        for change in load_rounds(self.database):
            configured = next((r for r in self.config.rounds if r.round == change.round), None)
            rs = self._change(change)
            self._kept[change.round] = change
            if configured is None:
                what = "added on the admin page"
            elif (configured.lichess_id, configured.delay, True) == (
                rs.config.lichess_id, rs.config.delay, rs.enabled
            ):  # fmt: skip
                continue
            else:
                what = (
                    f"the admin page's settings over the config's (lichess round "
                    f"{configured.lichess_id}, on, delay {configured.delay:g} s)"
                )
            logger.info(
                "round %s: pushed to lichess round %s, %s, delay %g s: %s, kept in %s",
                rs.config.round,
                rs.config.lichess_id,
                "on" if rs.enabled else "off",
                rs.config.delay,
                what,
                kept_path(self.database).name,
            )

    async def _push(self, rs: _Round) -> None:
        rs.last_built = self._clock()
        if rs.config.delay <= 0:
            rs.pending = False
        visible = self._visible(rs)
        rs.over_limit = [game_id for game_id, _ in visible[self.max_games :]]
        visible = visible[: self.max_games]
        texts = [text for _, text in visible]
        parts = pack(texts, self.max_bytes)
        bodies = [joined(texts[i] for i in part) for part in parts]
        if bodies == rs.sent:
            rs.retry = False
            return
        sent = list(rs.sent)
        for index, (part, body) in enumerate(zip(parts, bodies, strict=True)):
            if index < len(sent) and sent[index] == body:
                continue
            data = body.encode()
            leaving = self._clock()
            generation = rs.generation
            try:
                answers = await self.client.push(rs.config.lichess_id, data)
            except LichessUnreachable as exc:
                if generation != rs.generation:
                    return  # for a lichess round no longer pushed to
                rs.sent = sent  # the parts before it went through
                self._failed(rs, f"lichess unreachable: {exc}", unreachable=True)
                return
            except LichessRefused as exc:
                if generation != rs.generation:
                    return
                rs.sent = sent
                self._failed(rs, str(exc), unreachable=False)
                return
            if generation != rs.generation:
                return
            rs.pushes += 1
            rs.bytes += len(data)
            rs.last_push = self._wall()
            self.push_log.append((leaving, len(data)))
            for i in part:
                game_id, text = visible[i]
                if rs.shown.get(game_id) != text:
                    when = rs.changed.get(_table_of(rs.entries[game_id]), math.inf)
                    if when != math.inf:
                        self.latencies.append(max(0.0, leaving - when))
                rs.shown[game_id] = text
            self._read_answers(rs, [visible[i][0] for i in part], answers)
            if index < len(sent):
                sent[index] = body
            else:
                sent.append(body)
        rs.sent = bodies
        if rs.failures:
            logger.info("round %s: lichess takes pushes again", rs.config.round)
        rs.failures = 0
        rs.state = "ok"
        rs.last_error = None
        rs.changed.clear()
        rs.retry = False
        rs.not_before = self._clock() + self.config.interval

    def _failed(self, rs: _Round, message: str, *, unreachable: bool) -> None:
        rs.failures += 1
        if unreachable:
            first, cap = self.backoff
            wait = min(cap, first * 2 ** (rs.failures - 1))
        else:
            wait = self.refused_retry
        if message != rs.last_error:
            logger.warning(
                "round %s: push to lichess round %s failed: %s (trying again in %.0f s)",
                rs.config.round,
                rs.config.lichess_id,
                message,
                wait,
            )
        rs.state = "retrying" if unreachable else "refused"
        rs.last_error = message
        rs.retry = True
        rs.not_before = self._clock() + wait

    def _read_answers(self, rs: _Round, game_ids: list[str], answers: list[dict[str, Any]]) -> None:
        by_id: dict[str, dict[str, Any]] = {}
        for index, answer in enumerate(answers):
            tags = answer.get("tags")
            game_id = tags.get("GameId") if isinstance(tags, dict) else None
            if not isinstance(game_id, str) and index < len(game_ids):
                game_id = game_ids[index]
            if isinstance(game_id, str):
                by_id[game_id] = answer
        for game_id in game_ids:
            entry = rs.entries[game_id]
            answer = by_id.get(game_id, {"error": "no answer from lichess about this game"})
            error = answer.get("error")
            moves = answer.get("moves")
            result = GameAnswer(
                game_id,
                entry.board,
                entry.tags.get("White", "?"),
                entry.tags.get("Black", "?"),
                moves if isinstance(moves, int) else None,
                str(error)[:300] if error is not None else None,
            )
            rs.answers[game_id] = result
            if result.error is not None and (game_id, result.error) not in rs.refusals_logged:
                rs.refusals_logged.add((game_id, result.error))
                logger.warning(
                    "round %s: lichess refused game %s (board %d): %s",
                    rs.config.round,
                    game_id,
                    entry.board,
                    result.error,
                )

    # --- what the admin page shows ------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """Each round: its state, the last answer per game, refusals, flagged games."""
        rounds = []
        for rs in self._rounds:
            answers = [rs.answers[g].as_json() for g in rs.order if g in rs.answers]
            rounds.append(
                {
                    "round": rs.config.round,
                    "lichess_id": rs.config.lichess_id,
                    "delay": rs.config.delay,
                    "state": rs.state if rs.enabled else "off",
                    "error": rs.last_error,
                    "pushes": rs.pushes,
                    "bytes": rs.bytes,
                    "last_push": rs.last_push,
                    "games": answers,
                    "refused": [a for a in answers if a["error"] is not None],
                    "flagged": [
                        {
                            "game": e.game_id,
                            "board": e.board,
                            "white": e.tags.get("White", ""),
                            "black": e.tags.get("Black", ""),
                            "why": [str(p) for p in e.problems],
                        }
                        for e in rs.flagged
                    ]
                    + [
                        {
                            "game": game_id,
                            "board": rs.entries[game_id].board,
                            "white": rs.entries[game_id].tags.get("White", ""),
                            "black": rs.entries[game_id].tags.get("Black", ""),
                            "why": ["over-limit"],
                        }
                        for game_id in rs.over_limit
                        if game_id in rs.entries
                    ],
                }
            )
        return {"configured": True, "url": self.config.url, "rounds": rounds}


def _table_of(entry: FeedEntry) -> str:
    """The table of an entry (its game id is ``TABLE-NUMBER`` or ``TABLE-NUMBER.K``)."""
    return entry.game_id.rsplit("-", 1)[0]


_PUSHERS: weakref.WeakKeyDictionary[HallFeeds, Pusher] = weakref.WeakKeyDictionary()


def feeds_pusher(feeds: HallFeeds) -> Pusher | None:
    """The running pusher reading ``feeds`` (those of one source), if any."""
    return _PUSHERS.get(feeds)


def pusher_of(source: PushSource) -> Pusher | None:
    """The running pusher of ``source`` (a hall, a read replica), if any."""
    return feeds_pusher(hall_feeds(source))
