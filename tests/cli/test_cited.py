"""`chitta cited-recall` end to end: a real store with memories, a real Markdown file, a real
SQLite FTS5 file and a real OpenAI-compatible chat server on 127.0.0.1; in process (click's
runner), through a real daemon (its `cited_recall` method), and through the real MCP SDK
client against `python -m chitta mcp`."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner, Result
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from chitta.api import Chitta
from chitta.cited.base import CitedAnswer
from chitta.cli import main
from chitta.config import Settings
from chitta.daemon.client import DaemonClient, DaemonError
from chitta.embed.cache import CachedEmbedder

QUESTION = "Why did we choose Postgres for billing?"
OFF_TOPIC = "What is a good recipe for banana bread?"
MEMORIES = (
    "We chose Postgres for the billing service because it has row-level locks for the outbox",
    "Alice prefers tabs over spaces in Python code",
    "The deploy pipeline runs on Fridays only after the staging checks pass",
)
MARKDOWN = """\
# Project memory

## Database
Billing runs on Postgres 16; SQLite is only the local cache.

## Style
Tabs, not spaces.
"""
SESSION = (
    "user: why postgres for billing? assistant: the outbox needs row-level locks",
    "user: lunch at noon? assistant: yes",
)
SEED_KEYS = {"query", "synthesized_answer", "abstained", "abstention_reason", "citations",
             "sources", "chunks", "errors", "timestamp"}  # fmt: skip
OUR_KEYS = {"answer_mode", "model", "timing_ms"}
MODEL_ANSWER = "Postgres was chosen for billing for its row-level locks [1], as noted in [2]."
MCP_TIMEOUT_S = 120.0


# --- a chat model on loopback ----------------------------------------------------------------


#: The state of tests/conftest.py's chat server (a conftest's class cannot be imported here).
ModelServer = Any


@pytest.fixture
def model(chat_server):
    """The chat model on loopback (tests/conftest.py ``chat_server``), answering
    MODEL_ANSWER until a test says otherwise."""
    chat_server.chat(MODEL_ANSWER)
    return chat_server


def endpoint(model) -> str:
    """The OpenAI-compatible base URL of ``model``."""
    return model.url + "/v1"


# --- the sources -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    home: Path
    folder: Path  # the Markdown file, the FTS5 file and cited.toml
    ids: tuple[str, ...]

    def config(self, model_url: str | None = None, *, name: str = "cited.toml",
               api_key_env: str | None = None, into: Path | None = None) -> Path:  # fmt: skip
        """A cited.toml naming this store's realm demo, the Markdown file and the FTS5 table
        (absolute paths, so it may live anywhere), and a model when ``model_url`` is given."""
        lines = [
            "[[source]]", 'name = "memory"', 'kind = "chitta"', 'realms = ["demo"]', "",
            "[[source]]", 'name = "notes"', 'kind = "markdown"',
            f'paths = ["{self.folder / "MEMORY.md"}"]', "",
            "[[source]]", 'name = "session"', 'kind = "sqlite_fts"',
            f'path = "{self.folder / "session.db"}"', 'table = "messages"',
            'column = "content"', "",
        ]  # fmt: skip
        if model_url is not None:
            lines += ["[[model]]", 'kind = "openai"', f'url = "{model_url}"',
                      'model = "chat-1"', "timeout_s = 10"]  # fmt: skip
            if api_key_env:
                lines.append(f'api_key_env = "{api_key_env}"')
        path = (into or self.folder) / name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path


@pytest.fixture
def setup(tmp_path: Path, embedder: CachedEmbedder) -> Setup:
    """A store in realm demo, a MEMORY.md and an FTS5 session file; nothing left open."""
    home, folder = tmp_path / "home", tmp_path / "sources"
    folder.mkdir()
    with Chitta.open(Settings(home=home), embedder=embedder) as chitta:
        ids = tuple(chitta.remember(text, realm="demo").id for text in MEMORIES)
    write_files(folder)
    return Setup(home, folder, ids)


def write_files(folder: Path) -> None:
    """MEMORY.md, and session.db with an FTS5 table ``messages(content)``."""
    (folder / "MEMORY.md").write_text(MARKDOWN, encoding="utf-8")
    conn = sqlite3.connect(folder / "session.db")
    with conn:
        conn.execute("CREATE VIRTUAL TABLE messages USING fts5(content)")
        conn.executemany("INSERT INTO messages (content) VALUES (?)", [(s,) for s in SESSION])
    conn.close()


def cli(home: Path, *args: str, **env: str) -> Result:
    """``chitta ARGS`` in this process with CHITTA_HOME=home."""
    return CliRunner().invoke(main, list(args), env={"CHITTA_HOME": str(home), **env})


def answered(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return json.loads(result.stdout)


# --- in process ------------------------------------------------------------------------------


def test_json_is_the_default_and_has_the_seeds_shape(setup: Setup) -> None:
    config = setup.config()
    data = answered(cli(setup.home, "cited-recall", "-q", QUESTION, "--config", str(config)))
    assert set(data) == {"ok"} | SEED_KEYS | OUR_KEYS
    assert data["query"] == QUESTION
    assert data["abstained"] is False and data["abstention_reason"] is None
    assert data["answer_mode"] == "extractive" and data["model"] is None  # no model configured
    assert data["errors"] == []
    assert set(data["sources"]) == {"memory", "notes", "session"}
    assert all(s["count"] >= 1 for s in data["sources"].values())
    cited = data["citations"]
    assert [c["citation_id"] for c in cited] == list(range(1, len(cited) + 1))
    assert [c["rrf_score"] for c in cited] == sorted((c["rrf_score"] for c in cited), reverse=True)
    assert cited[0]["rrf_score"] == 1.0
    assert {c["source"] for c in cited} == {"memory", "notes", "session"}
    postgres = next(c for c in cited if c["ref"] == setup.ids[0])
    assert postgres["content"] == MEMORIES[0] and postgres["source_kind"] == "chitta"
    # The extractive answer quotes cited sentences, each followed by its citation id.
    assert f"{MEMORIES[0]} [{postgres['citation_id']}]" in data["synthesized_answer"]
    assert len(data["chunks"]) == sum(s["count"] for s in data["sources"].values())
    # --json says the same; -l asks each source for fewer passages.
    explicit = answered(cli(setup.home, "cited-recall", "--query", QUESTION, "--json",
                            "--config", str(config), "--limit", "1"))  # fmt: skip
    assert set(explicit) == {"ok"} | SEED_KEYS | OUR_KEYS
    assert all(s["count"] <= 1 for s in explicit["sources"].values())


def test_the_full_chain_through_a_model_on_loopback(setup: Setup, model: ModelServer) -> None:
    """Sources, merge, the model's cited answer: the prompt carries the query and every
    citation, numbered; the model's answer comes back as it is, with its name."""
    config = setup.config(endpoint(model), api_key_env="CITED_TEST_KEY")
    data = answered(cli(setup.home, "cited-recall", "-q", QUESTION, "--config", str(config),
                        CITED_TEST_KEY="s3cret"))  # fmt: skip
    assert data["answer_mode"] == "model" and data["model"] == "openai:chat-1"
    assert data["synthesized_answer"] == MODEL_ANSWER
    assert data["abstained"] is False and data["errors"] == []
    ((path, auth, body),) = model.requests
    assert path == "/v1/chat/completions" and auth == "Bearer s3cret"
    assert body["model"] == "chat-1"
    prompt = body["messages"][0]["content"]
    assert f"Query: {QUESTION}" in prompt and "NO_ANSWER_AVAILABLE" in prompt
    for c in data["citations"]:
        assert f"[{c['citation_id']}] ({c['source']}, score {c['rrf_score']:.2f})" in prompt
    assert MEMORIES[0] in prompt and "Billing runs on Postgres 16" in prompt


