"""``service.store_salvage``: see what is damaged in a store and copy what can be read.

A damaged page makes SQLite refuse every query that reaches it, so a plain
``SELECT ... ORDER BY seq`` stops at the first bad page.  The log's rows are read here in
ranges of sequence numbers instead (``seq`` is the row id, so a range is a b-tree search);
a range that cannot be read is halved until the rows that cannot be read are found one by
one.  A row whose data is not a JSON object is counted apart: it cannot be replayed.

:func:`check` reports; :func:`recover` copies every readable row (with its sequence number,
so the log keeps its order) and every readable table into a new database, which the service
can then start on.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from service.store import EDGE_DB_KEY, EDGE_ID_KEY, Store, StoreError
from service.store_recovery import ROLES, recovery_paths

CHUNK = 512
"""Rows read per query while all goes well."""

MAX_PROBLEMS = 20
"""Lines of SQLite's integrity check kept."""

LogRow = tuple[int, str, str, str, float, str]
"""seq, table id, role, kind, time, data."""


class SalvageError(Exception):
    """The database cannot be opened at all, or the copy cannot be made."""


@dataclass(slots=True)
class CheckReport:
    """What :func:`check` (and :func:`recover`) found."""

    path: Path
    problems: list[str] = field(default_factory=list)
    """SQLite's integrity check, when it is not "ok" (at most :data:`MAX_PROBLEMS`)."""
    tables: dict[str, int] = field(default_factory=dict)
    """Readable log rows per table id."""
    bad_tables: list[str] = field(default_factory=list)
    """Table rows whose settings cannot be read."""
    unreadable: list[tuple[int, int]] = field(default_factory=list)
    """Ranges of sequence numbers (first, last) whose rows cannot be read."""
    not_json: list[int] = field(default_factory=list)
    """Sequence numbers of rows whose data is not a JSON object."""
    end_known: bool = True
    """Whether the last sequence number could be read (else the scan went to a bound)."""
    recovery_files: list[Path] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(self.tables.values())

    @property
    def unreadable_rows(self) -> int:
        return sum(last - first + 1 for first, last in self.unreadable)

    @property
    def damaged(self) -> bool:
        return bool(self.problems or self.unreadable or self.not_json or self.bad_tables)


