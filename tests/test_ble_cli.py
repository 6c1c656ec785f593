"""``dgt-service scan`` and ``monitor`` with Bluetooth LE boards: the commands run as
subprocesses against the BlueZ stand-in served from this test's event loop."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import chess
import pytest
from bluez_standin import BlueZStandIn, running_standin

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
async def bluez(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[BlueZStandIn]:
    async with running_standin(monkeypatch) as standin:
        yield standin


async def dgt_service(*args: str, within: float = 30) -> tuple[int, str, str]:
    """Run the command while this loop keeps serving the stand-in."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "service.cli", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        cwd=ROOT, env=dict(os.environ),
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), within)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_scan_lists_the_pegasus(bluez: BlueZStandIn, tmp_path: Path) -> None:
    bluez.add_pegasus("C0:FF:EE:00:00:01", "Polar H10", uuids=(), nus=False)
    pegasus = bluez.add_pegasus(rssi=-61)
    code, out, err = await dgt_service("scan", "--ble-seconds", "1", "--timeout", "0.5")
    assert code == 0, err
    line = next(line for line in out.splitlines() if line.startswith("ble:"))
    assert line.startswith(f"ble:{pegasus.address} (DGT_PEGASUS_12345)")
    assert "Bluetooth LE: name DGT_PEGASUS_12345" in line
    assert "seen, RSSI -6" in line
    assert "Polar" not in out
    assert "DGT board" in out
    assert "found" in out
    assert "Traceback" not in err
    assert not pegasus.connects  # listed from its advertisements, not connected to


async def test_scan_json_and_no_ble(bluez: BlueZStandIn) -> None:
    pegasus = bluez.add_pegasus()
    code, out, err = await dgt_service("scan", "--json", "--ble-seconds", "1", "--timeout", "0.5")
    assert code == 0, err
    data = json.loads(out)
    rows = [row for row in data["ports"] if row["transport"] == "ble"]
    assert len(rows) == 1
    assert rows[0]["port"] == f"ble:{pegasus.address}"
    assert rows[0]["name"] == "DGT_PEGASUS_12345"
    assert rows[0]["rssi"] in (pegasus.rssi, pegasus.rssi - 1)
    assert rows[0]["status"] == "seen"
    assert data["bluetooth_le"] == {"searched": True, "seconds": 1.0, "note": None}

    starts = bluez.adapter.discovery_starts
    code, out, err = await dgt_service("scan", "--no-ble", "--timeout", "0.5")
    assert "ble:" not in out
    assert "Bluetooth LE not searched" not in err
    assert bluez.adapter.discovery_starts == starts


async def test_scan_without_bluetooth_is_a_note(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", f"unix:path={tmp_path}/no_bus_here")
    code, _out, err = await dgt_service("scan", "--ble-seconds", "1", "--timeout", "0.5")
    notes = [line for line in err.splitlines() if line.startswith("note:")]
    assert notes == [
        "note: Bluetooth LE not searched: Bluetooth not available: the "
        "system D-Bus cannot be reached (No such file or directory): is dbus running? "
        "(--no-ble skips the search)"
    ]
    assert "Traceback" not in err
    assert code in (0, 1)  # 1 unless a serial board happens to be plugged in


async def test_monitor_takes_a_ble_address(bluez: BlueZStandIn) -> None:
    pegasus = bluez.add_pegasus()

    async def lift_once_connected() -> None:
        deadline = time.monotonic() + 20
        while not (pegasus.board.key_sent and pegasus.board.mode.value == "update_board"):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)
        pegasus.lift(chess.E2)

    mover = asyncio.create_task(lift_once_connected())
    code, out, err = await dgt_service(
        "monitor", f"ble:{pegasus.address}", "--seconds", "3", "--plain"
    )
    await mover
    assert code == 0, err
    assert "board dump (connect): ********/********/8/8/8/8/********/********" in out
    assert "lift  e2 (*)" in out
    assert "Traceback" not in err
    assert not pegasus.connected  # the monitor let go of the board when it ended


async def test_monitor_names_a_missing_board_in_one_line(bluez: BlueZStandIn) -> None:
    bluez.add_pegasus()
    code, _out, err = await dgt_service("monitor", "ble:dgt_pegasus_99999", "--seconds", "1")
    assert code == 1
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("dgt-service monitor: no Bluetooth LE board named dgt_pegasus_99999*")
