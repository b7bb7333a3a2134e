"""The REST API against a real daemon serving HTTP: every route, the token, bad input, scope
isolation, the OpenAPI document, and the limits (docs/http.md)."""

from __future__ import annotations

import json
import socket
import stat
import urllib.error
import urllib.request

import pytest

from chitta.http.rest import openapi, rest_operations
from chitta.ops import OPERATIONS

TEXT = "We chose SQLite WAL over a custom log because crash recovery comes free"


def test_health_answers_without_a_token_and_says_nothing(http_daemon) -> None:
    status, body, headers = http_daemon.request("/health", method="GET", token=None)
    assert (status, body) == (200, {"ok": True})
    assert "default-src 'none'" in headers["content-security-policy"]


def test_the_token_file_is_owner_only(http_daemon) -> None:
    mode = stat.S_IMODE((http_daemon.home / "http-token").stat().st_mode)
    assert mode == 0o600 and len(http_daemon.token) >= 40


@pytest.mark.parametrize("path", ["/api/recall", "/openapi.json", "/mcp", "/", "/api/nope"])
def test_every_route_but_health_needs_the_token(http_daemon, path: str) -> None:
    method = "GET" if path in ("/openapi.json", "/") else "POST"
    status, body, headers = http_daemon.request(path, {}, token=None, method=method)
    if path == "/":
        assert status == 200 and "raw" in body  # the login page, after the redirect
        return
    assert status == 401 and body["error"] == "no_token"
    assert headers["www-authenticate"].startswith("Bearer")
    status, body, _ = http_daemon.request(path, {}, token="not-the-token", method=method)
    assert status == 401 and body["error"] == "bad_token"


def test_remember_recall_forget_restore_round_trip(http_daemon) -> None:
    status, done, _ = http_daemon.request(
        "/api/remember", {"content": TEXT, "kind": "wisdom", "realm": "demo", "tags": ["storage"]}
    )
    assert status == 200 and done["ok"] and done["id"]
    status, found, headers = http_daemon.request("/api/recall", {"query": "why not our own "
                                                 "write-ahead log?", "realm": "demo"})  # fmt: skip
    assert status == 200 and found["hits"][0]["id"] == done["id"]
    assert found["confidence"]["band"] == "KNOWN" and headers["cache-control"] == "no-store"
    assert http_daemon.request("/api/forget", {"id": done["id"]})[0] == 200
    status, gone, _ = http_daemon.request("/api/recall", {"query": "write-ahead log",
                                                          "realm": "demo"})  # fmt: skip
    assert done["id"] not in [h["id"] for h in gone["hits"]]
    assert http_daemon.request("/api/restore", {"id": done["id"]})[0] == 200
    status, shown, _ = http_daemon.request("/api/get_memory", {"id": done["id"]})
    assert shown["memory"]["deleted_at"] is None and shown["memory"]["content"] == TEXT


def test_the_same_store_answers_over_the_socket(http_daemon) -> None:
    done = http_daemon.request("/api/remember", {"content": TEXT, "realm": "demo"})[1]
    assert http_daemon.call("get_memory", id=done["id"])["memory"]["content"] == TEXT


def test_scopes_stay_apart(http_daemon) -> None:
    http_daemon.request("/api/remember", {"content": TEXT, "realm": "alpha"})
    _, other, _ = http_daemon.request("/api/recall", {"query": "write-ahead log", "realm": "beta"})
    assert other["hits"] == []
    _, mine, _ = http_daemon.request("/api/recall", {"query": "write-ahead log", "realm": "alpha"})
    assert len(mine["hits"]) == 1
    agent = {"content": "Agent one's own note about the deploy key rotation.", "realm": "alpha",
             "agent_id": "one"}  # fmt: skip
    http_daemon.request("/api/remember", agent)
    _, two, _ = http_daemon.request("/api/recall", {"query": "deploy key rotation", "realm":
                                                    "alpha", "agent_id": "two"})  # fmt: skip
    assert all(h["agent_id"] != "one" for h in two["hits"])


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"query": 5}, 400, "bad_argument"),
        ({}, 400, "bad_argument"),
        ({"query": "x", "nope": 1}, 400, "bad_argument"),
        ({"query": "x", "limit": 100000}, 400, "bad_argument"),
        ({"query": "x", "realm": "bad realm!"}, 400, "bad_scope"),
    ],
)
def test_bad_input_is_a_400_naming_the_parameter(http_daemon, body, status, code) -> None:
    got, reply, _ = http_daemon.request("/api/recall", body)
    assert (got, reply["ok"], reply["error"]) == (status, False, code), reply
    assert "Traceback" not in reply["message"]


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"{not json", "bad_json"),
        (b"[1, 2]", "bad_json"),
        (b'{"query": "\xff\xfe"}', "bad_encoding"),
    ],  # fmt: skip
)
def test_a_body_that_is_not_a_json_object_is_refused(http_daemon, raw: bytes, code: str) -> None:
    status, reply, _ = http_daemon.request("/api/recall", raw=raw)
    assert (status, reply["error"]) == (400, code)


