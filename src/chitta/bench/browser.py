"""A real headless browser for the memory browser's tests and benchmarks: Debian's chromium
driven over its DevTools protocol (a websocket; `websockets` from the dev and bench extras).

:func:`open_browser` starts chromium on a fresh profile and yields a :class:`Browser` on its
one page: navigate, evaluate, press keys, take screenshots; every console message and
uncaught error is kept in ``messages``, and every dialog (a ``confirm``) is accepted.
"""

from __future__ import annotations

import base64
import json
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")


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

    def screenshot(self, path: Path) -> Path:
        """The page as a PNG at ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        data = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
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


@contextmanager
def open_browser(profile: Path, size: str = "1200,900") -> Iterator[Browser]:
    """Headless chromium on a fresh ``profile``, offline but for the pages it is sent to."""
    from websockets.sync.client import connect

    if not CHROMIUM.exists():
        raise FileNotFoundError(f"{CHROMIUM} is missing: `make browser` installs it")
    proc = subprocess.Popen(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", f"--window-size={size}", f"--user-data-dir={profile}",
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
        if proc.stderr is not None:
            proc.stderr.close()


def log_in(browser: Browser, url: str, token: str) -> None:
    """Give ``token`` on the login page at ``url``; back on the browser's first page."""
    browser.goto(url + "/login")
    browser.evaluate(f"document.getElementById('token').value = {json.dumps(token)};"
                     "document.querySelector('form').submit(); true")  # fmt: skip
    browser.wait_for("location.pathname === '/' && document.getElementById('main')")
