"""Realtime chess at a table: one scenario per numbered rule of the realtime chess rules
(rules 1-6 and their subrules).

Each scenario is what players physically do -- lift and place pieces at given times --
on an emulated board (:class:`dgt.emulator.board.VirtualBoard` with a DGT 3000), read as
the driver reads it into a :class:`service.table.RealtimeTable` on the table's own
time line (:class:`table_bench.TableBench`: explicit times, no sleeping); the record, the
rulings, the corrections and the clock's texts are checked.  The scenarios marked with
``END_TO_END`` run a second time through the in-process transport
(:class:`dgt.transports.emulator.EmulatorTransport`), :class:`dgt.Board` and
:class:`linked_table.LinkedTable` (the service's ``TableRunner``), in real time (slow).

Times are table seconds from the link's start (the game starts there, when the board
shows its start position).  The tick is 0.2 s unless a test says otherwise (one square:
0.2 s, the delay 2 s), so a scenario lasts a few seconds; the steps are at least half a
tick apart from any instant a rule turns on, since end to end the events are stamped when
the driver receives them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import chess
import pytest
from conftest import FAST, wait_until
from linked_table import LinkedTable
from table_bench import TableBench

from dgt import Board
from dgt.emulator.board import VirtualBoard
from dgt.protocol.constants import Piece
from dgt.transports.emulator import EmulatorTransport
from service.table import RealtimeTable, TableError

TICK = 0.2
sq = chess.parse_square


class Hands:
    """The players at an emulated board, and the realtime table it feeds: on the table's own
    time line (``TableBench``, ``transport`` None) or through the in-process transport and
    the driver in real time (``LinkedTable``, the end-to-end runs)."""

    def __init__(
        self,
        vb: VirtualBoard,
        link: TableBench | LinkedTable,
        transport: EmulatorTransport | None = None,
        scale: float = 1.0,
    ) -> None:
        self.vb = vb
        self.link = link
        self.transport = transport
        self.scale = scale

    @property
    def table(self) -> RealtimeTable:
        table = self.link.table
        assert isinstance(table, RealtimeTable)
        return table

    async def at(self, t: float) -> None:
        """Wait until table time ``t``."""
        if isinstance(self.link, TableBench):
            self.link.advance_to(t)
            return
        left = t - self.link.now()
        if left > 0:
            await asyncio.sleep(left / self.link.scale)

    def act(self, action: Callable[[float], bytes]) -> None:
        if isinstance(self.link, TableBench):
            self.link.act(action)
        else:
            assert self.transport is not None
            self.transport.inject(action(time.monotonic()))

    async def lift(self, name: str, t: float) -> None:
        await self.at(t)
        self.act(lambda now: self.vb.lift(sq(name), now))

    async def put(self, name: str, symbol: str, t: float) -> None:
        await self.at(t)
        self.act(lambda now: self.vb.place(sq(name), Piece.from_symbol(symbol), now))

    async def move(self, uci: str, symbol: str, t: float, put: float = 0.1) -> None:
        """Lift the piece on the from-square at ``t``, put ``symbol`` down ``put`` later."""
        await self.lift(uci[:2], t)
        await self.put(uci[2:4], symbol, t + put)

    async def lift_together(self, names: list[str], t: float) -> None:
        """Lift pieces in the same instant (one report from the board)."""
        await self.at(t)
        self.act(lambda now: b"".join(self.vb.lift(sq(name), now) for name in names))

    async def until(self, predicate: Callable[[], bool], within: float = 5.0) -> None:
        """Until ``predicate`` holds; ``within`` real seconds of the end-to-end run (``scale``
        times as many on the table's time line)."""
        if isinstance(self.link, TableBench):
            self.link.until(predicate, within * self.scale)
        else:
            await wait_until(predicate, within)
            await self.link.flush()

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e.to_json() for e in self.link.events if e.type == kind]

    def rulings(self, kind: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.of("ruling") if kind is None or r["kind"] == kind]

    def record(self) -> list[str]:
        return [m["uci"] for m in self.table.moves() if not m.get("refused")]

    def corrections(self) -> list[str]:
        return [c["text"] for c in self.table.corrections()]

    def texts(self) -> list[str]:
        return [o.text for o in self.link.sent if o.kind == "text"]

    def board(self) -> str:
        return str(self.table.state()["board"])


