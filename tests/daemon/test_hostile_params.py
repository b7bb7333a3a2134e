"""Hostile parameter values for every operation, through a real daemon over a real socket
and through the MCP server's own tool calls: the answer is a result or a bad-parameters
error with a specific code, never JSON-RPC's internal error (a traceback in the log).

One daemon serves the module, its log kept in a file: at the end it must hold no traceback.
The hostile value of one parameter at a time goes beside valid values of the others, so each
check is reached. Relative paths only: inside the daemon they are refused, so no operation
writes or reads a file anywhere.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chitta.config import Settings
from chitta.daemon import protocol
from chitta.daemon.client import daemon_answers
from chitta.mcp.server import ChittaMCP, Forwarder, tools
from chitta.ops import OPERATIONS
from chitta.ops.spec import Operation

#: Operations left out, and why.
SKIP = {"reembed": "no parameters, and it re-embeds every memory (long)",
        "decay": "no parameters", "memory_status": "no parameters"}  # fmt: skip
FUZZED = [op for op in OPERATIONS.values() if op.name not in SKIP]
PATHS = {"path", "config", "golden", "from_run"}
ULID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
#: Valid values of the required parameters (and of one of import's two sources).
BASE: dict[str, dict[str, Any]] = {
    "remember": {"content": "Hostile parameters are refused with a clear error"},
    "recall": {"query": "hostile parameters"},
    "reconstruct": {"query": "hostile parameters"},
    "cited_recall": {"query": "hostile parameters"},
    "supersede": {"old_id": ULID, "new_id": ULID},
    "add_triplet": {"subject": "fuzzer", "predicate": "sends", "object": "junk"},
    "invalidate_triplet": {"id": ULID},
    "alias_entity": {"alias": "fz", "canonical": "fuzzer"},
    "remove_alias": {"alias": "fz"},
    "recall_analogy": {"a": "fuzzer", "b": "junk", "c": "daemon"},
    "session_shown": {"session": "fuzz-session"},
    "import_memories": {"jsonl": ""},
    "backup": {"path": "relative.db"},
    "restore_backup": {"path": "relative.db"},
    "calibrate": {"show": True},
    "code_index": {"path": "relative"},
    "find_symbol": {"name": "fuzz"},
    "symbol_callers": {"symbol": "fuzz"},
    "symbol_callees": {"symbol": "fuzz"},
    **{name: {"id": ULID} for name in ("get_memory", "forget", "restore", "purge",
                                       "strengthen", "weaken")},
}  # fmt: skip
#: Canonical hostile values: lone surrogates in text, list items and keys; numbers JSON
#: cannot hold or SQLite cannot store; empty and wrong-typed values; nested junk.
HOSTILE: list[Any] = [
    "\ud800", "a\udfffb", "A memory long enough to hold \ud800, a lone surrogate", ["\ud800"],
    ["ok", "\udc00"], {"\ud800": 1}, [{"\ud800": "x"}],
    float("nan"), float("inf"), float("-inf"), 2**70, -(2**70), 2**63, -(2**63) - 1, 1e308,
    -1e308, -1, 0, 0.5, "", " ", [], {}, [[[]]], {"a": {"b": [1, {"c": None}]}}, True, False,
    {"confidence": "sure", "after": "\ud800"},
    {"confidence": "sure", "ago": {"unit": "day", "value": 2**70}},
    {"confidence": "sure", "ago": {"unit": "day", "value": float("nan")}},
    {"confidence": "sure", "ago": {"unit": "\ud800", "value": 1}},
    {"confidence": "sure", "before": 1e308}, {"confidence": ["sure"]},
]  # fmt: skip
#: The error codes a refusal may carry: bad parameters, or a chitta error naming its cause.
REFUSALS = {protocol.INVALID_PARAMS, protocol.CHITTA_ERROR}


def with_value(op: Operation, name: str, value: Any) -> dict[str, Any]:
    """The operation's valid base parameters with ``name`` set to ``value``."""
    params = {k: v for k, v in BASE.get(op.name, {}).items() if k != name}
    if op.name == "import_memories" and name == "path":
        params.pop("jsonl")  # one source at a time
    return {**params, name: value}


