#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what it needs into .venv, then runs
# ruff, the type gate (mypy --strict, settings in pyproject.toml) and pytest. Extra
# arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh test
.venv/bin/ruff check dgt service tests bench
.venv/bin/mypy dgt service
exec .venv/bin/python -m pytest -q "$@"
