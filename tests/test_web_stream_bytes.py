"""The overview stream's frames (:meth:`service.web.stream.StreamHub.on_update`) read byte for
byte as a frame encoded whole from the table's summary with its connection, the server time
and the update's events, and the summary as one written from nothing: for whole games at a
hall, with clock reports, presses, moves, a takeback, flags, results, players named, new
games, and a realtime table beside them.  A guard for any faster way of making the frames
(one that kept a summary's unchanged part encoded was tried: 6a98ba1)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import chess
import pytest
from test_table_quick_clock import MOVES, move_cells, piece_on
from test_table_summary_parts import fresh_summary

from dgt.emulator.board import start_squares
from dgt.events import BoardEvent, BoardSnapshot, ClockUpdate, LeverMoved, Side, SquareChanged
from dgt.protocol.constants import Piece
from service.config import TableConfig
from service.hall import Hall, HallTable, Update
from service.store import Store
from service.table import Phase, Table
from service.table_runner import InputKind, TableInput
from service.web import stream
from service.web.local import LocalHall
from service.web.stream import Event, StreamHub, frame, json_bytes

TAKEN_BACK = 4
"""After this many moves the last one is taken back and played again."""


class _Time:
    """``time`` for the stream module: a server time that moves on at every reading."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def time(self) -> float:
        self.now += 0.1234567
        return self.now


def _inputs(seed: int, t: float) -> list[tuple[float, BoardEvent | None]]:
    """A game's inputs at a board from ``t``: board events and ticks (None), the clock
    reporting about once a second (paused now and then, a flag, a time at zero), each move
    pressed; the move after :data:`TAKEN_BACK` moves taken back and made again."""
    rng = random.Random(seed)
    out: list[tuple[float, BoardEvent | None]] = [(t, BoardSnapshot(t, start_squares(), "connect"))]
    board = chess.Board()
    times = {Side.LEFT: 60.0, Side.RIGHT: 60.0}
    lever = Side.LEFT
    running = False
    next_tick = t + 0.5

    def advance(seconds: float) -> None:
        nonlocal t, next_tick
        end = t + seconds
        while next_tick <= end:
            out.append((next_tick, None))
            next_tick += 0.5
        t = end

    def report(left_flag: bool = False) -> None:
        if running:
            times[lever] = max(0.0, times[lever] - 1.0)
        out.append((t, ClockUpdate(
            t, times[Side.LEFT], times[Side.RIGHT], running, lever, left_flag, False, False,
            lever if running else None,
        )))  # fmt: skip

    def squares(square: int, piece: Piece) -> None:
        advance(rng.choice((0.2, 0.4, 0.7)))
        out.append((t, SquareChanged(t, square, piece, Piece.EMPTY)))
        if rng.random() < 0.3:  # a report with the move half made
            advance(1.0)
            report()

    report()
    running = True
    for number, uci in enumerate(MOVES, 1):
        for _ in range(rng.randrange(0, 4)):
            advance(rng.choice((0.3, 1.0, 2.5)))
            kind = rng.random()
            if kind < 0.05:
                running = not running
            elif kind < 0.08:
                report(left_flag=True)
                continue
            elif kind < 0.10:
                times[lever] = 1.0
            report()
        move = chess.Move.from_uci(uci)
        cells = move_cells(board, move)
        for square, piece in cells:
            squares(square, piece)
        if number == TAKEN_BACK:  # taken back before the press, and made again
            advance(1.5)
            squares(move.to_square, Piece.EMPTY)
            squares(move.from_square, piece_on(board, move.from_square))
            advance(1.5)
            for square, piece in cells:
                squares(square, piece)
        board.push(move)
        advance(rng.choice((0.3, 0.5, 3.0)))
        if running:
            lever = Side.RIGHT if lever is Side.LEFT else Side.LEFT
            out.append((t, LeverMoved(t, lever)))
            report()
    advance(70.0)  # a flag falls
    report()
    return out


def _feed(hall: Hall, runner: HallTable, t: float, event: BoardEvent | None) -> None:
    if event is None:
        produced = runner.tick(t)
        if produced:
            hall.table_input(runner, TableInput(InputKind.TICK, t, produced))
        return
    fed = runner.feed(event, t)
    if fed is not None:
        hall.table_input(runner, fed)


