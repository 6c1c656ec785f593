#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what it needs into .venv, then runs
# ruff, the type gate (mypy --strict, settings in pyproject.toml) and pytest. Extra
# arguments go to pytest: `./test.sh -m "not slow"` is the quick loop (no end-to-end runs,
# benches or exhaustive sweeps); CI runs everything. pytest runs the tests in up to four
# processes at once (pytest-xdist, one per core): `./test.sh -n 0` runs them in one.
set -euo pipefail
cd "$(dirname "$0")"
# pytest keeps its rewritten test modules as bytecode in __pycache__ (ignored by git);
# with PYTHONDONTWRITEBYTECODE set it would rewrite all of them on every run (about 6 s).
unset PYTHONDONTWRITEBYTECODE
./setup.sh test
.venv/bin/ruff check dgt service tests bench
.venv/bin/mypy dgt service
exec .venv/bin/python -m pytest -q -n auto --maxprocesses 4 --dist worksteal "$@"
