"""The service's TOML configuration: the web server and the tables of a hall.

::

    [service]                      # all optional
    bind = "127.0.0.1"
    port = 8080
    database = "hall.db"           # relative to the config file
    admin_token_file = "token.txt" # relative to the config file
    hosts = ["dgt.club.example"]   # Host names the web server answers besides its address
    play = 1982                    # serve the DGT LiveChess API (lichess, chess.com) on
                                   # 127.0.0.1:PORT for the boards (true: 1982); off unless set
    play_origins = ["http://myhost:8000"]  # more origins whose pages may use it
    central = "nats://10.0.0.5:4222" # an edge of a central service: forward the log there
    edge_id = "hall-a"             # this hall's id there (kept in the database)
    board_poll_ms = 5              # read the serial boards together every N ms (0-50; 0:
                                   # each board wakes the service); by default 5 from 100
                                   # boards on serial ports up, else 0

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
    read_memory = false            # optional: ask the board for its memory (stored moves)
    board = 1                      # optional: board number in the feeds (default: position)
    white = "Alice"
    black = "Bob"

    [pairings]                     # optional: a round's pairings from a pairing program
    file = "round3.trf"            # FIDE TRF-16 or CSV (README, "Pairings"), relative to
                                   # this file; imported at every start
    round = 3                      # the round of the TRF to play (a CSV: the round's name)

    [broadcast]                    # optional: push rounds to lichess
    url = "https://lichess.org"    # optional
    token_file = "lichess.token"   # relative to the config file (scope study:write), or
    token_env = "LICHESS_TOKEN"    # the environment variable that holds it
    interval = 3                   # optional: seconds at least between pushes (2-60)

    [[broadcast.round]]
    round = "1"                    # the games of this Round ...
    id = "AbCd1234"                # ... go to this lichess broadcast round
    delay = 0                      # optional: push each game as it stood N seconds ago

Every error is one line naming the file, the line and the key (:class:`ConfigError`), the
line found by :class:`service.config_lines.KeyLines`; no malformed config gives another
exception.  :func:`load_config` also checks the files a config names (:func:`check_files`);
time controls that cannot be played (``0+0``) are refused
(:meth:`service.time_control.TimeControl.parse_playable`).
"""

from __future__ import annotations

import re
import reprlib
import tomllib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from ipaddress import ip_address
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from dgt.transports import is_serial
from service.arbiter.rule_sets import RULE_SETS as _RULE_SET_REGISTRY
from service.config_lines import KeyLines, KeyPath
from service.errors import UsageError
from service.variants.registry import VARIANTS as _VARIANT_REGISTRY

RULE_SETS = tuple(_RULE_SET_REGISTRY)
"""The rule sets a table knows (the ids of :mod:`service.arbiter.rule_sets`)."""
VARIANTS = tuple(_VARIANT_REGISTRY)
"""The variants a table plays (the ids of :mod:`service.variants.registry`)."""
TABLE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")
MAX_TEXT = 100
MAX_TABLES = 5000

_HOST_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,252}[A-Za-z0-9.])?|\[[0-9A-Fa-f:.]{2,45}\]")
"""A name in ``[service] hosts``: letters, digits, dots and hyphens (or an address)."""

_PLAY_KEYS = {"play", "play_origins"}
"""The keys of the play API (``run --play``) in ``[service]``."""
_CENTRAL_KEYS = {"central", "edge_id"}
"""The keys of an edge of a central service (``run --central``) in ``[service]``."""
_SERVICE_KEYS = (
    {"bind", "port", "database", "admin_token_file", "hosts", "board_poll_ms"}
    | _PLAY_KEYS
    | _CENTRAL_KEYS
)
BOARD_POLL_MS = (0.0, 50.0)
"""Milliseconds between two reads of the serial boards together that ``board_poll_ms``
may ask for (0: off, each board wakes the event loop itself)."""
BIG_HALL_BOARDS = 100
BIG_HALL_POLL_MS = 5.0
"""``board_poll_ms`` when the config does not say: :data:`BIG_HALL_POLL_MS` for a hall of
:data:`BIG_HALL_BOARDS` or more boards on serial ports of their own (bench/README.md, "Reading
the boards in batches": about a tenth less CPU per input at 2,000 and 5,000 boards, for
2.5 ms more latency on average; 10 ms let one 5,000-board run fall behind), else 0 (a
club's few boards are read as their bytes come)."""
BIG_HALL_POLL_LONGEST_MS = 20.0
"""How far such a hall's reads may stretch apart while few boards speak (a stretching
:class:`dgt.transports.poller.BoardPoller`; bench/README.md, "Reading the boards in
batches": at 2,000 boards less CPU per input than every 5 ms in 3 of 4 alternated pairs, 8 %
on average, for at most 15 ms more latency; a busy hall, or a service near a full core,
keeps the short period)."""
_SETTING_KEYS = {"event", "site", "round", "time_control", "rules", "variant", "tick", "options"}
TICK_RANGE = (0.1, 1.0)
"""Seconds per tick a realtime table may use (realtime rule 6)."""
_TABLE_KEYS = _SETTING_KEYS | {"id", "port", "bus", "white", "black", "read_memory", "board"}
MAX_BOARD = 9999
"""Highest board number a table may have."""


