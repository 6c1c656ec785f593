"""The rules at a table: each scenario is what players physically do on an emulated board
with a DGT 3000 -- lift, place, press the lever -- read as the driver reads it into a
:class:`service.table.Table`, down to the ruling; the table's clock orders go back to the
emulated clock, whose display and times are checked.

One test per article (FIDE Laws of Chess 2023; the US Chess speed chess rules; the Chess T20
rules), named after it.  The scenarios run on the table's own time line
(:class:`table_bench.TableBench`: explicit times, no sleeping); the ones marked with
``PATHS`` run a second time end to end (slow): the board served on a pseudo-terminal,
pyserial, the driver (``dgt.Board``) and :class:`linked_table.LinkedTable` (the service's
``TableRunner``), in real time.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest
from conftest import FAST, wait_until
from linked_table import LinkedTable
from table_bench import TableBench

from dgt import Board
from dgt.emulator.board import VirtualBoard
from dgt.emulator.clock import VirtualClock
from dgt.emulator.pty import EmulatorServer
from dgt.events import Side
from dgt.protocol import ClockCommand
from dgt.protocol.constants import Piece
from service.table import ClockOrder, Table, TableEvent, TableSettings
from service.time_control import TimeControl

GAP = 0.2
"""Seconds between a hand's steps: slower than the sensors' flicker filters (0.15 s)."""
T20 = "rbnqbrk1/pppppppp/6n1/8/8/6N1/PPPPPPPP/RBNQBRK1 w - - 0 1"


class WitnessClock(VirtualClock):
    """The emulated DGT 3000, remembering every text it was asked to show and the times and
    running side right after every set-and-run it took."""

    def __init__(self) -> None:
        super().__init__(left=600, right=600)
        self.texts: list[str] = []
        self.settings: list[tuple[float, float, Side | None]] = []

    def command(self, data: bytes, now: float) -> tuple[int, int, int, int] | None:
        ack = super().command(data, now)
        if len(data) > 2 and data[1] == ClockCommand.ASCII and self.text is not None:
            self.texts.append(self.text.strip())
        if len(data) > 2 and data[1] == ClockCommand.SETNRUN:
            left, right = self.times(now)
            self.settings.append((left, right, self.running if not self.paused else None))
        return ack


class Players:
    """Two players' hands at an emulated board with a clock, and the table it feeds: on the
    table's own time line (``TableBench``, the default) or through a pty and the driver in
    real time (``LinkedTable``, the end-to-end runs)."""

    def __init__(self, vb: VirtualBoard, link: TableBench | LinkedTable) -> None:
        self.vb = vb
        self.link = link
        self.clock = vb.clock if isinstance(vb.clock, WitnessClock) else None

    @property
    def table(self) -> Table:
        table = self.link.table
        assert isinstance(table, Table)
        return table

    @property
    def events(self) -> list[TableEvent]:
        return self.link.events

    @property
    def sent(self) -> list[ClockOrder]:
        """Clock orders the clock acknowledged."""
        return self.link.sent

    def now(self) -> float:
        """The board's time."""
        return self.link.now if isinstance(self.link, TableBench) else self.server.now()

    @property
    def server(self) -> EmulatorServer:
        raise AssertionError("no pty in this run")

    async def wait(self, seconds: float) -> None:
        """Let ``seconds`` pass."""
        if isinstance(self.link, TableBench):
            self.link.advance(seconds)
        else:
            await asyncio.sleep(seconds)

    def act(self, action: Callable[[float], bytes]) -> None:
        """A hand does ``action(now)`` on the board (a ``VirtualBoard`` method)."""
        if isinstance(self.link, TableBench):
            self.link.act(action)
        else:
            self.server.act(action)

    async def lift(self, name: str, gap: float = GAP) -> None:
        await self.wait(gap)
        square = chess.parse_square(name)
        self.act(lambda now: self.vb.lift(square, now))

    async def put(self, name: str, symbol: str, gap: float = GAP) -> None:
        await self.wait(gap)
        square = chess.parse_square(name)
        self.act(lambda now: self.vb.place(square, Piece.from_symbol(symbol), now))

    async def move(self, uci: str, symbol: str) -> None:
        """Pick up the piece on the from-square (and a piece standing on the target), put
        ``symbol`` on the target."""
        await self.lift(uci[:2])
        if self.vb.squares[chess.parse_square(uci[2:4])] is not Piece.EMPTY:
            await self.lift(uci[2:4], 0.1)
        await self.put(uci[2:4], symbol)

    async def press(self, gap: float = GAP) -> None:
        """Press the clock lever (its high side goes down) and wait until the table saw it."""
        await self.wait(gap)
        seen = len(self.of_type("board"))
        self.act(self.vb.press_lever)
        await self.until(
            lambda: any(e["event"] == "lever" for e in self.of_type("board")[seen:]), 3
        )

    async def play(self, uci: str, symbol: str) -> None:
        await self.move(uci, symbol)
        await self.press()

    async def until(self, predicate: Callable[[], bool], within: float = 5.0) -> None:
        if isinstance(self.link, TableBench):
            self.link.until(predicate, within)
        else:
            await wait_until(predicate, within)
            await self.link.flush()

    async def flush(self) -> None:
        """Wait until the clock took every order issued so far."""
        if isinstance(self.link, LinkedTable):
            await self.link.flush()

    def admin(self, command: str, **args: Any) -> list[dict[str, Any]]:
        return [e.to_json() for e in self.link.admin(command, **args)]

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e.to_json() for e in self.events if e.type == kind]

    def rulings(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.of_type("ruling") if r["kind"] == kind]

    def claims(self, kind: str, status: str = "offered") -> list[dict[str, Any]]:
        return [c for c in self.of_type("claim") if c["kind"] == kind and c["status"] == status]

    def clock_times(self) -> tuple[float, float]:
        assert self.clock is not None
        return self.clock.times(self.now())

    def updates_after(self, index: int) -> list[dict[str, Any]]:
        """Clock reports (ClockUpdate board events) after table event ``index``."""
        return [
            e.to_json()
            for e in self.events[index:]
            if e.type == "board" and e.data.get("event") == "clock"
        ]


