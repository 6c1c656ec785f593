"""Bad configs figure: each malformed hall config gets a one-line answer naming the file,
the line and the key, and none gives a traceback.

Every case is a config (and, for some, the files it names) given to ``dgt-service run
--config FILE``: one row per case with its name, the first line of the answer and whether a
traceback came out; then the counts (goal: 0 tracebacks, 0 hung, every answer one line
naming ``FILE:LINE:``).  Each case runs in a directory of its own (the database the service would
open is ``dgt-service.db`` there; the admin token comes from ``$DGT_ADMIN_TOKEN`` unless the
config names a token file).  Bounded: a fixed list of cases, each process killed after 60 s,
all in a temporary directory; no network (a config the checks let through would start the
service on port 0 of 127.0.0.1 for half a second, and is counted as accepted).

    .venv/bin/python bench/bad_configs.py          # each case in its own dgt-service process
    .venv/bin/python bench/bad_configs.py --quick  # the same cases in this process; for CI
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "bad-configs-bench-token"
OPTIONS = ("--port", "0", "--seconds", "0.5")
HUNG = "(no answer: killed after 60 s)"
TOKEN_ENV = "DGT_ADMIN_TOKEN"  # the token when the config names no token file
T = "[[table]]\nport = 'emulator'\n"
DEEP = "[" * 100 + "1" + "]" * 100


def _files(tmp: Path) -> None:
    """The files some cases name, made before every case."""
    (tmp / "a-directory").mkdir()
    (tmp / "short-token.txt").write_text("abc\n")
    (tmp / "latin1-token.txt").write_bytes(b"caf\xe9-token-0123\n")
    os.mkfifo(tmp / "fifo")


CASES: dict[str, str | bytes] = {
    # the shape of the file
    "not TOML": "[[table]\nport = 'x'\n",
    "not TOML, a string left open": f"{T}white = 'Ann\n",
    "a key written twice": f"{T}white = 'A'\nwhite = 'B'\n",
    "not UTF-8": b"[[table]]\nport = 'emulator'\nwhite = 'Jos\xe9'\n",
    "an empty file": "",
    "only a comment": "# tables to come\n",
    "unknown top-level key": "tables = 3\n",
    "a 100-deep value at the top": f"deep = {DEEP}\n",
    "an integer of 5000 digits": f"{T}bus = {'1' * 5000}\n",
    "a 2000-deep value": f"{T}white = {'[' * 2000}{']' * 2000}\n",
    # arrays where tables belong, tables where arrays belong
    "table = [1, 2]": "table = [1, 2]\n",
    "table = [{port}, 3]": "table = [{ port = 'emulator' }, 3]\n",
    "table = 'x'": "table = 'x'\n",
    "[table] instead of [[table]]": "[table]\nport = 'emulator'\n",
    "service = [1]": "service = [1]\n",
    "[[service]]": "[[service]]\nport = 8080\n",
    "[[defaults]]": "[[defaults]]\nround = '1'\n",
    "defaults = 3": "defaults = 3\n",
    # tables where values belong
    "[table.white] as a table": f"{T}[table.white]\nname = 'Ann'\n",
    "[service.bind] as a table": f"[service.bind]\nhost = 'x'\n{T}",
    "bus as a dotted key": f"{T}bus.address = 3\n",
    "bus = {a = 1}": f"{T}bus = {{ a = 1 }}\n",
    # wrong types and values at each key
    "[service] port = '8080'": f"[service]\nport = '8080'\n{T}",
    "[service] port = 70000": f"[service]\nport = 70000\n{T}",
    "[service] port = true": f"[service]\nport = true\n{T}",
    "[service] bind = 'everywhere'": f"[service]\nbind = 'everywhere'\n{T}",
    "[service] bind = [1]": f"[service]\nbind = [1]\n{T}",
    "[service] unknown key": f"[service]\nhost = 'x'\n{T}",
    "[defaults] unknown key": f"[defaults]\nplayers = 2\n{T}",
    "[defaults] rules = 3": f"[defaults]\nrules = 3\n{T}",
    "[defaults] event = date": f"[defaults]\nevent = 1979-05-27\n{T}",
    "table without port": "[[table]]\nwhite = 'Ann'\n",
    "port = 5": "[[table]]\nport = 5\n",
    "port empty": "[[table]]\nport = ' '\n",
    "port = [..100 deep..]": f"[[table]]\nport = {DEEP}\n",
    "unknown table key": f"{T}colour = 'red'\n",
    "id = true": f"{T}id = true\n",
    "id = 1.5": f"{T}id = 1.5\n",
    "id = '../etc'": f"{T}id = '../etc'\n",
    "duplicate table id": f"{T}id = 'a'\n[[table]]\nport = 'x'\nid = 'a'\n",
    "white = 100-deep": f"{T}white = {DEEP}\n",
    "white with a bell": f'{T}white = "A\\u0007"\n',
    "white too long": f"{T}white = '{'A' * 101}'\n",
    "black = {x = 1}": f"{T}black = {{ x = 1 }}\n",
    "rules unknown": f"{T}rules = 'lightning'\n",
    "variant unknown": f"{T}variant = 'crazyhouse'\n",
    "tick = 0.01": f"{T}variant = 'realtime'\ntick = 0.01\n",
    "tick = nan": f"{T}variant = 'realtime'\ntick = nan\n",
    "bus = 0": f"{T}bus = 0\n",
    "bus = 99999999999999999999": f"{T}bus = 99999999999999999999\n",
    "bus = '3'": f"{T}bus = '3'\n",
    "a bus address used twice": f"{T}bus = 3\n{T}bus = 3\n",
    "a bus line and a single board on one port": f"{T}bus = 3\n{T}",
    "options for a standard table": f"{T}options = 'cast'\n",
    "unknown 20-chess option": f"{T}variant = 'twenty-chess'\noptions = 'foo'\n",
    "20-chess rule 99": f"{T}variant = 'twenty-chess'\noptions = 'schedule=99'\n",
    # time controls that cannot be played
    "time_control = '0+0'": f"{T}time_control = '0+0'\n",
    "time_control = '40/0'": f"{T}time_control = '40/0'\n",
    "time_control = '0+5'": f"{T}time_control = '0+5'\n",
    "time_control = '00.0+00'": f"[defaults]\ntime_control = '00.0+00'\n{T}",
    "time_control = '40/5400+30:0'": f"{T}time_control = '40/5400+30:0'\n",
    "time_control = '-300+0'": f"{T}time_control = '-300+0'\n",
    "time_control = '99999999+0'": f"{T}time_control = '99999999+0'\n",
    "time_control = 'five minutes'": f"{T}time_control = 'five minutes'\n",
    # the files a config names
    "database in a missing directory": f"[service]\ndatabase = 'no/such/dir/h.db'\n{T}",
    "database is a directory": f"[service]\ndatabase = 'a-directory'\n{T}",
    "database is a fifo": f"[service]\ndatabase = 'fifo'\n{T}",
    "database = ''": f"[service]\ndatabase = ''\n{T}",
    "database with a NUL": f'[service]\ndatabase = "a\\u0000b"\n{T}',
    "token file is a directory": f"[service]\nadmin_token_file = 'a-directory'\n{T}",
    "token file in a missing directory": f"[service]\nadmin_token_file = 'no/dir/t'\n{T}",
    "token file too short": f"[service]\nadmin_token_file = 'short-token.txt'\n{T}",
    "token file not UTF-8": f"[service]\nadmin_token_file = 'latin1-token.txt'\n{T}",
    "token file is a fifo": f"[service]\nadmin_token_file = 'fifo'\n{T}",
    "too many tables": "table = [" + "{port='emulator'}," * 5001 + "]\n",
}
"""Each malformed config: a name and its text (bytes where it is not UTF-8)."""

Runner = Callable[[Path, Path], tuple[int | None, str]]
"""Runs ``dgt-service run --config PATH`` in a directory: (exit status, what it printed
on stderr)."""


def run_process(path: Path, tmp: Path) -> tuple[int | None, str]:
    try:
        done = subprocess.run(
            [sys.executable, "-m", "service.cli", "run", "--config", str(path), *OPTIONS],
            capture_output=True,
            text=True,
            cwd=tmp,
            env={**os.environ, "PYTHONPATH": str(ROOT), TOKEN_ENV: TOKEN},
            timeout=60,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, HUNG
    return done.returncode, done.stderr


def run_here(path: Path, tmp: Path) -> tuple[int | None, str]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # this checkout's service, as the process run has
    from service.cli import main

    err = io.StringIO()
    here = Path.cwd()
    os.chdir(tmp)
    token = os.environ.get(TOKEN_ENV)
    os.environ[TOKEN_ENV] = TOKEN
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status: int | None = main(["run", "--config", str(path), *OPTIONS])
    except BaseException:  # noqa: BLE001 - what escapes is exactly what is counted
        err.write(traceback.format_exc())
        status = None
    finally:
        os.chdir(here)
        if token is None:
            del os.environ[TOKEN_ENV]
        else:
            os.environ[TOKEN_ENV] = token
    return status, err.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="run the cases in this process (for CI)"
    )
    args = parser.parse_args()
    runner: Runner = run_here if args.quick else run_process
    tracebacks = unclear = accepted = hung = 0
    width = max(len(name) for name in CASES)
    with tempfile.TemporaryDirectory(prefix="dgt-bad-configs-") as name:
        for number, (case, text) in enumerate(CASES.items(), 1):
            tmp = Path(name) / f"case-{number}"  # its own directory: its own database
            tmp.mkdir()
            _files(tmp)
            path = tmp / "hall.toml"
            if isinstance(text, bytes):
                path.write_bytes(text)
            else:
                path.write_text(text, encoding="utf-8")
            status, err = runner(path, tmp)
            lines = err.strip().splitlines()
            answer = lines[0] if lines else "(nothing)"
            answer = answer.replace(str(tmp) + os.sep, "")
            traced = "Traceback" in err or (status is None and err != HUNG)
            tracebacks += traced
            hung += err == HUNG
            if status == 0:
                accepted += 1
            elif traced or len(lines) != 1 or not re.search(r"hall\.toml:\d+: ", answer):
                unclear += 1
            print(
                f"{case:<{width}} | {answer[:150]} | traceback: {'yes' if traced else 'no'}",
                flush=True,
            )
    print(f"malformed configs: {len(CASES)}")
    print(f"accepted: {accepted}")
    print(f"answers not one line naming FILE:LINE: {unclear}")
    print(f"hung: {hung} (goal 0)")
    print(f"tracebacks: {tracebacks} (goal 0)")
    return 1 if tracebacks or hung else 0


if __name__ == "__main__":
    sys.exit(main())
