"""The keyword search's doclists (store/sqlite/doclists.py) and its search for the best k
(MaxScore, store/sqlite/keywords.py): the same ids and scores as scoring every holder, lists
read from the index once and kept in step with writes, and a byte bound on them."""

from __future__ import annotations

import random
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import memory

from chitta.store.records import Memory, Scope
from chitta.store.sqlite import Store, doclists, keywords
from chitta.store.sqlite.doclists import DoclistCache, doclist

MakeMemory = Callable[..., Memory]  # the make_memory fixture (tests/conftest.py)

# A Zipf-like vocabulary: a few words in most memories, many in few.
VOCABULARY = [f"w{i}" for i in range(60)]
WEIGHTS = [1 / (i + 1) for i in range(60)]


def zipf_text(rng: random.Random) -> str:
    return " ".join(rng.choices(VOCABULARY, WEIGHTS, k=rng.randint(1, 14)))


@contextmanager
def new_store() -> Iterator[Store]:
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "store.db") as store:
        yield store


def ranked(store: Store, terms: list[str], realms: list[str], k: int | None):
    return keywords.search(store._query, store._rows(), terms, realms, k=k)


def assert_best_k_exact(store: Store, terms: list[str], realms: list[str], k: int) -> bool:
    """The search for the best ``k`` agrees with the exhaustive one, to the bit, on every
    place it says is final, and those hold the best ``k``; whether it left holders out."""
    whole = ranked(store, terms, realms, None)
    best = ranked(store, terms, realms, k)
    assert whole.whole
    assert best.exact >= min(k, len(whole.rowids))
    assert np.array_equal(best.rowids[: best.exact], whole.rowids[: best.exact])
    assert np.array_equal(best.scores[: best.exact], whole.scores[: best.exact])
    assert best.df == whole.df and best.size == whole.size
    return not best.whole


# --- the search for the best k ------------------------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), k=st.sampled_from([1, 3, 10, 40]))
def test_best_k_scores_equal_scoring_every_holder(seed: int, k: int) -> None:
    """Property: on stores of varied sizes, realms and word frequencies, any query's best k
    are the exhaustive ranking's, ids and scores equal as floats."""
    rng = random.Random(seed)
    with new_store() as store:
        store.insert([(memory(zipf_text(rng), realm=rng.choice(["a", "b"])), None)
                      for _ in range(rng.randint(20, 400))])  # fmt: skip
        for _ in range(8):
            terms = rng.sample(VOCABULARY[:30], rng.randint(1, 5))
            realms = rng.choice([["a"], ["b"], ["a", "b"]])
            assert_best_k_exact(store, terms, realms, k)


def test_best_k_on_a_larger_store_leaves_holders_out_and_stays_exact() -> None:
    """Forty queries on 1,500 memories of a Zipf vocabulary: every one exact, and most of
    them answered without scoring every holder (the bound is what answers, not the
    fallback)."""
    rng = random.Random(7)
    with new_store() as store:
        store.insert([(memory(zipf_text(rng)), None) for _ in range(1_500)])
        left_out = sum(
            assert_best_k_exact(store, rng.sample(VOCABULARY[:40], rng.randint(2, 6)), ["work"], 10)
            for _ in range(40)
        )
    assert left_out >= 20


def test_best_k_leaves_out_what_cannot_enter(make_memory: MakeMemory) -> None:
    """A rare word and a common one: the common word's holders that lack the rare word are
    not scored, and the ranking's first places are still exact."""
    with new_store() as store:
        store.insert([(make_memory(f"common filler {i}"), None) for i in range(300)])
        store.insert([(make_memory(f"common rare {i}"), None) for i in range(5)])
        best = ranked(store, ["rare", "common"], ["work"], 5)
        assert not best.whole and len(best.rowids) < 100
        assert assert_best_k_exact(store, ["rare", "common"], ["work"], 5)