class PtyPlayers(Players):
    def __init__(self, server: EmulatorServer, vb: VirtualBoard, link: LinkedTable) -> None:
        super().__init__(vb, link)
        self._server = server

    @property
    def server(self) -> EmulatorServer:
        return self._server


@asynccontextmanager
async def table_at_board(
    tmp_path: Path,
    settings: TableSettings,
    *,
    fen: str | None = None,
    pegasus: bool = False,
    path: str = "table",
) -> AsyncIterator[Players]:
    """An emulated board (with a :class:`WitnessClock` unless a Pegasus) set up with ``fen``
    (default: the start position), a table at it; the game started and the clock set to the
    time control.  ``path`` "table": the table on explicit time (``TableBench``); "pty": the
    board served on a pty, the driver on it and the table linked to it, in real time."""
    position = chess.Board(fen or chess.STARTING_FEN)
    squares = {sq: Piece.from_symbol(p.symbol()) for sq, p in position.piece_map().items()}
    clock: VirtualClock | None = None if pegasus else WitnessClock()
    vb = VirtualBoard(pegasus=pegasus, clock=clock, squares=squares)
    table = Table("e2e", settings)
    if path == "table":
        players = Players(vb, TableBench(vb, table))
        await _started(players, settings, fen)
        yield players
        return
    assert path == "pty", path
    async with (
        EmulatorServer(vb, link=tmp_path / "board") as server,
        Board(server.path, read_memory=False, **FAST) as board,
    ):
        if clock is not None:
            await wait_until(lambda: board.clock.connected is True, 5)
        async with LinkedTable(board, table) as link:
            players = PtyPlayers(server, vb, link)
            await _started(players, settings, fen)
            yield players


async def _started(players: Players, settings: TableSettings, fen: str | None) -> None:
    if fen is not None:
        players.link.admin("start", start=fen)
    table, clock = players.table, players.clock
    assert table.phase == "playing"
    if clock is not None and TimeControl.parse(settings.time_control).timed:
        # the clock is set paused, reports its lever, and is set running White
        await players.until(lambda: bool(clock.settings) and clock.ticking)


PATHS = ["table", pytest.param("pty", marks=pytest.mark.slow)]
"""The scenarios kept as end-to-end runs through the pty run on both paths."""


def last_clock(players: Players) -> dict[str, Any]:
    return players.of_type("clock")[-1]


