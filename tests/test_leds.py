"""Square LEDs: the pure plan (:mod:`service.leds`) on scripted table states, and end to end
on an emulated Pegasus on a pseudo-terminal (emulator, pyserial, ``dgt.Board``,
``LinkedTable``): what the players see lit (``VirtualBoard.leds``, players' frame)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import chess
import pytest
from conftest import wait_until
from linked_table import LinkedTable
from test_table_helpers import Hands as TableHands

from dgt import Board
from dgt.board import LedKind
from dgt.emulator.board import VirtualBoard
from dgt.emulator.pty import EmulatorServer
from dgt.errors import ConnectionFailed
from dgt.protocol import Command, Piece
from service.leds import (
    FIX,
    LAST_MOVE,
    OFF,
    LedPlan,
    differing,
    fit_to,
    follow_target,
    plan_leds,
)
from service.table import Table, TableEvent, TableSettings

SQ = chess.parse_square


def squares(*names: str) -> frozenset[int]:
    return frozenset(SQ(n) for n in names)


def state(
    *,
    phase: str = "playing",
    moves: Sequence[tuple[str, bool]] = (),
    mismatch: Sequence[str] = (),
    orientation: str = "white",
    board: str = chess.STARTING_BOARD_FEN,
) -> dict[str, Any]:
    """The parts of :meth:`Table.state` the plan reads."""
    return {
        "phase": phase,
        "orientation": orientation,
        "moves": [
            {"ply": i + 1, "uci": uci, "final": final} for i, (uci, final) in enumerate(moves)
        ],
        "mismatch": list(mismatch),
        "board": board,
    }


def start_map(fen: str = chess.STARTING_FEN) -> tuple[str, ...]:
    cells = [""] * 64
    for square, piece in chess.Board(fen).piece_map().items():
        cells[square] = piece.symbol()
    return tuple(cells)


# -- the pure plan ---------------------------------------------------------------------------


def test_nothing_lit_before_a_move_and_when_the_board_matches() -> None:
    assert plan_leds(state()) == OFF
    assert plan_leds(state(phase="setup")) == OFF


def test_a_final_move_lights_its_from_and_to_squares_with_one_blink() -> None:
    plan = plan_leds(state(moves=[("e2e4", True)]))
    assert plan.squares == squares("e2", "e4")
    assert (plan.pattern, plan.repeat) == ("last-move", 1)
    assert plan == LedPlan(squares("e2", "e4"), "last-move", LAST_MOVE.speed, 1,
                           LAST_MOVE.intensity)  # fmt: skip


def test_a_provisional_move_is_not_lit() -> None:
    # the last entry is provisional (not completed yet): nothing to confirm
    assert plan_leds(state(moves=[("e2e4", True), ("e7e5", False)])) == OFF


def test_a_mismatch_wins_over_the_last_move_and_pulses() -> None:
    plan = plan_leds(state(moves=[("e2e4", True)], mismatch=["g1", "g4"]))
    assert plan.squares == squares("g1", "g4")
    assert (plan.pattern, plan.repeat, plan.speed) == ("fix", 0, FIX.speed)
    # set right: back to the last move
    assert plan_leds(state(moves=[("e2e4", True)])).pattern == "last-move"


def test_nothing_lit_when_the_game_is_over() -> None:
    over = state(phase="finished", moves=[("f2f3", True), ("e7e5", True), ("g2g4", True),
                                          ("d8h4", True)], mismatch=["a1"])  # fmt: skip
    assert plan_leds(over) == OFF


def test_a_board_turned_round_gets_board_frame_squares() -> None:
    plan = plan_leds(state(moves=[("e2e4", True)], orientation="black"))
    assert plan.squares == frozenset({63 - SQ("e2"), 63 - SQ("e4")})
    assert plan.squares == squares("d7", "d5")
    mismatch = plan_leds(state(mismatch=["a1", "h8"], orientation="black"))
    assert mismatch.squares == squares("h8", "a1")
    one = plan_leds(state(mismatch=["b1"], orientation="black"))
    assert one.squares == squares("g8")


def test_takeback_that_stands_lights_the_squares_to_set_up_again() -> None:
    """FIDE: completed moves taken back stand.  The table already undid e4 (its history is
    the start position); the target is the position after e4 again."""
    history = chess.Board()
    board_now = start_map()
    events = [
        TableEvent(5.0, "takeback", {"ply": 0, "moves": ["e2e4"], "final": [True]}),
        TableEvent(5.0, "irregularity", {"kind": "takeback", "squares": []}),
    ]
    target = follow_target(None, events, history=history, plies=0, physical=board_now)
    assert target == start_map("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    plan = plan_leds(state(), physical=board_now, target=target)
    assert (plan.pattern, plan.squares) == ("fix", squares("e2", "e4"))
    # the pawn lifted from e2: only e4 (where it must go) is left
    lifted = tuple("" if sq == SQ("e2") else s for sq, s in enumerate(board_now))
    assert plan_leds(state(), physical=lifted, target=target).squares == squares("e4")
    # set up again: the target is dropped
    assert follow_target(target, [], history=history, plies=0, physical=target) is None


def test_takeback_under_casual_rules_lights_nothing_to_set_right() -> None:
    events = [TableEvent(5.0, "takeback", {"ply": 0, "moves": ["e2e4"], "final": [True]})]
    target = follow_target(None, events, history=chess.Board(), plies=0,
                           physical=start_map())  # fmt: skip
    assert target is None
    assert plan_leds(state(), target=target) == OFF


def test_restore_ruling_lights_the_squares_of_the_move_to_take_back() -> None:
    """An upheld touch-move claim: e4 stands on the board and in the record, the ruling wants
    the position after ply 0."""
    history = chess.Board()
    history.push_uci("e2e4")
    after = start_map(history.fen())
    ruling = TableEvent(9.0, "ruling", {"kind": "restore", "restore_ply": 0})
    target = follow_target(None, [ruling], history=history, plies=1, physical=after)
    assert target == start_map()
    plan = plan_leds(state(moves=[("e2e4", True)]), physical=after, target=target)
    assert (plan.pattern, plan.squares) == ("fix", squares("e2", "e4"))
    # the target wins over a last move and over a mismatch elsewhere
    plan = plan_leds(state(moves=[("e2e4", True)], mismatch=["a7"]), physical=after,
                     target=target)  # fmt: skip
    assert plan.squares == squares("e2", "e4")
    # a new game drops it
    assert follow_target(target, [TableEvent(10.0, "new_game", {})], history=chess.Board(),
                         plies=0, physical=after) is None  # fmt: skip


def test_illegal_move_restore_lights_the_squares_that_differ_on_a_turned_board() -> None:
    """FIDE 7.5.1: the illegal Ke1-e3 never entered the record; the ruling wants the current
    position, which the board (turned round, presence only) does not show."""
    history = chess.Board()
    physical = list(start_map())
    physical = ["*" if s else "" for s in physical]
    physical[SQ("e1")], physical[SQ("e3")] = "", "*"
    ruling = TableEvent(9.0, "ruling", {"kind": "restore", "restore_ply": 0})
    target = follow_target(None, [ruling], history=history, plies=0, physical=physical)
    assert target == start_map()
    assert differing(target, physical) == squares("e1", "e3")
    plan = plan_leds(state(orientation="black"), physical=physical, target=target)
    assert plan.squares == frozenset({63 - SQ("e1"), 63 - SQ("e3")})
    # presence only: an occupied square where a piece belongs counts as right
    assert differing(start_map(), ["*" if s else "" for s in start_map()]) == frozenset()


def test_a_restore_that_cannot_be_worked_out_leaves_no_target() -> None:
    ruling = TableEvent(9.0, "ruling", {"kind": "restore", "restore_ply": 0})
    assert follow_target(None, [ruling], history=None, plies=1, physical=start_map()) is None
    assert follow_target(None, [ruling], history=chess.Board(), plies=3,
                         physical=start_map()) is None  # fmt: skip


def test_revelation_ii_shows_at_most_one_pair() -> None:
    plan = LedPlan(squares("a1", "c3", "h8"), "fix")
    assert fit_to(plan, LedKind.REV2).squares == squares("a1", "c3")
    assert fit_to(plan, LedKind.PEGASUS) == plan
    move = LedPlan(squares("e2", "e4"), "last-move")
    assert fit_to(move, LedKind.REV2) == move


# -- end to end on an emulated Pegasus ---------------------------------------------------------

FAST: dict[str, Any] = {"handshake_retry": 0.3, "settle_delay": 0.05}
GAP = 0.2
"""Seconds between a hand's steps: slower than the sensors' flicker filters (0.15 s)."""
SCALE = 4.0
"""The table's time runs this much faster (its settle delay for a move without a clock)."""


