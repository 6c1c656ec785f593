"""20-chess at a DGT table, one scenario per numbered rule of the 20-chess rules: what the
players physically do -- lift, place, press the lever, each with its time -- on the emulated
board, read as the driver reads it into a :class:`service.table.Table`, down to the record,
the PGN, the rulings, the clock texts and the mirror's state.  The scenarios run on the
table's own time line (:class:`table_bench.TableBench`: explicit times, no sleeping); rule 1
runs a second time end to end (slow): the in-process transport, the driver (``dgt.Board``)
and :class:`linked_table.LinkedTable` (the service's ``TableRunner``), in real time.

Each scenario reaches its rule at once through the table's ``schedule`` option (turn ``n``
under the ``n``-th listed rule), after a few orthodox turns where the rule needs captured
pieces.  End to end, the table sees the driver's times ten times faster than they are
played.
"""

from __future__ import annotations

import asyncio
import re
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
from dgt.emulator.clock import VirtualClock
from dgt.protocol import ClockCommand
from dgt.protocol.constants import Piece
from dgt.transports.emulator import EmulatorTransport
from service.table import Table, TableError, TableSettings

GAP = 0.02
"""Real seconds between two steps of a hand in the end-to-end run (0.2 s on the table's
time line)."""
SCALE = 10.0
PREFIX = "e2e4 | d7d5 | e4d5 | d8d5 | b1c3 | d5a2 | a1a2 | e7e5 |"
"""Four orthodox turns: White takes a pawn and a queen, Black two pawns."""


class TextClock(VirtualClock):
    """The emulated DGT 3000, remembering every text it was asked to show."""

    def __init__(self) -> None:
        super().__init__(left=600, right=600)  # exactly the control, stopped
        self.texts: list[str] = []

    def command(self, data: bytes, now: float) -> tuple[int, int, int, int] | None:
        ack = super().command(data, now)
        if len(data) > 2 and data[1] == ClockCommand.ASCII and self.text is not None:
            self.texts.append(self.text.strip())
        return ack


