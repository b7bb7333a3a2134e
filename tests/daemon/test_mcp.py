"""`chitta mcp` end to end: the SDK's own stdio client against a real `python -m chitta mcp`."""

from __future__ import annotations

import functools
import json
import os
import signal
import stat
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TOOLS = {"remember", "recall", "reconstruct", "cited_recall", "forget", "strengthen", "weaken",
         "memory_status", "export_memories", "import_memories", "add_triplet",
         "recall_analogy"}  # fmt: skip
STOP_TIMEOUT_S = 30.0
#: Generous: the first call waits for the daemon the MCP server starts (it loads the model).
CALL_TIMEOUT_S = 120.0


def server_params(home: Path, cwd: Path | None = None, **settings: str) -> StdioServerParameters:
    env = {"CHITTA_HOME": str(home), "PYTHONPATH": os.environ.get("PYTHONPATH", ""), **settings}
    return StdioServerParameters(command=sys.executable, args=["-m", "chitta", "mcp"], env=env,
                                 cwd=cwd)  # fmt: skip


Session = Callable[[str, dict[str, Any] | None], Awaitable[tuple[dict[str, Any], bool]]]


async def in_session(
    home: Path,
    body: Callable[[ClientSession, Session], Awaitable[None]],
    params: StdioServerParameters | None = None,
    **settings: str,
):
    """Run ``body`` with an initialised session and a ``call(tool, args)`` helper that gives
    the tool's JSON and whether the result was flagged as an error (``settings``: more
    CHITTA_* variables for the server)."""
    async with (
        stdio_client(params or server_params(home, **settings)) as (read, write),
        ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session,
    ):
        session.chitta_init = await session.initialize()

        async def call(tool: str, args: dict[str, Any] | None = None):
            result = await session.call_tool(tool, args or {})
            # Sent once: one JSON text block, no structuredContent copy.
            (block,) = result.content
            assert result.structured_content is None
            return json.loads(block.text), bool(result.is_error)

        await body(session, call)


@pytest.fixture
def daemons(home: Path, reaper) -> Iterator[list[int]]:
    """Pids of daemons a test saw (from memory_status); each is stopped after the test, and
    so is any other daemon of the home — answering, or still loading (a test that failed
    before it could note the pid must not leave one running)."""
    pids: list[int] = []
    yield pids
    sock = home / "chitta.sock"
    for pid in dict.fromkeys(pids):
        stop_pid(pid, sock)
    reaper(home)


