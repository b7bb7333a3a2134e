"""The HTTP face's fixtures: a real daemon serving HTTP on loopback, its token, and a real
headless browser (Debian's chromium) driven over its DevTools protocol."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from chitta.config import Settings
from chitta.daemon.client import DaemonClient

CHROMIUM = Path("/usr/bin/chromium")
#: Where the browser tests keep their screenshots (the test artifacts); gitignored.
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


@pytest.fixture
def http_daemon(tmp_path: Path, launch) -> Iterator[HttpDaemon]:
    """A daemon serving HTTP on a free loopback port, its home in ``tmp_path``."""
    home = tmp_path / "h"
    port = free_port()
    launch(home, "--http", f"127.0.0.1:{port}")
    token = (home / "http-token").read_text().strip()
    yield HttpDaemon(home, f"http://127.0.0.1:{port}", token, Settings(home=home).socket_path)


# --- a real browser -------------------------------------------------------------------------


@dataclass
class Browser:
    """Headless chromium on one page, driven over the DevTools protocol: navigate, evaluate,
    press keys, take screenshots; every console message and uncaught error is kept, and
    every dialog (confirm) is accepted."""

    proc: subprocess.Popen
    ws: Any
    messages: list[str] = field(default_factory=list)
    _next: int = 0

    def send(self, method: str, timeout: float = 30.0, **params: Any) -> dict[str, Any]:
        self._next += 1
        ident = self._next
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer to {method} in {timeout} s")
            message = json.loads(self.ws.recv(timeout=left))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self._event(message)

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Page.javascriptDialogOpening":
            self.ws.send(
                json.dumps(
                    {
                        "id": 10**9 + len(self.messages),
                        "method": "Page.handleJavaScriptDialog",
                        "params": {"accept": True},
                    }
                )
            )
        elif method == "Runtime.exceptionThrown":
            self.messages.append("uncaught: " + json.dumps(params.get("exceptionDetails"))[:500])
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning"):
            self.messages.append("console: " + json.dumps(params.get("args"))[:500])
        elif method == "Log.entryAdded" and params["entry"].get("level") in ("error", "warning"):
            self.messages.append("log: " + params["entry"].get("text", "")[:500])

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, awaitPromise=True,
                           returnByValue=True)  # fmt: skip
        if "exceptionDetails" in result:
            raise RuntimeError(json.dumps(result["exceptionDetails"])[:800])
        return result["result"].get("value")

    def goto(self, url: str) -> None:
        self.send("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'")

    def wait_for(self, condition: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.evaluate(f"Boolean({condition})"):
                    return
            except RuntimeError as exc:  # the page is navigating: ask again on the next one
                if "navigated" not in str(exc) and "context" not in str(exc):
                    raise
            time.sleep(0.05)
        raise TimeoutError(f"never true: {condition}")

    def key(self, key: str, code: int, shift: bool = False) -> None:
        """Press and release ``key``: Enter with its character, so a form submits."""
        text = {"Enter": "\r"}.get(key)
        down = {"type": "keyDown", "text": text} if text else {"type": "rawKeyDown"}
        for event in (down, {"type": "keyUp"}):
            self.send("Input.dispatchKeyEvent", key=key, code=key, windowsVirtualKeyCode=code,
                      modifiers=8 if shift else 0, **event)  # fmt: skip

    def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        data = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path = ARTIFACTS / f"{name}.png"
        path.write_bytes(base64.b64decode(data["data"]))
        return path


def _devtools(profile: Path, proc: subprocess.Popen) -> int:
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if port_file.exists() and port_file.read_text().strip():
            return int(port_file.read_text().split()[0])
        if proc.poll() is not None:
            raise RuntimeError(f"chromium exited: {proc.stderr.read()[-2000:]!r}")
        time.sleep(0.05)
    raise TimeoutError("chromium did not open its DevTools port")


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    from websockets.sync.client import connect

    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (.ci/install-chromium)")
    profile = tmp_path / "chromium-profile"
    proc = subprocess.Popen(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--window-size=1200,900", f"--user-data-dir={profile}",
         "--remote-debugging-port=0", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        port = _devtools(profile, proc)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as reply:
            pages = [t for t in json.load(reply) if t["type"] == "page"]
        with connect(pages[0]["webSocketDebuggerUrl"], max_size=None) as ws:
            driver = Browser(proc, ws)
            for domain in ("Page", "Runtime", "Log"):
                driver.send(f"{domain}.enable")
            yield driver
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        proc.stderr.close()


@pytest.fixture
def logged_in(browser: Browser, http_daemon: HttpDaemon) -> Callable[[str], None]:
    """Log ``browser`` in to ``http_daemon`` through its login page; then go to a route."""

    def go(route: str = "#/search") -> None:
        if not any("chitta_session" in c["name"] for c in browser.send("Network.getCookies")
                   .get("cookies", [])):  # fmt: skip
            browser.goto(http_daemon.url + "/login")
            token = json.dumps(http_daemon.token)
            browser.evaluate(f"document.getElementById('token').value = {token};"
                             "document.querySelector('form').submit(); true")  # fmt: skip
            browser.wait_for("location.pathname === '/' && document.getElementById('main')")
        browser.goto(f"{http_daemon.url}/{route}")
        browser.wait_for("document.getElementById('main').children.length > 0")

    return go
