"""service.config: a valid hall config, and one-line errors naming file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.config import ConfigError, load_config, parse_config

GOOD = """\
[service]
bind = "0.0.0.0"
port = 9000
database = "hall.db"

[defaults]
event = "Club"
round = "3"
time_control = "900+10"
rules = "fide-rapid"

[[table]]
port = "/dev/ttyACM0"
white = "Ann"
black = "Bob"

[[table]]
id = "B2"
port = "ble:AA:BB:CC:DD:EE:FF"
variant = "t20"
rules = "casual"
"""


def test_a_good_config(tmp_path: Path) -> None:
    path = tmp_path / "hall.toml"
    path.write_text(GOOD)
    config = load_config(path)
    assert (config.bind, config.port) == ("0.0.0.0", 9000)
    assert config.database == tmp_path / "hall.db"
    first, second = config.tables
    assert first.id == "1"
    assert first.port == "/dev/ttyACM0"
    assert first.settings == {
        "event": "Club", "round": "3", "time_control": "900+10", "rules": "fide-rapid",
        "white": "Ann", "black": "Bob",
    }  # fmt: skip
    assert second.id == "B2"
    assert second.settings["variant"] == "t20"
    assert second.settings["rules"] == "casual"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[table]]\nport = 5\n", r"hall\.toml:2: \[\[table\]\] table 1: port must be a string"),
        ("[[table]]\nwhite = 'A'\n", r"hall\.toml:1: \[\[table\]\] table 1: 'port' is missing"),
        (
            "[[table]]\nport = 'x'\n\n[[table]]\nport = 'y'\nrules = 'lightning'\n",
            r"hall\.toml:6: \[\[table\]\] table 2: rules must be one of fide-standard",
        ),
        (
            "[[table]]\nport = 'x'\ntime_control = '5 minutes'\n",
            r"hall\.toml:3: .*time_control must be PGN TimeControl seconds\+increment",
        ),
        (
            "[[table]]\nport = 'x'\nvariant = 'crazyhouse'\n",
            r"hall\.toml:3: .*variant must be one of standard, chess960, t20",
        ),
        (
            "[[table]]\nid = 'a'\nport = 'x'\n[[table]]\nid = 'a'\nport = 'y'\n",
            r"hall\.toml:5: .*id 'a' is already used by table 1",
        ),
        ("[[table]]\nport = 'x'\ncolour = 'red'\n", r"hall\.toml:3: .*unknown key 'colour'"),
        ("[service]\nport = 70000\n", r"hall\.toml:2: \[service\] port: 70000 is not a port"),
        ("[service]\nbind = 'everywhere'\n", r"hall\.toml:2: \[service\] bind: 'everywhere'"),
        ("[defaults]\nrules = 'x'\n", r"hall\.toml:2: \[defaults\] rules must be one of"),
        ("[[table]]\nport = 'x'\nbus = 0\n", r"hall\.toml:3: .*bus must be a board address"),
        ('[[table]]\nport = "x"\nwhite = "A\\u0007"\n', r"hall\.toml:3: .*control characters"),
        ("[[table]]\nport = 'x'\nid = '../etc'\n", r"hall\.toml:3: .*id '\.\./etc' must be"),
        ("[[table]\nport = 'x'\n", r"hall\.toml:1: not valid TOML: .*line 1"),
        ("tables = 3\n", r"hall\.toml:1: unknown section or key 'tables'"),
    ],
)
def test_errors_name_file_line_and_key(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_config(text, "hall.toml")
    assert "\n" not in str(info.value)


def test_a_long_name_is_refused() -> None:
    with pytest.raises(ConfigError, match="white is longer than 100 characters"):
        parse_config(f"[[table]]\nport = 'x'\nwhite = '{'A' * 101}'\n", "h.toml")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.toml: no such config file"):
        load_config(tmp_path / "nope.toml")


def test_rule_sets_and_variants_are_the_registries_and_every_table_takes_them() -> None:
    from service import config
    from service.arbiter import RULE_SETS
    from service.table import RealtimeTable, Table, TableSettings
    from service.variants import VARIANTS, Realtime

    assert tuple(RULE_SETS) == config.RULE_SETS
    assert tuple(VARIANTS) == config.VARIANTS
    for rules in config.RULE_SETS:
        for variant in config.VARIANTS:
            settings = TableSettings(rules=rules, variant=variant)
            # realtime chess has no turns: a RealtimeTable plays it, Table plays the others
            table = RealtimeTable("t", settings) if variant == Realtime.id else Table("t", settings)
            assert (table.settings.rules, table.settings.variant) == (rules, variant)


@pytest.mark.parametrize(("value", "text"), [(0.5, "0.5"), ("0.1", "0.1"), (1, "1")])
def test_a_realtime_tick_is_kept_as_its_text(value: object, text: str) -> None:
    from service.config import check_setting

    assert check_setting("tick", value) == text


@pytest.mark.parametrize("value", [0.05, "2", "fast", True, None, float("nan")])
def test_a_tick_out_of_range_is_one_line(value: object) -> None:
    from service.config import check_setting

    with pytest.raises(ValueError, match=r"^tick must be (a number of seconds|0\.1 to 1 seconds)"):
        check_setting("tick", value)
