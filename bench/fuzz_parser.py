"""Fuzz the three parsers of dgt.protocol with mutated frames.

Each parser (FrameParser for board messages, BusFrameParser for bus replies,
CommandParser for host commands) gets ``--frames`` mutated frames, made from valid frames
of every kind by bit flips, insertions, deletions, truncations, random bytes and splices of
two valid frames.  Mutated frames come in batches, with valid frames between them, and
each batch reaches a fresh parser in random reads of 1 to 128 bytes.  Checked per batch:

* no exception (the parsers promise never to raise);
* recovery: a valid frame fed after the batch comes out as the last message (for the
  command parser, after 300 zero bytes that finish any command the damage left open: a
  host command has no resync marker);
* purity: every 8th batch is also fed in one piece to another fresh parser, and both must
  give the same messages;
* whatever comes out can be looked at: the decoded fields of every message are read
  (clock times, EE records, dump pieces, bus reply helpers) without an exception.

Prints the counts (frames fed, messages out, exceptions, recovery failures, split
mismatches) and the elapsed time.  The exit status is 1 if any check failed: these are
correctness failures, deterministic for a given seed.  Nothing here is a timing.

    .venv/bin/python bench/fuzz_parser.py            # 1,000,000 mutated frames per parser
    .venv/bin/python bench/fuzz_parser.py --quick    # CI smoke run: 20,000 per parser
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from dgt.protocol import (
    PEGASUS_APP_KEY,
    BatteryStatus,
    BoardDump,
    BusAddress,
    BusCommand,
    BusFrameParser,
    BusMessage,
    ClockAck,
    ClockTimes,
    Command,
    CommandParser,
    EEMoves,
    FieldUpdate,
    FrameParser,
    HardwareVersion,
    HostCommand,
    LongSerialNumber,
    Message,
    MessageId,
    SerialNumber,
    StateByte,
    Trademark,
    Unknown,
    Version,
    encode_bus_command,
    encode_clock_beep,
    encode_clock_button,
    encode_clock_display,
    encode_clock_end,
    encode_clock_icons,
    encode_clock_setnrun,
    encode_clock_text,
    encode_clock_text_rev2,
    encode_clock_version,
    encode_command,
    encode_pegasus_key,
    encode_pegasus_leds,
    encode_pegasus_leds_off,
    encode_pegasus_name,
    encode_rev2_leds,
    encode_rev2_leds_off,
    encode_rev2_setting,
)
from dgt.protocol.bus import BUS_SIZES

BATCH = 100
"""Mutated frames per batch (each batch goes to a fresh parser)."""
LARGEST_READ = 128
SPLIT_CHECK_EVERY = 8

Parser = FrameParser | BusFrameParser | CommandParser


# --- valid frames -----------------------------------------------------------------------


def low(rng: random.Random, n: int) -> bytes:
    """``n`` bytes with bit 7 clear."""
    return bytes(rng.randrange(0x80) for _ in range(n))


def text(rng: random.Random, n: int) -> str:
    return "".join(chr(rng.randrange(0x20, 0x7F)) for _ in range(n))


def board_frames(rng: random.Random) -> list[bytes]:
    """Valid board messages of every kind, with random contents."""
    out: list[Message] = []
    for _ in range(40):
        out += [
            FieldUpdate(rng.randrange(64), rng.randrange(16)),
            BoardDump(bytes(rng.choice((0, 0, 1, 7, 12)) for _ in range(64))),
            ClockTimes.build(
                rng.randrange(36000),
                rng.randrange(36000),
                running=rng.random() < 0.5,
                right_high=rng.random() < 0.5,
                left_running=rng.choice((None, True, False)),
            ),
            ClockAck(
                rng.randrange(256), rng.randrange(256), rng.randrange(256), rng.randrange(256)
            ),
            EEMoves(low(rng, rng.randrange(40))),
            BusAddress(rng.randrange(1 << 14)),
            SerialNumber(text(rng, rng.choice((5, 9, 10)))),
            LongSerialNumber(text(rng, 10)),
            Trademark(text(rng, rng.randrange(80))),
            Version(rng.randrange(5), rng.randrange(100)),
            HardwareVersion(rng.randrange(5), rng.randrange(10)),
            BatteryStatus(rng.randrange(101), (rng.randrange(24), rng.randrange(60))),
            StateByte(rng.choice((MessageId.LOCK_STATE, MessageId.DEVKEY_STATE)), rng.randrange(2)),
            Unknown(rng.choice((0x81, 0xA3, 0xC0, 0xFF)), low(rng, rng.randrange(20))),
        ]
    return [m.to_bytes() for m in out]


def bus_frames(rng: random.Random) -> list[bytes]:
    """Valid bus replies of every id."""
    out: list[BusMessage] = []
    for _ in range(40):
        for msg_id, sizes in BUS_SIZES.items():
            size = rng.choice(sorted(sizes)) if sizes else 6 + rng.randrange(40)
            out.append(BusMessage(msg_id, rng.randrange(1 << 14), low(rng, size - 6)))
    return [m.to_bytes() for m in out]


def command_frames(rng: random.Random) -> list[bytes]:
    """Valid host commands of every kind."""
    one_byte = [
        c
        for c in Command
        if c
        not in (
            Command.CLOCK_MESSAGE,
            Command.SET_LEDS,
            Command.DEVELOPER_KEY,
            Command.SET_BOARD_NAME,
        )
    ]
    out: list[bytes] = []
    for _ in range(40):
        squares = rng.sample(range(64), rng.randrange(1, 10))
        out += [encode_command(c) for c in one_byte]
        out += [
            encode_clock_display(text(rng, 6), rng.randrange(64), rng.random() < 0.5),
            encode_clock_icons(*(rng.randrange(128) for _ in range(5))),
            encode_clock_end(),
            encode_clock_button(),
            encode_clock_version(),
            encode_clock_setnrun(rng.randrange(36000), rng.randrange(36000), rng.randrange(16)),
            encode_clock_beep(rng.random() * 2),
            encode_clock_text(text(rng, 8), rng.randrange(16)),
            encode_clock_text_rev2(text(rng, 11), rng.randrange(16)),
            encode_pegasus_leds(squares, rng.randrange(1, 8), rng.randrange(4), rng.randrange(5)),
            encode_pegasus_leds_off(),
            encode_pegasus_key(PEGASUS_APP_KEY),
            encode_pegasus_key(bytes(rng.randrange(256) for _ in range(6))),
            encode_pegasus_name(text(rng, rng.randrange(1, 12))),
            encode_rev2_leds(squares[0], squares[-1], rng.random() < 0.5),
            encode_rev2_leds_off(),
            encode_rev2_setting(rng.choice((1, 2)), rng.random() < 0.5),
            encode_bus_command(rng.choice(list(BusCommand)), rng.randrange(1 << 14)),
        ]
    return out


# --- mutations --------------------------------------------------------------------------


def flip(rng: random.Random, frame: bytes, _: Sequence[bytes]) -> bytes:
    damaged = bytearray(frame)
    for _ in range(rng.randint(1, 3)):
        damaged[rng.randrange(len(damaged))] ^= 1 << rng.randrange(8)
    return bytes(damaged)


def insert(rng: random.Random, frame: bytes, _: Sequence[bytes]) -> bytes:
    at = rng.randrange(len(frame) + 1)
    return frame[:at] + rng.randbytes(rng.randint(1, 8)) + frame[at:]


def delete(rng: random.Random, frame: bytes, _: Sequence[bytes]) -> bytes:
    start = rng.randrange(len(frame))
    return frame[:start] + frame[start + rng.randint(1, 8) :]


def truncate(rng: random.Random, frame: bytes, _: Sequence[bytes]) -> bytes:
    return frame[: rng.randrange(len(frame))]


def random_bytes(rng: random.Random, _: bytes, __: Sequence[bytes]) -> bytes:
    return rng.randbytes(rng.randint(1, 80))


def splice(rng: random.Random, frame: bytes, corpus: Sequence[bytes]) -> bytes:
    other = rng.choice(corpus)
    return frame[: rng.randrange(len(frame) + 1)] + other[rng.randrange(len(other) + 1) :]


MUTATIONS: tuple[Callable[[random.Random, bytes, Sequence[bytes]], bytes], ...] = (
    flip,
    insert,
    delete,
    truncate,
    random_bytes,
    splice,
)


# --- looking at what comes out ------------------------------------------------------------


def look_at(msg: object) -> None:
    """Read every decoded field of a message, as a driver would."""
    if isinstance(msg, ClockTimes):
        _ = (msg.left, msg.right, msg.valid, msg.is_null, msg.right_high, msg.left_flag)
    elif isinstance(msg, ClockAck):
        _ = (msg.button, msg.version, msg.ok, msg.button_mask)
    elif isinstance(msg, EEMoves):
        _ = msg.records
    elif isinstance(msg, BoardDump):
        _ = (msg.pieces(), msg.pieces(presence_only=True))
    elif isinstance(msg, FieldUpdate):
        _ = msg.square
    elif isinstance(msg, BusMessage):
        _ = (msg.board_dump(), msg.clock(), msg.version(), msg.records())
    elif isinstance(msg, BatteryStatus):
        _ = msg.charging


# --- the run ----------------------------------------------------------------------------


@dataclass
class Target:
    """One parser under test and what it has seen."""

    name: str
    make: Callable[[], Parser]
    corpus: list[bytes]
    sentinel: bytes  # a valid frame fed after each batch ...
    expected: object  # ... and the message it must give
    flush: bytes = b""  # fed before the sentinel
    mutated: int = 0
    valid: int = 0
    messages: int = 0
    exceptions: int = 0
    recovery_failures: int = 0
    split_mismatches: int = 0
    seconds: float = 0.0
    examples: list[str] = field(default_factory=list)

    def failures(self) -> int:
        return self.exceptions + self.recovery_failures + self.split_mismatches

    def note(self, what: str) -> None:
        if len(self.examples) < 3:
            self.examples.append(what)


def reads(rng: random.Random, data: bytes) -> list[bytes]:
    out: list[bytes] = []
    i = 0
    while i < len(data):
        size = rng.randint(1, LARGEST_READ)
        out.append(data[i : i + size])
        i += size
    return out


def run_batch(target: Target, rng: random.Random, check_split: bool) -> None:
    corpus = target.corpus
    pieces: list[bytes] = []
    for _ in range(BATCH):
        frame = rng.choice(corpus)
        pieces.append(rng.choice(MUTATIONS)(rng, frame, corpus))
        target.mutated += 1
        while rng.random() < 0.5:  # valid frames between the damage
            pieces.append(rng.choice(corpus))
            target.valid += 1
    data = b"".join(pieces)
    parser = target.make()
    try:
        out: list[object] = []
        for chunk in reads(rng, data):
            out.extend(parser.feed(chunk))
        for msg in out:
            look_at(msg)
        target.messages += len(out)
        if check_split and target.make().feed(data) != out:
            target.split_mismatches += 1
            target.note(f"split mismatch on {data.hex()}")
        after = parser.feed(target.flush + target.sentinel)
        target.valid += 1
        target.messages += len(after)
        if not after or after[-1] != target.expected:
            target.recovery_failures += 1
            target.note(f"no recovery after {data.hex()}: {after[-3:]!r}")
    except Exception:  # noqa: BLE001 - counting exceptions is the point of this harness
        target.exceptions += 1
        target.note(f"exception on {data.hex()}:\n{traceback.format_exc()}")


def targets(rng: random.Random) -> list[Target]:
    board_sentinel = FieldUpdate(63, 0x0F)
    bus_sentinel = BusMessage(0x87, 0x3FFF, b"")
    command_sentinel = encode_bus_command(BusCommand.PING, 0x3FFF)
    return [
        Target(
            "FrameParser", FrameParser, board_frames(rng), board_sentinel.to_bytes(), board_sentinel
        ),
        Target(
            "BusFrameParser", BusFrameParser, bus_frames(rng), bus_sentinel.to_bytes(), bus_sentinel
        ),
        Target(
            "CommandParser",
            CommandParser,
            command_frames(rng),
            command_sentinel,
            HostCommand(0x87, b"", 0x3FFF),
            flush=bytes(300),
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--frames",
        type=int,
        default=1_000_000,
        help="mutated frames per parser (default 1,000,000)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="CI smoke run: 20,000 per parser")
    args = parser.parse_args(argv)
    frames = min(args.frames, 20_000) if args.quick else args.frames
    batches = max(1, -(-frames // BATCH))

    rng = random.Random(args.seed)
    print(
        f"seed {args.seed}: {batches * BATCH:,} mutated frames per parser (bit flips, "
        f"insertions, deletions, truncations, random bytes, splices), in batches of "
        f"{BATCH} with valid frames between, reads of 1-{LARGEST_READ} bytes"
    )
    start = time.perf_counter()
    everything = targets(rng)
    for target in everything:
        began = time.perf_counter()
        for batch in range(batches):
            run_batch(target, rng, batch % SPLIT_CHECK_EVERY == 0)
        target.seconds = time.perf_counter() - began
        print(
            f"{target.name}: {target.mutated:,} mutated + {target.valid:,} valid frames fed, "
            f"{target.messages:,} messages out, {target.exceptions} exceptions, "
            f"{target.recovery_failures} recovery failures, "
            f"{target.split_mismatches} split mismatches, {target.seconds:.1f} s"
        )
        for example in target.examples:
            print(f"  {example}", file=sys.stderr)
    elapsed = time.perf_counter() - start
    print(
        f"frames fed: {sum(t.mutated + t.valid for t in everything):,} "
        f"({sum(t.mutated for t in everything):,} mutated)"
    )
    print(f"messages out: {sum(t.messages for t in everything):,}")
    print(f"exceptions: {sum(t.exceptions for t in everything)}")
    print(f"recovery failures: {sum(t.recovery_failures for t in everything)}")
    print(f"split mismatches: {sum(t.split_mismatches for t in everything)}")
    print(f"elapsed: {elapsed:.1f} s")
    return 1 if any(t.failures() for t in everything) else 0


if __name__ == "__main__":
    sys.exit(main())
