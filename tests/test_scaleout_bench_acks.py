"""The scale-out bench's proxy throws away the broker's acknowledgements of the log stream
(the real mode's fault ``acks``): it reads the broker's side of the NATS protocol message
by message, however the bytes come, and passes on everything else unchanged."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

from scaleout import AckFilter, Proxy  # noqa: E402

ACK = b'{"stream":"DGT_LOG", "seq":7}'
KV_ACK = b'{"stream":"KV_dgt_edges", "seq":3}'
INFO = b'{"type":"io.nats.jetstream.api.v1.stream_info_response","config":{}}'


def msg(subject: bytes, payload: bytes) -> bytes:
    return b"MSG " + subject + b" 1 " + str(len(payload)).encode() + b"\r\n" + payload + b"\r\n"


def hmsg(subject: bytes, headers: bytes, payload: bytes) -> bytes:
    sizes = f"{len(headers)} {len(headers) + len(payload)}".encode()
    return b"HMSG " + subject + b" 2 " + sizes + b"\r\n" + headers + payload + b"\r\n"


STREAM = [
    b'INFO {"server_id":"x","max_payload":1048576}\r\n',
    b"PING\r\n",
    msg(b"_INBOX.abc.1", INFO),
    msg(b"_INBOX.abc.2", ACK),
    hmsg(b"dgt.admin.e0.command", b"NATS/1.0\r\nA: b\r\n\r\n", b'{"id":"1"}'),
    msg(b"_INBOX.abc.3", KV_ACK),
    b"+OK\r\n",
    msg(b"_INBOX.abc.4", ACK.replace(b"7", b"8")),
    msg(b"_INBOX.abc.5", b""),
]


def through(proxy: Proxy, data: bytes, piece: int) -> bytes:
    acks = AckFilter(proxy)
    return b"".join(acks.feed(data[i : i + piece]) for i in range(0, len(data), piece))


def test_the_proxy_drops_only_the_log_stream_acks_it_is_told_to() -> None:
    data = b"".join(STREAM)
    for piece in (1, 2, 3, 7, 64, len(data)):
        proxy = Proxy(0)
        assert through(proxy, data, piece) == data  # nothing to drop: every byte passes
        proxy.drop_acks(1)
        assert through(proxy, data, piece) == data.replace(STREAM[3], b"")
        assert (proxy.dropped, proxy.to_drop) == (1, 0)
        proxy.drop_acks(5)
        kept = through(proxy, data, piece)
        assert kept == data.replace(STREAM[3], b"").replace(STREAM[7], b"")
        assert (proxy.dropped, proxy.to_drop) == (3, 3)  # the KV's ack was not taken
