"""`chitta mcp`: an MCP server on stdio whose tools forward to the daemon (DESIGN.md §5).

Each tool is one JSON-RPC method of the daemon (daemon/methods.py), with the same named
parameters. The server holds no store: it connects to the daemon's socket for every call,
starting ``chitta serve`` in the background when nothing answers there (daemon/launch.py).
Results are the daemon's JSON (``"ok": true`` …); failures are ``{"ok": false, "error":
<code>, "message": …}`` with the tool result flagged as an error, so the calling model reads
which argument to fix. Stdout carries protocol messages only; logs go to stderr.
"""

from __future__ import annotations

import inspect
import json
import logging
import subprocess
import threading
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from chitta import __version__
from chitta.config import DEFAULT_REALM, Settings
from chitta.daemon import launch
from chitta.daemon.client import DaemonClient, DaemonError, daemon_answers
from chitta.errors import ChittaError, DaemonUnavailable
from chitta.recall.config import PRESETS
from chitta.recall.gate import gate_reply

log = logging.getLogger(__name__)

Result = dict[str, Any]
Text = Annotated[str | None, Field(description="optional")]
Realm = Annotated[str | None, Field(description="The project (default: default).")]
Id = Annotated[str, Field(description="A memory id, as remember or recall returned it.")]
Entity = Annotated[str, Field(description="An entity name; case and spacing do not matter.")]
When = Annotated[str | None, Field(description="ISO 8601, e.g. 2026-11-29 (UTC if no zone)")]
PREDICATE_HELP = (
    "calls, contains, imports, inherits, corrects, relates_to, or one of your own; case, "
    "spaces and hyphens do not matter (Lives In = lives_in)"
)
TIME_CUE_HELP = (
    "Only when the request itself names a time: roughly when it happened, e.g. "
    '{"after": "2026-08-01", "before": "2026-08-31", "confidence": "likely"} or '
    '{"ago": {"unit": "weeks", "value": 3}, "confidence": "sure"} (confidence: sure, likely, '
    "vague). Moves rows from that period up a few places and adds up to 3; never removes one."
)


