"""``cpersona``: the CPersona MCP memory server (PyPI ``cpersona``), driven as its users drive it.

CPersona runs in a virtualenv of its own (never imported into chitta's): a small driver script
runs under that venv's python, starts one ``cpersona`` MCP stdio server per realm (each with its
own SQLite file, ``CPERSONA_DB_PATH``) through the ``mcp`` SDK client, and answers JSON lines on
stdin/stdout. Turns are written with the ``store`` tool (``id`` = the turn's ``dia_id``, which
``recall`` echoes back as each row's ``id``; ``timestamp`` = the session's time) and questions are
asked with the ``recall`` tool, which the driver times.

Embeddings come from chitta's own embedder, served on a loopback port in this process under
CPersona's HTTP embedding contract (``CPERSONA_EMBEDDING_MODE=http``,
``CPERSONA_EMBEDDING_URL=http://127.0.0.1:<port>/embed``):

* ``POST /embed`` ``{"texts": [...]}`` -> ``{"embeddings": [[...], ...], "dimensions": d}``
* ``GET /capabilities`` -> ``{"identity": {...}, "fingerprint": str | null, "incomplete": [...]}``
* ``POST /count_tokens`` ``{"texts": [...]}`` -> ``{"token_info": [{"count", "window",
  "truncated", "window_end_char"}, ...]}`` (or ``{"token_info": null}`` when not known)

CPersona's settings are left at their defaults (rrf fusion of vector + FTS5 + keyword arms,
pool-size quality gate, block reach with its reserved seats); ``env`` overrides any of them.
After a realm is loaded the driver waits for CPersona's background queue (block construction)
to drain before any question is asked. ``calibrate="none"`` (default) then asks the questions
in the session that stored the turns. ``calibrate="restart"`` restarts the server on the loaded
file first, as a later session would, so that its startup guard calibrates the vector threshold
and the fused quality gate on the corpus. On LoCoMo with MiniLM that gate settles at its 0.05
floor on the rrf scale, so every row that only the lexical arms found (rrf at most 1/61) is
dropped: on conv-26 recall@10 fell from 0.61 to 0.44, the vector arm's; on conv-41 it hardly
moved. CPersona's own ranking benchmarks run with ``CPERSONA_FUSED_GATE_ENABLED=false`` and
``CPERSONA_AUTOCUT_ENABLED=false``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from chitta.config import MAX_EMBED_TOKENS
from chitta.errors import ChittaError

#: The CPersona release benchmarked; ``setup`` installs exactly this one.
CPERSONA_VERSION = "2.6.14"
#: The ``recall`` tool refuses a ``limit`` above this.
RECALL_MAX_LIMIT = 100
#: Where the venv goes when none is given (kept across runs: installing takes ~30 s).
DEFAULT_VENV = Path.home() / ".cache" / "chitta" / f"cpersona-{CPERSONA_VERSION}-venv"
#: The driver script, run under the cpersona venv's python (never imported here).
DRIVER_FILE = Path(__file__).with_name("cpersona_driver.py")
#: The agent id every realm's memories are stored under (each realm has its own file).
AGENT_ID = "bench"


class CPersonaError(ChittaError):
    """CPersona could not be installed, started or driven; the message says what failed."""

    code = "bench_cpersona"


# --- the embedding endpoint ------------------------------------------------------------------


class EmbeddingEndpoint:
    """chitta's embedder behind CPersona's HTTP embedding contract, on 127.0.0.1 (port 0)."""

    def __init__(
        self, embedder: Any, *, tokenizer_path: Path | None = None, window: int = MAX_EMBED_TOKENS
    ) -> None:
        self.embedder = embedder
        self.window = window
        self.requests: dict[str, int] = {}
        self.texts_embedded = 0
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._counter = _token_counter(embedder, tokenizer_path, window)
        self._identity = self._capabilities()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise CPersonaError("the embedding endpoint is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/embed"

    def start(self) -> None:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: CPersona reuses one connection
            # On a kept-alive connection, headers and body written apart are two segments;
            # with Nagle's algorithm (RFC 896) the body waits for the ACK of the headers,
            # which the client delays (RFC 1122 delayed ACK, ~40 ms on Linux): ~44 ms added
            # to every embedding call, a single-text embed 48 ms instead of 3.8 ms. So: no
            # Nagle on accepted sockets (TCP_NODELAY), and a buffered writer that leaves
            # headers and body in one send when the request is done (up to 1 MiB).
            disable_nagle_algorithm = True
            wbufsize = 1 << 20

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:
                endpoint._count(f"GET {self.path}")
                if self.path == "/capabilities":
                    self._send(200, endpoint._identity)
                else:
                    self._send(404, {"error": f"no route GET {self.path}"})

            def do_POST(self) -> None:
                endpoint._count(f"POST {self.path}")
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                    body = json.loads(self.rfile.read(length) or b"null")
                    texts = body.get("texts") if isinstance(body, dict) else None
                    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                        self._send(400, {"error": "expected {'texts': [str, ...]}"})
                        return
                    if self.path == "/embed":
                        self._send(200, endpoint._embed(texts))
                    elif self.path == "/count_tokens":
                        self._send(200, {"token_info": endpoint._count_tokens(texts)})
                    else:
                        self._send(404, {"error": f"no route POST {self.path}"})
                except Exception as exc:  # an answer, never a dropped connection
                    endpoint.errors.append(f"{self.path}: {type(exc).__name__}: {exc}")
                    self._send(500, {"error": f"{type(exc).__name__}: {exc}"})

            def _send(self, status: int, payload: object) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="cpersona-embed", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def _count(self, route: str) -> None:
        with self._lock:
            self.requests[route] = self.requests.get(route, 0) + 1

    def _embed(self, texts: list[str]) -> dict:
        vectors = self.embedder.embed(texts).vectors if texts else []
        with self._lock:
            self.texts_embedded += len(texts)
        dim = self.embedder.identity().dim
        return {"embeddings": [[float(x) for x in v] for v in vectors], "dimensions": dim}

    def _count_tokens(self, texts: list[str]) -> list[dict] | None:
        return None if self._counter is None else self._counter(texts)

    def _capabilities(self) -> dict:
        """What the vectors are; a fingerprint only when every component is known."""
        ident = self.embedder.identity()
        fields: dict[str, object] = {
            "provider": f"chitta:{type(getattr(self.embedder, 'inner', self.embedder)).__name__}",
            "model": ident.name,
            "dimensions": ident.dim,
            "pooling": "mean",
            "normalized": True,
            "digests": {"graph": ident.hash},
        }
        incomplete: list[str] = []
        if self._counter is not None:
            fields["window"] = self.window
        else:
            incomplete.append("window")
        fingerprint = None
        if not incomplete:
            blob = json.dumps(fields, sort_keys=True).encode()
            fingerprint = "chitta:" + hashlib.sha256(blob).hexdigest()[:32]
        return {"identity": fields, "fingerprint": fingerprint, "incomplete": incomplete}


def _token_counter(embedder: Any, tokenizer_path: Path | None, window: int):
    """``texts -> token_info`` against the model's window, or None when it cannot be known.

    Without ``tokenizer_path`` only chitta's default model's tokenizer is known.
    """
    if tokenizer_path is None:
        from chitta.embed.loader import DEFAULT_MODEL_NAME, default_model_files

        if embedder.identity().name != DEFAULT_MODEL_NAME:
            return None
        try:
            tokenizer_path = default_model_files()[1]
        except ChittaError:
            return None
    try:
        from tokenizers import Tokenizer
    except ImportError:
        return None
    whole = Tokenizer.from_file(str(tokenizer_path))
    whole.no_truncation()
    whole.no_padding()
    cut = Tokenizer.from_file(str(tokenizer_path))
    cut.enable_truncation(max_length=window)
    cut.no_padding()
    lock = threading.Lock()

    def count(texts: list[str]) -> list[dict]:
        with lock:
            full = whole.encode_batch(texts)
            kept = cut.encode_batch(texts)
        out = []
        for text, f, k in zip(texts, full, kept, strict=True):
            truncated = len(f.ids) > window
            end = len(text)
            if truncated:
                content = [i for i, special in enumerate(k.special_tokens_mask) if not special]
                end = k.offsets[content[-1]][1] if content else 0
            out.append(
                {"count": len(f.ids), "window": window, "truncated": truncated,
                 "window_end_char": end}
            )  # fmt: skip
        return out

    return count


# --- the system --------------------------------------------------------------------------------


class CPersonaSystem:
    """CPersona's ``recall`` over turns written with its ``store`` tool, one server per realm.

    ``recall_limit`` is the ``limit`` sent to ``recall`` (default: ``k``, at most 100). It is
    CPersona's per-retriever depth as well as its count, so it changes the ranking, not only its
    length. ``calibrate`` is ``"none"`` (default) or ``"restart"`` (see the module docstring).
    ``env`` adds or overrides ``CPERSONA_*`` settings of every server.
    """

    name = "cpersona"

    def __init__(
        self,
        embedder: Any,
        workdir: Path,
        venv: Path | None = None,
        *,
        recall_limit: int | None = None,
        calibrate: str = "none",
        env: Mapping[str, str] | None = None,
        tokenizer_path: Path | None = None,
    ) -> None:
        if calibrate not in ("restart", "none"):
            raise CPersonaError(f"calibrate must be 'restart' or 'none', not {calibrate!r}")
        self.embedder = embedder
        self.workdir = Path(workdir)
        self.venv = Path(venv) if venv is not None else DEFAULT_VENV
        self.recall_limit = recall_limit
        self.calibrate = calibrate
        self.env = dict(env or {})
        self.endpoint = EmbeddingEndpoint(embedder, tokenizer_path=tokenizer_path)
        self.last_ms: float | None = None  # the last recall's time inside the driver
        self.last_query: dict = {}  # the last query's reply (returned rows, reserved seats)
        self.loads: dict[str, dict] = {}  # realm -> the load reply (timings, skipped turns)
        self.version: str | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._log_path = self.workdir / "cpersona-driver.log"

    # -- lifecycle ----------------------------------------------------------------------------

    def setup(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        python = self._ensure_venv()
        self.endpoint.start()
        driver = self.workdir / "cpersona_driver.py"
        driver.write_text(DRIVER_FILE.read_text(encoding="utf-8"), encoding="utf-8")
        realms = self.workdir / "cpersona-realms"
        realms.mkdir(exist_ok=True)
        env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "TMPDIR") if k in os.environ}
        env["PYTHONUNBUFFERED"] = "1"
        log = open(self._log_path, "a", encoding="utf-8")  # noqa: SIM115 (lives with the process)
        try:
            self._proc = subprocess.Popen(
                [str(python), "-u", str(driver), str(realms), AGENT_ID],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                encoding="utf-8",
                env=env,
                cwd=str(self.workdir),
            )
        finally:
            log.close()
        server_env = {
            "CPERSONA_EMBEDDING_MODE": "http",
            "CPERSONA_EMBEDDING_URL": self.endpoint.url,
            # No request to the package index at startup (and no notice riding on recall).
            "CPERSONA_UPDATE_CHECK": "false",
            **self.env,
        }
        hello = self._ask({"op": "hello", "env": server_env})
        self.version = hello.get("cpersona")
        if self.version != CPERSONA_VERSION:
            raise CPersonaError(
                f"{python} runs cpersona {self.version}, expected {CPERSONA_VERSION}"
            )

    def load(self, realm: str, conversation: Any) -> None:
        """Store every turn: a ``Conversation`` or ``(turn_id, text, event_time_ms)`` tuples.

        A realm is loaded once; loading it again does nothing.
        """
        if realm in self.loads:
            return
        turns = [
            {"id": tid, "text": text, "time": ms} for tid, text, ms in _turn_tuples(conversation)
        ]
        before = self.endpoint.texts_embedded
        reply = self._ask(
            {"op": "load", "realm": realm, "turns": turns, "calibrate": self.calibrate}
        )
        if reply["unembedded"]:
            raise CPersonaError(
                f"cpersona stored {len(reply['unembedded'])} turns of {realm} without a vector "
                f"(first: {reply['unembedded'][0]}); see {self._log_path.parent}/cpersona-realms"
            )
        if self.endpoint.texts_embedded == before:
            raise CPersonaError(f"cpersona never called the embedding endpoint loading {realm}")
        reply["texts_embedded"] = self.endpoint.texts_embedded - before
        self.loads[realm] = reply

    def run_notes(self) -> list[str]:
        """Turns CPersona did not store (it skips exact repeats), by realm."""
        return [
            f"cpersona skipped {len(load['skipped'])} turn(s) in {realm}: {load['skipped']}"
            for realm, load in self.loads.items()
            if load.get("skipped")
        ]

    def search(self, realm: str, query: str, k: int, now_ms: int | None = None) -> list[str]:
        """CPersona's ``recall``; ``now_ms`` is ignored: the tool takes no "now" (it reads
        its own clock), so its recency is taken at the real time."""
        limit = max(1, min(self.recall_limit or k, RECALL_MAX_LIMIT))
        reply = self._ask({"op": "query", "realm": realm, "query": query, "limit": limit})
        if reply.get("advisory"):
            raise CPersonaError(f"cpersona reports degraded recall: {reply['advisory']}")
        self.last_ms = reply["ms"]
        self.last_query = reply
        return reply["ids"][:k]

    def drop(self, realm: str) -> None:
        """Stop a realm's server (its file stays on disk)."""
        self._ask({"op": "drop", "realm": realm})

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                if proc.poll() is None:
                    assert proc.stdin is not None
                    proc.stdin.write(json.dumps({"op": "close"}) + "\n")
                    proc.stdin.flush()
                    proc.stdin.close()
                proc.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
        self.endpoint.stop()

    # -- helpers ------------------------------------------------------------------------------

    def _ask(self, command: dict) -> dict:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise CPersonaError("the cpersona driver is not running: call setup() first")
        try:
            proc.stdin.write(json.dumps(command) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except OSError as exc:
            raise CPersonaError(f"the cpersona driver died ({exc}); {self._log_tail()}") from None
        if not line:
            raise CPersonaError(f"the cpersona driver exited; {self._log_tail()}")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise CPersonaError(
                f"cpersona {command.get('op')} failed: {reply.get('error')} "
                f"(logs: {self._log_path} and {self.workdir / 'cpersona-realms'})"
            )
        return reply

    def _log_tail(self) -> str:
        try:
            tail = self._log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
        except OSError:
            tail = ""
        return f"driver log {self._log_path}:\n{tail}"

    def _ensure_venv(self) -> Path:
        """The venv's python, with exactly cpersona ``CPERSONA_VERSION`` (and no torch) in it."""
        python = self.venv / "bin" / "python"
        if not python.exists():
            _run([sys.executable, "-m", "venv", str(self.venv)], "creating the cpersona venv")
        if _installed(python) == CPERSONA_VERSION:
            return python
        spec = f"cpersona=={CPERSONA_VERSION}"
        with tempfile.TemporaryDirectory() as tmp:
            report = Path(tmp) / "report.json"
            _run(
                [str(python), "-m", "pip", "install", "--quiet", "--dry-run", "--report",
                 str(report), spec],
                f"resolving {spec}",
            )  # fmt: skip
            planned = [
                item["metadata"]["name"].lower()
                for item in json.loads(report.read_text()).get("install", [])
            ]
        heavy = [name for name in planned if name == "torch" or name.startswith("nvidia-")]
        if heavy:
            raise CPersonaError(f"{spec} would install {', '.join(heavy)}; not installing it")
        _run([str(python), "-m", "pip", "install", "--quiet", spec], f"installing {spec}")
        found = _installed(python)
        if found != CPERSONA_VERSION:
            raise CPersonaError(
                f"{self.venv} has cpersona {found} after installing {spec} "
                "(or lacks mcp, or has torch)"
            )
        return python


def _turn_tuples(conversation: Any) -> Iterable[tuple[str, str, int | None]]:
    turns = getattr(conversation, "turns", None)
    if turns is not None:  # a chitta.bench.locomo.Conversation
        return [(t.id, t.memory_text, t.event_time) for t in turns]
    return [(str(tid), str(text), ms) for tid, text, ms in conversation]


def _installed(python: Path) -> str | None:
    """The cpersona version importable by ``python`` (with ``mcp``), or None."""
    probe = (
        "import importlib.metadata as m, importlib.util as u\n"
        "assert u.find_spec('mcp') and not u.find_spec('torch')\n"
        "print(m.version('cpersona'))"
    )
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True)
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout)[-1500:]
        raise CPersonaError(f"{what} failed (exit {done.returncode}): {tail}")
