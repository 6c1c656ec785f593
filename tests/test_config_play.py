"""``[service] play`` and ``play_origins``: the play API of ``dgt-service run`` in the
config (off unless set; errors name the file, the line and the key), and the command line
over them."""

from __future__ import annotations

import argparse

import pytest

from service.commands.run import PlayOption, add_play_options, play_option
from service.config import DEFAULT_PLAY_PORT, ConfigError, ServiceConfig, parse_config

TABLE = "\n[[table]]\nport = 'emulator'\n"


@pytest.mark.parametrize(
    ("service", "port", "origins"),
    [
        ("", None, ()),
        ("play = false\n", None, ()),
        ("play = true\n", DEFAULT_PLAY_PORT, ()),
        ("play = 1990\n", 1990, ()),
        ("play = 0\n", 0, ()),
        (
            "play = 1982\nplay_origins = ['http://myhost:8000/', 'localhost']\n",
            1982,
            ("http://myhost:8000", "localhost"),
        ),
    ],
)
def test_the_play_keys(service: str, port: int | None, origins: tuple[str, ...]) -> None:
    config = parse_config(f"[service]\n{service}{TABLE}", "hall.toml")
    assert config.play == port
    assert config.play_origins == origins


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[service]\nplay = 70000\n", r"hall\.toml:2: \[service\] play: 70000 is not a port"),
        ("[service]\nport = 1\nplay = 'yes'\n", r"hall\.toml:3: \[service\] play: 'yes' is not"),
        ("[service]\nplay = 1.5\n", r"hall\.toml:2: \[service\] play: 1\.5 is not a port"),
        (
            "[service]\nplay = true\nplay_origins = 'http://a.example'\n",
            r"hall\.toml:3: \[service\] play_origins: must be a list of origins",
        ),
        (
            "[service]\nplay = true\n\nplay_origins = ['a.example']\n",
            r"hall\.toml:4: \[service\] play_origins: 'a\.example' is not an origin like",
        ),
        (
            "[service]\nplay_origins = ['ftp://a.example']\n",
            r"hall\.toml:2: \[service\] play_origins: 'ftp://a\.example' is not an origin",
        ),
        ("[service]\nplay_origins = [3]\n", r"hall\.toml:2: .*an origin is a string"),
        ("[service]\nplay_origins = ['http://a:x']\n", r"hall\.toml:2: .*is not an origin"),
    ],
)
def test_bad_play_keys_name_file_line_and_key(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_config(text + TABLE, "hall.toml")
    assert "\n" not in str(info.value)


def options(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_play_options(parser)
    return parser.parse_args(argv)


@pytest.mark.parametrize(
    ("argv", "config", "wanted"),
    [
        ((), ServiceConfig(), None),
        (("--play",), ServiceConfig(), PlayOption(1982)),
        (("--play-port", "0"), ServiceConfig(), PlayOption(0)),
        ((), ServiceConfig(play=1990), PlayOption(1990)),
        (("--play-port", "2000"), ServiceConfig(play=1990), PlayOption(2000)),
        (
            ("--allow-origin", "http://b.example"),
            ServiceConfig(play=1982, play_origins=("http://a.example",)),
            PlayOption(1982, ("http://a.example", "http://b.example")),
        ),
    ],
)
def test_the_command_line_over_the_config(
    argv: tuple[str, ...], config: ServiceConfig, wanted: PlayOption | None
) -> None:
    assert play_option(options(*argv), config) == wanted
