"""Generated tool arguments at the MCP wire: a real `python -m chitta mcp` on stdio (chitta's
own transport, mcp/stdio.py, and the SDK's dispatch) in front of a real daemon, sent raw
JSON-RPC lines. Every call is answered — a tool result, flagged as an error with a chitta
code when the arguments are wrong, or a JSON-RPC error — never an internal error, and the
server answers a normal call after. A line that cannot be read is answered too, with the
request's id when it can be read, else a null one; nothing is ever rewritten.

(The checks of each operation's parameters have their own property test over the daemon;
this one is about what reaches them through MCP.)
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chitta.bench.fault import Served
from chitta.daemon.protocol import MAX_REQUEST_BYTES
from chitta.errors import error_class
from chitta.mcp.server import tools

REPLY_TIMEOUT_S = 60.0
#: How long a call the server may have dropped is waited for.
DROPPED_TIMEOUT_S = 3.0
TOOLS = {op.name: op.input_schema() for op in tools()}


class Wire:
    """A `chitta mcp` process, spoken to in raw lines on its stdin and stdout."""

    def __init__(self, daemon: Served) -> None:
        env = {
            "CHITTA_HOME": str(daemon.home),
            "PATH": os.environ.get("PATH", ""),
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
            "CHITTA_REALM": "mcpwire",
        }
        self.proc = subprocess.Popen([sys.executable, "-m", "chitta", "mcp"], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=daemon.home.parent)  # fmt: skip
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "fault", "version": "1"}})  # fmt: skip
        self.send_raw(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def _read(self) -> None:
        for line in iter(self.proc.stdout.readline, b""):  # type: ignore[union-attr]
            self.lines.put(line)

    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]

    def request(self, method: str, params: Any, *, raw: bytes | None = None,
                timeout_s: float = REPLY_TIMEOUT_S) -> dict[str, Any]:  # fmt: skip
        """The response to one request (``raw``: its line as given, with the id spliced in
        for ``"ID"``); TimeoutError when none comes."""
        self.next_id += 1
        rid = self.next_id
        if raw is None:
            line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method,
                               "params": params}).encode() + b"\n"  # fmt: skip
        else:
            line = raw.replace(b'"ID"', str(rid).encode())
        self.send_raw(line)
        while True:
            try:
                reply = json.loads(self.lines.get(timeout=timeout_s))
            except queue.Empty:
                raise TimeoutError(f"no reply to {line[:200]!r}") from None
            if reply.get("id") == rid:
                return reply

    def answer(self, raw: bytes, rid: int | str | None = None) -> dict[str, Any]:
        """The reply to ``raw`` (a line sent as it is), the next one whose id is ``rid``."""
        self.send_raw(raw)
        while True:
            try:
                reply = json.loads(self.lines.get(timeout=REPLY_TIMEOUT_S))
            except queue.Empty:
                raise TimeoutError(f"no reply to {raw[:200]!r}") from None
            if "id" in reply and reply["id"] == rid:
                return reply

    def call(self, tool: str, arguments: Any, **kw: Any) -> dict[str, Any]:
        return self.request("tools/call", {"name": tool, "arguments": arguments}, **kw)

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def wire(shared: Served) -> Iterator[Wire]:
    w = Wire(shared)
    try:
        yield w
    finally:
        w.close()


def tool_error_or_result(reply: dict[str, Any]) -> dict[str, Any] | None:
    """The tool's JSON (None for the SDK's refusal of the call's shape), after checking that
    nothing was an internal error."""
    if "error" in reply:
        assert reply["error"]["code"] in (-32602, -32600), reply  # the SDK refused the shape
        return None
    (block,) = reply["result"]["content"]
    body = json.loads(block["text"])
    assert reply["result"]["isError"] is (not body["ok"]), reply
    if not body["ok"]:
        assert body["error"] != "internal_error" and body.get("rpc_code") != -32603, body
        assert error_class(body["error"]) is not None, f"an unknown error code: {body}"
    return body


def serves_normally(wire: Wire) -> None:
    body = tool_error_or_result(wire.call("memory_status", {}))
    assert body is not None and body["ok"]


# --- generated arguments ------------------------------------------------------------------

leaves = (st.none() | st.booleans() | st.integers(-(10**30), 10**30)
          | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40))  # fmt: skip
json_values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                           max_leaves=10)  # fmt: skip
WORDS = st.sampled_from(["kayak", "harbor", "lantern", "the build passed", "SQLite WAL"])


def plausible(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values of a property's own type (within and past its bounds), or its enum's."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"]) | st.text(max_size=12)
    kind = schema.get("type")
    if kind == "integer":
        return st.integers(-5, 300) | st.integers(-(2**70), 2**70)
    if kind == "number":
        return st.floats(-2, 2, allow_nan=False) | st.floats(allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(WORDS | st.text(max_size=20), max_size=5)
    if kind == "object":
        return st.dictionaries(st.sampled_from(["after", "before", "ago", "confidence", "x"]),
                               WORDS | st.sampled_from(["sure", "vague", "2026-01-01"])
                               | json_values, max_size=4)  # fmt: skip
    return WORDS | st.text(max_size=60)


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A tool and arguments for it: each property left out, plausible or of any JSON type,
    sometimes an argument the tool does not take."""
    tool = draw(st.sampled_from(sorted(TOOLS)))
    args: dict[str, Any] = {}
    for name, schema in TOOLS[tool]["properties"].items():
        how = draw(st.sampled_from(["leave", "plausible", "plausible", "any"]))
        if how == "plausible":
            args[name] = draw(plausible(schema))
        elif how == "any":
            args[name] = draw(json_values)
    if draw(st.integers(0, 9)) == 0:
        args[draw(st.text(min_size=1, max_size=12))] = draw(json_values)
    return tool, args


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call=tool_calls())
@example(call=("recall", {"query": "kayak", "limit": 10**30}))
@example(call=("remember", {"content": "kayak", "confidence": 1e308}))
@example(call=("add_triplet", {"subject": [], "predicate": {}, "object": None}))
def test_generated_tool_arguments_get_a_tool_error_never_an_internal_one(wire, call) -> None:
    tool, args = call
    tool_error_or_result(wire.call(tool, args))


