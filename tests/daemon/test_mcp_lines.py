"""mcp/lines.py: which lines reach the SDK's session, and how the others are answered."""

from __future__ import annotations

import pytest
from mcp_types import JSONRPCNotification, JSONRPCRequest

from chitta.daemon.protocol import MAX_REQUEST_BYTES
from chitta.mcp import lines

CALL = b'{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"recall","arguments":%s}}'


def call(rid: bytes, arguments: bytes) -> bytes:
    return CALL % (rid, arguments)


def test_a_message_the_sdk_reads_is_handed_on_as_it_reads_it() -> None:
    message = lines.read(call(b"1", b'{"query":"caf\xc3\xa9 \\ud83d\\ude00"}') + b"\n")
    assert isinstance(message, JSONRPCRequest)
    assert message.params["arguments"]["query"] == "café 😀"


def test_blank_lines_are_nothing() -> None:
    assert lines.read(b"  \r\n") is None


@pytest.mark.parametrize(
    ("line", "code", "said"),
    [
        (call(b"7", b'{"query":"caf\xe9"}'), -32602,
         "params.arguments.query is not UTF-8 text (byte 0xe9 at offset"),
        (call(b'"a"', b'{"query":"\\ud800"}'), -32602, "params.arguments.query holds a lone"),
        (call(b"7", b'{"limit":' + b"9" * 4301 + b"}"), -32602,
         "params.arguments.limit holds a number of more than 4,300 digits"),
        (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[1]}', -32600, "params: "),
    ],
)  # fmt: skip
def test_a_request_that_cannot_be_read_is_refused_with_its_id(line, code, said) -> None:
    refused = lines.read(line)
    assert isinstance(refused, lines.Refused) and refused.kind == "request", refused
    assert refused.id in (7, "a") and refused.code == code, refused
    assert said in refused.message and refused.cause == "bad_argument", refused.message


@pytest.mark.parametrize(
    "line",
    [call(b'"\xff"', b"{}"), call(b'"\\udc00"', b"{}"), call(b"9" * 4301, b"{}"),
     call(b"true", b'"\xff"'), call(b"[1]", b'"\xff"'), b'\xff{"id":1}', b"{not json"],
)  # fmt: skip
def test_an_id_that_cannot_be_sent_back_is_a_null_one(line) -> None:
    refused = lines.read(line)
    assert isinstance(refused, lines.Refused) and refused.id is None, refused


def test_a_refused_notification_is_not_answered_and_a_response_goes_to_the_session() -> None:
    note = lines.read(b'{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\xff"}}')
    assert isinstance(note, lines.Refused) and note.kind == "notification"
    answer = lines.read(b'{"jsonrpc":"2.0","id":3,"result":{"roots":[{"uri":"\\udc00"}]}}')
    assert isinstance(answer, lines.Refused) and (answer.kind, answer.id) == ("response", 3)


def test_the_id_of_an_over_long_line_is_read_from_its_head() -> None:
    head = call(b"12", b'{"query":"' + b"k" * 100)
    refused = lines.too_long(head)
    assert (refused.id, refused.code, refused.cause) == (12, -32600, "request_too_large")
    assert refused.data() == {"code": "request_too_large", "limit_bytes": MAX_REQUEST_BYTES}
    assert lines.too_long(b'{"params":{"x":"kk').id is None  # the id would come after


def test_a_notification_the_sdk_reads_is_handed_on() -> None:
    message = lines.read(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    assert isinstance(message, JSONRPCNotification)
