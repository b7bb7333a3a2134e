"""The daemon's connections: admitted up to a cap, each read one request line at a time
within a time limit, and answered in order.

A connection is served on a thread of its own (:func:`serve_connection`); its requests are
answered one after another, so the replies come back in the order they were sent. Nothing a
client does with its connections can stop the daemon:

- **A cap.** At most ``cap`` connections are open at once (:class:`Admission`); one over it
  gets a single ``daemon_busy`` error line and is closed, so a flood costs one descriptor
  and no thread per connection it opens.
- **An idle time.** A connection that has not sent a complete request line within
  ``idle_s`` of being ready for one is told so and closed. The time is for the whole line,
  not for each read: a client that trickles half a line holds its connection no longer.
- **accept() that rides out shortages.** Out of descriptors, memory or buffers, accept()
  fails; :class:`Acceptor` logs it (at most every few seconds), refuses the waiting
  connection with ``daemon_busy`` when a spare descriptor allows, pauses briefly, and the
  daemon serves on.
"""

from __future__ import annotations

import errno
import logging
import os
import select
import socket
import threading
import time
from collections.abc import Callable

from chitta.daemon import protocol

log = logging.getLogger(__name__)

#: What answers one request line: its reply (None for a notification), progress going to the
#: :class:`Sender` first.
Answer = Callable[[bytes, "Sender"], "bytes | None"]

#: accept()'s errors that mean "short of a resource for now", not "the listener is broken".
SHORTAGES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})
#: How long the accept loop pauses after a shortage, in seconds.
SHORTAGE_PAUSE_S = 0.1
#: A shortage or a refusal is logged at most this often (with how many there were), in seconds.
WARN_EVERY_S = 10.0
#: Bytes asked of the socket per read.
_CHUNK = 65_536


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


class _Idle(Exception):
    """No complete line came within the idle time."""


class LineReader:
    """The request lines of one connection, each of which must arrive whole within
    ``idle_s`` seconds of being asked for (None: no limit)."""

    def __init__(self, conn: socket.socket, *, max_line: int, idle_s: float | None) -> None:
        self._conn = conn
        self._max = max_line
        self._idle_s = idle_s
        self._buffer = bytearray()
        self._poll = select.poll()  # not select(): a descriptor may be numbered over 1024
        self._poll.register(conn, select.POLLIN)

    def line(self) -> bytes:
        """The next line with its newline; at the end, what is left without one (``b""``
        when nothing is). Longer than ``max_line``: that much of it, without its newline.
        Raises :class:`_Idle` when the line did not come in time."""
        deadline = None if self._idle_s is None else time.monotonic() + self._idle_s
        scanned = 0
        while True:
            end = self._buffer.find(b"\n", scanned)
            if end >= 0:
                if end + 1 > self._max:
                    return bytes(self._buffer[: self._max + 1])
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                return line
            if len(self._buffer) > self._max:
                return bytes(self._buffer[: self._max + 1])
            scanned = len(self._buffer)
            self._wait(deadline)
            chunk = self._conn.recv(_CHUNK)
            if not chunk:
                rest = bytes(self._buffer)
                self._buffer.clear()
                return rest
            self._buffer += chunk

    @property
    def pending(self) -> bool:
        """Whether part of a line has arrived."""
        return bool(self._buffer)

    def _wait(self, deadline: float | None) -> None:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not self._poll.poll(None if left is None else int(left * 1000)):
            raise _Idle


def serve_connection(
    conn: socket.socket, answer: Answer, *, max_request: int, idle_s: float | None = None
) -> None:
    """Answer ``conn``'s request lines until it closes, sends a line over ``max_request``
    bytes, sends no complete line within ``idle_s`` seconds, or stops reading its replies
    (a send that waits ``idle_s``); then close it."""
    out = Sender(conn)
    conn.settimeout(idle_s)  # for sends: a client that does not read its replies is let go
    reader = LineReader(conn, max_line=max_request, idle_s=idle_s)
    with conn:
        while True:
            try:
                line = reader.line()
            except _Idle:
                half = " (half a line came)" if reader.pending else ""
                out.send(protocol.error_line(
                    None, protocol.IDLE,
                    f"no complete request within {idle_s:g} s{half}; the connection is closed",
                ))  # fmt: skip
                return
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


