"""A store that cannot be written (a read-only mount, or a folder and files without write
permission): reads work, in process, from the CLI and through a daemon; every write is
refused as ``store_read_only`` naming the store; status says so; the file is not changed."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chitta.api import Chitta
from chitta.config import Settings
from chitta.daemon.client import DaemonClient, daemon_answers
from chitta.errors import ChittaError, StoreReadOnly
from chitta.store.sqlite import Store
from chitta.transfer import export_jsonl

WAL = "We chose SQLite WAL over a custom log because crash recovery comes free"
TABS = "Alice prefers tabs over spaces in Python code"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def stored(ro_folder: Path, read_only, embedder) -> tuple[Settings, list[str]]:
    """A store with two memories (ids returned) in a folder made read-only after."""
    settings = Settings(home=ro_folder / "h")
    with Chitta.open(settings, embedder=embedder, through_daemon=False) as c:
        ids = [c.remember(WAL, realm="demo").id, c.remember(TABS, realm="demo").id]
        c.relations.add("chitta", "uses", "sqlite", realm="demo")
    read_only(ro_folder)
    return settings, ids


def test_a_read_only_store_reads_and_refuses_writes(stored, embedder) -> None:
    settings, ids = stored
    before = sha256(settings.store_path)
    with Chitta.open(settings, embedder=embedder, through_daemon=False) as c:
        assert c.status()["read_only"]
        assert c.status()["memories"] == 2
        assert c.get(ids[0]).content == WAL
        hits = c.recall("why not our own write-ahead log?", realm="demo").hits
        assert hits[0].memory.id == ids[0]
        out = io.StringIO()
        export_jsonl(c, out)
        assert ids[0] in out.getvalue() and ids[1] in out.getvalue()
        assert c.relations.find(subject="chitta", realm="demo")
        for write in (lambda: c.remember("a memory for a store that cannot take it"),
                      lambda: c.forget(ids[0]), lambda: c.strengthen(ids[1]),
                      lambda: c.relations.add("a", "b", "c", realm="demo")):  # fmt: skip
            with pytest.raises(StoreReadOnly, match=str(settings.store_path)):
                write()
    assert sha256(settings.store_path) == before
    assert sorted(p.name for p in settings.home.iterdir()) == ["default.db", "default.db.lock"]


def test_a_read_only_store_opens_without_its_lock_file(ro_folder, read_only, make_memory) -> None:
    path = ro_folder / "store.db"
    with Store(path) as store:
        kept = make_memory("a memory on a read-only disk")
        store.insert([(kept, None)])
    Path(f"{path}.lock").unlink()
    read_only(ro_folder)
    with Store(path) as store:
        assert store.read_only
        assert store.get(kept.id).content == kept.content
        with pytest.raises(StoreReadOnly):
            store.insert([(make_memory("refused"), None)])


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    return {**env, "CHITTA_HOME": str(home), **extra}


def test_the_cli_reads_a_read_only_store(stored, cli, clean_error) -> None:
    settings, ids = stored
    run = cli(settings.home)
    status = run("status")
    assert status.returncode == 0 and "read-only" in status.stdout, status.stderr
    assert json.loads(run("status", "--json").stdout)["read_only"]
    for args in (("recall", "why not our own write-ahead log?", "--realm", "demo"),
                 ("show", ids[0]), ("export",)):  # fmt: skip
        proc = run(*args)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert ids[0] in proc.stdout
    for args in (("remember", "a memory for a store that cannot take it"), ("forget", ids[0])):
        clean_error(run(*args), 4, str(settings.store_path), "read-only")
        answer = json.loads(run(*args, "--json").stdout)
        assert answer["ok"] is False and answer["error"] == "store_read_only"


def test_a_daemon_serves_a_read_only_store(stored, tmp_path: Path, daemons) -> None:
    """The socket lives elsewhere (CHITTA_SOCKET_PATH): the daemon serves reads and refuses
    writes with the store's code."""
    settings, ids = stored
    socket = tmp_path / "s.sock"
    proc = subprocess.Popen([sys.executable, "-m", "chitta", "serve"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE,
                            env=cli_env(settings.home, CHITTA_SOCKET_PATH=str(socket)))  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not daemon_answers(socket):
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the daemon did not start"
            time.sleep(0.1)
        with DaemonClient(socket) as client:
            assert client.call("memory_status")["read_only"]
            assert client.call("get_memory", id=ids[0])["memory"]["content"] == WAL
            hits = client.call("recall", query="write-ahead log", realm="demo")["hits"]
            assert hits[0]["id"] == ids[0]
            with pytest.raises(ChittaError) as refused:
                client.call("remember", content="a memory for a store that cannot take it")
            assert refused.value.code == "store_read_only"
            assert str(settings.store_path) in str(refused.value)
    finally:
        daemons.stop(proc)


def test_an_io_error_on_a_read_only_mount_is_store_read_only(ro_folder, read_only) -> None:
    """A file system that turns read-only under an open store (ext4 after an error) fails
    SQLite's writes with an I/O error carrying no errno: the mount says what it was."""
    import sqlite3

    from chitta.store.sqlite import faults

    read_only(ro_folder)
    if not os.statvfs(ro_folder).f_flag & os.ST_RDONLY:
        pytest.skip("no read-only mount here (mode bits only)")
    failure = sqlite3.OperationalError("disk I/O error")
    failure.sqlite_errorcode = sqlite3.SQLITE_IOERR_WRITE  # type: ignore[attr-defined]
    error = faults.store_error(failure, ro_folder / "store.db")
    assert isinstance(error, StoreReadOnly) and "mounted read-only" in str(error)
