"""`chitta bench mcp-size`: what chitta's MCP tools cost a client's context, in characters.

Issue 16, part 5. Two figures, both through the real `chitta mcp` on stdio with the MCP SDK's
own client:

- the tool definitions as the client lists them (tools/list), in the form Claude Code sends
  them to the model with every request: each tool's ``name``, ``description`` and
  ``input_schema``, as compact JSON; beside them, what the ``code`` tool adds for a store
  with code indexed (listed by a second server run with ``CHITTA_MCP_CODE=on``);
- a ``recall`` reply at limit 10 over one LoCoMo conversation imported into a temporary
  store (``chitta import``), for some of its questions: the reply's characters (every text
  block, and ``structuredContent``'s JSON when the server sends it too) and the share of them
  that is memory text (the rows' own text).

Tokens are estimated as characters / 4. Only figures are kept, never stored text or queries.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from chitta.bench.locomo import load, parse_selection
from chitta.bench.scale.measure import clean_env
from chitta.errors import BadArgument
from chitta.validate import format_time

REALM = "locomo"
#: The tool definitions' budget and the memory-text share a compact recall reply should reach.
DEFINITIONS_BUDGET = 6000
MEMORY_SHARE_AIM = 0.7
CALL_TIMEOUT_S = 300.0  # the first call waits for the daemon the server starts


def compact_json(value: Any) -> str:
    """JSON as a client sends it in a request body: no spaces, UTF-8 text as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def definitions(tools: list[Any]) -> list[dict[str, Any]]:
    """The listed tools as the model is given them: name, description, input_schema."""
    return [{"name": t.name, "description": t.description or "",
             "input_schema": t.input_schema} for t in tools]  # fmt: skip


def reply_figures(result: Any) -> dict[str, int]:
    """A tool result's characters (its text blocks and structured content) and the memory
    text among them (the rows' text, whatever the shape names it)."""
    texts = [block.text for block in result.content if getattr(block, "type", "") == "text"]
    chars = sum(len(t) for t in texts)
    if result.structured_content is not None:
        chars += len(compact_json(result.structured_content))
    data = json.loads(texts[0]) if texts else {}
    return {"chars": chars, "memory_chars": sum(len(t) for t in row_texts(data))}


def row_texts(data: dict[str, Any]) -> list[str]:
    """The memory text of a recall or reconstruct reply's rows, in either shape: the compact
    one (rows are lists, text first) or the verbose one (``content`` or ``quote``)."""
    out = []
    for key in ("hits", "items", "corrections"):
        for row in data.get(key) or []:
            if isinstance(row, list) and row:
                out.append(str(row[0]))
            elif isinstance(row, dict):
                out.append(str(row.get("content") or row.get("quote") or row.get("text") or ""))
    return out


async def measure(home: Path, queries: list[str], *, realm: str, limit: int,
                  env: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    """The tool definitions' size and each query's recall reply figures, from one `chitta mcp`
    on ``home``."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    base = env if env is not None else clean_env()
    params = StdioServerParameters(command=sys.executable, args=["-m", "chitta", "mcp"],
                                   env={**base, "CHITTA_HOME": str(home)})  # fmt: skip
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session,
    ):
        await session.initialize()
        listed = (await session.list_tools()).tools
        defs = definitions(listed)
        replies = []
        for query in queries:
            args = {"query": query, "realm": realm, "limit": limit}
            result = await session.call_tool("recall", args)
            if result.is_error:
                raise BadArgument(f"recall failed: {result.content[0].text[:200]}")
            replies.append(reply_figures(result))
    with_code = definitions(await _listed(params, {"CHITTA_MCP_CODE": "on"}))
    per_tool = {d["name"]: len(compact_json(d)) for d in defs}
    return {
        "tools": len(defs),
        "definitions_chars": len(compact_json(defs)),
        "definitions_with_code_chars": len(compact_json(with_code)),
        "per_tool_chars": dict(sorted(per_tool.items(), key=lambda kv: -kv[1])),
        "replies": replies,
    }


async def _listed(params: Any, env: dict[str, str]) -> list[Any]:
    """The tools a `chitta mcp` run like ``params`` with ``env`` added lists."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    more = StdioServerParameters(command=params.command, args=params.args,
                                 env={**params.env, **env})  # fmt: skip
    async with (
        stdio_client(more) as (read, write),
        ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session,
    ):
        await session.initialize()
        return (await session.list_tools()).tools


