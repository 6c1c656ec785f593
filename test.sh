#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what it needs into .venv, then runs
# ruff, the type gate (mypy --strict, settings in pyproject.toml) and pytest. Extra
# arguments go to pytest: `./test.sh -m "not slow"` is the quick loop (no end-to-end runs,
# benches or exhaustive sweeps); CI runs everything.
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh test
.venv/bin/ruff check dgt service tests bench
.venv/bin/mypy dgt service
exec .venv/bin/python -m pytest -q "$@"
