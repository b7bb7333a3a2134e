"""The hooks' shown sets (recall/shown.py) in a real SQLite store: kept, forgotten, bounded."""

from __future__ import annotations

from chitta.recall import shown as shown_mod
from chitta.recall.shown import ShownLog
from chitta.store.base import Store


def test_a_set_is_kept_in_the_store_and_forgotten_on_request(store: Store) -> None:
    log = ShownLog(store)
    assert log.shown("s1") == ()
    assert log.update("s1", ["a", "b"]) == ("a", "b")
    assert log.update("s1", ["b", "c"]) == ("a", "b", "c")  # each id once, in order
    assert ShownLog(store).shown("s1") == ("a", "b", "c")  # another log, the same store
    assert log.update("s1", ["d"], forget=True) == ("d",)
    assert log.update("s1", forget=True) == ()
    assert store.meta(shown_mod.KEY_PREFIX + "s1") is None


def test_sessions_and_ids_are_bounded(store: Store, monkeypatch) -> None:
    monkeypatch.setattr(shown_mod, "MAX_SESSIONS", 2)
    monkeypatch.setattr(shown_mod, "MAX_IDS", 3)
    log = ShownLog(store)
    assert log.update("s1", ["a", "b", "c", "d"]) == ("b", "c", "d")  # the newest ids
    log.update("s2", ["x"])
    log.update("s1", ["e"])  # s1 is the most recently active now
    log.update("s3", ["y"])  # the least recently active, s2, is forgotten
    assert log.shown("s2") == () and store.meta(shown_mod.KEY_PREFIX + "s2") is None
    assert log.shown("s1") == ("c", "d", "e") and log.shown("s3") == ("y",)


def test_a_damaged_value_counts_as_empty(store: Store) -> None:
    store.set_meta(shown_mod.KEY_PREFIX + "s1", "{not json")
    assert ShownLog(store).shown("s1") == ()
    store.set_meta(shown_mod.KEY_PREFIX + "s1", '{"a": 1}')
    assert ShownLog(store).update("s1", ["z"]) == ("z",)


def test_the_last_batch_is_taken_once_and_goes_with_its_session(store: Store, monkeypatch) -> None:
    log = ShownLog(store)
    log.update("s1", ["a", "b"], at=1_000)
    log.update("s1", ["c"], at=2_000)  # the latest prompt's batch replaces the one before
    assert log.take_last("s1", now=3_000) == ("c",)
    assert log.take_last("s1", now=3_000) == ()  # taken: a second answer finds none
    log.update("s1", ["d"], at=0)
    assert log.take_last("s1", now=shown_mod.LAST_BATCH_MS + 1) == ()  # too old to be this one
    log.update("s1", ["e"], at=5)
    log.update("s1", forget=True)  # /clear: the context that was given them is gone
    assert log.take_last("s1", now=6) == ()
    monkeypatch.setattr(shown_mod, "MAX_SESSIONS", 1)
    log.update("s2", ["x"], at=7)
    log.update("s3", ["y"], at=8)  # s2 is forgotten, its last batch too
    assert store.meta(shown_mod.LAST_PREFIX + "s2") is None
    store.set_meta(shown_mod.LAST_PREFIX + "s3", "[1, 2")
    assert log.take_last("s3", now=9) == ()  # a damaged batch is no batch