@asynccontextmanager
async def table_at(
    fen: str | None = None,
    *,
    tick: float = TICK,
    scale: float = 1.0,
    pegasus: bool = False,
    path: str = "table",
) -> AsyncIterator[Hands]:
    """A realtime table at an emulated board set up from ``fen`` (the classical start if
    None); the game has started when this yields.  ``path`` "table": on the table's time
    line (``TableBench``, ticked every 0.05 s); "transport": the in-process transport, the
    driver and ``LinkedTable``, in real time (the table's times ``scale`` times faster)."""
    squares = None
    if fen is not None:
        placed = chess.Board(fen).piece_map().items()
        squares = {s: Piece.from_symbol(p.symbol()) for s, p in placed}
    settings: dict[str, Any] = {"white": "W", "black": "B", "tick": tick}
    if fen is not None:
        settings["start"] = fen
    table = RealtimeTable("rt", settings)
    if path == "table":
        vb = VirtualBoard(pegasus=pegasus, squares=squares)
        hands = Hands(vb, TableBench(vb, table, tick=0.05), scale=scale)
        await _started(hands)
        yield hands
        return
    assert path == "transport", path
    transport = EmulatorTransport(pegasus=pegasus, squares=squares)
    async with (
        Board(transport, read_memory=False, **FAST) as board,
        LinkedTable(board, table, scale=scale, tick=0.05) as link,
    ):
        hands = Hands(transport.board, link, transport, scale)
        await _started(hands)
        yield hands


async def _started(hands: Hands) -> None:
    table = hands.table
    await hands.until(lambda: table.phase == "playing", 3)
    if not table.presence_only:
        await hands.until(lambda: bool(table.state()["clock_present"]), 3)


END_TO_END = ["table", pytest.param("transport", marks=pytest.mark.slow)]
"""The scenarios also run end to end (through the in-process transport)."""


async def play_until_arrived(h: Hands, t: float) -> None:
    await h.at(t)
    await h.until(lambda: True)


# -- rule 1: traditional ---------------------------------------------------------------------


async def test_rule_1_1_the_traditional_setup_starts_the_game() -> None:
    async with table_at() as h:
        [new_game] = h.of("new_game")
        assert new_game["variant"] == "realtime"
        assert new_game["tick"] == TICK
        assert h.board() == chess.STARTING_BOARD_FEN
        assert h.corrections() == []


@pytest.mark.parametrize("path", END_TO_END)
async def test_rule_1_2_traditional_moves_and_a_move_no_piece_makes_is_refused(
    path: str,
) -> None:
    async with table_at(path=path) as h:
        await h.move("g1f3", "N", 0.3)
        await h.move("f1d3", "B", 0.6)  # through the pawn on e2: no bishop move
        await h.until(lambda: bool(h.rulings("refused")))
        assert h.record() == ["g1f3"]
        assert h.corrections() == ["move B from d3 to f1"]
        await h.until(lambda: "D3 TO F1" in h.texts())
        await h.move("d3f1", "B", 1.0)
        await h.until(lambda: h.corrections() == [] and h.link.sent[-1].kind == "end_text")
        assert h.record() == ["g1f3"]


# -- rule 2: modifications ---------------------------------------------------------------------


async def test_rule_2_1_no_turns_both_sides_any_piece_any_time() -> None:
    async with table_at() as h:
        await h.lift("e2", 0.3)
        await h.lift("e7", 0.4)  # both sides with a piece in the air
        await h.put("e4", "P", 0.5)
        await h.lift("d2", 0.6)  # White again, before Black has put down
        await h.put("e5", "p", 0.7)
        await h.put("d4", "P", 0.8)
        await h.until(lambda: len(h.record()) == 3)
        assert h.record() == ["e2e4", "e7e5", "d2d4"]  # in order of the lifts
        starts = [m["start"] for m in h.table.moves()]
        assert starts == sorted(starts)
        assert starts[0] == pytest.approx(0.3, abs=0.08)


