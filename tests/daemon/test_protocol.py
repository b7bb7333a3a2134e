"""The wire format and the parameter checks, as pure functions."""

import json

import pytest

from chitta.daemon import protocol
from chitta.daemon.methods import METHODS, check_params
from chitta.errors import BadArgument


def test_a_request_round_trips_and_a_notification_has_no_id() -> None:
    line = protocol.request_line("recall", {"query": "q"}, 7)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    request = protocol.parse_request(line)
    assert (request.method, request.params, request.id, request.notification) == (
        "recall", {"query": "q"}, 7, False,
    )  # fmt: skip
    note = protocol.parse_request(b'{"jsonrpc": "2.0", "method": "memory_status"}')
    assert note.notification and note.params == {}


def test_newlines_inside_strings_never_break_the_framing() -> None:
    line = protocol.request_line("remember", {"content": "two\nlines"}, 1)
    assert line.count(b"\n") == 1
    assert protocol.parse_request(line).params["content"] == "two\nlines"


@pytest.mark.parametrize("rid", [True, 1.5, [1], {"a": 1}])
def test_an_id_must_be_a_string_or_an_integer(rid) -> None:
    line = json.dumps({"jsonrpc": "2.0", "method": "recall", "id": rid}).encode()
    with pytest.raises(protocol.ProtocolError) as caught:
        protocol.parse_request(line)
    assert caught.value.code == protocol.INVALID_REQUEST


def test_the_methods_are_the_operations() -> None:
    # Their parameter checks are the operations' (tests/ops/test_spec.py).
    assert METHODS["recall"].name == "recall" and "query" in METHODS["recall"].by_name
    with pytest.raises(BadArgument, match="needs the parameter 'query'"):
        check_params(METHODS["recall"], {})
