"""The store when the world goes wrong, on real SQLite files: a second service on the same
database, a read-only database, a full disk (a 2 MB tmpfs), a row whose text has no UTF-8
form, a stop that cannot commit (the recovery file) and a damaged database."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ErrorLog

from service.store import Store, StoreDamaged, StoreError, StoreState
from service.store_lock import StoreLock, StoreLockError, lock_path
from service.store_recovery import fallback_path, read_recovery, recovery_path

ROOT = Path(__file__).resolve().parent.parent


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def move(store: Store, n: int, table: str = "1") -> None:
    out = {"time": float(n), "type": "move", "data": {"ply": n, "san": "e4"}}
    store.append(table, "board", float(n), {"event": "square", "n": n}, [out])


def moves_stored(db: Path) -> list[int]:
    connection = sqlite3.connect(db)
    try:
        rows = connection.execute(
            "SELECT data FROM log WHERE role='out' AND kind='move' ORDER BY seq"
        ).fetchall()
    finally:
        connection.close()
    import json

    return [int(json.loads(row[0])["data"]["ply"]) for row in rows]


# --- mounts ---------------------------------------------------------------------------------


def _mount(target: Path, size: str = "2m") -> None:
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target)],
        check=True,
        capture_output=True,
    )


@contextlib.contextmanager
def small_disk(tmp_path: Path, size: str = "2m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted for the test (skipped where mounting is not allowed);
    unmounted at the end, whatever happened."""
    target = tmp_path / "mnt"
    target.mkdir()
    try:
        _mount(target, size)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {exc}")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False, capture_output=True)


def remount(target: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(target)], check=True, capture_output=True)


def fill(disk: Path) -> Path:
    """Fill ``disk`` up; returns the filler file (remove it to free the space)."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as handle:
        for size in (65536, 512):
            with contextlib.suppress(OSError):
                while True:
                    handle.write(b"\0" * size)
    return filler


@pytest.fixture(autouse=True)
def private_tempdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Recovery files that fall back to the temporary directory go to the test's own."""
    spare = tmp_path / "tmp"
    spare.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spare))


# --- one service per database -------------------------------------------------------------


HOLDER = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from service.store_lock import StoreLock\n"
    "lock = StoreLock.acquire(Path(sys.argv[1]))\n"
    "print('held', flush=True)\n"
    "time.sleep(60)\n"
)


def test_a_second_holder_is_refused_naming_the_first_and_kill_9_needs_no_cleaning(
    tmp_path: Path,
) -> None:
    db = tmp_path / "hall.db"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)], stdout=subprocess.PIPE, cwd=ROOT
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == b"held\n"
        with pytest.raises(StoreLockError) as refused:
            StoreLock.acquire(db)
        message = str(refused.value)
        assert f"pid {holder.pid} on " in message
        assert "--db" in message
        assert "\n" not in message
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        holder.stdout.close()  # type: ignore[union-attr]
    assert lock_path(db).exists()  # left behind by the killed holder: harmless
    with StoreLock.acquire(db) as lock:
        assert lock.held
        assert f"pid {os.getpid()} " in lock_path(db).read_text()


@pytest.mark.slow
def test_a_second_service_on_one_database_exits_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from service.cli import main

    db = tmp_path / "hall.db"
    first = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "run", "emulator", "--port", "0",
         "--seconds", "30", "--db", str(db), "--admin-token", "token-token-1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    try:
        assert first.stdout is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = first.stdout.readline()
            assert line, first.stderr.read() if first.stderr else "ended"
            if line.startswith(b"open http"):
                break
        status = main(["run", "emulator", "--port", "0", "--seconds", "1", "--db", str(db),
                       "--admin-token", "token-token-2"])  # fmt: skip
        err = capsys.readouterr().err
        assert status == 2
        assert err.count("\n") == 1, err
        assert re.search(rf"is in use by another service \(pid {first.pid} on ", err), err
    finally:
        first.send_signal(signal.SIGTERM)
        _, errors = first.communicate(timeout=20)
    assert first.returncode == 0, errors
    # the first is gone: the database is free again
    assert main(["run", "emulator", "--port", "0", "--seconds", "0.5", "--db", str(db),
                 "--admin-token", "token-token-2"]) == 0  # fmt: skip


