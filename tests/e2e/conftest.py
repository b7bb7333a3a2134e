"""The real Claude Code client against a loopback stand-in for the model API (make test-e2e).

Claude Code is installed from the npm registry at the version in ``claude-code-version``
into ``.e2e/`` of the checkout (``make test-e2e`` does it first; the fixture does it when it
is missing). The stand-in answers the Anthropic Messages API on 127.0.0.1 from a script the
test writes and keeps every request body Claude Code sent, so a test can read exactly what the
model was shown.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]
PIN_FILE = Path(__file__).with_name("claude-code-version")
PACKAGE = "@anthropic-ai/claude-code"
PREFIX = CHECKOUT / ".e2e"
CLAUDE = PREFIX / "node_modules" / ".bin" / "claude"


def pinned_version() -> str:
    return PIN_FILE.read_text().strip()


def _installed_version() -> str | None:
    if not CLAUDE.exists():
        return None
    done = subprocess.run([str(CLAUDE), "--version"], capture_output=True, text=True, timeout=60)
    return done.stdout.split()[0] if done.returncode == 0 and done.stdout.strip() else None


def _install(version: str) -> None:
    """``npm install`` the pinned Claude Code into .e2e/; a skip only when npm cannot reach
    its registry (any other failure is a failure)."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not on PATH: cannot install Claude Code for the e2e tests")
    probe = subprocess.run([npm, "view", f"{PACKAGE}@{version}", "version"],
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    if probe.returncode != 0:
        pytest.skip(f"the npm registry is unreachable ({probe.stderr.strip()[-300:]})")
    PREFIX.mkdir(exist_ok=True)
    subprocess.run([npm, "install", "--prefix", str(PREFIX), "--no-save", "--no-audit",
                    "--no-fund", f"{PACKAGE}@{version}"], check=True, timeout=600)  # fmt: skip


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The pinned Claude Code executable (installed from npm when missing)."""
    version = pinned_version()
    if _installed_version() != version:
        _install(version)
    found = _installed_version()
    assert found == version, f"installed Claude Code is {found}, pinned {version}"
    return CLAUDE


# --- the stand-in for the model API -----------------------------------------------------

Answer = list[dict[str, Any]]  # the content blocks of one assistant message


@dataclass
class ModelStandIn:
    """An Anthropic Messages API on 127.0.0.1: ``answers`` are given, in order, to the
    requests of the agent loop (those that carry ``tools``); every other request (a title,
    a summary) gets a short text. ``requests`` keeps every (method, path, body)."""

    url: str = ""
    answers: list[Answer] = field(default_factory=list)
    requests: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def script(self, *answers: Answer) -> None:
        with self.lock:
            self.answers.extend(answers)

    def agent_requests(self) -> list[dict[str, Any]]:
        """The bodies of the agent loop's /v1/messages requests, in order."""
        with self.lock:
            return [b for _, p, b in self.requests if _is_agent(p, b)]

    def next_answer(self, path: str, body: dict[str, Any]) -> Answer:
        with self.lock:
            self.requests.append(("POST", path, body))
            if _is_agent(path, body) and self.answers:
                return self.answers.pop(0)
        return [{"type": "text", "text": "ok"}]


def _is_agent(path: str, body: dict[str, Any]) -> bool:
    return path.split("?")[0] == "/v1/messages" and bool(body.get("tools"))


_ids = itertools.count(1)


def _message(body: dict[str, Any], content: Answer) -> dict[str, Any]:
    stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
    return {"id": f"msg_standin_{next(_ids)}", "type": "message", "role": "assistant",
            "model": body.get("model", "claude-standin"), "content": content,
            "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10}}  # fmt: skip


def _events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The Server-Sent Events of a streamed Messages API reply carrying ``message``."""
    start = dict(message, content=[], stop_reason=None)
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opening = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opening = dict(block, input={})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_start", {"type": "content_block_start", "index": index,
                                      "content_block": opening}  # fmt: skip
        yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                      "delta": delta}  # fmt: skip
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": message["stop_reason"],
                                      "stop_sequence": None},
                            "usage": {"output_tokens": 10}}  # fmt: skip
    yield "message_stop", {"type": "message_stop"}


NOT_FOUND = {
    "type": "error",
    "error": {"type": "not_found_error", "message": "not in the stand-in"},
}


class _Handler(BaseHTTPRequestHandler):
    server: ThreadingHTTPServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _json(self, status: int, payload: object) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self) -> None:
        state: ModelStandIn = self.server.state  # type: ignore[attr-defined]
        with state.lock:
            state.requests.append(("GET", self.path, {}))
        self._json(404, NOT_FOUND)

    def do_POST(self) -> None:
        state: ModelStandIn = self.server.state  # type: ignore[attr-defined]
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        path = self.path.split("?")[0]
        if path == "/v1/messages/count_tokens":
            with state.lock:
                state.requests.append(("POST", self.path, body))
            self._json(200, {"input_tokens": len(json.dumps(body)) // 4})
            return
        if path != "/v1/messages":
            with state.lock:
                state.requests.append(("POST", self.path, body))
            self._json(404, NOT_FOUND)
            return
        message = _message(body, state.next_answer(self.path, body))
        if not body.get("stream"):
            self._json(200, message)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, data in _events(message):
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True


@pytest.fixture(scope="module")
def model_api() -> Iterator[ModelStandIn]:
    """A scripted Messages API on 127.0.0.1, one per test module (its sessions share it)."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    state = ModelStandIn(url=f"http://127.0.0.1:{httpd.server_address[1]}")
    httpd.state = state  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()


# --- Claude Code in a temporary HOME and git repository ---------------------------------

#: Turned off so that nothing but the stand-in is asked for anything.
QUIET = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    # Every MCP tool in the request's `tools`, none deferred behind a tool search: the test
    # measures what a client lists.
    "ENABLE_TOOL_SEARCH": "false",
}


@dataclass(frozen=True)
class Client:
    """Claude Code set up with chitta in a temporary HOME, run in a temporary git repo."""

    claude: Path
    home: Path  # HOME: ~/.claude/settings.json and ~/.claude.json live here
    chitta_home: Path  # CHITTA_HOME
    repo: Path
    env: dict[str, str]

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``claude ARGS`` in the repository; fails the test on a non-zero exit."""
        done = subprocess.run([str(self.claude), *args], cwd=self.repo, env=self.env,
                              capture_output=True, text=True, timeout=timeout)  # fmt: skip
        assert done.returncode == 0, f"claude {args} exited {done.returncode}:\n{done.stderr}"
        return done

    def chitta(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``python -m chitta --home CHITTA_HOME ARGS`` with the test's environment."""
        return subprocess.run([sys.executable, "-m", "chitta", "--home", str(self.chitta_home),
                               *args], cwd=self.repo, env=self.env, capture_output=True,
                              text=True, timeout=timeout)  # fmt: skip

    def daemons(self) -> list[int]:
        """The ids of the chitta daemons serving this client's CHITTA_HOME."""
        return daemon_pids(self.chitta_home)


@pytest.fixture(scope="module")
def client(
    claude_bin: Path, model_api: ModelStandIn, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Client]:
    """Claude Code with chitta set up by ``chitta setup claude`` (user scope, temporary HOME),
    one per test module."""
    tmp_path = tmp_path_factory.mktemp("claude")
    home, chitta_home, repo = tmp_path / "home", tmp_path / "chitta", tmp_path / "repo"
    for folder in (home, chitta_home, repo):
        folder.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CHITTA_", "CC_SOUL_", "ANTHROPIC_", "CLAUDE"))}  # fmt: skip
    env.update(QUIET, HOME=str(home), CHITTA_HOME=str(chitta_home),
               ANTHROPIC_BASE_URL=model_api.url, ANTHROPIC_API_KEY="sk-ant-standin-dummy",
               CHITTA_DAEMON_IDLE_S="3")  # fmt: skip
    made = Client(claude_bin, home, chitta_home, repo, env)
    done = made.chitta("setup", "claude")
    assert done.returncode == 0, done.stderr
    yield made
    _stop_daemons(chitta_home)


def daemon_pids(chitta_home: Path) -> list[int]:
    """The processes serving ``chitta_home`` (their command line names it)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and str(chitta_home).encode() in argv:
            found.append(int(proc.name))
    return found


def _stop_daemons(chitta_home: Path) -> None:
    # Only the daemons of this test's own CHITTA_HOME, each by its id.
    for pid in daemon_pids(chitta_home):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
