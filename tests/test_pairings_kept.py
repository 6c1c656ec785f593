"""The last round of pairings imported survives a restart: kept beside the database
(``DB.pairings.json``), read back at start and shown on ``GET /api/pairings``; a start that
imports an earlier round again leaves a later round imported since shown; a missing or
malformed file is a one-line warning and no round, never a failed start."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import aiohttp
import pytest
from chromium import hall_site

from service.pairings import load_pairings
from service.pairings.hall_import import desk, import_round
from service.pairings.kept_round import ReportError, check_report, kept_path

pytestmark = pytest.mark.timeout(60)

TOKEN = "pairings-token-42"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
DATA = Path(__file__).parent / "data"
CASUAL = {"round": "1", "rules": "casual", "time_control": "300+0"}
TABLES = {str(n): CASUAL for n in range(1, 5)}


async def shown(url: str) -> dict[str, object]:
    async with aiohttp.ClientSession() as session, session.get(url + "/api/pairings") as r:
        assert r.status == 200
        answer: dict[str, object] = await r.json()
        return answer


async def test_an_upload_is_shown_again_after_a_restart(tmp_path: Path) -> None:
    data = (DATA / "pairings-round3.trf").read_bytes()
    async with hall_site(tmp_path, TABLES, token=TOKEN) as built, aiohttp.ClientSession() as s:
        query = "/api/admin/pairings?round=3&name=r3.trf"
        async with s.post(built.url + query, data=data, headers=AUTH) as response:
            assert response.status == 200
            report = await response.json()
    assert kept_path(tmp_path / "hall.db") == tmp_path / "hall.db.pairings.json"
    assert json.loads((tmp_path / "hall.db.pairings.json").read_text("utf-8")) == report
    async with hall_site(tmp_path, TABLES, token=TOKEN) as again:
        after = await shown(again.url)
    assert after == report
    assert after["round"] == 3
    assert len(after["byes"]) == 2  # type: ignore[arg-type]
    assert [p["board"] for p in after["no_table"]] == [5, 6, 7, 8, 9]  # type: ignore[index,union-attr]
    assert after["tables"][2]["white"]["name"] == "Wróbel, Łukasz"  # type: ignore[index]


async def test_a_start_importing_an_earlier_round_leaves_the_later_one_shown(
    tmp_path: Path,
) -> None:
    """The config imports round 1 at every start; round 3 was uploaded since: round 3 stays
    shown (as its players stay seated).  The same round again, or a later one, is shown."""
    async with hall_site(tmp_path, TABLES, token=TOKEN) as built:
        await import_round(built.hall, load_pairings(DATA / "pairings-round1.csv", 1))
        await import_round(built.hall, load_pairings(DATA / "pairings-round3.trf", 3))
    async with hall_site(tmp_path, TABLES, token=TOKEN) as built:
        start = await import_round(
            built.hall, load_pairings(DATA / "pairings-round1.csv", 1), at_start=True
        )
        assert start["round"] == 1
        assert (await shown(built.url))["round"] == 3
        round3 = load_pairings(DATA / "pairings-round3.trf", 3)
        await import_round(built.hall, round3, at_start=True)
        assert (await shown(built.url))["round"] == 3
        uploaded = await import_round(built.hall, load_pairings(DATA / "pairings-round1.csv", 1))
        assert await shown(built.url) == uploaded  # an upload is always what is shown
    async with hall_site(tmp_path, TABLES, token=TOKEN) as built:
        assert (await shown(built.url))["round"] == 1


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (b"{not json", "not JSON text"),
        (b"\xff\xfe", "not JSON text"),
        (b"[]", "the report is not a JSON object"),
        (b'{"source": "r.trf", "round": 3}', "tables is not a list"),
        (
            b'{"source": "r.trf", "round": 3, "tables": [{"table": "1", "board": 1, '
            b'"white": {"name": "A"}, "black": {"name": 7}, "applies": "now"}], "byes": [], '
            b'"unpaired_tables": [], "no_table": []}',
            "tables[0].black has no text 'name'",
        ),
    ],
)
async def test_a_malformed_kept_round_is_a_warning_not_a_failed_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, text: bytes, said: str
) -> None:
    (tmp_path / "hall.db.pairings.json").write_bytes(text)
    with caplog.at_level(logging.WARNING, logger="service.pairings.kept_round"):
        async with hall_site(tmp_path, TABLES, token=TOKEN) as built:
            assert (await shown(built.url))["round"] is None
            assert desk(built.hall).last is None
            # An import still works, and replaces the bad file.
            await import_round(built.hall, load_pairings(DATA / "pairings-round3.trf", 3))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert said in warnings[0]
    assert "hall.db.pairings.json" in warnings[0]
    assert "\n" not in warnings[0]
    assert check_report(json.loads((tmp_path / "hall.db.pairings.json").read_bytes()))


async def test_no_kept_round_is_no_round_and_no_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        async with hall_site(tmp_path, TABLES, token=TOKEN) as built:
            assert (await shown(built.url))["round"] is None
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_check_report_takes_what_an_import_makes() -> None:
    player = {"name": "Müller, Jürgen", "title": "GM", "elo": "2598"}
    report = {
        "source": "r.csv",
        "round": None,
        "tables": [
            {"table": "1", "board": 1, "white": player, "black": {"name": "B"}, "applies": "now"},
            {"table": "2", "board": 2, "white": player, "black": player, "error": "no board"},
        ],
        "byes": [{"name": "C", "kind": "half-point bye"}],
        "unpaired_tables": [{"table": "3", "board": 3}],
        "no_table": [{"board": 9, "white": player, "black": player}],
    }
    assert check_report(report) is report
    for broken, said in (
        ({**report, "round": "3"}, "round is not a round number"),
        ({**report, "byes": [{"name": "C"}]}, "byes[0] has no text 'kind'"),
        ({**report, "unpaired_tables": [{"table": "3", "board": True}]}, "no board number"),
        ({**report, "no_table": [{"board": 9, "white": {**player, "elo": 2598}}]}, "elo is not"),
    ):
        with pytest.raises(ReportError) as caught:
            check_report(broken)
        assert said in str(caught.value)
