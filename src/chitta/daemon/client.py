"""A JSON-RPC client of the daemon: standard library only, so hooks start fast."""

from __future__ import annotations

import errno
import functools
import itertools
import json
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chitta.daemon import protocol
from chitta.errors import ChittaError, DaemonBusy, DaemonUnavailable, error_class


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
#: How long a call keeps asking a daemon that is too busy to take it, in seconds (at most the
#: client's timeout), and its first pause, doubled each time.
BUSY_RETRY_S = 1.0
BUSY_PAUSE_S = 0.05


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
    client per thread.

    A call the daemon had no room for (``daemon_busy``: nothing ran) is asked again for up
    to ``busy_retry_s`` seconds before :class:`~chitta.errors.DaemonBusy` is raised; one
    that finds its connection closed for idling before it was read is sent once more on a
    new connection."""

    def __init__(
        self, path: Path, *, timeout_s: float | None = 60.0, busy_retry_s: float = BUSY_RETRY_S
    ) -> None:
        self.path = Path(path)
        self.timeout_s = timeout_s
        self.busy_retry_s = busy_retry_s
        self._ids = itertools.count(1)
        self._connect()

    def _connect(self) -> None:
        _check_owner(self.path)
        give_up, pause = time.monotonic() + self._busy_budget(), BUSY_PAUSE_S
        while True:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._sock.settimeout(self.timeout_s)
            try:
                self._sock.connect(str(self.path))
                break
            except OSError as exc:
                self._sock.close()
                if exc.errno != errno.EAGAIN:
                    raise DaemonUnavailable(
                        f"no chitta daemon answers on {self.path}: {exc}"
                    ) from None
                # The daemon's backlog of connections not yet accepted is full: busy.
                if time.monotonic() + pause >= give_up:
                    raise DaemonBusy(f"the daemon on {self.path} has more connections waiting "
                                     "than it takes in; try again shortly") from None  # fmt: skip
                time.sleep(pause)
                pause *= 2
        self._reader = self._sock.makefile("rb")

    def _busy_budget(self) -> float:
        """How long a call may keep asking a busy daemon: at most the client's timeout."""
        if self.timeout_s is None:
            return self.busy_retry_s
        return min(self.busy_retry_s, self.timeout_s)

    def _reconnect(self) -> None:
        self.close()
        self._connect()

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
        line = protocol.request_line(method, params, request_id)
        give_up, pause, reopened = time.monotonic() + self._busy_budget(), BUSY_PAUSE_S, False
        while True:
            reply = self._exchange(line, request_id, progress)
            # A null id: the daemon said it before reading this request (it refused or closed
            # the connection), or could not read the request's id (a line too long).
            unread = reply.get("id") is None and "error" in reply
            if reply.get("id") != request_id and not unread:
                self.close()  # out of step (an earlier call timed out): this connection is done
                raise DaemonUnavailable(f"the daemon on {self.path} answered another request")
            if "error" not in reply:
                return reply["result"]
            exc = error_from_reply(reply["error"])
            if exc.rpc_code == protocol.IDLE and not reopened:
                reopened = True  # closed before the request came: it never ran
                self._reconnect()
                continue
            if exc.rpc_code == protocol.BUSY and time.monotonic() + pause < give_up:
                time.sleep(pause)
                pause *= 2
                if unread:  # the daemon closed the connection it refused
                    self._reconnect()
                continue
            raise exc

    def _exchange(
        self, line: bytes, request_id: int, progress: Callable[[int, int], None] | None
    ) -> dict[str, Any]:
        """Send one request line; its reply (or what the daemon said before closing)."""
        try:
            self._sock.sendall(line)
        except OSError as exc:
            # Closed by the daemon: it may have said why first (busy, idle).
            said = self._said_before_closing()
            if said is not None:
                return said
            raise DaemonUnavailable(f"the daemon on {self.path} went away: {exc}") from None
        try:
            return self._reply(request_id, progress)
        except OSError as exc:
            raise DaemonUnavailable(f"the daemon on {self.path} went away: {exc}") from None

    def _said_before_closing(self) -> dict[str, Any] | None:
        try:
            line = self._reader.readline()
            said = json.loads(line) if line else None
        except (OSError, ValueError):
            return None
        return said if isinstance(said, dict) and "error" in said else None

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
    except BlockingIOError:
        return True  # it listens with a full backlog: busy, not absent (nothing to start)
    except OSError:
        return False
    finally:
        probe.close()
