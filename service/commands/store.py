"""``dgt-service store check DB`` and ``dgt-service store recover DB NEW``: see what is
damaged in a store, and copy every row that can still be read into a new one."""

from __future__ import annotations

import argparse
from pathlib import Path

from service.errors import UsageError
from service.store_salvage import CheckReport, SalvageError, check, recover


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "store",
        help="check a store, or copy what can be read of a damaged one",
        description="Look after the service's SQLite store: 'check DB' runs SQLite's "
        "integrity check and counts what can be read; 'recover DB NEW' copies every "
        "readable table and row into the new database NEW (then start with --db NEW).",
    )
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    c = sub.add_parser("check", help="integrity check, rows per table, what cannot be read")
    c.add_argument("db", metavar="DB", help="the database file")
    c.set_defaults(run=run_check)
    r = sub.add_parser("recover", help="copy every readable row into a new database")
    r.add_argument("db", metavar="DB", help="the damaged database file")
    r.add_argument("out", metavar="NEW", help="the new database file (must not exist)")
    r.set_defaults(run=run_recover)


def describe(report: CheckReport) -> list[str]:
    """The report as lines for the terminal."""
    lines: list[str] = []
    if report.problems:
        lines.append(f"{report.path}: DAMAGED; SQLite's integrity check says:")
        lines.extend(f"  {problem}" for problem in report.problems)
    else:
        lines.append(f"{report.path}: SQLite's integrity check: ok")
    per_table = ", ".join(f"table {t}: {n}" for t, n in report.tables.items()) or "none"
    lines.append(f"readable rows: {report.rows} ({per_table})")
    if report.unreadable:
        ranges = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in report.unreadable[:10]) + (
            ", ..." if len(report.unreadable) > 10 else ""
        )
        lines.append(f"unreadable rows: {report.unreadable_rows} (seq {ranges})")
    if not report.end_known:
        lines.append("the last row's number cannot be read: the search went to the file's size")
    if report.not_json:
        shown = ", ".join(map(str, report.not_json[:10])) + (
            ", ..." if len(report.not_json) > 10 else ""
        )
        lines.append(f"rows that are not JSON: {len(report.not_json)} (seq {shown})")
    if report.bad_tables:
        lines.append(f"tables whose settings cannot be read: {', '.join(report.bad_tables)}")
    for path in report.recovery_files:
        lines.append(f"recovery file waiting to be stored at the next start: {path}")
    return lines


def run_check(args: argparse.Namespace) -> int:
    try:
        report = check(Path(args.db))
    except SalvageError as exc:
        raise UsageError(str(exc)) from None
    for line in describe(report):
        print(line)
    if report.damaged:
        print(
            f"to copy what can be read: dgt-service store recover {args.db} NEW, "
            "then start the service with --db NEW"
        )
        return 1
    return 0


def run_recover(args: argparse.Namespace) -> int:
    try:
        report = recover(Path(args.db), Path(args.out))
    except SalvageError as exc:
        raise UsageError(str(exc)) from None
    for line in describe(report):
        print(line)
    left = report.unreadable_rows + len(report.not_json)
    print(
        f"copied {report.rows} row(s) of {len(report.tables)} table(s) to {args.out}"
        + (f"; {left} row(s) left out" if left else "")
        + f": start the service with --db {args.out}"
        + (" (the tables' replays may differ where rows are missing)" if left else "")
    )
    return 0
