"""Store.keyword_search: BM25 with the realm's own statistics (store/keywords.py).

In a store of one realm the scores are SQLite's own ``bm25()``'s; with several realms each is
scored as if it were alone; and the statistics follow every write (insert, forget, restore,
edit, purge) as if the store had been built afresh from its live memories.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chitta.store import fts5
from chitta.store.records import Memory, Scope
from chitta.store.sqlite import Store

MakeMemory = Callable[..., Memory]  # the make_memory fixture (tests/conftest.py)

WORDS = ["otter", "river", "stone", "kayak", "heron", "willow", "bridge", "mill"]


def fts5_bm25(store: Store, terms: list[str], limit: int) -> list[tuple[str, float]]:
    """SQLite's own bm25() over the whole table, best first (ties by rowid)."""
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    rows = store._query(
        "SELECT m.id, bm25(memories_fts) AS rank FROM memories_fts JOIN memories m ON "
        "m.rowid = memories_fts.rowid WHERE memories_fts MATCH ? ORDER BY rank, m.rowid LIMIT ?",
        (match, limit),
    )
    return [(r[0], -float(r[1])) for r in rows]


def assert_same(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> None:
    assert [m for m, _ in got] == [m for m, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-12)


@contextmanager
def new_store() -> Iterator[Store]:
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "store.db") as store:
        yield store


# --- one realm: SQLite's bm25() ------------------------------------------------------------------


def test_one_realm_scores_are_sqlites_own(store: Store, make_memory: MakeMemory) -> None:
    """Stems, accents, a split term, repeated words and a text of over 127 tokens (a two-byte
    length in FTS5's docsize record): the same ids and scores as FTS5's bm25()."""
    texts = [
        "We are deploying the café service", "Deployed the cafe again, then deploy",
        "parse_tags reads the tags; parse tags", "tags parse", "otter " * 130 + "river",
        *(" ".join(WORDS[j % 8] for j in range(i, i + 1 + i % 6)) for i in range(40)),
    ]  # fmt: skip
    store.insert([(make_memory(t), None) for t in texts])
    for terms in (["deploy"], ["café", "otter"], ["parse_tags"], ["river", "mill", "kayak"],
                  ["absent"], ["_"]):  # fmt: skip
        assert_same(store.keyword_search(terms, Scope("work"), 100), fts5_bm25(store, terms, 100))


def test_the_limit_cuts_the_same_ranking(store: Store, make_memory: MakeMemory) -> None:
    store.insert([(make_memory(f"note {i} " + "otter " * (i % 4)), None) for i in range(30)])
    whole = store.keyword_search(["otter", "note"], Scope("work"), 100)
    for limit in (1, 5, 17):
        assert store.keyword_search(["otter", "note"], Scope("work"), limit) == whole[:limit]


# --- several realms, agents, channels, forgotten memories --------------------------------------


@pytest.fixture
def crowded(store: Store, make_memory: MakeMemory) -> Store:
    """Three realms, two agents, forgotten memories."""
    items = []
    for i in range(240):
        words = " ".join(WORDS[j % len(WORDS)] for j in range(i % 7, i % 7 + 1 + i % 5))
        realm = ("home", "work", "away")[i % 3]
        agent = "ann" if i % 4 else "bob"
        deleted = 1 if i % 11 == 0 else None
        channel = ("", "cli")[i % 2]
        text = f"note {i}: {words}"
        items.append((make_memory(text, realm=realm, agent_id=agent, channel=channel,
                                  deleted_at=deleted), None))  # fmt: skip
    store.insert(items)
    return store


def alone(store: Store, scope: Scope) -> Iterator[Store]:
    """A store holding only ``scope.realm``'s live memories, in the same order."""
    live = [m for m in store.iter_memories(realm=scope.realm)]
    return _copy(live)


@contextmanager
def _copy(memories: list[Memory]) -> Iterator[Store]:
    with new_store() as other:
        other.insert([(m, None) for m in memories])
        yield other


@pytest.mark.parametrize("realm", ["home", "work", "nowhere"])
def test_each_realm_scores_as_if_it_were_alone(crowded: Store, realm: str) -> None:
    with alone(crowded, Scope(realm)) as single:
        for terms in (["otter"], ["otter", "kayak"], ["heron", "mill", "bridge"], ["absent"]):
            assert crowded.keyword_search(terms, Scope(realm), 40) == single.keyword_search(
                terms, Scope(realm), 40
            )


@pytest.mark.parametrize(
    "scope",
    [
        Scope("home", agent_id="bob"),
        Scope("work", channel="cli"),
        Scope("work", agent_id="ann", channel=""),
    ],  # fmt: skip
)
def test_agent_and_channel_filter_the_realms_ranking(crowded: Store, scope: Scope) -> None:
    """An agent or a channel narrows the realm's ranking; the statistics stay the realm's."""
    realm = crowded.keyword_search(["otter", "kayak"], Scope(scope.realm), 200)
    memories = crowded.get_many([m for m, _ in realm])
    want = [(m, s) for m, s in realm if (scope.agent_id in (None, memories[m].agent_id))
            and (scope.channel in (None, memories[m].channel))]  # fmt: skip
    for limit in (1, 3, 40):
        assert crowded.keyword_search(["otter", "kayak"], scope, limit) == want[:limit]