LICHESS_URL = "https://lichess.org"
_ROUND_ID = re.compile(r"^[A-Za-z0-9]{8}$")
_BASE_URL = re.compile(
    r"^https?://[A-Za-z0-9.-]+(:\d{1,5})?/?$|^https?://\[[0-9A-Fa-f:.]+\](:\d{1,5})?/?$"
)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_BROADCAST_KEYS = {"url", "token_file", "token_env", "interval", "round"}
_ROUND_KEYS = {"round", "id", "delay"}
PUSH_INTERVAL = (2.0, 60.0)
"""Seconds at least between two pushes of a round: the range allowed, the default is 3."""
MAX_DELAY = 3600.0


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
    read_memory: bool = False
    """Ask the board for its memory (stored moves) after connecting; off by default, as
    some clone boards drop the link on that request."""
    board: int | None = None
    """The board number the feeds give the table's games (``Board`` tag, ``game-M.pgn``);
    None: the table's position in the hall."""


@dataclass(frozen=True, slots=True)
class BroadcastRound:
    """The games of one round pushed to one lichess broadcast round."""

    round: str
    lichess_id: str
    delay: float = 0.0
    """Seconds: each game is pushed as it stood this long ago."""


@dataclass(frozen=True, slots=True)
class BroadcastConfig:
    """``[broadcast]``: where the rounds go and where the token is (never the token)."""

    rounds: tuple[BroadcastRound, ...] = ()
    url: str = LICHESS_URL
    token_file: Path | None = None
    token_env: str | None = None
    interval: float = 3.0


@dataclass(frozen=True, slots=True)
class PairingsConfig:
    """``[pairings]``: the round's pairings to seat at the tables at start."""

    file: Path
    round: int | None = None


_PAIRINGS_KEYS = {"file", "round"}
MAX_ROUND = 999
"""Highest round number of a pairings file."""


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
    play: int | None = None
    """The port of the play API for the boards (``run --play``); None: not served."""
    play_origins: tuple[str, ...] = ()
    """Origins whose pages may open the play API besides lichess, chess.com and localhost."""
    broadcast: BroadcastConfig | None = None
    pairings: PairingsConfig | None = None
    central: str | None = None
    """The broker of a central service this hall is an edge of (``nats://HOST:PORT``)."""
    edge_id: str | None = None
    """This hall's id as an edge (kept in its database)."""
    board_poll_ms: float = 0.0
    """Milliseconds between two reads of the hall's serial boards together
    (:class:`dgt.transports.poller.BoardPoller`); 0: each board wakes the event loop."""
    board_poll_longest_ms: float = 0.0
    """Milliseconds the time between two such reads may stretch to while few boards speak
    (:data:`BIG_HALL_POLL_LONGEST_MS` when the config chose no ``board_poll_ms``; 0 or
    ``board_poll_ms``: it does not stretch)."""


def check_central_url(value: object) -> str:
    """A broker's address ``nats://HOST:PORT`` (or ``tls://``).  Raises ValueError."""
    text = value.strip() if isinstance(value, str) else ""
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        parts, port = urlsplit(""), None
    if parts.scheme not in ("nats", "tls") or not parts.hostname or port is None or parts.path:
        raise ValueError(f"{_show(value)} is not a broker address like nats://10.0.0.5:4222")
    return text