class Forwarder:
    """Sends tool calls to the daemon, starting it when nothing answers on its socket."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
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
            except DaemonUnavailable:
                # Only a failed connect is retried: a write may have landed before a drop.
                self._ensure()
                client = DaemonClient(self.settings.socket_path)
            with client:
                return client.call(method, **given)
        except DaemonError as exc:
            return {"ok": False, "error": exc.code, "message": str(exc), "rpc_code": exc.rpc_code}
        except ChittaError as exc:
            return {"ok": False, "error": exc.code, "message": str(exc)}

    def _ensure(self) -> None:
        with self._lock:
            if daemon_answers(self.settings.socket_path):
                return
            started, self._started = self._started, None
            if started is None or started[0].poll() is not None:
                started = launch.spawn_daemon(self.settings)
            log.info("waiting for the chitta daemon on %s", self.settings.socket_path)
            launch.wait_for_daemon(self.settings, *started)


class ChittaMCP(MCPServer):
    """The SDK's server, with argument errors in chitta's error shape."""

    def __init__(self, forwarder: Forwarder) -> None:
        super().__init__(name="chitta", version=__version__,
                         instructions="Long-term memory: remember what you learn, recall it "
                         "before answering. Results are JSON with ok.")  # fmt: skip
        self.forwarder = forwarder
        self.params: dict[str, tuple[str, ...]] = {}

    def offer(self, fn: Callable[..., CallToolResult], annotations: ToolAnnotations) -> None:
        """Register ``fn`` as a tool named after it; its docstring is the description."""
        self.params[fn.__name__] = tuple(inspect.signature(fn).parameters)
        self.add_tool(fn, annotations=annotations)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        unknown = sorted(set(arguments) - set(self.params.get(name, arguments)))
        if unknown:
            takes = ", ".join(self.params[name]) or "nothing"
            why = f"unknown parameter {unknown[0]!r} for {name}; it takes: {takes}"
            return as_result(_bad(why))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return as_result(_bad(_describe(exc.__cause__)))
            raise


def as_result(value: Result) -> CallToolResult:
    """A tool's JSON as an MCP result: as text and as structured content, flagged as an
    error when ``ok`` is false."""
    text = json.dumps(value, ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=value,
        is_error=not value.get("ok", False),
    )


def _bad(message: str) -> Result:
    return {"ok": False, "error": "bad_argument", "message": message}


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    name = ".".join(str(part) for part in first["loc"]) or "arguments"
    return f"{name}: {first['msg']}"


def build_server(forwarder: Forwarder) -> ChittaMCP:
    """The MCP server with one tool per daemon method."""
    server = ChittaMCP(forwarder)
    gate = forwarder.settings.gate  # the recall gateway's admission switches (recall/gate.py)

    def forward(method: str, values: dict[str, Any]) -> CallToolResult:
        # A tool's locals() at its first line hold its parameters (and this closure's names).
        return as_result(forwarder.call(method, **{k: values[k] for k in server.params[method]}))

    reads = ToolAnnotations(read_only_hint=True)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False)

    def remember(
        content: Annotated[str, Field(description="The memory: one fact, decision, lesson…")],
        kind: Annotated[str | None, Field(description="wisdom, correction, preference, "
                                          "episode, failure, … (default insight)")] = None,
        realm: Realm = None,
        tags: Annotated[str | list[str] | None, Field(description="Tags, a list or a,b")] = None,
        agent_id: Text = None, channel: Text = None, session: Text = None, file: Text = None,
        url: Text = None, event_time: Text = None, supersedes: Text = None,
        confidence: Annotated[float | None, Field(description="In (0, 1); default 0.7")] = None,
    ) -> CallToolResult:  # fmt: skip
        """Store a memory. A near-duplicate reinforces the existing one instead
        (deduplicated: true). supersedes: the id of a memory this one replaces.
        event_time: ISO 8601 when it happened, if not now."""
        return forward("remember", locals())

    def recall(
        query: Annotated[str, Field(description="What you want to know, in plain words.")],
        realm: Realm = None,
        limit: Annotated[int, Field(description="At most this many memories (a time cue "
                                    "may add up to 3 seats)")] = 10,
        strategy: Annotated[str, Field(description=" | ".join(PRESETS))] = "hybrid",
        agent_id: Text = None, channel: Text = None, session: Text = None,
        ablate: Annotated[list[str] | None, Field(description="Lanes to switch off")] = None,
        fusion: Annotated[str | None, Field(description="rrf or rsf")] = None,
        cross_realm: bool = False, disable_hdc: bool = False, include_superseded: bool = False,
        rerank: Annotated[bool, Field(description="Use the cross-encoder, if one is set up")]
        = True,
        trace: Annotated[bool, Field(description="Add the recall trace (ids and scores)")]
        = False,
        time_cue: Annotated[dict[str, Any] | None, Field(description=TIME_CUE_HELP)] = None,
    ) -> CallToolResult:  # fmt: skip
        """Find the memories that best answer a query, ranked, with the lanes that found
        them. confidence.words says whether the store knows this (KNOWN) or probably not
        (UNKNOWN: then only rows sharing a distinctive word with the query are kept; gate
        counts the rest). strategy: hybrid (default: keyword + semantic + more lanes),
        semantic, keyword, or field (every lane)."""
        values = locals()
        reply = forwarder.call("recall", **{k: values[k] for k in server.params["recall"]})
        return as_result(gate_reply(reply, realm=realm or DEFAULT_REALM,
                                    default_realm=DEFAULT_REALM, limit=limit, strategy=strategy,
                                    settings=gate))  # fmt: skip

    def reconstruct(
        query: Annotated[str, Field(description="What you want to know, in plain words.")],
        realm: Realm = None,
        limit: Annotated[int, Field(description="At most this many records")] = 10,
        budget: Annotated[int, Field(description="Characters of quotes, 100-100000")] = 2000,
        strategy: Annotated[str, Field(description=" | ".join(PRESETS))] = "hybrid",
        agent_id: Text = None, channel: Text = None, session: Text = None,
        trace: Annotated[bool, Field(description="Add the trace (ids and scores)")] = False,
        time_cue: Annotated[dict[str, Any] | None, Field(description=TIME_CUE_HELP)] = None,
    ) -> CallToolResult:  # fmt: skip
        """The answer as items that quote the stored records behind them (kind, ref, time,
        why recalled), within a character budget; omitted lists what did not fit.
        confidence.words says whether the store knows this; under UNKNOWN only items
        sharing a distinctive word with the query are kept (gate counts the rest)."""
        values = locals()
        reply = forwarder.call(
            "reconstruct", **{k: values[k] for k in server.params["reconstruct"]}
        )
        return as_result(gate_reply(reply, realm=realm or DEFAULT_REALM,
                                    default_realm=DEFAULT_REALM, limit=limit, strategy=strategy,
                                    settings=gate, rows="items"))  # fmt: skip

    def cited_recall(
        query: Annotated[str, Field(description="The question, in plain words.")],
        limit: Annotated[int | None, Field(description="Passages asked of each source, "
                                           "1-100 (default: cited.toml's, 5)")] = None,
    ) -> CallToolResult:  # fmt: skip
        """One answer to a question with numbered citations ([1], [2] in the answer, listed
        in citations), or abstained: true with abstention_reason, still listing what was
        found. The sources (this store, Markdown notes, SQLite FTS5 tables, HTTP search
        endpoints) and the model that writes the answer come from cited.toml in the chitta
        home; without one, this store's default realm alone. For raw ranked memories, use
        recall."""
        return forward("cited_recall", locals())

    def forget(id: Id) -> CallToolResult:
        """Forget a memory (soft delete; it can be restored from the CLI)."""
        return forward("forget", locals())

    def strengthen(id: Id) -> CallToolResult:
        """Record evidence for a memory: its confidence and strength go up."""
        return forward("strengthen", locals())

    def weaken(id: Id) -> CallToolResult:
        """Record evidence against a memory: its confidence and strength go down."""
        return forward("weaken", locals())

    def memory_status() -> CallToolResult:
        """The store, the model, memories per realm, and the daemon's figures."""
        return forward("memory_status", locals())

    def export_memories(
        realm: Annotated[str | None, Field(description="Only this realm")] = None,
        embeddings: bool = False, include_deleted: bool = False,
    ) -> CallToolResult:  # fmt: skip
        """Every memory, episode and triplet as JSONL text (the `jsonl` field), with counts."""
        return forward("export_memories", locals())

    def import_memories(
        jsonl: Annotated[str, Field(description="JSONL text, as export_memories gives it")],
        into: Annotated[str | None, Field(description="Put all into this realm")] = None,
    ) -> CallToolResult:  # fmt: skip
        """Import JSONL; bad lines are reported and skipped, existing ids are kept."""
        return forward("import_memories", locals())

    for fn in (recall, reconstruct, cited_recall, memory_status, export_memories):
        server.offer(fn, reads)
    for fn in (remember, strengthen, weaken, import_memories):
        server.offer(fn, writes)
    offer_relations(server, forward)
    server.offer(forget, ToolAnnotations(read_only_hint=False, destructive_hint=True))
    return server


