"""``dgt-service recognize`` replays a log through the table the live service runs: for the
same board events it tells the table's story -- the same moves, rulings and PGN as a live
table fed those events -- for every variant (realtime and 20-chess with their options), a
rule set under which an illegal move stands (US speed 11), a recording that starts from a
set-up position (``--fen``), a first move no rule allows completed by the press, and the
``[%clk]`` and ``Date`` the log's clock reports and header hold."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess
import pytest
from test_table_helpers import Hands

from dgt.events import BoardEvent, BoardSnapshot, ClockUpdate, Side, SquareChanged
from dgt.protocol.constants import Piece
from dgt.recording import event_to_json
from service.cli import main
from service.table import RealtimeTable, Table, TableEvent, TableSettings

STARTED = "2026-11-22T10:00:00+00:00"
DATE = '[Date "2026.11.22"]'
UNKNOWN = '[Date "????.??.??"]'


@dataclass
class Recorded(Hands):
    """Hands at a live table whose every board event is also kept for a log."""

    events: list[BoardEvent] = field(default_factory=list)

    def feed(self, event: Any) -> Any:
        self.events.append(event)
        return super().feed(event)


def write_log(path: Path, events: Sequence[BoardEvent]) -> Path:
    """A log as ``monitor --record`` writes it, its header saying when it began."""
    header = {"t": 0.0, "type": "header", "format": "dgt-record", "version": 1,
              "source": "test", "started": STARTED}  # fmt: skip
    lines = [json.dumps(header)]
    lines += [json.dumps({"t": e.time, "type": "event", **event_to_json(e)}) for e in events]
    path.write_text("\n".join(lines) + "\n")
    return path


def recognize(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    status = main(["recognize", *args])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return captured.out


def as_json(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def dated(pgn: str) -> str:
    """A live table's PGN with the day the log began (a table in a hall has it too)."""
    return pgn.replace(UNKNOWN, DATE)


def fed(table: Table | RealtimeTable, events: Sequence[BoardEvent]) -> list[TableEvent]:
    out: list[TableEvent] = []
    for event in events:
        out += table.tick(event.time) + table.feed(event)
    return out + table.tick(events[-1].time + 10)


def test_uscf_speed_an_illegal_move_that_stood_is_recorded_as_at_a_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """US speed 11: White's knight jumps g1-g3 and nobody claims; the game goes on.  The
    old path printed ``1. e4 e5 *`` and the later moves only as mismatches."""
    hands = Recorded(TableSettings(rules="uscf-speed", time_control="300+0"))
    hands.play("e2e4", "P", True)
    hands.play("e7e5", "p", False)
    hands.move("g1g3", "N")
    hands.press(True)
    hands.play("d7d6", "p", False)  # Black replies without claiming: the move stands
    hands.play("g3f5", "N", True)
    hands.play("c8f5", "b", False)
    log = write_log(tmp_path / "uscf.jsonl", hands.events)
    args = (str(log), "--rules", "uscf-speed", "--time-control", "300+0")
    pgn = recognize(capsys, *args)
    assert pgn == dated(hands.table.pgn())
    assert '[GameSegment "1/2"]' in pgn
    assert '[GameSegment "2/2"]' in pgn
    assert "1. e4 {[%clk" in pgn
    assert "Bxf5" in pgn
    lines = as_json(recognize(capsys, *args, "--json"))
    assert [r["kind"] for r in lines if r["type"] == "ruling"] == [
        r["kind"] for r in (e.to_json() for e in hands.out) if r["type"] == "ruling"
    ]
    moves = [m["uci"] for m in lines if m["type"] == "move" and m["final"]]
    assert moves == ["e2e4", "e7e5", "d7d6", "g3f5", "c8f5"]  # g1g3 stood: a ruling
    assert [m["uci"] for m in hands.table.moves()] == [
        "e2e4", "e7e5", "g1g3", "d7d6", "g3f5", "c8f5"
    ]  # fmt: skip


