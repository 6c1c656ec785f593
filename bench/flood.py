"""Flood figure: one client tries to wear the service down, and the service stays up.

One service runs (``dgt-service -v run emulator /no/such/port``, started with an
open-files soft limit of 1,024) on 127.0.0.1 and gets, one case a row: a flood of
requests to unknown paths (404) and with a wrong method (405), the resident memory before
and after (and the slope in bytes a request); idle connections held open while a plain GET
is timed; slow header lines (one byte a second); more live streams from one address than
it may hold.  After each case ``GET /api/tables`` must still answer 200.

    .venv/bin/python bench/flood.py                    # 50,000 + 20,000 requests, 2,000 idle
    .venv/bin/python bench/flood.py --requests 250000  # the issue's figure
    .venv/bin/python bench/flood.py --quick            # small counts; for CI
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "flood-bench-token"
HEADER_TIMEOUT = 15.0
"""The service's time-out for a connection without a complete request (service.web.limits)."""
STREAMS_PER_ADDRESS = 50
"""Live streams one address may hold (service.web.stream)."""


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def low_open_files() -> None:
    """In the service's process: start it under the usual default soft limit."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))


class Service:
    """The service in a subprocess, its URL and pid."""

    def __init__(self, tmp: str) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "service.cli",
                "-v",
                "run",
                "emulator",
                f"{tmp}/no-port",
                "--port",
                "0",
                "--db",
                f"{tmp}/flood.db",
                "--admin-token",
                TOKEN,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            preexec_fn=low_open_files,
        )
        assert self.proc.stdout is not None
        self.url = ""
        for line in self.proc.stdout:
            match = re.match(r"open (http://\S+/) ", line)
            if match:
                self.url = match.group(1)
                break
        self.port = int(self.url.rstrip("/").rsplit(":", 1)[1])

    def stop(self) -> str:
        self.proc.terminate()
        _, err = self.proc.communicate(timeout=30)
        return err


async def alive(session: aiohttp.ClientSession, url: str) -> bool:
    try:
        async with session.get(url + "api/tables", timeout=aiohttp.ClientTimeout(10)) as r:
            return r.status == 200
    except (aiohttp.ClientError, TimeoutError):
        return False


async def flood(url: str, method: str, path: str, count: int) -> dict[int, int]:
    """``count`` requests over 8 keep-alive connections; the statuses seen."""
    statuses: dict[int, int] = {}
    left = count
    connector = aiohttp.TCPConnector(limit=8)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                async with session.request(method, f"{url}{path}{left}") as response:
                    await response.read()
                    statuses[response.status] = statuses.get(response.status, 0) + 1

        await asyncio.gather(*(worker() for _ in range(8)))
    return statuses


async def memory_case(
    service: Service, method: str, path: str, count: int, expected: int
) -> tuple[str, str, str, bool]:
    warm = min(2000, count // 10)
    await flood(service.url, method, path, warm)
    before = rss_mb(service.proc.pid)
    started = time.monotonic()
    statuses = await flood(service.url, method, path, count)
    seconds = time.monotonic() - started
    await asyncio.sleep(1.5)  # a hall tick: a thaw that is due happens
    after = rss_mb(service.proc.pid)
    slope = (after - before) * 1024 * 1024 / count
    async with aiohttp.ClientSession() as session:
        up = await alive(session, service.url)
    answer = ",".join(f"{status}x{n}" for status, n in sorted(statuses.items()))
    message = (
        f"RSS {before:.0f} -> {after:.0f} MB over {count:,} requests in {seconds:.0f} s "
        f"({slope:+.0f} B/request)"
    )
    ok = up and set(statuses) == {expected} and after < 150
    return (f"{count:,} x {method} {path}N ({expected})", answer, message, ok)


async def idle_case(service: Service, idle: int, gets: int) -> tuple[str, str, str, bool]:
    writers = []
    opened = 0
    try:
        for _ in range(idle):
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", service.port)
            except OSError:
                break
            writers.append(writer)
            opened += 1
        await asyncio.sleep(0.5)
        times = []
        statuses: dict[int, int] = {}
        async with aiohttp.ClientSession() as session:
            for _ in range(gets):
                started = time.perf_counter()
                try:
                    async with session.get(service.url + "api/tables") as response:
                        await response.read()
                        statuses[response.status] = statuses.get(response.status, 0) + 1
                except aiohttp.ClientError:
                    statuses[0] = statuses.get(0, 0) + 1
                times.append((time.perf_counter() - started) * 1000)
            up = await alive(session, service.url)
    finally:
        for writer in writers:
            writer.close()
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    answer = ",".join(f"{status}x{n}" for status, n in sorted(statuses.items()))
    message = (
        f"{opened:,} idle connections open; GET p50 {statistics.median(times):.1f} ms "
        f"p99 {p99:.1f} ms"
    )
    ok = up and opened == idle and statuses == {200: gets} and p99 < 100
    return (f"{idle:,} idle connections + {gets} GETs", answer, message, ok)


async def slow_headers_case(service: Service, count: int) -> tuple[str, str, str, bool]:
    connections = []
    for _ in range(count):
        reader, writer = await asyncio.open_connection("127.0.0.1", service.port)
        writer.write(b"GET /api/tables HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        connections.append((reader, writer))
    started = time.monotonic()
    deadline = started + HEADER_TIMEOUT + 10
    still_open = count
    while time.monotonic() < deadline and still_open:
        await asyncio.sleep(1.0)
        still_open = 0
        for reader, writer in connections:
            if reader.at_eof() or writer.is_closing():
                continue
            with contextlib.suppress(OSError):
                writer.write(b"a")  # one header byte a second
            with contextlib.suppress(TimeoutError, OSError):
                await asyncio.wait_for(reader.read(100), 0.01)
            if not reader.at_eof():
                still_open += 1
    seconds = time.monotonic() - started
    for _, writer in connections:
        writer.close()
    async with aiohttp.ClientSession() as session:
        up = await alive(session, service.url)
    message = f"{count - still_open} of {count} closed by the service within {seconds:.0f} s"
    return (
        f"{count} slow header lines (1 byte/s)",
        f"{still_open} open",
        message,
        up and still_open == 0,
    )


async def streams_case(service: Service) -> tuple[str, str, str, bool]:
    many = STREAMS_PER_ADDRESS + 10
    statuses: dict[int, int] = {}
    connector = aiohttp.TCPConnector(limit=0)
    other_connector = aiohttp.TCPConnector(limit=0, local_addr=("127.0.0.2", 0))
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        aiohttp.ClientSession(connector=other_connector) as other,
    ):
        responses = []
        for _ in range(many):
            response = await session.get(service.url + "api/stream")
            statuses[response.status] = statuses.get(response.status, 0) + 1
            responses.append(response)
        headers = {"Host": "127.0.0.1"}
        async with other.get(service.url + "api/stream", headers=headers) as response:
            another = response.status
        for response in responses:
            response.close()
        up = await alive(session, service.url)
    answer = ",".join(f"{status}x{n}" for status, n in sorted(statuses.items()))
    ok = up and statuses == {200: STREAMS_PER_ADDRESS, 503: 10} and another == 200
    return (
        f"{many} live streams from one address",
        answer,
        f"another address still gets its stream: HTTP {another}",
        ok,
    )


def limit_case(err: str) -> tuple[str, str, str, bool]:
    match = re.search(r"open files: limit (\S+); web connections held at most: (\d+)", err)
    if match is None:
        return ("open-files limit 1,024 at start", "not logged", "", False)
    limit, cap = match.groups()
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    ok = limit == str(hard) or hard == resource.RLIM_INFINITY
    return ("open-files limit 1,024 at start", f"{limit}", f"raised; connections cap {cap}", ok)


async def run(args: argparse.Namespace) -> list[tuple[str, str, str, bool]]:
    rows: list[tuple[str, str, str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="dgt-flood-") as tmp:
        service = Service(tmp)
        err = ""
        try:
            rows.append(await memory_case(service, "GET", "no/such/", args.requests, 404))
            rows.append(await memory_case(service, "PUT", "api/tables?n=", args.wrong, 405))
            rows.append(await idle_case(service, args.idle, args.gets))
            rows.append(await slow_headers_case(service, args.slow))
            rows.append(await streams_case(service))
        finally:
            err = service.stop()
        rows.append(limit_case(err))
        if "Traceback" in err:
            rows.append(("service log", "traceback", err.strip().splitlines()[-1], False))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts (for CI)")
    parser.add_argument("--requests", type=int, default=50_000, help="404 flood size")
    parser.add_argument("--wrong", type=int, default=20_000, help="405 flood size")
    parser.add_argument("--idle", type=int, default=2_000, help="idle connections held")
    parser.add_argument("--gets", type=int, default=200, help="GETs timed meanwhile")
    parser.add_argument("--slow", type=int, default=200, help="slow header connections")
    args = parser.parse_args()
    if args.quick:
        args.requests, args.wrong, args.idle, args.gets, args.slow = 2_000, 1_000, 200, 50, 20
    for name in ("requests", "wrong", "idle", "gets", "slow"):
        setattr(args, name, max(1, min(getattr(args, name), 1_000_000)))
    args.idle = min(args.idle, 10_000)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:  # this client holds the idle ones
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    rows = asyncio.run(run(args))
    width = max(len(r[0]) for r in rows)
    for name, answer, message, ok in rows:
        print(f"{name:<{width}}  {answer:<16} {'ok ' if ok else 'BAD'}  {message}")
    bad = sum(1 for r in rows if not r[3])
    print(
        f"cases: {len(rows)}, service still up and within bounds: {len(rows) - bad}, failed: {bad}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
