"""The HTTP face of a daemon: the app (REST, OpenAPI, MCP over HTTP, the browser), its
address rules, and the uvicorn server that runs it on a thread of the daemon's process
(docs/http.md).

``chitta serve --http 127.0.0.1:8765`` starts it beside the socket. Loopback addresses only,
unless the certificate and key for TLS are given (``--tls-cert``, ``--tls-key``): a token
sent in clear over a network is a token given away.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import ssl
import threading
import urllib.parse
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.staticfiles import StaticFiles

from chitta.config import Settings
from chitta.daemon.protocol import MAX_REQUEST_BYTES
from chitta.errors import BadArgument
from chitta.http.guard import CSRF_COOKIE, SESSION_COOKIE, SESSION_S, Guard, Limiter, Sessions
from chitta.http.rest import Dispatch, openapi, operation_route, read_body
from chitta.http.token import same

log = logging.getLogger(__name__)

STATIC = resources.files("chitta.http") / "static"
#: The most a login form's body may be.
MAX_LOGIN_BYTES = 4096


@dataclass(frozen=True, slots=True)
class Address:
    """Where the HTTP face listens, and the names a request may give for it."""

    host: str
    port: int
    tls: bool

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.tls else 'http'}://{shown}:{self.port}"

    def hosts(self) -> frozenset[str] | None:
        """The ``Host`` values this server answers for (None: any, on a wildcard address)."""
        if self.host in ("0.0.0.0", "::"):
            return None
        shown = f"[{self.host}]" if ":" in self.host else self.host
        names = {f"{shown}:{self.port}".lower()}
        if is_loopback(self.host):
            names |= {f"localhost:{self.port}", f"127.0.0.1:{self.port}", f"[::1]:{self.port}"}
        return frozenset(names)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_address(text: str, *, tls: bool) -> tuple[str, int]:
    """``HOST:PORT``, ``[V6]:PORT`` or ``PORT`` (loopback): checked; a non-loopback host
    without TLS is refused."""
    text = text.strip()
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = "127.0.0.1", text
    host = host.strip("[]") or "127.0.0.1"
    if host == "localhost":
        host = "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise BadArgument(f"--http takes HOST:PORT (e.g. 127.0.0.1:8765), got {text!r}") from None
    if not 0 <= port <= 65535:
        raise BadArgument(f"--http port must be 0-65535, got {port}")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise BadArgument(f"--http host must be an IP address, got {host!r}") from None
    if not is_loopback(host) and not tls:
        raise BadArgument(
            f"--http {text}: a non-loopback address needs TLS (--tls-cert and --tls-key): "
            "the token must not cross a network in clear"
        )
    return host, port


def build_app(
    dispatch: Dispatch,
    *,
    token: str,
    address: Address,
    settings: Settings,
    sessions: Sessions | None = None,
    limiter: Limiter | None = None,
) -> Guard:
    """The whole app behind its guard (chitta/http/guard.py)."""
    sessions = sessions or Sessions()
    limiter = limiter or Limiter()
    mcp = _mcp_app(settings, address)
    routes = [
        Route("/health", lambda _: JSONResponse({"ok": True}), methods=["GET"]),
        Route("/login", _login_page, methods=["GET"]),
        Route("/login", _login(token, sessions, limiter, address.tls), methods=["POST"]),
        Route("/logout", _logout(sessions), methods=["POST"]),
        Route("/", _index, methods=["GET"]),
        Route("/openapi.json", lambda _: JSONResponse(openapi()), methods=["GET"]),
        Route("/api/{name}", operation_route(dispatch, MAX_REQUEST_BYTES), methods=["POST"]),
        *mcp.routes,
    ]
    app = Starlette(routes=routes, lifespan=mcp.router.lifespan_context)
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    hosts = address.hosts()
    return Guard(app, token, hosts, tls=address.tls, limiter=limiter, sessions=sessions)


def _mcp_app(settings: Settings, address: Address) -> Starlette:
    """The MCP SDK's streamable-HTTP app (at ``/mcp``) with chitta's tools, forwarding to
    this daemon's socket as `chitta mcp` does."""
    from mcp.server.transport_security import TransportSecuritySettings

    from chitta.mcp.server import ChittaMCP, Forwarder

    hosts = address.hosts()
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=hosts is not None,
        allowed_hosts=sorted(hosts or ()),
        allowed_origins=sorted(f"{'https' if address.tls else 'http'}://{h}" for h in hosts or ()),
    )
    server = ChittaMCP(Forwarder(settings))
    return server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True,
                                      json_response=True, transport_security=security,
                                      max_request_body_size=MAX_REQUEST_BYTES)  # fmt: skip