def _connect(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise SalvageError(f"{path}: no such database file")
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        connection.execute("PRAGMA schema_version").fetchone()
    except sqlite3.DatabaseError as exc:
        raise SalvageError(f"{path}: cannot open the database: {exc}") from None
    return connection


def check(path: Path, *, on_row: Callable[[LogRow], None] | None = None) -> CheckReport:
    """Check the database ``path`` (read only); ``on_row`` gets every readable log row whose
    data is a JSON object, in order."""
    report = CheckReport(path, recovery_files=recovery_paths(path))
    connection = _connect(path)
    try:
        try:
            result = [
                str(row[0]) for row in connection.execute(f"PRAGMA integrity_check({MAX_PROBLEMS})")
            ]
        except sqlite3.DatabaseError as exc:
            result = [str(exc)]
        if result != ["ok"]:
            report.problems = [" ".join(line.split()) for line in result]
        for row in _log_rows(connection, report):
            try:
                value = json.loads(row[5])
            except (TypeError, ValueError):
                value = None
            if not isinstance(value, dict):
                report.not_json.append(row[0])
                continue
            report.tables[row[1]] = report.tables.get(row[1], 0) + 1
            if on_row is not None:
                on_row(row)
    finally:
        connection.close()
    return report


def table_rows(path: Path, report: CheckReport) -> list[tuple[str, str, float]]:
    """The readable rows of the ``tables`` table (id, settings, created)."""
    connection = _connect(path)
    try:
        try:
            rowids = [r[0] for r in connection.execute("SELECT rowid FROM tables ORDER BY rowid")]
        except sqlite3.DatabaseError:
            rowids = list(range(1, 10_001))
        out: list[tuple[str, str, float]] = []
        for rowid in rowids:
            try:
                row = connection.execute(
                    "SELECT id, settings, created FROM tables WHERE rowid=?", (rowid,)
                ).fetchone()
            except sqlite3.DatabaseError:
                report.bad_tables.append(f"row {rowid}")
                continue
            if row is None:
                continue
            try:
                ok = isinstance(json.loads(row[1]), dict)
            except (TypeError, ValueError):
                ok = False
            if ok and isinstance(row[0], str):
                out.append((row[0], row[1], float(row[2])))
            else:
                report.bad_tables.append(str(row[0]))
        return out
    finally:
        connection.close()


def recover(path: Path, out: Path) -> CheckReport:
    """Copy every readable table and log row of ``path`` into the new database ``out``,
    with the edge id and database name of an edge's store (:func:`edge_meta`)."""
    if out.exists():
        raise SalvageError(f"{out} exists: give a new file to copy into")
    first = CheckReport(path)
    tables = table_rows(path, first)
    edge = edge_meta(path)
    try:
        Store(out).close()
    except StoreError as exc:
        raise SalvageError(str(exc)) from None
    target = sqlite3.connect(out, isolation_level=None)
    try:
        target.execute("BEGIN IMMEDIATE")
        target.executemany(
            "INSERT OR IGNORE INTO tables (id, settings, created) VALUES (?, ?, ?)", tables
        )
        target.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", edge)
        batch: list[LogRow] = []

        def copy(row: LogRow) -> None:
            batch.append(row)
            if len(batch) >= CHUNK:
                _insert(target, batch)
                batch.clear()

        report = check(path, on_row=copy)
        report.bad_tables = first.bad_tables
        _insert(target, batch)
        target.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        raise SalvageError(f"{out}: cannot write the copy: {exc}") from None
    finally:
        target.close()
    return report


def edge_meta(path: Path) -> list[tuple[str, str]]:
    """The edge id and database name of an edge's store (``run --central``), as far as
    they can be read: the copy forwards its log under them, so the centre takes its rows
    after the original's as the same log's."""
    connection = _connect(path)
    try:
        found: list[tuple[str, str]] = []
        for key in (EDGE_ID_KEY, EDGE_DB_KEY):
            try:
                row = connection.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
            except sqlite3.DatabaseError:
                continue
            if row is not None and isinstance(row[0], str):
                found.append((key, row[0]))
        return found
    finally:
        connection.close()


def _insert(target: sqlite3.Connection, rows: list[LogRow]) -> None:
    target.executemany(
        "INSERT INTO log (seq, table_id, role, kind, t, data) VALUES (?, ?, ?, ?, ?, ?)", rows
    )


def _max_seq(connection: sqlite3.Connection) -> int | None:
    try:
        row = connection.execute("SELECT max(seq) FROM log").fetchone()
    except sqlite3.DatabaseError:
        return None
    return int(row[0] or 0)


def _min_seq(connection: sqlite3.Connection) -> int:
    """The first sequence number (a registration written for the tables of an older log
    is numbered before its first row: 0 or less); 1 when it cannot be read."""
    try:
        row = connection.execute("SELECT min(seq) FROM log").fetchone()
    except sqlite3.DatabaseError:
        return 1
    return int(row[0] if row[0] is not None else 1)


def _bound(connection: sqlite3.Connection) -> int:
    """An upper bound of the sequence numbers when the last cannot be read: no more rows
    than the file has room for."""
    try:
        pages = int(connection.execute("PRAGMA page_count").fetchone()[0])
        size = int(connection.execute("PRAGMA page_size").fetchone()[0])
    except sqlite3.DatabaseError:
        return 1_000_000
    return max(CHUNK, pages * size // 16)


def _read(connection: sqlite3.Connection, first: int, last: int) -> list[LogRow] | None:
    try:
        rows: list[Any] = connection.execute(
            "SELECT seq, table_id, role, kind, t, data FROM log WHERE seq BETWEEN ? AND ? "
            "ORDER BY seq",
            (first, last),
        ).fetchall()
    except sqlite3.DatabaseError:
        return None
    good: list[LogRow] = []
    for seq, table_id, role, kind, t, data in rows:
        if not (
            isinstance(table_id, str)
            and role in ROLES
            and isinstance(kind, str)
            and isinstance(t, int | float)
            and isinstance(data, str)
        ):
            good.append((int(seq), "", "", "", 0.0, ""))  # read, but not a row of the log
            continue
        good.append((int(seq), table_id, role, kind, float(t), data))
    return good


def _log_rows(connection: sqlite3.Connection, report: CheckReport) -> Iterator[LogRow]:
    top = _max_seq(connection)
    if top is None:
        report.end_known = False
        top = _bound(connection)
    first = min(1, _min_seq(connection))  # registrations may come before row 1
    while first <= top:
        last = min(top, first + CHUNK - 1)
        yield from _read_range(connection, first, last, report)
        first = last + 1


def _read_range(
    connection: sqlite3.Connection, first: int, last: int, report: CheckReport
) -> Iterator[LogRow]:
    rows = _read(connection, first, last)
    if rows is not None:
        yield from rows
        return
    if first == last:
        if report.unreadable and report.unreadable[-1][1] == first - 1:
            report.unreadable[-1] = (report.unreadable[-1][0], first)
        else:
            report.unreadable.append((first, first))
        return
    middle = (first + last) // 2
    yield from _read_range(connection, first, middle, report)
    yield from _read_range(connection, middle + 1, last, report)
