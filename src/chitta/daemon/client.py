"""A JSON-RPC client of the daemon: standard library only, so hooks start fast."""

from __future__ import annotations

import itertools
import json
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chitta.daemon import protocol
from chitta.errors import ChittaError, DaemonUnavailable


class DaemonError(ChittaError):
    """The daemon answered with an error; ``rpc_code`` is the JSON-RPC code, ``code`` chitta's."""

    def __init__(self, rpc_code: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.rpc_code = rpc_code
        self.code = code or "daemon_error"
        # Bad input keeps its meaning (exit 2) across the socket.
        self.exit_code = (
            2 if rpc_code in (protocol.INVALID_PARAMS, protocol.METHOD_NOT_FOUND) else 4
        )


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
        """The result of ``method``, or a :class:`DaemonError` with the daemon's reason.

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
            error = reply["error"]
            raise DaemonError(
                error["code"], error["message"], (error.get("data") or {}).get("code")
            )
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
