"""Relations: adding, invalidating and finding triplets, and entity aliases, over a real store;
every refused call leaves the store as it was."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from chitta.api import Chitta
from chitta.errors import BadArgument, BadDate, BadName, MemoryNotFound, TripletNotFound
from chitta.relations.service import Relations, triplet_to_dict
from chitta.store.base import Store
from chitta.validate import parse_time

NOW = parse_time("2026-06-01T12:00:00Z")
DAY = 86_400_000


@pytest.fixture
def rel(store: Store) -> Relations:
    """Relations over a bare store, at a fixed time."""
    return Relations(store, lambda: NOW)


def _state(store: Store) -> tuple[object, ...]:
    """Everything a relations write could change."""
    return tuple(store.triplets()), tuple(store.aliases())


@contextmanager
def unchanged(store: Store) -> Iterator[None]:
    before = _state(store)
    yield
    assert _state(store) == before


# --- names ---------------------------------------------------------------------------------


def test_spellings_of_a_predicate_and_an_entity_make_one_edge(rel: Relations, store) -> None:
    first = rel.add("New  York City", "Lives In", "USA", realm="work")
    assert not first.existing
    for subject, predicate in [("new york city.", "lives-in"), ("NEW YORK CITY", "lives_in")]:
        again = rel.add(subject, predicate, "usa", realm="work")
        assert again.existing and again.triplet == first.triplet
    assert len(store.triplets()) == 1
    stored = first.triplet
    assert (stored.subject, stored.predicate, stored.object) == (
        "New  York City",
        "Lives In",
        "USA",
    )
    assert triplet_to_dict(stored)["predicate_key"] == "lives_in"
    found = rel.find(subject="new york city", predicate="LIVES IN", realm="work")
    assert found == [stored]


def test_seed_and_free_predicates_are_stored(rel: Relations) -> None:
    for predicate in ("calls", "contains", "imports", "inherits", "corrects", "relates_to"):
        assert rel.add("billing", predicate, f"thing {predicate}").triplet.predicate == predicate
    assert rel.add("Ada", "Works At", "Acme").triplet.predicate == "Works At"
    assert {t.predicate for t in rel.find(subject="billing", limit=10)} == {
        "calls", "contains", "imports", "inherits", "corrects", "relates_to"
    }  # fmt: skip


def test_an_equal_current_edge_is_returned_not_written_twice(rel: Relations, store) -> None:
    first = rel.add("Ada", "works_at", "Acme", weight=0.4)
    again = rel.add("ada", "works at", "acme", weight=0.9, valid_from="2020-01-01")
    assert again.existing and again.triplet == first.triplet  # weight and date of the first
    rel.invalidate(first.triplet.id)
    third = rel.add("Ada", "works_at", "Acme")
    assert not third.existing and third.triplet.id != first.triplet.id
    assert len(store.triplets()) == 2


def test_an_edge_stated_under_an_alias_is_the_same_edge(rel: Relations, store) -> None:
    first = rel.add("New York City", "located_in", "USA")
    rel.alias("NYC", "New York City")
    rel.alias("United States", "USA")
    again = rel.add("NYC", "located in", "United States")
    assert again.existing and again.triplet == first.triplet
    assert len(store.triplets()) == 1


# --- checks --------------------------------------------------------------------------------


def test_weights_in_zero_one_are_kept(rel: Relations) -> None:
    assert rel.add("a", "relates_to", "b", weight=1).triplet.weight == 1.0
    assert rel.add("a", "relates_to", "c", weight=0.001).triplet.weight == 0.001


@pytest.mark.parametrize("weight", [0, 0.0, -0.5, 1.0001, 2, math.nan, math.inf, True, "0.5", None])
def test_bad_weights_are_refused(rel: Relations, store, weight: object) -> None:
    with unchanged(store), pytest.raises(BadArgument, match="weight"):
        rel.add("a", "relates_to", "b", weight=weight)


def test_valid_from_reads_iso_text_and_epoch_ms(rel: Relations) -> None:
    iso = rel.add("a", "relates_to", "b", valid_from="2024-03-01").triplet
    assert iso.valid_from == parse_time("2024-03-01T00:00:00Z")
    ms = rel.add("a", "relates_to", "c", valid_from=1_700_000_000_000).triplet
    assert ms.valid_from == 1_700_000_000_000
    default = rel.add("a", "relates_to", "d").triplet
    assert default.valid_from == NOW == default.created_at


@pytest.mark.parametrize("when", ["last tuesday", "2024-13-45", "1066-10-14", math.nan, True, []])
def test_an_unreadable_valid_from_is_refused_by_name(rel: Relations, store, when: object) -> None:
    with unchanged(store), pytest.raises(BadDate, match="valid_from"):
        rel.add("a", "relates_to", "b", valid_from=when)


@pytest.mark.parametrize(
    ("subject", "predicate", "object_", "words"),
    [
        ("", "relates_to", "b", "subject is empty"),
        ("a", "relates_to", "   ", "object is empty"),
        ("x" * 201, "relates_to", "b", "subject is 201 characters"),
        ("a", "relates_to", "line\nbreak", "object .* control character"),
        ("a", "", "b", "predicate is empty"),
        ("a", "rel;ates", "b", "not a predicate"),
    ],
)
def test_bad_names_are_refused(
    rel: Relations, store, subject: str, predicate: str, object_: str, words: str
) -> None:
    with unchanged(store), pytest.raises(BadName, match=words):
        rel.add(subject, predicate, object_)


@pytest.mark.parametrize("predicate", ["relates_to", "imports", "contains", "Inherits", "corrects"])
def test_self_loops_are_refused_except_calls(rel: Relations, store, predicate: str) -> None:
    with unchanged(store), pytest.raises(BadName, match="itself"):
        rel.add("parse", predicate, "Parse.")
    assert not rel.add("parse", "calls", "parse").existing  # recursion


def test_a_self_loop_through_an_alias_is_refused(rel: Relations, store) -> None:
    rel.alias("X", "Y")
    with unchanged(store), pytest.raises(BadName, match="itself"):
        rel.add("X", "relates_to", "Y")
    with unchanged(store), pytest.raises(BadName, match="itself"):
        rel.add("y", "imports", "x")
    assert rel.add("X", "calls", "Y").triplet.subject == "X"


def test_the_source_memory_must_be_a_live_memory_of_the_realm(rel, store, make_memory) -> None:
    here, gone, there = (make_memory("a"), make_memory("b"),
                         make_memory("c", realm="elsewhere"))  # fmt: skip
    store.insert([(here, None), (gone, None), (there, None)])
    store.set_deleted(gone.id, NOW)
    with unchanged(store):
        with pytest.raises(MemoryNotFound, match="source_memory.*does not exist"):
            rel.add("a", "relates_to", "b", source_memory="01NOSUCHMEMORY", realm="work")
        with pytest.raises(MemoryNotFound, match="source_memory.*forgotten"):
            rel.add("a", "relates_to", "b", source_memory=gone.id, realm="work")
        with pytest.raises(BadArgument, match="realm 'elsewhere'"):
            rel.add("a", "relates_to", "b", source_memory=there.id, realm="work")
        with pytest.raises(BadArgument, match="source_memory"):
            rel.add("a", "relates_to", "b", source_memory=5, realm="work")
    added = rel.add("a", "relates_to", "b", source_memory=here.id, realm="work")
    assert added.triplet.source_memory == here.id


# --- invalidate ----------------------------------------------------------------------------


def test_invalidating_an_unknown_id_is_refused(rel: Relations, store) -> None:
    with unchanged(store), pytest.raises(TripletNotFound):
        rel.invalidate("01NOSUCHTRIPLET")
    with unchanged(store), pytest.raises(BadArgument):
        rel.invalidate("  ")


def test_invalidating_twice_says_already_and_changes_nothing(rel: Relations, store) -> None:
    edge = rel.add("Ada", "works_at", "Acme", valid_from=NOW - 10 * DAY).triplet
    first = rel.invalidate(edge.id, at=NOW - DAY)
    assert not first.already and first.triplet.invalidated_at == NOW - DAY
    assert store.triplet(edge.id) == first.triplet
    with unchanged(store):
        second = rel.invalidate(edge.id)
    assert second.already and second.triplet.invalidated_at == NOW - DAY


def test_invalidating_before_the_edge_was_valid_is_refused(rel: Relations, store) -> None:
    edge = rel.add("Ada", "works_at", "Acme", valid_from="2025-01-01").triplet
    with unchanged(store), pytest.raises(BadDate, match="before the edge's valid_from"):
        rel.invalidate(edge.id, at="2024-12-31")
    with unchanged(store), pytest.raises(BadDate, match="^at .soon. is not a date"):
        rel.invalidate(edge.id, at="soon")


def test_an_edge_invalidated_in_the_past_is_history(rel: Relations) -> None:
    edge = rel.add("Ada", "lives_in", "Paris", valid_from="2020-01-01").triplet
    edge = rel.invalidate(edge.id, at="2024-01-01").triplet
    assert edge.invalidated_at == parse_time("2024-01-01")
    assert rel.find(subject="Ada") == []
    assert rel.find(subject="Ada", as_of="2023-06-01") == [edge]
    assert rel.find(subject="Ada", as_of="2024-01-01") == []  # invalid from that moment
    assert rel.find(subject="Ada", include_invalidated=True) == [edge]


# --- find ----------------------------------------------------------------------------------


def test_find_current_past_and_all(rel: Relations, store) -> None:
    old = rel.add("Ada", "lives_in", "Paris", valid_from="2020-01-01").triplet
    old = rel.invalidate(old.id, at="2023-01-01").triplet
    new = rel.add("Ada", "lives_in", "Berlin", valid_from="2023-01-01").triplet
    later = rel.add("Ada", "lives_in", "Oslo", valid_from=NOW + DAY).triplet  # not yet valid
    assert rel.find(subject="ada") == [new]
    assert rel.find(subject="ada", as_of="2022-06-01") == [old]  # invalidated since: seen
    assert rel.find(subject="ada", as_of="2024-06-01") == [new]
    assert rel.find(subject="ada", as_of=NOW + 2 * DAY) == [later, new]
    every = rel.find(subject="ada", include_invalidated=True)
    assert [t.id for t in every] == [later.id, new.id, old.id]  # newest valid_from first
    assert rel.find(object_="PARIS", include_invalidated=True) == [every[2]]
    assert rel.find(predicate="lives-in", object_="berlin") == [new]
    assert rel.find(subject="Ada", limit=1, include_invalidated=True) == [every[0]]
    with unchanged(store), pytest.raises(BadArgument, match="not both"):
        rel.find(subject="ada", as_of="2022-06-01", include_invalidated=True)
    with pytest.raises(BadDate, match="as_of"):
        rel.find(as_of="whenever")
    with pytest.raises(BadArgument, match="limit"):
        rel.find(limit=0)


def test_find_keeps_to_its_realm(rel: Relations) -> None:
    rel.add("Ada", "lives_in", "Paris", realm="work")
    assert rel.find(subject="Ada") == []
    assert len(rel.find(subject="Ada", realm="work")) == 1


# --- aliases -------------------------------------------------------------------------------


def test_an_alias_resolves_in_find_both_ways(rel: Relations) -> None:
    city = rel.add("New York City", "located_in", "USA").triplet
    short = rel.add("NYC", "twinned_with", "Tokyo").triplet
    assert rel.find(subject="nyc") == [short]
    rel.alias("NYC", "New York City")
    assert {t.id for t in rel.find(subject="nyc")} == {city.id, short.id}
    assert {t.id for t in rel.find(subject="new york city")} == {city.id, short.id}
    assert rel.unalias("nyc") is True
    assert rel.unalias("nyc") is False
    assert rel.find(subject="nyc") == [short]


def test_re_pointing_an_alias_target_moves_its_aliases_no_chains(rel: Relations, store) -> None:
    assert rel.alias("A", "B") == ("a", "b")
    assert rel.alias("B", "C") == ("b", "c")
    assert store.canonical("default", "a") == "c"  # A now means C, in one step
    assert store.names_of("default", "a") == ("c", "a", "b")
    listed = {(x["alias_key"], x["canonical_key"]) for x in rel.aliases()}
    assert listed == {("a", "c"), ("b", "c")}
    edge = rel.add("C", "relates_to", "D").triplet
    assert rel.find(subject="A") == [edge]
    # A cycle would need C to be an alias of what already means C.
    with unchanged(store), pytest.raises(BadName, match="'A' is an alias of 'C'"):
        rel.alias("C", "A")


def test_an_alias_of_itself_is_refused(rel: Relations, store) -> None:
    with unchanged(store), pytest.raises(BadName, match="alias of itself"):
        rel.alias("NYC", "nyc.")
    with unchanged(store), pytest.raises(BadName, match="alias is empty"):
        rel.alias("", "NYC")
    with unchanged(store), pytest.raises(BadName, match="canonical"):
        rel.alias("NYC", "x" * 201)
    rel.alias("NYC", "New York City")
    # The other way round: the message says what is in the way, not "an alias of itself".
    with unchanged(store), pytest.raises(BadName, match="'nyc' is an alias of 'New York City'"):
        rel.alias("New York City", "nyc")


def test_aliases_are_per_realm(rel: Relations) -> None:
    rel.alias("NYC", "New York City", realm="work")
    assert [x["alias"] for x in rel.aliases(realm="work")] == ["NYC"]
    assert rel.aliases() == []


def test_chitta_offers_the_same_relations(chitta: Chitta) -> None:
    """Through the API, with the real store: a memory as the source of an edge."""
    memory = chitta.remember("Ada moved to Berlin for the new job")
    added = chitta.relations.add("Ada", "lives in", "Berlin", source_memory=memory.id)
    assert added.triplet.source_memory == memory.id
    assert chitta.relations.find(subject="ada", predicate="lives_in") == [added.triplet]