def test_the_address_in_use_message_names_both_port_and_db() -> None:
    text = (ROOT / "service" / "web" / "app.py").read_text()
    assert "(use --port to pick another port)" not in text
    assert "another --port and another --db" in text


# --- a database that cannot be written at start -------------------------------------------


def test_a_read_only_file_system_is_refused_at_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from service.cli import main

    with small_disk(tmp_path) as disk:
        db = disk / "hall.db"
        store = Store(db)
        move(store, 1)
        store.commit()
        store.close()
        remount(disk, "ro")
        with pytest.raises(StoreError, match=r"hall\.db"):
            Store(db)
        status = main(["run", "emulator", "--port", "0", "--seconds", "5", "--db", str(db),
                       "--admin-token", "token-token-1"])  # fmt: skip
        err = capsys.readouterr().err
        assert status == 2
        assert err.count("\n") == 1, err
        assert "read-only" in err.lower(), err


def test_a_read_only_database_file_is_refused_at_start(tmp_path: Path) -> None:
    """Root ignores file modes: the file is made immutable (chattr +i) where the file
    system allows it, or opened read-only through SQLite's own flag otherwise."""
    db = tmp_path / "hall.db"
    store = Store(db)
    move(store, 1)
    store.commit()
    store.close()
    immutable = subprocess.run(["chattr", "+i", str(db)], capture_output=True).returncode == 0
    try:
        if not immutable:
            os.chmod(db, 0o444)
            if os.access(db, os.W_OK):
                pytest.skip("cannot make a file read-only here (root without chattr)")
        with pytest.raises(StoreError, match=r"hall\.db.*(read-?only|cannot)"):
            Store(db)
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(db)], check=False)
    assert moves_stored(db) == [1]


def test_a_full_disk_is_refused_at_start(tmp_path: Path) -> None:
    with small_disk(tmp_path) as disk:
        db = disk / "hall.db"
        store = Store(db)
        move(store, 1)
        store.commit()
        store.close()
        filler = fill(disk)
        with pytest.raises(StoreError, match=r"hall\.db: cannot .*full") as refused:
            Store(db)
        assert "\n" not in str(refused.value)
        filler.unlink()
        Store(db).close()


# --- a bad row ----------------------------------------------------------------------------


def test_a_lone_surrogate_is_refused_alone_and_the_rest_committed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = Store(tmp_path / "hall.db")
    store.register_table("1", {}, 0.0)
    store.register_table("2", {}, 0.0)
    move(store, 1, "1")
    store.append("2", "admin", 2.0, {"command": "players", "args": {"white": "\ud800"}},
                 [{"time": 2.0, "type": "players", "data": {"white": "\ud800"}}])  # fmt: skip
    move(store, 3, "1")
    with caplog.at_level(logging.WARNING, "service.store"):
        assert store.commit() == 4
    assert store.refused == 2
    assert store.healthy
    assert store.unstored == 0
    assert any("not stored" in r.getMessage() for r in caplog.records)
    assert not store._db.in_transaction
    assert [i.data["n"] for i in store.inputs("1")] == [1, 3]
    assert list(store.inputs("2")) == []
    store.close()


@pytest.mark.parametrize(
    "bad", [("1", "in", "admin", 2.0, '{"x": "\ud800"}'), ("1", "bogus", "admin", 2.0, "{}")]
)
def test_a_row_that_fails_inside_the_commit_is_refused_alone(
    tmp_path: Path, bad: tuple[str, str, str, float, str]
) -> None:
    """Should a row still fail in the middle of a commit (any exception, not only a
    database error: here a text with no UTF-8 form, a role the log refuses), that input is
    left out and the others are committed."""
    store = Store(tmp_path / "hall.db")
    move(store, 1)
    store._pending.append(bad)
    store._pending.append(("1", "out", "players", 2.0, "{}"))
    move(store, 3)
    assert store.commit() == 4
    assert store.refused == 2
    assert not store._db.in_transaction
    assert [i.data["n"] for i in store.inputs("1")] == [1, 3]
    move(store, 4)
    assert store.commit() == 2
    store.close()


