"""``dgt-service recognize LOG --json --rules ... --time-control ...``: the arbiter's
irregularity, claim, ruling, clock and score events come out among the recogniser's, in
time order, for a log of a game with an illegal move completed by the clock press (FIDE
7.5.1, 7.5.5 and Appendix B.3 in blitz); bad values are one-line errors with exit status 2."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from test_table_helpers import Hands

from dgt.events import BoardEvent
from dgt.recording import RecordWriter
from service.arbiter import RULE_SETS
from service.cli import main


@dataclass
class Recorded(Hands):
    """Hands whose every board event is also kept, to be written to a log."""

    events: list[BoardEvent] = field(default_factory=list)

    def feed(self, event: Any) -> Any:
        self.events.append(event)
        return super().feed(event)


@pytest.fixture(scope="module")
def illegal_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1. e4 e5, then White's king jumps e1-e3 and White presses; the king goes back, Black
    puts the lever back, and White replaces the move with the king (7.5.1 with 4.3): Ke2."""
    hands = Recorded()
    hands.play("e2e4", "P", True)
    hands.play("e7e5", "p", False)
    hands.move("e1e3", "K")
    hands.press(True)
    hands.move("e3e1", "K")
    hands.press(False)  # Black puts the lever back: White's side up
    hands.play("e1e2", "K", True)
    path = tmp_path_factory.mktemp("log") / "illegal.jsonl"
    with path.open("w") as stream:
        writer = RecordWriter(stream, "test")
        for event in hands.events:
            writer.event(event)
    return path


def recognize_json(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, Any]]:
    status = main(["recognize", *args, "--json"])
    out = capsys.readouterr().out
    assert status == 0
    return [json.loads(line) for line in out.splitlines()]


def test_fide_7_5_1_illegal_move_completed_by_the_press_in_the_json_output(
    illegal_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = recognize_json(
        capsys, str(illegal_log), "--rules", "fide-blitz", "--time-control", "180+2"
    )
    times = [line["time"] for line in lines]
    assert times == sorted(times)
    arbiter = [line for line in lines if line["type"] in ("irregularity", "ruling", "claim")]
    assert [(a["type"], a["kind"]) for a in arbiter] == [
        ("irregularity", "illegal-move"),
        ("ruling", "restore"),
        ("ruling", "penalty-time"),
        ("ruling", "clock"),
        ("ruling", "must-move"),
    ]
    irregularity = arbiter[0]
    assert (irregularity["article"], irregularity["side"], irregularity["move"]) == (
        "FIDE 7.5.1", "white", "Ke1-e3",
    )  # fmt: skip
    assert arbiter[2]["add_time"] == {"black": 60.0}  # B.3: one minute in blitz
    assert arbiter[2]["article"] == "FIDE 7.5.5"
    press = irregularity["time"]
    assert all(a["time"] == press for a in arbiter)
    clocks = [line for line in lines if line["type"] == "clock"]
    before = [c for c in clocks if c["time"] < press][-1]
    after = [c for c in clocks if c["time"] == press]
    assert after
    assert after[0]["black"] == pytest.approx(before["black"] + 60.0, abs=0.01)
    assert after[-1]["running"] == "white"
    # increments (180+2): each completed move adds two seconds to its player
    assert clocks[0]["white"] == 180.0
    moves = [line for line in lines if line["type"] == "move" and line.get("final")]
    assert [m["uci"] for m in moves] == ["e2e4", "e7e5", "e1e2"]
    # the recogniser's own events are there too, and come first at equal times
    first = next(i for i, line in enumerate(lines) if line["time"] == press)
    assert lines[first]["type"] not in ("irregularity", "ruling", "claim", "clock")


def test_casual_rules_report_no_penalty(
    illegal_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = recognize_json(capsys, str(illegal_log), "--rules", "casual")
    kinds = [(line["type"], line.get("kind")) for line in lines if line["type"] == "ruling"]
    assert ("ruling", "penalty-time") not in kinds
    assert [line["kind"] for line in lines if line["type"] == "irregularity"] == [
        "illegal-move"
    ]  # casual: the clock goes back, nothing else


def test_bad_rules_is_an_error_naming_the_rule_sets(
    illegal_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--rules`` is checked against the rule sets: exit status 2, one error line naming
    the bad value and every rule set (argparse prints its usage lines before it)."""
    with pytest.raises(SystemExit) as exited:
        main(["recognize", str(illegal_log), "--json", "--rules", "fide-lightning"])
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    errors = [line for line in captured.err.splitlines() if "fide-lightning" in line]
    assert len(errors) == 1
    assert "'fide-lightning'" in errors[0]
    for rules in RULE_SETS:
        assert rules in errors[0]


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--time-control", "3 minutes", "bad time control '3 minutes'"),
        ("--time-control", "0/180", "a period needs moves > 0"),
    ],
)
def test_bad_time_control_is_a_one_line_error(
    illegal_log: Path, capsys: pytest.CaptureFixture[str], option: str, value: str,
    message: str,
) -> None:  # fmt: skip
    assert main(["recognize", str(illegal_log), "--json", option, value]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    errors = captured.err.strip().splitlines()
    assert len(errors) == 1, errors
    assert errors[0].startswith("dgt-service recognize: ")
    assert message in errors[0]