class Rpc:
    """One connection to the daemon, one request line at a time."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(60)
        self.sock.connect(str(path))
        self.reader = self.sock.makefile("rb")
        self.next_id = 0

    def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        # ensure_ascii: a lone surrogate goes as its \ud800 escape; NaN and Infinity as
        # Python's JSON writes them (and reads them back).
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                           "params": params}, ensure_ascii=True, allow_nan=True)  # fmt: skip
        self.sock.sendall(line.encode("ascii") + b"\n")
        reply = self.reader.readline()
        assert reply, f"the daemon closed the connection on {method} {params!r}"
        return json.loads(reply)

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


def chitta_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    return {**env, "CHITTA_HOME": str(home), **extra}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A daemon for the module, its log in ``serve.log`` beside its home; the home."""
    home = tmp_path_factory.mktemp("hostile") / "h"
    log = home.parent / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "chitta", "serve"], env=chitta_env(home),
                                stdout=subprocess.DEVNULL, stderr=out)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not daemon_answers(home / "chitta.sock"):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield home
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def rpc(served: Path) -> Iterator[Rpc]:
    conn = Rpc(served / "chitta.sock")
    yield conn
    conn.close()


def trouble(reply: dict[str, Any]) -> str | None:
    """None for a result or a refusal with a specific chitta code; else the error."""
    if "result" in reply:
        return None
    error = reply["error"]
    code = error.get("data", {}).get("code")
    if error["code"] in REFUSALS and code and code != "internal_error":
        return None
    return f"{error}"


def assert_answered(reply: dict[str, Any], method: str, params: dict[str, Any]) -> None:
    """A result, or a refusal with a specific chitta code; never an internal error."""
    found = trouble(reply)
    assert found is None, f"{method} {params!r}: {found}"


@pytest.mark.parametrize("op", FUZZED, ids=lambda op: op.name)
def test_every_parameter_refuses_hostile_values_as_bad_parameters(op: Operation, rpc: Rpc) -> None:
    failed = []
    for p in op.params:
        for value in HOSTILE:
            params = with_value(op, p.name, value)
            found = trouble(rpc.ask(op.name, params))
            if found is not None:
                failed.append(f"{p.name}={value!r}: {found}")
    assert not failed, "\n".join(failed)


def _no_path(value: Any) -> bool:
    return not (isinstance(value, str) and value.startswith(("/", "~")))


_text = st.text(max_size=12) | st.sampled_from(["\ud800", "\udfff", "x\udc80y", ""])
_scalars = (
    _text
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.booleans()
    | st.none()
)
#: Keys of the time cue among the others: its checks are reached too.
_keys = st.sampled_from(["after", "before", "ago", "confidence", "unit", "value"]) | _text
JUNK = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=8,
)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_generated_junk_in_any_parameter_is_never_an_internal_error(data, rpc: Rpc) -> None:
    op = OPERATIONS[data.draw(st.sampled_from([o.name for o in FUZZED]), label="operation")]
    p = op.by_name[data.draw(st.sampled_from([p.name for p in op.params]), label="parameter")]
    value = data.draw(JUNK.filter(_no_path) if p.name in PATHS else JUNK, label="value")
    params = with_value(op, p.name, value)
    assert_answered(rpc.ask(op.name, params), op.name, params)


# --- sizes: every text has a limit, the same at every edge ---------------------------------

TWO_MIB = 2 * 1024 * 1024


def test_a_two_mib_query_is_refused_as_too_large_naming_the_limit(rpc: Rpc) -> None:
    for method in ("recall", "reconstruct", "cited_recall"):
        error = rpc.ask(method, {"query": "x" * TWO_MIB})["error"]
        assert error["code"] == protocol.INVALID_PARAMS, method
        assert error["data"]["code"] == "too_large"
        assert error["message"] == "query is 2,097,152 characters; the limit is 2,000"