# --- failing closed at run time -------------------------------------------------------------


def test_a_full_disk_keeps_every_row_retries_and_stores_them_when_space_comes_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
    error_log: ErrorLog,
) -> None:
    clock = FakeClock()
    with small_disk(tmp_path) as disk:
        db = disk / "hall.db"
        store = Store(db, clock=clock)
        store.register_table("1", {}, 0.0)
        move(store, 1)
        store.commit()
        filler = fill(disk)
        n = 1
        with caplog.at_level(logging.WARNING, "service.store"):
            for n in range(2, 2000):  # until a commit needs a new page
                move(store, n)
                try:
                    store.commit()
                except StoreError:
                    break
            assert store.state is StoreState.FAILING
            assert not store.healthy
            assert store.unstored > 0
            assert store.status()["state"] == "failing"
            # more moves come in; the back-off holds the retries back
            for extra in range(n + 1, n + 6):
                move(store, extra)
                with pytest.raises(StoreError, match="kept in memory"):
                    store.commit()
            clock.now += 100
            with pytest.raises(StoreError):
                store.commit()  # retried: still full
            assert store.retry_in() > 0
            filler.unlink()
            clock.now += 100
            assert store.commit() > 0
            assert store.healthy
            assert store.unstored == 0
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1, [r.getMessage() for r in errors]  # once per change
        assert any("writing again" in r.getMessage() for r in caplog.records)
        store.close()
        assert moves_stored(db) == list(range(1, n + 6))
    error_log.expect("cannot write")


def test_a_stop_that_cannot_commit_writes_a_recovery_file_that_the_next_start_folds_in(
    tmp_path: Path,
    error_log: ErrorLog,
) -> None:
    clock = FakeClock()
    with small_disk(tmp_path) as disk:
        db = disk / "hall.db"
        store = Store(db, clock=clock)
        store.register_table("1", {}, 0.0)
        move(store, 1)
        store.commit()
        filler = fill(disk)
        for n in range(2, 400):
            move(store, n)
            with contextlib.suppress(StoreError):
                store.commit()
        assert not store.healthy
        unstored = store.unstored
        with pytest.raises(StoreError, match=rf"{unstored} row\(s\) could not be stored") as stop:
            store.close()
        where = recovery_path(db) if recovery_path(db).exists() else fallback_path(db)
        assert str(where) in str(stop.value)
        assert len(read_recovery(where)) == unstored
        filler.unlink()
        store = Store(db)
        assert not where.exists()
        store.close()
        assert moves_stored(db) == list(range(1, 400))
    error_log.expect("cannot write")


@pytest.mark.slow
def test_service_exits_non_zero_when_its_stop_cannot_commit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    error_log: ErrorLog,
) -> None:
    from service.commands import run as run_command

    db = tmp_path / "hall.db"

    async def setup(hall: object) -> None:
        return None

    async def after_start(hall: object) -> None:
        store = hall.store  # type: ignore[attr-defined]
        move(store, 1)
        store._db.close()  # a database that refuses every write from now on
        store._db = sqlite3.connect(":memory:")
        store._db.execute("PRAGMA query_only=1")
        with contextlib.suppress(StoreError):
            store.commit()

    status = run_command.serve(db, setup, token="token-token-1", generated=False,
                               bind="127.0.0.1", port=0, seconds=1.0, what="test",
                               after_start=after_start)  # fmt: skip
    err = capsys.readouterr().err
    assert status == 1
    assert "2 row(s) could not be stored" in err
    assert recovery_path(db).name in err
    store = Store(db)
    assert [i.data["n"] for i in store.inputs("1")] == [1]
    store.close()
    assert not recovery_path(db).exists()
    error_log.expect("cannot write")


