"""One HTTP exchange for cited recall's ``http`` source and its model chain: the request sent
and its reply read within the timeout *in all*, the reply capped in size, redirects refused.

urllib's ``timeout`` bounds each socket operation (the connect, each read), not their sum: a
server that trickles a byte at a time would hold a call — and the thread under it, which
Python waits for at exit — for hours. So a watchdog shuts the exchange's socket down at the
deadline, which ends any read in progress (headers or body, TLS included). Redirects are
refused: urllib would forward the headers, a bearer token among them, wherever one points.
A loopback endpoint is never reached through an ``http_proxy`` from the environment: what is
meant to stay on the machine does. Errors name the endpoint and the cause; an error reply is
quoted with the request's private texts blanked out, and a header value is never quoted.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any

from chitta.embed.http import _describe, _excerpt, _NoRedirect
from chitta.errors import ChittaError

#: Largest reply read, in bytes; a search answer or a chat reply is never this big.
MAX_REPLY_BYTES = 16 << 20
#: Bytes of an error reply read for the excerpt quoted in the error.
ERROR_BODY_BYTES = 4096


def fetch(
    request: urllib.request.Request,
    *,
    where: str,
    timeout_s: float,
    private: Sequence[str],
    error: type[ChittaError],
    max_bytes: int = MAX_REPLY_BYTES,
) -> bytes:
    """The body of the reply to ``request``, all of it read within ``timeout_s``; otherwise
    ``error`` (SourceError, a model step's error) with a message that starts with ``where``.
    ``private`` are texts blanked out of a quoted error reply (a server may echo them)."""
    message: str | None = None
    raw = b""
    with _Watchdog(timeout_s) as watchdog:
        try:
            raw = _exchange(request, watchdog, timeout_s, max_bytes)
        except urllib.error.HTTPError as exc:
            message = _http_error(exc, where, private)
        except urllib.error.URLError as exc:
            message = f"{where}: {_describe(exc.reason, timeout_s)}"
        except (OSError, http.client.HTTPException) as exc:
            message = f"{where}: {_describe(exc, timeout_s)}"
        except ValueError as exc:
            # http.client refuses a header value with a line break, quoting the value (which
            # may be a token) in its message: name the kind of fault only.
            message = (
                f"{where}: the request is not valid HTTP: a header or the URL cannot be sent "
                f"({type(exc).__name__})"
            )
        if watchdog.expired:  # whatever the cut-off exchange raised or returned
            message = f"{where}: {_describe(TimeoutError(), timeout_s)}"
    if message is not None:
        raise error(message)
    if len(raw) > max_bytes:
        size = f"{max_bytes >> 20} MB" if max_bytes % (1 << 20) == 0 else f"{max_bytes} bytes"
        raise error(f"{where} answered more than {size}")
    return raw


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` (a URL's host name) is this machine: localhost or a loopback address."""
    if not host:
        return False
    if host.lower() == "localhost" or host.lower().endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _exchange(
    request: urllib.request.Request, watchdog: _Watchdog, timeout_s: float, max_bytes: int
) -> bytes:
    handlers: list[Any] = [_NoRedirect, _WatchedHTTP(watchdog), _WatchedHTTPS(watchdog)]
    if is_loopback(urllib.parse.urlsplit(request.full_url).hostname):
        handlers.append(urllib.request.ProxyHandler({}))  # no proxy, whatever the environment
    opener = urllib.request.build_opener(*handlers)
    with opener.open(request, timeout=timeout_s) as response:
        return response.read(max_bytes + 1)


def _http_error(exc: urllib.error.HTTPError, where: str, private: Sequence[str]) -> str:
    try:
        detail = exc.read(ERROR_BODY_BYTES)
    except (OSError, http.client.HTTPException):
        detail = b""
    hint = " (redirects are not followed: set the final URL)" if 300 <= exc.code < 400 else ""
    excerpt = _excerpt(detail, list(private))
    return f"{where} answered HTTP {exc.code} {exc.reason}{hint}" + (
        f": {excerpt}" if excerpt else ""
    )


class _Watchdog:
    """Shuts the sockets of one exchange down at its deadline, ending any read in progress.

    It holds a duplicate of each socket's descriptor (shutting one down shuts the connection
    down), closed when the exchange ends, so the deadline never touches a descriptor that has
    been closed and reused meanwhile."""

    def __init__(self, timeout_s: float) -> None:
        self.expired = False
        self._over = False
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._timer = threading.Timer(timeout_s, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        with self._lock:
            self._over = True
            for sock in self._sockets:
                sock.close()
            self._sockets.clear()

    def watch(self, sock: socket.socket) -> None:
        """Shut ``sock`` down at the deadline (at once if it has passed)."""
        with self._lock:
            if self._over:
                return
            copy = sock.dup()
            self._sockets.append(copy)
            if self.expired:
                _shut(copy)

    def connection(self, base: type[http.client.HTTPConnection]) -> Callable[..., Any]:
        """A factory of ``base`` connections whose sockets this watchdog watches."""

        def make(*args: Any, **kwargs: Any) -> http.client.HTTPConnection:
            conn = base(*args, **kwargs)
            create = conn._create_connection  # type: ignore[attr-defined]

            def create_watched(*a: Any, **kw: Any) -> socket.socket:
                sock = create(*a, **kw)
                self.watch(sock)
                return sock

            conn._create_connection = create_watched  # type: ignore[attr-defined]
            return conn

        return make

    def _expire(self) -> None:
        with self._lock:
            if self._over:
                return
            self.expired = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


class _Watched:
    """An HTTP(S) handler whose connections a :class:`_Watchdog` watches."""

    def __init__(self, watchdog: _Watchdog) -> None:
        super().__init__()
        self._watchdog = watchdog

    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
        watched = self._watchdog.connection(http_class)
        return super().do_open(watched, req, **kwargs)  # type: ignore[misc]


class _WatchedHTTP(_Watched, urllib.request.HTTPHandler):
    pass


class _WatchedHTTPS(_Watched, urllib.request.HTTPSHandler):
    pass