def test_a_scope_that_filters_asks_for_the_whole_ranking(make_memory: MakeMemory) -> None:
    """An agent's memories lie deep in the realm's ranking: the first k do not hold enough
    of them, and the whole ranking gives the same answer as filtering it."""
    with new_store() as store:
        store.insert([(make_memory(f"otter note {i} " + "otter " * (i % 5)), None)
                      for i in range(200)])  # fmt: skip
        store.insert([(make_memory(f"otter by bob {i}", agent_id="bob"), None) for i in range(3)])
        realm = store.keyword_search(["otter", "bob"], Scope("work"), 500)
        bob = [(m, s) for m, s in realm if store.get(m).agent_id == "bob"]
        assert store.keyword_search(["otter", "bob"], Scope("work", agent_id="bob"), 3) == bob
        plain = store.keyword_search(["otter"], Scope("work", agent_id="bob"), 3)
        assert {m for m, _ in plain} == {m for m, _ in bob}


# --- the lists kept ------------------------------------------------------------------------------


def index_reads(store: Store) -> list[str]:
    """The statements that read the index's vocabulary from now on."""
    reads: list[str] = []
    query = store._query

    def counting(sql: str, params=()):
        if "memories_fts_instance" in sql:
            reads.append(sql)
        return query(sql, params)

    store._query = counting  # type: ignore[method-assign]
    return reads


def fresh_equal(store: Store, terms: list[str], realm: str = "work") -> None:
    """``store``'s ranking of ``terms`` is a store's built afresh from its live memories."""
    live = list(store.iter_memories(realm=realm))
    with new_store() as single:
        single.insert([(m, None) for m in live])
        for column in (None, "tags"):
            assert store.keyword_search(terms, Scope(realm), 40, column=column) == (
                single.keyword_search(terms, Scope(realm), 40, column=column)
            )


def test_a_list_is_read_once_and_extended_by_new_rows(make_memory: MakeMemory) -> None:
    with new_store() as store:
        store.insert([(make_memory(f"otter river {i}"), None) for i in range(50)])
        store.keyword_search(["otter"], Scope("work"), 10)
        reads = index_reads(store)
        store.insert([(make_memory("an otter, otter again", tags=("otter",)), None),
                      (make_memory("no such word"), None)])  # fmt: skip
        store.keyword_search(["otter"], Scope("work"), 10)
        assert reads == []  # the new rows were tokenized, the list not read again
        assert store._rows().lists.upto == store._rows().top
        del store._query
        fresh_equal(store, ["otter", "river"])