def summary(figures: dict[str, Any]) -> dict[str, Any]:
    """The averages over the replies, and the budget's verdicts."""
    replies = figures["replies"]
    chars = statistics.mean(r["chars"] for r in replies)
    memory = statistics.mean(r["memory_chars"] for r in replies)
    share = sum(r["memory_chars"] for r in replies) / max(1, sum(r["chars"] for r in replies))
    return {
        "definitions_chars": figures["definitions_chars"],
        "definitions_tokens": round(figures["definitions_chars"] / 4),
        "definitions_with_code_chars": figures["definitions_with_code_chars"],
        "recall_chars_mean": round(chars),
        "recall_tokens_mean": round(chars / 4),
        "recall_memory_chars_mean": round(memory),
        "recall_memory_share": round(share, 3),
        "within_definitions_budget": figures["definitions_chars"] <= DEFINITIONS_BUDGET,
        "memory_share_reached": share >= MEMORY_SHARE_AIM,
    }


def build_store(home: Path, data: Path, conversation: str, workdir: Path) -> dict[str, Any]:
    """One LoCoMo conversation's turns as memories of realm ``locomo`` in ``home`` (through
    ``chitta import``, with each session's date as the event time); its questions."""
    dataset = load(data, select=parse_selection(conversation))
    if not dataset.conversations:
        raise BadArgument(f"{data} has no conversation {conversation!r}")
    conv = dataset.conversations[0]
    source = workdir / "memories.jsonl"
    with source.open("w", encoding="utf-8") as fh:
        for turn in conv.turns:
            record = {"kind": "insight", "content": turn.memory_text, "realm": REALM,
                      "event_time": format_time(turn.event_time)}  # fmt: skip
            fh.write(json.dumps(record) + "\n")
    env = clean_env() | {"CHITTA_HOME": str(home)}
    done = subprocess.run([sys.executable, "-m", "chitta", "import", str(source), "--json"],
                          env=env, capture_output=True, text=True, timeout=1800)  # fmt: skip
    source.unlink()  # the text stays out of what the run leaves behind
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1][:200]
        raise BadArgument(f"`chitta import` exited with {done.returncode}: {last}")
    imported = json.loads(done.stdout)["imported"]["memories"]
    return {"sample_id": conv.sample_id, "memories": imported,
            "questions": [q.question for q in conv.questions]}  # fmt: skip


def stop_daemon(home: Path) -> None:
    """Stop the daemon the MCP server started on ``home`` (SIGTERM by its pid)."""
    import signal
    import time

    from chitta.daemon.client import DaemonClient, daemon_answers

    sock = home / "chitta.sock"
    if not daemon_answers(sock):
        return
    with DaemonClient(sock) as client:
        pid = client.call("memory_status")["daemon"]["pid"]
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while sock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def markdown(record: dict[str, Any]) -> str:
    """The table for docs/benchmarks.md."""
    s, settings = record["summary"], record["settings"]
    head = (
        f"`{record['command']}` at commit `{(record['commit'] or 'unknown')[:12]}`: "
        f"{record['figures']['tools']} tools; `recall` at limit {settings['limit']} in realm "
        f"`{REALM}` over LoCoMo {settings['conversation']} ({settings['memories']} memories), "
        f"the first {settings['questions']} questions, averaged."
    )
    rows = [
        ("tool definitions (name, description, input_schema)",
         f"{s['definitions_chars']:,}", f"{s['definitions_tokens']:,}",
         f"≤ {DEFINITIONS_BUDGET:,} chars: {'yes' if s['within_definitions_budget'] else 'no'}"),
        ("the same with the `code` tool (a store with code indexed)",
         f"{(code := s['definitions_with_code_chars']):,}", f"{round(code / 4):,}",
         "offered only then"),
        ("`recall` reply at limit 10", f"{s['recall_chars_mean']:,}",
         f"{s['recall_tokens_mean']:,}",
         f"memory text {s['recall_memory_share']:.0%} (aim ≥ {MEMORY_SHARE_AIM:.0%}: "
         f"{'yes' if s['memory_share_reached'] else 'no'})"),
    ]  # fmt: skip
    lines = [head, "", "| what | characters | tokens (chars/4) | budget |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    return "\n".join(lines) + "\n"
