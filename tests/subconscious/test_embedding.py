"""The embedding queue: under load a remember is stored at once without its vector, found by
its words and counted by recall as waiting; the worker then embeds it, applying the duplicate
rules it skipped; leftovers in the store are found; a stopping daemon drains what waits."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import pytest
from tests.conftest import memory

from chitta.api import Chitta
from chitta.cli.render import upkeep_words
from chitta.store.records import Scope, Source
from chitta.subconscious.embedding import EmbedQueue, EmbedTask
from chitta.subconscious.schedule import UpkeepSettings
from chitta.subconscious.worker import Subconscious
from chitta.wire import result_from_dict, result_to_dict

WAL = "We chose SQLite WAL over a custom log because crash recovery comes free"
FERRY = "The ferry to the island leaves at seven in the morning from pier four"
ONLY_EMBED = UpkeepSettings(start_s=0, decay_s=0, hygiene_s=0, indexes_s=0)


def busy_queue(chitta: Chitta, *, waiting: int = 5, **options: int) -> EmbedQueue:
    """A queue whose daemon always has ``waiting`` writes queued: every remember defers."""
    queue = EmbedQueue(lambda: waiting, **options)
    chitta.embed_queue = queue
    return queue


def drain(worker: Subconscious) -> None:
    """Tick until the embedding task has nothing left (the queue, and the store's look)."""
    for _ in range(20):
        worker.tick()
        if not worker.embed.wanted():
            return
    raise AssertionError("the queue did not empty")


def test_defer_only_under_load_and_only_up_to_the_bound() -> None:
    waiting = [0]
    queue = EmbedQueue(lambda: waiting[0], defer_at=2, max_pending=3)
    assert not queue.should_defer()
    waiting[0] = 2
    assert queue.should_defer()
    for i in range(3):
        queue.add(f"m{i}", "r")
    assert not queue.should_defer()  # full: a remember embeds in line, slowing the burst
    assert EmbedQueue(lambda: 0, defer_at=0).should_defer()  # 0: always


def test_a_deferred_memory_is_found_by_its_words_then_by_its_meaning(chitta: Chitta) -> None:
    queue = busy_queue(chitta)
    done = chitta.remember(FERRY, realm="trip")
    assert done.embedded is False and not done.deduplicated
    assert chitta.store.unembedded(5) == [done.id]
    by_words = chitta.recall("ferry island pier", realm="trip", strategy="keyword")
    assert [h.memory.id for h in by_words.hits] == [done.id]
    waiting = chitta.recall("when does the boat sail", realm="trip")
    assert waiting.unembedded == 1
    assert result_to_dict(waiting)["unembedded"] == 1
    assert result_from_dict(result_to_dict(waiting)).unembedded == 1
    assert chitta.recall("anything", realm="elsewhere").unembedded == 0  # counted per realm
    worker = Subconscious(chitta, ONLY_EMBED, queue=queue)
    drain(worker)
    assert chitta.store.unembedded(5) == []
    after = chitta.recall("when does the boat sail", realm="trip")
    assert after.unembedded == 0 and "unembedded" not in result_to_dict(after)
    assert after.hits[0].memory.id == done.id and "sem" in after.hits[0].lanes
    embed = worker.status()["tasks"]["embed"]
    assert embed["last"]["changed"] == 1 and embed["waiting"] == 0 and embed["deferred"] == 1


def test_the_duplicate_rules_run_when_the_vector_arrives(chitta: Chitta) -> None:
    first = chitta.remember(WAL, realm="d", tags="storage")
    queue = busy_queue(chitta)
    again = chitta.remember(WAL.replace("because", "since"), realm="d", tags="decision")
    assert again.id != first.id and again.embedded is False  # stored: no vector to compare yet
    session = Source(session="s1")
    one = chitta.remember(FERRY, realm="d", source=session)
    two = chitta.remember(FERRY.replace("leaves", "departs"), realm="d", source=session)
    drain(Subconscious(chitta, ONLY_EMBED, queue=queue))
    kept = chitta.get(first.id)
    assert chitta.get(again.id).superseded_by == first.id  # folded into the one it repeats
    assert kept.strength == pytest.approx(0.8) and set(kept.tags) == {"storage", "decision"}
    assert chitta.get(two.id).superseded_by == one.id  # a burst of its session
    assert chitta.get(one.id).superseded_by is None
    hits = [h.memory.id for h in chitta.recall("write-ahead log choice", realm="d").hits]
    assert first.id in hits and again.id not in hits
    assert chitta.store.unembedded(5) == []  # folded ones have their vectors too


def test_a_new_fact_is_not_folded(chitta: Chitta) -> None:
    first = chitta.remember("The staging database listens on port 5432", realm="d")
    queue = busy_queue(chitta)
    other = chitta.remember("The staging database listens on port 5433", realm="d")
    drain(Subconscious(chitta, ONLY_EMBED, queue=queue))
    assert chitta.get(other.id).superseded_by is None and first.id != other.id


def test_forgotten_or_purged_while_waiting(chitta: Chitta) -> None:
    queue = busy_queue(chitta)
    gone = chitta.remember(FERRY, realm="d")
    hidden = chitta.remember(WAL, realm="d")
    chitta.purge(gone.id)
    chitta.forget(hidden.id)
    drain(Subconscious(chitta, ONLY_EMBED, queue=queue))
    assert chitta.store.unembedded(5) == []
    chitta.restore(hidden.id)  # it has its vector for when it comes back
    assert chitta.recall("why a write-ahead log", realm="d").hits[0].memory.id == hidden.id


def test_leftovers_in_the_store_are_found_and_embedded(chitta: Chitta) -> None:
    left = memory(FERRY, realm="d")
    chitta.store.insert([(left, None)])  # a killed daemon's deferred memory
    queue = EmbedQueue()
    worker = Subconscious(chitta, ONLY_EMBED, queue=queue)
    drain(worker)
    assert chitta.store.unembedded(5) == []
    [v] = chitta.embedder.embed([FERRY]).vectors
    assert chitta.store.vector_search(v, Scope("d"), 1)[0][0] == left.id


def test_a_long_text_is_marked_truncated_when_embedded(chitta: Chitta) -> None:
    queue = busy_queue(chitta)
    long = chitta.remember(" ".join(["The harbour master logs each ferry departure."] * 60),
                           realm="d")  # fmt: skip
    assert long.truncated is False  # not known before it is embedded
    drain(Subconscious(chitta, ONLY_EMBED, queue=queue))
    assert chitta.get(long.id).truncated is True


def test_drain_embeds_what_waits_at_once(chitta: Chitta) -> None:
    queue = busy_queue(chitta)
    ids = [chitta.remember(f"{FERRY} on day {n} of the trip", realm="d").id for n in range(5)]
    worker = Subconscious(chitta, replace(ONLY_EMBED, enabled=False), queue=queue)
    assert worker.drain() == 5
    assert chitta.store.unembedded(10) == [] and len(queue) == 0
    assert set(chitta.store.vectors_for(ids)) == set(ids)


def test_an_idle_worker_sleeps_until_a_memory_arrives(chitta: Chitta) -> None:
    queue = EmbedQueue()
    worker = Subconscious(chitta, ONLY_EMBED, queue=queue)
    drain(worker)  # the look for leftovers: nothing
    assert worker.tick() == 60.0  # nothing due: the longest sleep, not a poll
    chitta.embed_queue = queue
    queue.defer_at = 0
    chitta.remember(FERRY, realm="d")
    assert worker._wake.is_set()  # the remember woke it
    worker.tick()
    assert chitta.store.unembedded(5) == []


def test_the_very_same_text_is_folded_at_once_even_without_a_vector(chitta: Chitta) -> None:
    busy_queue(chitta)
    first = chitta.remember(FERRY, realm="d", source=Source(session="s1"))
    again = chitta.remember(FERRY, realm="d", source=Source(session="s2"))
    other = chitta.remember(FERRY, realm="d", channel="ops")  # another scope: its own
    assert first.embedded is False and again.deduplicated and again.id == first.id
    assert again.similarity == 1.0 and other.id != first.id
    assert chitta.get(first.id).confidence.n == 1
    assert chitta.store.replication_sessions([first.id]) == {first.id: {"s2"}}


def test_the_same_text_embedded_in_line_finds_its_twin_still_waiting(chitta: Chitta) -> None:
    queue = busy_queue(chitta)
    first = chitta.remember(FERRY, realm="d")
    queue.defer_at = 1000  # the load has passed: the next one is embedded in line
    again = chitta.remember(FERRY, realm="d")
    assert again.embedded is True and again.deduplicated and again.id == first.id


def test_a_deferred_memory_gets_its_sentences_vectors_with_its_own(chitta: Chitta) -> None:
    queue = busy_queue(chitta)
    text = "The ferry to the island leaves at seven. It sails from pier four."
    done = chitta.remember(text, realm="trip")
    assert done.embedded is False and chitta.store.pieces_for([done.id]) == {}
    drain(Subconscious(chitta, ONLY_EMBED, queue=queue))
    assert list(chitta.store.pieces_for([done.id])) == [done.id]


TWO = "The ferry to the island leaves at seven. It sails from pier four, past the lighthouse."


def test_a_memory_stored_with_its_vector_gets_its_sentences_after_the_reply(
    chitta: Chitta,
) -> None:
    queue = busy_queue(chitta, waiting=0)  # no load: the memory's own vector comes in line
    done = chitta.remember(TWO, realm="trip")
    one = chitta.remember("The lighthouse keeper retired in the spring of last year", realm="trip")
    assert done.embedded is True and chitta.store.pieces_for([done.id]) == {}
    assert queue.sentences_waiting() == 1  # one sentence: nothing to wait for
    assert chitta.recall("ferry pier", realm="trip").hits[0].memory.id == done.id  # whole vector
    worker = Subconscious(chitta, ONLY_EMBED, queue=queue)
    assert worker.status()["tasks"]["embed"]["sentences_waiting"] == 1
    said = upkeep_words({"daemon": {"upkeep": worker.status()}})
    assert (
        "  embed: 0 memories waiting for their vectors (0 stored under load since the "
        "start), 1 for their sentences'" in said
    )
    drain(worker)
    assert list(chitta.store.pieces_for([done.id, one.id])) == [done.id]
    assert queue.sentences_waiting() == 0 and len(queue) == 0


def test_sentences_a_killed_daemon_left_are_found_by_the_next_worker(chitta: Chitta) -> None:
    busy_queue(chitta, waiting=0)
    left = [chitta.remember(f"{TWO} Day {n} of the trip.", realm="d").id for n in range(3)]
    assert chitta.store.awaiting_pieces(10) == sorted(left)  # marked before it was queued
    # The daemon dies with them queued: the next one starts with an empty queue.
    queue = busy_queue(chitta, waiting=0, max_pending=2)
    worker = Subconscious(chitta, ONLY_EMBED, queue=queue)
    drain(worker)  # two a load (the queue's bound), then the third
    assert set(chitta.store.pieces_for(left)) == set(left)
    assert chitta.store.awaiting_pieces(10) == [] and not worker.embed.wanted()


def test_sentences_past_the_bound_are_embedded_in_line(chitta: Chitta) -> None:
    queue = busy_queue(chitta, waiting=0, max_pending=1)
    first = chitta.remember(TWO, realm="trip")
    second = chitta.remember(f"{TWO} We took the second boat back.", realm="trip")
    assert queue.sentences_waiting() == 1
    assert list(chitta.store.pieces_for([first.id, second.id])) == [second.id]
    assert chitta.store.awaiting_pieces(10) == [first.id]  # the one in line is not marked


def test_a_memory_forgotten_before_the_worker_gets_no_sentences(chitta: Chitta) -> None:
    queue = busy_queue(chitta, waiting=0)
    done = chitta.remember(TWO, realm="trip")
    chitta.forget(done.id)
    drain(Subconscious(chitta, ONLY_EMBED, queue=queue))
    assert chitta.store.pieces_for([done.id]) == {} and queue.sentences_waiting() == 0


def test_drain_gives_the_waiting_sentences_too(chitta: Chitta) -> None:
    queue = busy_queue(chitta, waiting=0)
    ids = [chitta.remember(f"{TWO} Day {n} of the trip.", realm="d").id for n in range(5)]
    worker = Subconscious(chitta, replace(ONLY_EMBED, enabled=False), queue=queue)
    assert worker.drain() == 0  # no memory waited for its own vector
    assert set(chitta.store.pieces_for(ids)) == set(ids) and queue.sentences_waiting() == 0


def test_the_worker_stores_sentences_under_the_writer_lock_and_embeds_outside_it(
    chitta: Chitta,
) -> None:
    queue = busy_queue(chitta, waiting=0)
    done = chitta.remember(TWO, realm="trip")
    held = []

    @contextmanager
    def writing() -> Iterator[None]:
        held.append(chitta.store.pieces_for([done.id]))  # what was stored before it was held
        yield

    step = EmbedTask(queue).sentences_step(chitta, writing)
    assert held == [{}] and step.changed == 1
    assert list(chitta.store.pieces_for([done.id])) == [done.id]
