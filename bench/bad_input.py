"""Bad input figure: each kind of bad input gets a clear one-line answer, and the service
keeps running.

Malformed configs go to ``dgt-service run --config`` (exit status 2 and one line on
stderr).  Then one service runs (``dgt-service run emulator /no/such/port``) and gets an
unknown port, requests without or with a wrong admin token, oversized and malformed bodies,
malformed HTTP, path traversal and hostile names, text no store can hold (a lone surrogate,
control characters), a token header that is not UTF-8, a foreign ``Host`` (DNS
rebinding) and a round name built to add a parameter to the PGN download's
``Content-Disposition``; after each, ``GET /api/tables`` must still answer 200.
(``bench/flood.py`` tries floods, idle connections and slow headers.)

    .venv/bin/python bench/bad_input.py          # every case
    .venv/bin/python bench/bad_input.py --quick  # the same (it is quick); for CI
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "bad-input-bench-token"
ROUND = '1"; filename="evil.html'
"""The round of every table: a name built to add a parameter to a download's header."""

CONFIGS = {
    "config: not TOML": "[[table]\nport = 'x'\n",
    "config: unknown rule set": "[[table]]\nport = 'emulator'\nrules = 'lightning'\n",
    "config: table without port": "[[table]]\nwhite = 'Ann'\n",
    "config: unknown key": "[[table]]\nport = 'emulator'\ncolour = 'red'\n",
    "config: duplicate table id": (
        "[[table]]\nid = 'a'\nport = 'x'\n[[table]]\nid = 'a'\nport = 'y'\n"
    ),
    "config: bad web port": "[service]\nport = 123456\n[[table]]\nport = 'emulator'\n",
}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "service.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def http(
    url: str, *, data: bytes | None = None, token: str | None = None, method: str | None = None
) -> tuple[int, str]:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")


def raw(host: str, port: int, data: bytes, *, body: bool = False) -> tuple[int, str]:
    """Send ``data`` as it is; the status and the reason (or the body's first line)."""
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(data)
        answer = sock.recv(4096).decode("latin-1")
    match = re.match(r"HTTP/1\.\d (\d+) ([^\r\n]*)", answer)
    if match is None:
        return (0, answer[:60])
    text = answer.split("\r\n\r\n", 1)[1] if body and "\r\n\r\n" in answer else ""
    return (int(match.group(1)), text or match.group(2))


def header(url: str, name: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.headers.get(name, ""))


