"""`chitta mcp`: an MCP server on stdio whose tools forward to the daemon (DESIGN.md §5).

Each tool is one operation (chitta/ops) with an MCP description: its name, input schema and
description come from that one description, and a call is checked by it before it is sent to
the daemon's JSON-RPC method of the same name. The server holds no store: it connects to the
daemon's socket for every call, starting ``chitta serve`` in the background when nothing
answers there (daemon/launch.py). The realm of a call that names none is the realm rule's
(chitta/scope.py), over the client's workspace when the client tells it (MCP roots), else
over this process's working directory. Results are the daemon's JSON (``"ok": true`` …), as
mcp/reply.py leans it for an agent (recall's compact rows unless ``verbose``);
failures are ``{"ok": false, "error": <code>, "message": …}`` with the tool result flagged as
an error, so the calling model reads which argument to fix. Stdout carries protocol messages
only; logs go to stderr. The lines are read and written by chitta's own stdio transport
(mcp/stdio.py), which answers every line it cannot hand to the SDK and rewrites none.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import threading
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from mcp.types import Tool as MCPTool

from chitta import __version__, spool
from chitta.code.offered import has_code
from chitta.config import Settings
from chitta.daemon import launch
from chitta.daemon.client import DaemonClient, DaemonError, daemon_answers
from chitta.errors import ChittaError, DaemonBusy, DaemonStarting, DaemonUnavailable
from chitta.mcp.reply import lean, now_ms
from chitta.mcp.stdio import stdio_streams
from chitta.ops import OPERATIONS, Operation, check_params, given
from chitta.ops.spec import with_realm
from chitta.recall.confidence.gate import gate_reply
from chitta.scope import DEFAULT_REALM, RealmChoice, resolve_realm

log = logging.getLogger(__name__)

Result = dict[str, Any]
#: How long the server waits for the client's roots (its workspace), in seconds.
ROOTS_TIMEOUT_S = 2.0
#: How long a write that can be spooled (remember) waits for a starting daemon, in seconds;
#: then it goes to the spool (chitta/spool.py) and lands when the daemon is up
#: (CHITTA_MCP_SPOOL_WAIT_S).
SPOOL_WAIT_S = 5.0


class Forwarder:
    """Sends tool calls to the daemon, starting it when nothing answers on its socket."""

    def __init__(self, settings: Settings, spool_wait_s: float = SPOOL_WAIT_S) -> None:
        self.settings = settings
        self.spool_wait_s = spool_wait_s
        self._lock = threading.Lock()  # one launcher at a time among this server's calls
        self._started: tuple[subprocess.Popen, int] | None = None  # (process, log offset)

    def start(self) -> None:
        """Begin starting the daemon now (without waiting), so the first call waits less."""
        with self._lock:
            if not daemon_answers(self.settings.socket_path):
                self._started = launch.spawn_daemon(self.settings)

    def call(self, method: str, **params: Any) -> Result:
        """The daemon's result, or the error shape; ``None`` parameters are left out."""
        given = {k: v for k, v in params.items() if v is not None}
        try:
            try:
                client = DaemonClient(self.settings.socket_path)
            except DaemonBusy:
                raise  # it runs: there is nothing to start (answered as the error below)
            except DaemonUnavailable:
                # Only a failed connect is retried: a write may have landed before a drop.
                if method not in spool.SPOOLABLE:
                    self._ensure()
                else:
                    try:
                        self._ensure(self.spool_wait_s)
                    except DaemonStarting:
                        return self._spool(method, given)
                client = DaemonClient(self.settings.socket_path)
            with client:
                return client.call(method, **given)
        except DaemonError as exc:
            return {"ok": False, "error": exc.code, "message": str(exc), "rpc_code": exc.rpc_code}
        except ChittaError as exc:
            return {"ok": False, "error": exc.code, "message": str(exc)}

    def _ensure(self, timeout_s: float = launch.START_TIMEOUT_S) -> None:
        with self._lock:
            if daemon_answers(self.settings.socket_path):
                return
            started, self._started = self._started, None
            if started is None or started[0].poll() is not None:
                started = launch.spawn_daemon(self.settings)
            log.info("waiting for the chitta daemon on %s", self.settings.socket_path)
            try:
                launch.wait_for_daemon(self.settings, *started, timeout_s=timeout_s)
            except DaemonStarting:
                self._started = started  # still starting: the next call waits for it
                raise

    def _spool(self, method: str, params: dict[str, Any]) -> Result:
        """Keep a write for the daemon that is starting: it takes the spool in when it is up."""
        # When it happened is now, not when the daemon gets to it.
        params = {"event_time": spool.now_iso(self.settings.clock_offset_ms), **params}
        record = spool.append(self.settings.spool_path, method, params)
        log.info("the daemon is still starting; %s kept in the spool", method)
        return {"ok": True, "spooled": True, "record": record,
                "message": "the chitta daemon is still starting: the memory is kept in the "
                           "spool and lands in the store when the daemon is up (its id comes "
                           "then; a near-duplicate reinforces the existing one)"}  # fmt: skip


