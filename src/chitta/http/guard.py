"""What every HTTP request passes before it reaches a route (docs/http.md#security): the host
check, the rate limits, the token, CSRF, and the security headers on every answer.

- **Host.** A request must name the address the server is bound to (or ``localhost`` for a
  loopback one) in its ``Host`` header: a page on another name that resolves to this machine
  (DNS rebinding) is refused (421). On a wildcard address (``0.0.0.0``, TLS only) any name.
- **Rate limits.** Per client address, a token bucket of :data:`RATE_PER_S` requests a second
  (bursts of :data:`BURST`); and :data:`AUTH_FAILURES` failed tokens a minute, after which
  that address is refused for the rest of the minute. Over either: 429 with ``Retry-After``.
- **The token.** Every route but ``/health``, the login page and the browser's own static
  files needs ``Authorization: Bearer <token>`` or the session cookie the login page sets
  (HttpOnly, SameSite=Strict, Secure under TLS, :data:`SESSION_S` long).
- **CSRF.** A change (any method but GET, HEAD, OPTIONS) made with the session cookie must
  carry the session's CSRF token in ``X-CSRF-Token`` (the page reads it from the
  ``chitta_csrf`` cookie) and, when the browser sends one, an ``Origin`` of the host it is
  addressed to. A
  request with the bearer token is not a browser's ambient credential and needs neither.
- **Headers.** A strict Content-Security-Policy (everything from this server, no inline
  script, no framing), ``nosniff``, no referrer, and ``no-store`` on every API answer.

Nothing here logs a request's path, query or body.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any

from chitta.http.token import same

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

RATE_PER_S = 50.0
BURST = 200.0
AUTH_FAILURES = 10  # a minute, per client address
SESSION_S = 12 * 3600
MAX_SESSIONS = 1000
SESSION_COOKIE, CSRF_COOKIE, CSRF_HEADER = "chitta_session", "chitta_csrf", "x-csrf-token"
#: Routes open without the token: they hold no data.
OPEN_PATHS = frozenset({"/health", "/login"})
OPEN_PREFIXES = ("/static/",)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")  # fmt: skip
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


@dataclass
class _Bucket:
    tokens: float
    at: float
    failures: list[float] = field(default_factory=list)


class Limiter:
    """The rate limits per client address (thread-safe; a bounded table)."""

    def __init__(self, rate: float = RATE_PER_S, burst: float = BURST,
                 failures: int = AUTH_FAILURES, clock: Callable[[], float] = time.monotonic,
                 ) -> None:  # fmt: skip
        self.rate, self.burst, self.failures = rate, burst, failures
        self.clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        self._lock = threading.Lock()

    def _bucket(self, client: str, now: float) -> _Bucket:
        bucket = self._buckets.get(client)
        if bucket is None:
            bucket = self._buckets[client] = _Bucket(self.burst, now)
            if len(self._buckets) > 10_000:
                self._buckets.popitem(last=False)
        self._buckets.move_to_end(client)
        return bucket

    def allow(self, client: str) -> float:
        """0 when ``client`` may make a request now (and it is counted), else the seconds
        to wait."""
        now = self.clock()
        with self._lock:
            bucket = self._bucket(client, now)
            bucket.failures = [t for t in bucket.failures if now - t < 60]
            if len(bucket.failures) >= self.failures:
                return 60 - (now - bucket.failures[0])
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.rate)
            bucket.at = now
            if bucket.tokens < 1:
                return (1 - bucket.tokens) / self.rate
            bucket.tokens -= 1
            return 0.0

    def failed(self, client: str) -> None:
        """Count a failed token from ``client``."""
        with self._lock:
            self._bucket(client, self.clock()).failures.append(self.clock())


class Sessions:
    """The browser's sessions: id -> (CSRF token, expiry); thread-safe, bounded."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._sessions: OrderedDict[str, tuple[str, float]] = OrderedDict()
        self._lock = threading.Lock()

    def open(self) -> tuple[str, str]:
        """A new session's id and CSRF token."""
        sid, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        with self._lock:
            self._sessions[sid] = (csrf, self.clock() + SESSION_S)
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
        return sid, csrf

    def csrf(self, sid: str | None) -> str | None:
        """The CSRF token of a live session ``sid``, else None."""
        if not sid:
            return None
        with self._lock:
            found = self._sessions.get(sid)
            if found is None:
                return None
            if found[1] < self.clock():
                del self._sessions[sid]
                return None
            return found[0]

    def close(self, sid: str | None) -> None:
        with self._lock:
            self._sessions.pop(sid or "", None)