def test_a_bulk_import_starts_an_empty_cache(
    make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(doclists, "EXTEND_MAX", 3)
    with new_store() as store:
        store.insert([(make_memory(f"otter {i}"), None) for i in range(5)])
        store.keyword_search(["otter"], Scope("work"), 10)
        assert len(store._rows().lists) == 1
        store.insert([(make_memory(f"otter later {i}"), None) for i in range(4)])
        assert len(store._rows().lists) == 0
        fresh_equal(store, ["otter", "later"])


def test_much_new_text_starts_an_empty_cache(
    make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(doclists, "EXTEND_MAX_CHARS", 100)
    with new_store() as store:
        store.insert([(make_memory(f"otter {i}"), None) for i in range(5)])
        store.keyword_search(["otter"], Scope("work"), 10)
        store.insert([(make_memory("otter " + "word " * 10), None)])  # 56 characters: extended
        store.keyword_search(["otter"], Scope("work"), 10)
        assert len(store._rows().lists) == 1
        store.insert([(make_memory("otter " + "long " * 20), None)])  # 106: read anew
        store.keyword_search(["word"], Scope("work"), 10)
        assert [token for token, _ in store._rows().lists._lists] == ["word"]
        fresh_equal(store, ["otter", "word", "long"])


@pytest.mark.parametrize("change", ["edit", "retag", "forget", "restore", "purge"])
def test_a_change_in_place_reads_the_lists_again(make_memory: MakeMemory, change: str) -> None:
    with new_store() as store:
        memories = [make_memory(f"otter river {i}", deleted_at=5 if i == 0 else None)
                    for i in range(20)]  # fmt: skip
        store.insert([(m, None) for m in memories])
        store.keyword_search(["otter", "river"], Scope("work"), 10)
        target = memories[0 if change == "restore" else 3]
        if change == "edit":
            store.update(replace(target, content="a heron now"))
        elif change == "retag":
            store.update(replace(target, tags=("otter",)))
        elif change == "forget":
            store.set_deleted(target.id, 9)
        elif change == "restore":
            store.set_deleted(target.id, None)
        else:
            store.purge(target.id)
        reads = index_reads(store)
        store.keyword_search(["otter"], Scope("work"), 10)
        assert reads  # read afresh
        del store._query
        fresh_equal(store, ["otter", "river", "heron"])


def test_a_purged_rowid_taken_again_is_not_the_old_row(make_memory: MakeMemory) -> None:
    """SQLite gives the highest rowid again once its row is deleted: the new row is counted
    with its own words, not the purged one's."""
    with new_store() as store:
        first, last = make_memory("otter one"), make_memory("otter kayak last")
        store.insert([(first, None), (last, None)])
        store.keyword_search(["kayak", "otter"], Scope("work"), 10)
        store.set_deleted(last.id, 5)
        store.keyword_search(["kayak", "otter"], Scope("work"), 10)
        store.purge(last.id)
        store.insert([(make_memory("a heron in its place"), None)])
        fresh_equal(store, ["kayak", "otter", "heron"])


def test_the_warm_up_reads_the_common_words_lists(make_memory: MakeMemory) -> None:
    from chitta.store.sqlite import search

    with new_store() as store:
        store.insert([(make_memory(f"otter {i}" + " river" * (i % 2)), None)
                      for i in range(search.PRELOAD_DF * 2)])  # fmt: skip
        parts = store.warm()
        assert "keyword_lists" in parts
        lists = store._rows().lists
        assert lists.get(("otter", None)) is not None
        assert lists.get(("river", None)) is not None
        assert lists.get(("7", None)) is None  # a word of one memory is read when asked for
        reads = index_reads(store)
        store.keyword_search(["otter", "river"], Scope("work"), 10)
        assert reads == []


# --- the cache itself ----------------------------------------------------------------------------


def some_list(n: int) -> doclists.Doclist:
    return doclist(np.arange(n, dtype=np.int64).repeat(2), np.full(n, 7))


def test_the_cache_keeps_under_its_byte_bound_least_recent_out() -> None:
    size = some_list(100).nbytes
    cache = DoclistCache(upto=0, max_bytes=size * 3)
    for word in "abcd":
        cache.put((word, None), some_list(100), upto=0)
        if word == "b":
            assert cache.get(("a", None)) is not None  # used: "b" is now the least recent
    assert cache.nbytes <= cache.max_bytes
    assert cache.get(("b", None)) is None
    assert all(cache.get((w, None)) is not None for w in "acd")
    cache.put(("huge", None), some_list(10_000), upto=0)  # more than the bound: not kept
    assert cache.get(("huge", None)) is None and len(cache) == 3


def test_a_list_read_before_an_extension_is_not_kept() -> None:
    cache = DoclistCache(upto=10)
    cache.extend([], np.zeros(12), upto=11)
    cache.put(("otter", None), some_list(5), upto=10)
    assert cache.get(("otter", None)) is None
    cache.put(("otter", None), some_list(5), upto=11)
    assert cache.get(("otter", None)) is not None


def test_a_list_knows_its_bounds() -> None:
    lengths = np.array([0, 9, 4, 12, 3])
    found = doclist(np.array([3, 1, 3, 3, 2]), lengths)
    assert found.docs.tolist() == [1, 2, 3] and found.tf.tolist() == [1, 1, 3]
    assert (found.max_tf, found.min_length) == (3, 4)
    assert found.docs.dtype == np.int32 and found.tf.dtype == np.uint8


# --- which words a hit holds (the assessment stage) -------------------------------------------


MATCH_TEXTS = [
    ("We are deploying the café service", ()),
    ("parse_tags reads the tags", ("otter",)),
    ("tags parse", ()),
    ("an otter by the river", ("kayak",)),
    ("nothing here", ()),
]
MATCH_TERMS = ["deployed", "cafe", "parse_tags", "otter", "kayak", "river", "_", "zebra"]


def test_a_hits_words_from_the_lists_are_its_text_s(make_memory: MakeMemory) -> None:
    """The doclists answer as tokenizing each hit's text and tags would (store/fts5.py):
    stems, folded accents, tags, a phrase, a term of no token; a memory newer than the rows
    the search knows is read from its text."""
    from chitta.store import fts5

    with new_store() as store:
        made = [make_memory(text, tags=tags) for text, tags in MATCH_TEXTS]
        store.insert([(m, None) for m in made])
        store.keyword_search(["otter"], Scope("work"), 5)  # a list or two kept already
        texts = {m.id: (m.content, " ".join(m.tags)) for m in made}
        ids = [m.id for m in made]
        assert store.term_matches(MATCH_TERMS, ids) == fts5.matches(MATCH_TERMS, texts)
        older = store._rows()
        later = make_memory("otters deploy kayaks", tags=("river",))
        store.insert([(later, None)])
        store._rows = lambda: older  # type: ignore[method-assign]
        texts[later.id] = (later.content, "river")
        got = store.term_matches(MATCH_TERMS, [*ids, later.id])
        assert got == fts5.matches(MATCH_TERMS, texts)
        assert got[later.id] == {"otter", "kayak", "river", "deployed"}
        del store._rows
        # A memory stored already forgotten is in no list: its words come from its text.
        gone = make_memory("a forgotten otter", deleted_at=5)
        store.insert([(gone, None)])
        store.keyword_search(["otter"], Scope("work"), 5)
        assert store.term_matches(["otter", "zebra"], [gone.id]) == {gone.id: {"otter"}}


def test_searches_beside_writes_stay_whole(make_memory: MakeMemory) -> None:
    """Two threads search while a third writes, forgets and edits: no search fails or
    returns an unordered ranking, and afterwards the ranking is a fresh store's."""
    import threading

    rng = random.Random(3)
    errors: list[BaseException] = []
    searched: list[int] = []  # one entry a search, from either reader
    done = threading.Event()
    with new_store() as store:
        store.insert([(make_memory(zipf_text(rng)), None) for _ in range(200)])

        def search() -> None:
            local = random.Random(threading.get_ident())
            try:
                while not done.is_set():
                    terms = local.sample(VOCABULARY[:20], local.randint(1, 4))
                    got = store.keyword_search(terms, Scope("work"), local.choice([1, 10, 40]))
                    scores = [s for _, s in got]
                    assert scores == sorted(scores, reverse=True)
                    searched.append(1)
            except BaseException as exc:  # noqa: BLE001 - reported by the main thread
                errors.append(exc)

        readers = [threading.Thread(target=search) for _ in range(2)]
        for reader in readers:
            reader.start()
        made = []
        for step in range(60):
            batch = [make_memory(zipf_text(rng)) for _ in range(3)]
            store.insert([(m, None) for m in batch])
            made += batch
            if step % 10 == 5:
                store.set_deleted(made[step].id, 9)
            if step % 15 == 7:
                store.update(replace(made[step], content=zipf_text(rng)))
        done.set()
        for reader in readers:
            reader.join()
        assert errors == []
        assert searched  # the readers did search while the writes went on
        for terms in (["w0", "w3"], ["w1", "w7", "w12"], ["w5"]):
            fresh_equal(store, terms)


def test_lists_grown_by_new_rows_stay_under_the_bound(make_memory: MakeMemory) -> None:
    """An extension that takes the lists past the byte bound lets the least recently used
    go, as keeping a new list does."""
    with new_store() as store:
        store.insert([(make_memory(f"otter heron {i}"), None) for i in range(40)])
        store.keyword_search(["heron"], Scope("work"), 5)
        store.keyword_search(["otter"], Scope("work"), 5)
        lists = store._rows().lists
        lists.max_bytes = lists.nbytes + 8  # room for a few more postings, not for forty
        store.insert([(make_memory(f"otter heron again {i}"), None) for i in range(40)])
        grown = store._rows().lists
        assert grown is lists and grown.nbytes <= grown.max_bytes
        assert grown.get(("heron", None)) is None  # the least recently used went
        fresh_equal(store, ["otter", "heron"])