def one_line(text: str) -> str:
    text = text.strip()
    with contextlib.suppress(ValueError, KeyError, TypeError):
        text = json.loads(text)["error"]
    return text.splitlines()[0][:110] if text else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="(every case is quick)")
    parser.parse_args()
    rows: list[tuple[str, str, str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="dgt-bad-") as tmp:
        for name, text in CONFIGS.items():
            path = Path(tmp) / "hall.toml"
            path.write_text(text)
            result = run_cli("run", "--config", str(path), "--db", f"{tmp}/c.db", "--port", "0")
            lines = result.stderr.strip().splitlines()
            clear = result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr
            rows.append((name, f"exit {result.returncode}", lines[0] if lines else "", clear))

        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "service.cli",
                "run",
                "emulator",
                f"{tmp}/no-such-port",
                "--port",
                "0",
                "--db",
                f"{tmp}/s.db",
                "--admin-token",
                TOKEN,
                "--round",
                ROUND,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert proc.stdout is not None
        url = ""
        for line in proc.stdout:
            match = re.match(r"open (http://\S+/) ", line)
            if match:
                url = match.group(1)
                break
        host, port = url.removeprefix("http://").rstrip("/").rsplit(":", 1)
        try:

            def alive() -> bool:
                return http(url + "api/tables")[0] == 200

            deadline = time.monotonic() + 15
            state: dict[str, object] = {}
            while time.monotonic() < deadline:
                state = json.loads(http(url + "api/tables/2")[1])["connection"]
                if state["state"] == "down":
                    break
                time.sleep(0.2)
            rows.append(
                (
                    "unknown port (table 2)",
                    f"link {state['state']}",
                    str(state.get("error")),
                    state["state"] == "down" and alive(),
                )
            )
            admin = url + "api/admin/tables/1/players"
            cases: list[tuple[str, tuple[int, str], int]] = [
                ("admin request without token", http(admin, data=b'{"white":"A"}'), 401),
                ("admin request, wrong token", http(admin, data=b"{}", token="x" * 20), 401),
                (
                    "oversized body (1 MB)",
                    http(admin, data=b"{" + b" " * 1_000_000 + b"}", token=TOKEN),
                    413,
                ),
                ("malformed JSON body", http(admin, data=b'{"white": ', token=TOKEN), 400),
                ("JSON body not an object", http(admin, data=b"[1,2]", token=TOKEN), 400),
                (
                    "name of 10,000 characters",
                    http(admin, data=json.dumps({"white": "x" * 10000}).encode(), token=TOKEN),
                    400,
                ),
                (
                    "unknown admin command",
                    http(url + "api/admin/tables/1/explode", data=b"{}", token=TOKEN),
                    404,
                ),
                ("unknown table", http(url + "api/tables/99"), 404),
                ("path traversal", http(url + "static/..%2f..%2fstore.py"), 404),
                ("path traversal (dot segments)", http(url + "static/%2e%2e/app.py"), 404),
                ("GET on the admin API", http(admin), 405),
                (
                    "malformed request line",
                    raw(host, int(port), b"\x16\x03\x01 hello\r\n\r\n"),
                    400,
                ),
                (
                    "header of 100 kB",
                    raw(host, int(port), b"GET / HTTP/1.1\r\nX-A: " + b"a" * 100_000 + b"\r\n\r\n"),
                    400,
                ),
                (
                    "bad Content-Length",
                    raw(
                        host, int(port), b"POST /api/tables HTTP/1.1\r\nContent-Length: -5\r\n\r\n"
                    ),
                    400,
                ),
            ]
            bearer = b"Authorization: Bearer \xff\xfe\x80 not utf-8\r\n"
            cases += [
                (
                    "lone surrogate in a player name",
                    http(admin, data=b'{"white": "Ann\\ud800"}', token=TOKEN),
                    400,
                ),
                (
                    "control character in a name",
                    http(admin, data=b'{"white": "Ann\\u0000"}', token=TOKEN),
                    400,
                ),
                (
                    "number with 400 digits",
                    http(admin, data=b'{"ply": 1' + b"0" * 400 + b"}", token=TOKEN),
                    400,
                ),
                (
                    "token header not UTF-8",
                    raw(
                        host,
                        int(port),
                        b"POST /api/admin/tables/1/players HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        + bearer
                        + b"Content-Length: 2\r\n\r\n{}",
                        body=True,
                    ),
                    401,
                ),
                (
                    "foreign Host (DNS rebinding)",
                    raw(
                        host,
                        int(port),
                        b"GET /api/tables HTTP/1.1\r\nHost: rebind.example:"
                        + port.encode()
                        + b"\r\n\r\n",
                        body=True,
                    ),
                    421,
                ),
            ]
            for name, (status, body), expected in cases:
                ok = status == expected and alive()
                rows.append((name, f"HTTP {status}", one_line(body), ok))
            status, body = http(
                admin, data=json.dumps({"white": "<script>x</script>"}).encode(), token=TOKEN
            )
            disposition = header(
                url + "rounds/" + urllib.parse.quote(ROUND, safe="") + ".pgn",
                "Content-Disposition",
            )
            rows.append(
                (
                    "round name adding filename=",
                    "one filename" if disposition.count("filename=") == 1 else "two",
                    disposition[:110],
                    disposition.count("filename=") == 1 and alive(),
                )
            )
            page = http(url + "tables/1")[1]
            rows.append(
                (
                    "HTML in a player name",
                    f"HTTP {status}",
                    "kept as data; pages set it as text",
                    status == 200 and "<script>x" not in page and alive(),
                )
            )
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=20)
        if "Traceback" in err:
            rows.append(("service log", "traceback", err.strip().splitlines()[-1], False))
    width = max(len(r[0]) for r in rows)
    for name, answer, message, ok in rows:
        print(f"{name:<{width}}  {answer:<10} {'ok ' if ok else 'BAD'}  {message}")
    bad = sum(1 for r in rows if not r[3])
    print(
        f"cases: {len(rows)}, clear answer and service still running: {len(rows) - bad}, "
        f"failed: {bad}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
