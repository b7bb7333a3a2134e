"""Word document frequencies per realm stay in step with every write."""

from dataclasses import replace

from chitta.store.base import Store
from chitta.store.terms import TermStats, words


def test_words_and_counts() -> None:
    assert words("Caroline: Caroline's group!") == {"caroline", "s", "group"}
    stats = TermStats()
    stats.add("r", "Ann likes tea")
    stats.add("r", "Ann likes coffee")
    stats.add("other", "Ann")
    assert (stats.size("r"), stats.df("r", "ann"), stats.df("r", "tea")) == (2, 2, 1)
    stats.add("r", "Ann likes tea", -1)
    assert (stats.size("r"), stats.df("r", "tea"), stats.df("other", "ann")) == (1, 0, 1)
    # Every count in or out is a change of the realm (the keyword search's row table).
    assert stats.changes() == {"r": 3, "other": 1}


def test_store_keeps_counts_in_step(store: Store, open_again, make_memory) -> None:
    a = make_memory("Caroline went to the support group")
    b = make_memory("Caroline painted a sunset", realm="work")
    store.insert([(a, None)])
    assert store.term_stats().df("work", "caroline") == 1  # built from the store
    store.insert([(b, None)])  # kept in step after that (current as of each call)
    assert store.term_stats().df("work", "caroline") == 2 and store.term_stats().size("work") == 2
    store.set_deleted(a.id, 1)
    assert store.term_stats().df("work", "support") == 0 and store.term_stats().size("work") == 1
    store.set_deleted(a.id, None)
    assert store.term_stats().df("work", "support") == 1
    store.update(replace(store.get(b.id), content="Caroline painted a lake"))
    stats = store.term_stats()
    assert stats.df("work", "sunset") == 0 and stats.df("work", "lake") == 1
    store.purge(a.id)
    assert store.term_stats().df("work", "support") == 0 and store.term_stats().size("work") == 1
    store.close()
    with open_again() as again:  # a fresh count from the store agrees
        assert again.term_stats().df("work", "caroline") == 1
        assert again.term_stats().size("work") == 1


def test_counting_all_at_once_agrees_with_one_by_one(monkeypatch) -> None:
    import chitta.store.terms as terms

    rows = [("r", "Ann likes tea"), ("s", "Ann"), ("r", "Ännchen mag Tee, ANN nicht"),
            ("r", "İstanbul and ISTANBUL"), ("r", "tea for two")] * 3  # fmt: skip
    monkeypatch.setattr(terms, "BUILD_CHUNK", 4)  # several chunks, a realm across them
    one, bulk = TermStats(), TermStats()
    for realm, text in rows:
        one.add(realm, text)
    bulk.add_all(rows)
    for realm in ("r", "s"):
        assert bulk.size(realm) == one.size(realm)
        for word in ("ann", "tea", "ännchen", "istanbul", "i̇stanbul", "two", "nicht"):
            assert bulk.df(realm, word) == one.df(realm, word), word
    assert bulk.changes() == one.changes()
    # The ASCII path and the general one read the same words.
    text = "Hello, World's END"
    assert words(text) == {w.lower() for w in terms._WORD.findall(text)} == {"hello", "world",
                                                                            "s", "end"}  # fmt: skip