_HINTS = {
    "read": ToolAnnotations(read_only_hint=True),
    "write": ToolAnnotations(read_only_hint=False, destructive_hint=False),
    # Saying an edge or alias twice changes nothing; invalidating keeps the edge (as_of).
    "idempotent": ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                  idempotent_hint=True),
    "destructive": ToolAnnotations(read_only_hint=False, destructive_hint=True),
}  # fmt: skip


#: The tool offered only to a store with code indexed (code/offered.py, CHITTA_MCP_CODE).
CODE_TOOL = "code"
#: The tool offered only on request (CHITTA_MCP_PROVENANCE=1).
PROVENANCE_TOOL = "provenance"


def tools(*, code: bool = True, provenance: bool = False) -> list[Operation]:
    """The operations offered as MCP tools: those with an MCP description (``code=False``:
    all but the code tool; ``provenance=True``: the provenance tool too)."""
    left_out = {CODE_TOOL} if not code else set()
    left_out |= {PROVENANCE_TOOL} if not provenance else set()
    return [op for op in OPERATIONS.values() if op.mcp and op.name not in left_out]


def code_offered(settings: Settings) -> bool:
    """Whether the code tool is offered: CHITTA_MCP_CODE ``on``, or ``auto`` (the default)
    and the store has code indexed."""
    if settings.mcp_code != "auto":
        return settings.mcp_code == "on"
    return has_code(settings.spool_path)


def tool_of(op: Operation) -> MCPTool:
    """The MCP tool of ``op``: its name, description, input schema and hints."""
    # One line of prose, whatever the source's line breaks and indentation.
    description = " ".join(op.mcp.split())
    return MCPTool(name=op.name, description=description, input_schema=op.input_schema(),
                   annotations=_HINTS[op.effect])  # fmt: skip


def instructions(realm: RealmChoice) -> str:
    """What the client's model is told once, at the start: what chitta is, and the realm."""
    return (
        "Long-term memory: remember what you learn, recall it before answering. Results are "
        f"JSON with ok. Calls that name no realm use {realm.describe()}; the client's "
        "workspace, when it says which, decides instead."
    )


