"""The admin page (``/admin``): served like the public pages, its options behind the token, and
in a real headless Chromium (tests/chromium.py: it fails, never skips, without Chromium) an
organiser starting a game, setting players, ruling on a claim and getting the service's
one-line errors.  Also ``--durable`` on ``run`` and ``demo``."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import chess
import pytest
from chromium import Watched, chromium, hall_site, open_page
from playwright.async_api import Browser, Dialog, Page, expect

import service.commands.run as run_command
from dgt.transports.emulator import EmulatorTransport
from service.cli import main
from service.hall import Hall
from service.store import Store

TOKEN = "admin-page-token-42"

pytestmark = pytest.mark.timeout(60)


@dataclass
class Site:
    url: str
    hall: Hall
    session: aiohttp.ClientSession


CASUAL = {"round": "1", "rules": "casual", "time_control": "300+0"}
TWENTY_CAST = {
    "round": "1", "rules": "fide-standard", "time_control": "600+0",
    "variant": "twenty-chess", "options": "cast",
}  # fmt: skip
"""A 20-chess table whose rule is cast each turn: turn 1 waits for the rule."""


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    async with admin_site(tmp_path, {"1": CASUAL, "2": CASUAL}) as built:
        yield built


@pytest.fixture
async def twenty_site(tmp_path: Path) -> AsyncIterator[Site]:
    async with admin_site(tmp_path, {"tw": TWENTY_CAST}) as built:
        yield built


@asynccontextmanager
async def admin_site(tmp_path: Path, tables: dict[str, dict[str, str]]) -> AsyncIterator[Site]:
    """A hall with emulated boards at ``tables`` (id: settings), its web server and an HTTP
    session."""
    async with (
        hall_site(tmp_path, tables, token=TOKEN) as built,
        aiohttp.ClientSession() as session,
    ):
        yield Site(built.url, built.hall, session)


# --- over HTTP ----------------------------------------------------------------------


async def test_the_admin_page_is_served_with_the_strict_headers(site: Site) -> None:
    async with site.session.get(site.url + "/admin") as response:
        assert response.status == 200
        assert response.content_type == "text/html"
        csp = response.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp
        assert "style-src 'self'" in csp
        assert response.headers["X-Frame-Options"] == "DENY"
        assert response.headers["Cache-Control"] == "no-store"
        page = await response.text()
    assert '<script src="/static/admin.js" defer></script>' in page
    assert '<link rel="stylesheet" href="/static/admin.css">' in page
    # Nothing inline (the CSP would block it) and nothing from elsewhere.
    assert re.search(r"<script(?![^>]*\bsrc=)", page) is None
    assert "style=" not in page
    assert "<style" not in page
    assert re.search(r"(src|href)=\"(https?:)?//", page) is None
    for name, kind in (("admin.js", "text/javascript"), ("admin.css", "text/css")):
        async with site.session.get(f"{site.url}/static/{name}") as response:
            assert response.status == 200
            assert response.content_type == kind
            text = await response.text()
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
            assert sink not in text, (name, sink)
    # The public overview does not point at it (the organiser types the address).
    async with site.session.get(site.url + "/") as response:
        assert "/admin" not in await response.text()


async def test_admin_options_need_the_token(site: Site) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong-token-123"}, {"X-Admin-Token": "nope"}):
        async with site.session.get(site.url + "/api/admin/options", headers=headers) as response:
            assert response.status == 401
            assert (await response.json())["error"].startswith("admin token missing or wrong")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with site.session.get(site.url + "/api/admin/options", headers=headers) as response:
        assert response.status == 200
        options = await response.json()
    assert options["commands"] == [
        "start", "end", "players", "rule", "claim", "correct", "choose", "drop_kind",
    ]  # fmt: skip
    assert "fide-blitz" in options["rules"]
    assert "chess960" in options["variants"]
    assert options["results"] == ["1-0", "0-1", "1/2-1/2"]
    assert options["decisions"] == ["accept", "reject"]


# --- in Chromium --------------------------------------------------------------------


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with chromium() as launched:
        yield launched


async def open_admin(browser: Browser, url: str) -> Watched:
    """The admin page (its refusals are HTTP errors on purpose: only uncaught exceptions
    count as going wrong there)."""
    return await open_page(browser, url + "/admin", viewport=(1400, 1000))


async def settled(predicate: Any, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "the table state did not change"
        await asyncio.sleep(0.05)


@pytest.mark.slow
async def test_an_organiser_runs_a_table_from_the_page(site: Site, browser: Browser) -> None:
    admin = await open_admin(browser, site.url)
    page = admin.page
    # A wrong token: the service's one-line error, and no desk.
    await page.fill("#token", "wrong-token-123")
    await page.click("#token-form button[type=submit]")
    answer = page.locator("#login-answer")
    await expect(answer).to_have_text(re.compile(r"^admin token missing or wrong"))
    await expect(answer).to_have_class(re.compile(r"\berror\b"))
    assert await page.locator("#desk").is_hidden()
    # The right one: the tables, live.
    await page.fill("#token", TOKEN)
    await page.click("#token-form button[type=submit]")
    await expect(page.locator("#desk")).to_be_visible()
    await expect(page.locator("#table-rows tr")).to_have_count(2)
    await expect(page.locator("#live")).to_have_text("live")
    await page.click('#table-rows tr[data-table="1"] button.pick')
    await expect(page.locator("#detail-title")).to_have_text("Table 1")
    await expect(page.locator("#start-rules")).to_have_value("casual")

    # Start a game: variant, rules, time control, players, round.
    assert site.hall.state("1")["settings"]["rules"] == "casual"
    await page.select_option("#start-rules", "uscf-speed")
    await page.fill("#start-time-control", "180+2")
    await page.fill("#start-white", "Carl <i>")
    await page.fill("#start-black", "Dora")
    await page.fill("#start-round", "2")
    await page.click("#start-form button[type=submit]")
    start_answer = page.locator("#start-form .answer")
    await expect(start_answer).to_have_text(re.compile(r"^start on table 1: done"))
    settings = site.hall.state("1")["settings"]
    assert (settings["rules"], settings["time_control"]) == ("uscf-speed", "180+2")
    assert (settings["white"], settings["black"], settings["round"]) == ("Carl <i>", "Dora", "2")
    row = page.locator('#table-rows tr[data-table="1"]')
    await expect(row.locator("td.white")).to_have_text("Carl <i>")  # text, not markup
    assert await row.locator("i").count() == 0

    # Set players.
    await page.fill("#players-white", "Eve")
    await page.fill("#players-black", "Finn")
    await page.click("#players-form button[type=submit]")
    await expect(page.locator("#players-form .answer")).to_have_text(re.compile(r"done"))
    assert site.hall.state("1")["settings"]["white"] == "Eve"
    await expect(page.locator("#start-white")).to_have_value("Eve")  # the forms follow
    await expect(row.locator("td.black")).to_have_text("Finn")

    # A claim (US speed 13, Michigan counting) is pending: rule on it from its buttons.
    await page.select_option("#claim-kind", "michigan")
    await page.click("#claim-form button[type=submit]")
    await expect(page.locator("#claim-form .answer")).to_have_text(re.compile(r"done"))
    claim = page.locator("#claims li")
    await expect(claim).to_have_count(1)
    await expect(claim.locator("span")).to_contain_text("michigan")
    await expect(claim.locator("button")).to_have_count(2)
    assert len(site.hall.state("1")["claims"]) == 1
    await claim.locator('button[data-decision="reject"]').click()
    await expect(page.locator("#rule-answer")).to_have_text(re.compile(r"^rule on table 1: done"))
    await expect(page.locator("#claims li")).to_have_count(0)
    await settled(lambda: site.hall.state("1")["claims"] == [])

    # Refused commands show the table's one-line reason.
    await page.fill("#correct-ply", "5")
    await page.fill("#correct-uci", "e2e4")
    await page.click("#correct-form button[type=submit]")
    correct_answer = page.locator("#correct-form .answer")
    await expect(correct_answer).to_have_text("refused (400): no move at ply 5")
    await expect(correct_answer).to_have_class(re.compile(r"\berror\b"))
    await page.click("#end-form button[type=submit]")  # no result chosen
    await expect(page.locator("#end-form .answer")).to_have_text(
        "refused (400): result must be one of 1-0, 0-1, 1/2-1/2"
    )
    assert site.hall.state("1")["result"] == "*"
    await page.select_option("#end-result", "0-1")
    await page.click("#end-form button[type=submit]")
    await expect(page.locator("#end-form .answer")).to_have_text(
        re.compile(r"^end on table 1: done")
    )
    assert site.hall.state("1")["result"] == "0-1"

    # The token lives in the tab's sessionStorage, never in an address.
    stored = await page.evaluate("sessionStorage.getItem('dgt-admin-token')")
    assert stored == TOKEN
    assert admin.requested
    assert not [u for u in admin.requested if TOKEN in u or "wrong-token" in u]
    await page.reload()
    await expect(page.locator("#desk")).to_be_visible()  # asked once per tab
    assert await page.locator("#login").is_hidden()
    assert admin.page_errors == []


async def log_in(page: Page) -> None:
    await page.fill("#token", TOKEN)
    await page.click("#token-form button[type=submit]")
    await expect(page.locator("#desk")).to_be_visible()


@pytest.mark.slow
async def test_a_twenty_chess_decision_is_entered_from_the_page(
    twenty_site: Site, browser: Browser
) -> None:
    """Option ``cast``: turn 1 waits for the rule; the page shows the pending choice, the
    arbiter enters 2, and the table (and its public mirror) plays rule 2."""
    site = twenty_site
    await settled(lambda: site.hall.state("tw")["phase"] == "playing")
    pending = site.hall.state("tw")["variant_panel"]["pending_choice"]
    assert pending == {"what": "rule", "by": "white", "options": [str(n) for n in range(1, 21)]}
    admin = await open_admin(browser, site.url)
    page = admin.page
    watched_mirror = await open_page(browser, site.url + "/tables/tw")
    mirror = watched_mirror.page
    await expect(mirror.locator("#twenty .rule")).to_contain_text("Turn 1, rule ?")
    await log_in(page)
    await page.click('#table-rows tr[data-table="tw"] button.pick')
    form = page.locator("#choose-form")
    await expect(form).to_be_visible()
    await expect(page.locator("#choose-what")).to_have_text(
        "Turn 1: the rule is to be cast \u2013 White enters the die's number."
    )
    await expect(page.locator("#drop-kind-form")).to_be_visible()
    # A value out of range: the table's one-line refusal, nothing decided.
    await page.fill("#choose-value", "21")
    await page.evaluate("document.getElementById('choose-value').removeAttribute('max')")
    await page.click("#choose-submit")
    answer = form.locator(".answer")
    await expect(answer).to_have_text(re.compile(r"^refused \(400\): the decision due is the rule"))
    await expect(answer).to_have_class(re.compile(r"\berror\b"))
    assert site.hall.state("tw")["variant_panel"]["rule"] is None
    # The die shows 2.
    await page.fill("#choose-value", "2")
    await page.click("#choose-submit")
    await expect(answer).to_have_text(re.compile(r"^choose on table tw: done"))
    await expect(answer).to_have_class(re.compile(r"\bok\b"))
    await settled(lambda: site.hall.state("tw")["variant_panel"]["rule"] == 2)
    assert site.hall.state("tw")["variant_panel"]["pending_choice"] is None
    await expect(page.locator("#choose-none")).to_be_visible()  # the answer stays readable
    await expect(page.locator("#choose-submit")).to_be_hidden()
    await expect(page.locator("#detail-state")).to_contain_text("turn 1, rule 2: two moves")
    await expect(mirror.locator("#twenty .rule")).to_contain_text("Turn 1, rule 2")
    await expect(mirror.locator("#twenty .rule")).to_contain_text("two different pieces")
    # No drop yet: the drop correction is refused with the table's reason.
    await page.click("#drop-kind-form button[type=submit]")
    await expect(page.locator("#drop-kind-form .answer")).to_have_text(
        re.compile(r"^refused \(400\): ")
    )
    assert admin.page_errors == []
    assert watched_mirror.page_errors == []


# --- --durable ----------------------------------------------------------------------


def _synchronous_seen(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ``PRAGMA synchronous`` of every store the commands open (1 NORMAL, 2 FULL)."""
    seen: list[int] = []

    class Watched(Store):
        def __init__(self, path: str | Path, *, durable: bool = False) -> None:
            super().__init__(path, durable=durable)
            # The pragma is per connection: read it on the store's own.
            seen.append(self._db.execute("PRAGMA synchronous").fetchone()[0])

    monkeypatch.setattr(run_command, "Store", Watched)
    return seen


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [["run", "emulator"], ["demo", "--boards", "1"]],
    ids=["run", "demo"],
)
def test_durable_opens_the_store_with_synchronous_full(
    command: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    seen = _synchronous_seen(monkeypatch)
    common = ["--port", "0", "--seconds", "0.3", "--admin-token", TOKEN]
    assert main([*command, *common, "--db", str(tmp_path / "a.db")]) == 0
    assert main([*command, *common, "--db", str(tmp_path / "b.db"), "--durable"]) == 0
    assert seen == [1, 2]
    out = capsys.readouterr().out
    assert out.count("(durable: synchronous=FULL)") == 1
    assert "admin page http://127.0.0.1:" in out
    db = sqlite3.connect(tmp_path / "b.db")  # a store like any other
    assert db.execute("SELECT value FROM meta WHERE key='schema'").fetchone() is not None
    db.close()


def test_durable_is_explained_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("run", "demo"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        help_text = " ".join(capsys.readouterr().out.split())
        assert "--durable" in help_text
        assert "synchronous=FULL" in help_text
        assert "power cut" in help_text


@pytest.mark.slow
async def test_a_correction_that_drops_moves_is_sent_only_once_the_arbiter_confirms(
    site: Site, browser: Browser
) -> None:
    board = site.hall.runners["1"].transport
    assert isinstance(board, EmulatorTransport)
    for uci in ("e2e4", "e7e5", "g1f3", "b8c6", "d2d4"):
        move = chess.Move.from_uci(uci)
        piece = board.board.squares[move.from_square]
        board.lift(move.from_square)
        await asyncio.sleep(0.05)
        board.place(move.to_square, piece)
        await asyncio.sleep(0.3)
    await settled(lambda: len(site.hall.state("1")["moves"]) == 5)
    admin = await open_admin(browser, site.url)
    page = admin.page
    await page.fill("#token", TOKEN)
    await page.click("#token-form button[type=submit]")
    await page.click('#table-rows tr[data-table="1"] button.pick')
    await expect(page.locator("#detail-title")).to_have_text("Table 1")
    asked: list[str] = []

    async def answer(dialog: Dialog, accept: bool) -> None:
        asked.append(dialog.message)
        await (dialog.accept() if accept else dialog.dismiss())

    await page.fill("#correct-ply", "1")
    await page.fill("#correct-uci", "g1h3")
    page.once("dialog", lambda d: answer(d, False))
    await page.click("#correct-form button[type=submit]")
    reply = page.locator("#correct-form .answer")
    await expect(reply).to_have_text("not corrected: nothing was changed")
    assert asked == [
        "Correcting move 1 to g1h3 drops the 3 later moves it makes illegal: 2. Nf3 Nc6 3. d4."
        "\n\nCorrect the move and drop them?"
    ]
    assert len(site.hall.state("1")["moves"]) == 5
    page.once("dialog", lambda d: answer(d, True))
    await page.click("#correct-form button[type=submit]")
    await expect(reply).to_have_text(
        re.compile(r"^correct on table 1: done .*dropped the 3 later moves: 2\. Nf3 Nc6 3\. d4")
    )
    assert len(asked) == 2
    assert [m["san"] for m in site.hall.state("1")["moves"]][:2] == ["Nh3", "e5"]
    # the game's change log shows it, with the moves it dropped
    changes = page.locator("#changes li")
    await expect(changes).to_have_count(1)
    await expect(changes).to_contain_text(
        "correction at ply 1: 1. e4 \u2192 1. Nh3; dropped 2. Nf3 2... Nc6 3. d4"
    )
    await expect(page.locator("#no-changes")).to_be_hidden()


async def test_a_request_may_not_carry_a_replay_s_own_arguments(site: Site) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    for command, args in [
        ("players", {"white": "X", "applies": "stored-now"}),
        ("correct", {"ply": 1, "uci": "e2e4", "confirm": "stored-unconfirmed"}),
    ]:
        async with site.session.post(
            f"{site.url}/api/admin/tables/1/{command}", json=args, headers=headers
        ) as response:
            assert response.status == 400
            error = (await response.json())["error"]
        assert error.endswith(": only a replay of the stored log gives that argument")
    assert site.hall.state("1")["settings"]["white"] == "?"