async def test_rule_2_2_a_pawn_always_promotes_to_a_queen() -> None:
    async with table_at("4k3/P7/8/8/8/8/8/4K3 w - - 0 1") as h:
        await h.move("a7a8", "P", 0.3)  # the player sets the pawn itself down
        await h.until(lambda: h.record() == ["a7a8q"])
        await h.until(lambda: h.corrections() == ["take P off a8", "put Q on a8"])
        await h.lift("a8", 0.7)
        await h.put("a8", "Q", 0.8)
        await h.until(lambda: h.corrections() == [])
        await play_until_arrived(h, 1.0)
        assert h.board().startswith("Q3k3/")
        assert h.record() == ["a7a8q"]


async def test_rule_2_3_no_check_the_king_castles_through_an_attacked_square() -> None:
    async with table_at("4kr2/8/8/8/8/8/8/4K2R w K - 0 1") as h:
        await h.move("e1g1", "K", 0.3)  # f1 is attacked by the rook on f8
        await h.move("h1f1", "R", 0.5)
        await h.until(lambda: h.record() == ["e1g1"])
        assert h.table.moves()[0]["san"] == "O-O"
        await h.until(lambda: h.corrections() == [])
        assert h.table.phase == "playing"


async def test_rule_2_4_no_draw_by_repetition() -> None:
    async with table_at("4k1n1/8/8/8/8/8/8/4K1N1 w - - 0 1", tick=0.1) as h:
        t = 0.3
        for white, black in (("g1f3", "g8f6"), ("f3g1", "f6g8")) * 2:  # the start 3 times
            await h.move(white, "N", t)
            await h.move(black, "n", t + 0.05)
            t += 1.3  # two ticks under way, ten at rest, and a little
        await h.until(lambda: len(h.record()) == 8)
        assert h.table.phase == "playing"
        assert h.table.result == "*"


# -- rule 3: moving ------------------------------------------------------------------------------


async def test_rule_3_1_no_move_while_the_piece_has_its_delay() -> None:
    async with table_at() as h:
        await h.move("g1f3", "N", 0.3)  # arrives at 0.7, rests until 2.7
        await h.move("f3e5", "N", 1.2)
        await h.until(lambda: bool(h.rulings("refused")))
        [ruling] = h.rulings("refused")
        assert ruling["article"] == "realtime 3.1"
        assert ruling["uci"] == "f3e5"
        assert h.corrections() == ["move N from e5 to f3"]
        await h.until(lambda: "E5 TO F3" in h.texts())
        delays = h.table.state()["realtime"]["delays"]
        assert 0 < delays["f3"] <= 10 * TICK
        await h.move("e5f3", "N", 1.6)
        await h.until(lambda: h.corrections() == [])
        await h.move("f3e5", "N", 3.0)  # the delay is over
        await h.until(lambda: h.record() == ["g1f3", "f3e5"])


async def test_rule_3_2_a_piece_under_attack_may_dodge() -> None:
    async with table_at("4k3/8/8/n7/8/8/8/R3K3 w - - 0 1") as h:
        await h.lift("a5", 0.3)  # the attacked knight leaves ...
        await h.lift("a1", 0.4)  # ... as the rook sets off for it
        await h.put("b3", "n", 0.5)
        await h.put("a5", "R", 0.6)
        await h.until(lambda: len(h.record()) == 2)
        await play_until_arrived(h, 1.5)
        assert h.record() == ["a5b3", "a1a5"]
        assert not h.of("capture")
        assert h.board() == "4k3/8/8/R7/8/1n6/8/4K3"


async def test_rule_3_3_no_move_to_a_square_a_piece_is_moving_to() -> None:
    async with table_at("r3k3/8/8/8/8/8/8/R3K3 w - - 0 1") as h:
        await h.move("a1a4", "R", 0.3)  # three ticks: under way until 0.9
        await h.lift("a4", 0.5)  # Black takes the white rook off ...
        await h.move("a8a4", "r", 0.6)  # ... and sends the rook to a4 too
        await h.until(lambda: bool(h.rulings("refused")))
        assert h.rulings("refused")[0]["article"] == "realtime 3.3"
        assert h.corrections() == ["move r from a4 to a8", "put R on a4"]
        await h.move("a4a8", "r", 1.0)
        await h.put("a4", "R", 1.2)
        await h.until(lambda: h.corrections() == [])
        assert h.record() == ["a1a4"]


