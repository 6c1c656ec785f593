"""Snapshots of a read replica: a web process comes up from the last one and the rows after
it, instead of replaying every edge's whole log (about 60,000 inputs a second: minutes for a
round of 1,000 boards).

A snapshot is the replica's :class:`~service.scaleout.replica.ReplicaState` (its tables as
the table code left them, their games, each edge's last row taken) pickled, with the
snapshot format and a fingerprint of the code (every ``.py`` file of ``dgt`` and
``service``): a snapshot written by other code is not used (the tables are rebuilt from the
whole log, and the next snapshot replaces it).  It is written whole or not at all
(:func:`service.atomic_file.write_atomically`) beside the centre's database, by the web
processes that follow it; pickle runs code of the file it reads, so the snapshot is trusted
exactly as the centre's database is: keep both where only the service writes.

Each table is kept as a :class:`~service.scaleout.replica.FrozenTable`: the table pickled
on its own, as bytes, and what the pages read of it beside.  Reading a snapshot unpickles
no table: each is unpickled when it is needed whole (its next input, a read its view does
not hold), and one still frozen is written into the next snapshot as the same bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import hashlib
import logging
import os
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dgt
import service
from service.atomic_file import write_atomically
from service.scaleout.replica import ReplicaHall, ReplicaState

logger = logging.getLogger(__name__)

FORMAT = 2
"""The snapshot's layout (a dict of format, code and state)."""


@functools.cache
def code_version() -> str:
    """A fingerprint of the code that makes and replays the tables."""
    digest = hashlib.sha256()
    for package in (dgt, service):
        root = Path(str(package.__file__)).parent
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root.parent)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:32]


def snapshot_bytes(replica: ReplicaHall) -> bytes:
    """The replica as it stands, pickled (on the replica's own thread: it must not change
    meanwhile)."""
    blob = {"format": FORMAT, "code": code_version(), "state": replica.taken()}
    return pickle.dumps(blob, protocol=pickle.HIGHEST_PROTOCOL)


def write_snapshot(path: Path, data: bytes) -> None:
    """Write a snapshot made by :func:`snapshot_bytes` (any thread).  Raises OSError."""
    write_atomically(path, data)


def read_snapshot(path: Path) -> ReplicaState | None:
    """The replica state in ``path``; None (logged, with why) when there is none, or it
    was written by other code or cannot be read."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        logger.warning("%s: cannot read the snapshot (%s): replaying the whole log", path, exc)
        return None
    try:
        blob: Any = pickle.loads(data)  # our own file, trusted as the database is
    except Exception as exc:  # noqa: BLE001 - a damaged or foreign file: replay instead
        logger.warning("%s: not a snapshot (%s): replaying the whole log", path, exc)
        return None
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        logger.warning("%s: a snapshot of another format: replaying the whole log", path)
        return None
    if blob.get("code") != code_version():
        logger.info("%s: a snapshot of other code: replaying the whole log", path)
        return None
    state = blob.get("state")
    if not isinstance(state, ReplicaState):
        logger.warning("%s: a snapshot without a replica: replaying the whole log", path)
        return None
    return state


@contextlib.contextmanager
def coming_up() -> Iterator[None]:
    """Around a replica's come-up (the snapshot restored, the rows after it replayed): the
    garbage collector paused, then everything made so far moved out of its walks
    (:func:`gc.freeze`: the tables live as long as the process).  The tables unpickled at
    their first row would else have it walk the growing replica again and again (about a
    third of the come-up's time at 1,000 tables)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if paused:
            gc.enable()


def write_forked(replica: ReplicaHall, path: Path) -> int | None:
    """Pickle and write ``replica`` in a child process (a copy of this one as it stands
    now, made by ``fork``), so that a big replica does not hold this process's event loop
    (1,000 tables of 80 moves pickle in seconds); returns the child's pid to wait for, or
    None where there is no ``fork`` (then it is written here)."""
    if not hasattr(os, "fork"):
        write_snapshot(path, snapshot_bytes(replica))
        return None
    pid = os.fork()
    if pid == 0:  # the child: pickle, write, leave at once (no logging, no clean-up)
        code = 1
        try:
            write_snapshot(path, snapshot_bytes(replica))
            code = 0
        finally:
            os._exit(code)
    return pid


async def keep_snapshots(replica: ReplicaHall, path: Path, every: float) -> None:
    """Write a snapshot of ``replica`` every ``every`` seconds while it took new rows, until
    cancelled (:func:`write_forked`); a failed write is logged once until one succeeds."""
    taken = sum(replica.rows.values())
    failing = False
    while True:
        await asyncio.sleep(every)
        rows = sum(replica.rows.values())
        if rows == taken:
            continue
        taken = rows
        try:
            pid = write_forked(replica, path)
            ok = pid is None or await asyncio.to_thread(_exited_well, pid)
        except OSError as exc:
            logger.debug("snapshot: %s", exc)
            ok = False
        if not ok and not failing:
            logger.warning("%s: cannot write the snapshot (see the permissions, the disk)", path)
        elif ok and failing:
            logger.warning("%s: the snapshot is written again", path)
        failing = not ok


def _exited_well(pid: int) -> bool:
    _pid, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0
