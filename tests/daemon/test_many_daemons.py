"""Three daemons, one database (issue 18, part 4): real `chitta serve` processes, each in a
home of its own as on three machines, over their own sockets, against one real PostgreSQL
database named only by CHITTA_STORE.

Started at once on an empty database, they migrate it once; under mixed load through all
three no acknowledged write is lost or doubled (the same text remembered through every
daemon at once is one memory, reinforced, with the other sessions' replications); a write
acknowledged by one is seen by the next recall through the others, and a forget hides it at
once. A database store takes no instance lock; the spool and the idle exit work as on SQLite.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from chitta import spool
from chitta.bench.fault import Served, serve_environment
from chitta.bench.hostile import WORDS
from chitta.config import Settings
from chitta.daemon.client import DaemonClient, daemon_answers
from chitta.store.backends import open_store

#: The database's password in the URL the daemons are given: trust authentication on the
#: test server's socket ignores it, and nothing a daemon shows may carry it.
PASSWORD = "s3cret-pw"
#: Client threads per daemon in the mixed load, and the steps each takes.
CLIENTS_PER_DAEMON = 3
STEPS = 24
#: Texts every client of every daemon remembers at the same moment.
SHARED = 4


def served(home: Path, url: str, *args: str) -> Served:
    """A `chitta serve` of ``home`` over the database ``url`` (given as CHITTA_STORE, as a
    team's daemons are: a URL on the command line would show its password in ps)."""
    socket = Settings(home=home, store=url).socket_path
    return Served(home, *args, env={"CHITTA_STORE": url}, socket=socket)


@pytest.fixture(scope="module")
def team_url(pg_server: Any) -> Iterator[str]:
    """A database for the module, empty (pgvector only): the daemons make the schema."""
    import psycopg

    name = f"chitta_team_{os.getpid()}"
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE chitta_template")
    url = pg_server.get_uri(name).replace("postgres:@", f"postgres:{PASSWORD}@", 1)
    assert PASSWORD in url
    yield url
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(scope="module")
def team(team_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Served]]:
    """Three daemons on the one database, started at the same moment."""
    base = tmp_path_factory.mktemp("team")
    trio = [served(base / f"m{i}", team_url) for i in range(3)]
    try:
        with ThreadPoolExecutor(3) as pool:
            list(pool.map(lambda d: d.start(), trio))
        yield trio
    finally:
        for d in trio:
            d.stop()


def call(daemon: Served, method: str, **params: Any) -> dict[str, Any]:
    with DaemonClient(daemon.socket, timeout_s=60) as client:
        return client.call(method, **params)


def hit_ids(daemon: Served, query: str, realm: str, strategy: str) -> list[str]:
    reply = call(daemon, "recall", query=query, realm=realm, strategy=strategy, limit=10,
                 rerank=False)  # fmt: skip
    return [h["id"] for h in reply["hits"]]


def test_started_at_once_they_migrate_the_empty_database_once_and_all_serve(
    team: list[Served], team_url: str, tmp_path: Path
) -> None:
    from chitta.store.postgres import schema

    for d in team:
        assert d.alive(), d.said()
        assert "s3cret" not in d.said()
    statuses = [call(d, "memory_status") for d in team]
    assert {s["store"] for s in statuses} == {statuses[0]["store"]}  # one database
    assert statuses[0]["store"].startswith("postgresql://postgres@/")
    assert all(s["schema_version"] == schema.LATEST for s in statuses)
    assert len({s["daemon"]["pid"] for s in statuses}) == 3  # three processes, no lock held
    with open_store(team_url, create=False, home=tmp_path) as store:
        assert store.meta("schema_version") == str(schema.LATEST)
        assert store.integrity_check() == "ok"


def test_chitta_status_through_each_daemon_shows_the_database_without_its_password(
    team: list[Served], team_url: str
) -> None:
    for d in team:
        env = serve_environment(d.home, {"CHITTA_STORE": team_url})
        done = subprocess.run([sys.executable, "-m", "chitta", "status", "--json"], env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert PASSWORD not in done.stdout + done.stderr
        info = json.loads(done.stdout)
        assert info["store"].startswith("postgresql://postgres@/chitta_team_")
        assert info["daemon"]["pid"] == d.pid  # answered by this home's daemon


# --- mixed load ------------------------------------------------------------------------------


@dataclass
class Ledger:
    """What the daemons acknowledged, from every client thread."""

    fresh: dict[str, str] = field(default_factory=dict)  # memory id -> its (distinct) text
    shared: dict[str, list[tuple[str, bool]]] = field(default_factory=dict)  # text -> (id, dup)
    forgotten: set[str] = field(default_factory=set)
    superseded: dict[str, str] = field(default_factory=dict)  # old id -> new id
    triplets: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)