class Scene:
    """Two players' hands at an emulated board, and the table it feeds: on the table's own
    time line (``TableBench``, ``transport`` None) or through the in-process transport and
    the driver in real time (``LinkedTable``, the end-to-end run)."""

    def __init__(
        self,
        vb: VirtualBoard,
        link: TableBench | LinkedTable,
        clock: TextClock | None,
        transport: EmulatorTransport | None = None,
    ) -> None:
        self.vb = vb
        self.link = link
        self.clock = clock
        self.transport = transport

    @property
    def table(self) -> Table:
        table = self.link.table
        assert isinstance(table, Table)
        return table

    async def step(self) -> None:
        """A hand's step: 0.2 s on the table's time line."""
        if isinstance(self.link, TableBench):
            self.link.advance(GAP * SCALE)
        else:
            await asyncio.sleep(GAP)

    def act(self, action: Callable[[float], bytes]) -> None:
        if isinstance(self.link, TableBench):
            self.link.act(action)
        else:
            assert self.transport is not None
            self.transport.inject(action(time.monotonic()))

    async def lift(self, name: str) -> None:
        await self.step()
        square = chess.parse_square(name)
        self.act(lambda now: self.vb.lift(square, now))

    async def put(self, name: str, symbol: str) -> None:
        await self.step()
        square, piece = chess.parse_square(name), Piece.from_symbol(symbol)
        self.act(lambda now: self.vb.place(square, piece, now))

    def symbol(self, name: str) -> str:
        return self.vb.squares[chess.parse_square(name)].symbol

    async def move(self, uci: str) -> None:
        """Lift the piece (and one standing on the target), set it down on the target."""
        piece = self.symbol(uci[:2])
        if len(uci) > 4:
            piece = uci[4].upper() if piece.isupper() else uci[4]
        await self.lift(uci[:2])
        if self.vb.squares[chess.parse_square(uci[2:4])] is not Piece.EMPTY:
            await self.lift(uci[2:4])
        await self.put(uci[2:4], piece)

    async def press(self) -> None:
        """Press the clock lever and wait until the table saw it."""
        await self.step()
        seen = self.levers()
        self.act(self.vb.press_lever)
        await self.until(lambda: self.levers() > seen, 3)

    def levers(self) -> int:
        events = self.link.events
        return sum(1 for e in events if e.type == "board" and e.data.get("event") == "lever")

    async def play(self, script: str) -> None:
        """Do what ``script`` says, token by token: ``e2e4`` a move (``e7e8q`` promotes),
        ``P@h3`` a piece set on a square (a drop; the stand-in of the extra piece too),
        ``b1<>c1`` two pieces exchanged, ``-a2`` a piece taken off, ``g1f3&b1a3`` two moves
        one after the other, ``|`` a press of the lever (the lever put back after a ruling
        is a press too)."""
        for token in script.split():
            if token == "|":
                await self.press()
            elif "&" in token:
                for part in token.split("&"):
                    await self.move(part)
            elif "@" in token:
                symbol, square = token.split("@")
                await self.put(square, symbol)
            elif "<>" in token:
                first, second = token.split("<>")
                a, b = self.symbol(first), self.symbol(second)
                await self.lift(first)
                await self.lift(second)
                await self.put(first, b)
                await self.put(second, a)
            elif token.startswith("-"):
                await self.lift(token[1:])
            else:
                await self.move(token)
        await self.step()
        await self.flush()

    async def flush(self) -> None:
        if isinstance(self.link, LinkedTable):
            await self.link.flush()

    # -- reading what came out ------------------------------------------------------------

    def ucis(self, final: bool = True) -> list[str]:
        return [m["uci"] for m in self.table.moves() if m["final"] or not final]

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e.to_json() for e in self.link.events if e.type == kind]

    def irregularities(self) -> list[dict[str, Any]]:
        return self.of_type("irregularity")

    def panel(self) -> dict[str, Any]:
        panel = self.table.state()["variant_panel"]
        assert isinstance(panel, dict)
        return panel

    def admin(self, command: str, **args: Any) -> list[dict[str, Any]]:
        return [e.to_json() for e in self.link.admin(command, **args)]

    async def until(self, predicate: Any, within: float = 3.0) -> None:
        """Until ``predicate`` holds; ``within`` real seconds of the end-to-end run (ten times
        as many on the table's time line)."""
        if isinstance(self.link, TableBench):
            self.link.until(predicate, within * SCALE)
        else:
            await wait_until(predicate, within)
            await self.link.flush()


@asynccontextmanager
async def twenty(
    options: str = "", *, rules: str = "casual", pegasus: bool = False, path: str = "table"
) -> AsyncIterator[Scene]:
    """A 20-chess table at an emulated board (a DGT 3000 on it unless a Pegasus), the game
    started from the classical set-up.  ``path`` "table": on the table's time line
    (``TableBench``); "transport": the in-process transport, the driver and ``LinkedTable``,
    in real time with the table's times ten times faster."""
    clock = None if pegasus else TextClock()
    settings = TableSettings(
        variant="twenty-chess", options=options or None, rules=rules, time_control="600+0"
    )
    table = Table("twenty", settings)
    if path == "table":
        vb = VirtualBoard(pegasus=pegasus, clock=clock)
        scene = Scene(vb, TableBench(vb, table), clock)
        await _started(scene)
        yield scene
        return
    assert path == "transport", path
    vb = VirtualBoard(now=time.monotonic(), pegasus=pegasus, clock=clock)
    transport = EmulatorTransport(vb, name="twenty")
    async with Board(transport, read_memory=False, **FAST) as board:
        if clock is not None:
            await wait_until(lambda: board.clock.connected is True, 3)
        async with LinkedTable(board, table, scale=SCALE) as link:
            scene = Scene(vb, link, clock, transport)
            await _started(scene)
            yield scene


async def _started(scene: Scene) -> None:
    table, clock = scene.table, scene.clock
    await scene.until(lambda: table.phase == "playing")
    assert table.game is not None
    assert table.game.variant.id == "twenty-chess"
    if clock is not None:
        await scene.until(lambda: clock.ticking)


