"""The keyed correction index: keys, lookups, and the store keeping it in step with writes."""

from __future__ import annotations

from dataclasses import replace

from chitta.store.base import Store
from chitta.store.corrections import (
    CorrectionIndex,
    correction_keys,
    is_identifier,
    query_keys,
    words,
)
from chitta.store.kinds import Kind
from chitta.store.records import Scope

SHIP = "Do not run ops/deploy.sh any more: use `tools ship` with DEPLOY_ENV=prod on Zebra-7"


def test_words_normalise_case_separators_punctuation_and_possessives() -> None:
    assert words("SQLite's user_id, Zebra-7!") == ("sqlite", "user", "id", "zebra", "7")
    assert words("(ops/deploy.sh.)") == ("ops/deploy.sh",)


def test_identifiers_are_distinctive_tokens_not_words() -> None:
    for token in ("v2", "Zebra-7", "user_id", "deploy.sh", "getUser", "SQLite", "WAL", "a::b"):
        assert is_identifier(token), token
    for token in ("deploy", "well-known", "Alice", "2024", "I"):
        assert not is_identifier(token), token


def test_keys_of_a_correction_are_its_tags_and_identifiers(make_memory) -> None:
    m = make_memory(SHIP, kind=Kind.CORRECTION, tags=("deploy", "release-process", "the"))
    assert correction_keys(m) == {
        "deploy", "release process",  # tags ("the" is a stop word: never a key)
        "ops/deploy.sh", "deploy.sh",  # a path and its last part
        "tools ship",  # backticks
        "deploy env=prod", "zebra 7",  # identifiers
    }  # fmt: skip


def test_a_query_names_a_key_by_an_exact_word_ngram() -> None:
    keys = query_keys("How do I ship on zebra 7 with deploy.sh?")
    assert {"zebra 7", "deploy.sh", "ship", "how do i ship on zebra"} <= keys
    assert "zebra7" not in keys and "deploy" not in keys
    assert "deploy.sh" in query_keys("run scripts/deploy.sh now")


def test_lookup_is_scoped_and_reports_the_matching_keys(make_memory) -> None:
    index = CorrectionIndex()
    a = make_memory(SHIP, kind=Kind.CORRECTION, tags=("deploy",))
    b = make_memory("Use WAL mode, not the default journal", kind=Kind.CORRECTION, agent_id="ann")
    other = make_memory("WAL is off here", kind=Kind.CORRECTION, realm="home")
    plain = make_memory("We use WAL", kind=Kind.INSIGHT)
    index.insert([a, b, other, plain])
    assert len(index) == 3
    found = index.lookup(query_keys("is WAL on for deploy?"), Scope("work"))
    assert found == {a.id: ("deploy",), b.id: ("wal",)}
    assert set(index.lookup(query_keys("WAL"), Scope("work", agent_id="bob"))) == set()
    assert set(index.lookup(query_keys("WAL"), Scope("home"))) == {other.id}


def test_store_keeps_the_index_in_step(store: Store, open_again, make_memory) -> None:
    old = make_memory("Port 8080 is wrong: the API listens on port 9090", kind=Kind.CORRECTION,
                      tags=("api-port",))  # fmt: skip
    store.insert([(old, None)])
    store.corrections()  # built from the store
    port = query_keys("which api port?")

    def hits() -> set[str]:
        return set(store.corrections().lookup(port, Scope("work")))

    assert hits() == {old.id}
    new = make_memory("The gateway moved to port 7070", kind=Kind.CORRECTION, tags=("api-port",),
                      supersedes=old.id)  # fmt: skip
    store.insert([(new, None)])  # a new correction superseding the old one
    assert hits() == {new.id} and store.corrections().keys_of(old.id) == frozenset()
    store.set_deleted(new.id, 1)  # forgotten
    assert hits() == set()
    store.set_deleted(new.id, None)  # restored
    assert hits() == {new.id}
    store.update(replace(store.get(new.id), tags=("gateway",)))  # re-keyed
    assert hits() == set() and "gateway" in store.corrections().keys_of(new.id)
    store.update(replace(store.get(new.id), tags=("api-port",), kind=Kind.INSIGHT))
    assert hits() == set()  # no longer a correction
    store.purge(new.id)  # the old one is current again
    assert hits() == {old.id}
    store.update_many([replace(store.get(old.id), superseded_by="01SOMETHINGNEWER000000000")])
    assert hits() == set()
    store.close()
    with open_again() as again:  # a fresh index from the store agrees
        assert len(again.corrections()) == 0