class Hands:
    """A player's hands at an emulated board on a pty, and the table linked to it."""

    def __init__(self, server: EmulatorServer, vb: VirtualBoard, link: LinkedTable) -> None:
        self.server = server
        self.vb = vb
        self.link = link

    async def lift(self, name: str) -> None:
        await asyncio.sleep(GAP)
        square = SQ(name)
        self.server.act(lambda now: self.vb.lift(square, now))

    async def put(self, name: str, symbol: str) -> None:
        await asyncio.sleep(GAP)
        square = SQ(name)
        self.server.act(lambda now: self.vb.place(square, Piece.from_symbol(symbol), now))

    async def move(self, uci: str, symbol: str) -> None:
        await self.lift(uci[:2])
        await self.put(uci[2:4], symbol)

    async def lit(self, *names: str, within: float = 4.0) -> None:
        """Wait until exactly ``names`` are lit (players' frame)."""
        await wait_until(lambda: self.vb.leds == squares(*names), within)


@asynccontextmanager
async def pegasus_table(
    tmp_path: Path, settings: TableSettings, *, reversed: bool = False
) -> AsyncIterator[Hands]:
    vb = VirtualBoard(pegasus=True, reversed=reversed)
    async with (
        EmulatorServer(vb, link=tmp_path / "board") as server,
        Board(server.path, read_memory=False, **FAST) as board,
        LinkedTable(board, Table("leds", settings), scale=SCALE) as link,
    ):
        assert board.info.leds is LedKind.PEGASUS
        assert link.table.phase == "playing"
        await wait_until(lambda: link.leds == OFF, 2)  # a new game starts with all LEDs off
        yield Hands(server, vb, link)


