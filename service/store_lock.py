"""``service.store_lock``: one service per database.

A service holds an exclusive ``flock`` on a lock file beside its database (``DB.lock``) for
as long as it runs.  The kernel releases the lock when the holder's process ends, however it
ends (kill -9 included), so nothing needs cleaning up: a lock file left behind is harmless
and the next service takes it over.  The holder writes its process id and host into the file
so that a refused second service can say who holds the database.

``flock`` locks are independent of the POSIX record locks SQLite takes on the database
itself, so the two never interfere.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import socket
import time
from pathlib import Path


class StoreLockError(Exception):
    """The database is held by another service, or its lock file cannot be made."""


def lock_path(db: Path) -> Path:
    """The lock file of the database ``db``."""
    return db.with_name(db.name + ".lock")


class StoreLock:
    """An exclusive hold on a database, for one service.  Use :meth:`acquire`; release with
    :meth:`release` (or leave it to the process's end)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, db: Path) -> StoreLock:
        """Hold ``db`` or raise :class:`StoreLockError` naming the process that holds it."""
        path = lock_path(db)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise StoreLockError(
                    f"{db}: the database cannot be written: {(exc.strerror or str(exc)).lower()} "
                    f"(its lock file {path} cannot be made)"
                ) from None
            raise StoreLockError(
                f"{db}: cannot create the lock file {path}: {exc.strerror}"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _read_holder(fd)
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise StoreLockError(
                    f"{db} is in use by another service ({holder or 'holder unknown'}); "
                    "stop it first, or give this one another --db"
                ) from None
            raise StoreLockError(f"{db}: cannot lock {path}: {exc.strerror}") from None
        holder = f"pid {os.getpid()} on {socket.gethostname()} since " + time.strftime(
            "%Y-%m-%d %H:%M:%S %Z"
        )
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, (holder + "\n").encode(), 0)
        except OSError as exc:
            os.close(fd)
            raise StoreLockError(
                f"{db}: cannot write the lock file {path}: {exc.strerror}"
            ) from None
        return cls(path, fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Give the database up (the file stays; its content is stale but harmless)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> StoreLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace")
    except OSError:
        return ""
    return text.strip().splitlines()[0] if text.strip() else ""