# -- FIDE Laws of Chess 2023 ---------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
async def test_fide_7_5_1_and_7_5_5_illegal_move_completed_by_the_press(
    tmp_path: Path, path: str
) -> None:
    """7.5.1: the press completes an illegal move (Ke1-e3 over the pawn): the position is
    reinstated; 7.5.5: two minutes to the opponent -- on the clock itself -- and the second
    completed illegal move loses."""
    async with table_at_board(tmp_path, TableSettings(rules="fide-standard",
                              time_control="300+0"), path=path) as p:  # fmt: skip
        assert p.clock is not None
        assert p.clock.settings[-1][:2] == (300.0, 300.0)
        assert p.clock.settings[-1][2] is Side.LEFT  # White (left) runs first
        await p.move("e1e3", "K")
        mark = len(p.events)
        await p.press()
        assert [i["kind"] for i in p.of_type("irregularity")] == ["illegal-move"]
        assert p.of_type("irregularity")[0]["article"] == "FIDE 7.5.1"
        assert p.rulings("penalty-time")[0]["add_time"] == {"black": 120.0}
        assert p.rulings("restore")[0]["restore_ply"] == 0
        # the clock shows the penalty: Black (right) has 5 + 2 minutes, White's time runs
        assert p.clock.texts[-2:] == ["ILLEGAL", "+2 MIN"]
        assert p.clock.text is not None
        assert p.clock.text.strip() == "+2 MIN"  # shown after the setting, not wiped by it
        assert 418 <= p.clock_times()[1] <= 420
        assert p.clock.running is Side.LEFT
        await p.until(lambda: any(u["right"] >= 418 for u in p.updates_after(mark)))
        assert last_clock(p)["black"] >= 418
        await p.until(lambda: p.clock is not None and p.clock.text is None, 4)  # times again
        # the king goes back; Black puts the lever back so that White's side is up
        await p.move("e3e1", "K")
        await p.press()
        assert p.of_type("irregularity")[1:] == []
        # a second completed illegal move loses (7.5.5)
        await p.move("d1d5", "Q")
        await p.press()
        assert p.table.result == "0-1"
        assert p.table.state()["reason"].startswith("illegal move number 2")
        await p.until(lambda: "0-1" in p.clock.texts)
        assert p.clock.running is None or p.clock.paused


async def test_fide_4_3_1_touched_piece_must_be_moved_claim(tmp_path: Path) -> None:
    """4.3.1: White touches the d-pawn (lifts it, sets it back), then plays e2-e4 and presses:
    Black is offered the claim (the clock says so); Black claims, the arbiter upholds it:
    e4 goes back, the d-pawn must move, White's time runs again."""
    async with table_at_board(tmp_path, TableSettings(rules="fide-blitz",
                                                      time_control="180+2")) as p:  # fmt: skip
        assert p.clock is not None
        await p.lift("d2")
        await p.put("d2", "P", 0.4)
        await p.play("e2e4", "P")
        offered = p.claims("touch-move")
        assert [(c["claimant"], c["article"], c["square"]) for c in offered] == [
            ("black", "FIDE 4.3.1", "d2")
        ]
        assert "TOUCH" in p.clock.texts
        assert "CLAIM?" in p.clock.texts
        p.admin("rule", claim=offered[0]["id"], decision="accept")
        await p.flush()
        assert p.rulings("must-move")[0]["square"] == "d2"
        assert p.rulings("restore")[0]["restore_ply"] == 0
        assert p.clock.settings[-1][2] is Side.LEFT  # White's time runs again
        assert p.table.state()["obligations"] == {"white": "d2"}
        await p.move("e4e2", "P")  # the move is taken back ...
        await p.press()  # ... and Black puts the lever back
        await p.play("d2d4", "P")  # the touched pawn moves
        assert [m["uci"] for m in p.table.moves()] == ["d2d4"]
        assert p.claims("touch-move") == offered  # no new claim
        assert p.of_type("irregularity")[1:] == []


