"""Malformed configs, as a clumsy or hostile hand writes them: each gets one line naming the
file, the line and the key (a :class:`ConfigError`), never another exception; a config the
checks let through builds every one of its tables."""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from service.bus_links import BusLinks
from service.config import _SERVICE_KEYS, _SETTING_KEYS, _TABLE_KEYS, ConfigError, load_config
from service.config_lines import KeyLines
from service.hall import default_table_factory

WRONG_VALUES = {
    "a list": "[1, 2]",
    "an inline table": "{ a = 1 }",
    "a boolean": "true",
    "a date": "1979-05-27",
    "a nested array": "[[[[1]]]]",
}
"""Values of a type no key takes (but the keys in :data:`BOOLEAN_KEYS`, which take
``true``)."""

BOOLEAN_KEYS = frozenset({"read_memory"})
"""Table keys whose value is true or false."""
SERVICE_BOOLEAN_KEYS = frozenset({"play"})
"""``[service]`` keys that take ``true`` (``play = true``: the play API on its default
port)."""

DEEP = "[" * 100 + "1" + "]" * 100
DEEPER = "[" * 2000 + "]" * 2000
TABLE = "[[table]]\nport = 'x'\n"


def _wrong_types() -> list[tuple[str, str, int, str]]:
    cases = []
    for what, value in WRONG_VALUES.items():
        for key in sorted(_SERVICE_KEYS):
            if key in SERVICE_BOOLEAN_KEYS and value == "true":
                continue
            cases.append((f"[service] {key} as {what}", f"\n[service]\n{key} = {value}\n", 3, key))
        for key in sorted(_SETTING_KEYS):
            text = f"[defaults]\n{key} = {value}\n"
            cases.append((f"[defaults] {key} as {what}", text, 2, key))
        for key in sorted(_TABLE_KEYS):
            if key in BOOLEAN_KEYS and value == "true":
                continue
            port = "" if key == "port" else "port = 'y'\n"
            text = f"{TABLE}\n[[table]]\n{port}{key} = {value}\n"
            cases.append((f"[[table]] {key} as {what}", text, 5 if key == "port" else 6, key))
    return cases