class ChittaMCP(MCPServer):
    """The SDK's server with chitta's operations as its tools, checked by their descriptions
    and forwarded to the daemon."""

    def __init__(self, forwarder: Forwarder) -> None:
        self.realm = forwarder.settings.realm
        super().__init__(name="chitta", version=__version__,
                         instructions=instructions(self.realm))  # fmt: skip
        self.forwarder = forwarder
        self._roots_asked = False

    @property
    def offered(self) -> dict[str, Operation]:
        """The tools offered now: the code tool joins once code is indexed (a file's
        existence, read per listing: the daemon notes it, code/offered.py)."""
        settings = self.forwarder.settings
        offered = tools(code=code_offered(settings), provenance=settings.mcp_provenance)
        return {op.name: op for op in offered}

    async def list_tools(self) -> list[MCPTool]:
        return [tool_of(op) for op in self.offered.values()]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        op = self.offered.get(name)
        if op is None:
            return as_result(_bad(f"unknown tool {name!r}; tools: {', '.join(self.offered)}"))
        try:
            check_params(op, arguments, offered="mcp")
        except ChittaError as exc:
            return as_result({"ok": False, "error": exc.code, "message": str(exc)})
        await self._learn_workspace(context)
        params = given(arguments)
        # verbose shapes this server's reply only: the daemon always answers in full.
        verbose = bool(params.pop("verbose", False)) or bool(params.get("trace"))
        realm = self.realm.name
        params = with_realm(op, params, realm, "mcp")
        reply = await anyio.to_thread.run_sync(lambda: self.forwarder.call(op.name, **params))
        if name in ("recall", "reconstruct"):
            # The recall gateway: under UNKNOWN only rows sharing a distinctive word stay.
            reply = gate_reply(reply, realm=params.get("realm", realm),
                               default_realm=DEFAULT_REALM, limit=params.get("limit", 10),
                               strategy=params.get("strategy", "hybrid"),
                               settings=self.forwarder.settings.gate,
                               rows="hits" if name == "recall" else "items")  # fmt: skip
        now = now_ms() + self.forwarder.settings.clock_offset_ms  # CHITTA_CLOCK_OFFSET_MS
        return as_result(lean(name, reply, realm=params.get("realm", realm), verbose=verbose,
                              now_ms=now))  # fmt: skip

    async def run_stdio_async(self) -> None:
        """Serve on stdin and stdout through chitta's own transport (mcp/stdio.py), which
        answers every line it cannot hand on and never rewrites one."""
        async with stdio_streams() as (read_stream, write_stream):
            server = self._lowlevel_server
            await server.run(read_stream, write_stream, server.create_initialization_options())

    async def _learn_workspace(self, context: Any) -> None:
        """Once: the client's workspace (its first root) as the realm rule's folder, unless
        CHITTA_REALM names the realm."""
        if self._roots_asked or self.realm.rule == "CHITTA_REALM" or context is None:
            return
        self._roots_asked = True
        folder = await _client_root(context)
        if folder is not None:
            self.realm = resolve_realm(None, os.environ, folder)


async def _client_root(context: Any) -> Path | None:
    """The client's first file root, when it offers roots (else None)."""
    try:
        session = context.session
        caps = session.client_capabilities
        if caps is None or caps.roots is None:
            return None
        with anyio.fail_after(ROOTS_TIMEOUT_S):
            listed = await session.list_roots()
    except Exception:  # noqa: BLE001 - no roots: the server's own folder decides
        log.debug("the client's roots could not be read", exc_info=True)
        return None
    for root in listed.roots:
        uri = urlparse(str(root.uri))
        if uri.scheme == "file":
            return Path(unquote(uri.path))
    return None


def as_result(value: Result) -> CallToolResult:
    """A tool's JSON as an MCP result, flagged as an error when ``ok`` is false.

    Sent once, as compact JSON text: the model reads a tool result's text content, and a
    structuredContent copy (optional without an outputSchema, MCP 2025-06-18 "Structured
    Content") would double what the client passes on."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          is_error=not value.get("ok", False))  # fmt: skip


def _bad(message: str) -> Result:
    return {"ok": False, "error": "bad_argument", "message": message}


def build_server(forwarder: Forwarder) -> ChittaMCP:
    """The MCP server with one tool per operation that has an MCP description."""
    return ChittaMCP(forwarder)


def run(settings: Settings) -> None:
    """Serve MCP on stdin/stdout until the client closes the stream."""
    from chitta.config import _float

    forwarder = Forwarder(settings, _float(os.environ, "MCP_SPOOL_WAIT_S", SPOOL_WAIT_S))
    try:
        forwarder.start()
    except (OSError, ChittaError) as exc:  # the first call says it again, as a tool error
        log.warning("could not start the chitta daemon: %s", exc)
    build_server(forwarder).run("stdio")