@pytest.mark.parametrize(
    ("fen", "result", "reason"),
    [
        (None, "0-1", "time-out"),
        ("4k3/8/8/8/8/8/3PP3/4K3 w - - 0 1", "1/2-1/2", "time-out (opponent cannot mate)"),
    ],
    ids=["loss", "draw-opponent-cannot-mate"],
)
async def test_fide_6_9_flag_fall(
    tmp_path: Path, fen: str | None, result: str, reason: str
) -> None:
    """6.9: White's flag falls on the DGT 3000 (a two-second game): White loses -- or draws
    when Black (a bare king) cannot checkmate by any series of legal moves."""
    settings = TableSettings(rules="fide-blitz", time_control="2+0")
    async with table_at_board(tmp_path, settings, fen=fen) as p:
        assert p.clock is not None
        await p.until(lambda: p.table.phase == "finished", 5)
        flagged = [u for u in p.updates_after(0) if u["left_flag"] or u["right_flag"]]
        assert [(u["left"], u["left_flag"], u["right_flag"]) for u in flagged] == [
            (0.0, True, False)
        ]
        assert p.clock.settings[-1] == (0.0, 2.0, None)  # the table stopped the clock
        assert (p.table.result, p.table.state()["reason"]) == (result, reason)
        assert p.of_type("irregularity")[-1]["article"] == "FIDE 6.9"
        assert p.rulings("result")[0]["article"] == "FIDE 6.9"
        await p.until(lambda: p.clock is not None and ("DRAW" if "1/2" in result else result)
                      in p.clock.texts)  # fmt: skip
        assert f'[Result "{result}"]' in p.table.pgn()


@pytest.mark.parametrize("path", PATHS)
async def test_fide_6_9_flag_fall_without_a_clock_on_a_presence_only_board(
    tmp_path: Path, path: str
) -> None:
    """6.9 on a Pegasus (presence only, no clock): the table keeps the time itself.  White's
    e4 is read from occupancy and starts Black's time; Black's three seconds run out."""
    settings = TableSettings(rules="fide-blitz", time_control="3+0")
    async with table_at_board(tmp_path, settings, pegasus=True, path=path) as p:
        assert p.table.presence_only
        assert not p.table.state()["clock_present"]
        await p.move("e2e4", "P")
        await p.until(lambda: p.table.phase == "finished", 6)
        assert [m["san"] for m in p.table.moves()] == ["e4"]
        assert (p.table.result, p.table.state()["reason"]) == ("1-0", "time-out")
        assert p.of_type("irregularity")[-1]["article"] == "FIDE 6.9"
        assert p.sent == []  # no clock, no orders


async def test_fide_9_2_threefold_repetition_claim(tmp_path: Path) -> None:
    """9.2: the knights go out and back twice; the start position stands for the third time
    and White's claim is correct: a draw, shown on the clock.  A claim one move earlier was
    wrong (9.5.3: one minute more for Black in blitz, on the clock)."""
    async with table_at_board(tmp_path, TableSettings(rules="fide-blitz",
                                                      time_control="180+0")) as p:  # fmt: skip
        assert p.clock is not None
        for uci, symbol in [("g1f3", "N"), ("g8f6", "n"), ("f3g1", "N"), ("f6g8", "n"),
                            ("g1f3", "N"), ("g8f6", "n"), ("f3g1", "N")]:  # fmt: skip
            await p.play(uci, symbol)
        before = p.clock_times()[0]
        got = p.admin("claim", side="black", kind="threefold")
        assert [r["kind"] for r in got if r["type"] == "ruling"] == ["reject", "penalty-time"]
        await p.flush()
        assert 59 <= p.clock_times()[0] - before <= 61  # White (left) got one minute
        await p.play("f6g8", "n")
        got = p.admin("claim", side="white", kind="threefold")
        ruling = next(r for r in got if r["type"] == "ruling")
        assert (ruling["article"], ruling["result"]) == ("FIDE 9.2", "1/2-1/2")
        assert p.table.state()["reason"] == "threefold repetition"
        await p.until(lambda: p.clock is not None and "DRAW" in p.clock.texts)
        assert not p.clock.ticking  # the clock was stopped


# -- US Chess speed chess rules ------------------------------------------------------------