def assert_pgn(scene: Scene, *fragments: str) -> str:
    """The PGN has the Variant tag and each fragment, either as written or in the move
    text without its comments (``3. P@h3 Ng1-f3``)."""
    pgn = scene.table.pgn()
    assert '[Variant "20-chess"]' in pgn
    moves = " ".join(re.sub(r"\{[^}]*\}", " ", pgn.split("\n\n", 1)[1]).split())
    flat = " ".join(pgn.split())
    for fragment in fragments:
        assert fragment in flat or fragment in moves, (fragment, pgn)
    return pgn


# -- the rules, one by one ------------------------------------------------------------------


@pytest.mark.parametrize("path", ["table", pytest.param("transport", marks=pytest.mark.slow)])
async def test_rule_1_orthodox_and_the_rule_on_the_clock(path: str) -> None:
    async with twenty(path=path) as s:
        await s.play("e2e4 | e7e5 |")
        assert s.ucis() == ["e2e4", "e7e5"]
        assert_pgn(s, "1. e2-e4 {[%clk", "rule 1: orthodox chess}", "1. e2-e4 e7-e5 *")
        assert s.clock is not None
        assert "RULE 1" in s.clock.texts
        await s.until(lambda: s.clock is not None and "RULE 2" in s.clock.texts)
        assert s.panel()["rule"] == 2
        assert s.panel()["turn"] == 2


async def test_rule_2_two_moves_and_a_press_between_them() -> None:
    async with twenty("schedule=2") as s:
        await s.play("e2e4 |")
        incomplete = [i for i in s.irregularities() if i["kind"] == "part-incomplete"]
        assert incomplete
        assert incomplete[0]["side"] == "white"
        assert "rule 2" in incomplete[0]["message"]
        assert incomplete[0]["article"] == "20-chess"
        await s.until(lambda: s.clock is not None and "NOT DONE" in s.clock.texts)
        assert any(r["kind"] == "clock" and r["run"] == "white" for r in s.of_type("ruling"))
        await s.play("| g1f3 | e7e5 b8c6 |")  # the lever put back, the second move, press
        assert s.ucis() == ["e2e4", "g1f3", "e7e5", "b8c6"]
        assert_pgn(s, "1. e2-e4", "Ng1-f3", "1... e7-e5", "Nb8-c6")


async def test_rule_3_swap_then_move() -> None:
    async with twenty("schedule=3") as s:
        await s.play("b1<>c1 e2e4 | f8<>g8 e7e5 |")
        assert s.ucis() == ["b1<>c1", "e2e4", "f8<>g8", "e7e5"]
        assert_pgn(s, "Nb1<>Bc1", "rule 3: swap two")
        assert s.symbol("c1") == "N"


async def test_rule_4_drop_and_an_illegal_drop_set_right() -> None:
    async with twenty("schedule=1,1,4") as s:
        await s.play("e2e4 | d7d5 | e4d5 | d8d5 |")
        assert s.panel()["hands"] == {"white": "p", "black": "p"}
        await s.play("P@d8 |")  # no pawn on the last row
        wrong = s.irregularities()[-1]
        assert wrong["squares"] == ["d8"]
        assert "rule 4" in wrong["message"]
        assert "d8" in s.table.state()["mismatch"]
        await s.play("-d8 | P@h3 g1f3 | p@a6 b8c6 |")
        assert s.ucis()[4:] == ["P@h3", "g1f3", "p@a6", "b8c6"]
        assert_pgn(s, "3. P@h3 Ng1-f3", "3... P@a6 Nb8-c6", "rule 4:")
        assert s.panel()["hands"] == {"white": "", "black": ""}


