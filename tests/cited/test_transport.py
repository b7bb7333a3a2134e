"""The bounded HTTP exchange of cited recall's http source and model chain, against real
servers on 127.0.0.1 (the whole-exchange deadline itself: test_sources_http.py, test_synth.py)."""

from __future__ import annotations

import os
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from chitta.cited.base import SourceError
from chitta.cited.transport import fetch, is_loopback

BODY = b'{"hits": []}' + b" " * 2000


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def get(url: str, **kw) -> bytes:
    request = urllib.request.Request(url, headers=kw.pop("headers", {}))
    return fetch(request, where=f"GET {url}", timeout_s=5, private=[], error=SourceError, **kw)


def test_a_reply_is_read_whole_and_leaves_no_descriptor_open(base: str) -> None:
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        assert get(base + "/x") == BODY
    # The watchdog's duplicate of each socket is closed with the exchange.
    assert len(os.listdir("/proc/self/fd")) <= before + 2


def test_a_reply_over_the_cap_is_an_error(base: str) -> None:
    with pytest.raises(SourceError, match=r"GET .*/x answered more than 1000 bytes"):
        get(base + "/x", max_bytes=1000)


def test_a_header_http_cannot_send_is_an_error_that_does_not_quote_it(base: str) -> None:
    with pytest.raises(SourceError, match=r"the request is not valid HTTP") as caught:
        get(base + "/x", headers={"X-Token": "s3cret\nX-Evil: 1"})
    assert "s3cret" not in str(caught.value)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.3.2.1", True), ("::1", True), ("localhost", True),
     ("LocalHost", True), ("api.localhost", True), ("10.0.0.1", False),
     ("example.com", False), ("localhost.example.com", False), ("", False), (None, False)],
)  # fmt: skip
def test_is_loopback(host: str | None, loopback: bool) -> None:
    assert is_loopback(host) is loopback
