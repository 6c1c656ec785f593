"""``mypyc_attr`` for the optional compiled build (``build_compiled.py``): mypy_extensions'
own where it is installed (it comes with mypy, which makes that build), else a decorator
that does nothing (plain Python: nothing to tell a compiler)."""

from __future__ import annotations

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # no mypy here: no compiled build either

    def mypyc_attr(*attrs: str, **kwattrs: object) -> object:  # type: ignore[misc]
        return lambda cls: cls


__all__ = ["mypyc_attr"]