async def test_rule_5_the_opponent_picks_through_the_admin_api() -> None:
    async with twenty("schedule=1,1,1,1,5") as s:
        await s.play(PREFIX)
        panel = s.panel()
        assert panel["step"] == "choose"
        assert panel["pending_choice"] == {"what": "piece", "by": "black", "options": ["p", "q"]}
        await s.until(lambda: s.clock is not None and "R5 PICK" in s.clock.texts)
        with pytest.raises(TableError, match="choose one of p, q"):
            s.admin("choose", value="n")
        chosen = s.admin("choose", value="p")
        assert [e for e in chosen if e["type"] == "choice"] == [
            {"time": chosen[0]["time"], "type": "choice", "what": "piece", "value": "p",
             "by": "black"}
        ]  # fmt: skip
        await s.play("Q@d3 |")  # not the piece Black picked
        assert s.irregularities()[-1]["squares"] == ["d3"]
        await s.play("-d3 | P@a3 g1f3 | p@a6 b8c6 |")
        assert s.ucis()[8:] == ["P@a3", "g1f3", "p@a6", "b8c6"]


async def test_rule_5_the_pick_read_off_the_piece_dropped() -> None:
    async with twenty("schedule=1,1,1,1,5") as s:
        await s.play(PREFIX + " Q@d3 g1f3 |")
        assert s.ucis()[8:] == ["Q@d3", "g1f3"]
        assert s.panel()["hands"]["white"] == "p"


async def test_rule_6_drops_until_a_hand_is_empty() -> None:
    async with twenty("schedule=1,1,1,1,6") as s:
        await s.play(PREFIX)
        assert s.panel()["steps"] == ["drop", "drop", "move"]
        await s.play("P@a3 Q@d3 g1f3 | p@a6 p@h6 b8c6 |")
        assert s.ucis()[8:] == ["P@a3", "Q@d3", "g1f3", "p@a6", "p@h6", "b8c6"]
        assert_pgn(s, "5. P@a3 Q@d3 Ng1-f3", "5... P@a6 P@h6 Nb8-c6")


async def test_rule_7_a_knight_move_is_illegal() -> None:
    async with twenty("schedule=7") as s:
        await s.play("g1f3 |")
        illegal = s.irregularities()[-1]
        assert illegal["kind"] == "illegal-move"
        assert illegal["squares"] == ["g1", "f3"]
        assert "rule 7: move a pawn or the king" in illegal["message"]
        assert s.ucis() == []
        await s.play("f3g1 | e2e4 | e7e5 |")
        assert s.ucis() == ["e2e4", "e7e5"]


async def test_rule_8_only_knights_or_the_king_fide_penalty() -> None:
    async with twenty("schedule=8", rules="fide-rapid") as s:
        await s.play("e2e4 |")
        assert s.irregularities()[-1]["article"] == "FIDE 7.5.1"
        assert any(r["kind"] == "penalty-time" for r in s.of_type("ruling"))
        await s.play("e4e2 | g1f3 | g8f6 |")
        assert s.ucis() == ["g1f3", "g8f6"]


async def test_rule_10_rooks_or_the_king() -> None:
    async with twenty("schedule=1,10") as s:
        await s.play("a2a4 | a7a5 | b1c3 |")
        assert s.irregularities()[-1]["kind"] == "illegal-move"
        await s.play("c3b1 | a1a3 | a8a6 |")
        assert s.ucis() == ["a2a4", "a7a5", "a1a3", "a8a6"]


async def test_rule_12_the_extra_piece_as_a_fool() -> None:
    async with twenty("schedule=12") as s:
        await s.play("q@e4 g1f3 | Q@e5 b8c6 |")
        assert s.ucis() == ["F@e4", "g1f3", "f@e5", "b8c6"]
        extra = s.panel()["extra"]
        assert extra["white"] == {"status": "board", "kind": "fool", "square": "e4",
                                  "stand_in": "q"}  # fmt: skip
        assert s.panel()["fool_moves_as"] == "n"
        assert s.panel()["placement"].startswith("r1bqkbnr/pppppppp/2n5/4f3/4F3/5N2")
        assert_pgn(s, "1. F@e4 Ng1-f3", "1... F@e5 Nb8-c6", "rule 12:")