def test_a_model_that_abstains_gives_its_reason_and_the_citations(
    setup: Setup, model: ModelServer
) -> None:
    model.chat("NO_ANSWER_AVAILABLE: the notes never say why.")
    config = setup.config(endpoint(model))
    data = answered(cli(setup.home, "cited-recall", "-q", QUESTION, "--config", str(config)))
    assert data["abstained"] is True and data["synthesized_answer"] is None
    assert data["abstention_reason"] == "the notes never say why."
    assert data["answer_mode"] == "model" and len(data["citations"]) >= 2


def test_a_failing_model_falls_back_to_the_extractive_answer(
    setup: Setup, model: ModelServer
) -> None:
    model.raw("/v1/chat/completions", b'{"error": {"message": "overloaded"}}', status=500)
    config = setup.config(endpoint(model))
    data = answered(cli(setup.home, "cited-recall", "-q", QUESTION, "--config", str(config)))
    assert data["answer_mode"] == "extractive" and not data["abstained"]
    assert data["synthesized_answer"]
    (error,) = data["errors"]
    assert error.startswith("model openai:chat-1:") and "HTTP 500" in error


def test_an_abstention_is_an_answer_and_exits_0(setup: Setup) -> None:
    data = answered(cli(setup.home, "cited-recall", "-q", OFF_TOPIC,
                        "--config", str(setup.config())))  # fmt: skip
    assert data["abstained"] is True
    assert data["abstention_reason"] == "No results from any memory store."
    assert data["synthesized_answer"] is None and data["citations"] == []
    assert data["answer_mode"] == "none"


