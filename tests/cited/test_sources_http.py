"""The http source against a real JSON search server on 127.0.0.1, run by the test in a thread."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from chitta.cited.base import SourceError
from chitta.cited.settings import CitedSettings, SourceConfig
from chitta.cited.sources import build_sources
from chitta.cited.sources.http_json import HttpJsonSource, fill, lookup

QUERY = "where do the tomatoes grow"
DOCS = [
    {"id": "d1", "document": {"content": "Tomatoes grow beside the basil"}, "score": 0.91},
    {"id": "d2", "document": {"content": "The greenhouse holds the tomatoes"}, "score": 0.72},
    {"id": "d3", "document": {"content": ""}, "score": 0.5},  # empty: skipped
    {"id": "d4", "document": {"content": "Water them every morning"}, "score": 0.33},
]
SLOW_S = 2.0
#: Routes whose reply trickles: the body (its length promised) or the headers.
TRICKLE = {
    "/trickle-body": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    b"Content-Length: 1000\r\n\r\n[",
    "/trickle-headers": b"HTTP/1.1 200 OK\r\nX-Padding: ",
}
TRICKLE_EVERY_S = 0.05
TRICKLE_BYTES = 100  # 5 s in all, ten times the timeout the test sets


class Handler(BaseHTTPRequestHandler):
    """Answers by path; records every request on the server."""

    def log_message(self, *args: object) -> None:  # keep the test output clean
        pass

    def do_GET(self) -> None:
        self.answer(None)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.answer(json.loads(self.rfile.read(length)) if length else None)

    def answer(self, body: Any) -> None:
        parts = urllib.parse.urlsplit(self.path)
        params = dict(urllib.parse.parse_qsl(parts.query))
        self.server.seen.append(  # type: ignore[attr-defined]
            {
                "method": self.command,
                "path": parts.path,
                "params": params,
                "body": body,
                "headers": dict(self.headers),
            }  # fmt: skip
        )
        route = parts.path
        if route == "/search":
            self.send_json(200, {"data": {"hits": DOCS, "total": len(DOCS)}})
        elif route == "/flat":
            self.send_json(200, [{"text": "first"}, {"text": "second"}, {"text": "third"}])
        elif route == "/nested-list":
            self.send_json(200, {"pages": [{"items": [{"t": "in page zero"}]}]})
        elif route == "/error":
            # Servers sometimes echo the input; the message must not quote it.
            self.send_json(500, {"error": f"index broken while searching {QUERY!r}"})
        elif route == "/html":
            self.send_raw(200, b"<html><body>search</body></html>", "text/html")
        elif route == "/not-a-list":
            self.send_json(200, {"data": {"hits": {"id": "d1"}}})
        elif route == "/bad-items":
            self.send_json(200, {"data": {"hits": [{"document": {"body": "x"}, "score": "high"}]}})
        elif route == "/text-number":
            self.send_json(200, [{"text": 42}])
        elif route == "/bad-score":
            self.send_json(200, [{"text": "ok", "score": "high"}])
        elif route == "/slow":
            time.sleep(SLOW_S)
            self.send_json(200, [])
        elif route in TRICKLE:
            self.trickle(TRICKLE[route])
        elif route == "/moved":
            self.send_response(302)
            self.send_header("Location", "/search")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_json(404, {"error": "no such path"})

    def trickle(self, head: bytes) -> None:
        """``head`` at once, then a byte every TRICKLE_EVERY_S: each read gets something well
        within any socket timeout, and the reply never ends in time."""
        try:
            self.wfile.write(head)
            for _ in range(TRICKLE_BYTES):
                time.sleep(TRICKLE_EVERY_S)
                self.wfile.write(b" ")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client cut the exchange off at its deadline

    def send_json(self, status: int, payload: Any) -> None:
        self.send_raw(status, json.dumps(payload).encode(), "application/json")

    def send_raw(self, status: int, data: bytes, kind: str) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up at its deadline (the slow routes)


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def url(server: ThreadingHTTPServer, path: str) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}{path}"


def last(server: ThreadingHTTPServer) -> dict[str, Any]:
    return server.seen[-1]  # type: ignore[attr-defined]


def test_get_sends_query_and_limit_and_reads_nested_paths(server) -> None:
    source = HttpJsonSource("hindsight", url(server, "/search?tier=durable"), results="data.hits",
                            text="document.content", score="score", ref="id")  # fmt: skip
    chunks = source.search(QUERY, 3)
    request = last(server)
    assert request["method"] == "GET"
    assert request["params"] == {"tier": "durable", "query": QUERY, "limit": "3"}
    # The empty text of d3 is skipped; the limit counts the chunks returned.
    assert [(c.text, c.rank, c.score, c.ref) for c in chunks] == [
        ("Tomatoes grow beside the basil", 1, 0.91, "d1"),
        ("The greenhouse holds the tomatoes", 2, 0.72, "d2"),
        ("Water them every morning", 3, 0.33, "d4"),
    ]
    assert chunks[0].source == "hindsight"
    assert chunks[0].meta == {"url": url(server, "/search?tier=durable"), "position": 0}


def test_get_uses_the_configured_parameter_names(server) -> None:
    source = HttpJsonSource("s", url(server, "/search"), results="data.hits",
                            text="document.content", query_param="q", limit_param="k")  # fmt: skip
    source.search(QUERY, 2)
    assert last(server)["params"] == {"q": QUERY, "k": "2"}


def test_post_fills_the_body_template(server) -> None:
    body = {"search": {"text": "{query}", "top_k": "{limit}"}, "note": "asked: {query} ({limit})",
            "tags": ["{query}", 7]}  # fmt: skip
    source = HttpJsonSource("s", url(server, "/search"), method="POST", body=body,
                            results="data.hits", text="document.content", score="score",
                            headers={"X-Token": "t0k"})  # fmt: skip
    chunks = source.search(QUERY, 2)
    request = last(server)
    assert request["method"] == "POST" and request["params"] == {}
    assert request["body"] == {
        "search": {"text": QUERY, "top_k": 2},  # "{limit}" alone becomes the number
        "note": f"asked: {QUERY} (2)",
        "tags": [QUERY, 7],
    }
    assert request["headers"]["X-Token"] == "t0k"
    assert request["headers"]["Content-Type"] == "application/json"
    assert [c.ref for c in chunks] == [None, None]  # no ref path configured
    assert [c.score for c in chunks] == [0.91, 0.72]


def test_post_without_a_template_sends_query_and_limit(server) -> None:
    source = HttpJsonSource("s", url(server, "/search"), method="POST", results="data.hits",
                            text="document.content", query_param="q")  # fmt: skip
    source.search(QUERY, 4)
    assert last(server)["body"] == {"q": QUERY, "limit": 4}


def test_the_reply_itself_as_the_list_and_scores_by_rank(server) -> None:
    chunks = HttpJsonSource("s", url(server, "/flat"), text="text").search(QUERY, 5)
    assert [(c.text, c.rank, c.score) for c in chunks] == [
        ("first", 1, 1.0),
        ("second", 2, 0.5),
        ("third", 3, pytest.approx(1 / 3)),
    ]


def test_a_number_in_a_path_picks_a_list_item(server) -> None:
    source = HttpJsonSource("s", url(server, "/nested-list"), results="pages.0.items", text="t")
    assert [c.text for c in source.search(QUERY, 5)] == ["in page zero"]


@pytest.mark.parametrize(
    ("path", "options", "message"),
    [
        ("/error", {}, r"GET .*/error answered HTTP 500 Internal Server Error: .*index broken"),
        ("/nowhere", {}, r"answered HTTP 404 Not Found"),
        ("/html", {}, r"answered something that is not JSON: <html><body>search"),
        ("/search", {"results": "data.items"},
         r"answered no 'data\.items' \(keys: data\)"),
        ("/not-a-list", {"results": "data.hits"},
         r"answered 'data\.hits' that is keys: id, not a list"),
        ("/bad-items", {"results": "data.hits"},
         r"result 0 has no 'document\.content' \(keys: document, score\)"),
        ("/bad-items", {"results": "data.hits", "text": "document.body", "score": "score"},
         r"result 0: 'score' is a JSON string, not a number"),
        ("/bad-items", {"results": "data.hits", "text": "document.body", "score": "rank"},
         r"result 0 has no 'rank'"),
        ("/text-number", {"text": "text"}, r"result 0: 'text' is a JSON number, not text"),
        ("/moved", {}, r"answered HTTP 302 .*redirects are not followed"),
    ],
)  # fmt: skip
def test_bad_replies_are_source_errors_saying_what(server, path, options, message) -> None:
    kwargs = {"text": "document.content", **options}
    source = HttpJsonSource("s", url(server, path), **kwargs)
    with pytest.raises(SourceError, match=message) as caught:
        source.search(QUERY, 5)
    assert QUERY not in str(caught.value)  # the query is private: never quoted


def test_a_slow_reply_hits_the_timeout(server) -> None:
    source = HttpJsonSource("s", url(server, "/slow"), text="text", timeout_s=0.3)
    started = time.monotonic()
    with pytest.raises(SourceError, match=r"no answer within 0\.3 s \(timeout\)"):
        source.search(QUERY, 5)
    assert time.monotonic() - started < SLOW_S


@pytest.mark.parametrize("path", ["/trickle-body", "/trickle-headers"])
def test_a_trickling_reply_is_cut_off_at_the_timeout(server, path: str) -> None:
    """The timeout bounds the whole exchange, not each read: a server sending a byte now and
    then would otherwise hold the search (and its thread, and the CLI's exit) for as long as
    it likes."""
    source = HttpJsonSource("s", url(server, path), text="text", timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(SourceError, match=r"no answer within 0\.5 s \(timeout\)"):
        source.search(QUERY, 5)
    assert time.monotonic() - started < 2.0  # the trickle lasts 5 s


def test_an_http_sources_timeout_is_capped_at_the_source_timeout() -> None:
    """The call stops waiting at source_timeout_s; an exchange running on past it would only
    hold a thread, and the CLI's exit, for nothing."""
    config = SourceConfig("h", "http", 0.8, {"url": "http://127.0.0.1:9/s", "text": "t",
                                             "timeout_s": 30.0})  # fmt: skip
    shorter = SourceConfig("g", "http", 0.8, {"url": "http://127.0.0.1:9/s", "text": "t",
                                              "timeout_s": 0.5})  # fmt: skip
    settings = CitedSettings(sources=(config, shorter), source_timeout_s=2.0)
    sources = build_sources(settings, None)
    assert [s.timeout_s for s in sources] == [2.0, 0.5]  # type: ignore[attr-defined]


def test_nothing_listening_is_a_source_error() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    source = HttpJsonSource("s", f"http://127.0.0.1:{port}/search", text="text")
    with pytest.raises(SourceError, match=r"connection refused"):
        source.search(QUERY, 5)


def test_fill_and_lookup() -> None:
    assert fill({"a": ["{limit}", "{query}!"], "b": 1.5}, "q", 3) == {"a": [3, "q!"], "b": 1.5}
    data = {"a": {"b": [{"c": 1}, {"c": 2}]}}
    assert lookup(data, "a.b.1.c") == 2
    assert lookup(data, "a.b.-1.c") == 2
    assert lookup(data, "") is data
    missing = lookup(data, "a.b.5.c")
    assert missing is lookup(data, "a.x") and missing is not None