async def test_rule_13_the_extra_piece_as_an_elephant_with_special_pieces() -> None:
    async with twenty("schedule=13 stand-ins=special") as s:
        await s.play("W@d4 g1f3 | X@d5 g8f6 |")
        assert s.table.result == "*"  # the special pieces are no result gesture here
        assert s.ucis() == ["E@d4", "g1f3", "e@d5", "g8f6"]
        assert s.panel()["extra"]["black"]["kind"] == "elephant"


async def test_rule_14_the_mountain_and_a_re_drop() -> None:
    async with twenty("schedule=12,14") as s:
        await s.play("q@e4 g1f3 | Q@e5 b8c6 |")
        assert s.panel()["extra"]["white"]["kind"] == "mountain"  # it changed at once
        await s.play("e4d3 e2e3 | e5d6 e7e6 |")  # re-dropped, then another piece moves
        assert s.ucis()[4:] == ["e4d3", "e2e3", "e5d6", "e7e6"]
        assert s.panel()["extra"]["black"]["square"] == "d6"


@pytest.mark.parametrize(
    ("schedule", "script", "pgn"),
    [
        pytest.param("1,9", "e2e4 | e7e5 | f1c4 | f8c5 |",
                     ("2. Bf1-c4 Bf8-c5", "rule 9: move a bishop or the king"),
                     id="rule-9-bishops-or-the-king"),
        pytest.param("1,11", "f2f4 | f7f5 | f1f2 | f8f7 |", ("2. Bf1-f2 Bf8-f7", "rule 11:"),
                     id="rule-11-a-bishop-steps-straight"),
        pytest.param("1,15", "e2e4 | e7e5 | e1f3 | e8d6 |", ("rule 15:",),
                     id="rule-15-the-king-jumps-like-a-knight"),
        pytest.param("1,16", "a2a4 | h7h5 | a4h5 | g8f6 |", ("2. a4xh5", "rule 16:"),
                     id="rule-16-the-board-is-a-cylinder"),
    ],
)  # fmt: skip
async def test_a_rule_s_moves_are_read_as_played(
    schedule: str, script: str, pgn: tuple[str, ...]
) -> None:
    """Turn 2 under the rule (after an orthodox turn 1): each move is recorded as made,
    and the PGN names the rule."""
    async with twenty(f"schedule={schedule}") as s:
        await s.play(script)
        assert s.ucis() == script.replace("|", " ").split()
        assert_pgn(s, *pgn)


async def test_rule_17_a_tandem_of_identical_steps() -> None:
    async with twenty("schedule=17") as s:
        await s.play("g1f3 |")  # alone: no other piece made the same step
        illegal = s.irregularities()[-1]
        assert illegal["kind"] == "illegal-move"
        assert illegal["squares"] == ["g1", "f3"]
        assert "rule 17" in illegal["message"]
        await s.play("f3g1 | g1f3&b1a3 | g8f6&b8a6 |")
        ucis = s.ucis()
        assert len(ucis) == 2
        assert set(ucis[0].split("&")) == {"g1f3", "b1a3"}
        assert set(ucis[1].split("&")) == {"g8f6", "b8a6"}


async def test_rule_18_backwards_only() -> None:
    async with twenty("schedule=1,18") as s:
        await s.play("g1f3 | g8f6 | e2e4 |")
        assert s.irregularities()[-1]["squares"] == ["e2", "e4"]
        await s.play("e4e2 | f3g1 | f6g8 |")
        assert s.ucis() == ["g1f3", "g8f6", "f3g1", "f6g8"]


async def test_rule_19_a_gift_then_an_orthodox_move() -> None:
    async with twenty("schedule=19") as s:
        await s.play("-a2 e2e4 | -h7 e7e5 |")
        assert s.ucis() == ["-a2", "e2e4", "-h7", "e7e5"]
        assert s.panel()["hands"] == {"white": "p", "black": "p"}
        assert_pgn(s, "1. Pa2>> e2-e4", "1... Ph7>> e7-e5")