def test_an_oversized_body_is_refused_before_it_is_read_whole(http_daemon) -> None:
    # Only the headers and a little of the body are sent: the answer comes without the rest.
    host, port = http_daemon.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as conn:
        conn.sendall(f"POST /api/remember HTTP/1.1\r\nHost: {host}:{port}\r\n"
                     f"Authorization: Bearer {http_daemon.token}\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {5 << 20}\r\n\r\n"
                     '{"content": "xxxx'.encode())  # fmt: skip
        answer = b""
        while b"request_too_large" not in answer and (chunk := conn.recv(65536)):
            answer += chunk  # the headers and the body may come in two packets
    assert answer.startswith(b"HTTP/1.1 413") and b"request_too_large" in answer


def test_a_missing_memory_is_a_404_and_an_unknown_operation_too(http_daemon) -> None:
    status, reply, _ = http_daemon.request("/api/get_memory", {"id": "01NOSUCH00000000000000000"})
    assert (status, reply["error"]) == (404, "memory_not_found")
    status, reply, _ = http_daemon.request("/api/teleport", {})
    assert (status, reply["error"]) == (404, "unknown_operation")
    status, reply, _ = http_daemon.request("/api/migrate", {"source": "a", "destination": "b"})
    assert status == 404  # a local operation: never through a daemon


def test_no_memory_text_reaches_the_daemons_log(http_daemon) -> None:
    secret = "The vault passphrase hint is purple-elephant-42 on the staging box."
    http_daemon.request("/api/remember", {"content": secret, "realm": "demo"})
    http_daemon.request("/api/recall", {"query": "purple-elephant-42", "realm": "demo"})
    log = (http_daemon.home.parent / f"{http_daemon.home.name}-serve.log").read_text()
    assert "purple-elephant" not in log


def test_edit_changes_kind_and_tags_and_keeps_the_text(http_daemon) -> None:
    done = http_daemon.request("/api/remember", {"content": TEXT, "realm": "demo"})[1]
    status, edited, _ = http_daemon.request("/api/edit_memory", {"id": done["id"], "kind":
                                            "wisdom", "tags": ["storage", "db"]})  # fmt: skip
    assert status == 200
    memory = edited["memory"]
    assert (memory["kind"], memory["tags"], memory["content"]) == ("wisdom", ["storage", "db"],
                                                                   TEXT)  # fmt: skip
    status, reply, _ = http_daemon.request("/api/edit_memory", {"id": done["id"]})
    assert (status, reply["error"]) == (400, "bad_argument")


def test_the_openapi_document_matches_the_operations(http_daemon) -> None:
    status, doc, _ = http_daemon.request("/openapi.json", method="GET")
    assert status == 200 and doc == json.loads(json.dumps(openapi()))
    assert doc["openapi"].startswith("3.1")
    offered = {path.removeprefix("/api/") for path in doc["paths"] if path.startswith("/api/")}
    assert offered == {name for name, op in OPERATIONS.items() if not op.local}
    for name, op in rest_operations().items():
        body = doc["paths"][f"/api/{name}"]["post"]["requestBody"]["content"]["application/json"]
        schema = body["schema"]
        assert set(schema["properties"]) == {p.name for p in op.params}, name
        assert set(schema.get("required", [])) == {p.name for p in op.params if p.required}
        assert schema["additionalProperties"] is False
    assert doc["paths"]["/health"]["get"]["security"] == []


