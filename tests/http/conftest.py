"""The HTTP face's fixtures: a real daemon serving HTTP on loopback, its token, and a real
headless browser (Debian's chromium) driven over its DevTools protocol."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from chitta.bench.browser import CHROMIUM, Browser, log_in, open_browser
from chitta.config import Settings
from chitta.daemon.client import DaemonClient


@dataclass
class HttpDaemon:
    home: Path
    url: str
    token: str
    socket: Path

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        with DaemonClient(self.socket) as client:
            return client.call(method, **params)

    def request(
        self,
        path: str,
        body: Any = None,
        *,
        token: str | None = "",
        method: str = "POST",
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        """(status, JSON body, headers) of one request; ``token`` None sends none, "" this
        server's."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        sent = {"Content-Type": "application/json", **(headers or {})}
        if token is not None:
            sent["Authorization"] = f"Bearer {token or self.token}"
        req = urllib.request.Request(self.url + path, data=data, headers=sent, method=method)
        try:
            with urllib.request.urlopen(req, timeout=60) as reply:
                status, text, got = reply.status, reply.read(), dict(reply.headers)
        except urllib.error.HTTPError as exc:
            status, text, got = exc.code, exc.read(), dict(exc.headers)
        try:
            return status, json.loads(text), got
        except ValueError:
            return status, {"raw": text.decode(errors="replace")}, got


ServeHttp = Callable[..., HttpDaemon]


@pytest.fixture
def serve_http(launch) -> ServeHttp:
    """Start a daemon serving HTTP on a port the system picks (``--http 127.0.0.1:0``, the
    port read back from its status): ``serve_http(home, *more_serve_args, env=None)``."""

    def start(home: Path, *args: str, env: dict[str, str] | None = None) -> HttpDaemon:
        launch(home, "--http", "127.0.0.1:0", *args, env=env)
        socket_path = Settings(home=home).socket_path
        with DaemonClient(socket_path) as client:
            url = client.call("memory_status")["daemon"]["http"]
        token = (home / "http-token").read_text().strip()
        return HttpDaemon(home, url, token, socket_path)

    return start


@pytest.fixture
def http_daemon(tmp_path: Path, serve_http: ServeHttp) -> HttpDaemon:
    """A daemon serving HTTP on loopback, its home in ``tmp_path``."""
    return serve_http(tmp_path / "h")


# --- a real browser -------------------------------------------------------------------------


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (.ci/install-chromium)")
    with open_browser(tmp_path / "chromium-profile") as driver:
        yield driver


@pytest.fixture
def logged_in(browser: Browser, http_daemon: HttpDaemon) -> Callable[[str], None]:
    """Log ``browser`` in to ``http_daemon`` through its login page; then go to a route."""

    def go(route: str = "#/search") -> None:
        if not any("chitta_session" in c["name"] for c in browser.send("Network.getCookies")
                   .get("cookies", [])):  # fmt: skip
            log_in(browser, http_daemon.url, http_daemon.token)
        browser.goto(f"{http_daemon.url}/{route}")
        browser.wait_for("document.getElementById('main').children.length > 0")

    return go