def stop_pid(pid: int, sock: Path) -> None:
    """SIGTERM the daemon and wait for its socket file to go (it removes it on the way out)."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while sock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_tools_forward_to_a_daemon_the_server_starts(home: Path, daemons: list[int]) -> None:
    sock = home / "chitta.sock"
    assert not sock.exists()

    async def body(session: ClientSession, call: Session) -> None:
        listed = await session.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS
        assert all(len(tool.description.splitlines()) < 20 for tool in listed.tools)

        status, failed = await call("memory_status", None)
        assert status["ok"] and not failed
        daemons.append(status["daemon"]["pid"])

        done, _ = await call("remember", {"content": "We chose SQLite WAL because crash "
                                          "recovery comes free", "realm": "demo",
                                          "kind": "wisdom", "tags": ["storage"]})  # fmt: skip
        assert done == {"ok": True, "id": done["id"]}, done  # a new memory: only its id
        found, failed = await call("recall", {"query": "why SQLite WAL?", "realm": "demo"})
        assert found["ok"] and not failed, found
        # The compact shape: the band once, rows of text first, id, kind, age.
        assert set(found) == {"ok", "band", "hits"}
        assert found["band"].startswith("KNOWN (")
        text, ident, kind, age = found["hits"][0]
        assert (ident, kind, age) == (done["id"], "wisdom", "0m")
        assert text.startswith("We chose SQLite WAL")
        full, _ = await call("recall", {"query": "why SQLite WAL?", "realm": "demo",
                                        "verbose": True})  # fmt: skip
        assert full["strategy"] == "hybrid" and full["gate"]["band"] == "KNOWN"
        assert full["hits"][0]["id"] == done["id"] and "lanes" in full["hits"][0]
        keyword, _ = await call("recall", {"query": "crash recovery", "realm": "demo",
                                           "strategy": "keyword", "verbose": True})  # fmt: skip
        assert keyword["strategy"] == "keyword"
        assert [hit["id"] for hit in keyword["hits"]] == [done["id"]]
        short, _ = await call("reconstruct", {"query": "why SQLite WAL?", "realm": "demo"})
        assert [row[1] for row in short["items"]] == [done["id"]]
        rebuilt, failed = await call("reconstruct", {"query": "why SQLite WAL?", "realm": "demo",
                                                     "budget": 100, "trace": True})  # fmt: skip
        assert rebuilt["ok"] and not failed, rebuilt
        assert rebuilt["items"][0]["ref"] == done["id"]
        assert rebuilt["items"][0]["quote"].startswith("We chose SQLite WAL")
        assert rebuilt["trace"]["recall"]["trace_version"] == 1

        stronger, _ = await call("strengthen", {"id": done["id"]})
        assert stronger == {"ok": True, "id": done["id"]}
        exported, _ = await call("export_memories", {"realm": "demo"})
        assert exported["counts"]["memories"] == 1
        assert done["id"] in exported["jsonl"]

    anyio.run(in_session, home, body)
    assert sock.exists()
    log = home / "chitta-serve.log"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    stop_pid(daemons[0], sock)
    assert not sock.exists()


def test_the_provenance_tool_is_offered_on_request(home: Path, daemons: list[int]) -> None:
    async def body(session: ClientSession, call: Session) -> None:
        listed = await session.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS | {"provenance"}
        status, _ = await call("memory_status", None)
        daemons.append(status["daemon"]["pid"])
        done, _ = await call("remember", {"content": "Deploys go out on Tuesdays.",
                                          "realm": "demo"})  # fmt: skip
        chain, failed = await call("provenance", {"id": done["id"]})
        assert not failed and chain["source_kind"] == "stated" and chain["trust"] == 1.0

    anyio.run(lambda: in_session(home, body, CHITTA_MCP_PROVENANCE="1"))


def test_triplets_and_analogies_through_the_tools(home: Path, daemons: list[int]) -> None:
    async def body(session: ClientSession, call: Session) -> None:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert listed["recall_analogy"].annotations.read_only_hint is True
        hints = listed["add_triplet"].annotations
        assert hints.read_only_hint is False and hints.destructive_hint is False
        assert "abstains" in listed["recall_analogy"].description

        status, _ = await call("memory_status", None)
        daemons.append(status["daemon"]["pid"])
        edges = [("France", "Capital Of", "Paris"), ("italy", "capital-of", "Rome")]
        ids = []
        for subject, predicate, obj in edges:
            done, failed = await call("add_triplet", {"subject": subject, "predicate": predicate,
                                                      "object": obj, "realm": "geo"})  # fmt: skip
            assert done["ok"] and not failed and done["existing"] is False, done
            assert done["triplet"]["predicate_key"] == "capital_of"
            ids.append(done["triplet"]["id"])
        again, _ = await call("add_triplet", {"subject": "FRANCE", "predicate": "capital_of",
                                              "object": "paris", "realm": "geo"})  # fmt: skip
        assert again["existing"] is True and again["triplet"]["id"] == ids[0]

        answer, failed = await call("recall_analogy", {"a": "france", "b": "paris",
                                                       "c": "Italy", "realm": "geo"})  # fmt: skip
        assert answer["ok"] and not failed and answer["abstained"] is False, answer
        [rome] = answer["answers"]
        assert rome["entity"] == "Rome"
        assert [(s["ab"]["id"], s["cd"]["id"]) for s in rome["supports"]] == [tuple(ids)]
        backwards = {"a": "paris", "b": "france", "c": "italy", "realm": "geo"}
        abstained, failed = await call("recall_analogy", backwards)
        assert abstained["ok"] and not failed  # an abstention is an answer, not an error
        assert abstained["abstained"] and abstained["reason_code"] == "a_b_unrelated"

        # Curating edges is the CLI's and the daemon's (tests/daemon/test_relations_daemon.py).
        gone, failed = await call("invalidate_triplet", {"id": ids[1]})
        assert failed and "unknown tool 'invalidate_triplet'" in gone["message"]

        bad, failed = await call("add_triplet", {"subject": "a", "predicate": "calls",
                                                 "object": "b", "valid_from": "soon"})  # fmt: skip
        assert failed and bad["error"] == "bad_date" and "valid_from" in bad["message"]
        bad, failed = await call("recall_analogy", {"a": "x", "b": "y", "c": "z", "limit": "all"})
        assert failed and bad["error"] == "bad_argument" and "limit" in bad["message"]

    anyio.run(in_session, home, body)


def test_bad_arguments_give_ok_false_naming_them(home: Path, daemons: list[int]) -> None:
    async def body(session: ClientSession, call: Session) -> None:
        status, _ = await call("memory_status", None)
        daemons.append(status["daemon"]["pid"])

        no_confidence = {"query": "x", "time_cue": {"ago": "long_ago"}}
        cases = [
            ("recall", {"query": ""}, "bad_argument", "query"),
            ("recall", {"query": "x", "strategy": "nope"}, "bad_argument", "strategy"),
            ("recall", {"query": "x", "limit": "many"}, "bad_argument", "limit"),
            ("recall", {"query": "x", "stratgy": "keyword"}, "bad_argument", "stratgy"),
            ("recall", {}, "bad_argument", "query"),
            ("recall", no_confidence, "bad_argument", "time_cue.confidence"),
            ("recall", {"query": "x", "time_cue": "last week"}, "bad_argument", "time_cue"),
            ("remember", {"content": "short"}, "content_too_short", "10"),
            ("forget", {"id": "01NOSUCHMEMORY"}, "memory_not_found", "01NOSUCHMEMORY"),
        ]
        for tool, args, code, named in cases:
            data, failed = await call(tool, args)
            assert failed, (tool, args)
            assert data["ok"] is False
            assert data["error"] == code, data
            assert named in data["message"], data

    anyio.run(in_session, home, body)


def test_two_servers_racing_share_one_daemon(home: Path, daemons: list[int]) -> None:
    pids: list[int] = []

    async def body(session: ClientSession, call: Session) -> None:
        status, failed = await call("memory_status", None)
        assert not failed, status
        pids.append(status["daemon"]["pid"])

    async def both() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(in_session, home, body)
            group.start_soon(in_session, home, body)

    anyio.run(both)
    daemons.extend(set(pids))
    assert len(pids) == 2 and pids[0] == pids[1]


def test_a_call_that_names_no_realm_uses_the_workspace_realm(
    home: Path, daemons: list[int], tmp_path: Path
) -> None:
    project = tmp_path / "billing"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    seen: dict[str, Any] = {}

    async def body(session: ClientSession, call: Session) -> None:
        seen["instructions"] = session.chitta_init.instructions
        done, _ = await call("remember", {"content": "Invoices are numbered per year"})
        status, _ = await call("memory_status", None)
        daemons.append(status["daemon"]["pid"])
        seen["per_realm"] = status["per_realm"]
        found, _ = await call("recall", {"query": "invoice numbers", "verbose": True})
        seen["scope"] = found["scope"]["realm"]
        seen["hit"] = [h["id"] for h in found["hits"]] == [done["id"]]

    anyio.run(in_session, home, body, server_params(home, cwd=project / "src"))
    assert seen["per_realm"] == {"billing": 1} and seen["scope"] == "billing" and seen["hit"]
    assert "realm billing (the name of the git root" in seen["instructions"]

    async def named(session: ClientSession, call: Session) -> None:
        seen["instructions"] = session.chitta_init.instructions
        found, _ = await call("recall", {"query": "invoice numbers", "verbose": True})
        seen["scope"] = found["scope"]["realm"]

    anyio.run(in_session, home, named, server_params(home, cwd=project, CHITTA_REALM="ops"))
    assert seen["scope"] == "ops" and "realm ops (from CHITTA_REALM)" in seen["instructions"]


def test_after_an_idle_exit_the_next_call_starts_a_new_daemon(home: Path, daemons) -> None:
    sock = home / "chitta.sock"

    async def body(session: ClientSession, call: Session) -> None:
        first, failed = await call("memory_status", None)
        assert not failed and first["daemon"]["idle_exit_s"] == 2
        daemons.append(first["daemon"]["pid"])
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while sock.exists() and time.monotonic() < deadline:
            await anyio.sleep(0.1)
        assert not sock.exists(), "the daemon did not stop by itself"
        done, failed = await call("remember", {"content": "remembered after the daemon left",
                                               "realm": "demo"})  # fmt: skip
        assert done["ok"] and not failed, done
        second, _ = await call("memory_status", None)
        daemons.append(second["daemon"]["pid"])
        assert second["daemon"]["pid"] != first["daemon"]["pid"]
        assert second["per_realm"] == {"demo": 1}

    anyio.run(functools.partial(in_session, home, body, CHITTA_DAEMON_IDLE_S="2"))
    assert "stopped after 2 s without a request" in (home / "chitta-serve.log").read_text()


def test_the_clients_workspace_root_decides_the_realm(
    home: Path, daemons: list[int], tmp_path: Path
) -> None:
    from mcp.types import ListRootsResult, Root

    workspace = tmp_path / "ledger app"
    (workspace / ".git").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    seen: dict[str, Any] = {}

    async def roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=workspace.as_uri(), name="ledger")])

    async def run() -> None:
        async with (
            stdio_client(server_params(home, cwd=elsewhere)) as (read, write),
            ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S,
                          list_roots_callback=roots) as session,
        ):  # fmt: skip
            await session.initialize()
            result = await session.call_tool("remember", {"content": "Ledgers close monthly"})
            seen["remembered"] = json.loads(result.content[0].text)
            status = json.loads((await session.call_tool("memory_status", {})).content[0].text)
            daemons.append(status["daemon"]["pid"])
            seen["per_realm"] = status["per_realm"]

    anyio.run(run)
    assert seen["remembered"]["ok"], seen
    assert seen["per_realm"] == {"ledger-app": 1}  # the root's git name, not the server's cwd


def test_a_remember_while_the_daemon_starts_is_spooled_and_lands_once(
    home: Path, daemons: list[int]
) -> None:
    text = "The staging database is rebuilt every night at two"

    async def body(session: ClientSession, call: Session) -> None:
        # The server started the daemon as it came up; it is still loading its model.
        done, failed = await call("remember", {"content": text, "realm": "demo"})
        assert done["ok"] and not failed, done
        assert done["spooled"] is True and "lands in the store" in done["message"]
        status, _ = await call("memory_status", None)  # waits for the daemon to be up
        daemons.append(status["daemon"]["pid"])
        deadline = time.monotonic() + 30
        while True:
            exported, _ = await call("export_memories", {"realm": "demo"})
            if exported["counts"]["memories"] or time.monotonic() > deadline:
                break
            await anyio.sleep(0.2)
        rows = [json.loads(line) for line in exported["jsonl"].splitlines()]
        memories = [r for r in rows if r.get("type") == "memory"]
        assert [m["content"] for m in memories] == [text]
        assert memories[0]["event_time"] is not None  # when it was said, not taken in
        while True:  # the intake records itself just after its last write lands
            status, _ = await call("memory_status", None)
            if status["spool"]["last_intake"] or time.monotonic() > deadline:
                break
            await anyio.sleep(0.2)
        assert status["spool"]["waiting"] == 0 and status["spool"]["last_intake"]["taken"] == 1

    anyio.run(functools.partial(in_session, home, body, CHITTA_MCP_SPOOL_WAIT_S="0.01"))