MALFORMED: list[tuple[str, str, int, str]] = [
    # (name, text, the line the error must name, a key the message must name)
    *_wrong_types(),
    ("table = [1, 2]", "table = [1, 2]\n", 1, "table 1"),
    ("table = [{...}, 3]", "table = [{ port = 'x' }, 3]\n", 1, "table 2"),
    ("table = 'x'", "\ntable = 'x'\n", 2, "table"),
    ("table = {}", "table = { port = 'x' }\n", 1, "table"),
    ("table as a table", "[table]\nport = 'x'\n", 1, "table"),
    ("service as an array", "service = [1]\n", 1, "service"),
    ("[[service]]", "[[service]]\nport = 1\n", 1, "service"),
    ("defaults as an array", "[[defaults]]\nround = '1'\n", 1, "defaults"),
    ("defaults = 3", "\ndefaults = 3\n", 2, "defaults"),
    ("nested table for white", f"{TABLE}[table.white]\nname = 'Ann'\n", 3, "white"),
    ("nested table for port", "[[table]]\n[table.port]\npath = '/dev/x'\n", 2, "port"),
    ("nested table for bind", "[service.bind]\nhost = 'x'\n", 1, "bind"),
    ("dotted key for bus", f"{TABLE}bus.address = 3\n", 3, "bus"),
    ("a 100-deep value", f"{TABLE}white = {DEEP}\n", 3, "white"),
    ("a 100-deep bus", f"{TABLE}bus = {DEEP}\n", 3, "bus"),
    ("a 100-deep inline table", f"{TABLE}bus = {'{a=' * 100}1{'}' * 100}\n", 3, "bus"),
    ("a 2000-deep value", f"{TABLE}white = {DEEPER}\n", 3, "TOML"),
    ("an integer of 5000 digits", f"{TABLE}\nbus = {'1' * 5000}\n", 4, "TOML"),
    ("a deep unknown key", f"deep = {DEEP}\n", 1, "deep"),
    ("unknown top key", "\n\ncolour = 'red'\n", 3, "colour"),
    ("unknown [service] key", "[service]\nhost = 'x'\n", 2, "host"),
    ("unknown [defaults] key", "[defaults]\nplayers = 2\n", 2, "players"),
    ("unknown [[table]] key", f"{TABLE}{TABLE}speed = 3\n", 5, "speed"),
    ("a key with a newline", f'{TABLE}"a\\nb" = 1\n', 3, "'a\\nb'"),
    ("port missing", "[[table]]\nwhite = 'A'\n\n[[table]]\nblack = 'B'\n", 1, "port"),
    ("port empty", "[[table]]\nport = '  '\n", 2, "port"),
    ("port with a NUL", '[[table]]\nport = "a\\u0000b"\n', 2, "port"),
    ("id taken", f"{TABLE}id = 'a'\n[[table]]\nport = 'y'\nid = 'a'\n", 6, "id"),
    ("id number taken", f"{TABLE}[[table]]\nport = 'y'\nid = 1\n", 5, "id"),
    ("id float", f"{TABLE}id = 1.5\n", 3, "id"),
    ("id too long", f"{TABLE}id = '{'a' * 40}'\n", 3, "id"),
    ("bus 0", f"{TABLE}bus = 0\n", 3, "bus"),
    ("bus too big", f"{TABLE}bus = 16384\n", 3, "bus"),
    ("bus float", f"{TABLE}bus = 3.0\n", 3, "bus"),
    ("bus huge", f"{TABLE}bus = 9999999999999999999999\n", 3, "bus"),
    ("bus text", f"{TABLE}bus = '3'\n", 3, "bus"),
    (
        "a bus address used twice",
        "[[table]]\nport = 'x'\nbus = 3\n\n[[table]]\nport = 'x'\nbus = 3\n",
        7,
        "bus",
    ),
    (
        "a bus address used twice, port spaced",
        "[[table]]\nport = 'x'\nbus = 3\n\n[[table]]\nbus = 3\nport = ' x '\n",
        6,
        "bus",
    ),
    (
        "a bus line and a single board",
        "[[table]]\nport = 'x'\nbus = 3\n\n[[table]]\nport = 'x'\n",
        6,
        "port",
    ),
    (
        "a single board and a bus line",
        "[[table]]\nport = 'x'\n\n[[table]]\nport = 'x'\nbus = 3\n",
        6,
        "bus",
    ),
    ("options for standard", f"{TABLE}options = 'cast'\n", 3, "options"),
    ("options for realtime", f"{TABLE}variant = 'realtime'\noptions = 'cast'\n", 4, "options"),
    (
        "unknown 20-chess option",
        f"{TABLE}variant = 'twenty-chess'\n\noptions = 'foo'\n",
        5,
        "options",
    ),
    (
        "20-chess rule 99",
        f"{TABLE}variant = 'twenty-chess'\noptions = 'schedule=99'\n",
        4,
        "options",
    ),
    (
        "options from [defaults] for a standard table",
        f"[defaults]\nvariant = 'twenty-chess'\noptions = 'cast'\n\n{TABLE}variant = 'standard'\n",
        3,
        "options",
    ),
    ("rules unknown", f"{TABLE}rules = 'lightning'\n", 3, "rules"),
    ("variant unknown", f"{TABLE}variant = 'crazyhouse'\n", 3, "variant"),
    ("tick too fast", f"{TABLE}variant = 'realtime'\ntick = 0.01\n", 4, "tick"),
    ("tick inf", f"{TABLE}tick = inf\n", 3, "tick"),
    ("tick nan", f"{TABLE}tick = nan\n", 3, "tick"),
    ("time control 0+0", f"{TABLE}time_control = '0+0'\n", 3, "time_control"),
    ("time control 40/0", "[defaults]\ntime_control = '40/0'\n", 2, "time_control"),
    ("time control words", f"{TABLE}time_control = 'five minutes'\n", 3, "time_control"),
    ("time control negative", f"{TABLE}time_control = '-300+0'\n", 3, "time_control"),
    ("time control absurd", f"{TABLE}time_control = '{'9' * 90}+0'\n", 3, "time_control"),
    ("white too long", f"{TABLE}white = '{'A' * 101}'\n", 3, "white"),
    ("white with a bell", f'{TABLE}white = "A\\u0007"\n', 3, "white"),
    ("port 70000", "[service]\nport = 70000\n", 2, "port"),
    ("port -1", "[service]\nport = -1\n", 2, "port"),
    ("bind a name", "[service]\nbind = 'everywhere'\n", 2, "bind"),
    ("database empty", "[service]\ndatabase = ''\n", 2, "database"),
    ("database with a NUL", '[service]\ndatabase = "a\\u0000b"\n', 2, "database"),
    ("token file with a NUL", '[service]\nadmin_token_file = "a\\u0000"\n', 2, "admin_token_file"),
    ("not TOML", "[[table]\nport = 'x'\n", 1, "TOML"),
    ("not TOML, later", f"{TABLE}white = 'Ann\n", 3, "TOML"),
    ("a key twice", f"{TABLE}white = 'A'\nwhite = 'B'\n", 4, "TOML"),
    ("an unclosed array", f"{TABLE}white = [1,\n", 3, "TOML"),
    ("an empty file", "", 1, "table"),
    ("no tables", "# a hall\n[service]\nport = 0\n", 1, "table"),
    ("too many tables", "table = [" + "{port='x'}," * 5001 + "]\n", 1, "table"),
]


