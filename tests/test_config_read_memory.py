"""A table's ``read_memory`` key: off unless the config says so, one-line errors naming file,
line and key, and the hall asking only that table's board for its memory."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from dgt.emulator.board import Quirk
from dgt.protocol import Command
from dgt.protocol.request_names import written_commands
from dgt.transports.emulator import EmulatorTransport
from service.config import ConfigError, TableConfig, parse_config
from service.hall import Hall
from service.store import Store


def test_read_memory_is_off_unless_a_table_says_so() -> None:
    config = parse_config(
        "[[table]]\nport = 'a'\n\n[[table]]\nport = 'b'\nread_memory = true\n"
        "\n[[table]]\nport = 'c'\nread_memory = false\n",
        "hall.toml",
    )
    assert [t.read_memory for t in config.tables] == [False, True, False]
    assert "read_memory" not in config.tables[1].settings


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[[table]]\nport = 'x'\nread_memory = 'yes'\n",
            r"hall\.toml:3: \[\[table\]\] table 1: read_memory must be true or false, not 'yes'",
        ),
        (
            "[[table]]\nport = 'x'\n\n[[table]]\nport = 'y'\nread_memory = 1\n",
            r"hall\.toml:6: \[\[table\]\] table 2: read_memory must be true or false, not 1",
        ),
        (
            "[[table]]\nport = 'x'\nbus = 3\nread_memory = true\n",
            r"hall\.toml:4: \[\[table\]\] table 1: read_memory: a board on a bus line cannot",
        ),
        (
            "[defaults]\nread_memory = true\n",
            r"hall\.toml:2: \[defaults\]: unknown key 'read_memory'",
        ),
    ],
)
def test_read_memory_errors_name_file_line_and_key(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_config(text, "hall.toml")
    assert "\n" not in str(info.value)


async def wait_for(predicate: Callable[[], bool], seconds: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not predicate():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.01)


def asked_for_memory(transport: EmulatorTransport) -> bool:
    return Command.SEND_EE_MOVES in [c.code for c in written_commands(transport.written)]


async def test_the_hall_asks_only_the_table_that_says_so(tmp_path: Path) -> None:
    store = Store(tmp_path / "hall.db")
    hall = Hall(store, tick_interval=0)
    plain = EmulatorTransport(name="plain", ee_moves=True, quirks=[Quirk.DROPS_ON_MEMORY_REQUEST])
    asking = EmulatorTransport(name="asking", ee_moves=True)
    hall.add_table(TableConfig("1", plain.name, None, {}), plain)
    hall.add_table(TableConfig("2", asking.name, None, {}, read_memory=True), asking)
    await hall.start()
    try:
        for runner in hall.runners.values():
            assert await runner.wait_ready(5)

        def logged(table_id: str) -> list[str]:
            return [i.data.get("event", "") for i in store.inputs(table_id)]

        await wait_for(lambda: "memory" in logged("2"))  # the records went into its log
        await asyncio.sleep(0.2)
        assert asked_for_memory(asking)
        assert not asked_for_memory(plain)
        assert plain.board.crashed is False
        assert "memory" not in logged("1")
    finally:
        await hall.close()
        store.close()
