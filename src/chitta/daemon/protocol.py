"""The daemon's wire format: JSON-RPC 2.0, one message per line, over a Unix socket.

Framing: each request and each response is one JSON object encoded as UTF-8 on a single line
ending in ``\\n`` (compact JSON escapes every newline inside strings, so a message never
contains a raw one). A client may send several requests on one connection; responses come
back in the order the requests were sent. A line longer than :data:`MAX_REQUEST_BYTES` is
answered with an error and the connection is closed, since the rest of it cannot be framed.
An error the daemon sends before it read a request (the connection refused as :data:`BUSY`,
or closed as :data:`IDLE`) has a null ``id``.

This module is standard library only: the hook client imports it and must start fast.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

#: The longest request line accepted, in bytes (a memory is at most 32,768 characters, which
#: is at most 128 KiB of UTF-8 plus its JSON escaping; imports come in batches).
MAX_REQUEST_BYTES = 4 * 1024 * 1024

# JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification#error_object), and ours
# in the -32000..-32099 range the specification leaves to servers.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
TIMEOUT = -32000
TOO_LARGE = -32001
CHITTA_ERROR = -32002  # a chitta error: data.code names it (bad_argument, not_found, …)
SHUTTING_DOWN = -32003
BUSY = -32004  # no room now: the connections or the queue of reads are full; nothing ran
IDLE = -32005  # no complete request line in the connection idle time: the connection closes
#: The notification method that carries a long request's progress.
PROGRESS = "progress"

#: The chitta error code (errors.py) of each protocol-level error, so a client raises the
#: same cause whichever layer refused: a malformed request or unknown method is bad input.
CHITTA_CODES = {
    PARSE_ERROR: "bad_argument",
    INVALID_REQUEST: "bad_argument",
    METHOD_NOT_FOUND: "bad_argument",
    INVALID_PARAMS: "bad_argument",
    INTERNAL_ERROR: "internal_error",
    TIMEOUT: "daemon_timeout",
    TOO_LARGE: "request_too_large",
    SHUTTING_DOWN: "daemon_unavailable",
    BUSY: "daemon_busy",
    IDLE: "daemon_unavailable",
}


class ProtocolError(Exception):
    """A request that cannot be served, with its JSON-RPC error code."""

    def __init__(self, code: int, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


@dataclass(frozen=True, slots=True)
class Request:
    """A parsed JSON-RPC request; ``id`` is None for a notification (no response)."""

    method: str
    params: dict[str, Any]
    id: int | str | None
    notification: bool


def parse_request(line: bytes) -> Request:
    """The request on one line, or a :class:`ProtocolError` saying what is wrong with it."""
    try:
        message = json.loads(line)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ProtocolError(PARSE_ERROR, f"not JSON: {type(exc).__name__}") from None
    if not isinstance(message, dict):
        raise ProtocolError(INVALID_REQUEST, "a request must be a JSON object")
    if message.get("jsonrpc") != "2.0":
        raise ProtocolError(INVALID_REQUEST, 'a request needs "jsonrpc": "2.0"')
    unknown = sorted(set(message) - {"jsonrpc", "method", "params", "id"})
    if unknown:
        raise ProtocolError(INVALID_REQUEST, f"unknown member {unknown[0]!r} in the request")
    method = message.get("method")
    if not isinstance(method, str) or not method:
        raise ProtocolError(INVALID_REQUEST, '"method" must be a non-empty string')
    request_id = message.get("id")
    if request_id is not None and (
        isinstance(request_id, bool) or not isinstance(request_id, int | str)
    ):
        raise ProtocolError(INVALID_REQUEST, '"id" must be a string or an integer')
    params = message.get("params", {})
    if not isinstance(params, dict):
        raise ProtocolError(INVALID_PARAMS, '"params" must be an object of named arguments')
    return Request(method, params, request_id, "id" not in message)


def request_id_of(line: bytes) -> int | str | None:
    """The id of a request that failed to parse, when it can still be read (else None)."""
    try:
        message = json.loads(line)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    rid = message.get("id") if isinstance(message, dict) else None
    return rid if isinstance(rid, int | str) and not isinstance(rid, bool) else None


def result_line(request_id: int | str | None, result: Any) -> bytes:
    return _line({"jsonrpc": "2.0", "id": request_id, "result": result})


def error_line(
    request_id: int | str | None, code: int, message: str, data: dict[str, Any] | None = None
) -> bytes:
    """An error response; ``data.code`` always names the chitta cause (CHITTA_CODES for a
    protocol-level error unless ``data`` names another)."""
    if code in CHITTA_CODES:
        data = {"code": CHITTA_CODES[code], **(data or {})}
    error: dict[str, Any] = {"code": code, "message": message}
    if data:
        error["data"] = data
    return _line({"jsonrpc": "2.0", "id": request_id, "error": error})


def progress_line(request_id: int | str | None, done: int, total: int) -> bytes:
    """A notification of a long request's progress (``done`` of ``total`` units), sent before
    its response when the request asked with ``"_meta": {"progress": true}``."""
    params = {"id": request_id, "done": done, "total": total}
    return _line({"jsonrpc": "2.0", "method": PROGRESS, "params": params})


def request_line(method: str, params: dict[str, Any], request_id: int | str) -> bytes:
    return _line({"jsonrpc": "2.0", "method": method, "params": params, "id": request_id})


def _line(message: dict[str, Any]) -> bytes:
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    # A lone surrogate (JSON "\ud800" decodes to one) cannot be UTF-8: escape it back.
    return text.encode("utf-8", "backslashreplace") + b"\n"
