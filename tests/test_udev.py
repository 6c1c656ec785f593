"""``udev/99-dgt.rules``: its syntax, its promises (ids, no 0666, uaccess, ModemManager), and
what it does to devices.

What it does is checked twice over the same table of USB devices: by a small evaluator of
the subset of the udev rule language the file uses (always runs), and by the real
``udevadm test`` on a fake sysfs in a private mount namespace (needs udevadm and root; the
host's /dev, /run and rules are never touched).  ``udevadm verify`` runs when udevadm is new
enough to have it (systemd >= 253).
"""

from __future__ import annotations

import fnmatch
import grp
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "udev" / "99-dgt.rules"
UDEVADM = shutil.which("udevadm") or next(
    (p for p in ("/usr/bin/udevadm", "/bin/udevadm", "/sbin/udevadm") if os.path.exists(p)),
    None,
)

# --- a parser for the rule language ------------------------------------------------------

_PAIR = re.compile(
    r"\s*(?P<key>[A-Z_]+)(?:\{(?P<attr>[^}]*)\})?\s*(?P<op>==|!=|\+=|-=|:=|=)\s*"
    r'"(?P<value>(?:[^"\\]|\\.)*)"\s*(?:,|$)'
)
MATCH_KEYS = {"ACTION", "SUBSYSTEM", "SUBSYSTEMS", "KERNEL", "ATTRS", "ATTR", "ENV", "TAG"}
ASSIGN_KEYS = {"ENV", "TAG", "GROUP", "MODE", "SYMLINK", "RUN", "IMPORT", "GOTO", "LABEL"}


@dataclass(frozen=True)
class Pair:
    key: str
    attr: str | None
    op: str
    value: str

    @property
    def is_match(self) -> bool:
        return self.op in ("==", "!=")


@dataclass(frozen=True)
class Rule:
    line: int
    pairs: tuple[Pair, ...]


def parse_rules(text: str) -> list[Rule]:
    """Every line is blank, a comment, or comma-separated ``KEY{attr}OP"value"`` pairs
    (a trailing backslash continues a line).  Raises AssertionError naming the bad line."""
    rules: list[Rule] = []
    pending = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not pending:
            start = number
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        logical = pending + stripped
        pending = ""
        pairs: list[Pair] = []
        pos = 0
        while pos < len(logical):
            m = _PAIR.match(logical, pos)
            assert m is not None, f"line {start}: cannot parse {logical[pos:]!r}"
            pair = Pair(m["key"], m["attr"], m["op"], m["value"])
            known = MATCH_KEYS if pair.is_match else ASSIGN_KEYS
            assert pair.key in known, f"line {start}: {pair.key}{pair.op} is not used that way"
            pairs.append(pair)
            pos = m.end()
        rules.append(Rule(start, tuple(pairs)))
    assert not pending, "the file ends in a continued line"
    return rules


def test_every_line_is_a_comment_or_key_op_value_pairs() -> None:
    rules = parse_rules(RULES.read_text(encoding="utf-8"))
    assert len(rules) > 10
    labels = {p.value for r in rules for p in r.pairs if p.key == "LABEL"}
    gotos = {p.value for r in rules for p in r.pairs if p.key == "GOTO"}
    assert gotos <= labels, f"GOTO without LABEL: {gotos - labels}"


def test_the_parser_rejects_broken_lines() -> None:
    with pytest.raises(AssertionError, match="line 2"):
        parse_rules('# ok\nATTRS{idVendor}="045b" oops\n')
    with pytest.raises(AssertionError, match="line 1"):
        parse_rules('FOO=="bar"\n')


def _pairs() -> list[Pair]:
    return [p for r in parse_rules(RULES.read_text(encoding="utf-8")) for p in r.pairs]


def test_known_ids_are_matched_in_sysfs_spelling() -> None:
    pairs = _pairs()
    vendors = {p.value for p in pairs if p.attr == "idVendor"}
    products = {p.value for p in pairs if p.attr == "idProduct"}
    assert {"045b", "04d8"} <= vendors
    assert {"8111", "000a"} <= products
    # sysfs writes ids in lower case: "045B" would never match
    for value in vendors | products:
        assert re.fullmatch(r"[0-9a-f]{4}", value), value


def test_the_ftdi_id_only_counts_with_a_dgt_name() -> None:
    for rule in parse_rules(RULES.read_text(encoding="utf-8")):
        if any(p.attr == "idVendor" and p.value == "0403" for p in rule.pairs):
            names = [p for p in rule.pairs if p.attr in ("manufacturer", "product")]
            assert names, f"line {rule.line}: 0403 granted without a DGT name"
            assert all("[Dd][Gg][Tt]" in p.value for p in names)


