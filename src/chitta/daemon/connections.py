"""The daemon's connections: each read one request line at a time and answered in order.

A connection is served on a thread of its own (:func:`serve_connection`); its requests are
answered one after another, so the replies come back in the order they were sent.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable

from chitta.daemon import protocol

#: What answers one request line: its reply (None for a notification), progress going to the
#: :class:`Sender` first.
Answer = Callable[[bytes, "Sender"], "bytes | None"]


class Sender:
    """One connection's way out: responses from its reader thread and progress from a worker
    share it, one whole line at a time."""

    def __init__(self, conn: socket.socket) -> None:
        self._conn = conn
        self._lock = threading.Lock()

    def send(self, data: bytes) -> bool:
        with self._lock:
            try:
                self._conn.sendall(data)
                return True
            except OSError:
                return False


def serve_connection(conn: socket.socket, answer: Answer, *, max_request: int) -> None:
    """Answer ``conn``'s request lines until it closes, sends a line over ``max_request``
    bytes, or stops reading its replies; then close it."""
    out = Sender(conn)
    with conn, conn.makefile("rb") as reader:
        while True:
            try:
                line = reader.readline(max_request + 1)
            except OSError:
                return  # the client went away
            if not line:
                return
            if len(line) > max_request or not line.endswith(b"\n"):
                out.send(protocol.error_line(
                    None, protocol.TOO_LARGE,
                    f"request over {max_request} bytes or not ended by a newline",
                ))  # fmt: skip
                return  # the rest of an oversized line cannot be framed
            if line.strip() == b"":
                continue
            reply = answer(line, out)
            if reply is not None and not out.send(reply):
                return