@pytest.mark.slow
@pytest.mark.usefixtures("no_leaked_tasks")
async def test_pegasus_lights_the_move_then_the_misplaced_piece_until_set_right(
    tmp_path: Path,
) -> None:
    async with pegasus_table(tmp_path, TableSettings(time_control="-")) as p:
        await p.move("e2e4", "P")
        await p.lit("e2", "e4")
        assert p.vb.led_settings["repeat"] == 1  # one confirmation blink
        assert p.link.leds is not None
        assert p.link.leds.pattern == "last-move"
        await p.move("e7e5", "p")
        await p.lit("e7", "e5")
        # Black's knight lands on a square no knight move reaches
        await p.move("g8g4", "n")
        await p.lit("g8", "g4")
        assert p.vb.led_settings["repeat"] == 0  # pulsing until set right
        assert sorted(p.link.table.state()["mismatch"]) == ["g4", "g8"]
        await p.move("g4g8", "n")
        await p.lit("e7", "e5")  # back to the last move
        assert p.link.table.state()["mismatch"] == []
        assert [m["uci"] for m in p.link.table.moves()] == ["e2e4", "e7e5"]


@pytest.mark.slow
@pytest.mark.usefixtures("no_leaked_tasks")
async def test_pegasus_lights_the_squares_to_set_right_while_a_started_game_waits(
    tmp_path: Path,
) -> None:
    async with pegasus_table(tmp_path, TableSettings(time_control="-")) as p:
        await p.move("e2e4", "P")
        await p.lit("e2", "e4")
        await p.move("g8f6", "n")
        await p.lit("g8", "f6")
        p.link.admin("start")  # a new game on a board that does not show the start
        assert p.link.table.phase == "setup"
        await p.lit("e2", "e4", "g8", "f6")
        assert p.vb.led_settings["repeat"] == 0  # pulsing until set right
        await p.move("e4e2", "P")
        await p.lit("g8", "f6")
        await p.move("f6g8", "n")
        await wait_until(lambda: p.link.table.phase == "playing", 4)
        await p.lit()


