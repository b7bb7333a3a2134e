"""The two-way inverted index under the entity and correction indexes."""

from chitta.store.postings import Postings


def test_put_replaces_an_ids_keys_and_drop_removes_them_everywhere() -> None:
    postings: Postings[str] = Postings()
    postings.put("a", ["x", "y", "x"])
    postings.put("b", ["y"])
    assert postings.keys_of("a") == ("x", "y") and postings.ids("y") == {"a", "b"}
    postings.put("a", ["z"])
    assert postings.ids("x") == frozenset() and postings.ids("y") == {"b"}
    assert sorted(postings.posted_keys()) == ["y", "z"]
    postings.drop("b")
    postings.drop("never-posted")
    assert "b" not in postings and postings.count("y") == 0 and len(postings) == 1
