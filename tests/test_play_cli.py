"""``dgt-service play`` on the command line: it serves and says where; bad input gets a
one-line error, never a traceback."""

from __future__ import annotations

import socket

import pytest

from service.cli import main


@pytest.mark.slow
def test_play_serves_the_emulated_board_and_prints_the_address(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["play", "emulator", "--port", "0", "--seconds", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "dgt-service play: serving ws://127.0.0.1:" in out
    assert "/api/v1.0" in out
    assert "board 12345 on emulator (piece-identity)" in out


@pytest.mark.parametrize(
    ("argv", "code", "words"),
    [
        (["play", "emulator", "--settle", "0"], 2, "--settle must be 0.2..10 seconds"),
        (["play", "emulator", "--port", "70000"], 2, "--port must be 0..65535"),
        (["play", "emulator", "--allow-origin", "example.org"], 2, "takes an origin like"),
        (["play", "emulator", "emulator"], 2, "a board is given twice"),
        (["play", "/dev/no-such-board"], 1, "no such port /dev/no-such-board"),
    ],
)
def test_play_refuses_bad_input_in_one_line(
    argv: list[str], code: int, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == code
    err = capsys.readouterr().err
    assert words in err
    assert len(err.strip().splitlines()) == 1


def test_a_taken_port_is_one_line_naming_livechess(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["play", "emulator", "--port", str(port)]) == 1
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err
    assert "LiveChess" in err
    assert len(err.strip().splitlines()) == 1