def test_html_writes_a_page_with_the_answer_and_citations(setup: Setup, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    config = str(setup.config())
    result = cli(setup.home, "cited-recall", "-q", QUESTION, "--html", "-o", str(out),
                 "--config", config)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"wrote {out} (answered (extractive) with ")
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in page
    assert "row-level locks for the outbox" in page  # the answer and its citation
    assert 'href="#cite-1"' in page and 'id="cite-1"' in page
    assert "Billing runs on Postgres 16; SQLite is only the local cache." in page
    assert "http://" not in page and "https://" not in page  # no external asset
    assert stat.S_IMODE(out.stat().st_mode) == 0o600  # it quotes memories


def test_html_goes_to_the_current_folder_by_default(
    setup: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli(setup.home, "cited-recall", "-q", OFF_TOPIC, "--html",
                 "--config", str(setup.config()))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    page = tmp_path / "cited_recall_output.html"
    assert result.stdout.strip() == (
        f"wrote {page} (abstained: No results from any memory store.; 0 citations)"
    )
    assert "No results from any memory store." in page.read_text(encoding="utf-8")


def test_json_to_an_output_file(setup: Setup, tmp_path: Path) -> None:
    out = tmp_path / "answer.json"
    result = cli(setup.home, "cited-recall", "-q", QUESTION, "-o", str(out),
                 "--config", str(setup.config()))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"wrote {out} (answered")
    assert set(json.loads(out.read_text(encoding="utf-8"))) == {"ok"} | SEED_KEYS | OUR_KEYS