async def test_rule_20_both_knights_move() -> None:
    async with twenty("schedule=1,20") as s:
        await s.play("e2e4 | e7e5 | g1f3&b1c3 | g8f6&b8c6 |")
        ucis = s.ucis()
        assert ucis[:2] == ["e2e4", "e7e5"]
        assert set(ucis[2].split("&")) == {"g1f3", "b1c3"}
        assert set(ucis[3].split("&")) == {"g8f6", "b8c6"}


# -- the cast, and a presence-only board ----------------------------------------------------


async def test_cast_rule_entered_through_the_admin_api() -> None:
    async with twenty("cast") as s:
        assert s.panel()["pending_choice"]["what"] == "rule"
        await s.play("e2e4")  # made before the cast was entered: read once it is
        s.admin("choose", value=2)
        await s.play("g1f3 | e7e5 b8c6 |")
        assert s.ucis() == ["e2e4", "g1f3", "e7e5", "b8c6"]
        assert s.panel()["step"] == "cast"


async def test_presence_only_board_swap_drop_and_gift() -> None:
    async with twenty("schedule=3,12,19", pegasus=True) as s:
        await s.play("b1<>c1 e2e4 f8<>g8 e7e5")
        await s.play("P@d4 g1f3 P@d5 b8c6")  # any piece: the board reads occupancy only
        await s.play("-a2 f1e2 -h7 d7d6")
        await s.until(lambda: len(s.ucis()) == 12, 3)
        assert s.ucis() == ["b1<>c1", "e2e4", "f8<>g8", "e7e5", "F@d4", "g1f3", "f@d5",
                            "b8c6", "-a2", "f1e2", "-h7", "d7d6"]  # fmt: skip


@pytest.mark.parametrize(
    ("options", "prefix", "script", "named"),
    [
        ("schedule=1,1,4", "e2e4 | d7d5 | e4d5 | d8d5 |", "P@d8 a2a3 |",
         "drop P@d8 (rule 4: no pawn on the last row)"),
        ("schedule=1,1,1,1,4", PREFIX, "Q@e6 g1f3 |",
         "drop Q@e6 (rule 4: a drop may not give check)"),
        ("schedule=1,1,1,1,5", PREFIX + " =p", "Q@d3 g1f3 |",
         "drop Q@d3 (rule 5: drop the piece the opponent picked (p))"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("rules", ["casual", "fide-standard"])
async def test_a_forbidden_drop_is_named_whatever_legal_action_follows_it_in_the_part(
    options: str, prefix: str, script: str, named: str, rules: str
) -> None:
    async with twenty(options, rules=rules) as s:
        pick = prefix.endswith("=p")
        await s.play(prefix.removesuffix(" =p"))
        if pick:
            s.admin("choose", value="p")
        before = s.ucis(final=False)
        seen = len(s.link.events)
        await s.play(script)
        drop_square = script[2:4]
        [wrong] = [e.to_json() for e in s.link.events[seen:] if e.type == "irregularity"]
        assert wrong["kind"] == "illegal-move"
        assert wrong["squares"] == [drop_square]
        assert named in wrong["message"]
        assert wrong["move"] == named
        rulings = [e.to_json() for e in s.link.events[seen:] if e.type == "ruling"]
        assert "must-move" not in [r["kind"] for r in rulings]  # a drop has no piece to move
        if rules == "fide-standard":
            [restore] = [r for r in rulings if r["kind"] == "restore"]
            assert restore["restore_ply"] == len(before)  # before the drop
        assert s.ucis(final=False) == before


async def test_a_move_made_while_a_drop_is_due_is_ruled_as_that_move() -> None:
    async with twenty("schedule=1,1,4", rules="fide-standard") as s:
        await s.play("e2e4 | d7d5 | e4d5 | d8d5 |")
        await s.play("a2a3 |")  # a pawn in the hand, but no piece came from it
        wrong = s.irregularities()[-1]
        assert wrong["squares"] == ["a2", "a3"]
        assert wrong["message"].startswith("illegal move a2-a3 completed by the clock press")
