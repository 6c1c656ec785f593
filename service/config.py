"""The service's TOML configuration: the web server and the tables of a hall.

::

    [service]                      # all optional
    bind = "127.0.0.1"
    port = 8080
    database = "hall.db"           # relative to the config file
    admin_token_file = "token.txt" # relative to the config file
    hosts = ["dgt.club.example"]   # Host names the web server answers besides its address

    [defaults]                     # apply to every table unless the table says otherwise
    event = "Club Championship"
    site = "Town Hall"
    round = "1"
    time_control = "5400+30"       # seconds + increment seconds
    rules = "fide-standard"        # fide-standard, fide-rapid, fide-blitz, uscf-speed, casual
    variant = "standard"           # standard, chess960, t20, twenty-chess, realtime
    # tick = 1.0                   # realtime only: seconds per tick, 0.1 to 1
    # options = "cast"             # twenty-chess only: schedule=..., cast, stand-ins=...

    [[table]]
    id = "1"                       # optional: the table's position (1, 2, ...) otherwise
    port = "/dev/dgt/board-12345"  # serial port or pyserial URL, "ble:ADDRESS", "emulator"
    bus = 3                        # optional: the board's address on a bus line
    white = "Alice"
    black = "Bob"

Every error is one line naming the file, the line and the key (:class:`ConfigError`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from ipaddress import ip_address
from pathlib import Path
from typing import Any

from service.errors import UsageError

RULE_SETS = ("fide-standard", "fide-rapid", "fide-blitz", "uscf-speed", "casual")
"""The rule sets a table knows (``service.table.RULES``)."""
VARIANTS = ("standard", "chess960", "t20", "twenty-chess", "realtime")
"""The variants a table plays (``service.table.VARIANTS``)."""
TABLE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")
MAX_TEXT = 100
MAX_TABLES = 5000

_HOST_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,252}[A-Za-z0-9.])?|\[[0-9A-Fa-f:.]{2,45}\]")
"""A name in ``[service] hosts``: letters, digits, dots and hyphens (or an address)."""

_SERVICE_KEYS = {"bind", "port", "database", "admin_token_file", "hosts"}
_SETTING_KEYS = {"event", "site", "round", "time_control", "rules", "variant", "tick", "options"}
TICK_RANGE = (0.1, 1.0)
"""Seconds per tick a realtime table may use (realtime rule 6)."""
_TABLE_KEYS = _SETTING_KEYS | {"id", "port", "bus", "white", "black"}


class ConfigError(UsageError):
    """A configuration that cannot be used; the message names file, line and key."""


@dataclass(frozen=True, slots=True)
class TableConfig:
    """One table: where its board is, and the settings of its game."""

    id: str
    port: str
    bus: int | None = None
    settings: dict[str, str] = field(default_factory=dict)
    """Keyword arguments for ``TableSettings`` (white, black, event, site, round,
    time_control, rules, variant)."""


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    bind: str = "127.0.0.1"
    port: int = 8080
    database: Path | None = None
    admin_token_file: Path | None = None
    tables: tuple[TableConfig, ...] = ()
    hosts: tuple[str, ...] = ()
    """Host names (or addresses) the web server answers besides its bound address and
    localhost (a name it is reached by through DNS or a proxy)."""


def check_text(value: object, where: str, *, limit: int = MAX_TEXT) -> str:
    """A name or label: a string of at most ``limit`` characters without control
    characters.  Raises :class:`ValueError` saying what is wrong (``where`` names it)."""
    if not isinstance(value, str):
        raise ValueError(f"{where} must be a string, not {type(value).__name__}")
    text = value.strip()
    if len(text) > limit:
        raise ValueError(f"{where} is longer than {limit} characters")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise ValueError(f"{where} contains control characters")
    return text


def check_setting(key: str, value: object) -> str:
    """Validate one table setting (also used by the admin API).  Raises ValueError."""
    if key == "tick":
        return _check_tick(value)
    text = check_text(value, key)
    if key == "time_control":
        from service.time_control import TimeControl

        try:
            if not text:
                raise ValueError("empty")
            TimeControl.parse(text)
        except ValueError:
            raise ValueError(
                "time_control must be PGN TimeControl seconds+increment (like 300+2 or "
                f"40/5400+30:1800+30), not {text!r}"
            ) from None
    if key == "rules" and text not in RULE_SETS:
        raise ValueError(f"rules must be one of {', '.join(RULE_SETS)}, not {text!r}")
    if key == "variant" and text not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, not {text!r}")
    return text


def _check_tick(value: object) -> str:
    """Seconds per tick of a realtime table, a number (or its text) from 0.1 to 1."""
    low, high = TICK_RANGE
    try:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError
        tick = float(value)
    except ValueError:
        raise ValueError(f"tick must be a number of seconds, not {value!r}") from None
    if not low <= tick <= high:
        raise ValueError(f"tick must be {low:g} to {high:g} seconds, not {value!r}")
    return f"{tick:g}"


def check_table_id(value: object) -> str:
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise ValueError("id must be a string or a number")
    text = str(value)
    if not TABLE_ID.match(text):
        raise ValueError(
            f"id {text!r} must be 1-32 letters, digits, '.', '_' or '-', starting with a "
            "letter or digit"
        )
    return text


class _Lines:
    """Finds the line of a key in the TOML text, for error messages (tomllib keeps no
    positions)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def header(self, name: str, index: int = 0) -> int | None:
        pattern = re.compile(rf"^\s*\[\[?\s*{re.escape(name)}\s*\]\]?\s*(#.*)?$")
        found = [i + 1 for i, line in enumerate(self.lines) if pattern.match(line)]
        return found[index] if index < len(found) else None

    def key(self, key: str, section: str | None, index: int = 0) -> int | None:
        start = 0
        if section is not None:
            head = self.header(section, index)
            if head is None:
                return None
            start = head
        pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")
        for number in range(start, len(self.lines)):
            line = self.lines[number]
            if number > start and line.lstrip().startswith("[") and section is not None:
                break
            if section is None and line.lstrip().startswith("["):
                break
            if pattern.match(line):
                return number + 1
        return start or None