@pytest.mark.slow
@pytest.mark.usefixtures("no_leaked_tasks")
async def test_revelation_ii_turned_round_lights_the_squares_the_players_see(
    tmp_path: Path,
) -> None:
    """A Pegasus reads occupancy only, so it cannot tell it was turned round; a Revelation
    II (piece identity, one LED pair per frame) can: the plan is mapped to its frame."""
    vb = VirtualBoard(revelation=True, reversed=True, clock=None)
    async with (
        EmulatorServer(vb, link=tmp_path / "board") as server,
        Board(server.path, read_memory=False, **FAST) as board,
        LinkedTable(board, Table("rev2", TableSettings(time_control="-")), scale=SCALE) as link,
    ):
        assert board.info.leds is LedKind.REV2
        assert link.table.state()["orientation"] == "black"
        p = Hands(server, vb, link)
        await p.move("d2d4", "P")
        await p.lit("d2", "d4")  # vb.leds is the players' frame
        assert link.leds is not None
        assert link.leds.squares == frozenset({63 - SQ("d2"), 63 - SQ("d4")})
        await p.move("g8g4", "n")  # a mismatch
        await p.lit("g4", "g8")
        await p.move("g4g8", "n")
        await p.lit("d2", "d4")


@pytest.mark.slow
@pytest.mark.usefixtures("no_leaked_tasks")
async def test_pegasus_takeback_that_stands_lights_the_move_to_set_up_again(
    tmp_path: Path,
) -> None:
    """FIDE rules: a completed move taken back on the board stands; the LEDs show where to
    set it up again, and go back to the last move once it stands again."""
    async with pegasus_table(tmp_path, TableSettings(rules="fide-standard",
                                                     time_control="-")) as p:  # fmt: skip
        await p.move("e2e4", "P")
        await p.lit("e2", "e4")
        await p.move("e4e2", "P")
        await wait_until(lambda: p.link.leds is not None and p.link.leds.pattern == "fix", 4)
        assert [e.data["kind"] for e in p.link.events if e.type == "irregularity"] == ["takeback"]
        assert p.vb.leds == squares("e2", "e4")
        assert p.vb.led_settings["repeat"] == 0
        await p.lift("e2")  # the pawn in hand: only where it goes stays lit
        await p.lit("e4")
        await p.put("e4", "P")
        await wait_until(lambda: p.link.leds is not None and p.link.leds.pattern == "last-move")
        assert p.vb.leds == squares("e2", "e4")
        assert [m["uci"] for m in p.link.table.moves()] == ["e2e4"]


class Recorder(VirtualBoard):
    """A classic board that remembers every byte the host sent."""

    def __init__(self) -> None:
        super().__init__(clock=None)
        self.received = bytearray()

    def receive(self, data: bytes, now: float) -> bytes:
        self.received += data
        return super().receive(data, now)