@pytest.mark.parametrize(
    ("name", "text", "line", "key"), MALFORMED, ids=[case[0] for case in MALFORMED]
)
def test_a_malformed_config_is_one_line_naming_file_line_and_key(
    tmp_path: Path, name: str, text: str, line: int, key: str
) -> None:
    path = tmp_path / "hall.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:{line}: "), message
    assert key in message, message
    assert len(message) < 400, message


def _write(tmp_path: Path, service: str) -> Path:
    path = tmp_path / "hall.toml"
    path.write_text(f"# a hall\n\n[service]\nport = 0\n{service}\n\n{TABLE}", encoding="utf-8")
    return path


FILE_CASES = [
    ("database = 'no/such/dir/hall.db'", r"\[service\] database: the directory .* does not exist"),
    ("database = '.'", r"\[service\] database: .* is a directory, not a database file"),
    ("database = 'sub'", r"\[service\] database: .* is a directory"),
    ("admin_token_file = 'sub'", r"\[service\] admin_token_file: .* is a directory"),
    (
        "admin_token_file = 'no/dir/t.txt'",
        r"\[service\] admin_token_file: the directory .* does not exist",
    ),
    (
        "admin_token_file = 'short.txt'",
        r"\[service\] admin_token_file: the admin token in .* at least 8",
    ),
    (
        "admin_token_file = 'latin1.txt'",
        r"\[service\] admin_token_file: .*latin1\.txt is not UTF-8 text",
    ),
    ("admin_token_file = 'fifo'", r"\[service\] admin_token_file: .*fifo is not a regular file"),
    ("database = 'fifo'", r"\[service\] database: .*fifo is not a regular file"),
]


@pytest.mark.parametrize(("service", "message"), FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_a_file_the_config_names_that_cannot_be_used(
    tmp_path: Path, service: str, message: str
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "short.txt").write_text("abc\n")
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9-token-0123\n")
    os.mkfifo(tmp_path / "fifo")
    path = _write(tmp_path, service)
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}:5: {message}") as info:
        load_config(path)
    assert "\n" not in str(info.value)


