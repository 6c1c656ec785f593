#!/usr/bin/env bash
# The main job on a fresh machine: the tournament service on emulated boards replaying real
# games, stored and mirrored live on the web (it prints the address to open). Nothing to plug
# in. Extra arguments go to 'dgt-service demo' (--boards N, --speed X, --port P, ...).
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh
exec .venv/bin/dgt-service demo "$@"