def shown_url(url: str) -> str:
    """A broker's address without the user and password it may carry (for the logs)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]).geturl()


def check_edge_id(value: object) -> str:
    """An edge id: 1-32 letters, digits, '-' or '_' (a subject token of the broker)."""
    if not isinstance(value, str) or not _EDGE_ID.fullmatch(value):
        raise ValueError(
            f"edge id {_show(value)}: 1-32 letters, digits, '-' or '_' (starting with a letter "
            "or digit)"
        )
    return value


_EDGE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")


DEFAULT_PLAY_PORT = 1982
"""The port of the play API unless told (DGT LiveChess's: the sites open
``ws://localhost:1982``; :data:`service.play.server.DEFAULT_PORT`)."""


def check_origin(value: object) -> str:
    """An origin whose pages may open the play API: ``localhost`` (any page of this
    machine) or ``http(s)://host[:port]``.  Raises ValueError saying what is wrong."""
    if not isinstance(value, str):
        raise ValueError(f"an origin is a string like https://example.org, not {_show(value)}")
    text = value.strip().rstrip("/")
    if text == "localhost":
        return text
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 -- raises ValueError for a port that is no number
    except ValueError:
        parts = urlsplit("")
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.path
        or parts.query
        or parts.fragment
        or "@" in parts.netloc
    ):
        raise ValueError(f"{_show(text)} is not an origin like https://example.org")
    return text


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
        from service.time_control import TimeControl, UnplayableTimeControlError

        try:
            if not text:
                raise ValueError("empty")
            TimeControl.parse_playable(text)
        except UnplayableTimeControlError as exc:
            raise ValueError(f"time_control {text!r} cannot be played: {exc.reason}") from None
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


def _show(value: object) -> str:
    """A value for a one-line message: its ``repr``, cut short (a nested or long value is not
    spelled out)."""
    return _REPR.repr(value)


_REPR = reprlib.Repr()
_REPR.maxlevel = 2
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = 40


def check_options(variant: str, options: str) -> None:
    """A table's ``options`` for its ``variant``, as the variant's
    :meth:`~service.variants.base.Variant.from_options` reads them (only twenty-chess takes
    any).  Raises ValueError."""
    from service.variants.registry import get_variant

    get_variant(variant, options)


