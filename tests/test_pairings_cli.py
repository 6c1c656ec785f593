"""Pairings from the command line and the config: ``run --pairings FILE --round N`` and
``[pairings] file = ..., round = N``; a bad file is one line naming it and its line, before
anything is served."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from service.cli import main
from service.config import ConfigError, PairingsConfig, load_config, parse_config

DATA = Path(__file__).parent / "data"
TRF = DATA / "pairings-round3.trf"

HALL = """\
[service]
database = "hall.db"

[[table]]
port = "emulator"

[[table]]
port = "emulator"
board = 3
"""


def test_the_config_names_the_pairings_file_and_round(tmp_path: Path) -> None:
    config = parse_config(HALL + '\n[pairings]\nfile = "r3.trf"\nround = 3\n', tmp_path / "h.toml")
    assert config.pairings == PairingsConfig(tmp_path / "r3.trf", 3)
    assert parse_config(HALL).pairings is None


BAD_SECTIONS = [
    ('[pairings]\nfile = "r.trf"\nrounds = 3\n', r"h\.toml:13: \[pairings\] unknown key 'rounds'"),
    ("[pairings]\nround = 3\n", r"h\.toml:11: \[pairings\] file: must be the pairings file"),
    ('[pairings]\nfile = "r.trf"\nround = 0\n', r"h\.toml:13: \[pairings\] round: must be a "),
]


@pytest.mark.parametrize(("section", "message"), BAD_SECTIONS)
def test_a_bad_pairings_section_names_file_line_and_key(section: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(HALL + "\n" + section, "h.toml")
    with pytest.raises(ConfigError, match=r"h\.toml:1: \[pairings\] must be a table"):
        parse_config('pairings = "r.trf"\n' + HALL, "h.toml")


def test_a_bad_pairings_file_is_named_by_the_config_and_by_its_own_line(tmp_path: Path) -> None:
    (tmp_path / "bad.trf").write_text("001    1 mXX9 Solo, Player\n", encoding="utf-8")
    (tmp_path / "h.toml").write_text(HALL + '\n[pairings]\nfile = "bad.trf"\nround = 1\n')
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "h.toml")
    message = str(caught.value)
    where = f"{tmp_path / 'h.toml'}:12: [pairings] file: {tmp_path / 'bad.trf'}:1: "
    assert message.startswith(where)
    assert "title (columns 11-13) 'XX9'" in message
    shutil.copy(TRF, tmp_path / "r3.trf")
    (tmp_path / "h.toml").write_text(HALL + '\n[pairings]\nfile = "r3.trf"\nround = 3\n')
    assert load_config(tmp_path / "h.toml").pairings == PairingsConfig(tmp_path / "r3.trf", 3)


def test_run_refuses_a_bad_pairings_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "x.db")
    assert main(["run", "emulator", "--pairings", str(TRF), "--db", db]) == 2
    assert capsys.readouterr().err == (
        f"dgt-service run: {TRF}: a TRF file holds every round: say which (--round N)\n"
    )
    assert main(["run", "emulator", "--pairings", str(TRF), "--round", "7", "--db", db]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dgt-service run: {TRF}:11: no pairings for round 7")
    assert err.count("\n") == 1
    assert main(["run", "emulator", "--pairings", str(tmp_path / "no.csv"), "--db", db]) == 2
    assert "no.csv: no such pairings file" in capsys.readouterr().err
    assert not (tmp_path / "x.db").exists()  # refused before the store is opened


@pytest.mark.slow
def test_run_seats_the_round_at_start(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(TRF, tmp_path / "r3.trf")
    (tmp_path / "h.toml").write_text(HALL + '\n[pairings]\nfile = "r3.trf"\nround = 3\n')
    args = ["run", "--config", str(tmp_path / "h.toml"), "--port", "0", "--seconds", "0.5",
            "--admin-token", "pairings-cli-token"]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "pairings round 3 from r3.trf: 2 table(s) seated; no table for board(s) 2, 4, 5, 6, 7, "
        "8, 9; 2 bye(s)"
    )
    assert main(args) == 0  # again: the tables have their players already
    assert (
        capsys.readouterr()
        .out.splitlines()[0]
        .startswith("pairings round 3 from r3.trf: 2 table(s) seated (2 already);")
    )
