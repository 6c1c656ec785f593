"""Pairings over HTTP: ``POST /api/admin/pairings`` behind the admin token (a bad file is a
one-line 400 naming the file and line, a big one 413), each pairing seated at the table of
its board by that table's ``players`` command (stored: a restart replays it), and ``GET
/api/pairings`` with the round's byes and tables without a game."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from chromium import HallSite, hall_site

from service.config import TableConfig
from service.hall import Hall
from service.pairings import load_pairings
from service.pairings.hall_import import desk, import_round
from service.store import Store
from service.web.pairings_upload import MAX_UPLOAD

pytestmark = pytest.mark.timeout(60)

TOKEN = "pairings-token-42"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
DATA = Path(__file__).parent / "data"
CASUAL = {"round": "1", "rules": "casual", "time_control": "300+0"}


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[tuple[HallSite, aiohttp.ClientSession]]:
    tables = {str(n): CASUAL for n in range(1, 5)}
    async with hall_site(tmp_path, tables, token=TOKEN) as built, aiohttp.ClientSession() as s:
        yield built, s


async def upload(
    session: aiohttp.ClientSession, url: str, data: bytes, query: str = "?round=3&name=r3.trf"
) -> tuple[int, dict[str, object]]:
    async with session.post(url + "/api/admin/pairings" + query, data=data, headers=AUTH) as r:
        return r.status, await r.json()


async def test_an_uploaded_trf_seats_its_pairings_by_board(
    site: tuple[HallSite, aiohttp.ClientSession],
) -> None:
    built, session = site
    status, report = await upload(session, built.url, (DATA / "pairings-round3.trf").read_bytes())
    assert status == 200
    assert report["round"] == 3
    assert report["source"] == "r3.trf"
    tables = report["tables"]
    assert isinstance(tables, list)
    assert [(t["table"], t["board"], t["applies"]) for t in tables] == [
        ("1", 1, "now"), ("2", 2, "now"), ("3", 3, "now"), ("4", 4, "now"),
    ]  # fmt: skip
    assert [p["board"] for p in report["no_table"]] == [5, 6, 7, 8, 9]  # type: ignore[index,union-attr]
    assert len(report["byes"]) == 2  # type: ignore[arg-type]
    settings = built.hall.state("3")["settings"]
    assert settings["white"] == "Wróbel, Łukasz"
    assert settings["black_title"] == "GM"
    assert settings["board"] == "3"
    assert settings["round"] == "3"
    summary = built.hall.summary("3")
    assert summary["details"]["white_federation"] == "POL"
    async with session.get(built.url + "/api/pairings") as response:
        shown = await response.json()
    assert shown == report
    async with session.get(built.url + "/api/tables/3") as response:
        assert (await response.json())["settings"]["white_elo"] == "2467"
    # The same file again: every table is seated already, nothing new is stored.
    status, again = await upload(session, built.url, (DATA / "pairings-round3.trf").read_bytes())
    assert status == 200
    assert {t["applies"] for t in again["tables"]} == {"already"}  # type: ignore[union-attr,index]


async def test_a_csv_upload_names_its_round_when_asked(
    site: tuple[HallSite, aiohttp.ClientSession],
) -> None:
    built, session = site
    data = (DATA / "pairings-round1.csv").read_bytes()
    status, report = await upload(session, built.url, data, "?round=1&name=round1.csv")
    assert status == 200
    assert report["round"] == 1
    assert report["unpaired_tables"] == [{"table": "4", "board": 4}]
    assert built.hall.state("1")["settings"]["white_team"] == "SC Nordlicht"
    assert built.hall.state("4")["settings"]["white"] == "?"  # no pairing: nothing invented


BAD_UPLOADS = [
    (b"001    1 m  GM Solo\n", "?round=1&name=bad.trf", 400, "bad.trf:1: "),
    (b"board,white\n1,A\n", "?name=p.csv", 400, "p.csv:1: the header has no 'black' column"),
    (b"", "", 400, "no file"),
    (b"white,black\nA,B\n", "?round=zero", 400, "round must be a round number"),
    (b"white,black\nA,B\n", "?name=..%2Fx%0A", 400, "name must be a file name"),
    (b"x" * (MAX_UPLOAD + 1), "", 413, "larger than"),
]


async def test_a_bad_upload_is_a_one_line_error(
    site: tuple[HallSite, aiohttp.ClientSession],
) -> None:
    built, session = site
    for data, query, status, message in BAD_UPLOADS:
        got, body = await upload(session, built.url, data, query)
        assert got == status, message
        error = body["error"]
        assert isinstance(error, str)
        assert message in error
        assert "\n" not in error
    assert desk(built.hall).last is None
    assert built.hall.state("1")["settings"]["white"] == "?"


async def test_the_upload_needs_the_token(site: tuple[HallSite, aiohttp.ClientSession]) -> None:
    built, session = site
    async with session.post(built.url + "/api/admin/pairings?round=3", data=b"x") as response:
        assert response.status == 401
    async with session.get(built.url + "/api/pairings") as response:
        assert (await response.json())["round"] is None


async def test_a_pairing_for_a_finished_game_plays_the_next_game_and_replays(
    tmp_path: Path,
) -> None:
    """The import is each table's players command: it waits for the next game when the
    game at the table is the record, and is stored: a restart replays it."""
    async with hall_site(tmp_path, {"1": CASUAL}, token=TOKEN) as built:
        await built.hall.admin("1", "end", {"result": "1-0"})
        round_ = load_pairings(DATA / "pairings-round3.trf", 3)
        report = await import_round(built.hall, round_)
        assert [t["applies"] for t in report["tables"]] == ["next game"]
        assert built.hall.state("1")["settings"]["white"] == "?"
    store = Store(tmp_path / "hall.db")
    try:
        hall = Hall(store)
        hall.add_table(TableConfig("1", "emu-1", None, dict(CASUAL)))
        assert hall.state("1")["settings"]["white"] == "?"
        await hall.admin("1", "start", {})
        settings = hall.state("1")["settings"]
        assert settings["white"] == "García Núñez, José"
        assert settings["black_title"] == "WIM"
        assert settings["round"] == "3"
        await hall.close()
    finally:
        store.close()


async def test_a_start_leaves_a_table_of_a_later_round_as_it_is(tmp_path: Path) -> None:
    """The command line and the config import their round at every start: a table that
    plays (or waits for) a later round by then is left as it is; an upload seats it."""
    async with hall_site(tmp_path, {"1": CASUAL, "2": CASUAL}, token=TOKEN) as built:
        round_ = load_pairings(DATA / "pairings-round3.trf", 3)
        await import_round(built.hall, round_, at_start=True)
        await built.hall.admin("1", "players", {"white": "Later, A", "black": "B", "round": "4"})
        await built.hall.admin("2", "end", {"result": "1-0"})
        await built.hall.admin("2", "players", {"white": "Later, C", "black": "D", "round": "4"})
        again = await import_round(built.hall, round_, at_start=True)
        assert [t["applies"] for t in again["tables"]] == ["later round", "already"]
        assert built.hall.state("1")["settings"]["white"] == "Later, A"
        assert built.hall.state("2")["next_players"]["white"] == "Later, C"
        uploaded = await import_round(built.hall, round_)
        assert [t["applies"] for t in uploaded["tables"]] == ["now", "already"]


async def test_a_file_larger_than_an_admin_command_is_taken(
    site: tuple[HallSite, aiohttp.ClientSession],
) -> None:
    """The admin commands' bodies stop at 16 kB; a pairings file may be far larger."""
    built, session = site
    rows = "".join(f'{n},"White, Player {n}","Black, Player {n}"\n' for n in range(1, 2001))
    data = ("board,white,black\n" + rows).encode()
    assert 64 * 1024 < len(data) < MAX_UPLOAD
    status, report = await upload(session, built.url, data, "?name=big.csv")
    assert status == 200
    assert len(report["tables"]) == 4  # type: ignore[arg-type]
    assert len(report["no_table"]) == 1996  # type: ignore[arg-type]
