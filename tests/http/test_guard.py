"""The guard's parts on their own: the rate limits, the browser's sessions, the token file,
the address rules."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from chitta.errors import BadArgument, BadConfig
from chitta.http.app import Address, parse_address
from chitta.http.guard import SESSION_S, Limiter, Sessions
from chitta.http.token import FILE_NAME, read_token, same


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_bucket_allows_a_burst_then_the_rate() -> None:
    clock = Clock()
    limiter = Limiter(rate=10, burst=5, clock=clock)
    assert [limiter.allow("a") for _ in range(5)] == [0.0] * 5
    assert limiter.allow("a") > 0 and limiter.allow("b") == 0.0  # per address
    clock.now += 0.1  # one request's worth comes back
    assert limiter.allow("a") == 0.0 and limiter.allow("a") > 0


def test_failed_tokens_shut_an_address_out_for_the_minute() -> None:
    clock = Clock()
    limiter = Limiter(failures=3, clock=clock)
    for _ in range(3):
        limiter.failed("a")
    assert 59 <= limiter.allow("a") <= 60
    clock.now += 61
    assert limiter.allow("a") == 0.0


def test_sessions_expire_and_close() -> None:
    clock = Clock()
    sessions = Sessions(clock=clock)
    sid, csrf = sessions.open()
    assert sessions.csrf(sid) == csrf and sessions.csrf("other") is None
    sessions.close(sid)
    assert sessions.csrf(sid) is None
    sid, _ = sessions.open()
    clock.now += SESSION_S + 1
    assert sessions.csrf(sid) is None


def test_the_token_is_made_owner_only_kept_and_replaced_on_request(tmp_path: Path) -> None:
    first = read_token(tmp_path)
    assert read_token(tmp_path) == first and len(first) >= 40
    assert stat.S_IMODE((tmp_path / FILE_NAME).stat().st_mode) == 0o600
    assert read_token(tmp_path, new=True) != first
    assert same(first, first) and not same(None, first) and not same("x", first)


def test_a_token_file_that_holds_no_token_is_refused(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_text("short\n")
    with pytest.raises(BadConfig, match="no usable token"):
        read_token(tmp_path)
    with pytest.raises(BadConfig, match="no HTTP token"):
        read_token(tmp_path / "none", create=False)


@pytest.mark.parametrize(
    ("text", "tls", "expected"),
    [("127.0.0.1:8765", False, ("127.0.0.1", 8765)), ("8765", False, ("127.0.0.1", 8765)),
     ("localhost:9", False, ("127.0.0.1", 9)), ("[::1]:8765", False, ("::1", 8765)),
     ("10.0.0.5:443", True, ("10.0.0.5", 443))],
)  # fmt: skip
def test_addresses_are_read(text: str, tls: bool, expected: tuple) -> None:
    assert parse_address(text, tls=tls) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("10.0.0.5:8765", "needs TLS"),
        ("0.0.0.0:8765", "needs TLS"),
        ("host:x", "HOST:PORT"),
        ("127.0.0.1:70000", "0-65535"),
        ("example.org:80", "IP address"),
    ],
)
def test_bad_addresses_and_open_ones_without_tls_are_refused(text: str, message: str) -> None:
    with pytest.raises(BadArgument, match=message):
        parse_address(text, tls=False)


def test_the_host_names_a_loopback_server_answers_for() -> None:
    assert Address("127.0.0.1", 8765, False).hosts() == {
        "127.0.0.1:8765",
        "localhost:8765",
        "[::1]:8765",
    }
    assert Address("0.0.0.0", 443, True).hosts() is None  # any name, TLS only
    assert Address("::1", 9, False).url == "http://[::1]:9"