def test_permissions_are_for_a_group_and_the_desktop_user_never_everyone() -> None:
    code = [
        line
        for line in RULES.read_text(encoding="utf-8").splitlines()
        if not line.lstrip().startswith("#")
    ]
    pairs = _pairs()
    assert not any("0666" in line for line in code)
    modes = [p.value for p in pairs if p.key == "MODE"]
    assert modes == ["0660"]
    groups = [p.value for p in pairs if p.key == "GROUP"]
    assert groups == ["dialout"]  # one place to change it
    assert any(p.key == "TAG" and p.op == "+=" and p.value == "uaccess" for p in pairs)
    assert any(p.key == "ENV" and p.attr == "ID_MM_DEVICE_IGNORE" and p.value == "1" for p in pairs)
    links = [p.value for p in pairs if p.key == "SYMLINK"]
    assert "dgt/board" in links
    assert any(link.startswith("dgt/by-serial/$env{ID_SERIAL_SHORT}") for link in links)


# --- what the rules do: a table of devices ----------------------------------------------


@dataclass(frozen=True)
class Device:
    name: str
    vid: str
    pid: str
    manufacturer: str | None = None
    product: str | None = None
    serial: str | None = None
    kernel: str = "ttyACM0"


@dataclass(frozen=True)
class Expected:
    matched: bool
    links: frozenset[str] = frozenset()


CASES: list[tuple[Device, Expected]] = [
    (
        Device("dgt-current", "045b", "8111", serial="A1B2C3"),
        Expected(True, frozenset({"dgt/board", "dgt/by-serial/A1B2C3"})),
    ),
    (Device("dgt-old-no-serial", "04d8", "000a"), Expected(True, frozenset({"dgt/board"}))),
    (
        Device("ftdi-generic", "0403", "6001", "FTDI", "FT232R USB UART", "A9X1", "ttyUSB0"),
        Expected(False),
    ),
    (
        Device("ftdi-named-dgt", "0403", "6001", "FTDI", "DGT e-Board", "F00D", "ttyUSB1"),
        Expected(True, frozenset({"dgt/board", "dgt/by-serial/F00D"})),
    ),
    (
        Device("unknown-id-dgt-maker", "1a86", "7523", manufacturer="DGT Projects"),
        Expected(True, frozenset({"dgt/board"})),
    ),
    (Device("arduino", "2341", "0043", manufacturer="Arduino (www.arduino.cc)"), Expected(False)),
]


@dataclass
class Outcome:
    env: dict[str, str]
    tags: set[str] = field(default_factory=set)
    links: set[str] = field(default_factory=set)
    group: str | None = None
    mode: str | None = None


def _glob(pattern: str, value: str | None) -> bool:
    return any(fnmatch.fnmatchcase(value or "", alt) for alt in pattern.split("|"))


def evaluate(rules: list[Rule], device: Device) -> Outcome:
    """Run the rules on an ``add`` event of a USB tty, the way udev does for the subset of
    the language the file uses (one USB parent carries every ATTRS)."""
    attrs = {"idVendor": device.vid, "idProduct": device.pid}
    for key, value in (
        ("manufacturer", device.manufacturer),
        ("product", device.product),
        ("serial", device.serial),
    ):
        if value is not None:
            attrs[key] = value
    out = Outcome(env={"ID_SERIAL_SHORT": device.serial or ""})
    own = {"ACTION": "add", "SUBSYSTEM": "tty", "KERNEL": device.kernel, "SUBSYSTEMS": "usb"}

    def value_of(p: Pair) -> str | None:
        if p.key == "ATTRS":
            return attrs.get(p.attr or "")
        if p.key == "ENV":
            return out.env.get(p.attr or "", "")
        if p.key == "TAG":
            return next((t for t in out.tags if _glob(p.value, t)), "")
        return own[p.key]

    def substitute(text: str) -> str:
        return re.sub(r"\$env\{([^}]*)\}", lambda m: out.env.get(m[1], ""), text)

    skip_to: str | None = None
    for rule in rules:
        if skip_to is not None:
            if any(p.key == "LABEL" and p.value == skip_to for p in rule.pairs):
                skip_to = None
            continue
        matches = all(
            _glob(p.value, value_of(p)) == (p.op == "==") for p in rule.pairs if p.is_match
        )
        if not matches:
            continue
        for p in rule.pairs:
            if p.is_match:
                continue
            value = substitute(p.value)
            if p.key == "GOTO":
                skip_to = value
            elif p.key == "ENV":
                out.env[p.attr or ""] = value
            elif p.key == "TAG":
                out.tags.add(value)
            elif p.key == "SYMLINK":
                out.links.update(value.split())
            elif p.key == "GROUP":
                out.group = value
            elif p.key == "MODE":
                out.mode = value
    return out