def test_tags_column_alone(store: Store, make_memory: MakeMemory) -> None:
    tagged = make_memory("plain text here", tags=("otter",))
    both = make_memory("otter in the text too", tags=("otter",))
    text_only = make_memory("an otter in the text only")
    store.insert([(m, None) for m in (tagged, both, text_only)])
    got = store.keyword_search(["otter"], Scope("work"), 10, column="tags")
    assert sorted(m for m, _ in got) == sorted([tagged.id, both.id])
    # The text and tags search counts a tag as an occurrence: the memory with both leads.
    assert store.keyword_search(["otter"], Scope("work"), 10)[0][0] == both.id


def test_a_realm_without_tags_is_not_searched_for_them(
    store: Store, make_memory: MakeMemory
) -> None:
    """The tag lane on a realm nobody tags reads no postings; tagging one of its memories
    afterwards is seen by the next search."""
    plain = make_memory("an otter in the text only")
    store.insert([(plain, None), (make_memory("x", realm="away", tags=("otter",)), None)])
    store.keyword_search(["otter"], Scope("work"), 10)  # the row table is built
    reads: list[str] = []
    query = store._query
    store._query = lambda sql, params=(): reads.append(sql) or query(sql, params)  # type: ignore[method-assign]
    try:
        assert store.keyword_search(["otter"], Scope("work"), 10, column="tags") == []
        assert not any("memories_fts_instance" in sql for sql in reads)
        assert store.keyword_frequencies(["otter"], "work") == (1, {"otter": 1})
    finally:
        del store._query
    store.update(replace(plain, tags=("otter",)))
    assert [m for m, _ in store.keyword_search(["otter"], Scope("work"), 10, column="tags")] == [
        plain.id
    ]


def test_other_realms_are_searched_as_one_collection(crowded: Store) -> None:
    """xr's keyword half: every realm but the recall's, scored as one realm of them all."""
    others = [m for realm in ("work", "away") for m in crowded.iter_memories(realm=realm)]
    merged = [replace(m, realm="merged") for m in sorted(others, key=lambda m: m.id)]
    with _copy(merged) as single:
        for terms in (["otter"], ["heron", "mill"]):
            got = crowded.keyword_search_elsewhere(terms, Scope("home"), 40)
            assert got == single.keyword_search(terms, Scope("merged"), 40)
            assert {crowded.get(m).realm for m, _ in got} <= {"work", "away"}
    bob = crowded.keyword_search_elsewhere(["otter"], Scope("home", agent_id="bob"), 40)
    assert bob and all(crowded.get(m).agent_id == "bob" for m, _ in bob)


def test_frequencies_are_the_realms(crowded: Store) -> None:
    n, df = crowded.keyword_frequencies(["otter", "absent"], "home")
    assert n == sum(1 for _ in crowded.iter_memories(realm="home"))
    holders = {m for m, _ in crowded.keyword_search(["otter"], Scope("home"), 200)}
    assert df == {"otter": len(holders), "absent": 0}


def test_the_remembered_frequencies_stay_bounded(
    store: Store, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chitta.store.sqlite import keywords

    store.insert([(make_memory(" ".join(WORDS[: 1 + i % 8])), None) for i in range(16)])
    monkeypatch.setattr(keywords, "KNOWN_DF_MAX", 3)
    for _ in range(2):  # asked twice: some figures are remembered, some counted again
        for i, word in enumerate(WORDS):
            assert store.keyword_frequencies([word], "work") == (16, {word: 16 - 2 * i})
            assert len(store._rows().known_df) <= 3


# --- the statistics follow every write -----------------------------------------------------------

texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), texts, st.sampled_from(["home", "away"]), st.booleans()),
        st.tuples(st.just("forget"), st.integers(0, 50)),
        st.tuples(st.just("restore"), st.integers(0, 50)),
        st.tuples(st.just("edit"), st.integers(0, 50), texts),
        st.tuples(
            st.just("retag"),
            st.integers(0, 50),
            st.lists(st.sampled_from(WORDS[:3]), max_size=2, unique=True),
        ),
        st.tuples(st.just("move"), st.integers(0, 50)),
        st.tuples(st.just("purge"), st.integers(0, 50)),
    ),
    min_size=1,
    max_size=25,
)


