"""Generated malformed frames over a real daemon's socket: every framed line gets a JSON-RPC
error of the code its fault calls for (never -32603 internal error), in order, whether the
lines come in one write or in many tiny ones, and the daemon serves a normal request after.

Each generated frame carries the codes it may be answered with (``None``: a result) and the
id the answer must carry, where the frame has a readable one.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chitta.bench.fault import Served
from chitta.bench.hostile import connect
from chitta.daemon import protocol
from chitta.daemon.methods import METHODS

PARSE, REQUEST, PARAMS, METHOD = (protocol.PARSE_ERROR, protocol.INVALID_REQUEST,
                                  protocol.INVALID_PARAMS, protocol.METHOD_NOT_FOUND)  # fmt: skip
ANY_BAD = frozenset({PARSE, REQUEST, PARAMS, METHOD})
#: Python refuses to turn a longer run of digits into an int (sys.get_int_max_str_digits).
INT_DIGITS = 4300
UNREADABLE = "unreadable"  # the answer's id cannot be known (the frame is not JSON)
FRAMES = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@dataclass(frozen=True)
class Frame:
    line: bytes  # without its newline
    codes: frozenset[int | None]  # None: answered with a result
    id: Any = UNREADABLE  # the id the answer carries (None: null), when it can be known
    notification: bool = False  # no answer at all


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12,
)  # fmt: skip
#: Bytes that are not UTF-8 (none of them decodes to a lone surrogate: that is a test below).
NOT_UTF8 = st.sampled_from([b"\xff", b"\xfe", b"\xc3", b"\x80", b"\xc0\xaf", b"\xe2\x82",
                            b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80"])  # fmt: skip


@st.composite
def valid(draw: st.DrawFn, rid: int) -> dict[str, Any]:
    method, params = draw(st.sampled_from([
        ("memory_status", {}),
        ("find_triplets", {"subject": "kayak", "realm": "frames"}),
        ("list_aliases", {"realm": "frames"}),
    ]))  # fmt: skip
    return {"jsonrpc": "2.0", "method": method, "params": params, "id": rid}


def dumps(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


@st.composite
def frames(draw: st.DrawFn, rid: int) -> Frame:
    """One frame of a generated fault (or a valid request or notification among them)."""
    good = draw(valid(rid))
    kind = draw(st.sampled_from(["bytes", "truncated", "nested", "huge_id", "huge_member",
                                 "not_utf8", "jsonrpc", "method", "id", "params", "member",
                                 "valid", "notification"]))  # fmt: skip
    if kind == "bytes":
        junk = draw(st.binary(min_size=1, max_size=300)).replace(b"\n", b" ")
        if not junk.strip():
            junk = b"#" + junk  # a blank line is skipped, not answered
        return Frame(junk, ANY_BAD)
    if kind == "truncated":
        line = dumps(good)
        return Frame(line[: draw(st.integers(1, len(line) - 1))], frozenset({PARSE}))
    if kind == "nested":
        depth = draw(st.integers(1, 100_000))
        opener, closer = draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
        inner = opener * depth + b"1" + closer * depth
        if draw(st.booleans()):  # the whole frame, or a parameter's value
            return Frame(inner, frozenset({PARSE, REQUEST}))
        line = dumps({**good, "params": {"nested": 0}}).replace(b"0}", inner + b"}", 1)
        return Frame(line, frozenset({PARSE, PARAMS}))
    if kind == "huge_id":
        digits = draw(st.integers(19, 6000))
        line = dumps({**good, "id": 0}).replace(b'"id":0', b'"id":' + b"9" * digits)
        if digits > INT_DIGITS:
            return Frame(line, frozenset({PARSE}), None)
        return Frame(line, frozenset({None}), int("9" * digits))
    if kind == "huge_member":  # numbers no field can hold, where text or a list belongs
        big = draw(st.sampled_from([b"1e999", b"-1e999", b"NaN", b"Infinity", b"9" * 400]))
        member = draw(st.sampled_from(["jsonrpc", "method", "params"]))
        line = dumps({**good, member: 0}).replace(f'"{member}":0'.encode(),
                                                  f'"{member}":'.encode() + big)  # fmt: skip
        return Frame(line, frozenset({PARAMS if member == "params" else REQUEST}), rid)
    if kind == "not_utf8":
        line = dumps({**good, "params": {"subject": "kayak", "realm": "frames"},
                      "method": "find_triplets"})  # fmt: skip
        cut = line.index(b"kayak") + draw(st.integers(0, 5))
        return Frame(line[:cut] + draw(NOT_UTF8) + line[cut:], frozenset({PARSE}), None)
    if kind == "jsonrpc":
        value = draw(json_values.filter(lambda v: v != "2.0"))
        return Frame(dumps({**good, "jsonrpc": value}), frozenset({REQUEST}), rid)
    if kind == "method":
        value = draw(json_values.filter(lambda v: not isinstance(v, str) or v not in METHODS))
        code = METHOD if isinstance(value, str) and value else REQUEST
        return Frame(dumps({**good, "method": value}), frozenset({code}), rid)
    if kind == "id":
        value = draw(
            json_values.filter(
                lambda v: v is not None and (isinstance(v, bool) or not isinstance(v, int | str))
            )
        )
        return Frame(dumps({**good, "id": value}), frozenset({REQUEST}), None)
    if kind == "params":
        value = draw(json_values.filter(lambda v: not isinstance(v, dict)))
        return Frame(dumps({**good, "params": value}), frozenset({PARAMS}), rid)
    if kind == "member":
        name = draw(
            st.text(min_size=1, max_size=10).filter(
                lambda n: n not in ("jsonrpc", "method", "params", "id")
            )
        )
        return Frame(dumps({**good, name: draw(json_values)}), frozenset({REQUEST}), rid)
    if kind == "notification":
        return Frame(dumps({k: v for k, v in good.items() if k != "id"}), frozenset(),
                     notification=True)  # fmt: skip
    return Frame(dumps(good), frozenset({None}), rid)


def exchange(daemon: Served, data: bytes, pieces: list[int] | None, answers: int) -> list[bytes]:
    """Send ``data`` (whole, or its first 8 KiB cut into pieces of these sizes, cycled, and
    the rest in 4 KiB writes) from a thread while reading ``answers`` lines; the lines read."""
    with connect(daemon.socket, timeout_s=60) as s:

        def send() -> None:
            at, i = 0, 0
            while pieces and at < min(len(data), 8192):
                s.sendall(data[at : at + pieces[i % len(pieces)]])
                at += pieces[i % len(pieces)]
                i += 1
            step = 4096 if pieces else len(data) or 1
            for start in range(at, len(data), step):
                s.sendall(data[start : start + step])

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        reader = s.makefile("rb")
        lines = []
        for _ in range(answers):
            line = reader.readline()
            if not line:
                break
            lines.append(line)
        sender.join(60)
        return lines


def check_answers(batch: list[Frame], lines: list[bytes]) -> None:
    expected = [f for f in batch if not f.notification]
    assert len(lines) == len(expected), "the daemon closed the connection early"
    for frame, line in zip(expected, lines, strict=True):
        reply = json.loads(line)
        code = reply["error"]["code"] if "error" in reply else None
        assert code != protocol.INTERNAL_ERROR, (frame.line[:200], reply)
        assert code in frame.codes, (frame.line[:200], reply)
        if frame.id != UNREADABLE:
            assert reply["id"] == frame.id, (frame.line[:200], reply)


@st.composite
def batches(draw: st.DrawFn) -> list[Frame]:
    n = draw(st.integers(1, 25))
    return [draw(frames(i + 1)) for i in range(n)]


deliveries = st.none() | st.lists(st.integers(1, 16), min_size=1, max_size=8)


@FRAMES
@given(batch=batches(), pieces=deliveries)
def test_generated_frames_each_get_the_error_their_fault_calls_for(
    shared: Served, serves_normally, batch: list[Frame], pieces: list[int] | None
) -> None:
    data = b"".join(f.line + b"\n" for f in batch)
    lines = exchange(shared, data, pieces, sum(1 for f in batch if not f.notification))
    check_answers(batch, lines)
    serves_normally(shared)


def test_two_thousand_requests_in_one_write_are_answered_in_order(shared, serves_normally):
    batch = []
    for i in range(1, 2001):
        method = "memory_status" if i % 200 == 0 else "no_such_method"
        batch.append(Frame(protocol.request_line(method, {}, i)[:-1],
                           frozenset({None if i % 200 == 0 else METHOD}), i))  # fmt: skip
    data = b"".join(f.line + b"\n" for f in batch)
    check_answers(batch, exchange(shared, data, None, len(batch)))
    serves_normally(shared)


def test_a_request_sent_one_byte_at_a_time_is_served(shared: Served, serves_normally) -> None:
    line = protocol.request_line("find_triplets", {"subject": "kayak", "realm": "frames"}, 7)
    (answer,) = exchange(shared, line, [1], 1)
    assert json.loads(answer)["result"]["ok"]
    serves_normally(shared)


# --- text the store cannot hold, and text past any limit --------------------------------------

#: Text parameters that reach the store or the model, with the rest of a valid request.
TEXT_PARAMS = [("recall", "query", {}), ("reconstruct", "query", {}),
               ("remember", "content", {}), ("get_memory", "id", {}), ("forget", "id", {}),
               ("strengthen", "id", {}), ("weaken", "id", {})]  # fmt: skip


@st.composite
def smuggled(draw: st.DrawFn) -> bytes:
    """A valid request with a lone surrogate in one text parameter: as a JSON escape, or as
    the three bytes that encode it (Python's JSON reader lets those through)."""
    method, name, rest = draw(st.sampled_from(TEXT_PARAMS))
    point = draw(st.integers(0xD800, 0xDFFF))
    around = draw(st.text(alphabet="abcdefgh ", min_size=0, max_size=20))
    marker = "SURROGATE"
    params = {**rest, name: f"a memory about {around}{marker} kayaks"}
    line = protocol.request_line(method, params, 1)
    if draw(st.booleans()):
        return line.replace(marker.encode(), f"\\u{point:04x}".encode())
    return line.replace(marker.encode(), chr(point).encode("utf-8", "surrogatepass"))


@settings(max_examples=30, deadline=None)
@given(line=smuggled())
@example(line=protocol.request_line("recall", {"query": "\ud800"}, 1))
def test_a_lone_surrogate_in_a_text_parameter_is_a_bad_argument(shared, serves_normally, line):
    (answer,) = exchange(shared, line, None, 1)
    error = json.loads(answer)["error"]
    assert error["code"] == protocol.INVALID_PARAMS, error
    assert error["data"]["exit_code"] == 2, error
    serves_normally(shared)


@pytest.mark.parametrize(
    ("method", "name"),
    [("recall", "query"), ("reconstruct", "query"), ("get_memory", "id"), ("forget", "id")],
)
def test_a_mebibyte_of_text_in_a_parameter_is_too_large(shared, serves_normally, method, name):
    # Far inside one request line (4 MiB), far past any parameter's sensible size.
    text = ("kayak " * (1 << 20))[: 1 << 20]
    (answer,) = exchange(shared, protocol.request_line(method, {name: text}, 1), None, 1)
    reply = json.loads(answer)
    assert "error" in reply, f"{method} served a {len(text):,}-character {name}"
    assert reply["error"]["code"] == protocol.INVALID_PARAMS, reply["error"]
    assert reply["error"]["data"]["code"] == "too_large", reply["error"]
    assert name in reply["error"]["message"], reply["error"]
    serves_normally(shared)
