"""A JSON-RPC client of the daemon: standard library only, so hooks start fast."""

from __future__ import annotations

import functools
import itertools
import json
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chitta.daemon import protocol
from chitta.errors import ChittaError, DaemonUnavailable, error_class


class DaemonError(ChittaError):
    """An error the daemon answered with; ``rpc_code`` is its JSON-RPC code.

    What a client raises is an instance of the very class the daemon raised (looked up by its
    ``code``, errors.error_class) that is also a DaemonError, so ``except MemoryNotFound`` and
    ``except DaemonError`` both catch it, and its ``code`` and ``exit_code`` are those of the
    same refusal in process. A code this process has no class for gives a plain DaemonError
    with that code.
    """

    code = "daemon_error"
    exit_code = 4
    rpc_code: int = protocol.INTERNAL_ERROR
    _by_code = False  # a stand-in, never the class of a code


#: The exit code of a cause this process has no class for, when the daemon does not say.
UNKNOWN_EXIT_CODE = 4


@functools.cache
def _remote(cls: type[ChittaError]) -> type[DaemonError]:
    """``cls`` as raised through the daemon: a subclass of both ``cls`` and DaemonError."""
    if issubclass(cls, DaemonError):
        return cls
    names = {"__module__": cls.__module__, "__qualname__": cls.__qualname__, "_by_code": False}
    if cls is ChittaError:  # DaemonError is already one: no order of the two bases exists
        return type(cls.__name__, (DaemonError,),
                    {**names, "code": cls.code, "exit_code": cls.exit_code})  # fmt: skip
    return type(cls.__name__, (cls, DaemonError), names)


def error_from_reply(error: dict[str, Any]) -> DaemonError:
    """The exception for a JSON-RPC error object from the daemon (see DaemonError)."""
    rpc_code, message = error.get("code"), str(error.get("message", ""))
    data = error.get("data") if isinstance(error.get("data"), dict) else {}
    code = data.get("code") or protocol.CHITTA_CODES.get(rpc_code) or DaemonError.code
    cls = error_class(code)
    exc: DaemonError | None = None
    if cls is not None:
        try:
            exc = _remote(cls)(message)
        except TypeError:  # a constructor that wants more than a message (MissingExtra)
            exc = None
        if exc is not None and str(exc) != message:
            exc = None  # one that builds its own message from other arguments
    if exc is None:
        exc = DaemonError(message)
        exc.code = code
        said = data.get("exit_code")
        known = cls.exit_code if cls is not None else None
        usable = isinstance(said, int) and not isinstance(said, bool) and 0 < said < 126
        exc.exit_code = known or (said if usable else UNKNOWN_EXIT_CODE)
    exc.rpc_code = rpc_code if isinstance(rpc_code, int) else protocol.INTERNAL_ERROR
    return exc


class DaemonClient:
    """One connection to the daemon; calls are answered in order. Not thread-safe: one
    client per thread."""

    def __init__(self, path: Path, *, timeout_s: float | None = 60.0) -> None:
        self.path = Path(path)
        _check_owner(self.path)
        self._ids = itertools.count(1)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout_s)
        try:
            self._sock.connect(str(self.path))
        except OSError as exc:
            self._sock.close()
            raise DaemonUnavailable(f"no chitta daemon answers on {self.path}: {exc}") from None
        self._reader = self._sock.makefile("rb")

    def call(
        self, method: str, progress: Callable[[int, int], None] | None = None, **params: Any
    ) -> dict[str, Any]:
        """The result of ``method``, or the daemon's error as a :class:`DaemonError` (of the
        class the daemon raised).

        With ``progress``, the daemon reports a long request's progress as it goes, and
        ``progress(done, total)`` is called for each report before the result arrives."""
        request_id = next(self._ids)
        if progress is not None:
            params = {**params, "_meta": {"progress": True}}
        try:
            self._sock.sendall(protocol.request_line(method, params, request_id))
            reply = self._reply(request_id, progress)
        except OSError as exc:
            raise DaemonUnavailable(f"the daemon on {self.path} went away: {exc}") from None
        if reply.get("id") != request_id:
            self.close()  # out of step (an earlier call timed out): this connection is done
            raise DaemonUnavailable(f"the daemon on {self.path} answered another request")
        if "error" in reply:
            raise error_from_reply(reply["error"])
        return reply["result"]

    def _reply(
        self, request_id: int, progress: Callable[[int, int], None] | None
    ) -> dict[str, Any]:
        """The response to ``request_id``, passing the progress notifications before it on."""
        while True:
            line = self._reader.readline()
            if not line:
                raise DaemonUnavailable(f"the daemon on {self.path} closed the connection")
            reply = json.loads(line)
            if reply.get("method") != protocol.PROGRESS:
                return reply
            report = reply.get("params") or {}
            if progress is not None and report.get("id") == request_id:
                progress(int(report.get("done", 0)), int(report.get("total", 0)))

    def close(self) -> None:
        self._reader.close()
        self._sock.close()

    def __enter__(self) -> DaemonClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_owner(path: Path) -> None:
    """Refuse a socket another user made: prompts and memories would go to their process
    (possible when CHITTA_SOCKET_PATH points into a shared folder such as /tmp)."""
    try:
        owner = os.stat(path).st_uid
    except OSError:
        return  # nothing there: connecting fails with its own message
    if owner != os.getuid():
        raise DaemonUnavailable(f"{path} belongs to another user (uid {owner}); not connecting")


def daemon_answers(path: Path) -> bool:
    """Whether a daemon of this user accepts connections on ``path`` (a quick probe)."""
    try:
        _check_owner(path)
    except DaemonUnavailable:
        return False
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(0.5)
    try:
        probe.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()
