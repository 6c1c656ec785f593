"""One game of realtime chess at one board: :class:`RealtimeTable`.

The realtime counterpart of :class:`service.table.Table`, implementing the same contract
(:class:`service.table.contract.TableLike`), so the hall, the web and the LEDs run it
alike.  Rules: the realtime chess rules (cited as ``realtime`` and the rule's number); the
game is kept by :mod:`service.variants.realtime` in virtual
time, the board is read by :class:`service.recognize.realtime.RealtimeRecognizer`.

Pure and deterministic like ``Table``: board events, ticks and admin commands in (each with
its time), table events out; replaying the inputs rebuilds the table.

What differs from the turn-based table:

* no turns, so no touch-move or clock-press rules and no arbiter claims: the rulings are
  the model's -- a move refused (rules 3.1, 3.3-3.6, a piece still moving), a capture by
  collision (4.2 in-move, 4.3 in-move capture), a double dodge (4.4) -- each a ``ruling``
  event; captures on arrival (4.1) and en passant are ``capture`` events;
* what the board must set right (a refused move put back, a piece captured by collision
  taken off) is a ``corrections`` event and ``state()["realtime"]["corrections"]``; a DGT
  3000, if there is one, shows the first of them (``PUT E4``, ``OFF E4``, ``E4 TO E2``)
  until it is done, and the LEDs light its squares (:mod:`service.leds`);
* time alone changes the board: :meth:`RealtimeTable.tick` reports each arrival
  (``arrival``) and each delay that ran out (``delay_end``), so viewers update at once;
* the clock is not run: realtime chess has no clock times, only the five-minute rule
  (5.4), which the model keeps;
* settings: those of ``Table`` plus ``tick`` (seconds per tick, 0.1 to 1; rule 6).  The
  classical start (rule 1.1) unless ``start`` gives a FEN (problems, tests); a game starts
  when its start position stands on the board, or on the ``start`` command.

PGN: ``Variant "Realtime"``, ``RealtimeTick``; the moves in the order they started, each
numbered on its own (``1. e2-e4 2... e7-e5``: there are no turns to pair them), with a
comment ``{[%vt 1.250] arrives 3.250}``: the virtual start time (the lift) and the arrival,
seconds from the start of the game.  Rulings (refused moves, collisions) are comments at
the time they happened, with the same ``[%vt]``.  A move refused after it was recorded is
left out of the moves and named in a comment.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

import chess

from dgt.events import BoardEvent, BoardSnapshot, SquareChanged
from dgt.protocol.constants import Piece
from dgt.recording import event_to_json
from service.pgn import (
    PgnMove,
    game_text,
    pgn_date,
    player_tags,
    realtime_movetext,
    seven_tag_roster,
)
from service.recognize.events import Amend, Lift, NewGame, Place, Result
from service.recognize.realtime import (
    Collision,
    Corrections,
    RealtimeRecognizer,
    Refused,
    StartedMove,
    correction_json,
)
from service.table.admin import (
    REALTIME_COMMANDS,
    AdminCommand,
    admin_command,
    end_arguments,
    next_players_event,
    player_changes,
    players_now,
    players_wait,
)
from service.table.change_log import ChangeLog
from service.table.clock_keeper import TEXT_WIDTH, ClockOrder, OrderKind, result_text
from service.table.events import (
    Link,
    Phase,
    TableEvent,
    clock_present_after,
    event_data,
    link_after,
    players_event,
)
from service.table.game import ENDED_KEPT
from service.table.quick_clock import QuickClock
from service.table.record import side_name
from service.table.settings import (
    RealtimeSettings,
    TableError,
    TableSettings,
    check_table_id,
    clear_replaced_details,
    details_json,
    details_summary,
    next_players_shown,
    realtime_settings,
    start_position,
)
from service.table.views import placement_fen
from service.variants.base import WHITE, SquareMap, StartPosition
from service.variants.realtime import (
    DELAY_TICKS,
    DRAW_AFTER,
    Correction,
    RealtimeGame,
    realtime_start,
)

__all__ = ["RealtimeSettings", "RealtimeTable", "clock_text", "realtime_settings"]


_SUMMARY_KEYS = (
    "id", "phase", "fen", "board", "orientation", "last_move", "clocks", "scores", "result",
    "reason", "link",
)  # fmt: skip
"""The parts of the state the overview shows (as :meth:`Table.summary` has them)."""


def clock_text(item: Correction) -> str:
    """A correction as the DGT 3000 shows it (at most 8 characters): ``PUT E4``,
    ``OFF E4``, ``E4 TO E2`` (move the piece on e4 back to e2)."""
    square = chess.square_name(item.square).upper()
    if item.kind == "move" and item.from_square is not None:
        return f"{chess.square_name(item.from_square).upper()} TO {square}"
    if item.kind == "remove":
        return f"OFF {square}"
    return f"PUT {square}"


@dataclass(slots=True)
class _Entry:
    """A move of the record: the recogniser's :class:`StartedMove` as amended since, and
    why it no longer stands (``refused``, empty while it stands)."""

    move: StartedMove
    refused: str = ""

    def to_json(self, number: int) -> dict[str, Any]:
        move = self.move
        data: dict[str, Any] = {
            "ply": move.ply,
            "number": number,
            "side": "white" if move.side else "black",
            "san": move.san,
            "uci": move.uci,
            "final": True,
            "clock_seconds": None,
            "start": move.start,
            "arrives": move.arrives,
        }
        if self.refused:
            data["refused"] = self.refused
        return data


class RealtimeTable:
    """One game of realtime chess at one board (see the module docstring).

    ``settings``: :class:`RealtimeSettings`, :class:`TableSettings` or a mapping (the
    hall's); ``draw_after``: seconds without a capture that draw (rule 5.4; tests shorten
    it); ``epoch``: the UNIX time of table time 0 when the times fed are wall-clock (the
    PGN's ``Date``, as :class:`service.table.Table`)."""

    def __init__(
        self,
        table_id: str,
        settings: RealtimeSettings | TableSettings | Mapping[str, Any] | None = None,
        *,
        draw_after: float = DRAW_AFTER,
        epoch: float | None = None,
    ) -> None:
        self.id = check_table_id(table_id)
        self.quick = QuickClock()
        """Never armed: every clock report goes to the table, every tick is due (pieces
        travel in time)."""
        self._epoch = epoch
        self.settings = realtime_settings(settings)
        self._draw_after = draw_after
        self._raw: list[Piece] = [Piece.EMPTY] * 64
        self._link = Link.UNKNOWN
        self._clock_present = False
        self._orders: list[ClockOrder] = []
        self._shown: str | None = None
        self._recognizer = RealtimeRecognizer(
            self.settings.tick, draw_after=draw_after, start=self._start()
        )
        self._record: list[_Entry] = []
        self._ended: deque[str] = deque(maxlen=ENDED_KEPT)
        self._ended_changes: deque[list[dict[str, Any]]] = deque(maxlen=ENDED_KEPT)
        """The change log of each game in ``_ended``, in the same order."""
        self._next_players: dict[str, Any] = {}
        """Players named while the game under way was the record: they play the next."""
        self._change_log = ChangeLog()
        """What admin commands changed in the game under way (cleared at a new game)."""
        self._ending: str | None = None
        """The PGN of the game a ``start`` command replaces, as it read before the command
        changed the settings."""
        self._reset()

    def __getnewargs_ex__(self) -> tuple[tuple[str, RealtimeSettings], dict[str, Any]]:
        """What unpickling passes to ``__new__`` (a read replica pickles tables): the compiled
        build's ``__new__`` runs ``__init__``, which takes these; the state pickled then sets
        every attribute.  Plain Python's ``__new__`` ignores them."""
        return (self.id, self.settings), {"draw_after": self._draw_after, "epoch": self._epoch}

    def _reset(self) -> None:
        if self._record:  # a game with moves is replaced: keep its PGN
            self._ended.append(self._ending or self.pgn())
            self._ended_changes.append(self._change_log.to_json())
        self._ending = None
        self._phase = Phase.SETUP
        self._date: str | None = None
        self._record = []
        self._notes: list[tuple[float, str]] = []  # (virtual seconds, text) for the PGN
        self._rulings: list[dict[str, Any]] = []
        self._result = "*"
        self._reason = ""
        self._as_of = 0.0

    def _start(self) -> StartPosition:
        fen = self.settings.start
        return realtime_start() if fen is None else start_position(fen)

    # -- the view others read ----------------------------------------------------------------

    @property
    def game(self) -> RealtimeGame | None:
        return self._recognizer.game

    @property
    def presence_only(self) -> bool:
        return bool(self._recognizer.presence_only)

    @property
    def tick_seconds(self) -> float:
        return self.settings.tick

    def physical(self) -> SquareMap:
        """What stands on each square, in the game's frame (``*`` on a presence-only board)."""
        return self._recognizer.board()

    def history(self) -> chess.Board | None:
        """No chess history: realtime chess has no turns (the LEDs follow the corrections)."""
        return None

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def result(self) -> str:
        return self._result

    def corrections(self) -> list[dict[str, Any]]:
        """What to set right on the board now, in order (JSON)."""
        if self._phase is not Phase.PLAYING:
            return []
        return [correction_json(item) for item in self._recognizer.corrections]

    # -- inputs --------------------------------------------------------------------------------

    def feed(self, event: BoardEvent) -> list[TableEvent]:
        """One driver event; returns what it caused (the event itself first)."""
        t = event.time
        self._as_of = max(self._as_of, t)
        out = [TableEvent(t, "board", event_to_json(event))]
        self._link = link_after(self._link, event)
        self._clock_present = clock_present_after(self._clock_present, event)
        if isinstance(event, BoardSnapshot):
            self._raw = list(event.squares)
        elif isinstance(event, SquareChanged):
            self._raw[event.square] = event.piece
        for item in self._recognizer.feed(event):
            out += self._recognized(item)
        self._show_correction()
        return out

    def tick(self, now: float) -> list[TableEvent]:
        """Time passes: pieces travel, collide and arrive; the game may end (5.4).

        Besides the rulings, an ``arrival`` event for every piece that arrived since the
        game was last worked out and a ``delay_end`` event for every delay (rule 6.3) that
        ran out, so that a viewer learns of them at once (see :meth:`_timeline`)."""
        self._as_of = max(self._as_of, now)
        game = self.game
        before = None
        if game is not None and self._phase == "playing":
            before = (game, game.now, game.delays())
        out: list[TableEvent] = []
        for item in self._recognizer.tick(now):
            out += self._recognized(item)
        if before is not None:
            out += self._timeline(*before)
        self._show_correction()
        return out

    def admin(self, command: str, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        """``start`` (settings, ``tick`` among them: a new game now), ``end`` (``result``,
        optional ``reason``), ``players`` (``white``/``black``).  Bad commands or arguments
        raise :class:`TableError`."""
        handlers: dict[AdminCommand, Callable[[Mapping[str, Any], float], list[TableEvent]]]
        handlers = {
            AdminCommand.START: self._admin_start,
            AdminCommand.END: self._admin_end,
            AdminCommand.PLAYERS: self._admin_players,
        }
        handler = handlers[admin_command(command, args, REALTIME_COMMANDS)]
        self._as_of = max(self._as_of, now)
        out = handler(args, now)
        self._show_correction()
        return out

    def change_log(self) -> list[dict[str, Any]]:
        """What admin commands changed in the game at the table (its players, its result
        by ``end``), oldest first, each with its time, the old and the new value."""
        return self._change_log.to_json()

    def take_ended_games(self) -> list[str]:
        """The PGN of each game with moves that a new game replaced since the last call,
        oldest first, as it read when it was replaced (under the settings it was played
        with).  Up to :data:`~service.table.game.ENDED_KEPT` are kept for a caller that
        does not ask."""
        ended = list(self._ended)
        self._ended.clear()
        return ended

    def take_ended_change_logs(self) -> list[list[dict[str, Any]]]:
        """The change log of each game :meth:`take_ended_games` returns (or returned last),
        in the same order: call it right after that."""
        changes = list(self._ended_changes)
        self._ended_changes.clear()
        return changes

    def take_clock_orders(self) -> list[ClockOrder]:
        """Clock commands issued since the last call (texts only: the clock is not run)."""
        orders, self._orders = self._orders, []
        return orders

    # -- outputs -------------------------------------------------------------------------------

    def _ordered(self) -> list[_Entry]:
        return sorted(self._record, key=lambda e: (e.move.start, e.move.ply))

    def moves(self) -> list[dict[str, Any]]:
        """The record in order of start time (refused moves marked ``refused``)."""
        return [entry.to_json(n) for n, entry in enumerate(self._ordered(), 1)]

    def fen(self) -> str | None:
        game = self.game
        return game.fen() if game is not None and self._phase is not Phase.SETUP else None

    def state(self, now: float | None = None) -> dict[str, Any]:
        """A JSON-able snapshot for the web: ``board`` as it should stand, ``physical`` as
        it stands, and ``realtime``: the tick, the virtual time, each piece's remaining
        delay (seconds, by square), the pieces under way, the corrections to make."""
        as_of = self._as_of if now is None else now
        game = self.game
        moves = self.moves()
        live = [m for m in moves if not m.get("refused")]
        last = live[-1] if live else None
        last_move = (
            {"from": last["uci"][:2], "to": last["uci"][2:4], "uci": last["uci"],
             "san": last["san"]}
            if last is not None else None
        )  # fmt: skip
        physical = placement_fen(self.physical())
        playing = game is not None and self._phase is not Phase.SETUP
        realtime: dict[str, Any] = {
            "tick": self.settings.tick,
            "virtual_time": (
                round(game.now - self._recognizer.origin, 3)
                if playing and game is not None
                else None
            ),
            "as_of": as_of,
            "delays": {},
            "travels": [],
            "corrections": self.corrections(),
        }
        if playing and game is not None:
            origin = self._recognizer.origin
            realtime["delays"] = {
                chess.square_name(sq): round(left, 3) for sq, left in sorted(game.delays().items())
            }
            realtime["travels"] = [
                {
                    "piece": t.piece,
                    "from": chess.square_name(t.origin),
                    "to": chess.square_name(t.target),
                    "at": chess.square_name(t.field) if t.field is not None else None,
                    "started": round(t.started - origin, 3),
                    "arrives": round(t.arrives - origin, 3),
                }
                for t in game.travels()
            ]
        return {
            "id": self.id,
            "settings": asdict(self.settings),
            "variant": "realtime",
            "phase": self._phase,
            "fen": self.fen(),
            "board": placement_fen(game.squares) if playing and game is not None else physical,
            "physical": physical,
            "orientation": "black" if self._recognizer.rotated else "white",
            "last_move": last_move,
            "moves": moves,
            "clocks": {"white": None, "black": None, "running": None, "as_of": as_of},
            "clock_present": self._clock_present,
            "scores": {},
            "claims": [],
            "irregularities": [],
            "rulings": list(self._rulings),
            "obligations": {},
            "result": self._result,
            "reason": self._reason,
            "link": self._link,
            "mismatch": [],
            "realtime": realtime,
            **next_players_shown(self._next_players),
        }

    def summary(self, now: float | None = None) -> dict[str, Any]:
        """What the overview shows of the table: the parts of :meth:`state` it shows, the
        players, round, event and variant, and the number of moves (no claims or
        irregularities in realtime chess)."""
        state = self.state(now)
        s = self.settings
        return {
            **{key: state[key] for key in _SUMMARY_KEYS},
            "white": s.white,
            "black": s.black,
            "round": s.round,
            "event": s.event,
            "variant": s.variant,
            "ply": len(state["moves"]),
            "claims": 0,
            "irregularities": 0,
            **details_summary(s),
            **next_players_shown(self._next_players),
        }

    def pgn(self) -> str:
        """The record as PGN (format: the module docstring)."""
        s = self.settings
        tags = seven_tag_roster(s, self._result, self._date)
        tags.update(player_tags(details_json(s)))
        tags.update(Variant="Realtime", TimeControl="-", RealtimeTick=f"{s.tick:g}")
        if self._reason:
            tags["Termination"] = self._reason
        start = self._start()
        if not start.classical:
            tags["SetUp"] = "1"
            tags["FEN"] = start.fen
        moves = [entry.move for entry in self._ordered() if not entry.refused]
        tokens = realtime_movetext(
            (
                (
                    move.start,
                    PgnMove(
                        number,
                        move.side == WHITE,
                        move.san,
                        (f"[%vt {move.start:.3f}] arrives {move.arrives:.3f}",),
                    ),
                )
                for number, move in enumerate(moves, 1)
            ),
            ((when, f"[%vt {when:.3f}] {text}") for when, text in self._notes),
        )
        tokens.append(self._result)
        return game_text(tags, tokens)

    # -- internals -----------------------------------------------------------------------------

    def _virtual(self, t: float) -> float:
        return round(t - self._recognizer.origin, 3)

    def _recognized(self, item: Any) -> list[TableEvent]:
        t = item.time
        data = event_data(item)
        if isinstance(item, NewGame):
            return self._begin(t, data)
        if isinstance(item, (Lift, Place)):
            return [TableEvent(t, item.type, data)]
        if self._phase is not Phase.PLAYING:
            return []
        if isinstance(item, StartedMove):
            self._record.append(_Entry(item))
            return [TableEvent(t, "move", {**data, "final": True})]
        if isinstance(item, Amend):
            for entry in self._record:
                if entry.move.ply == item.ply:
                    amended = replace(entry.move, uci=item.uci, san=item.san)
                    moved = next((m for m in self._recognizer.moves if m.ply == item.ply), None)
                    if moved is not None:
                        start = self._virtual(moved.lifted)
                        arrives = round(start + 2 * self.settings.tick, 3)
                        amended = replace(amended, start=start, arrives=arrives)
                    entry.move = amended
            return [TableEvent(t, "amend", data)]
        if isinstance(item, Refused):
            return [self._refused(item, data)]
        if isinstance(item, Collision):
            return [self._collision(item, data)]
        if isinstance(item, Corrections):
            return [TableEvent(t, "corrections", data)]
        if isinstance(item, Result):
            return self._end(item.result, item.reason, t)
        return []

    def _timeline(
        self, game: RealtimeGame, since: float, delays: Mapping[int, float]
    ) -> list[TableEvent]:
        """What happened in virtual time between ``since`` and the game's time now without
        any board event: ``arrival`` (``square``, ``piece``, ``virtual_time`` of the arrival
        and ``delay_ends``, when its delay of rule 6.3 runs out) and ``delay_end``
        (``square``, ``piece``, ``virtual_time``), in order of time.  Both are worked out
        from the game alone, so the same inputs give the same events."""
        if game is not self.game:  # a new game began meanwhile
            return []
        until = game.now
        if until <= since:
            return []
        origin = self._recognizer.origin
        delay = DELAY_TICKS * self.settings.tick
        found: list[tuple[float, int, TableEvent]] = []
        ends = {square: round(since + left, 3) for square, left in delays.items()}
        for event in game.events():
            if event.kind != "arrive" or event.square is None or not since < event.time <= until:
                continue
            ends[event.square] = round(event.time + delay, 3)  # a new delay on that square
            found.append((event.time, 0, TableEvent(event.time, "arrival", {
                "square": chess.square_name(event.square),
                "piece": event.piece,
                "virtual_time": round(event.time - origin, 3),
                "delay_ends": round(event.time + delay - origin, 3),
            })))  # fmt: skip
        standing = game.squares
        for square, end in sorted(ends.items()):
            if end > until or not standing[square]:  # still running, or the piece is gone
                continue
            found.append((end, 1, TableEvent(end, "delay_end", {
                "square": chess.square_name(square),
                "piece": standing[square],
                "virtual_time": round(end - origin, 3),
            })))  # fmt: skip
        return [event for _, _, event in sorted(found, key=lambda f: (f[0], f[1]))]

    def _refused(self, item: Refused, data: dict[str, Any]) -> TableEvent:
        who = (side_name(item.side) or "a").capitalize()
        where = f"{item.uci[:2]}-{item.uci[2:4]}"
        message = f"{who}'s move {where} is refused ({item.reason}): put the piece back"
        if item.ply is not None:
            for entry in self._record:
                if entry.move.ply == item.ply:
                    entry.refused = item.reason
                    message = (
                        f"{who}'s move {where} no longer stands ({item.reason}): an earlier "
                        "lift came first; put the piece back"
                    )
        ruling = {
            "kind": "refused",
            "article": f"realtime {item.rule}" if item.rule else "realtime",
            **{k: v for k, v in data.items() if k not in ("rule",)},
            "message": message,
        }
        self._rulings.append(ruling)
        self._notes.append((self._virtual(item.time), message))
        return TableEvent(item.time, "ruling", ruling)

    def _collision(self, item: Collision, data: dict[str, Any]) -> TableEvent:
        square = chess.square_name(item.square)
        at = self._virtual(item.time)
        if item.kind == "dodge":
            text = f"{item.piece} and {item.by} dodge each other on {square} (rule 4.4)"
        elif item.kind == "en-passant":
            text = f"{item.piece} on {square} taken en passant (rule 3.6)"
        elif item.kind == "in-move":
            text = f"{item.piece} taken in move on {square} by {item.by} (rule 4.2)"
        elif item.rule == "4.3":
            text = f"{item.piece} on {square} taken by {item.by} passing through (rule 4.3)"
        else:
            text = f"{item.piece} on {square} taken by {item.by} (rule 4.1)"
        payload = {**data, "virtual_time": at, "message": text}
        if item.rule in ("4.1", "3.6"):
            if item.kind == "en-passant":
                self._notes.append((at, text))
            return TableEvent(item.time, "capture", payload)
        ruling = {**payload, "kind": "collision", "collision": item.kind,
                  "article": f"realtime {item.rule}"}  # fmt: skip
        self._rulings.append(ruling)
        self._notes.append((at, text))
        return TableEvent(item.time, "ruling", ruling)

    def _begin(self, t: float, data: dict[str, Any]) -> list[TableEvent]:
        self._reset()
        self._admin_new_game()
        self._phase = Phase.PLAYING
        self._date = pgn_date(self._epoch, t)
        self._shown = None
        return [TableEvent(t, "new_game", {**data, "tick": self.settings.tick})]

    def _end(self, result: str, reason: str, t: float) -> list[TableEvent]:
        if self._phase is not Phase.PLAYING:
            return []
        self._phase = Phase.FINISHED
        self._result = result
        self._reason = reason
        if self._clock_present:
            self._orders.append(ClockOrder(OrderKind.TEXT, text=result_text(result), beep=1.0))
            self._shown = result
        return [TableEvent(t, "result", {"result": result, "reason": reason})]

    def _show_correction(self) -> None:
        """The DGT 3000 shows the first correction while there is one."""
        if not self._clock_present or self._phase is not Phase.PLAYING:
            return
        items = self._recognizer.corrections
        text = clock_text(items[0])[:TEXT_WIDTH] if items else None
        if text == self._shown:
            return
        if text is not None:
            self._orders.append(ClockOrder(OrderKind.TEXT, text=text, beep=0.2))
        else:
            self._orders.append(ClockOrder(OrderKind.END_TEXT))
        self._shown = text

    # -- admin commands ------------------------------------------------------------------------

    def _admin_start(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        settings = realtime_settings(self.settings, **{**self._next_players, **dict(args)})
        self._next_players = {}
        self._ending = self.pgn() if self._record else None
        try:
            return self._start_with(settings, now)
        finally:
            self._ending = None

    def _start_with(self, settings: RealtimeSettings, now: float) -> list[TableEvent]:
        self.settings = settings
        old = self._recognizer
        self._recognizer = RealtimeRecognizer(
            settings.tick, presence_only=old.presence_only, draw_after=self._draw_after,
            rotated=old.rotated, start=self._start(),
        )  # fmt: skip
        got = self._recognizer.feed(BoardSnapshot(now, tuple(self._raw), "resync"))
        if not any(isinstance(item, NewGame) for item in got):
            got += self._recognizer.start_game(now)
        out: list[TableEvent] = []
        for item in got:
            if not isinstance(item, (Lift, Place)):
                out += self._recognized(item)
        return out

    def _admin_end(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        result, reason = end_arguments(args)
        if self._phase is not Phase.PLAYING:
            raise TableError("no game in progress")
        out: list[TableEvent] = []
        for item in self._recognizer.tick(now):
            out += self._recognized(item)
        if self._phase is not Phase.PLAYING:  # the game ended on the board first
            raise TableError(f"the game is already over: {self._result} ({self._reason})")
        self._recognizer.stop()
        old = (self._result, self._reason)
        out += self._end(result, reason, now)
        self._change_log.result(now, old, (result, reason))
        return out

    def _admin_players(self, args: Mapping[str, Any], now: float) -> list[TableEvent]:
        """The players of the game under way if it has no move yet, else of the next game
        (the event says so): a game with moves or finished is the record."""
        changes = player_changes(args)
        wait = None if players_now(args) else players_wait(self._phase, len(self._record))
        if wait is None:
            changes = clear_replaced_details(changes, self.settings)
            old = (self.settings.white, self.settings.black)
            self.settings = realtime_settings(replace(self.settings, **changes))
            new = (self.settings.white, self.settings.black)
            if self._phase is Phase.PLAYING:
                self._change_log.players(now, old, new)
            return [players_event(now, *new)]
        changes = clear_replaced_details(changes, replace(self.settings, **self._next_players))
        waiting = {**self._next_players, **changes}
        settings = realtime_settings(replace(self.settings, **waiting))
        self._next_players = {**waiting, "white": settings.white, "black": settings.black}
        return [next_players_event(now, settings.white, settings.black, wait)]

    def _admin_new_game(self) -> None:
        """A new game begins: its change log starts empty, the players named for it (if
        any) take their seats."""
        self._change_log.clear()
        if self._next_players:
            self.settings = replace(self.settings, **self._next_players)
            self._next_players = {}