# make_memory is a plain function: sharing it between examples is safe.
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(ops=operations, terms=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))
def test_statistics_follow_every_write(make_memory: MakeMemory, ops, terms) -> None:
    """Property: after any sequence of writes, forgets, restores, edits of text or tags, moves
    between realms and purges, searched after each, a realm's ranking and scores (over text
    and tags, and over the tags alone) are those of a store built afresh from its live
    memories."""
    with new_store() as store:
        made: list[str] = []
        for op in ops:
            if op[0] == "insert":
                m = make_memory(f"note {op[1]}", realm=op[2], deleted_at=1 if op[3] else None)
                store.insert([(m, None)])
                made.append(m.id)
            elif made and op[0] != "insert":
                memory_id = made[op[1] % len(made)]
                if not store.exists(memory_id):
                    continue
                current = store.get(memory_id, include_deleted=True)
                if op[0] == "forget":
                    store.set_deleted(memory_id, 5)
                elif op[0] == "restore":
                    store.set_deleted(memory_id, None)
                elif op[0] == "edit":
                    store.update(replace(current, content=f"note {op[2]}"))
                elif op[0] == "retag":
                    store.update(replace(current, tags=tuple(op[2])))
                elif op[0] == "move":
                    store.update(replace(current, realm="away" if current.realm == "home"
                                         else "home"))  # fmt: skip
                else:
                    store.purge(memory_id)
            for realm in ("home", "away"):
                with alone(store, Scope(realm)) as single:
                    for column in (None, "tags"):
                        assert store.keyword_search(terms, Scope(realm), 40, column=column) == (
                            single.keyword_search(terms, Scope(realm), 40, column=column)
                        )


def test_statistics_follow_a_restored_backup(store: Store, make_memory, tmp_path) -> None:
    """A restore replaces every row (numbered afresh): the search reads them all again, and
    writes after it are counted as usual."""
    store.insert([(make_memory(f"note {w} otter"), None) for w in WORDS])
    store.keyword_search(["otter"], Scope("work"), 40)
    store.backup_to(tmp_path / "backup.db")
    store.insert([(make_memory(f"later {i} otter otter"), None) for i in range(30)])
    store.keyword_search(["otter"], Scope("work"), 40)
    store.restore_from(tmp_path / "backup.db")
    store.insert([(make_memory("after the restore, an otter"), None)])
    with alone(store, Scope("work")) as single:
        for terms in (["otter"], ["restore", "mill"]):
            assert store.keyword_search(terms, Scope("work"), 40) == single.keyword_search(
                terms, Scope("work"), 40
            )


# --- the parts -----------------------------------------------------------------------------------


def test_stems_are_the_index_tokenizers() -> None:
    assert fts5.stems("deploying") == fts5.stems("deployed") == ("deploi",)
    assert fts5.stems("Café") == ("cafe",)
    assert fts5.stems("parse_tags") == ("pars", "tag")
    assert fts5.stems("_") == ()


def test_tokenizer_is_the_stores(store: Store) -> None:
    sql = store._query("SELECT sql FROM sqlite_master WHERE name = 'memories_fts'")[0][0]
    assert f"tokenize = '{fts5.TOKENIZE}'" in sql


@pytest.mark.parametrize(("record", "length"), [
    (b"\x0b\x00", 11), (b"\x7f", 127), (b"\x82\x2c\x00", 300), (b"\x81\x80\x00\x01", 16384),
])  # fmt: skip
def test_content_length_reads_a_docsize_varint(record: bytes, length: int) -> None:
    assert fts5.content_length(record) == length


@pytest.mark.parametrize(("record", "lengths"), [
    (b"\x0b\x00", (11, 0)), (b"\x82\x2c\x03", (300, 3)), (b"\x05\x81\x00", (5, 128)),
    (b"\x81\x80\x00\x01", (16384, 1)),
])  # fmt: skip
def test_column_lengths_read_each_column(record: bytes, lengths: tuple[int, int]) -> None:
    assert fts5.column_lengths(record) == lengths


def _varint(value: int) -> bytes:
    """SQLite's varint of ``value`` (under 2**56: seven bits a byte, high bit set on all
    but the last)."""
    groups = []
    while True:
        groups.append(value & 0x7F)
        value >>= 7
        if not value:
            break
    groups.reverse()
    return bytes([g | 0x80 for g in groups[:-1]] + [groups[-1]])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**40), st.one_of(st.none(), st.integers(0, 2**20))),
                min_size=fts5.BULK_DOCSIZES, max_size=3 * fts5.BULK_DOCSIZES))  # fmt: skip
def test_many_records_decode_as_each_alone(numbers: list[tuple[int, int | None]]) -> None:
    """The bulk decoder (numpy, for batches of BULK_DOCSIZES or more) and the one-record
    decoder agree, records of one number or two, of one byte or six."""
    records = [_varint(c) + (b"" if t is None else _varint(t)) for c, t in numbers]
    content, tags = fts5.docsize_columns(records)
    assert content.tolist() == [c for c, _ in numbers]
    assert tags.tolist() == [t or 0 for _, t in numbers]
    assert [fts5.column_lengths(r)[:1] for r in records] == [(c,) for c, _ in numbers]
