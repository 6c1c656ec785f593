"""Which build of the service runs: plain Python, or the optional compiled build (mypyc
extensions next to the sources, made by ``build_compiled.py`` / ``./setup.sh compiled``).
``dgt-service --version`` prints :func:`describe`."""

from __future__ import annotations

import copyreg
import dataclasses
import hashlib
import importlib
import json
import sysconfig
from importlib import metadata
from pathlib import Path
from typing import Any

_PACKAGES = ("dgt", "service")
_STAMP = "service/_compiled.json"
"""Written by ``build_compiled.py``: the modules compiled and a hash of each source."""


def _root() -> Path:
    return Path(__file__).resolve().parent.parent


def compiled_modules() -> list[str]:
    """The modules of the project that import from a compiled extension (an extension
    next to a module's source is what Python imports)."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    root = _root()
    found: list[str] = []
    for package in _PACKAGES:
        for source in sorted((root / package).rglob("*.py")):
            if source.with_name(source.stem + suffix).exists():
                parts = source.relative_to(root).with_suffix("").parts
                found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def _rebuilt(cls: Any, state: dict[str, Any]) -> Any:
    """A frozen dataclass of the compiled build, unpickled (see :func:`picklable_dataclasses`)."""
    obj = cls.__new__(cls)
    for name, value in state.items():
        object.__setattr__(obj, name, value)
    return obj


def _reduced(obj: Any) -> tuple[Any, tuple[type[Any], dict[str, Any]]]:
    fields = dataclasses.fields(obj)
    return _rebuilt, (type(obj), {f.name: getattr(obj, f.name) for f in fields})


def picklable_dataclasses() -> None:
    """Let pickle (a read replica's snapshot) rebuild the frozen dataclasses of the compiled
    build: mypyc leaves out the ``__setstate__`` that dataclasses writes for a frozen class
    with slots, and unpickling would assign to a frozen field.  Nothing to do in plain
    Python."""
    for name in compiled_modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and value.__module__ == name
                and dataclasses.is_dataclass(value)
                and value.__dataclass_params__.frozen  # type: ignore[attr-defined]
            ):
                copyreg.pickle(value, _reduced)


def out_of_date() -> list[str]:
    """Sources of compiled modules changed since they were compiled (their extension runs
    the old code until the build is made again)."""
    root = _root()
    try:
        sources: dict[str, str] = json.loads((root / _STAMP).read_text())["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        return ["(no record of the build)"] if compiled_modules() else []
    changed = []
    for name, digest in sources.items():
        path = root / name
        if not path.exists() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            changed.append(name)
    return changed


def version() -> str:
    try:
        return metadata.version("dgt-service")
    except metadata.PackageNotFoundError:
        return "(not installed)"


def describe() -> str:
    """One line: the version and the build (``compiled with mypyc: 58 modules`` or ``plain
    Python``), with a warning when the compiled build is older than its sources."""
    modules = compiled_modules()
    if not modules:
        return f"dgt-service {version()} (plain Python)"
    packages = sorted({".".join(name.split(".")[:2]) for name in modules})
    line = f"dgt-service {version()} (compiled with mypyc: {len(modules)} modules of "
    line += f"{', '.join(packages)})"
    changed = out_of_date()
    if changed:
        line += (
            f"; OUT OF DATE: {len(changed)} sources changed since it was compiled "
            "(./setup.sh compiled builds it again, ./setup.sh plain removes it)"
        )
    return line