async def test_rule_3_4_no_path_through_a_square_an_opponent_is_moving_to() -> None:
    async with table_at("4k3/8/5b2/3n4/8/8/8/1N2K3 w - - 0 1") as h:
        await h.move("b1c3", "N", 0.3)  # White's knight is moving to c3
        await h.move("f6a1", "b", 0.5)  # the bishop's path crosses c3: refused
        await h.move("d5b4", "n", 0.8)  # a knight jumps: it is never blocked
        await h.until(lambda: len(h.record()) == 2 and bool(h.rulings("refused")))
        assert h.rulings("refused")[0]["article"] == "realtime 3.4/3.5"
        assert h.record() == ["b1c3", "d5b4"]
        assert h.corrections() == ["move b from a1 to f6"]


async def test_rule_3_5_through_an_own_moving_piece_but_not_its_destination() -> None:
    async with table_at("R7/8/7k/8/8/7Q/7K/2R5 w - - 0 1") as h:
        await h.move("c1c8", "R", 0.3)  # the rook is on c3 from 0.6 to 0.8
        await h.move("h3a3", "Q", 0.65)  # through c3 while the rook is there: allowed
        await h.move("a8e8", "R", 0.9)  # through c8, the rook's destination: refused
        await h.until(lambda: len(h.record()) == 2 and bool(h.rulings("refused")))
        assert h.record() == ["c1c8", "h3a3"]
        assert h.rulings("refused")[0]["uci"] == "a8e8"
        assert h.corrections() == ["move R from e8 to a8"]


async def test_rule_3_6_en_passant_only_while_the_pawn_has_its_delay() -> None:
    async with table_at("4k3/3p1p2/8/4P1P1/8/8/8/4K3 w - - 0 1") as h:
        await h.move("d7d5", "p", 0.3)  # arrives 0.7, delay until 2.7
        await h.move("f7f5", "p", 0.35)  # arrives 0.75, delay until 2.75
        await h.lift("d5", 1.0)  # the pawn taken en passant, lifted by White
        await h.move("e5d6", "P", 1.1)
        await h.until(lambda: "e5d6" in h.record())
        await play_until_arrived(h, 1.6)
        assert [c["kind"] for c in h.of("capture")] == ["en-passant"]
        assert h.corrections() == []
        await h.lift("f5", 3.2)  # the f-pawn's delay is over: no en passant any more
        await h.move("g5f6", "P", 3.3)
        await h.until(lambda: bool(h.rulings("refused")))
        assert h.record() == ["d7d5", "f7f5", "e5d6"]
        assert h.corrections() == ["move P from f6 to g5", "put p on f5"]


async def test_rule_3_7_a_normal_capture_wins_over_en_passant() -> None:
    async with table_at("4k3/3p4/8/1n2P3/8/8/8/4K3 w - - 0 1") as h:
        await h.move("d7d5", "p", 0.3)  # passes d6 by 0.6, arrives 0.7, delay until 2.7
        await h.move("b5d6", "n", 0.8)  # the knight lands behind it at 1.2
        await h.lift("d6", 1.4)
        await h.move("e5d6", "P", 1.5)  # takes the knight: no en passant
        await h.until(lambda: "e5d6" in h.record())
        await play_until_arrived(h, 2.0)
        assert h.board() == "4k3/8/3P4/3p4/8/8/8/4K3"  # the d-pawn stays
        assert [c["kind"] for c in h.of("capture")] == ["capture"]
        assert h.corrections() == []


# -- rule 4: collisions ---------------------------------------------------------------------------


