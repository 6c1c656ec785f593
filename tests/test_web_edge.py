"""service.web.edge: the checks the web edge makes on a request's text (pure functions)."""

from __future__ import annotations

import pytest

from service.errors import UsageError
from service.web.edge import (
    HostPolicy,
    check_scalar,
    check_unicode,
    content_disposition,
    token_matches,
)


def test_text_that_cannot_be_written_as_utf8_is_refused() -> None:
    assert check_unicode("Ann é ♔", "white") == "Ann é ♔"
    with pytest.raises(ValueError, match=r"^white contains a character that is not valid"):
        check_unicode("Ann\ud800", "white")


@pytest.mark.parametrize("value", [None, True, 0, -(2**53), 2**53, 1.5, -0.0])
def test_scalars_a_store_reads_back_the_same_are_accepted(value: object) -> None:
    check_scalar(value, "n")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("nan"), "n must be a finite number"),
        (float("inf"), "n must be a finite number"),
        (2**53 + 1, "n is too large a number"),
        ([1], "n must be a string, number, true/false or null"),
        ({"a": 1}, "n must be a string, number, true/false or null"),
    ],
)
def test_other_scalars_are_refused(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        check_scalar(value, "n")


def test_a_token_with_undecodable_bytes_is_a_wrong_token() -> None:
    assert token_matches("secret-token", "secret-token")
    assert not token_matches("secret-tokem", "secret-token")
    assert not token_matches("", "secret-token")
    assert not token_matches("\udcff\udcfe", "secret-token")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("games.pgn", 'inline; filename="games.pgn"'),
        ("3-12.pgn", 'inline; filename="3-12.pgn"'),
        ("round-2 b.pgn", "inline; filename=\"round-2_b.pgn\"; filename*=UTF-8''round-2%20b.pgn"),
        ("round-Å.pgn", "inline; filename=\"round-_.pgn\"; filename*=UTF-8''round-%C3%85.pgn"),
        (
            'a";x=1\r\n.pgn',
            "inline; filename=\"a__x_1__.pgn\"; filename*=UTF-8''a%22%3Bx%3D1%0D%0A.pgn",
        ),
        ("x\ud800", "inline; filename=\"x_\"; filename*=UTF-8''x%3F"),
        ("", "inline; filename=\"download\"; filename*=UTF-8''"),
    ],
)
def test_a_download_name_is_one_parameter_whatever_it_holds(name: str, value: str) -> None:
    assert content_disposition(name) == value


def test_host_names_of_a_loopback_service() -> None:
    policy = HostPolicy("127.0.0.1", ["Board.Example.org."])
    for host in ("127.0.0.1", "127.0.0.1:8080", "localhost:8080", "[::1]:8080", "[::1]",
                 "board.example.org:80", "BOARD.example.org", None):  # fmt: skip
        assert policy.allows(host), host
    for host in ("evil.example", "10.0.0.1:8080", "127.0.0.2", "localhost:http", "[::1",
                 "[::1]x", "a:b:c", "", "caf\udce9.example", "board.example.org.evil"):  # fmt: skip
        assert not policy.allows(host), host


def test_host_names_of_a_service_on_every_address() -> None:
    policy = HostPolicy("0.0.0.0")
    for host in ("192.168.1.20:8080", "10.0.0.1", "[fe80::1]:8080", "localhost"):
        assert policy.allows(host), host
    for host in ("dgt.local:8080", "evil.example"):
        assert not policy.allows(host), host
    assert HostPolicy("0.0.0.0", ["dgt.local"]).allows("dgt.local:8080")


def test_host_names_of_a_service_on_one_address() -> None:
    policy = HostPolicy("192.168.1.20")
    assert policy.allows("192.168.1.20:8080")
    assert policy.allows("localhost:8080")
    assert not policy.allows("127.0.0.1:8080")
    assert not policy.allows("192.168.1.21:8080")


def test_the_config_names_the_hosts_the_service_answers() -> None:
    from service.config import parse_config

    config = parse_config('[service]\nhosts = ["dgt.club.example", "[fe80::1]"]\n')
    assert config.hosts == ("dgt.club.example", "[fe80::1]")
    policy = HostPolicy(config.bind, config.hosts)
    assert policy.allows("dgt.club.example:8080")
    assert policy.allows("[fe80::1]:8080")
    assert not policy.allows("evil.example:8080")
    assert parse_config("").hosts == ()
    for bad in ('"dgt.club.example"', '["a b"]', "[1]", '["evil\\"; x"]'):
        with pytest.raises(UsageError, match=r"hall\.toml:2: \[service\] hosts: must be a list"):
            parse_config(f"[service]\nhosts = {bad}\n", "hall.toml")