@pytest.mark.parametrize("report", [True, False], ids=["clock-reported", "no-report"])
@pytest.mark.parametrize("control", ["auto", "-", "180+2"])
def test_an_illegal_first_move_pressed_is_read_at_the_press(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], report: bool, control: str
) -> None:
    """The very first move of the game jumps e2-e5 and White presses: the press is
    White's (FIDE 7.5.1), whether or not the clock reported before and whatever the time
    control -- before, the press was read as Black starting White's clock, and nothing
    happened."""
    hands = Recorded(TableSettings(rules="fide-blitz"))
    hands.move("e2e5", "P")
    hands.press(True)
    events = hands.events if report else [e for e in hands.events if type(e) is not ClockUpdate]
    log = write_log(tmp_path / "first.jsonl", events)
    lines = as_json(
        recognize(capsys, str(log), "--json", "--rules", "fide-blitz", "--time-control", control)
    )
    press = events[-1].time
    irregularities = [line for line in lines if line["type"] == "irregularity"]
    assert [(i["kind"], i["side"], i["move"], i["time"]) for i in irregularities] == [
        ("illegal-move", "white", "e2-e5", press)
    ]
    assert any(line["type"] == "clock" and line["time"] == press for line in lines)
    timed = control if control != "auto" else ("300" if report else "-")
    live = Table("live", TableSettings(rules="fide-blitz", time_control=timed))
    expected = [e.to_json() for e in fed(live, events) if e.type == "irregularity"]
    assert irregularities == [{"type": e.pop("type"), **e} for e in expected]


def test_realtime_replays_through_the_realtime_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--variant realtime``: both sides move at once and a move is refused (rule 3.1);
    the old path read the stream as standard chess."""
    events: list[BoardEvent] = [BoardSnapshot(0.0, start(), "connect")]
    for a, b, symbol, t in [("e2", "e4", "P", 1.0), ("e7", "e5", "p", 1.1),
                            ("g1", "f3", "N", 1.5), ("f3", "g5", "N", 3.0)]:  # fmt: skip
        piece = Piece.from_symbol(symbol)
        events.append(SquareChanged(t, chess.parse_square(a), Piece.EMPTY, piece))
        events.append(SquareChanged(t + 0.2, chess.parse_square(b), piece, Piece.EMPTY))
    log = write_log(tmp_path / "realtime.jsonl", events)
    pgn = recognize(capsys, str(log), "--variant", "realtime", "--tick", "0.2")
    live = RealtimeTable("live", {"tick": "0.2"})
    fed(live, events)
    assert pgn == dated(live.pgn())
    assert '[Variant "Realtime"]' in pgn
    assert '[RealtimeTick "0.2"]' in pgn
    assert "1. e2-e4" in pgn
    assert "2... e7-e5" in pgn
    assert "Ng1-f3" in pgn
    lines = as_json(recognize(capsys, str(log), "--variant", "realtime", "--tick", "0.2",
                              "--json"))  # fmt: skip
    refused = [line for line in lines if line["type"] == "ruling"]
    assert [(r["kind"], r["article"]) for r in refused] == [("refused", "realtime 3.1")]
    assert {"arrival", "new_game", "move"} <= {line["type"] for line in lines}


def test_fen_starts_the_recording_from_a_set_up_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recording of a set-up position (an endgame lesson): ``--fen`` gives the start, as
    the table's ``start`` setting does; without it the board never shows a start."""
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
    hands = Recorded(TableSettings(start=fen, time_control="60+1"), fen=fen)
    hands.play("e2e4", "P", True)
    hands.play("e8e7", "k", False)
    hands.play("e1e2", "K", True)
    log = write_log(tmp_path / "setup.jsonl", hands.events)
    assert main(["recognize", str(log)]) == 1  # no start position on the board
    assert "no game found" in capsys.readouterr().err
    pgn = recognize(capsys, str(log), "--fen", fen, "--time-control", "60+1")
    assert '[SetUp "1"]' in pgn
    assert f'[FEN "{fen}"]' in pgn
    live = Table("live", TableSettings(start=fen, time_control="60+1"))
    fed(live, hands.events)
    assert pgn == dated(live.pgn())
    assert [m["uci"] for m in live.moves()] == ["e2e4", "e8e7", "e1e2"]
    assert "1. e4 {[%clk 0:00:59]} Ke7" in pgn