async def test_rule_4_1_a_moving_piece_takes_the_standing_one() -> None:
    async with table_at("4k3/p7/8/8/8/8/8/R3K3 w - - 0 1") as h:
        await h.lift("a7", 0.3)
        await h.move("a1a7", "R", 0.35)  # six ticks: arrives 1.55
        await play_until_arrived(h, 1.8)
        [capture] = h.of("capture")
        assert (capture["rule"], capture["piece"], capture["square"]) == ("4.1", "p", "a7")
        assert h.board() == "4k3/R7/8/8/8/8/8/4K3"
        assert h.corrections() == []


async def test_rule_4_2_in_move_the_later_mover_is_removed() -> None:
    async with table_at("4k3/2b5/8/8/8/8/8/R3K3 w - - 0 1") as h:
        await h.move("a1a8", "R", 0.3)  # on a5 from 1.0 to 1.2
        await h.move("c7a5", "b", 0.75)  # reaches a5 at 1.05, still moving until 1.15
        await h.until(lambda: bool(h.rulings("collision")))
        [ruling] = h.rulings("collision")
        assert (ruling["article"], ruling["kind"], ruling["piece"]) == (
            "realtime 4.2",
            "collision",
            "b",
        )
        await h.until(lambda: h.corrections() == ["take b off a5"])
        await h.until(lambda: "OFF A5" in h.texts())
        await h.lift("a5", 1.6)
        await h.until(lambda: h.corrections() == [])
        assert h.record() == ["a1a8", "c7a5"]
        assert "taken in move" in h.table.pgn()


async def test_rule_4_3_in_move_capture_of_a_piece_standing_in_the_path() -> None:
    async with table_at("4k3/8/8/2n5/8/8/8/R3K3 w - - 0 1") as h:
        await h.move("a1a8", "R", 0.3)  # enters a6 at 1.2
        await h.move("c5a6", "n", 0.35)  # a knight ignores move blocking; lands 0.75
        await h.until(lambda: bool(h.rulings("collision")))
        [ruling] = h.rulings("collision")
        assert (ruling["article"], ruling["piece"], ruling["square"]) == ("realtime 4.3", "n", "a6")
        await h.until(lambda: h.corrections() == ["take n off a6"])
        await h.lift("a6", 1.6)
        await h.until(lambda: h.corrections() == [])
        await play_until_arrived(h, 2.0)
        assert h.board() == "R3k3/8/8/8/8/8/8/4K3"


async def test_rule_4_4_double_dodge_when_both_moved_at_the_same_time() -> None:
    async with table_at("4k3/8/8/2b5/8/8/8/R3K3 w - - 0 1") as h:
        await h.lift_together(["a1", "c5"], 0.3)  # both on a3 from 0.6 to 0.7
        await h.put("a8", "R", 0.4)
        await h.put("a3", "b", 0.45)
        await play_until_arrived(h, 1.8)
        assert [r["kind"] for r in h.rulings()] == ["collision"]
        assert h.rulings()[0]["article"] == "realtime 4.4"
        assert h.board() == "R3k3/8/8/8/8/b7/8/4K3"
        assert h.corrections() == []


# -- rule 5: the end ------------------------------------------------------------------------------


async def test_rule_5_1_the_king_taken_loses() -> None:
    async with table_at("4k3/8/8/8/8/8/8/4R1K1 w - - 0 1") as h:
        await h.lift("e8", 0.3)
        await h.move("e1e8", "R", 0.35)
        await h.until(lambda: h.table.phase == "finished")
        assert h.table.result == "1-0"
        assert h.of("result")[-1]["reason"] == "king taken"
        await h.until(lambda: "1-0" in h.texts())
        pgn = h.table.pgn()
        assert '[Variant "Realtime"]' in pgn
        assert '[Termination "king taken"]' in pgn
        assert "1. Re1xe8 {[%vt 0.3" in pgn
        assert pgn.rstrip().endswith("1-0")


async def test_rule_5_2_resignation_loses() -> None:
    async with table_at() as h:
        await h.move("e2e4", "P", 0.3)
        await h.until(lambda: len(h.record()) == 1)
        h.link.admin("end", result="0-1", reason="White resigns")
        assert h.table.phase == "finished"
        assert '[Result "0-1"]' in h.table.pgn()
        await h.move("d2d4", "P", 0.8)  # the game is over: no more moves
        await h.at(1.1)
        assert h.record() == ["e2e4"]