def offer_relations(
    server: ChittaMCP, forward: Callable[[str, dict[str, Any]], CallToolResult]
) -> None:
    """The tools over triplets and entity aliases, and recall_analogy (relations/)."""
    reads = ToolAnnotations(read_only_hint=True)
    # Invalidating keeps the edge (for as_of); saying an edge or alias twice changes nothing.
    keeps = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)

    def add_triplet(
        subject: Entity,
        predicate: Annotated[str, Field(description=PREDICATE_HELP)],
        object: Entity,
        weight: Annotated[float, Field(description="How strongly it holds, in (0, 1]")] = 1.0,
        valid_from: When = None,
        source_memory: Annotated[str | None, Field(description="Id of the memory that "
                                                   "states it (same realm)")] = None,
        realm: Realm = None,
    ) -> CallToolResult:  # fmt: skip
        """Store a fact as an edge: subject -predicate-> object (e.g. auth.py imports jwt;
        Alice lives_in Paris), valid from valid_from (default now). An equal edge that
        already holds is not stored twice (existing: true). Returns the triplet and its id."""
        return forward("add_triplet", locals())

    def invalidate_triplet(
        id: Annotated[str, Field(description="A triplet id, as add_triplet or find_triplets "
                                 "returned it")],
        at: When = None,
    ) -> CallToolResult:  # fmt: skip
        """Mark an edge as no longer holding from `at` (default now). Nothing is deleted:
        the edge is kept for history and still answers as_of questions about the time
        before; current answers leave it out."""
        return forward("invalidate_triplet", locals())

    def find_triplets(
        subject: Annotated[str | None, Field(description="Only edges from this entity")] = None,
        predicate: Annotated[str | None, Field(description="Only this predicate")] = None,
        object: Annotated[str | None, Field(description="Only edges to this entity")] = None,
        realm: Realm = None,
        as_of: Annotated[str | None, Field(description="ISO 8601: the edges that held then "
                                           "(default now)")] = None,
        include_invalidated: Annotated[bool, Field(description="Every edge, invalidated "
                                                   "ones too (not with as_of)")] = False,
        limit: Annotated[int, Field(description="At most this many, 1-1000")] = 100,
    ) -> CallToolResult:  # fmt: skip
        """The stored edges matching the names given (aliases resolved), newest first: those
        that hold now, or held at as_of."""
        return forward("find_triplets", locals())

    def recall_analogy(
        a: Entity, b: Entity, c: Entity, realm: Realm = None,
        as_of: Annotated[str | None, Field(description="ISO 8601: answer over the edges "
                                           "that held then")] = None,
        limit: Annotated[int, Field(description="At most this many answers, 1-100")] = 10,
    ) -> CallToolResult:  # fmt: skip
        """a is to b as c is to what? Reads the predicates of the stored edges from a to b
        and returns c's neighbours over them, ranked, each with its supports (the a->b and
        c->d edges and the memories that stated them). Only stored triplets count: no
        guessing. When the store does not hold the relation it abstains (abstained: true)
        with reason_code unknown_entity, a_b_unrelated or c_no_edge and a reason saying what
        is missing. bounded: true when a node had too many edges and only the heaviest were
        read."""
        return forward("recall_analogy", locals())

    def alias_entity(
        alias: Annotated[str, Field(description="Another name, e.g. NYC")],
        canonical: Annotated[str, Field(description="The entity it names, e.g. New York")],
        realm: Realm = None,
    ) -> CallToolResult:  # fmt: skip
        """Make alias name the same entity as canonical, so that edges stored under either
        name answer for both (in find_triplets and recall_analogy)."""
        return forward("alias_entity", locals())

    for fn in (find_triplets, recall_analogy):
        server.offer(fn, reads)
    for fn in (add_triplet, invalidate_triplet, alias_entity):
        server.offer(fn, keeps)


def run(settings: Settings) -> None:
    """Serve MCP on stdin/stdout until the client closes the stream."""
    forwarder = Forwarder(settings)
    try:
        forwarder.start()
    except (OSError, ChittaError) as exc:  # the first call says it again, as a tool error
        log.warning("could not start the chitta daemon: %s", exc)
    build_server(forwarder).run("stdio")