@pytest.mark.parametrize("arguments", [[1, 2], "text", 7, True])
def test_arguments_that_are_not_an_object_are_refused_by_the_sdk(wire, arguments) -> None:
    assert tool_error_or_result(wire.call("recall", arguments)) is None
    serves_normally(wire)


@pytest.mark.parametrize(
    ("junk", "code"),
    [(b"{not json\n", -32700), (b"\xff\xfe\x00\n", -32700), (b"[" * 50_000 + b"\n", -32700),
     (b'"just text"\n', -32600), (b'{"jsonrpc":"2.0","id":"\xff","method":"x"}\n', -32700)],
)  # fmt: skip
def test_a_line_that_is_no_request_is_answered_with_a_null_id(wire, junk, code) -> None:
    # JSON-RPC 2.0: an error in detecting the id is answered with a null one.
    reply = wire.answer(junk, None)
    assert reply["error"]["code"] == code, reply
    assert reply["error"]["data"]["code"] == "bad_argument", reply
    serves_normally(wire)


def test_a_request_of_the_wrong_shape_is_answered_with_its_id(wire) -> None:
    reply = wire.answer(b'{"jsonrpc":"2.0","id":"x","method":"tools/call","params":7}\n', "x")
    assert reply["error"]["code"] == -32600, reply
    assert "params" in reply["error"]["message"], reply
    serves_normally(wire)


def test_blank_lines_are_passed_over(wire) -> None:
    wire.send_raw(b"\n  \r\n\n")
    serves_normally(wire)


# --- what the SDK's own reader dropped or rewrote -----------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [
        b'{"query":"\\ud800 kayak"}',
        b'{"id":"\\udc00"}',
        b'{"query":"kayak","limit":' + b"9" * 5000 + b"}",
    ],
)
def test_a_call_the_sdk_cannot_read_is_still_answered(wire, arguments) -> None:
    tool = b"forget" if b'"id"' in arguments else b"recall"
    raw = (b'{"jsonrpc":"2.0","id":"ID","method":"tools/call","params":{"name":"' + tool
           + b'","arguments":' + arguments + b"}}\n")  # fmt: skip
    try:
        reply = wire.request("", None, raw=raw, timeout_s=DROPPED_TIMEOUT_S)
    finally:
        serves_normally(wire)
    body = tool_error_or_result(reply)
    assert body is None or body["error"] == "bad_argument", body


def test_a_memory_with_bytes_that_are_not_utf8_is_refused_not_rewritten(wire) -> None:
    raw = (
        b'{"jsonrpc":"2.0","id":"ID","method":"tools/call","params":{"name":"remember",'
        b'"arguments":{"content":"caf\xe9 au lait every morning at the harbor"}}}\n'
    )
    body = tool_error_or_result(wire.request("", None, raw=raw))
    assert body is None or not body["ok"], f"stored as {body}"


def test_a_mebibyte_query_through_mcp_is_too_large(wire) -> None:
    body = tool_error_or_result(wire.call("recall", {"query": ("kayak " * (1 << 20))[: 1 << 20]}))
    assert body is not None and not body["ok"], f"served: {str(body)[:200]}"
    assert body["error"] == "too_large", body
    serves_normally(wire)


def test_bytes_that_are_not_utf8_are_refused_naming_the_argument_and_the_byte(wire) -> None:
    raw = (b'{"jsonrpc":"2.0","id":"ID","method":"tools/call","params":{"name":"remember",'
           b'"arguments":{"content":"caf\xe9 au lait"}}}\n')  # fmt: skip
    reply = wire.request("", None, raw=raw)
    assert reply["error"]["code"] == -32602, reply
    message = reply["error"]["message"]
    assert "params.arguments.content" in message and "0xe9" in message, message
    assert reply["error"]["data"]["code"] == "bad_argument", reply
    found = tool_error_or_result(wire.call("recall", {"query": "au lait", "strategy": "keyword"}))
    assert found is not None and found["ok"] and "lait" not in json.dumps(found), found


def test_a_line_over_the_request_limit_is_too_large_and_the_server_reads_on(wire) -> None:
    content = b"kayak " * (MAX_REQUEST_BYTES // 6 + 10)
    raw = (b'{"jsonrpc":"2.0","id":"ID","method":"tools/call","params":{"name":"remember",'
           b'"arguments":{"content":"' + content + b'"}}}\n')  # fmt: skip
    reply = wire.request("", None, raw=raw)
    assert reply["error"]["code"] == -32600, reply
    assert reply["error"]["data"]["code"] == "request_too_large", reply
    assert f"{MAX_REQUEST_BYTES:,} bytes" in reply["error"]["message"], reply
    serves_normally(wire)


def test_a_line_just_within_the_request_limit_is_read(wire) -> None:
    head = b'{"jsonrpc":"2.0","id":"ID","method":"tools/call","params":{"name":"memory_status",'
    raw = head + b'"arguments":{}}' + b" " * MAX_REQUEST_BYTES
    raw = raw[: MAX_REQUEST_BYTES - 2] + b"}\n"
    assert len(raw) == MAX_REQUEST_BYTES
    body = tool_error_or_result(wire.request("", None, raw=raw))
    assert body is not None and body["ok"], body
