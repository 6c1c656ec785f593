"""Files written whole or not at all: :func:`write_atomically` (the store's recovery file,
the LiveChess folder of PGN files)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["sync_directory", "write_atomically"]


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so a reader sees the old file or the new one, never a
    part: a temporary file beside it (mode 0600), flushed to disk, renamed over it, and the
    directory synced so the rename survives a power cut."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    sync_directory(path.parent)


def sync_directory(directory: Path) -> None:
    """Flush a directory's entries (a file made, renamed or removed in it) to disk, where
    the system allows it."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
