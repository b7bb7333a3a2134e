"""One line of the MCP server's stdin, read: the JSON-RPC message for the SDK's session, or
why it is refused and what to answer (mcp/stdio.py reads and writes the lines).

A line is taken as the SDK's own transport takes it (its ``jsonrpc_message_adapter``) when it
is UTF-8 text that the SDK's model reads. Anything else is refused, never rewritten: bytes
that are not UTF-8 (the SDK's reader made them U+FFFD and a memory was stored so), a lone
surrogate escape or a number past Python's digit limit (the SDK's reader dropped the line and
the client waited for an answer that never came), a line over the request limit, a line that
is not JSON or not a JSON-RPC message. A refused request is answered with a JSON-RPC error
carrying its id when the id can be read from the line, else a null id (JSON-RPC 2.0 §5: the
id could not be detected); the error's ``data.code`` is the chitta code, as the daemon's are
(daemon/protocol.py). Pure.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any, Literal

from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    JSONRPCMessage,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from chitta.daemon.protocol import MAX_REQUEST_BYTES

RequestId = int | str
#: A refused line's kind: a request is answered; a notification is not (nobody waits for it);
#: a response (the client's answer to the server's request) is passed to the session as an
#: error, so what waits for it ends.
Kind = Literal["request", "notification", "response"]


@dataclass(frozen=True, slots=True)
class Refused:
    """A line not handed to the session: its kind, its id (None: it cannot be read) and the
    JSON-RPC error it is answered with."""

    kind: Kind
    id: RequestId | None
    code: int
    message: str
    cause: str  # the chitta error code (errors.py), the error's data.code

    def data(self) -> dict[str, Any]:
        extra = {"limit_bytes": MAX_REQUEST_BYTES} if self.cause == "request_too_large" else {}
        return {"code": self.cause, **extra}


class _Huge:
    """A number past Python's digit limit, kept as a mark where the value would be."""


_HUGE = _Huge()


def _int(digits: str) -> int | _Huge:
    limit = sys.get_int_max_str_digits()
    return _HUGE if limit and len(digits.lstrip("-")) > limit else int(digits)


#: A decoder that reads every JSON value Python can hold, marking the numbers it cannot.
_DECODER = json.JSONDecoder(parse_int=_int)
_SPACE = " \t\n\r"


def read(line: bytes) -> JSONRPCMessage | Refused | None:
    """The message on one line (its newline may be there), why it is refused, or None for a
    blank line."""
    if not line.strip():
        return None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _not_utf8(line, exc)
    try:
        return jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        return _unreadable(text, exc)


def too_long(head: bytes) -> Refused:
    """The refusal of a line longer than the request limit, of which ``head`` was read."""
    return _refused(
        _members(head.decode("utf-8", "surrogateescape")), INVALID_REQUEST, "request_too_large",
        f"the message is longer than {MAX_REQUEST_BYTES:,} bytes, the limit of one line; "
        "nothing was done (a memory is at most 32,768 characters: split a long document)",
    )  # fmt: skip


def _not_utf8(line: bytes, exc: UnicodeDecodeError) -> Refused:
    where = f"byte 0x{line[exc.start]:02x} at offset {exc.start}"
    text = line.decode("utf-8", "surrogateescape")  # each stray byte a lone surrogate
    members = _members(text)
    try:
        found = _odd_value(_DECODER.decode(text))
    except (ValueError, RecursionError):
        found = None
    what = f"{found[0]} is" if found else "the message is"
    return _refused(members, INVALID_PARAMS, "bad_argument",
                    f"{what} not UTF-8 text ({where}); nothing was done")  # fmt: skip


def _unreadable(text: str, exc: ValidationError) -> Refused:
    members = _members(text)
    try:
        value = _DECODER.decode(text)
    except (ValueError, RecursionError):
        return _refused(members, PARSE_ERROR, "bad_argument", f"not JSON: {_first(exc, {})}")
    found = _odd_value(value)
    if found:
        return _refused(members, INVALID_PARAMS, "bad_argument",
                        f"{found[0]} holds {found[1]}; nothing was done")  # fmt: skip
    return _refused(members, INVALID_REQUEST, "bad_argument",
                    f"not a JSON-RPC 2.0 message: {_first(exc, members)}")  # fmt: skip


def _refused(members: dict[str, Any], code: int, cause: str, message: str) -> Refused:
    rid = members.get("id")
    rid = rid if _echoable(rid) else None
    if "method" in members:
        kind: Kind = "request" if "id" in members else "notification"
    elif rid is not None and ("result" in members or "error" in members):
        kind = "response"
    else:
        kind = "request"
    if rid is None and code == INVALID_PARAMS:
        code = PARSE_ERROR  # the line could not be read far enough to know what it asks
    return Refused(kind, rid, code, message, cause)


def _echoable(rid: Any) -> bool:
    """Whether ``rid`` can be sent back as the id: an integer, or a string that is text."""
    if isinstance(rid, int) and not isinstance(rid, bool):
        return True
    return isinstance(rid, str) and _is_text(rid)


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, or a byte that was not UTF-8
        return False
    return True


def _members(text: str) -> dict[str, Any]:
    """The top-level members of the JSON object that ``text`` starts with, in order, as far
    as they can be read (a line cut short, or bad further on, still shows its first ones)."""
    found: dict[str, Any] = {}
    at = _skip(text, 0)
    if not text.startswith("{", at):
        return found
    at += 1
    while True:
        try:
            key, at = _DECODER.raw_decode(text, _skip(text, at))
            at = _skip(text, at)
            if not isinstance(key, str) or not text.startswith(":", at):
                return found
            value, at = _DECODER.raw_decode(text, _skip(text, at + 1))
        except (ValueError, RecursionError):
            return found
        found[key] = value  # a repeated member: the last counts, as for json.loads
        at = _skip(text, at)
        if not text.startswith(",", at):
            return found
        at += 1


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at


def _odd_value(value: Any) -> tuple[str, str] | None:
    """The first place in ``value`` that holds what is not text or not a number Python reads:
    its path (``params.arguments.query``) and what is there."""
    todo: list[tuple[str, Any]] = [("the message", value)]
    while todo:
        path, item = todo.pop()
        if isinstance(item, str) and not _is_text(item):
            return path, "a lone surrogate (a \\ud800-\\udfff escape), which is not text"
        if item is _HUGE:
            return path, f"a number of more than {sys.get_int_max_str_digits():,} digits"
        if isinstance(item, dict):
            for key, inner in reversed(item.items()):
                if not _is_text(key):
                    return path, "a member name that is not text"
                todo.append((_join(path, key), inner))
        elif isinstance(item, list):
            todo.extend((f"{path}[{i}]", inner) for i, inner in reversed(list(enumerate(item))))
    return None


def _join(path: str, key: str) -> str:
    return key if path == "the message" else f"{path}.{key}"


def _first(exc: ValidationError, members: dict[str, Any]) -> str:
    """The SDK's model's first complaint (of the message kind the line looks like), without
    the input it was about."""
    if "method" in members:
        model = "JSONRPCRequest" if "id" in members else "JSONRPCNotification"
    else:
        model = "JSONRPCError" if "error" in members else "JSONRPCResponse"
    errors = exc.errors(include_url=False, include_input=False)
    mine = [e for e in errors if e["loc"][:1] == (model,)] or errors
    first = mine[0]
    what = first.get("ctx", {}).get("error") or first["msg"]  # (json_invalid's, unprefixed)
    where = ".".join(str(part) for part in first["loc"][1:])
    return f"{where}: {what}" if where else str(what)