def refuse(conn: socket.socket, message: str) -> None:
    """Tell ``conn`` the daemon is busy (one error line, without waiting) and close it."""
    with conn:
        try:
            conn.setblocking(False)  # an empty send buffer takes the line; never wait here
            conn.send(protocol.error_line(None, protocol.BUSY, message))
        except OSError:
            pass


class ThrottledWarning:
    """A warning logged at most every WARN_EVERY_S seconds, with how often it happened."""

    def __init__(self) -> None:
        self._count = 0  # since the last one logged
        self._logged = float("-inf")
        self._lock = threading.Lock()

    def __call__(self, message: str, *args: object) -> None:
        with self._lock:
            self._count += 1
            now = time.monotonic()
            if now - self._logged < WARN_EVERY_S:
                return
            count, self._count, self._logged = self._count, 0, now
        log.warning(f"{message} ({count} times since the last warning)", *args)


class Admission:
    """Counts the open connections against the cap."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.refused = 0  # connections turned away since the start
        self._open = 0
        self._lock = threading.Lock()

    @property
    def open(self) -> int:
        with self._lock:
            return self._open

    def admit(self) -> bool:
        """Take a place for a new connection; False (and counted as refused) when none is
        free."""
        with self._lock:
            if self._open >= self.cap:
                self.refused += 1
                return False
            self._open += 1
            return True

    def release(self) -> None:
        with self._lock:
            self._open -= 1

    def refused_one(self) -> None:
        """Count a connection turned away for another reason (a shortage)."""
        with self._lock:
            self.refused += 1


class Acceptor:
    """``accept()`` on the listener that survives running short of a resource.

    One descriptor is kept in reserve: when accept() fails for want of descriptors, it is
    given up so that the waiting connection can be accepted and told the daemon is busy,
    rather than left hanging in the backlog; then it is taken again (the accept-EMFILE
    technique of libev and nginx)."""

    def __init__(self, listener: socket.socket, admission: Admission) -> None:
        self._listener = listener
        self._admission = admission
        self._spare: int | None = _spare_descriptor()
        self._warn = ThrottledWarning()

    def accept(self) -> socket.socket | None:
        """A new connection; None after a shortage (once the pause is over). Raises
        TimeoutError when none came within the listener's timeout, OSError otherwise."""
        try:
            conn, _ = self._listener.accept()
            return conn
        except OSError as exc:
            if exc.errno not in SHORTAGES:
                raise
            self._warn("accept() failed: %s; serving on with %d connections open",
                       os.strerror(exc.errno or 0), self._admission.open)  # fmt: skip
            if exc.errno in (errno.EMFILE, errno.ENFILE):
                self._refuse_one()
            time.sleep(SHORTAGE_PAUSE_S)
            return None

    def close(self) -> None:
        if self._spare is not None:
            os.close(self._spare)
            self._spare = None

    def _refuse_one(self) -> None:
        """Free the spare descriptor, accept one waiting connection, refuse it, retake it."""
        if self._spare is None:
            self._spare = _spare_descriptor()
            return
        os.close(self._spare)
        self._spare = None
        try:
            conn, _ = self._listener.accept()
        except OSError:
            pass  # another thread took the descriptor, or nobody waits after all
        else:
            self._admission.refused_one()
            refuse(conn, "the daemon is out of file descriptors; try again shortly")
        self._spare = _spare_descriptor()


def _spare_descriptor() -> int | None:
    try:
        return os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


def descriptor_room(reserve: int) -> int | None:
    """How many more descriptors this process may open, keeping ``reserve`` for its own
    files (the store, backups, exports, the model); None when it cannot tell or there is no
    limit."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY:
        return None
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            used = len(os.listdir(folder))
            break
        except OSError:
            continue
    else:
        return None
    return soft - used - reserve
