"""The config's ``board`` key of a table and its ``[broadcast]`` section: values, defaults
and one-line errors naming the file, the line and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.config import ConfigError, load_config, parse_config

T = 'token_env = "LICHESS_TOKEN"'
TABLES = '[[table]]\nport = "emulator"\n\n[[table]]\nport = "e2"\nboard = 7\n'


def test_board_defaults_to_the_position_and_can_be_set() -> None:
    config = parse_config(TABLES + '\n[[table]]\nport = "e3"\n')
    assert [t.board for t in config.tables] == [1, 7, 3]
    assert config.broadcast is None


@pytest.mark.parametrize(
    ("extra", "line", "words"),
    [
        ('\n[[table]]\nport = "e3"\nboard = 7\n', 10, "board 7 is already the board of table 2"),
        ('\n[[table]]\nport = "e3"\nboard = 0\n', 10, "board must be a board number 1-9999"),
        ('\n[[table]]\nport = "e3"\nboard = "2"\n', 10, "board must be a board number"),
    ],
)
def test_bad_board(extra: str, line: int, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(TABLES + extra, "hall.toml")
    assert str(caught.value).startswith(f"hall.toml:{line}: ")
    assert words in str(caught.value)


BROADCAST = """
[broadcast]
token_env = "LICHESS_TOKEN"

[[broadcast.round]]
round = "1"
id = "AbCd1234"

[[broadcast.round]]
round = "2"
id = "EfGh5678"
delay = 900
"""


def test_broadcast_section() -> None:
    config = parse_config(TABLES + BROADCAST)
    assert config.broadcast is not None
    b = config.broadcast
    assert b.url == "https://lichess.org"
    assert b.token_env == "LICHESS_TOKEN"
    assert b.token_file is None
    assert b.interval == 3.0
    assert [(r.round, r.lichess_id, r.delay) for r in b.rounds] == [
        ("1", "AbCd1234", 0.0),
        ("2", "EfGh5678", 900.0),
    ]


@pytest.mark.parametrize(
    ("old", "new", "line", "words"),
    [
        ('id = "AbCd1234"', 'id = "AbCd12"', 13, "id must be the lichess round id"),
        ("delay = 900", "delay = -1", 18, "delay must be 0 to 3600 seconds"),
        ('round = "2"', 'round = "1"', 16, "round '1' is already pushed by round 1"),
        (T, 'token_env = "1x y"', 9, "token_env: must be"),
        (T, 'url = "https://lichess.org"', 8, "give the lichess token"),
        (T, 'token_env = "T"\ninterval = 0.5', 10, "interval: must be 2"),
        (T, 'token_env = "T"\ncolour = 1', 10, "unknown key 'colour'"),
        (T, 'token_env = "T"\nurl = "x.org"', 10, "url: must be like"),
    ],
)  # fmt: skip
def test_bad_broadcast(old: str, new: str, line: int, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(TABLES + BROADCAST.replace(old, new), "hall.toml")
    assert str(caught.value).startswith(f"hall.toml:{line}: [broadcast] ")
    assert words in str(caught.value)


def test_token_file_is_checked_and_never_shown(tmp_path: Path) -> None:
    config = tmp_path / "hall.toml"
    text = TABLES + BROADCAST.replace('token_env = "LICHESS_TOKEN"', 'token_file = "lichess.token"')
    config.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    assert f"{config}:9: [broadcast] token_file: " in str(caught.value)
    (tmp_path / "lichess.token").write_text("lip_secret0123\n")
    loaded = load_config(config)
    assert loaded.broadcast is not None
    assert loaded.broadcast.token_file == tmp_path / "lichess.token"
    assert "lip_secret0123" not in repr(loaded)