def load_config(path: str | Path) -> ServiceConfig:
    """Read and validate a hall's config file (it needs at least one table) and the files
    it names (:func:`check_files`); raises :class:`ConfigError` (one line)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a config file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:  # a NUL in the name
        raise ConfigError(f"{_show(str(path))}: cannot read: {exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text: save the file as UTF-8") from None
    config = parse_config(text, path)
    if not config.tables:
        line = KeyLines(text).line(("table",))
        raise ConfigError(
            f"{path}:{line}: table: no tables: a hall needs a [[table]] with a port for each board"
        )
    check_files(config, text, path)
    return config


def check_files(config: ServiceConfig, text: str, path: str | Path) -> None:
    """The files a config names can be used: the database is not a directory and its
    directory exists; the token file, if it exists, is a readable text file with a token of
    8 characters or more, else its directory exists to create it in.  Raises
    :class:`ConfigError` naming the config file, the line and the key."""
    lines = KeyLines(text)
    for key, file, problem_of in (
        ("database", config.database, _database_problem),
        ("admin_token_file", config.admin_token_file, _token_file_problem),
    ):
        problem = None if file is None else problem_of(file)
        if problem is not None:
            line = lines.line(("service", key))
            raise ConfigError(f"{path}:{line}: [service] {key}: {problem}")
    pairings = config.pairings
    if pairings is not None:
        from service.pairings import PairingsError, load_pairings

        try:
            load_pairings(pairings.file, pairings.round)
        except PairingsError as exc:
            line = lines.line(("pairings", "file"))
            raise ConfigError(f"{path}:{line}: [pairings] file: {exc}") from None
    broadcast = config.broadcast
    if broadcast is not None and broadcast.token_file is not None:
        problem = _lichess_token_problem(broadcast.token_file)
        if problem is not None:
            line = lines.line(("broadcast", "token_file"))
            raise ConfigError(f"{path}:{line}: [broadcast] token_file: {problem}")


def _lichess_token_problem(file: Path) -> str | None:
    try:
        if not file.is_file():
            return f"{file} is not a file (put the lichess token with scope study:write in it)"
        token = file.read_text(encoding="utf-8").strip()
    except UnicodeDecodeError:
        return f"{file} is not UTF-8 text"
    except OSError as exc:
        return f"cannot read {file}: {exc.strerror or exc}"
    if not token or any(c.isspace() for c in token):
        return f"{file} must hold the token alone on one line"
    return None


def _database_problem(db: Path) -> str | None:
    try:
        if db.is_dir():
            return f"{db} is a directory, not a database file"
        if db.exists() and not db.is_file():
            return f"{db} is not a regular file"
        if not db.parent.is_dir():
            return f"the directory {db.parent} does not exist"
    except OSError as exc:
        return f"cannot use {db}: {exc.strerror or exc}"
    return None


def _token_file_problem(file: Path) -> str | None:
    try:
        if file.is_dir():
            return f"{file} is a directory, not a token file"
        if not file.exists():
            if not file.parent.is_dir():
                return f"the directory {file.parent} does not exist to create the token file in"
            return None  # created with a new token at start
        if not file.is_file():
            return f"{file} is not a regular file"
        token = file.read_text(encoding="utf-8").strip()
    except UnicodeDecodeError:
        return f"{file} is not UTF-8 text"
    except OSError as exc:
        return f"cannot read {file}: {exc.strerror or exc}"
    if len(token) < 8:
        return f"the admin token in {file} must have at least 8 characters"
    return None


def _toml_error_line(exc: tomllib.TOMLDecodeError, text: str) -> int:
    """The line a TOML error names (tomllib writes it in the message only)."""
    found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
    if found is not None:
        return int(found.group(1))
    return max(1, len(text.splitlines()))  # "at end of document"


def _deepest_line(text: str) -> int:
    """The line that opens the most arrays and inline tables: where a value nested too
    deeply for the TOML reader most likely is."""
    counts = [line.count("[") + line.count("{") for line in text.splitlines()] or [0]
    return counts.index(max(counts)) + 1


def _longest_number_line(text: str) -> int:
    """The line with the longest run of digits."""
    runs = [max(map(len, re.findall(r"\d+", line)), default=0) for line in text.splitlines()]
    return runs.index(max(runs)) + 1 if runs else 1


def parse_config(text: str, path: str | Path = "<config>") -> ServiceConfig:
    """Validate the TOML ``text`` (``path`` is for messages and relative paths)."""
    path = Path(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = _toml_error_line(exc, text)
        raise ConfigError(f"{path}:{line}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(
            f"{path}:{_deepest_line(text)}: not valid TOML: a value nested too deeply"
        ) from None
    except ValueError:  # an integer of more digits than Python converts
        raise ConfigError(
            f"{path}:{_longest_number_line(text)}: not valid TOML: a number with too many digits"
        ) from None
    lines = KeyLines(text)

    def fail(
        message: str, key: str | None = None, section: str | None = None, index: int = 0
    ) -> ConfigError:
        where: KeyPath = () if section is None else (section,)
        if section == "table":
            where = (*where, index)
        if key is not None:
            where = (*where, key)
        return ConfigError(f"{path}:{lines.line(where)}: {message}")

    unknown_top = set(data) - {"service", "defaults", "table", "broadcast", "pairings"}
    if unknown_top:
        name = sorted(unknown_top)[0]
        raise fail(
            f"unknown section or key {_show(name)} (expected service, defaults, [[table]], "
            "broadcast, pairings)",
            name,
        )
    service = data.get("service", {})
    if not isinstance(service, dict):
        raise fail("'service' must be a table ([service])", "service")
    for key in service:
        if key not in _SERVICE_KEYS:
            raise fail(
                f"[service]: unknown key {_show(key)} (known: {', '.join(sorted(_SERVICE_KEYS))})",
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
        raise fail(
            f"[service] bind: {_show(bind)} is not an IP address", "bind", "service"
        ) from None
    port = service.get("port", 8080)
    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        raise fail(f"[service] port: {_show(port)} is not a port number 0-65535", "port", "service")
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
    board_poll_ms = service.get("board_poll_ms")
    low, high = BOARD_POLL_MS
    if board_poll_ms is not None and (
        not isinstance(board_poll_ms, int | float)
        or isinstance(board_poll_ms, bool)
        or not low <= board_poll_ms <= high
    ):
        raise fail(
            f"[service] board_poll_ms: must be a number of milliseconds from {low:g} to "
            f"{high:g} (0: off), not {_show(board_poll_ms)}",
            "board_poll_ms",
            "service",
        )
    play, play_origins = _play_keys(service, fail)
    central, edge_id = _central_keys(service, fail)
    base = path.parent

    def file_key(key: str) -> Path | None:
        value = service.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise fail(f"[service] {key}: must be a file name, not {_show(value)}", key, "service")
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
            raise fail(f"[service] {key}: the file name has control characters", key, "service")
        return base / value

    database = file_key("database")
    admin_token_file = file_key("admin_token_file")

    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise fail("'defaults' must be a table ([defaults])", "defaults")
    checked_defaults: dict[str, str] = {}
    for key, value in defaults.items():
        if key not in _SETTING_KEYS:
            raise fail(
                f"[defaults]: unknown key {_show(key)} (known: {', '.join(sorted(_SETTING_KEYS))})",
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
    bus_lines: dict[str, dict[int, int]] = {}  # port -> bus address -> table number
    single_ports: dict[str, int] = {}  # port of a table without a bus address -> its number
    boards: dict[int, int] = {}  # board number -> table number
    for index, raw in enumerate(raw_tables):
        label = f"table {index + 1}"
        if not isinstance(raw, dict):
            raise fail(
                f"[[table]] {label}: must be a table of keys (a [[table]] header with port = "
                f"... below it), not {_show(raw)}",
                None,
                "table",
                index,
            )
        for key in raw:
            if key not in _TABLE_KEYS:
                raise fail(
                    f"[[table]] {label}: unknown key {_show(key)} (known: "
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
                f"[[table]] {label}: bus must be a board address 1-16383, not {_show(bus)}",
                "bus",
                "table",
                index,
            )
        if bus is None:
            if port_text in bus_lines:
                raise fail(
                    f"[[table]] {label}: port {port_text!r} is a bus line of other tables: "
                    "give this table its board's bus address (bus = N)",
                    "port",
                    "table",
                    index,
                )
            single_ports.setdefault(port_text, index + 1)
        else:
            if port_text in single_ports:
                raise fail(
                    f"[[table]] {label}: bus: port {port_text!r} is used by table "
                    f"{single_ports[port_text]} without a bus address: every table on a bus "
                    "line needs one (bus = N)",
                    "bus",
                    "table",
                    index,
                )
            on_line = bus_lines.setdefault(port_text, {})
            if bus in on_line:
                raise fail(
                    f"[[table]] {label}: bus address {bus} on {port_text!r} is already "
                    f"used by table {on_line[bus]}",
                    "bus",
                    "table",
                    index,
                )
            on_line[bus] = index + 1
        read_memory = raw.get("read_memory", False)
        if not isinstance(read_memory, bool):
            raise fail(
                f"[[table]] {label}: read_memory must be true or false, not {_show(read_memory)}",
                "read_memory",
                "table",
                index,
            )
        if read_memory and bus is not None:
            raise fail(
                f"[[table]] {label}: read_memory: a board on a bus line cannot be asked for "
                "its memory (bus mode has no such request): remove read_memory or bus",
                "read_memory",
                "table",
                index,
            )
        board = raw.get("board", index + 1)
        if not isinstance(board, int) or isinstance(board, bool) or not 1 <= board <= MAX_BOARD:
            raise fail(
                f"[[table]] {label}: board must be a board number 1-{MAX_BOARD}, not "
                f"{_show(board)}",
                "board",
                "table",
                index,
            )
        if board in boards:
            raise fail(
                f"[[table]] {label}: board {board} is already the board of table "
                f"{boards[board]} (give each table its own board = N)",
                "board" if "board" in raw else None,
                "table",
                index,
            )
        boards[board] = index + 1
        settings = dict(checked_defaults)
        for key in ("white", "black", *sorted(_SETTING_KEYS)):
            if key not in raw:
                continue
            try:
                settings[key] = check_setting(key, raw[key])
            except ValueError as exc:
                raise fail(f"[[table]] {label}: {exc}", key, "table", index) from None
        if settings.get("options"):
            try:
                check_options(settings.get("variant", "standard"), settings["options"])
            except ValueError as exc:
                section = "table" if "options" in raw else "defaults"
                raise fail(
                    f"[[table]] {label}: options: {exc}", "options", section, index
                ) from None
        tables.append(TableConfig(table_id, port_text, bus, settings, read_memory, board))
    if board_poll_ms is None:
        serial = sum(1 for table in tables if table.bus is None and is_serial(table.port))
        big = serial >= BIG_HALL_BOARDS
        board_poll_ms = BIG_HALL_POLL_MS if big else 0.0
        board_poll_longest_ms = BIG_HALL_POLL_LONGEST_MS if big else 0.0
    else:  # what the config says stands: no stretching
        board_poll_longest_ms = board_poll_ms
    return ServiceConfig(
        bind=bind,
        port=port,
        database=database,
        admin_token_file=admin_token_file,
        tables=tuple(tables),
        hosts=tuple(hosts),
        play=play,
        play_origins=play_origins,
        broadcast=_broadcast(data.get("broadcast"), lines, path),
        pairings=_pairings(data.get("pairings"), lines, path),
        central=central,
        edge_id=edge_id,
        board_poll_ms=float(board_poll_ms),
        board_poll_longest_ms=float(board_poll_longest_ms),
    )


class _SectionError(Protocol):
    """Makes the one-line error of a section's key (``where``: the key's path in it)."""

    def __call__(self, message: str, *where: str | int) -> ConfigError: ...


def _section(
    name: str, raw: object, known: Collection[str], lines: KeyLines, path: Path
) -> tuple[dict[str, Any], _SectionError]:
    """The ``[name]`` section ``raw`` (a table with only ``known`` keys) and the maker of
    its errors, which name the config's line.  Raises :class:`ConfigError`."""

    def fail(message: str, *where: str | int) -> ConfigError:
        return ConfigError(f"{path}:{lines.line((name, *where))}: [{name}] {message}")

    if not isinstance(raw, dict):
        raise fail(f"must be a table ([{name}])")
    for key in raw:
        if key not in known:
            raise fail(f"unknown key {_show(key)} (known: {', '.join(sorted(known))})", key)
    return raw, fail


