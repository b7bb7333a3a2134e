"""A period's memories are found through the time index (schema 13), not a scan of the
realm: the query plan of ``period_ids`` names ``memories_time``."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import memory

from chitta.store.records import Scope
from chitta.store.sqlite import Store


def test_a_period_is_read_through_the_time_index(tmp_path: Path) -> None:
    with Store(tmp_path / "store.db") as store:
        store.insert([(memory(f"note {i}", created_at=1_000 * i), None) for i in range(1, 50)])
        asked: list[tuple[str, tuple]] = []
        query = store._query

        def recording(sql: str, params=()):  # type: ignore[no-untyped-def]
            asked.append((sql, tuple(params)))
            return query(sql, params)

        store._query = recording  # type: ignore[method-assign]
        assert len(store.period_ids(Scope("work"), 5_000, 8_000, include_superseded=False)) == 3
        assert store.period_ids(Scope("work"), 90_000, 99_000, include_superseded=False,
                                limit=0) == []  # fmt: skip
        store._query = query  # type: ignore[method-assign]
        for sql, params in asked:
            plan = " ".join(str(row[-1]) for row in query("EXPLAIN QUERY PLAN " + sql, params))
            assert "memories_time" in plan, plan