@pytest.mark.slow
@pytest.mark.usefixtures("no_leaked_tasks")
async def test_a_board_without_leds_never_gets_an_led_frame(tmp_path: Path) -> None:
    vb = Recorder()
    async with (
        EmulatorServer(vb, link=tmp_path / "board") as server,
        Board(server.path, read_memory=False, **FAST) as board,
        LinkedTable(board, Table("classic", TableSettings(time_control="-")), scale=SCALE) as link,
    ):
        assert board.info.leds is None
        hands = Hands(server, vb, link)
        await hands.move("e2e4", "P")
        await hands.move("g8g4", "n")  # a mismatch too
        await wait_until(lambda: link.table.state()["mismatch"] != [], 4)
        await asyncio.sleep(0.3)
        assert [m["uci"] for m in link.table.moves()] == ["e2e4"]
        assert Command.SET_LEDS not in vb.received
        assert link.leds is None
        leds_task = f"leds {link.runner.id}"
        assert not any(t.get_name() == leds_task for t in asyncio.all_tasks())


@pytest.mark.slow
@pytest.mark.usefixtures("no_leaked_tasks")
async def test_leds_are_sent_only_when_the_plan_changes_and_failures_do_not_stop_the_game(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with pegasus_table(tmp_path, TableSettings(time_control="-")) as p:
        board = p.link.board
        calls: list[tuple[str, tuple[int, ...]]] = []
        set_leds, clear_leds = board.set_leds, board.clear_leds

        async def counting_set(squares: Iterable[int], **hints: int) -> None:
            squares = tuple(squares)
            calls.append(("set", squares))
            await set_leds(squares, **hints)

        async def counting_clear() -> None:
            calls.append(("clear", ()))
            await clear_leds()

        board.set_leds = counting_set  # type: ignore[method-assign]
        board.clear_leds = counting_clear  # type: ignore[method-assign]
        await p.move("e2e4", "P")
        await p.lit("e2", "e4")
        await asyncio.sleep(0.5)  # ticks and board events go on; the plan does not change
        assert calls == [("set", (SQ("e2"), SQ("e4")))]

        async def broken(*args: object, **kwargs: object) -> None:
            raise ConnectionFailed("LED write failed")

        board.set_leds = broken  # type: ignore[method-assign]
        await p.move("e7e5", "p")
        await wait_until(lambda: len(p.link.table.moves()) == 2 and p.link.table.moves()[-1][
            "final"], 4)  # fmt: skip
        await wait_until(lambda: "LEDs not set" in caplog.text, 2)
        assert p.vb.leds != squares("e7", "e5")  # its blink never went out
        board.set_leds = set_leds  # type: ignore[method-assign]
        await p.move("g1f3", "N")  # the game went on; LEDs work again
        await p.lit("g1", "f3")
        assert [m["uci"] for m in p.link.table.moves()] == ["e2e4", "e7e5", "g1f3"]


def realtime_state(corrections: Sequence[dict[str, str]], **kwargs: Any) -> dict[str, Any]:
    """A realtime table's state (:meth:`RealtimeTable.state`): the corrections to make."""
    return {**state(**kwargs), "realtime": {"corrections": list(corrections)}}


def test_realtime_corrections_light_their_squares_until_done() -> None:
    move_back = {"kind": "move", "square": "f3", "from": "e5", "piece": "N"}
    take_off = {"kind": "remove", "square": "a4", "piece": "n"}
    plan = plan_leds(realtime_state([move_back, take_off], moves=[("g1f3", True)]))
    assert plan == replace_squares(FIX, "f3", "e5", "a4")
    assert plan_leds(realtime_state([], moves=[("g1f3", True)])) == replace_squares(
        LAST_MOVE, "g1", "f3"
    )
    assert plan_leds(realtime_state([take_off], phase="finished")) == OFF


def test_realtime_corrections_on_a_board_turned_round_and_on_a_revelation() -> None:
    put_on = {"kind": "place", "square": "e4", "piece": "P"}
    plan = plan_leds(realtime_state([put_on], orientation="black"))
    assert plan.squares == frozenset({63 - SQ("e4")})
    many = [{"kind": "remove", "square": n, "piece": "p"} for n in ("h7", "a2", "c3")]
    assert fit_to(plan_leds(realtime_state(many)), LedKind.REV2).squares == squares("a2", "c3")


def replace_squares(template: LedPlan, *names: str) -> LedPlan:
    return LedPlan(squares(*names), template.pattern, template.speed, template.repeat,
                   template.intensity)  # fmt: skip


# -- 20-chess: parts of several actions, drops and swaps --------------------------------------

TWENTY_PREFIX = [
    ("e2e4", "P", True), ("d7d5", "p", False), ("e4d5", "P", True), ("d8d5", "q", False),
    ("b1c3", "N", True), ("d5a2", "q", False), ("a1a2", "R", True), ("e7e5", "p", False),
]  # fmt: skip
"""Four orthodox turns: White takes a pawn and a queen, Black two pawns."""


def twenty_table(schedule: str, *, prefix: bool = False) -> TableHands:
    hands = TableHands(TableSettings(variant="twenty-chess", options=f"schedule={schedule}"))
    if prefix:
        for uci, symbol, white in TWENTY_PREFIX:
            hands.play(uci, symbol, white)
    return hands


def twenty_plan(hands: TableHands) -> LedPlan:
    return plan_leds(hands.table.state(), physical=hands.table.physical())


def test_twenty_chess_a_drop_and_its_move_light_all_their_squares_once_pressed() -> None:
    hands = twenty_table("1,1,1,1,4", prefix=True)
    hands.put("d3", "Q")
    hands.move("g1f3", "N")
    assert twenty_plan(hands) == OFF  # the part's last action is still provisional
    hands.press(True)
    assert [m["uci"] for m in hands.table.moves()[8:]] == ["Q@d3", "g1f3"]
    plan = twenty_plan(hands)
    assert plan.pattern == "last-move"
    assert plan.squares == squares("d3", "g1", "f3")
    assert fit_to(plan, LedKind.REV2).squares == squares("g1", "f3")  # the last action
    assert fit_to(plan, LedKind.PEGASUS).squares == squares("d3", "g1", "f3")
    hands.put("a6", "p")
    hands.move("b8c6", "n")
    hands.press(False)
    assert twenty_plan(hands).squares == squares("a6", "b8", "c6")  # Black's part only


def test_twenty_chess_a_swap_lights_both_squares_on_a_board_turned_round() -> None:
    hands = twenty_table("3")
    hands.lift("b1")
    hands.lift("c1")
    hands.put("b1", "B")
    hands.put("c1", "N")
    hands.move("e2e4", "P")
    hands.press(True)
    assert [m["uci"] for m in hands.table.moves()] == ["b1<>c1", "e2e4"]
    state_ = hands.table.state()
    assert plan_leds(state_).squares == squares("b1", "c1", "e2", "e4")
    turned = plan_leds({**state_, "orientation": "black"})
    assert turned.squares == frozenset(63 - sq for sq in squares("b1", "c1", "e2", "e4"))
    assert fit_to(turned, LedKind.REV2).squares == frozenset({63 - SQ("e2"), 63 - SQ("e4")})


def test_twenty_chess_a_wrong_drop_lights_the_square_to_set_right() -> None:
    hands = twenty_table("1,1,1,1,4", prefix=True)
    hands.put("d8", "P")  # a pawn on White's last row: no legal drop
    hands.wait(3.0)
    assert "d8" in hands.table.state()["mismatch"]
    plan = twenty_plan(hands)
    assert plan.pattern == "fix"
    assert SQ("d8") in plan.squares
    hands.lift("d8")
    hands.put("h3", "P")
    hands.move("g1f3", "N")
    hands.press(True)
    after = twenty_plan(hands)
    assert (after.pattern, after.squares) == ("last-move", squares("h3", "g1", "f3"))