def _pairings(raw: object, lines: KeyLines, path: Path) -> PairingsConfig | None:
    """The ``[pairings]`` section (None without one).  Raises :class:`ConfigError`."""
    if raw is None:
        return None
    raw, fail = _section("pairings", raw, _PAIRINGS_KEYS, lines, path)
    value = raw.get("file")
    if not isinstance(value, str) or not value.strip() or any(ord(c) < 32 for c in value):
        raise fail(
            f"file: must be the pairings file's name (TRF or CSV), not {_show(value)}", "file"
        )
    number = raw.get("round")
    if number is not None and (
        not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= MAX_ROUND
    ):
        raise fail(f"round: must be a round number 1-{MAX_ROUND}, not {_show(number)}", "round")
    return PairingsConfig(path.parent / value, number)


def _central_keys(
    service: Mapping[str, Any], fail: Callable[[str, str, str], ConfigError]
) -> tuple[str | None, str | None]:
    """``[service] central`` and ``edge_id`` (None where not given)."""
    checked: list[str | None] = []
    for key, check in (("central", check_central_url), ("edge_id", check_edge_id)):
        value = service.get(key)
        try:
            checked.append(None if value is None else check(value))
        except ValueError as exc:
            raise fail(f"[service] {key}: {exc}", key, "service") from None
    return checked[0], checked[1]