def test_a_long_list_and_a_long_item_are_refused_as_too_large(rpc: Rpc) -> None:
    many = rpc.ask("session_shown", {"session": "s", "add": [ULID] * 513})["error"]
    assert many["data"]["code"] == "too_large" and "the limit is 512" in many["message"]
    long = rpc.ask("remember", {"content": "A memory with one long tag", "tags": ["t" * 65]})
    assert long["error"]["data"]["code"] == "too_large"
    content = rpc.ask("remember", {"content": "x" * 40_000})["error"]
    assert content["data"]["code"] == "content_too_long" and "32,768" in content["message"]


# --- the same through the MCP server's tool calls ----------------------------------------


def mcp_call(server: ChittaMCP, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The tool's JSON, as the server would write it to its client (UTF-8 text)."""
    result = anyio.run(server.call_tool, name, arguments)
    (block,) = result.content
    block.text.encode("utf-8")  # stdio carries UTF-8: a lone surrogate could not go out
    return json.loads(block.text)


@pytest.fixture(scope="module")
def mcp_server(served: Path) -> ChittaMCP:
    return ChittaMCP(Forwarder(Settings(home=served)))


MCP_TOOLS = [op for op in tools() if op.name not in SKIP]


def test_a_tool_refuses_a_query_over_the_limit_before_the_daemon(mcp_server) -> None:
    reply = mcp_call(mcp_server, "recall", {"query": "x" * TWO_MIB})
    assert reply == {"ok": False, "error": "too_large",
                     "message": "query is 2,097,152 characters; the limit is 2,000"}  # fmt: skip
    # Not in the schema (a name's limit is far beyond what one holds), refused all the same.
    reply = mcp_call(mcp_server, "recall", {"query": "q", "realm": "r" * 129})
    assert reply["error"] == "too_large" and reply["message"].endswith("the limit is 128")


@pytest.mark.parametrize("op", MCP_TOOLS, ids=lambda op: op.name)
def test_every_tool_argument_refuses_hostile_values_by_name(op: Operation, mcp_server) -> None:
    for p in op.params:
        if not p.mcp:
            continue
        for value in HOSTILE:
            arguments = with_value(op, p.name, value)
            reply = mcp_call(mcp_server, op.name, arguments)
            assert reply.get("ok") or reply.get("error") not in (None, "internal_error"), (
                op.name, arguments, reply,
            )  # fmt: skip


# --- the prompt hook cuts a prompt to the query limit rather than be refused ---------------


def test_the_prompt_hook_cuts_and_cleans_a_prompt_the_daemon_would_refuse(
    served: Path, rpc: Rpc
) -> None:
    from chitta.validate import MAX_QUERY_CHARS

    assert OPERATIONS["recall"].by_name["query"].max_length == MAX_QUERY_CHARS
    wal = "We chose SQLite WAL over a custom log because crash recovery comes free"
    rpc.ask("remember", {"content": wal, "realm": "hooked"})
    # A lone surrogate, and far more than a query may hold.
    prompt = "why did we choose SQLite WAL \ud800 over a custom log? " + "padding " * 2000
    event = json.dumps({"prompt": prompt, "session_id": "hooked", "cwd": "/nowhere"})
    env = chitta_env(served, CHITTA_HOOK_REALM="hooked", CHITTA_HOOK_BUDGET_MS="20000",
                     CHITTA_ADMIT_DEBUG="1")  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "chitta", "hook", "prompt"], input=event,
                          capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "error" not in done.stderr.splitlines()[-1], done.stderr  # no lane was refused
    assert wal in done.stdout, done.stderr


# --- last: nothing above left a traceback in the daemon's log ---------------------------


def test_the_daemon_logged_no_traceback(served: Path, rpc: Rpc) -> None:
    assert rpc.ask("memory_status", {})["result"]["ok"]  # still serving
    log = (served.parent / "serve.log").read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in log, log[-3000:]
