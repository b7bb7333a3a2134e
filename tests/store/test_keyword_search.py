"""Store.keyword_search ranks inside FTS5 before joining; its answers equal the plain query's."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from chitta.recall.lanes.kw import match_expression
from chitta.store.records import Memory, Scope
from chitta.store.sqlite import Store

MakeMemory = Callable[..., Memory]  # the make_memory fixture (tests/conftest.py)

WORDS = ["otter", "river", "stone", "kayak", "heron", "willow", "bridge", "mill"]


def reference(store: Store, match: str, scope: Scope, limit: int) -> list[tuple[str, float]]:
    """The plain query: join every match to its memory, filter, then rank."""
    where = ["m.realm = ?"]
    params: list[object] = [scope.realm]
    for column, value in (("agent_id", scope.agent_id), ("channel", scope.channel)):
        if value is not None:
            where.append(f"m.{column} = ?")
            params.append(value)
    rows = store._query(
        "SELECT m.id, bm25(memories_fts) AS rank FROM memories_fts JOIN memories m ON "
        f"m.rowid = memories_fts.rowid WHERE memories_fts MATCH ? AND {' AND '.join(where)} "
        "AND m.deleted_at IS NULL ORDER BY rank, m.rowid LIMIT ?",
        (match, *params, limit),
    )
    return [(r[0], -float(r[1])) for r in rows]


@pytest.fixture
def crowded(store: Store, make_memory: MakeMemory) -> Store:
    """Three realms, two agents, forgotten memories; 'home' holds the best matches."""
    items = []
    for i in range(240):
        words = " ".join(WORDS[j % len(WORDS)] for j in range(i % 7, i % 7 + 1 + i % 5))
        realm = "home" if i % 4 else "work"  # 'work' is a quarter of the store
        agent = "ann" if i % 3 else "bob"
        deleted = 1 if i % 11 == 0 else None
        text = f"note {i}: {words}" + (" otter otter otter" if realm == "home" else "")
        items.append((make_memory(text, realm=realm, agent_id=agent, deleted_at=deleted), None))
    store.insert(items)
    return store


@pytest.mark.parametrize("limit", [1, 5, 40])
@pytest.mark.parametrize(
    "scope",
    [
        Scope("home"),
        Scope("work"),
        Scope("work", agent_id="bob"),
        Scope("home", channel=""),
        Scope("nowhere"),
    ],  # fmt: skip
)
def test_same_ranking_as_the_plain_query(crowded: Store, scope: Scope, limit: int) -> None:
    for terms in (["otter"], ["otter", "kayak"], ["heron", "mill", "bridge"], ["absent"]):
        match = match_expression(terms)
        got = crowded.keyword_search(match, scope, limit)
        assert got == reference(crowded, match, scope, limit)
        assert len(got) <= limit


def test_tag_expressions_go_through_the_same_path(crowded: Store, make_memory) -> None:
    crowded.insert([(make_memory("plain text", realm="work", tags=("otter",)), None)])
    match = f"tags : ({match_expression(['otter'])})"
    got = crowded.keyword_search(match, Scope("work"), 10)
    assert [m for m, _ in got] == [m for m, _ in reference(crowded, match, Scope("work"), 10)]
    assert len(got) == 1
