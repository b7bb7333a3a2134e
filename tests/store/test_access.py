"""Access history and Hebbian co-access: buffered, written in batches, read merged, durable."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from chitta.api import Chitta
from chitta.config import Settings
from chitta.store.access import KEEP_ACCESSES, AccessRecord, pairs
from chitta.store.base import Store
from chitta.store.records import Memory

MakeMemory = Callable[..., Memory]


def stocked(store: Store, make_memory: MakeMemory, n: int = 4) -> list[str]:
    items = [make_memory(f"memory number {i} about something") for i in range(n)]
    store.insert([(m, None) for m in items])
    return [m.id for m in items]


def wait_for(predicate, rounds: int = 500) -> None:
    """Wait until the writer thread has done something (bounded; asserts no timing)."""
    import threading

    event = threading.Event()
    for _ in range(rounds):
        if predicate():
            return
        event.wait(0.02)
    raise AssertionError("the access writer never flushed")


def test_pairs_are_ordered_and_distinct() -> None:
    assert list(pairs(["b", "a", "c", "a"])) == [("a", "b"), ("a", "c"), ("b", "c")]


def test_recalls_buffer_without_writing_and_reads_see_the_buffer(
    settings: Settings, embedder
) -> None:
    with Chitta.open(settings, embedder=embedder) as c:
        for text in ("The deploy script needs the VPN", "Alice prefers tabs over spaces"):
            c.remember(text, realm="demo")
        for _ in range(5):
            result = c.recall("deploy VPN", realm="demo")
        assert c.store.access_stats() == {"pending": 5, "flushes": 0, "written": 0}
        top = result.hits[0].memory.id
        history = c.store.access_history([top])[top]
        assert history.count == 5 and len(history.times) == 5  # unflushed, yet counted
        assert c.store.get(top).access_count == 0  # the row is not written yet
    # Chitta.close wrote the buffer in one transaction; a new process sees it all.
    with Chitta.open(settings, embedder=embedder) as c:
        m = c.store.get(top)
        assert m.access_count == 5 and m.last_accessed is not None
        assert c.store.access_history([top])[top].count == 5
        assert c.store.access_stats()["flushes"] == 0


def test_a_full_buffer_is_written_in_one_transaction(open_again, make_memory: MakeMemory) -> None:
    with open_again(access_every=3, access_seconds=3600) as s:
        ids = stocked(s, make_memory)
        s.record_access(AccessRecord((ids[0],), 1))
        s.record_access(AccessRecord((ids[0], ids[1]), 2))
        assert s.access_stats() == {"pending": 2, "flushes": 0, "written": 0}
        s.record_access(AccessRecord((ids[1],), 3))  # the third record wakes the writer
        wait_for(lambda: s.access_stats()["flushes"] == 1)
        assert s.access_stats() == {"pending": 0, "flushes": 1, "written": 3}
        assert s.get(ids[0]).access_count == 2 and s.get(ids[1]).access_count == 2


def test_the_writer_flushes_after_its_interval(open_again, make_memory: MakeMemory) -> None:
    with open_again(access_every=1000, access_seconds=0.05) as s:
        ids = stocked(s, make_memory)
        s.record_access(AccessRecord((ids[0],), 1))
        wait_for(lambda: s.access_stats()["written"] == 1)
        assert s.get(ids[0]).access_count == 1


def test_only_the_last_accesses_are_kept_and_the_count_goes_on(
    store: Store, make_memory: MakeMemory
) -> None:
    (mid,) = stocked(store, make_memory, 1)
    for at in range(1, 41):
        store.record_access(AccessRecord((mid,), at * 1000))
    assert store.flush_access() == 40
    history = store.access_history([mid])[mid]
    assert len(history.times) == KEEP_ACCESSES
    assert history.times[0] == 40_000 and history.times[-1] == (40 - KEEP_ACCESSES + 1) * 1000
    assert history.count == 40


def test_hebbian_weights_grow_with_co_recall_and_cap_at_one(
    store: Store, make_memory: MakeMemory
) -> None:
    a, b, c, d = sorted(stocked(store, make_memory))
    for at in range(3):
        store.record_access(AccessRecord((a, b, c, d), at, together=(a, b, c), step=0.03))
    # Buffered increments count at once.
    assert store.co_access([a, b, c, d]) == {
        (a, b): pytest.approx(0.09), (a, c): pytest.approx(0.09), (b, c): pytest.approx(0.09),
    }  # fmt: skip
    store.flush_access()
    assert store.co_access([a, b]) == {(a, b): pytest.approx(0.09)}
    for at in range(40):
        store.record_access(AccessRecord((a, b), 10 + at, together=(a, b), step=0.03))
    assert store.co_access([b, a])[(a, b)] == 1.0  # capped while still buffered
    store.flush_access()
    assert store.co_access([a, b])[(a, b)] == 1.0
    assert store.co_neighbours(a) == [(b, 1.0), (c, pytest.approx(0.09))]
    assert store.co_neighbours(d) == []


def test_co_partners_read_both_sides_heaviest_first_with_the_buffer(
    store: Store, make_memory: MakeMemory
) -> None:
    a, b, c, d = sorted(stocked(store, make_memory))
    store.record_access(AccessRecord((), 5, together=(a, b), step=0.06))
    store.flush_access()
    store.record_access(AccessRecord((), 9, together=(a, c), step=0.03))  # still buffered
    store.record_access(AccessRecord((), 7, together=(b, c), step=0.03))
    found = store.co_partners([a, c, d], limit=5)
    assert found[a] == [(b, pytest.approx(0.06), 5), (c, pytest.approx(0.03), 9)]
    assert found[c] == [(a, pytest.approx(0.03), 9), (b, pytest.approx(0.03), 7)]
    assert found[d] == []
    assert store.co_partners([a], limit=1) == {a: [(b, pytest.approx(0.06), 5)]}


def test_recall_links_nothing_an_answer_that_used_two_memories_links_them(
    chitta: Chitta,
) -> None:
    texts = ("The deploy script ops/deploy.sh needs the VPN", "Deploys from home need the VPN on",
             "Alice prefers tabs over spaces")  # fmt: skip
    a, b, c = (chitta.remember(t, realm="demo").id for t in texts)
    for _ in range(3):
        chitta.recall("deploy VPN", realm="demo", limit=2)
    assert chitta.store.co_access([a, b, c]) == {}  # returned together is not used together
    chitta.session_shown("s1", add=[a, b, c])
    answer = "Turn the VPN on from home, then run ops/deploy.sh."
    usage = chitta.session_used("s1", answer, prompt="How do I deploy?")
    assert (usage.given, set(usage.used), usage.linked) == (3, {a, b}, 1)
    assert chitta.store.co_access([a, b, c]) == {tuple(sorted((a, b))): pytest.approx(0.03)}
    again = chitta.session_used("s1", answer, prompt="How do I deploy?")
    assert (again.given, again.used, again.linked) == (0, (), 0)  # each answer counts once


def test_a_stale_batch_or_a_forgotten_memory_links_nothing(chitta: Chitta) -> None:
    now = [chitta.clock()]
    chitta.clock = lambda: now[0]
    a = chitta.remember("The deploy script ops/deploy.sh needs the VPN", realm="d").id
    b = chitta.remember("Deploys from home need the VPN on", realm="d").id
    answer = "Turn the VPN on from home, then run ops/deploy.sh."
    chitta.session_shown("s1", add=[a, b])
    now[0] += 3 * 3600 * 1000  # three hours on: that batch belonged to another answer
    assert chitta.session_used("s1", answer).given == 0
    chitta.session_shown("s1", add=[a, b])
    chitta.forget(b)
    usage = chitta.session_used("s1", answer)
    assert (usage.given, usage.used, usage.linked) == (2, (a,), 0)
    assert chitta.store.co_access([a, b]) == {}


def test_purged_memories_are_skipped_by_the_writer(store: Store, make_memory: MakeMemory) -> None:
    a, b = stocked(store, make_memory, 2)
    store.record_access(AccessRecord((a, b), 5, together=(a, b), step=0.03))
    store.purge(b)
    assert store.flush_access() == 1  # no foreign-key failure: b is left out
    assert store.access_history([a])[a].count == 1
    assert store.co_access([a, b]) == {}


def test_an_update_of_a_stale_memory_keeps_the_written_access_count(
    store: Store, make_memory: MakeMemory
) -> None:
    (mid,) = stocked(store, make_memory, 1)
    stale = store.get(mid)
    store.record_access(AccessRecord((mid,), 7))
    store.flush_access()
    store.update(replace(stale, strength=0.9))
    fresh = store.get(mid)
    assert (fresh.strength, fresh.access_count, fresh.last_accessed) == (0.9, 1, 7)