def load_config(path: str | Path) -> ServiceConfig:
    """Read and validate a config file; raises :class:`ConfigError` (one line)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return parse_config(text, path)


def parse_config(text: str, path: str | Path = "<config>") -> ServiceConfig:
    """Validate the TOML ``text`` (``path`` is for messages and relative paths)."""
    path = Path(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    lines = _Lines(text)

    def fail(
        message: str, key: str | None = None, section: str | None = None, index: int = 0
    ) -> ConfigError:
        line = lines.key(key, section, index) if key else lines.header(section or "", index)
        where = f"{path}:{line}" if line else str(path)
        return ConfigError(f"{where}: {message}")

    unknown_top = set(data) - {"service", "defaults", "table"}
    if unknown_top:
        name = sorted(unknown_top)[0]
        raise fail(f"unknown section or key '{name}' (expected service, defaults, [[table]])", name)
    service = data.get("service", {})
    if not isinstance(service, dict):
        raise fail("'service' must be a table ([service])", "service")
    for key in service:
        if key not in _SERVICE_KEYS:
            raise fail(
                f"[service]: unknown key '{key}' (known: {', '.join(sorted(_SERVICE_KEYS))})",
                key,
                "service",
            )
    bind = service.get("bind", "127.0.0.1")
    try:
        if not isinstance(bind, str):
            raise ValueError("not a string")
        if bind != "localhost":
            ip_address(bind)
    except ValueError:
        raise fail(f"[service] bind: {bind!r} is not an IP address", "bind", "service") from None
    port = service.get("port", 8080)
    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        raise fail(f"[service] port: {port!r} is not a port number 0-65535", "port", "service")
    hosts = service.get("hosts", [])
    if not isinstance(hosts, list) or not all(
        isinstance(h, str) and _HOST_NAME.fullmatch(h) for h in hosts
    ):
        raise fail(
            f'[service] hosts: must be a list of host names like ["dgt.club.example"], '
            f"not {hosts!r}"[:200],
            "hosts",
            "service",
        )
    base = path.parent

    def file_key(key: str) -> Path | None:
        value = service.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise fail(f"[service] {key}: must be a file name", key, "service")
        return base / value

    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise fail("'defaults' must be a table ([defaults])", "defaults")
    checked_defaults: dict[str, str] = {}
    for key, value in defaults.items():
        if key not in _SETTING_KEYS:
            raise fail(
                f"[defaults]: unknown key '{key}' (known: {', '.join(sorted(_SETTING_KEYS))})",
                key,
                "defaults",
            )
        try:
            checked_defaults[key] = check_setting(key, value)
        except ValueError as exc:
            raise fail(f"[defaults] {exc}", key, "defaults") from None

    raw_tables = data.get("table", [])
    if not isinstance(raw_tables, list):
        raise fail("'table' must be an array of tables ([[table]])", "table")
    if len(raw_tables) > MAX_TABLES:
        raise fail(f"too many tables ({len(raw_tables)}; at most {MAX_TABLES})", "table")
    tables: list[TableConfig] = []
    ids: dict[str, int] = {}
    for index, raw in enumerate(raw_tables):
        label = f"table {index + 1}"
        for key in raw:
            if key not in _TABLE_KEYS:
                raise fail(
                    f"[[table]] {label}: unknown key '{key}' (known: "
                    f"{', '.join(sorted(_TABLE_KEYS))})",
                    key,
                    "table",
                    index,
                )
        try:
            table_id = check_table_id(raw.get("id", str(index + 1)))
        except ValueError as exc:
            raise fail(f"[[table]] {label}: {exc}", "id", "table", index) from None
        if table_id in ids:
            raise fail(
                f"[[table]] {label}: id {table_id!r} is already used by table {ids[table_id]}",
                "id",
                "table",
                index,
            )
        ids[table_id] = index + 1
        port_value = raw.get("port")
        if port_value is None:
            raise fail(
                f"[[table]] {label}: 'port' is missing (a serial port, 'ble:ADDRESS' "
                "or 'emulator')",
                None,
                "table",
                index,
            )
        try:
            port_text = check_text(port_value, "port", limit=300)
            if not port_text:
                raise ValueError("port is empty")
        except ValueError as exc:
            raise fail(f"[[table]] {label}: {exc}", "port", "table", index) from None
        bus = raw.get("bus")
        if bus is not None and (
            not isinstance(bus, int) or isinstance(bus, bool) or not 1 <= bus <= 16383
        ):
            raise fail(
                f"[[table]] {label}: bus must be a board address 1-16383, not {bus!r}",
                "bus",
                "table",
                index,
            )
        settings = dict(checked_defaults)
        for key in ("white", "black", *sorted(_SETTING_KEYS)):
            if key not in raw:
                continue
            try:
                settings[key] = check_setting(key, raw[key])
            except ValueError as exc:
                raise fail(f"[[table]] {label}: {exc}", key, "table", index) from None
        tables.append(TableConfig(table_id, port_text, bus, settings))
    return ServiceConfig(
        bind=bind,
        port=port,
        database=file_key("database"),
        admin_token_file=file_key("admin_token_file"),
        tables=tuple(tables),
        hosts=tuple(hosts),
    )


def settings_dict(settings: Mapping[str, Any]) -> dict[str, str]:
    """Only the keys ``TableSettings`` takes."""
    keys = _SETTING_KEYS | {"white", "black", "start"}
    return {k: v for k, v in settings.items() if k in keys and v is not None}
