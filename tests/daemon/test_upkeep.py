"""The subconscious in a real daemon: it decays a store whose memories are a month old,
`chitta status` says what it did, SIGTERM stops it cleanly, and a daemon killed in the middle
of a sweep loses nothing it acknowledged."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from tests.conftest import memory

from chitta.config import Settings
from chitta.daemon.client import DaemonClient
from chitta.store.backends import open_store
from chitta.store.confidence import Confidence
from chitta.store.kinds import DECAY_RATE, Kind
from chitta.subconscious.worker import META_PREFIX

MONTH_MS = 30 * 86_400_000
# Upkeep at once, decay only, and slow (1 % of a core): a sweep stays under way long enough
# to be caught in the middle.
UPKEEP = {"CHITTA_UPKEEP_START_S": "0", "CHITTA_UPKEEP_HYGIENE_S": "0"}


def old_episodes(home: Path, store: str | None, n: int) -> list[str]:
    """``n`` episodes created a month ago, written straight to the store (random unit
    vectors: decay reads none)."""
    location = store or str(Settings(home=home).store_path)
    then = int(time.time() * 1000) - MONTH_MS
    rng = np.random.default_rng(7)
    items = []
    for i in range(n):
        m = memory(f"We walked the river trail on day {i} of the trip", realm="trips",
                   kind=Kind.EPISODE, confidence=Confidence.initial(DECAY_RATE[Kind.EPISODE]),
                   created_at=then, updated_at=then, decayed_at=then)  # fmt: skip
        v = rng.normal(size=384).astype(np.float32)
        items.append((m, v / np.linalg.norm(v)))
    with open_store(location, home=home) as s:
        s.insert(items)
    return [m.id for m, _ in items]


def status(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "chitta", "status", *args], capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def upkeep_of(socket: Path) -> dict:
    with DaemonClient(socket) as client:
        return client.call("memory_status")["daemon"]["upkeep"]


def wait_for(check, timeout: float = 60.0, every: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(every)
    raise AssertionError("timed out")


def test_a_daemon_decays_a_month_old_store_and_says_so(
    home: Path, launch, daemon_store, daemon_socket: Path, daemon_env: dict[str, str]
) -> None:
    ids = old_episodes(home, daemon_store, 40)
    proc = launch(home, store=daemon_store, env=UPKEEP)
    last = wait_for(lambda: upkeep_of(daemon_socket)["tasks"]["decay"]["last"])
    assert last["seen"] == 40 and last["changed"] == 40 and last["demoted"] == 40
    with DaemonClient(daemon_socket) as client:
        m = client.call("get_memory", id=ids[0])["memory"]
    assert m["tier"] == "cool" and abs(m["strength"] - 0.7 * np.exp(-0.03 * 30)) < 1e-3
    text = status(daemon_env)
    assert "upkeep: running, at most 10% of a core" in text
    assert "decay: swept" in text and "40 memories, 40 changed, 40 demoted" in text
    assert "hygiene" not in text  # switched off
    assert "river" not in text  # counts and times, no memory's text
    shown = json.loads(status(daemon_env, "--json"))["daemon"]["upkeep"]
    assert shown["tasks"]["decay"]["last"]["seen"] == 40
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    with open_store(daemon_store or str(Settings(home=home).store_path), home=home) as s:
        assert json.loads(s.meta(META_PREFIX + "decay"))["seen"] == 40
    # Without a daemon, status shows what the store recorded.
    assert "upkeep: runs in the daemon" in status(daemon_env)
    assert "decay swept" in status(daemon_env)


def test_upkeep_off_is_said(
    home: Path, launch, daemon_store, daemon_socket: Path, daemon_env: dict[str, str]
) -> None:
    launch(home, "--no-upkeep", store=daemon_store, env=UPKEEP)
    assert upkeep_of(daemon_socket)["running"] is False
    assert "upkeep: off" in status(daemon_env)


def test_a_daemon_killed_mid_sweep_loses_nothing_it_acknowledged(
    home: Path, launch, daemon_store, daemon_socket: Path
) -> None:
    ids = old_episodes(home, daemon_store, 3000)
    proc = launch(home, store=daemon_store, env={**UPKEEP, "CHITTA_UPKEEP_SHARE": "1"})
    written = []
    with DaemonClient(daemon_socket) as client:
        wait_for(lambda: upkeep_of(daemon_socket)["tasks"]["decay"]["under_way"])
        for i in range(5):  # acknowledged writes while the sweep is under way
            reply = client.call(
                "remember",
                content=f"The ferry to the island leaves at {7 + i} in the morning",
                realm="trips",
            )
            written.append(reply["id"])
        assert upkeep_of(daemon_socket)["tasks"]["decay"]["under_way"]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    location = daemon_store or str(Settings(home=home).store_path)
    with open_store(location, home=home) as s:
        assert s.integrity_check() == "ok"
        found = s.get_many([*ids, *written])
        assert len(found) == 3005
        # What the sweep reached is decayed whole, the rest not at all: no memory half-done.
        decayed = [m for m in found.values() if m.id in set(ids) and m.tier != "hot"]
        assert all(m.decayed_at > m.created_at for m in decayed)
        assert 0 < len(decayed) < 3000


def test_only_a_store_one_daemon_holds_defers_embedding(
    home: Path, launch, daemon_store, daemon_socket: Path
) -> None:
    launch(home, store=daemon_store, env={**UPKEEP, "CHITTA_UPKEEP_DEFER_AT": "0"})
    with DaemonClient(daemon_socket) as client:
        done = client.call("remember", content="The ferry leaves the harbour at dawn",
                           realm="trips")  # fmt: skip
    tasks = upkeep_of(daemon_socket)["tasks"]
    if daemon_store:  # a database: other daemons check their writes against it by vector
        assert done["embedded"] is True and "embed" not in tasks
    else:
        assert done["embedded"] is False and "embed" in tasks


@pytest.mark.sqlite_only
def test_under_load_a_remember_is_stored_at_once_and_embedded_after(
    home: Path, launch, daemon_store, daemon_socket: Path
) -> None:
    # CHITTA_UPKEEP_DEFER_AT=0: every remember counts as under load, so every one defers.
    launch(home, store=daemon_store, env={**UPKEEP, "CHITTA_UPKEEP_DEFER_AT": "0"})
    texts = [f"The ferry to island {n} leaves from pier {n} at dawn" for n in range(12)]
    with DaemonClient(daemon_socket) as client:
        replies = [client.call("remember", content=t, realm="trips") for t in texts]
        assert all(r["embedded"] is False for r in replies)
        embed = wait_for(lambda: (e := upkeep_of(daemon_socket)["tasks"]["embed"])["last"]
                         and e["waiting"] == 0 and e)  # fmt: skip
        assert embed["deferred"] == 12
        found = client.call("recall", query="boat to island 7 at sunrise", realm="trips")
    assert "unembedded" not in found
    assert found["hits"][0]["id"] == replies[7]["id"] and "sem" in found["hits"][0]["lanes"]


@pytest.mark.sqlite_only
def test_a_stopping_daemon_embeds_what_still_waits(
    home: Path, launch, daemon_store, daemon_socket: Path
) -> None:
    # 1 % of a core: after a step of embedding the worker rests a hundred times as long,
    # so most of a quick burst is still waiting when SIGTERM comes.
    env = {**UPKEEP, "CHITTA_UPKEEP_DEFER_AT": "0", "CHITTA_UPKEEP_SHARE": "1"}
    proc = launch(home, store=daemon_store, env=env)
    with DaemonClient(daemon_socket) as client:
        ids = [client.call("remember", content=f"Day {n} of the trip: we crossed river {n}",
                           realm="trips")["id"] for n in range(80)]  # fmt: skip
        waiting = upkeep_of(daemon_socket)["tasks"]["embed"]["waiting"]
        said = client.call("recall", query="crossing a river", realm="trips")
    assert waiting > 0 and said.get("unembedded", 0) > 0
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    with open_store(daemon_store or str(Settings(home=home).store_path), home=home) as s:
        assert s.unembedded(100) == [] and set(s.vectors_for(ids)) == set(ids)


def crossings(socket: Path, n: int = 80) -> list[dict]:
    """``remember`` replies for ``n`` memories of two sentences each, through the daemon."""
    with DaemonClient(socket) as client:
        return [client.call("remember", realm="trips",
                            content=f"Day {i} of the trip: we crossed river {i}. "
                                    f"The water was cold and the current strong.")
                for i in range(n)]  # fmt: skip


@pytest.mark.sqlite_only
def test_a_remember_does_not_wait_for_its_sentences_and_a_stopping_daemon_gives_them(
    home: Path, launch, daemon_store, daemon_socket: Path
) -> None:
    # Not under load: each memory's own vector comes in line. 1 % of a core: after a step
    # the worker rests a hundred times as long, so sentences still wait when SIGTERM comes.
    proc = launch(home, store=daemon_store, env={**UPKEEP, "CHITTA_UPKEEP_SHARE": "1"})
    replies = crossings(daemon_socket)
    embed = upkeep_of(daemon_socket)["tasks"]["embed"]
    assert all(r["embedded"] is True for r in replies)
    assert embed["sentences_waiting"] > 0 and embed["deferred"] == 0
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    ids = [r["id"] for r in replies]
    with open_store(daemon_store or str(Settings(home=home).store_path), home=home) as s:
        assert set(s.pieces_for(ids)) == set(ids)


@pytest.mark.sqlite_only
def test_sentences_a_killed_daemon_left_are_given_by_the_next_one(
    home: Path, launch, daemon_store, daemon_socket: Path
) -> None:
    proc = launch(home, store=daemon_store, env={**UPKEEP, "CHITTA_UPKEEP_SHARE": "1"})
    ids = [r["id"] for r in crossings(daemon_socket)]
    assert upkeep_of(daemon_socket)["tasks"]["embed"]["sentences_waiting"] > 0
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    location = daemon_store or str(Settings(home=home).store_path)
    with open_store(location, home=home) as s:
        left = s.awaiting_pieces(100)
        assert left and set(left) <= set(ids) and not set(s.pieces_for(left))
    started_ms = int(time.time() * 1000)
    proc = launch(home, store=daemon_store, env=UPKEEP)  # the next daemon, at full pace
    # Its embedding task finishes its first sweep once nothing waits, in the store either.
    wait_for(lambda: (upkeep_of(daemon_socket)["tasks"]["embed"]["last"] or {})
             .get("finished_ms", 0) >= started_ms)  # fmt: skip
    proc.send_signal(signal.SIGTERM)  # a stopping daemon gives only what its queue holds
    assert proc.wait(timeout=60) == 0
    with open_store(location, home=home) as s:
        assert s.awaiting_pieces(100) == [] and set(s.pieces_for(left)) == set(left)