def _check(
    env: dict[str, str],
    tags: set[str],
    links: set[str],
    expected: Expected,
    group: str | None,
    mode: str | None,
) -> None:
    """The same expectations for the evaluator and for udevadm."""
    dgt_links = {link for link in links if link.startswith("dgt/")}
    if not expected.matched:
        assert "DGT_BOARD" not in env
        assert "ID_MM_DEVICE_IGNORE" not in env
        assert "uaccess" not in tags
        assert dgt_links == set()
        return
    assert env.get("DGT_BOARD") == "1"
    assert env.get("ID_MM_DEVICE_IGNORE") == "1"
    assert "uaccess" in tags
    assert (group, mode) == ("dialout", "0660")
    assert {link for link in dgt_links if not link.startswith("dgt/by-path/")} == set(
        expected.links
    )


@pytest.mark.parametrize(("device", "expected"), CASES, ids=[d.name for d, _ in CASES])
def test_rules_on_devices_by_evaluator(device: Device, expected: Expected) -> None:
    out = evaluate(parse_rules(RULES.read_text(encoding="utf-8")), device)
    _check(out.env, out.tags, out.links, expected, out.group, out.mode)


def test_evaluator_honours_goto() -> None:
    rules = parse_rules('SUBSYSTEM!="tty", GOTO="end"\nENV{X}="1"\nLABEL="end"\n')
    assert evaluate(rules, Device("x", "0000", "0000")).env.get("X") == "1"
    rules = parse_rules('SUBSYSTEM=="tty", GOTO="end"\nENV{X}="1"\nLABEL="end"\n')
    assert "X" not in evaluate(rules, Device("x", "0000", "0000")).env


# --- the real udevadm ----------------------------------------------------------------------


UNSHARE = ("unshare", "-m", "--propagation", "private")


def _namespace_problem() -> str | None:
    if UDEVADM is None:
        return "udevadm is not installed (Debian package udev)"
    if os.geteuid() != 0:
        return "needs root for a private mount namespace"
    if shutil.which("unshare") is None:
        return "needs unshare (util-linux)"
    done = subprocess.run(
        [*UNSHARE, "true"],
        capture_output=True,
        timeout=10,
        check=False,
    )
    if done.returncode != 0:
        return "cannot make a private mount namespace here"
    return None


NAMESPACE_PROBLEM = _namespace_problem()
needs_namespace = pytest.mark.skipif(NAMESPACE_PROBLEM is not None, reason=NAMESPACE_PROBLEM or "")