def _without_root_reads() -> None:
    """In a child before exec: drop the capabilities that let root read any file (as a
    root process's capabilities after exec are its bounding set, it reads as others do)."""
    libc = ctypes.CDLL(None, use_errno=True)
    pr_capbset_drop, cap_dac_override, cap_dac_read_search = 24, 1, 2
    for cap in (cap_dac_override, cap_dac_read_search):
        if libc.prctl(pr_capbset_drop, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_an_unreadable_token_file(tmp_path: Path) -> None:
    """Root reads any file, so as root the config is loaded by a child without that power."""
    token = tmp_path / "token.txt"
    token.write_text("a-good-long-token\n")
    token.chmod(0)
    path = _write(tmp_path, "admin_token_file = 'token.txt'")
    pattern = r":5: \[service\] admin_token_file: cannot read .*"
    if os.geteuid() != 0:
        with pytest.raises(ConfigError, match=pattern):
            load_config(path)
        return
    load = (
        "import sys\nfrom service.config import ConfigError, load_config\n"
        "try:\n    load_config(sys.argv[1])\nexcept ConfigError as exc:\n"
        "    print(exc)\n    sys.exit(3)\n"
    )
    root = Path(__file__).resolve().parent.parent
    child = subprocess.run(
        [sys.executable, "-c", load, str(path)],
        capture_output=True, text=True, timeout=60, preexec_fn=_without_root_reads,
        env={**os.environ, "PYTHONPATH": str(root)},
    )  # fmt: skip
    assert child.returncode == 3, child.stderr
    assert re.search(pattern, child.stdout.strip())


def test_usable_files_pass(tmp_path: Path) -> None:
    (tmp_path / "token.txt").write_text("a-good-long-token\n")
    path = _write(tmp_path, "database = 'hall.db'\nadmin_token_file = 'token.txt'")
    config = load_config(path)
    assert config.database == tmp_path / "hall.db"
    assert config.admin_token_file == tmp_path / "token.txt"
    path = _write(tmp_path, "admin_token_file = 'new-token.txt'")  # created at start
    assert load_config(path).admin_token_file == tmp_path / "new-token.txt"


def test_the_config_file_itself(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.toml: no such config file$"):
        load_config(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match=r": is a directory, not a config file$"):
        load_config(tmp_path)
    path = tmp_path / "hall.toml"
    path.write_bytes(b"[[table]]\nport = 'x'\nwhite = 'Jos\xe9'\n")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}:3: not UTF-8 text"):
        load_config(path)
    path.write_bytes(b"\xef\xbb\xbf[[table]]\nport = 'x'\n")  # a BOM, as some editors write
    assert load_config(path).tables[0].port == "x"


GOOD = [
    f"{TABLE}variant = 'twenty-chess'\noptions = 'schedule=1,2,12 cast stand-ins=special'\n",
    f"{TABLE}variant = 'twenty-chess'\noptions = 'stand-ins=Nb'\n",
    f"{TABLE}variant = 'realtime'\ntick = 0.5\n",
    f"{TABLE}variant = 'chess960'\ntime_control = '40/5400+30:1800+30'\n",
    "[defaults]\nvariant = 'twenty-chess'\noptions = 'cast'\n" + TABLE + TABLE.replace("x", "y"),
    "[[table]]\nport = 'x'\nbus = 1\n[[table]]\nport = 'x'\nbus = 2\n[[table]]\nport = 'y'\n",
    "table = [{ port = 'x', white = 'Ann' }, { port = 'y', id = 'top' }]\n",
    "[[table]]\nport = 'emulator'\n[[table]]\nport = 'emulator'\n",
]


@pytest.mark.parametrize("text", GOOD)
def test_an_accepted_config_builds_its_tables(tmp_path: Path, text: str) -> None:
    path = tmp_path / "hall.toml"
    path.write_text(text)
    links = BusLinks()
    for table in load_config(path).tables:
        links.check(table)
        default_table_factory(table.id, table.settings)


def test_key_lines_for_the_usual_layouts() -> None:
    text = (
        "# a hall\n"  # 1
        "[service]\n"  # 2
        "port = 1  # web\n"  # 3
        'notes = """\n'  # 4
        "white = 'not a key'\n"  # 5
        '"""\n'  # 6
        "[[table]]\n"  # 7
        "port = 'x'\n"  # 8
        "[[table]]  # second\n"  # 9
        "  'port' = 'y'\n"  # 10
        "a.b = 1\n"  # 11
        "[table.white]\n"  # 12
        "name = 'Ann'\n"  # 13
        "[[table.clock]]\n"  # 14
        "[ defaults ]\n"  # 15
        "round = '1'\n"  # 16
    )
    lines = KeyLines(text)
    assert lines.line(("service",)) == 2
    assert lines.line(("service", "port")) == 3
    assert lines.line(("service", "notes")) == 4
    assert lines.find(("service", "white")) is None  # inside a multi-line string
    assert lines.line(("table",)) == 7
    assert lines.line(("table", 0, "port")) == 8
    assert lines.line(("table", 1)) == 9
    assert lines.line(("table", 1, "port")) == 10
    assert lines.line(("table", 1, "a")) == 11
    assert lines.line(("table", 1, "a", "b")) == 11
    assert lines.line(("table", 1, "white")) == 12
    assert lines.line(("table", 1, "white", "name")) == 13
    assert lines.line(("table", 1, "clock", 0)) == 14
    assert lines.line(("defaults", "round")) == 16
    assert lines.line(("table", 1, "bus")) == 9  # not written: the table's header
    assert lines.line(("table", 5, "bus")) == 7  # no such table: the first header
    assert lines.line(("nowhere",)) == 1


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[[table]]\nport = 'emulator'\nbus = 3\n[[table]]\nport = 'emulator'\nbus = 3\n", 6),
        ("[[table]]\nport = 'emulator'\noptions = 'foo'\n", 3),
        ("[service]\ndatabase = 'nowhere/hall.db'\n[[table]]\nport = 'emulator'\n", 2),
        ("table = [1, 2]\n", 1),
    ],
)
def test_dgt_service_run_answers_one_line(
    tmp_path: Path, text: str, line: int, capsys: pytest.CaptureFixture[str]
) -> None:
    from service.cli import main

    path = tmp_path / "hall.toml"
    path.write_text(text)
    assert main(["run", "--config", str(path), "--seconds", "1"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{line}: " in err
    assert err.count("\n") == 1
