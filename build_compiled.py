"""The optional compiled build: the pure, strictly typed core compiled with mypyc, in place.

    .venv/bin/python build_compiled.py            # compile (what `./setup.sh compiled` runs)
    .venv/bin/python build_compiled.py --refresh  # rebuild a compiled build whose sources changed
    .venv/bin/python build_compiled.py --clean    # back to plain Python
    .venv/bin/python build_compiled.py --status   # which build this checkout runs

Each compiled module is an extension (``recognizer.cpython-311-x86_64-linux-gnu.so``) next
to its ``.py`` (Python imports the extension first), all of them sharing one library
(``service/_compiled__mypyc...so``), with a record (:data:`STAMP`) of the modules and a hash
of each source.  Nothing else changes: the same sources, imported the same way; deleting the
artefacts (``--clean``) is the plain Python build again.  The default install never
compiles.  Without a C compiler, without mypyc (``pip install -e .[compiled]``) or when the
build fails, this says so in one line, leaves no artefact behind and exits 1: the plain
Python runs.  Run with the project's virtual environment, from anywhere.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent

MODULES = (
    "service/recognize",
    "service/pgn.py",
    "service/table",
    "service/arbiter",
    "service/variants",
    "service/time_control.py",
    "dgt/protocol/parser.py",
    "dgt/protocol/commands.py",
    "dgt/protocol/bus.py",
    "dgt/mirror.py",
    "dgt/clock.py",
)
"""What is compiled (files, or packages: every module in them but a package's ``__init__``
and those :data:`NOT_COMPILED` names), chosen by measurement (bench/README.md, "The
compiled build").  27 Nov 2026: the table, the arbiter and the variants compiled with the
recogniser (their calls to each other compiled-to-compiled) and the time control (the
clocks the table reads on every clock report): 13 % fewer instructions per input in the
replay of the 1,000-table log (callgrind, its first 20,000 inputs: 254 → 222 thousand; a
square change 247 → 200, a clock report 94 → 83), 7-23 % less CPU in its timed replay
(``differing 0``).  History: 26 Nov 2026, the recogniser and the PGN writer alone gave a
hall nothing (its frequent small calls from the plain table into the compiled recogniser
cost more than interpreted ones); the arbiter's rule sets, the table's helpers and the
JSON writer compiled as well paid nothing measurable.

28 Nov 2026, the rest of a live input's path, counted from the board's bytes (the host-side
replay: ``dgt.Board._on_data`` -> runner -> table -> hall -> store -> commit, the 1,000-table
log's first 200 tables, 9,055 inputs; callgrind, the inputs only, ``PYTHONHASHSEED=0``: a
random seed moves the count by up to 1 %, a clock report's by up to 7 %), in thousands of
instructions per input against ``MODULES`` (251.4; plain 275.7): the driver's pure parts
(``dgt/protocol/parser.py``, ``commands.py``, ``bus.py``, ``dgt/mirror.py``,
``dgt/clock.py``) 247.6 (-1.5 %), a clock report 4.2 % fewer; ``dgt/mirror.py`` alone
250.3; the store, ``json_text`` and the stream 249.8 (-0.6 %), a clock report 2.0 % fewer.
The driver's pure parts are compiled since the parser reads a bytearray as it reads bytes
(typed so, the compiled parser no longer refuses one; 28 Nov 2026, the same replay, the same
log written: ``MODULES`` before them 2,281.4 million instructions, with them 2,235.2, -2.0 %;
the compiled build's quick loop, ``bench/replay_cost.py`` ``differing 0``,
``bench/publish_cost.py``'s digest and ``bench/crash.py --quick`` unchanged).  The store and
the stream are not compiled: each changed behaviour compiled (see :data:`NOT_COMPILED`)."""

NOT_COMPILED = {
    "service/table/contract.py": "protocols only (nothing to run faster); @runtime_checkable "
    "refuses the class mypyc makes of a protocol",
    "service/table/settings.py": "its settings dataclasses are composed from several bases "
    "(TableSettings(_Details, _Options, _Game)): mypyc compiles no multiple inheritance",
    "service/table_runner.py": "the hall's runner (service.hall.HallTable) subclasses its "
    "TableRunner in plain Python: mypyc refuses interpreted subclasses of a compiled class "
    "unless the class is marked for them (mypy_extensions.mypyc_attr, not a dependency)",
    # Not in a compiled package: tried on 28 Nov 2026 (MODULES' docstring has the figures).
    "dgt/protocol/messages.py": "its message dataclasses keep their id as a ClassVar "
    "(BoardDump.ID, public): mypyc#1122 makes it a field with a default, and the module "
    "fails at import (a field without a default after it)",
    "dgt/protocol/clock_codec.py": "the same (ClockTimes.ID, ClockAck.ID)",
    "service/store.py": "0.6 % fewer instructions an input with json_text and the stream; "
    "a compiled clock_text converts what its annotations say (an int time written 300.0, "
    "where plain Python leaves the report to the general writer; a flag not a bool "
    "raises); tests patch a Store's methods on the instance and subclass Store in Python",
    "service/web/stream.py": "its frames change: bench/publish_cost.py and "
    "tests/test_web_stream_bytes.py give its module a fixed time, but compiled code reads "
    "the time module it imported (the digest changed from run to run: d8fa4cd32c8a4ac7, "
    "016a4bf1897eef22 for 6f1d752ca0121546); its CPU per update no lower (two pairs)",
    "service/json_text.py": "one call to orjson: nothing to run faster",
    "service/kept_json.py": "reads the kept pairings and broadcast files "
    "(service.pairings.kept_round, service.broadcast.kept_rounds): no board input goes "
    "through it",
}
"""What stays plain Python inside a compiled package (or next to one), and why, for the
next person to try.  What a compiled module must not do, found compiling the table, the
arbiter and the variants (27 Nov 2026; each fixed in the source, the plain Python the
same): rely on a ``__setattr__`` hook (compiled callers set the field past it: the record's
moves change their fields through methods); pickle a class whose ``__init__`` takes
arguments without saying them (``__getnewargs__``: a compiled class's ``__new__`` runs
``__init__``; a read replica pickles the tables); give a dataclass a ``ClassVar``
(mypyc#1122: a field; a property instead); keep a mappingproxy on an instance (it does
not pickle); trust mypy's narrowing of a field across a call that changes it (a method
asks again); read an ``int`` where a ``float`` is declared and expect an ``int`` back (the
compiled build makes a float of it: ``round_ms`` and the shown clocks keep an int one);
have its methods patched by tests (a test swaps the runner's table instead)."""

GROUP = "service._compiled"
"""The shared library of the compiled modules (``service/_compiled__mypyc...so``)."""

STAMP = "_compiled.json"
"""What was compiled, from which sources, in the shared library's package
(``service/_compiled.json``; git-ignored like every artefact)."""


def _stamp(root: Path, group: str) -> Path:
    return root.joinpath(*group.split(".")[:-1], STAMP)


LOG = "build/compiled.log"
"""The compiler's output of the last build (kept for a failed one)."""


def _sources(root: Path, paths: tuple[str, ...]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        full = root / path
        files.extend(sorted(full.rglob("*.py")) if full.is_dir() else [full])
    # A package's __init__ stays plain: mypyc gives a compiled package the __path__ of the
    # shared library's directory (service/service/table), where its plain modules are not.
    plain = {root / path for path in NOT_COMPILED}
    return [f for f in files if f.name != "__init__.py" and f not in plain]


def _digest(root: Path, paths: tuple[str, ...]) -> dict[str, str]:
    return {
        str(f.relative_to(root)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in _sources(root, paths)
    }


def _packages(root: Path, paths: tuple[str, ...], group: str) -> list[Path]:
    tops = {Path(p).parts[0] for p in paths} | {group.split(".")[0]}
    return [root / top for top in sorted(tops)]


def artefacts(root: Path, paths: tuple[str, ...] = MODULES, group: str = GROUP) -> list[Path]:
    """The compiled build's files in the tree (extensions, the stamp)."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    found = [so for top in _packages(root, paths, group) for so in top.rglob(f"*{suffix}")]
    found += [so for top in _packages(root, paths, group) for so in top.rglob("*.so")]
    stamp = _stamp(root, group)
    return sorted({*found, *([stamp] if stamp.exists() else [])})


def clean(root: Path, paths: tuple[str, ...] = MODULES, group: str = GROUP) -> int:
    removed = artefacts(root, paths, group)
    for path in removed:
        path.unlink()
    return len(removed)


def _compiler() -> str | None:
    """Why this machine cannot compile (None: it can)."""
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    if not cc or shutil.which(cc[0]) is None:
        return f"no C compiler ({cc[0] if cc else 'cc'} not found)"
    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").exists():
        return f"no Python headers ({include}/Python.h: install python3-dev)"
    if importlib.util.find_spec("mypyc") is None or importlib.util.find_spec("setuptools") is None:
        return "no mypyc (pip install -e '.[compiled]' brings it, with mypy and setuptools)"
    return None


def build(root: Path, paths: tuple[str, ...] = MODULES, group: str = GROUP) -> str | None:
    """Compile ``paths`` in place under ``root``; None when done, else why it was not (one
    line; every artefact removed, the plain Python left)."""
    clean(root, paths, group)
    why = _compiler()
    if why:
        return why
    log = root / LOG
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    command = [sys.executable, str(Path(__file__).resolve()), "--inner", "--group", group]
    command += [arg for path in paths for arg in ("--module", path)]
    with log.open("w") as out:  # the compiler's chatter, kept for a failed build
        done = subprocess.run(command, cwd=root, stdout=out, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        clean(root, paths, group)
        return f"the build failed (its output is in {log})"
    stamp = {
        "python": sys.version.split()[0],
        "group": group,
        "modules": list(paths),
        "seconds": round(time.monotonic() - started),
        "sources": _digest(root, paths),
    }
    _stamp(root, group).write_text(json.dumps(stamp, indent=1) + "\n")
    return None


def _mypyc(paths: tuple[str, ...], group: str) -> None:
    """The mypyc build proper, run from the root in a process of its own (``--inner``)."""
    from mypyc.build import mypycify
    from setuptools import Distribution  # type: ignore[import-untyped]

    files = [str(f.relative_to(Path.cwd())) for f in _sources(Path.cwd(), paths)]
    extensions = mypycify(files, group_name=group, target_dir="build/mypyc")
    dist = Distribution({"name": "dgt-service-compiled", "ext_modules": extensions})
    command = dist.get_command_obj("build_ext")
    command.inplace = True
    command.build_temp = "build/mypyc-temp"
    dist.run_command("build_ext")


def stale(root: Path, paths: tuple[str, ...] = MODULES, group: str = GROUP) -> bool | None:
    """Whether the compiled build no longer matches its sources (None: no compiled build)."""
    try:
        stamp = json.loads(_stamp(root, group).read_text())
    except (OSError, ValueError):
        return None if not artefacts(root, paths, group) else True
    return bool(
        stamp.get("sources") != _digest(root, tuple(stamp.get("modules", paths)))
        or stamp.get("modules") != list(paths)
        or stamp.get("python") != sys.version.split()[0]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--refresh", action="store_true", help="rebuild if the sources changed")
    action.add_argument("--clean", action="store_true", help="remove the compiled build")
    action.add_argument("--status", action="store_true", help="say which build runs")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    parser.add_argument("--module", action="append", help=argparse.SUPPRESS)
    parser.add_argument("--group", default=GROUP, help=argparse.SUPPRESS)
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    root: Path = args.root.resolve()
    paths = tuple(args.module) if args.module else MODULES
    if args.inner:
        _mypyc(paths, args.group)
        return 0
    me = "compiled build"
    if args.clean:
        n = clean(root, paths, args.group)
        print(f"{me}: {n} files removed: plain Python runs" if n else f"{me}: none (plain Python)")
        return 0
    state = stale(root, paths, args.group)
    if args.status:
        print(
            f"{me}: none (plain Python)"
            if state is None
            else f"{me}: out of date (sources changed since; plain Python is safer)"
            if state
            else f"{me}: up to date ({', '.join(paths)})"
        )
        return 0
    if args.refresh and not state:
        return 0  # none, or up to date: nothing to do
    why = _compiler()
    if not why:
        print(
            f"{me}: sources changed since it was compiled: compiling again"
            if args.refresh
            else f"{me}: compiling {', '.join(paths)} with mypyc (a few minutes)",
            flush=True,
        )
        why = build(root, paths, args.group)
    if why:
        clean(root, paths, args.group)
        print(f"{me}: {why}: plain Python runs")
        return 1
    print(f"{me}: done ({len(artefacts(root, paths, args.group)) - 1} extensions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