def _play_keys(
    service: Mapping[str, Any], fail: Callable[[str, str, str], ConfigError]
) -> tuple[int | None, tuple[str, ...]]:
    """``[service] play`` (a port, true for :data:`DEFAULT_PLAY_PORT`, false: off) and
    ``play_origins`` (a list of origins, :func:`check_origin`)."""
    play = service.get("play", False)
    if play is True:
        play = DEFAULT_PLAY_PORT
    elif play is False:
        play = None
    elif not isinstance(play, int) or not 0 <= play <= 65535:
        raise fail(
            f"[service] play: {_show(play)} is not a port number 0-65535 (or true, false)",
            "play",
            "service",
        )
    origins = service.get("play_origins", [])
    if not isinstance(origins, list):
        raise fail(
            f'[service] play_origins: must be a list of origins like ["http://myhost:8000"], '
            f"not {_show(origins)}",
            "play_origins",
            "service",
        )
    checked = []
    for origin in origins:
        try:
            checked.append(check_origin(origin))
        except ValueError as exc:
            raise fail(f"[service] play_origins: {exc}", "play_origins", "service") from None
    return play, tuple(checked)


def _broadcast(raw: object, lines: KeyLines, path: Path) -> BroadcastConfig | None:
    """The ``[broadcast]`` section (None without one).  Raises :class:`ConfigError`."""
    if raw is None:
        return None
    raw, fail = _section("broadcast", raw, _BROADCAST_KEYS, lines, path)
    url = raw.get("url", LICHESS_URL)
    if not isinstance(url, str) or not _BASE_URL.match(url):
        raise fail(f"url: must be like https://lichess.org, not {_show(url)}", "url")
    token_file: Path | None = None
    value = raw.get("token_file")
    if value is not None:
        if not isinstance(value, str) or not value.strip() or any(ord(c) < 32 for c in value):
            raise fail(f"token_file: must be a file name, not {_show(value)}", "token_file")
        token_file = path.parent / value
    token_env = raw.get("token_env")
    if token_env is not None and (not isinstance(token_env, str) or not _ENV_NAME.match(token_env)):
        raise fail(
            f"token_env: must be an environment variable's name, not {_show(token_env)}",
            "token_env",
        )
    if (token_file is None) == (token_env is None):
        raise fail(
            "give the lichess token (scope study:write) as token_file = FILE or "
            "token_env = NAME (one of them)",
            "token_file" if token_file is not None else "token_env",
        )
    interval = raw.get("interval", 3.0)
    low, high = PUSH_INTERVAL
    if (
        not isinstance(interval, int | float)
        or isinstance(interval, bool)
        or not low <= interval <= high
    ):
        raise fail(
            f"interval: must be {low:g} to {high:g} seconds, not {_show(interval)}", "interval"
        )
    raw_rounds = raw.get("round", [])
    if not isinstance(raw_rounds, list) or not raw_rounds:
        raise fail(
            'round: give each round pushed as [[broadcast.round]] with round = "1" and '
            'id = "LICHESS8"',
            "round",
        )
    rounds: list[BroadcastRound] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(raw_rounds):
        label = f"round {index + 1}"
        if not isinstance(item, dict):
            raise fail(f"{label}: must be a table of keys", "round", index)
        for key in item:
            if key not in _ROUND_KEYS:
                raise fail(
                    f"{label}: unknown key {_show(key)} (known: {', '.join(sorted(_ROUND_KEYS))})",
                    "round",
                    index,
                    key,
                )
        try:
            name = check_setting("round", item.get("round"))
        except ValueError as exc:
            raise fail(f"{label}: {exc}", "round", index, "round") from None
        if not name:
            raise fail(f"{label}: round is empty", "round", index, "round")
        if name in seen:
            raise fail(
                f"{label}: round {name!r} is already pushed by round {seen[name]}",
                "round",
                index,
                "round",
            )
        seen[name] = index + 1
        lichess_id = item.get("id")
        if not isinstance(lichess_id, str) or not _ROUND_ID.match(lichess_id):
            raise fail(
                f"{label}: id must be the lichess round id (8 letters or digits, from the "
                f"round's URL), not {_show(lichess_id)}",
                "round",
                index,
                "id",
            )
        delay = item.get("delay", 0)
        if (
            not isinstance(delay, int | float)
            or isinstance(delay, bool)
            or not (0 <= delay <= MAX_DELAY)
        ):
            raise fail(
                f"{label}: delay must be 0 to {MAX_DELAY:g} seconds, not {_show(delay)}",
                "round",
                index,
                "delay",
            )
        rounds.append(BroadcastRound(name, lichess_id, float(delay)))
    return BroadcastConfig(tuple(rounds), url.rstrip("/"), token_file, token_env, float(interval))


def settings_dict(settings: Mapping[str, Any]) -> dict[str, str]:
    """Only the keys ``TableSettings`` takes."""
    keys = _SETTING_KEYS | {"white", "black", "start"}
    return {k: v for k, v in settings.items() if k in keys and v is not None}