def _link(path: Path, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    path.symlink_to(os.path.relpath(target, path.parent))


def build_sysfs(root: Path, devices: list[Device]) -> dict[str, str]:
    """A fake sysfs with one USB tty per device (xHCI controller, device, interface, tty;
    FTDI-style ttyUSB ports with their usb-serial layer).  Returns name -> /sys path."""
    sys_ = root / "sys"
    pci = sys_ / "devices" / "pci0000:00" / "0000:00:14.0"
    pci.mkdir(parents=True)
    _link(pci / "subsystem", sys_ / "bus" / "pci")
    (pci / "uevent").write_text("PCI_SLOT_NAME=0000:00:14.0\n")
    hub = pci / "usb1"
    hub.mkdir()
    _link(hub / "subsystem", sys_ / "bus" / "usb")
    (hub / "uevent").write_text("DEVTYPE=usb_device\n")
    paths: dict[str, str] = {}
    for number, dev in enumerate(devices, start=1):
        usb = hub / f"1-{number}"
        usb.mkdir()
        _link(usb / "subsystem", sys_ / "bus" / "usb")
        (usb / "uevent").write_text(
            f"MAJOR=189\nMINOR={number}\nDEVNAME=bus/usb/001/{number + 1:03d}\n"
            f"DEVTYPE=usb_device\nDRIVER=usb\n"
            f"PRODUCT={int(dev.vid, 16):x}/{int(dev.pid, 16):x}/100\n"
            f"BUSNUM=001\nDEVNUM={number + 1:03d}\n"
        )
        for attr, value in (
            ("idVendor", dev.vid),
            ("idProduct", dev.pid),
            ("bcdDevice", "0100"),
            ("bDeviceClass", "00"),
            ("manufacturer", dev.manufacturer),
            ("product", dev.product),
            ("serial", dev.serial),
        ):
            if value is not None:
                (usb / attr).write_text(value + "\n")
        acm = dev.kernel.startswith("ttyACM")
        interface = usb / f"1-{number}:1.0"
        interface.mkdir()
        _link(interface / "subsystem", sys_ / "bus" / "usb")
        driver = "cdc_acm" if acm else "ftdi_sio"
        (interface / "uevent").write_text(f"DEVTYPE=usb_interface\nDRIVER={driver}\n")
        for attr, value in (
            ("bInterfaceNumber", "00"),
            ("bInterfaceClass", "02" if acm else "ff"),
            ("bInterfaceSubClass", "02" if acm else "ff"),
            ("bInterfaceProtocol", "01" if acm else "ff"),
        ):
            (interface / attr).write_text(value + "\n")
        parent = interface
        if not acm:
            parent = interface / dev.kernel
            parent.mkdir()
            _link(parent / "subsystem", sys_ / "bus" / "usb-serial")
            (parent / "uevent").write_text("DRIVER=ftdi_sio\n")
            (parent / "port_number").write_text("0\n")
        tty = parent / "tty" / dev.kernel
        tty.mkdir(parents=True)
        _link(tty / "subsystem", sys_ / "class" / "tty")
        major = 166 if acm else 188
        (tty / "uevent").write_text(f"MAJOR={major}\nMINOR={number}\nDEVNAME={dev.kernel}\n")
        (tty / "dev").write_text(f"{major}:{number}\n")
        paths[dev.name] = "/" + str(tty.relative_to(root))
    return paths


_IN_NAMESPACE = """
set -e
mount --bind "$1/sys" /sys
mount --bind "$1/rules" /etc/udev/rules.d
mount -t tmpfs dgt-test-run /run
mount -t tmpfs dgt-test-dev /dev
export SYSTEMD_DEVICE_VERIFY_SYSFS=0 SYSTEMD_LOG_COLOR=0
exec "$2" test --action=add "$3"
"""


@dataclass
class UdevRun:
    properties: dict[str, str]
    log: str


def udevadm_test(tmp: Path, rules_text: str, devpath: str) -> UdevRun:
    """``udevadm test`` on the fake sysfs under ``tmp`` with only ``rules_text`` as local
    rules, in a private mount namespace (fresh /run and /dev, so nothing leaks)."""
    rules_dir = tmp / "rules"
    rules_dir.mkdir(exist_ok=True)
    (rules_dir / "99-dgt.rules").write_text(rules_text, encoding="utf-8")
    assert UDEVADM is not None
    done = subprocess.run(
        [*UNSHARE, "sh", "-c", _IN_NAMESPACE, "sh", str(tmp), UDEVADM, devpath],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    properties = dict(
        line.split("=", 1) for line in done.stdout.splitlines() if re.match(r"[A-Z_]+=", line)
    )
    return UdevRun(properties, done.stderr)


def _parse_problems(log: str) -> list[str]:
    """Lines where udev complains about our file while reading it (execution traces are
    prefixed with the device name instead)."""
    return [line for line in log.splitlines() if line.startswith("/etc/udev/rules.d/99-dgt")]


@needs_namespace
def test_udevadm_test_applies_the_rules(tmp_path: Path) -> None:
    paths = build_sysfs(tmp_path, [device for device, _ in CASES])
    text = RULES.read_text(encoding="utf-8")
    dialout = str(grp.getgrnam("dialout").gr_gid)
    for device, expected in CASES:
        run = udevadm_test(tmp_path, text, paths[device.name])
        assert _parse_problems(run.log) == [], device.name
        assert "Unknown group" not in run.log
        props = run.properties
        assert props.get("SUBSYSTEM") == "tty", (device.name, run.log[-1500:])
        tags = set(filter(None, props.get("TAGS", "").split(":")))
        links = {link.removeprefix("/dev/") for link in props.get("DEVLINKS", "").split()}
        ours = [line for line in run.log.splitlines() if "99-dgt.rules:" in line]
        group = "dialout" if any(f"GROUP {dialout}" in line for line in ours) else None
        mode = "0660" if any(line.endswith("MODE 0660") for line in ours) else None
        try:
            _check(props, tags, links, expected, group, mode)
        except AssertionError as exc:
            raise AssertionError(f"{device.name}: {exc}\n{run.log[-3000:]}") from exc
        if expected.matched:  # udev's own path_id gives the by-path link
            assert any(link.startswith("dgt/by-path/pci-0000:00:14.0-usb-0:") for link in links)


@needs_namespace
def test_udevadm_test_reports_a_broken_rules_file(tmp_path: Path) -> None:
    """The check above can fail: udev names the broken line of a damaged copy."""
    paths = build_sysfs(tmp_path, [CASES[0][0]])
    broken = RULES.read_text(encoding="utf-8") + 'ATTRS{idVendor}="045b"\nFOO=="bar"\n'
    run = udevadm_test(tmp_path, broken, paths[CASES[0][0].name])
    problems = _parse_problems(run.log)
    assert len(problems) == 2, run.log[-2000:]
