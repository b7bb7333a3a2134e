"""`chitta serve`: one process owns the store and answers JSON-RPC on a Unix socket.

The model, the store and its indexes are loaded once and shared by every client. Each
connection has a reader thread (daemon/connections.py), up to a cap on open connections, and
is closed when no complete request line comes within its idle time. Reads run side by side on
a pool that grows with load up to :attr:`Limits.workers` threads (seed 001's 8-16), with a
bounded queue; methods that write run one at a time on a thread of their own, so reads never
keep them waiting (daemon/workers.py). A request that outlives its deadline is answered with
a timeout error while it finishes in the background (a watchdog in all but name: the caller
is never left hanging).

Shutdown (SIGTERM, SIGINT, :meth:`Daemon.stop`, or ``idle_exit_s`` without a request): the
listening socket closes, requests in flight finish, the store flushes and closes, and the
socket file is removed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import stat
import threading
import time
from collections import deque
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chitta import spool
from chitta.api import Chitta
from chitta.config import (
    DAEMON_CONNECTION_IDLE_S,
    DAEMON_MAX_CONNECTIONS,
    DAEMON_WORKERS,
)
from chitta.daemon import connections, memory, protocol
from chitta.daemon.connections import Sender
from chitta.daemon.methods import META, METHODS, Operation, check_params
from chitta.daemon.warmup import Warmup
from chitta.daemon.workers import Workers
from chitta.errors import AlreadyRunning, ChittaError, InputError, SocketUnusable, StoreError
from chitta.files import private_dir
from chitta.ops.spec import Context
from chitta.store.backends import is_database_url
from chitta.subconscious.embedding import EmbedQueue
from chitta.subconscious.schedule import UpkeepSettings
from chitta.subconscious.worker import Subconscious

log = logging.getLogger(__name__)

#: File descriptors kept free of connections for the daemon's own files (the store, its
#: journal, backups, exports, the model), when the connection cap is fitted to the limit.
FD_RESERVE = 32
#: How long a request may run before its caller gets a timeout error, in seconds.
DEADLINE_S = 30.0
#: Latencies kept per method for the status figures (the newest).
LATENCY_WINDOW = 1000
#: The longest path a Unix socket address can hold on Linux, in bytes.
MAX_SOCKET_PATH = 107
#: Progress notifications of a long request are sent at most this often, in seconds.
PROGRESS_EVERY_S = 0.2
#: How often a running daemon looks for a spool written while it was busy or starting.
SPOOL_CHECK_S = 1.0
#: After this many seconds without a request in flight, freed memory goes back to the
#: system (daemon/memory.py, the embedder's release_memory), once per quiet spell.
TRIM_QUIET_S = 1.0


class Stats:
    """Request counts and latencies per method, for `chitta status` (no request content)."""

    def __init__(self) -> None:
        self.started = time.time()
        self._lock = threading.Lock()
        self._count: dict[str, int] = {}
        self._errors: dict[str, int] = {}
        self._ms: dict[str, deque[float]] = {}

    def record(self, method: str, ms: float, ok: bool) -> None:
        with self._lock:
            self._count[method] = self._count.get(method, 0) + 1
            if not ok:
                self._errors[method] = self._errors.get(method, 0) + 1
            self._ms.setdefault(method, deque(maxlen=LATENCY_WINDOW)).append(ms)

    def figures(self) -> dict[str, Any]:
        with self._lock:
            per_method = {
                m: {"requests": n, "errors": self._errors.get(m, 0),
                    "p50_ms": _percentile(self._ms[m], 50), "p95_ms": _percentile(self._ms[m], 95)}
                for m, n in sorted(self._count.items())
            }  # fmt: skip
        return {"pid": os.getpid(), "uptime_s": round(time.time() - self.started, 1),
                "requests": sum(v["requests"] for v in per_method.values()),
                "methods": per_method}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Limits:
    """What one daemon allows its clients at once (docs/daemon.md, "Limits")."""

    #: Connections open at once; one more is told ``daemon_busy`` and closed.
    max_connections: int = DAEMON_MAX_CONNECTIONS
    #: Seconds a connection may take to send a whole request line (None: no limit).
    connection_idle_s: float | None = DAEMON_CONNECTION_IDLE_S
    #: Worker threads at most.
    workers: int = DAEMON_WORKERS
    #: The longest request line, in bytes.
    max_request: int = protocol.MAX_REQUEST_BYTES


def _percentile(values: deque[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))], 3)


class Daemon:
    """The server: a bound socket, its connections and the worker pool over one store."""

    def __init__(
        self,
        chitta: Chitta,
        socket_path: Path,
        *,
        deadline_s: float = DEADLINE_S,
        limits: Limits = Limits(),  # noqa: B008 - frozen: one shared default is safe
        home: Path | None = None,
        idle_exit_s: float | None = None,
        spool_file: Path | None = None,
        upkeep: UpkeepSettings | None = None,
    ) -> None:
        self.chitta = chitta
        #: Where clients spool writes they could not send (chitta/spool.py); taken in here.
        self.spool = spool_file if spool_file is not None else chitta.spool_file
        self._intake: threading.Thread | None = None
        self._spool_checked = float("-inf")  # time.monotonic() of the last look
        self.home = Path(home) if home is not None else chitta.home
        self.path = Path(socket_path)
        self.deadline_s = deadline_s
        self.limits = limits
        self.stats = Stats()
        self.workers = Workers(limits.workers)
        self._writer = threading.Lock()
        self._stopping = threading.Event()
        self._in_flight = 0
        self._idle = threading.Condition()
        #: Stop after this many seconds with no request in flight and none started (None: never).
        self.idle_exit_s = idle_exit_s or None
        self._last_request = time.monotonic()  # guarded by _idle
        self._trimmed = True  # no request since memory was last given back (guarded by _idle)
        #: Why serve_forever returned, for the exit line: None after stop() (a signal).
        self.stopped_because: str | None = None
        #: The HTTP face's address, when `chitta serve --http` runs one (chitta/http/).
        self.http_url: str | None = None
        self._listener = self._bind()
        self.admission = connections.Admission(_fitted_cap(limits.max_connections))
        self._acceptor = connections.Acceptor(self._listener, self.admission)
        self._warn_refused = connections.ThrottledWarning()
        #: Background upkeep (subconscious/worker.py): it writes under the same writer lock
        #: as write requests, and waits while any request is in flight.
        upkeep = upkeep or UpkeepSettings()
        # Under load a remember is stored at once and embedded by the worker (its embedding
        # queue, subconscious/embedding.py). Not with upkeep off, and not on a database that
        # other daemons write too: each of them checks a write against the others' by vector
        # under the store's write lock, and a memory without one would escape that check.
        deferring = upkeep.enabled and not is_database_url(chitta.store.location)
        queue = (EmbedQueue(lambda: self.workers.writes_waiting, defer_at=upkeep.defer_at)
                 if deferring else None)  # fmt: skip
        chitta.embed_queue = queue
        self.upkeep = Subconscious(chitta, upkeep, writer=self._writer,
                                   busy=lambda: self._in_flight > 0, queue=queue)  # fmt: skip
        #: The store's indexes, built in the background once the socket listens.
        self.warmup = Warmup(chitta.store, self._stopping.is_set, self._done)

    # --- the socket -----------------------------------------------------------------------

    def _bind(self) -> socket.socket:
        if len(os.fsencode(self.path)) > MAX_SOCKET_PATH:
            raise StoreError(
                f"socket path {self.path} is longer than {MAX_SOCKET_PATH} bytes; "
                "set CHITTA_SOCKET_PATH to a shorter one"
            )
        try:
            private_dir(self.path.parent)
            self._replace_stale()
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        except OSError as exc:
            raise self._unusable(exc) from None
        try:
            old = os.umask(0o177)  # the socket is owner-only from the moment it exists
            try:
                listener.bind(str(self.path))
            finally:
                os.umask(old)
            os.chmod(self.path, 0o600)
            # A deep backlog: a burst of clients waits its turn (or is told busy) rather than
            # failing to connect with EAGAIN.
            listener.listen(socket.SOMAXCONN)
        except OSError as exc:
            listener.close()
            raise self._unusable(exc) from None
        listener.settimeout(0.2)  # so the accept loop sees a stop request
        return listener

    def _unusable(self, exc: OSError) -> SocketUnusable:
        """The error for a socket that could not be made at :attr:`path` because of ``exc``."""
        reason = exc.strerror or str(exc)
        if exc.filename and os.fsdecode(exc.filename) != str(self.path):
            reason = f"{reason}: {os.fsdecode(exc.filename)}"  # the folder that failed
        return SocketUnusable(
            f"cannot make the daemon's socket {self.path} ({reason}); set "
            "CHITTA_SOCKET_PATH to a path in a folder this user can write"
        )

    def _replace_stale(self) -> None:
        """Remove a socket file left by a daemon that died; refuse one that answers."""
        if not self.path.exists() and not self.path.is_symlink():
            return
        if not stat.S_ISSOCK(os.lstat(self.path).st_mode):
            raise StoreError(f"{self.path} exists and is not a socket; remove it or move it")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.settimeout(1.0)
            probe.connect(str(self.path))
        except OSError:
            self.path.unlink()  # nobody listens: a crashed daemon's socket
            return
        finally:
            probe.close()
        raise AlreadyRunning(f"a chitta daemon already answers on {self.path}")

    # --- serving --------------------------------------------------------------------------

    def serve_forever(self) -> None:
        """Accept connections until :meth:`stop`; then finish in-flight work and clean up."""
        with self._idle:
            self._in_flight += 1  # the warm-up is work: no idle exit while it runs
        self.warmup.start()
        self.upkeep.start()
        try:
            while not self._stopping.is_set():
                self._take_in_spool()  # at the start, then at most every SPOOL_CHECK_S
                try:
                    conn = self._acceptor.accept()
                except TimeoutError:
                    if self._idle_expired():
                        break
                    self._trim_when_quiet()
                    continue
                except OSError:
                    if self._stopping.is_set():
                        break
                    raise
                if conn is not None:
                    self._touch()  # a client that just connected is about to ask something
                    self._open(conn)
        finally:
            self._shutdown()

    def _open(self, conn: socket.socket) -> None:
        """Serve ``conn`` on a thread of its own, or refuse it when the cap is reached (or no
        thread can be started)."""
        if not self.admission.admit():
            self._warn_refused("refused a connection: %d open, the most allowed",
                               self.admission.cap)  # fmt: skip
            connections.refuse(conn, f"the daemon is at its limit of {self.admission.cap} open "
                               "connections; try again shortly")  # fmt: skip
            return
        thread = threading.Thread(target=self._serve, args=(conn,), daemon=True,
                                  name="chitta-conn")  # fmt: skip
        try:
            thread.start()
        except RuntimeError:  # can't start new thread: out of memory or of threads
            self.admission.release()
            self.admission.refused_one()
            self._warn_refused("refused a connection: no thread could be started for it")
            connections.refuse(conn, "the daemon cannot start a thread; try again shortly")

    def _serve(self, conn: socket.socket) -> None:
        try:
            connections.serve_connection(conn, self._answer, max_request=self.limits.max_request,
                                         idle_s=self.limits.connection_idle_s)  # fmt: skip
        finally:
            self.admission.release()

    def stop(self) -> None:
        """Ask the server to stop (safe from a signal handler or another thread)."""
        self._stopping.set()

    def _idle_expired(self) -> bool:
        """Whether the idle exit is due; if so, records why for the exit line."""
        if self.idle_exit_s is None:
            return False
        with self._idle:
            quiet = time.monotonic() - self._last_request
            if self._in_flight or quiet < self.idle_exit_s:
                return False
            self._stopping.set()  # from here on, a late request is told the daemon stops
        self.stopped_because = f"after {quiet:.0f} s without a request"
        log.info("stopping %s", self.stopped_because)
        return True

    def _trim_when_quiet(self) -> None:
        """Give freed memory back once no request has run for TRIM_QUIET_S (and settle the
        heap, daemon/memory.py ``settle``)."""
        with self._idle:
            if self._trimmed or self._in_flight:
                return
            if time.monotonic() - self._last_request < TRIM_QUIET_S:
                return
            self._trimmed = True
        # onnxruntime's arena first: what it hands back is then free for trim() to return.
        release = getattr(self.chitta.embedder, "release_memory", None)
        try:
            memory.settle()  # a full collection now, while nothing waits, and none later
            if release is not None:
                release()
            memory.trim()
        except Exception:  # noqa: BLE001 - memory not given back is no reason to stop serving
            log.debug("giving memory back failed", exc_info=True)

    # --- the spool ------------------------------------------------------------------------

    def _take_in_spool(self) -> None:
        """Start taking in the spool on a thread of its own when one waits and no intake runs
        (at the start, then at most every SPOOL_CHECK_S): requests are answered meanwhile."""
        now = time.monotonic()
        if now - self._spool_checked < SPOOL_CHECK_S:
            return
        self._spool_checked = now
        if self._intake is not None and self._intake.is_alive():
            return
        if not self.spool.exists() and not spool.claimed(self.spool):
            return
        with self._idle:
            self._in_flight += 1  # an intake is work: no idle exit while it runs
        self._intake = threading.Thread(target=self._intake_run, daemon=True,
                                        name="chitta-spool")  # fmt: skip
        self._intake.start()

    def _intake_run(self) -> None:
        try:
            spool.take_in(self.spool, self._apply_spooled, self.chitta.store,
                          refused=(InputError,), stopping=self._stopping.is_set)  # fmt: skip
        except Exception:  # noqa: BLE001 - the daemon serves on; the spool stays for next time
            log.exception("the spool intake failed")
        finally:
            self._done()

    def _apply_spooled(self, op: str, params: dict[str, Any]) -> None:
        """One spooled record, run as its operation would be for a client (checked by its
        description, under the writer lock)."""
        entry = METHODS[op]
        check_params(entry, params)
        given = {k: v for k, v in params.items() if v is not None}
        self._call(entry, given, Context(home=self.home, in_daemon=True))

    def _touch(self) -> None:
        with self._idle:
            self._last_request = time.monotonic()
            self._trimmed = False

    def _shutdown(self) -> None:
        self._listener.close()
        self._acceptor.close()
        self.upkeep.stop()  # the step under way commits whole; no other starts
        with self._idle:
            self._idle.wait_for(lambda: self._in_flight == 0, timeout=self.deadline_s)
        self.upkeep.drain()  # memories stored under load get their vectors before the close
        # After a deadline's grace, queued work is dropped rather than waited for.
        self.workers.shutdown()
        try:
            self.chitta.close()
        finally:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    def _answer(self, line: bytes, out: Sender | None = None) -> bytes | None:
        """The response line for one request line (None for a notification); progress
        notifications, when the request asks for them, go to ``out`` before it."""
        self._touch()
        started = time.perf_counter()
        method, ok = "(invalid)", False
        try:
            request = protocol.parse_request(line)
        except protocol.ProtocolError as exc:
            self.stats.record(method, _ms(started), False)
            return protocol.error_line(protocol.request_id_of(line), exc.code, str(exc))
        try:
            if request.method in METHODS:
                method = request.method
            result = self.dispatch(request.method, request.params, _progress(out, request))
            ok = True
            reply = protocol.result_line(request.id, result)
        except protocol.ProtocolError as exc:
            reply = protocol.error_line(request.id, exc.code, str(exc), exc.data)
        except ChittaError as exc:
            code = protocol.INVALID_PARAMS if exc.exit_code == 2 else protocol.CHITTA_ERROR
            # The exit code travels too: a client that has no class for this code (one
            # from a module it never imported) still exits as the daemon would have.
            data = {"code": exc.code, "exit_code": exc.exit_code}
            reply = protocol.error_line(request.id, code, str(exc), data)
        except Exception:  # a bug: logged with its traceback, answered without details
            log.exception("request %s failed", method)
            reply = protocol.error_line(request.id, protocol.INTERNAL_ERROR, "internal error")
        self.stats.record(method, _ms(started), ok)
        return None if request.notification else reply

    def dispatch(self, method: str, params: dict[str, Any], progress: Any = None) -> dict[str, Any]:
        """Run the operation ``method`` with ``params`` as a request of any client does — its
        checks, the worker pool, the writer lock, the deadline — and return its result.
        Raises :class:`~chitta.daemon.protocol.ProtocolError` (unknown method, stopping,
        busy, timed out) or the operation's :class:`ChittaError`. The HTTP face
        (chitta/http/) calls it too."""
        self._touch()
        entry = METHODS.get(method)
        if entry is None:
            raise protocol.ProtocolError(
                protocol.METHOD_NOT_FOUND,
                f"unknown method {method!r}; methods: {', '.join(sorted(METHODS))}",
            )
        if self._stopping.is_set():
            raise protocol.ProtocolError(protocol.SHUTTING_DOWN, "the daemon is stopping")
        return self._run(entry, params, progress)

    def _run(
        self, entry: Operation, params: dict[str, Any], progress: Any = None
    ) -> dict[str, Any]:
        params = {k: v for k, v in params.items() if k != META}
        check_params(entry, params)
        params = {k: v for k, v in params.items() if v is not None}  # null: not given
        ctx = Context(home=self.home, progress=progress, in_daemon=True)
        with self._idle:
            self._in_flight += 1
        try:
            future = self.workers.submit(lambda: self._call(entry, params, ctx),
                                         writes=entry.writes)  # fmt: skip
        except protocol.ProtocolError:  # busy: too many reads wait already
            self._done()
            raise
        except RuntimeError:  # the pool shut down between the stop check and now
            self._done()
            raise protocol.ProtocolError(protocol.SHUTTING_DOWN, "the daemon is stopping") from None
        future.add_done_callback(lambda _: self._done())
        try:
            # Long work (an import, a re-embedding) is not cut short: its caller waits for
            # the result, seeing its progress, rather than being told of a failure that is
            # not one. A caller who gives up closes the connection; the work still finishes.
            return future.result(timeout=None if entry.long else self.deadline_s)
        except FutureTimeout:
            log.warning("%s ran over its %.1f s deadline; the caller was answered", entry.name,
                        self.deadline_s)  # fmt: skip
            # Say truthfully what became of it: a caller that retries a write must know
            # whether the first attempt will still land.
            if future.cancel():
                fate = "it had not started and was not run"
            elif entry.writes:
                fate = "it is still running and its write will be done"
            else:
                fate = "it is still running"
            raise protocol.ProtocolError(
                protocol.TIMEOUT,
                f"{entry.name} did not finish within {self.deadline_s:g} s; {fate}",
                {"started": not future.cancelled()},
            ) from None

    def _call(self, entry: Operation, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        if entry.writes:
            with self._writer:
                result = entry.run(self.chitta, params, ctx)
        else:
            result = entry.run(self.chitta, params, ctx)
        if entry.name == "memory_status":
            result = {**result, "daemon": self._figures()}
        return {"ok": True, **result}

    def _figures(self) -> dict[str, Any]:
        """The daemon's part of ``memory_status``: its requests and its limits."""
        conns = {"open": self.admission.open, "max": self.admission.cap,
                 "refused": self.admission.refused,
                 "idle_s": self.limits.connection_idle_s}  # fmt: skip
        reads = {"waiting": self.workers.waiting, "max_waiting": self.workers.max_waiting,
                 "refused": self.workers.refused}  # fmt: skip
        return {**self.stats.figures(), "idle_exit_s": self.idle_exit_s, "http": self.http_url,
                "connections": conns,
                "workers": self.limits.workers, "reads": reads,
                "warmup": self.warmup.status(), "upkeep": self.upkeep.status()}  # fmt: skip

    def _done(self) -> None:
        with self._idle:
            self._in_flight -= 1
            self._last_request = time.monotonic()  # quiet is counted from the last answer
            self._idle.notify_all()


def _fitted_cap(cap: int) -> int:
    """``cap``, or fewer when the file descriptor limit leaves room for fewer connections
    (FD_RESERVE kept for the daemon's own files): over the cap a client is told the daemon
    is busy, where out of descriptors it would be left waiting."""
    room = connections.descriptor_room(FD_RESERVE)
    if room is None or room >= cap:
        return cap
    fitted = max(1, room)
    log.warning("at most %d connections at once (not %d): the file descriptor limit "
                "(ulimit -n) leaves room for no more", fitted, cap)  # fmt: skip
    return fitted


def _progress(out: Sender | None, request: protocol.Request) -> Any:
    """A ``progress(done, total)`` sending notifications for ``request``, when it asked for
    them (``"_meta": {"progress": true}``) and expects a response; else None."""
    meta = request.params.get(META)
    if out is None or request.notification or not isinstance(meta, dict):
        return None
    if meta.get("progress") is not True:
        return None
    last = [0.0]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - last[0] < PROGRESS_EVERY_S:
            return  # at most a few a second, and always the last one
        last[0] = now
        out.send(protocol.progress_line(request.id, done, total))

    return report


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