def shared_text(k: int) -> str:
    """The ``k``th shared text: far from the others (a near-duplicate would fold into one)."""
    return f"shared {k}: " + " ".join(random.Random(k).sample(WORDS, 10))


def client_run(d: Served, name: str, seed: int, ledger: Ledger, barrier: threading.Barrier) -> None:
    """One client of one daemon: distinct remembers, recalls, forgets, supersedes, triplets,
    and at each barrier the next shared text, remembered by every client at once."""
    rng, mine, realm = random.Random(seed), [], "team"
    with DaemonClient(d.socket, timeout_s=60) as client:
        for step in range(STEPS):
            if step % (STEPS // SHARED) == 0:
                k = step // (STEPS // SHARED)
                barrier.wait(60)
                done = client.call("remember", content=shared_text(k), realm=realm, session=name)
                with ledger.lock:
                    ledger.shared.setdefault(shared_text(k), []).append(
                        (done["id"], bool(done.get("deduplicated"))))  # fmt: skip
                continue
            roll = rng.random()
            if roll < 0.45 or len(mine) < 2:
                text = f"{name} note {step}: " + " ".join(rng.sample(WORDS, 8))
                done = client.call("remember", content=text, realm=realm, session=name)
                assert not done.get("deduplicated"), text
                mine.append(done["id"])
                with ledger.lock:
                    ledger.fresh[done["id"]] = text
            elif roll < 0.65:
                client.call("recall", query=" ".join(rng.sample(WORDS, 3)), realm=realm, limit=5)
            elif roll < 0.75:
                gone = mine.pop(rng.randrange(len(mine)))
                client.call("forget", id=gone)
                with ledger.lock:
                    ledger.forgotten.add(gone)
            elif roll < 0.85:
                old, new = mine[-2], mine[-1]
                client.call("supersede", old_id=old, new_id=new)
                mine.remove(old)
                with ledger.lock:
                    ledger.superseded[old] = new
            else:
                a, b = rng.sample(WORDS, 2)
                done = client.call("add_triplet", subject=a, predicate="near", object=b,
                                   realm=realm)  # fmt: skip
                with ledger.lock:
                    ledger.triplets.add(done["triplet"]["id"])


def test_mixed_load_through_three_daemons_loses_and_doubles_nothing(
    team: list[Served], team_url: str, tmp_path: Path
) -> None:
    import psycopg

    ledger, seed = Ledger(), int.from_bytes(os.urandom(4), "big")
    clients = [(d, f"d{i}c{j}") for i, d in enumerate(team) for j in range(CLIENTS_PER_DAEMON)]
    barrier = threading.Barrier(len(clients))
    with ThreadPoolExecutor(len(clients)) as pool:
        runs = [pool.submit(client_run, d, name, seed + n, ledger, barrier)
                for n, (d, name) in enumerate(clients)]  # fmt: skip
        for run in runs:
            run.result()
    assert ledger.forgotten and ledger.superseded and ledger.triplets, f"seed {seed}"
    with psycopg.connect(team_url) as conn:
        counts = dict(conn.execute(
            "SELECT content, count(*) FROM memories WHERE realm = 'team' GROUP BY content"
        ).fetchall())  # fmt: skip
    # Every acknowledged memory once; nothing else.
    assert all(counts.get(text) == 1 for text in ledger.fresh.values()), f"seed {seed}"
    assert [counts.get(shared_text(k)) for k in range(SHARED)] == [1] * SHARED, ledger.shared
    assert sum(counts.values()) == len(ledger.fresh) + SHARED, f"seed {seed}"
    with open_store(team_url, create=False, home=tmp_path) as store:
        assert set(store.get_many(list(ledger.fresh))) >= set(ledger.fresh) - ledger.forgotten
        for text, acks in ledger.shared.items():
            ids = {i for i, _ in acks}
            assert len(ids) == 1, f"seed {seed}: {text!r} became {len(ids)} memories"
            assert sorted(dup for _, dup in acks) == [False] + [True] * (len(clients) - 1)
            (memory_id,) = ids
            memory = store.get(memory_id)
            # Each of the other sessions reinforced it, none lost to another's write.
            assert memory.confidence.n == len(clients) - 1, f"seed {seed}"
            sessions = store.replication_sessions([memory_id]).get(memory_id, set())
            assert len(sessions) == len(clients) - 1
        for gone in ledger.forgotten:
            assert store.get(gone, include_deleted=True).deleted_at is not None
        for old, new in ledger.superseded.items():
            assert store.get(old, include_deleted=True).superseded_by == new
        assert all(store.triplet(t) is not None for t in ledger.triplets)
        assert store.integrity_check() == "ok"


# --- visibility ------------------------------------------------------------------------------


def test_a_write_through_one_daemon_is_recalled_through_the_others_at_once(
    team: list[Served],
) -> None:
    for n in range(6):
        writer, *readers = team[n % 3 :] + team[: n % 3]
        token = f"zephyrine{n}qx"
        text = f"the {token} " + " ".join(random.Random(n).sample(WORDS, 10))
        done = call(writer, "remember", content=text, realm="seen")
        assert not done.get("deduplicated")
        memory_id = done["id"]
        for reader in readers:  # right after the ack: no wait, no retry
            assert memory_id in hit_ids(reader, token, "seen", "keyword")
            assert memory_id in hit_ids(reader, text, "seen", "semantic")
            assert memory_id in hit_ids(reader, f"{token} {text.split()[3]}", "seen", "hybrid")
        call(writer, "forget", id=memory_id)
        for reader in readers:
            assert memory_id not in hit_ids(reader, token, "seen", "keyword")
            assert memory_id not in hit_ids(reader, text, "seen", "semantic")
        call(readers[0], "restore", id=memory_id)
        assert memory_id in hit_ids(writer, token, "seen", "keyword")


def test_a_triplet_added_through_one_daemon_is_found_through_the_others(
    team: list[Served],
) -> None:
    added = call(team[0], "add_triplet", subject="Mira", predicate="leads", object="Platform",
                 realm="seen-graph")["triplet"]  # fmt: skip
    for reader in team[1:]:
        found = call(reader, "find_triplets", subject="Mira", realm="seen-graph")
        assert [t["id"] for t in found["triplets"]] == [added["id"]]


# --- one database, many homes: what a daemon of a database store does -----------------------


def test_a_second_daemon_in_the_same_home_is_refused_as_already_running(
    team: list[Served], team_url: str
) -> None:
    env = serve_environment(team[0].home, {"CHITTA_STORE": team_url})
    twin = subprocess.run([sys.executable, "-m", "chitta", "serve"], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert twin.returncode != 0 and "already" in twin.stderr, twin.stderr
    assert PASSWORD not in twin.stderr
    assert team[0].alive() and daemon_answers(team[0].socket)


def test_the_spool_of_a_home_without_a_daemon_lands_in_the_database(
    team: list[Served], team_url: str, tmp_path: Path
) -> None:
    # The URL a client gives carries an option the shown location drops: the daemon must
    # still find the spool its clients write.
    url = f"{team_url}&connect_timeout=9"
    home = tmp_path / "laptop"
    settings = Settings(home=home, store=url)
    text = "the staging database is rebuilt every Monday at six from the nightly dump"
    spool.append(settings.spool_path, "remember",
                 {"content": text, "realm": "spooled", "session": "s1"})  # fmt: skip
    laptop = served(home, url).start()
    try:
        deadline = time.monotonic() + 30
        while not hit_ids(team[1], "staging Monday", "spooled", "keyword"):
            assert time.monotonic() < deadline, laptop.said()
            time.sleep(0.1)
        assert call(laptop, "memory_status")["spool"]["waiting"] == 0
        assert not settings.spool_path.exists()
    finally:
        laptop.stop()
    assert len(hit_ids(team[2], "staging Monday", "spooled", "keyword")) == 1


def test_a_daemon_of_the_database_exits_when_idle_and_the_others_serve_on(
    team: list[Served], team_url: str, tmp_path: Path
) -> None:
    idle = served(tmp_path / "idle", team_url, "--idle-exit", "1").start()
    call(idle, "remember", content="the idle daemon wrote this before it left", realm="idle")
    assert idle.proc is not None
    assert idle.proc.wait(60) == 0, idle.said()
    assert "without a request" in idle.said()
    assert not idle.socket.exists()
    assert hit_ids(team[0], "idle daemon wrote", "idle", "keyword")