def _page(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


async def _index(request: Request) -> Response:
    return HTMLResponse(_page("index.html"), headers={"cache-control": "no-store"})


async def _login_page(request: Request) -> Response:
    return HTMLResponse(_page("login.html").replace("{{message}}", ""))


def _login(token: str, sessions: Sessions, limiter: Limiter, tls: bool):
    async def login(request: Request) -> Response:
        body = await read_body(request, MAX_LOGIN_BYTES)
        if body is None:
            return HTMLResponse("form too large", status_code=413)
        form = urllib.parse.parse_qs(body.decode("latin-1"))
        given = (form.get("token") or [""])[0].strip()
        if not same(given, token):
            limiter.failed((request.client or ("?", 0))[0])
            message = '<p class="error" role="alert">That is not this server\'s token.</p>'
            return HTMLResponse(_page("login.html").replace("{{message}}", message),
                                status_code=401)  # fmt: skip
        sid, csrf = sessions.open()
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(SESSION_COOKIE, sid, max_age=SESSION_S, httponly=True,
                            samesite="strict", secure=tls, path="/")  # fmt: skip
        response.set_cookie(CSRF_COOKIE, csrf, max_age=SESSION_S, httponly=False,
                            samesite="strict", secure=tls, path="/")  # fmt: skip
        return response

    return login


def _logout(sessions: Sessions):
    async def logout(request: Request) -> Response:
        sessions.close(request.cookies.get(SESSION_COOKIE))
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path="/")
        response.delete_cookie(CSRF_COOKIE, path="/")
        return response

    return logout


class HttpFace:
    """uvicorn serving the app on a thread of the daemon's process. Made before the store is
    opened — the address bound, the certificate checked — so that a port in use or a bad
    key fails the start cleanly; :meth:`start` then serves the daemon's app."""

    def __init__(self, address: Address, *, cert: Path | None = None,
                 key: Path | None = None) -> None:  # fmt: skip
        if cert is not None and key is not None:
            _check_tls(cert, key)
        self.cert, self.key = cert, key
        family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
        # IPPROTO_TCP named, not 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on
        # sockets that say they are TCP, and uvicorn writes an answer's headers and body
        # apart; with Nagle on, a keep-alive client waited about 40 ms for every answer.
        self.sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind((address.host, address.port))
            self.sock.listen(128)  # connections wait in the backlog until uvicorn serves
        except OSError as exc:
            self.sock.close()
            raise BadArgument(f"--http {address.host}:{address.port}: cannot listen there: "
                              f"{exc.strerror}") from None  # fmt: skip
        #: Where it listens (a port 0 asked for is the one the system gave).
        self.address = Address(address.host, self.sock.getsockname()[1], address.tls)
        self.server: Any = None
        self._thread: threading.Thread | None = None

    def start(self, app: Guard) -> None:
        """Serve ``app`` (built for :attr:`address`) on a thread of its own."""
        import uvicorn

        config = uvicorn.Config(
            app, log_level="warning", access_log=False, server_header=False, lifespan="on",
            ssl_certfile=str(self.cert) if self.cert else None,
            ssl_keyfile=str(self.key) if self.key else None,
            timeout_keep_alive=30, limit_concurrency=256,
        )  # fmt: skip
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]},
                                        name="chitta-http", daemon=True)  # fmt: skip
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        if self.server is not None:
            self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        self.sock.close()


def _check_tls(cert: Path, key: Path) -> None:
    """Refuse a certificate and key that do not load (before the server starts)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(str(cert), str(key))
    except (OSError, ssl.SSLError) as exc:
        raise BadArgument(f"--tls-cert {cert} / --tls-key {key}: cannot be used: {exc}") from None
