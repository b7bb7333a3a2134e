"""Store.warm: each backend builds its in-process indexes once, says what each took, and
begins none once told to stop."""

from __future__ import annotations

from chitta.store.warm import timed_parts


def test_warm_builds_each_part_and_a_stop_begins_none(store, make_memory) -> None:
    store.insert([(make_memory("We chose SQLite WAL for crash recovery"), None)])
    assert store.warm(lambda: True) == {}
    took = store.warm()
    assert "terms" in took and "corrections" in took
    assert all(ms >= 0 for ms in took.values())
    assert store.term_stats().df("work", "sqlite") == 1  # built from the file, and current


def test_timed_parts_runs_in_order_until_stopped() -> None:
    ran: list[str] = []
    parts = {name: (lambda n=name: ran.append(n)) for name in ("a", "b", "c")}
    assert list(timed_parts(parts)) == ["a", "b", "c"] and ran == ["a", "b", "c"]
    ran.clear()
    assert list(timed_parts(parts, stop=lambda: len(ran) >= 2)) == ["a", "b"]
