#!/usr/bin/env bash
# The main job on a fresh machine: the built-in emulated board replays a real game and the
# monitor shows board and clock live. Nothing to plug in. Extra arguments go to the monitor.
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh
exec .venv/bin/dgt-service monitor --demo "$@"
