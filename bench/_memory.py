"""Where a hall's memory goes (a helper of ``bench/hall.py --memory``, not a script).

Three views, each per table:

* :func:`table_breakdown`: the objects a table owns, walked from its runner
  (``gc.get_referents``, ``sys.getsizeof`` of each object once), by attribute down to a few
  levels and by type.  Several tables are walked in turn with one set of objects already
  seen, and the figure is their mean after the first: what tables share (module constants,
  interned strings, the hall) is counted once, in the first.  The hall, the store, the web
  server, the event loop and every other table are not walked into.
* :class:`Traced`: ``tracemalloc`` snapshots (from before the tables are built), the growth
  by file and line divided by N.
* :func:`garbage_held`: the garbage cycles the collector pacer keeps frozen until its next
  thaw (``service.collector_pacer``), found by one full collection after unfreezing.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
import types
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = str(Path(__file__).resolve().parent.parent) + "/"

__all__ = ["Traced", "garbage_held", "shared_per_table", "table_breakdown"]

_NOT_OWNED = (
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.CodeType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
)


class _Walk:
    """Sizes of objects reachable from a root, each object counted once over all walks."""

    def __init__(self, stop: Iterable[object]) -> None:
        self.seen: set[int] = {id(o) for o in stop}
        self.types: Counter[str] = Counter()

    def size(self, root: object) -> int:
        total = 0
        todo = [root]
        while todo:
            obj = todo.pop()
            if id(obj) in self.seen or isinstance(obj, _NOT_OWNED):
                continue
            self.seen.add(id(obj))
            size = sys.getsizeof(obj)
            total += size
            self.types[type(obj).__qualname__] += size
            todo.extend(gc.get_referents(obj))
        return total


def _attributes(obj: object) -> list[tuple[str, Any]]:
    if isinstance(obj, _NOT_OWNED):
        return []
    found: list[tuple[str, Any]] = []
    for cls in type(obj).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                found.append((name, getattr(obj, name)))
    found += list(getattr(obj, "__dict__", {}).items())
    return found


def _tree(walk: _Walk, obj: object, path: str, depth: int, out: Counter[str]) -> int:
    """Size owned by ``obj``, its attributes first (down to ``depth``), recorded in
    ``out`` by attribute path."""
    if id(obj) in walk.seen or isinstance(obj, _NOT_OWNED):
        return 0
    total = 0
    if depth > 0:
        attributes = _attributes(obj)
        if attributes:
            walk.seen.add(id(obj))
            own = sys.getsizeof(obj)
            walk.types[type(obj).__qualname__] += own
            total += own
            holder = getattr(obj, "__dict__", None)
            if holder is not None and id(holder) not in walk.seen:
                walk.seen.add(id(holder))
                total += sys.getsizeof(holder)
            for name, value in attributes:
                total += _tree(walk, value, f"{path}.{name}", depth - 1, out)
            total += sum(walk.size(r) for r in gc.get_referents(obj))  # anything else
            out[path] += total
            return total
    total = walk.size(obj)
    out[path] += total
    return total


def table_breakdown(
    runners: list[Any], stop: Iterable[object], depth: int = 3, top: int = 25
) -> list[str]:
    """Lines: bytes per table owned by each attribute path (mean over ``runners[1:]``),
    then by type."""
    walk = _Walk(stop)
    first = Counter[str]()
    _tree(walk, runners[0], "table", depth, first)
    walk.types.clear()
    paths = Counter[str]()
    for runner in runners[1:]:
        _tree(walk, runner, "table", depth, paths)
    k = max(1, len(runners) - 1)
    plies = sum(len(runner.table.moves()) for runner in runners[1:]) / k
    lines = [
        f"  owned by one table (sys.getsizeof over its object graph, mean of {k}): "
        f"{paths['table'] / k / 1e3:.1f} kB, {plies:.0f} plies into their games; first "
        f"table walked (with what tables share) {first['table'] / 1e3:.1f} kB"
    ]
    lines += [
        f"    {path:<58} {size / k / 1e3:8.1f} kB"
        for path, size in sorted(paths.items(), key=lambda kv: -kv[1])[1 : top + 1]
        if size / k >= 500
    ]
    lines.append("  by type (kB per table): " + ", ".join(
        f"{name} {size / k / 1e3:.1f}" for name, size in walk.types.most_common(12)
    ))  # fmt: skip
    return lines


def shared_per_table(owners: dict[str, object], stop: Iterable[object], n: int) -> list[str]:
    """Lines: what the hall-wide objects (``owners``, e.g. the hall and the web server) hold
    beyond the tables' own objects (in ``stop``), per table."""
    walk = _Walk(stop)
    sizes = {name: walk.size(owner) for name, owner in owners.items()}
    return [
        "  held by "
        + ", ".join(f"the {name} {size / n / 1e3:.1f} kB" for name, size in sizes.items())
        + " per table (beyond the tables' own objects); by type: " + ", ".join(
            f"{name} {size / n / 1e3:.1f}" for name, size in walk.types.most_common(8)
        )
    ]  # fmt: skip


class Traced:
    """tracemalloc from :meth:`start` (before the tables are built) to :meth:`lines`."""

    def __init__(self) -> None:
        self.base: tracemalloc.Snapshot | None = None

    def start(self) -> None:
        tracemalloc.start(1)
        self.base = tracemalloc.take_snapshot()

    def lines(self, n: int, top: int = 20) -> list[str]:
        assert self.base is not None
        now = tracemalloc.take_snapshot()
        filters = [tracemalloc.Filter(False, tracemalloc.__file__)]
        base, now = self.base.filter_traces(filters), now.filter_traces(filters)
        grown = sum(s.size_diff for s in now.compare_to(base, "filename"))
        out = [f"  traced growth (tracemalloc): {grown / n / 1e3:.1f} kB per table; by file:"]
        for stat in now.compare_to(base, "filename")[:12]:
            out.append(f"    {_short(stat.traceback[0].filename):<58} {_per(stat, n)}")
        out.append("  by line:")
        for stat in now.compare_to(base, "lineno")[:top]:
            frame = stat.traceback[0]
            out.append(f"    {_short(frame.filename)}:{frame.lineno:<6} {_per(stat, n)}")
        return out

    def stop(self) -> None:
        tracemalloc.stop()


def _per(stat: tracemalloc.StatisticDiff, n: int) -> str:
    return f"{stat.size_diff / n / 1e3:8.2f} kB {stat.count_diff / n:8.1f} blocks per table"


def _short(filename: str) -> str:
    """A file's name relative to the repository, or from ``site-packages`` / the library."""
    if filename.startswith(ROOT):
        return filename[len(ROOT) :]
    for marker in ("/site-packages/", "/lib/python3"):
        if marker in filename:
            return marker.strip("/") + "/" + filename.split(marker, 1)[1]
    return filename


def garbage_held() -> tuple[int, int]:
    """Unfreeze and collect everything once: (unreachable objects found, bytes tracemalloc
    saw freed, 0 when not tracing).  Everything is frozen again after."""
    before = tracemalloc.get_traced_memory()[0] if tracemalloc.is_tracing() else 0
    gc.unfreeze()
    found = gc.collect()
    after = tracemalloc.get_traced_memory()[0] if tracemalloc.is_tracing() else 0
    gc.freeze()
    return found, before - after
