"""The client raises what the daemon raised: the same class, code and exit code as in process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chitta.daemon import protocol
from chitta.daemon.client import DaemonClient, DaemonError, error_from_reply
from chitta.errors import (
    BadArgument,
    ChittaError,
    ContentTooShort,
    DaemonBusy,
    DaemonTimeout,
    DaemonUnavailable,
    MemoryNotFound,
    RequestTooLarge,
    StoreLocked,
    UnknownKind,
)


def test_a_refusal_through_the_daemon_is_the_in_process_class(daemon: Path) -> None:
    with DaemonClient(daemon) as client:
        with pytest.raises(MemoryNotFound, match="01NOSUCHMEMORY") as caught:
            client.call("forget", id="01NOSUCHMEMORY")
        assert isinstance(caught.value, DaemonError)  # what callers caught until now
        assert (caught.value.code, caught.value.exit_code) == ("memory_not_found", 3)
        assert caught.value.rpc_code == protocol.CHITTA_ERROR
        with pytest.raises(UnknownKind) as caught:
            client.call("remember", content="a memory of an unknown kind", kind="bogus")
        assert caught.value.exit_code == 2 and caught.value.rpc_code == protocol.INVALID_PARAMS
        with pytest.raises(ContentTooShort):
            client.call("remember", content="short")
        # Refused by the protocol layer rather than by chitta: still bad input, exit 2.
        with pytest.raises(BadArgument, match="unknown method") as caught:
            client.call("no_such_method")
        assert caught.value.rpc_code == protocol.METHOD_NOT_FOUND
        with pytest.raises(BadArgument, match="stratgy") as caught:
            client.call("recall", query="x", stratgy="keyword")
        assert (caught.value.code, caught.value.exit_code) == ("bad_argument", 2)


@pytest.mark.parametrize(
    ("rpc_code", "cls", "code", "exit_code"),
    [
        (protocol.TIMEOUT, DaemonTimeout, "daemon_timeout", 4),
        (protocol.SHUTTING_DOWN, DaemonUnavailable, "daemon_unavailable", 4),
        (protocol.BUSY, DaemonBusy, "daemon_busy", 4),
        (protocol.IDLE, DaemonUnavailable, "daemon_unavailable", 4),
        (protocol.TOO_LARGE, RequestTooLarge, "request_too_large", 2),
        (protocol.PARSE_ERROR, BadArgument, "bad_argument", 2),
        (protocol.INVALID_REQUEST, BadArgument, "bad_argument", 2),
        (protocol.INTERNAL_ERROR, DaemonError, "internal_error", 4),
    ],
)
def test_protocol_errors_become_chitta_errors(rpc_code, cls, code, exit_code) -> None:
    # The error object exactly as the daemon writes it (protocol.error_line).
    line = protocol.error_line(1, rpc_code, "why")
    error = json.loads(line)["error"]
    assert error["data"]["code"] == code
    for given in (error, {"code": rpc_code, "message": "why"}):  # with and without data.code
        exc = error_from_reply(given)
        assert isinstance(exc, cls) and isinstance(exc, DaemonError)
        assert (exc.code, exc.exit_code, exc.rpc_code, str(exc)) == (code, exit_code, rpc_code,
                                                                     "why")  # fmt: skip


def test_classes_that_take_other_arguments_and_unknown_codes_still_raise() -> None:
    locked = error_from_reply({"code": protocol.CHITTA_ERROR, "message": "held by 7",
                               "data": {"code": "store_locked", "exit_code": 4}})  # fmt: skip
    assert isinstance(locked, StoreLocked) and locked.pid is None and str(locked) == "held by 7"
    # MissingExtra(extra, what) builds its own message: a stand-in with its code and exit code.
    extra = error_from_reply({"code": protocol.CHITTA_ERROR, "message": "needs the 'x' extra",
                              "data": {"code": "missing_extra", "exit_code": 6}})  # fmt: skip
    assert isinstance(extra, DaemonError) and isinstance(extra, ChittaError)
    assert (extra.code, extra.exit_code, str(extra)) == ("missing_extra", 6, "needs the 'x' extra")
    # A code this process has no class for keeps the code; the exit code is the daemon's,
    # or 4 when it did not say.
    told = error_from_reply({"code": protocol.CHITTA_ERROR, "message": "m",
                             "data": {"code": "from_a_plugin", "exit_code": 7}})  # fmt: skip
    assert (told.code, told.exit_code) == ("from_a_plugin", 7)
    untold = error_from_reply({"code": protocol.CHITTA_ERROR, "message": "m",
                               "data": {"code": "from_a_plugin"}})  # fmt: skip
    assert (untold.code, untold.exit_code) == ("from_a_plugin", 4)
    bare = error_from_reply({"code": -31999, "message": "m"})
    assert (bare.code, bare.exit_code, bare.rpc_code) == ("daemon_error", 4, -31999)