def test_json_and_html_together_are_refused(setup: Setup, tmp_path: Path) -> None:
    result = cli(setup.home, "cited-recall", "-q", QUESTION, "--json", "--html")
    assert result.exit_code == 2
    assert "--json and --html are mutually exclusive" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("toml", "named"),
    [
        ('[[source]]\nname = "notes"\nkind = "markdown"\n', "needs the key 'paths'"),
        ("[merge]\nk = 0\n", "[merge] k must be at least 1"),
        ("limit = 5\ntimeout = 3\n", "unknown key 'timeout'"),
        ('[[source]]\nname = "x"\nkind = "vector"\n', "[[source]] 'x' kind must be one of"),
    ],
)
def test_a_bad_config_is_an_error_naming_the_key(
    setup: Setup, tmp_path: Path, toml: str, named: str
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(toml, encoding="utf-8")
    result = cli(setup.home, "cited-recall", "-q", QUESTION, "--config", str(bad))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {bad}: ") and named in result.stderr
    machine = cli(setup.home, "cited-recall", "-q", QUESTION, "--json", "--config", str(bad))
    assert machine.exit_code == 2
    error = json.loads(machine.stdout)
    assert error["ok"] is False and error["error"] == "bad_config" and named in error["message"]


def test_a_missing_config_file_is_an_error(setup: Setup, tmp_path: Path) -> None:
    result = cli(setup.home, "cited-recall", "-q", QUESTION, "--config", str(tmp_path / "no"))
    assert result.exit_code == 2
    assert result.stderr == f"error: no cited recall settings file at {tmp_path / 'no'}\n"


def test_without_a_config_the_source_is_this_stores_default_realm(setup: Setup) -> None:
    # The memories are in realm demo: the default realm has nothing to say.
    data = answered(cli(setup.home, "cited-recall", "-q", QUESTION))
    assert list(data["sources"]) == ["memory"]
    assert data["abstention_reason"] == "No results from any memory store."


def test_sources_without_this_store_need_no_store(tmp_path: Path) -> None:
    """Markdown and FTS5 only: answered with no chitta store at all (none is created)."""
    write_files(tmp_path)
    config = tmp_path / "cited.toml"  # relative paths: from the file's folder
    config.write_text(
        '[[source]]\nname = "notes"\nkind = "markdown"\npaths = ["MEMORY.md"]\n\n'
        '[[source]]\nname = "session"\nkind = "sqlite_fts"\npath = "session.db"\n'
        'table = "messages"\ncolumn = "content"\n'
    )
    home = tmp_path / "home"
    data = answered(cli(home, "cited-recall", "-q", QUESTION, "--config", str(config)))
    assert data["abstained"] is False and data["errors"] == []
    assert [c["source"] for c in data["citations"]] == ["notes", "session"]
    assert (
        "Billing runs on Postgres 16; SQLite is only the local cache. [1]"
        in (data["synthesized_answer"])
    )
    assert not home.exists()


def test_a_file_written_over_becomes_owner_only(tmp_path: Path) -> None:
    """The mode given at creation does not apply to a file that is there already."""
    write_files(tmp_path)
    config = tmp_path / "cited.toml"
    config.write_text('[[source]]\nname = "notes"\nkind = "markdown"\npaths = ["MEMORY.md"]\n')
    for name, args in (("old.json", ()), ("old.html", ("--html",))):
        out = tmp_path / name
        out.write_text("an older answer")
        out.chmod(0o644)
        result = cli(tmp_path / "home", "cited-recall", "-q", QUESTION, "--config", str(config),
                     "-o", str(out), *args)  # fmt: skip
        assert result.exit_code == 0, result.stderr
        assert stat.S_IMODE(out.stat().st_mode) == 0o600, name


def test_a_report_is_owner_only_under_umask_000_and_whole_or_not_at_all(
    tmp_path: Path, tmpfs, filler, umask0
) -> None:
    write_files(tmp_path)
    config = tmp_path / "cited.toml"
    config.write_text('[[source]]\nname = "notes"\nkind = "markdown"\npaths = ["MEMORY.md"]\n')
    ask = ("cited-recall", "-q", QUESTION, "--config", str(config), "--html", "-o")
    out = tmp_path / "report.html"
    assert cli(tmp_path / "home", *ask, str(out)).exit_code == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    disk = tmpfs("64k")
    filler(disk)
    full = disk / "report.html"
    result = cli(tmp_path / "home", *ask, str(full))
    assert result.exit_code == 4, result.stderr
    assert f"cannot write {full}: the disk is full (No space left on device)" in result.stderr
    assert not full.exists()  # no empty or half report left behind as if it were one


class _Trickler(BaseHTTPRequestHandler):
    """A search endpoint that answers a byte at a time, never finishing in time."""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        stop: threading.Event = self.server.stop  # type: ignore[attr-defined]
        try:
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            while not stop.wait(0.05):
                self.wfile.write(b" ")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client cut it off


def test_a_trickling_source_does_not_hold_the_cli_past_its_timeout(tmp_path: Path) -> None:
    """The CLI answers at source_timeout_s, and must then exit: Python waits at exit for the
    source's thread, so a reply that trickles in would keep the process alive as long as the
    server likes (the source's own timeout_s bounds each read, not the exchange)."""
    write_files(tmp_path)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Trickler)
    httpd.daemon_threads = True
    httpd.stop = threading.Event()  # type: ignore[attr-defined]
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    config = tmp_path / "cited.toml"
    config.write_text(
        'source_timeout_s = 1\n[[source]]\nname = "notes"\nkind = "markdown"\n'
        'paths = ["MEMORY.md"]\n\n[[source]]\nname = "hindsight"\nkind = "http"\n'
        f'url = "http://127.0.0.1:{httpd.server_address[1]}/search"\ntext = "text"\n'
        "timeout_s = 30\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["CHITTA_HOME"] = str(tmp_path / "home")
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "chitta", "cited-recall", "-q", QUESTION, "--config",
             str(config)], env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    finally:
        httpd.stop.set()  # type: ignore[attr-defined]
        httpd.shutdown()
        httpd.server_close()
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    # The call's wait and the source's exchange end at the same second: either may tell it.
    (error,) = data["errors"]
    assert re.fullmatch(
        r"hindsight: (timed out after 1s|GET \S+: no answer within 1 s \(timeout\))", error
    )
    assert data["sources"]["notes"]["count"] >= 1
    assert elapsed < 20, f"the process took {elapsed:.1f} s to exit"