async def test_rule_5_3_agreed_draw() -> None:
    async with table_at() as h:
        events = h.link.admin("end", result="1/2-1/2", reason="agreement")
        assert [e.type for e in events] == ["result"]
        assert h.table.result == "1/2-1/2"
        with pytest.raises(TableError):
            h.link.admin("end", result="1-0")


async def test_rule_5_4_five_minutes_without_a_capture_draw() -> None:
    # The table sees time 150 times faster: five minutes pass in two seconds.
    async with table_at(tick=1.0, scale=150.0) as h:
        await h.until(lambda: h.table.phase == "finished", 6)
        assert h.table.result == "1/2-1/2"
        assert h.of("result")[-1]["reason"] == "five minutes without capture"


# -- rule 6: time ---------------------------------------------------------------------------------


async def test_rule_6_1_and_6_2_one_square_per_tick_knight_and_castling_two() -> None:
    async with table_at("4k3/8/8/8/8/8/8/RN2K2R w KQ - 0 1") as h:
        await h.move("a1a4", "R", 0.3)
        await h.until(lambda: bool(h.table.state()["realtime"]["travels"]))
        [travel] = h.table.state()["realtime"]["travels"]
        assert (travel["piece"], travel["from"], travel["to"]) == ("R", "a1", "a4")
        await h.move("b1c3", "N", 0.4)
        await h.move("e1g1", "K", 0.5)
        await h.move("h1f1", "R", 0.6)
        await h.until(lambda: len(h.record()) == 3)
        durations = {m["uci"]: round(m["arrives"] - m["start"], 3) for m in h.table.moves()}
        assert durations == pytest.approx({"a1a4": 3 * TICK, "b1c3": 2 * TICK, "e1g1": 2 * TICK})


async def test_rule_6_3_ten_ticks_of_delay_after_arrival() -> None:
    async with table_at() as h:
        await h.move("g1f3", "N", 0.3)  # arrives 0.7
        await play_until_arrived(h, 0.9)
        left = h.table.state()["realtime"]["delays"]["f3"]
        assert 10 * TICK - 0.4 < left < 10 * TICK
        await h.move("f3g5", "N", 2.9)  # 0.7 + 2.0 has passed
        await h.until(lambda: len(h.record()) == 2)
        assert not h.rulings("refused")


async def test_rule_6_the_fastest_tick_and_the_tick_setting() -> None:
    async with table_at(tick=0.1) as h:
        await h.move("e2e4", "P", 0.3)
        await h.until(lambda: len(h.record()) == 1)
        assert h.table.moves()[0]["arrives"] - h.table.moves()[0]["start"] == pytest.approx(0.2)
        with pytest.raises(TableError, match="tick must be"):
            h.link.admin("start", tick="0.05")
        h.link.admin("start", tick="0.5")
        assert h.table.state()["realtime"]["tick"] == 0.5


# -- presence-only boards -------------------------------------------------------------------------


@pytest.mark.parametrize("path", END_TO_END)
async def test_pegasus_two_pieces_in_the_air_and_a_refused_move_lit(path: str) -> None:
    async with table_at(pegasus=True, path=path) as h:
        assert h.table.presence_only
        await h.lift("e7", 0.3)
        await h.lift("e2", 0.35)
        await h.put("e4", "P", 0.45)
        await h.put("e5", "p", 0.5)
        await h.move("g1g3", "N", 0.7)  # no knight move
        await h.until(lambda: bool(h.rulings("refused")))
        assert h.record() == ["e7e5", "e2e4"]
        assert h.corrections() == ["move N from g3 to g1"]
        if isinstance(h.link, LinkedTable):  # the LEDs: a board driver's job
            link = h.link
            await h.until(lambda: link.leds is not None and link.leds.pattern == "fix")
            assert link.leds is not None
            assert link.leds.squares == frozenset({sq("g1"), sq("g3")})
        await h.move("g3g1", "N", 1.1)
        await h.until(lambda: h.corrections() == [])