def test_the_rate_limit_answers_429_with_retry_after(http_daemon) -> None:
    for _ in range(12):  # ten failed tokens a minute, then the address waits
        status, _, headers = http_daemon.request("/api/recall", {}, token="wrong")
    assert status == 429 and int(headers["retry-after"]) >= 1
    status, _, _ = http_daemon.request("/api/recall", {"query": "x"})
    assert status == 429  # even with the right token, for the rest of the minute


def test_a_request_for_another_host_name_is_refused(http_daemon) -> None:
    status, reply, _ = http_daemon.request("/api/recall", {"query": "x"},
                                           headers={"Host": "evil.example:80"})  # fmt: skip
    assert (status, reply["error"]) == (421, "bad_host")


def login(http_daemon) -> dict[str, str]:
    """Log in as the browser does; the session's cookies."""
    import http.cookies

    form = f"token={http_daemon.token}".encode()
    request = urllib.request.Request(http_daemon.url + "/login", data=form, method="POST")

    class Keep(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # the 303 is the answer itself
            return None

    opener = urllib.request.build_opener(Keep)
    try:
        opener.open(request, timeout=30)
    except urllib.error.HTTPError as exc:
        assert exc.code == 303 and exc.headers["location"] == "/"
        jar = http.cookies.SimpleCookie()
        for header in exc.headers.get_all("set-cookie"):
            jar.load(header)
            assert "samesite=strict" in header.lower()
        return {k: m.value for k, m in jar.items()}
    raise AssertionError("no redirect after the login")


def test_a_browser_session_needs_its_csrf_token_and_origin_for_a_change(http_daemon) -> None:
    jar = login(http_daemon)
    cookie = "; ".join(f"{k}={v}" for k, v in jar.items())
    body = {"content": TEXT, "realm": "demo"}
    status, reply, _ = http_daemon.request("/api/remember", body, token=None,
                                           headers={"Cookie": cookie})  # fmt: skip
    assert (status, reply["error"]) == (403, "csrf")
    host = http_daemon.url.removeprefix("http://")
    status, reply, _ = http_daemon.request(
        "/api/remember",
        body,
        token=None,
        headers={
            "Cookie": cookie,
            "X-CSRF-Token": jar["chitta_csrf"],
            "Origin": "http://evil.example",
        },
    )
    assert (status, reply["error"]) == (403, "csrf")
    status, reply, _ = http_daemon.request(
        "/api/remember",
        body,
        token=None,
        headers={"Cookie": cookie, "X-CSRF-Token": jar["chitta_csrf"], "Origin": f"http://{host}"},
    )
    assert status == 200 and reply["ok"]
    # A read needs the session only; after logging out the session is gone.
    status, _, _ = http_daemon.request("/openapi.json", method="GET", token=None,
                                       headers={"Cookie": cookie})  # fmt: skip
    assert status == 200
    http_daemon.request(
        "/logout",
        raw=b"",
        token=None,
        headers={"Cookie": cookie, "X-CSRF-Token": jar["chitta_csrf"]},
    )
    status, _, _ = http_daemon.request("/openapi.json", method="GET", token=None,
                                       headers={"Cookie": cookie})  # fmt: skip
    assert status == 401


@pytest.mark.parametrize(
    ("path", "kind"),
    [("/static/app.js", "javascript"), ("/static/app.css", "text/css"),
     ("/static/favicon.svg", "image/svg+xml"), ("/login", "text/html")],
)  # fmt: skip
def test_the_browsers_own_files_are_served_without_the_token(http_daemon, path, kind) -> None:
    req = urllib.request.Request(http_daemon.url + path)
    with urllib.request.urlopen(req, timeout=30) as reply:
        assert reply.status == 200 and kind in reply.headers["content-type"]
        assert "script-src 'self'" in reply.headers["content-security-policy"]
        text = reply.read().decode()
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")  # nothing remote


def test_the_openapi_document_is_valid_openapi_3_1() -> None:
    from openapi_spec_validator import validate

    validate(openapi())