def header(scope: Scope, name: bytes) -> str | None:
    """The first value of request header ``name`` (lower case), decoded as Latin-1."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


def cookies(scope: Scope) -> dict[str, str]:
    raw = header(scope, b"cookie")
    if not raw:
        return {}
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # noqa: BLE001 - a malformed cookie header: no cookies
        return {}
    return {k: m.value for k, m in jar.items()}


def bearer(scope: Scope) -> str | None:
    value = header(scope, b"authorization")
    if value and value[:7].lower() == "bearer ":
        return value[7:].strip()
    return None


async def answer(send: Send, status: int, body: dict[str, Any],
                 extra: list[tuple[bytes, bytes]] = ()) -> None:  # type: ignore[assignment]  # fmt: skip
    """A JSON answer (the error shape of every route)."""
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
        (b"cache-control", b"no-store"), *extra]})  # fmt: skip
    await send({"type": "http.response.body", "body": data})


def error(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "error": code, "message": message}


class Guard:
    """The ASGI middleware in front of every route (the module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        hosts: frozenset[str] | None,
        *,
        tls: bool = False,
        limiter: Limiter | None = None,
        sessions: Sessions | None = None,
    ) -> None:
        self.app, self.token, self.hosts, self.tls = app, token, hosts, tls
        self.limiter = limiter or Limiter()
        self.sessions = sessions or Sessions()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = self._with_headers(send)
        host = (header(scope, b"host") or "").lower()
        if self.hosts is not None and host not in self.hosts:
            await answer(send, 421, error("bad_host", "this server does not answer for the "
                                          "host named in the request"))  # fmt: skip
            return
        client = (scope.get("client") or ("?", 0))[0]
        wait = self.limiter.allow(client)
        if wait > 0:
            await answer(send, 429, error("rate_limited", "too many requests; try again in "
                                          f"{wait:.0f} s"),
                         [(b"retry-after", str(max(1, round(wait))).encode())])  # fmt: skip
            return
        path, method = scope["path"], scope["method"]
        if path in OPEN_PATHS or path.startswith(OPEN_PREFIXES):
            scope.setdefault("state", {})["chitta_auth"] = None
            await self.app(scope, receive, send)
            return
        given = bearer(scope)
        if given is not None:
            if not same(given, self.token):
                self.limiter.failed(client)
                await answer(send, 401, error("bad_token", "the token is not this server's "
                                              "(`chitta http-token` prints it)"),
                             [(b"www-authenticate", b'Bearer realm="chitta"')])  # fmt: skip
                return
            scope.setdefault("state", {})["chitta_auth"] = "bearer"
            await self.app(scope, receive, send)
            return
        jar = cookies(scope)
        csrf = self.sessions.csrf(jar.get(SESSION_COOKIE))
        if csrf is None:
            if method == "GET" and path in ("/", "/index.html"):
                await _redirect(send, "/login")
                return
            await answer(send, 401, error("no_token", "this route needs the token: "
                                          "Authorization: Bearer <token> (`chitta http-token` "
                                          "prints it), or log in at /login"),
                         [(b"www-authenticate", b'Bearer realm="chitta"')])  # fmt: skip
            return
        if method not in SAFE_METHODS and not self._csrf_ok(scope, csrf):
            why = "a change from the browser needs its CSRF token (X-CSRF-Token) and this origin"
            await answer(send, 403, error("csrf", why))
            return
        scope.setdefault("state", {})["chitta_auth"] = "session"
        await self.app(scope, receive, send)

    def _csrf_ok(self, scope: Scope, csrf: str) -> bool:
        """The session's CSRF token in its header, and an ``Origin`` (when the browser sends
        one) of the host the request is addressed to."""
        origin = header(scope, b"origin")
        if origin is not None:
            bare = origin.split("://", 1)[-1].lower()
            if bare != (header(scope, b"host") or "").lower():
                return False
        return same(header(scope, CSRF_HEADER.encode()), csrf)

    def _with_headers(self, send: Send) -> Send:
        async def sending(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
                if self.tls:
                    message["headers"].append((b"strict-transport-security", b"max-age=31536000"))
            await send(message)

        return sending


async def _redirect(send: Send, to: str) -> None:
    await send({"type": "http.response.start", "status": 303,
                "headers": [(b"location", to.encode()), (b"content-length", b"0")]})  # fmt: skip
    await send({"type": "http.response.body", "body": b""})
