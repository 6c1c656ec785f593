"""The optional compiled build (``build_compiled.py``, ``./setup.sh compiled``): it falls back
to plain Python in one line when it cannot compile, a compiled module is what imports, and
``dgt-service --version`` says which build runs."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from service.build_info import compiled_modules, describe
from service.cli import main

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "build_compiled.py"
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"

TWICE = """
def twice(n: int) -> int:
    return 2 * n
"""


def _package(root: Path) -> Path:
    """A small typed package to compile (the project's own build takes minutes)."""
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    source = root / "pkg" / "twice.py"
    source.write_text(TWICE)
    return source


def _build(root: Path, *args: str, cc: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root)}
    if cc is not None:
        env["CC"] = cc
    command = [sys.executable, str(SCRIPT), "--root", str(root), "--module", "pkg/twice.py"]
    return subprocess.run(
        [*command, "--group", "pkg._compiled", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _imported_from(root: Path) -> str:
    out = subprocess.run(
        [sys.executable, "-c", "import pkg.twice as m; print(m.__file__, m.twice(21))"],
        cwd=root,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def test_without_a_c_compiler_the_build_says_so_in_one_line_and_plain_python_runs(
    tmp_path: Path,
) -> None:
    _package(tmp_path)
    leftover = tmp_path / "pkg" / f"twice{SUFFIX}"
    leftover.write_bytes(b"not an extension")  # an old build's: must not be what imports
    done = _build(tmp_path, cc="/nonexistent/cc")
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "compiled build: no C compiler (/nonexistent/cc not found): plain Python runs"
    ]
    assert not list(tmp_path.rglob(f"*{SUFFIX}"))
    assert _imported_from(tmp_path) == f"{tmp_path / 'pkg' / 'twice.py'} 42"


@pytest.mark.slow
def test_a_compiled_module_is_what_imports_until_the_build_is_removed(tmp_path: Path) -> None:
    source = _package(tmp_path)
    done = _build(tmp_path)
    assert done.returncode == 0, done.stdout + (tmp_path / "build" / "compiled.log").read_text()
    assert done.stdout.splitlines()[-1] == "compiled build: done (2 extensions)"
    assert _imported_from(tmp_path) == f"{tmp_path / 'pkg' / f'twice{SUFFIX}'} 42"
    assert "up to date" in _build(tmp_path, "--status").stdout
    source.write_text(TWICE + "\n# changed\n")
    assert "out of date" in _build(tmp_path, "--status").stdout
    assert _build(tmp_path, "--clean").returncode == 0
    assert not list((tmp_path / "pkg").rglob(f"*{SUFFIX}"))  # (build/ keeps its copies)
    assert not (tmp_path / "pkg" / "_compiled.json").exists()
    assert _imported_from(tmp_path) == f"{source} 42"


def test_dgt_service_version_names_the_build_that_runs(capsys: pytest.CaptureFixture[str]) -> None:
    import service.recognize.recognizer as probe

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    line = capsys.readouterr().out.strip()
    assert line == describe()
    assert line.startswith("dgt-service ")
    if probe.__file__ and probe.__file__.endswith(SUFFIX):
        assert "service.recognize.recognizer" in compiled_modules()
        assert "compiled with mypyc" in line
        assert "service.recognize" in line
        assert "OUT OF DATE" not in line  # a build older than its sources would run old code
    else:
        assert compiled_modules() == []
        assert line.endswith("(plain Python)")


def test_the_compiled_build_is_never_committed() -> None:
    paths = [
        f"service/table/game{SUFFIX}",
        "service/_compiled__mypyc.so",
        "service/_compiled.json",
        "build/mypyc/__native_compiled.c",
    ]
    ignored = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", "--no-index", *paths],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ignored.stdout.split() == paths
    tracked = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "*.so", "*.c"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert tracked.stdout == ""