def test_pgn_has_the_clock_times_the_log_holds_and_its_date(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The clock's reports give each move's ``[%clk]`` (by default the time control is the
    clock's time at its first report), the log's header the ``Date``."""
    hands = Recorded()  # the clock's first report: 5 minutes each, White on the left
    hands.play("e2e4", "P", True)
    hands.feed(ClockUpdate(hands.time, 296.0, 300.0, True, Side.RIGHT))
    hands.move("e7e5", "p")
    hands.feed(ClockUpdate(hands.time, 296.0, 271.5, True, Side.RIGHT))  # Black thought
    hands.press(False)
    hands.feed(ClockUpdate(hands.time, 296.0, 271.0, True, Side.LEFT))
    hands.play("g1f3", "N", True)
    log = write_log(tmp_path / "clock.jsonl", hands.events)
    pgn = recognize(capsys, str(log))
    assert DATE in pgn
    assert '[TimeControl "300"]' in pgn
    assert "e5 {[%clk 0:04:31]}" in pgn  # from the clock's report, not the table's count
    assert "2. Nf3 {[%clk 0:04:55]}" in pgn
    live = Table("live", TableSettings(time_control="300"))
    fed(live, hands.events)
    assert pgn == dated(live.pgn())


@pytest.mark.parametrize(
    ("variant", "options", "tag"),
    [
        ("standard", None, None),
        ("chess960", None, '[Variant "Chess960"]'),
        ("t20", None, None),
        ("twenty-chess", "schedule=1,1,1", None),
    ],
)
def test_every_variant_tells_the_live_tables_story(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], variant: str, options: str | None,
    tag: str | None,
) -> None:  # fmt: skip
    """The classical set-up starts the table's variant; the options go to it as a table
    takes them."""
    settings = TableSettings(variant=variant, options=options, time_control="180+2")
    hands = Recorded(settings)
    hands.play("e2e4", "P", True)
    hands.play("e7e5", "p", False)
    hands.play("g1f3", "N", True)
    log = write_log(tmp_path / f"{variant}.jsonl", hands.events)
    args = [str(log), "--variant", variant, "--time-control", "180+2"]
    if options:
        args += ["--options", options]
    pgn = recognize(capsys, *args)
    assert pgn == dated(hands.table.pgn())
    assert [m["uci"] for m in hands.table.moves()] == ["e2e4", "e7e5", "g1f3"]
    if tag is not None:
        assert tag in pgn


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--options", "cast"], "variant standard takes no options"),
        (["--variant", "twenty-chess", "--options", "fast"], "unknown 20-chess option"),
        (["--tick", "0.5"], "--tick is for realtime chess"),
        (["--variant", "realtime", "--tick", "3"], "tick must be"),
        (["--fen", "not a fen"], "bad start FEN"),
    ],
)
def test_bad_table_settings_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    log = write_log(tmp_path / "empty.jsonl", [BoardSnapshot(0.0, start(), "connect")])
    assert main(["recognize", str(log), *args]) == 2
    captured = capsys.readouterr()
    errors = captured.err.strip().splitlines()
    assert captured.out == ""
    assert len(errors) == 1, errors
    assert errors[0].startswith("dgt-service recognize: ")
    assert message in errors[0]


def start() -> tuple[Piece, ...]:
    cells = [Piece.EMPTY] * 64
    for square, piece in chess.Board().piece_map().items():
        cells[square] = Piece.from_symbol(piece.symbol())
    return tuple(cells)


def test_promotion_on_a_presence_only_board_is_the_arbiters_correction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A presence-only board cannot show the piece a pawn became: the table reads a queen,
    and ``--promotion r`` corrects it as an arbiter at the table would."""
    fen = "8/4P3/8/8/8/k7/8/K7 w - - 0 1"
    hands = Recorded(TableSettings(start=fen), fen=fen, presence_only=True)
    hands.lift("e7")
    hands.put("e8", "R")
    hands.press(True)
    hands.play("a3b3", "k", False)
    log = write_log(tmp_path / "promotion.jsonl", hands.events)
    queen = recognize(capsys, str(log), "--fen", fen, "--time-control", "300+0")
    assert queen == dated(hands.table.pgn())
    assert "1. e8=Q" in queen
    rook = recognize(capsys, str(log), "--fen", fen, "--promotion", "r", "--json")
    rulings = [line for line in as_json(rook) if line["type"] == "ruling"]
    assert [(r["kind"], r["uci"]) for r in rulings] == [("correction", "e7e8r")]
    pgn = recognize(capsys, str(log), "--fen", fen, "--promotion", "r")
    assert "1. e8=R {[%clk 0:04:59]} Kb3" in pgn