# --- through a real daemon -------------------------------------------------------------------


@pytest.fixture
def daemon(setup: Setup, launch) -> Path:
    """`chitta serve` on the setup's store; its socket path."""
    launch(setup.home)
    return setup.home / "chitta.sock"


def test_the_rpc_method_and_the_cli_go_through_the_daemon(
    setup: Setup, daemon: Path, model: ModelServer, tmp_path: Path
) -> None:
    config = setup.config(endpoint(model))
    with DaemonClient(daemon) as client:
        reply = client.call("cited_recall", query=QUESTION, limit=3, config=str(config))
        assert reply["ok"] is True
        assert set(reply) == {"ok"} | SEED_KEYS | OUR_KEYS
        assert reply["answer_mode"] == "model" and reply["synthesized_answer"] == MODEL_ANSWER
        assert all(s["count"] <= 3 for s in reply["sources"].values())
        answer = CitedAnswer.from_dict(reply)
        assert answer.citations[0].citation_id == 1 and answer.model == "openai:chat-1"

        # A relative config path would be read from the daemon's folder: refused.
        with pytest.raises(DaemonError, match="config must be an absolute path") as refused:
            client.call("cited_recall", query=QUESTION, config="cited.toml")
        assert refused.value.exit_code == 2
        with pytest.raises(DaemonError, match="needs the parameter 'query'"):
            client.call("cited_recall", limit=3)
        with pytest.raises(DaemonError, match="no cited recall settings file"):
            client.call("cited_recall", query=QUESTION, config=str(tmp_path / "none.toml"))

    # The CLI finds the daemon (the store is its: an in-process open would be refused).
    data = answered(cli(setup.home, "cited-recall", "-q", QUESTION, "--config", str(config)))
    assert data["synthesized_answer"] == MODEL_ANSWER and set(data) == {"ok"} | SEED_KEYS | OUR_KEYS
    page = tmp_path / "daemon.html"
    html = cli(setup.home, "cited-recall", "-q", QUESTION, "--html", "-o", str(page),
               "--config", str(config))  # fmt: skip
    assert html.exit_code == 0, html.stderr
    assert 'href="#cite-1"' in page.read_text(encoding="utf-8")
    with DaemonClient(daemon) as client:
        methods = client.call("memory_status")["daemon"]["methods"]
    assert methods["cited_recall"]["requests"] == 6  # 4 above, 2 from the CLI
    assert len(model.requests) == 3  # the model was asked by the daemon


def test_the_mcp_tool_answers_from_the_homes_cited_toml(
    setup: Setup, daemon: Path, model: ModelServer
) -> None:
    setup.config(endpoint(model), into=setup.home)  # the default place: <home>/cited.toml
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "chitta", "mcp"],
        env={"CHITTA_HOME": str(setup.home), "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )
    out: dict[str, Any] = {}

    async def body() -> None:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, read_timeout_seconds=MCP_TIMEOUT_S) as session,
        ):
            await session.initialize()
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            out["tool"] = tools["cited_recall"]
            result = await session.call_tool("cited_recall", {"query": QUESTION, "limit": 2})
            out["error"] = result.is_error
            (block,) = result.content  # sent once, as JSON text
            out["structured"] = result.structured_content
            out["data"] = json.loads(block.text)
            bad = await session.call_tool("cited_recall", {"query": QUESTION, "config": "x"})
            out["bad"] = json.loads(bad.content[0].text)

    anyio.run(body)
    tool, data = out["tool"], out["data"]
    assert tool.annotations.read_only_hint is True
    assert "numbered citations" in tool.description and "cited.toml" in tool.description
    assert set(tool.input_schema["properties"]) == {"query", "limit", "realm"}
    assert out["error"] is False and data["ok"] is True and out["structured"] is None
    assert data["answer_mode"] == "model" and data["synthesized_answer"] == MODEL_ANSWER
    assert all(s["count"] <= 2 for s in data["sources"].values())
    assert out["bad"]["ok"] is False and "config" in out["bad"]["message"]