@pytest.mark.parametrize("timing", [False, True])
async def test_the_overviews_frames_read_as_encoded_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, timing: bool
) -> None:
    clock = _Time()
    monkeypatch.setattr(stream, "time", clock)
    wall = [1_000.0]  # the hall's time of an admin command
    hall = Hall(Store(tmp_path / "hall.db"), wall_clock=lambda: wall[0])
    settings: dict[str, dict[str, Any]] = {
        "1": {"time_control": "60+0", "white": "Ann", "black": "Bob"},
        "2": {"time_control": "60+2", "rules": "fide-blitz", "event": 'Open "A" é'},
        "3": {"variant": "realtime"},
    }
    runners = {
        table_id: hall.add_table(TableConfig(table_id, f"replay-{table_id}", None, chosen))
        for table_id, chosen in settings.items()
    }
    hub = StreamHub(LocalHall(hall), expose_timing=timing)
    overview = hub.open(None, False)
    checked: list[str] = []
    framed = {table_id: 0 for table_id in runners}

    def check(update: Update) -> None:
        """The frame the hub queued for this update against the one encoded whole."""
        table_id = update.table_id
        got = overview.pending.pop(table_id)
        body: dict[str, Any] = {
            "table": table_id,
            "state": hall.summary(table_id),
            "server_time": clock.now,
            "events": update.events,
        }
        if timing and update.source_time is not None:
            body["t_in"] = update.source_time
        assert got == frame(Event.STATE, json_bytes(body))
        table = runners[table_id].table
        if isinstance(table, Table):  # and it reads as a summary written from nothing
            shown = json.loads(got.split(b"data: ", 1)[1])["state"]
            fresh = fresh_summary(table)
            fresh["clocks"] = shown["clocks"]  # (read at the server's time, not as_of)
            assert shown == {**json.loads(json.dumps(fresh)), "connection": shown["connection"]}
        framed[table_id] += 1
        checked.append(table_id)

    hall.subscribe(check)
    try:
        t = 1_000.0
        for game in range(2):
            streams = [(table_id, _inputs(seed + 10 * game, t)) for seed, table_id in
                       enumerate(("1", "2", "3"))]  # fmt: skip
            merged = sorted(
                (at, n, table_id, event)
                for table_id, inputs in streams
                for n, (at, event) in enumerate(inputs)
            )
            for count, (at, _, table_id, event) in enumerate(merged, 1):
                _feed(hall, runners[table_id], at, event)
                if count % 3 == 0:  # a few inputs to a commit, as the hall has them
                    hall._flush()
            hall._flush()
            wall[0] = merged[-1][0] + 1.0
            await hall.admin("2", "players", {"white": "Cy", "black": "Dee", "white_elo": "2100"})
            for table_id, result in (("1", "1-0"), ("2", "1/2-1/2")):
                if runners[table_id].table.phase is Phase.PLAYING:  # no flag fell
                    await hall.admin(table_id, "end", {"result": result})
                await hall.admin(table_id, "start", {})
            t = wall[0] + 10.0
    finally:
        hall.unsubscribe(check)
        hub.close()
        hall.store.close()
    assert not overview.pending
    assert min(framed.values()) > 20, framed
    assert len(checked) > 200


async def test_a_summary_orjson_refuses_goes_out_as_encoded_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name with a lone surrogate (orjson refuses it: the frame is written by the standard
    library, the character replaced) and events with a key that is not a string (orjson
    writes them only with its options)."""
    clock = _Time()
    monkeypatch.setattr(stream, "time", clock)
    hall = Hall(Store(tmp_path / "hall.db"), wall_clock=lambda: 1_000.0)
    names = {"1": "Ann \ud800", "2": "Bob"}
    for table_id, name in names.items():
        hall.add_table(TableConfig(table_id, f"replay-{table_id}", None, {"white": name}))
    hub = StreamHub(LocalHall(hall))
    overview = hub.open(None, False)
    try:
        for table_id in names:
            for events in ([{"type": "note"}], [{"type": "note", 7: "seven"}]):
                hall._publish(Update(table_id, events, None))
                body = {
                    "table": table_id,
                    "state": hall.summary(table_id),
                    "server_time": clock.now,
                    "events": events,
                }
                got = overview.pending.pop(table_id)
                assert got == frame(Event.STATE, json_bytes(body))
                assert (b'"white":"Ann ?"' in got) == (table_id == "1")
                assert (b'"7":"seven"' in got) == (7 in events[-1])
    finally:
        hub.close()
        hall.store.close()