# --- a damaged database -------------------------------------------------------------------


def damaged_copy(tmp_path: Path, rows: int = 3000) -> Path:
    """A store of ``rows`` moves whose page holding move 1500 is overwritten with garbage."""
    db = tmp_path / "hall.db"
    store = Store(db)
    store.register_table("1", {"event": "x"}, 0.0)
    for n in range(1, rows + 1):
        move(store, n)
    store.commit()
    store.close()
    page_size = 4096
    page = db.read_bytes().index(b'"ply":1500,') // page_size
    with db.open("r+b") as handle:
        handle.seek(page_size * page)
        handle.write(bytes(range(256)) * (page_size // 256))
    return db


def test_a_damaged_page_is_one_line_at_start_saying_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from service.cli import main

    db = damaged_copy(tmp_path)
    with pytest.raises(StoreDamaged) as damaged:
        Store(db, check=True)
    message = str(damaged.value)
    assert "damaged" in message
    assert "--db NEW" in message
    assert "store recover" in message
    status = main(["run", "emulator", "--port", "0", "--seconds", "5", "--db", str(db),
                   "--admin-token", "token-token-1"])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1, err
    assert "Traceback" not in err


@pytest.mark.slow
def test_rows_that_are_not_json_are_one_line_at_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from service.cli import main

    db = tmp_path / "hall.db"
    status = main(["run", "emulator", "--port", "0", "--seconds", "0.5", "--db", str(db),
                   "--admin-token", "token-token-1"])  # fmt: skip
    assert status == 0
    connection = sqlite3.connect(db)
    connection.execute(
        "INSERT INTO log (table_id, role, kind, t, data) VALUES ('1', 'in', 'tick', 1, 'oops{')"
    )
    connection.commit()
    connection.close()
    capsys.readouterr()
    status = main(["run", "emulator", "--port", "0", "--seconds", "5", "--db", str(db),
                   "--admin-token", "token-token-1"])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1, err
    assert re.search(r"damaged \(.*row \d+ is not JSON\).*--db NEW.*store recover", err), err


def test_mounts_are_gone(tmp_path: Path) -> None:
    with small_disk(tmp_path) as disk:
        assert os.path.ismount(disk)
    assert not os.path.ismount(disk)
    shutil.rmtree(disk)


def test_store_check_and_recover_salvage_every_readable_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from service.cli import main

    db = damaged_copy(tmp_path)
    assert main(["store", "check", str(db)]) == 1
    out = capsys.readouterr().out
    assert "DAMAGED" in out
    unreadable = re.search(r"unreadable rows: (\d+) \(seq (\d+)-(\d+)\)", out)
    assert unreadable is not None, out
    lost = int(unreadable.group(1))
    assert 0 < lost < 200
    new = tmp_path / "new.db"
    assert main(["store", "recover", str(db), str(new)]) == 0
    out = capsys.readouterr().out
    assert f"{lost} row(s) left out" in out
    assert main(["store", "check", str(new)]) == 0
    assert "integrity check: ok" in capsys.readouterr().out
    store = Store(new, check=True)
    assert store.settings("1") == {"event": "x"}
    assert store.count() == 6000 - lost
    plies = [ply for ply in moves_stored(new)]
    assert plies == sorted(plies)
    store.close()
    assert main(["store", "recover", str(db), str(new)]) == 2  # never over a file
    assert "exists" in capsys.readouterr().err


def test_store_check_names_rows_that_are_not_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from service.cli import main

    db = tmp_path / "hall.db"
    store = Store(db)
    store.register_table("1", {}, 0.0)
    move(store, 1)
    store.commit()
    store._db.execute(
        "INSERT INTO log (table_id, role, kind, t, data) VALUES ('1', 'in', 'tick', 1, 'oops{')"
    )
    store.close()
    assert main(["store", "check", str(db)]) == 1
    out = capsys.readouterr().out
    assert "rows that are not JSON: 1 (seq 3)" in out
    assert "readable rows: 2 (table 1: 2)" in out


@pytest.mark.slow
def test_a_running_service_retries_and_stores_the_kept_rows_when_writes_work_again(
    tmp_path: Path,
    error_log: ErrorLog,
) -> None:
    from service.commands import run as run_command

    db = tmp_path / "hall.db"
    seen: dict[str, object] = {}

    async def setup(hall: object) -> None:
        return None

    async def after_start(hall: object) -> None:
        import asyncio

        store = hall.store  # type: ignore[attr-defined]
        real = store._db
        refusing = sqlite3.connect(":memory:", isolation_level=None)
        refusing.execute("PRAGMA query_only=1")
        store._db = refusing  # the database refuses every write for a while
        move(store, 1)
        hall.settle()  # type: ignore[attr-defined]
        seen["failing"] = store.state
        seen["unstored"] = store.unstored
        await asyncio.sleep(0.2)
        store._db = real  # writes work again: the retry stores the rows, unasked
        await asyncio.sleep(1.5)
        seen["after"] = store.state
        seen["left"] = store.unstored
        refusing.close()

    status = run_command.serve(db, setup, token="token-token-1", generated=False,
                               bind="127.0.0.1", port=0, seconds=2.5, what="test",
                               after_start=after_start)  # fmt: skip
    assert status == 0
    assert seen == {"failing": StoreState.FAILING, "unstored": 2, "after": StoreState.OK,
                    "left": 0}  # fmt: skip
    assert moves_stored(db) == [1]
    error_log.expect("cannot write")


@pytest.mark.slow
def test_a_service_on_a_full_disk_stops_with_the_count_and_the_next_start_stores_the_rows(
    tmp_path: Path,
) -> None:
    """The whole path with a real process: the disk fills while the service runs, admin
    commands get 503 (not stored yet), SIGTERM exits 1 naming the rows and the recovery
    file, and the next start (space freed) stores them before anything new."""
    import json
    import urllib.error
    import urllib.request

    token = "token-token-full"
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}  # as private_tempdir: the fallback
    with small_disk(tmp_path) as disk:
        db = disk / "hall.db"
        service = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "run", "emulator", "--port", "0",
             "--seconds", "60", "--db", str(db), "--admin-token", token],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env,
        )  # fmt: skip
        try:
            assert service.stdout is not None
            url = ""
            while not url:
                line = service.stdout.readline().decode()
                assert line, "the service ended"
                if line.startswith("open "):
                    url = line.split()[1]
            filler = fill(disk)
            answers: list[int] = []
            for n in range(400):
                request = urllib.request.Request(
                    f"{url}api/admin/tables/1/players",
                    data=json.dumps({"white": f"Player {n}"}).encode(),
                    headers={"Authorization": f"Bearer {token}"},
                )
                try:
                    with urllib.request.urlopen(request, timeout=10) as response:
                        answers.append(response.status)
                except urllib.error.HTTPError as exc:
                    answers.append(exc.code)
                    exc.close()
                if answers[-1] == 503 and answers.count(503) >= 3:
                    break
            assert answers[-1] == 503, answers
        finally:
            service.send_signal(signal.SIGTERM)
            _, err = service.communicate(timeout=30)
            service.stdout.close()  # type: ignore[union-attr]
        assert service.returncode == 1, err
        last = err.decode().strip().splitlines()[-1]
        assert re.search(r"\d+ row\(s\) could not be stored \(database or disk is full\)", last)
        assert "recovery.jsonl" in last
        filler.unlink()
        store = Store(db)
        names = [
            item.data["args"]["white"]
            for item in store.inputs("1")
            if item.kind == "admin" and item.data["command"] == "players"
        ]
        store.close()
        assert names == [f"Player {n}" for n in range(len(answers))]
        assert recovery_paths_left(db) == []


def recovery_paths_left(db: Path) -> list[Path]:
    from service.store_recovery import recovery_paths

    return recovery_paths(db)