async def test_uscf_11_illegal_move_claim_window_ends_when_the_claimant_moves(
    tmp_path: Path,
) -> None:
    """11: White's knight jumps like a rook and White presses: Black may claim the win until
    replying.  Black replies (moves and presses) without claiming: the claim lapses and, the
    position being legal, the illegal move stands -- in the record and in a PGN that readers
    can read back."""
    async with table_at_board(tmp_path, TableSettings(rules="uscf-speed",
                                                      time_control="300+0")) as p:  # fmt: skip
        assert p.clock is not None
        await p.play("g1g3", "N")
        offered = p.claims("illegal-move")
        assert [(c["claimant"], c["article"]) for c in offered] == [("black", "US speed 11")]
        assert p.rulings("penalty-time") == []  # no time penalty under the US speed rules
        assert "ILLEGAL" in p.clock.texts
        assert p.table.phase == "playing"
        await p.play("e7e5", "p")  # Black replies without claiming
        assert [c["status"] for c in p.of_type("claim")] == ["offered", "lapsed"]
        assert p.rulings("stand")[0]["uci"] == "g1g3"
        await p.play("g3f5", "N")
        assert [m["uci"] for m in p.table.moves()] == ["g1g3", "e7e5", "g3f5"]
        game = chess.pgn.read_game(io.StringIO(p.table.pgn()))
        assert game is not None
        assert game.errors == []
        assert "g1g3" in p.table.pgn()


async def test_uscf_11_taking_the_king_left_in_check_is_a_claim(tmp_path: Path) -> None:
    """11: White's king steps into the rook's line and White presses; Black takes the king
    with the rook -- a claim of the illegal move: Black wins."""
    async with table_at_board(tmp_path, TableSettings(rules="uscf-speed",
                              time_control="300+0"),
                              fen="4k3/8/8/8/8/8/7r/4K3 w - - 0 1") as p:  # fmt: skip
        await p.play("e1f2", "K")
        assert p.claims("illegal-move")[0]["king"] == "f2"
        await p.move("h2f2", "r")
        await p.until(lambda: p.table.phase == "finished")
        assert p.table.result == "0-1"
        assert "king taken" in p.rulings("result")[0]["message"]


async def test_uscf_2d_and_12_flag_fall_is_offered_not_declared(tmp_path: Path) -> None:
    """2d, 12: White's flag falls; nobody but Black may call it, so the game goes on until
    Black claims (the clock shows the offer); the claim wins."""
    async with table_at_board(tmp_path, TableSettings(rules="uscf-speed",
                                                      time_control="2+0")) as p:  # fmt: skip
        assert p.clock is not None
        await p.until(lambda: bool(p.claims("flag")), 5)
        offered = p.claims("flag")[0]
        assert (offered["claimant"], offered["article"]) == ("black", "US speed 2d")
        assert p.clock.flags() == (True, False)  # the table leaves the clock alone
        await p.wait(0.5)
        assert p.table.phase == "playing"  # not declared
        await p.until(lambda: p.clock is not None and "CLAIM?" in p.clock.texts)
        p.admin("claim", side="black", kind="flag")
        assert (p.table.result, p.table.state()["reason"]) == ("0-1", "time-out claimed")


# -- Chess T20 rules -------------------------------------------------------------------------


async def test_t20_capture_and_check_scores_on_the_clock_and_in_the_record(
    tmp_path: Path,
) -> None:
    """T20 score system: a pawn captured scores 1, a check 10; the running score shows on
    the DGT 3000 after each scoring move and ends up in the PGN tags and comments."""
    async with table_at_board(tmp_path, TableSettings(variant="t20", rules="fide-blitz",
                              time_control="300+0"), fen=T20) as p:  # fmt: skip
        assert p.clock is not None
        for uci, symbol in [("e2e4", "P"), ("d7d5", "p"), ("e4d5", "P"), ("e7e6", "p"),
                            ("d5e6", "P"), ("d8h4", "q"), ("e6f7", "P")]:  # fmt: skip
            await p.play(uci, symbol)
        totals = [s["totals"] for s in p.of_type("score")]
        assert totals == [{"white": 1, "black": 0}, {"white": 2, "black": 0},
                          {"white": 13, "black": 0}]  # fmt: skip
        assert [t for t in p.clock.texts if "-" in t] == ["1-0", "2-0", "13-0"]
        pgn = p.table.pgn()
        assert '[WhiteScore "13"]' in pgn
        assert '[BlackScore "0"]' in pgn
        assert "white +10 check" in pgn
        assert "1. e4 {[%clk 0:04:5" in pgn
        assert "4. exf7+" in pgn
