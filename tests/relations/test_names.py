"""Entity and predicate names: checked, and keyed so that spellings of one name meet."""

from __future__ import annotations

import pytest

from chitta.errors import BadName
from chitta.relations.names import (
    MAX_ENTITY_CHARS,
    MAX_PREDICATE_CHARS,
    check_entity,
    check_predicate,
)
from chitta.store.triplets import SEED_PREDICATES, entity_key, predicate_key


@pytest.mark.parametrize(
    "spelling", ["Lives In", "lives-in", "lives_in", "LIVES  IN", " lives in "]
)
def test_spellings_of_a_predicate_are_one_predicate(spelling: str) -> None:
    assert predicate_key(spelling) == "lives_in"
    text, key = check_predicate(spelling)
    assert (text, key) == (spelling.strip(), "lives_in")


@pytest.mark.parametrize(
    "spelling", ["New York City", "New  York City", "new york city.", "NEW YORK CITY!"]
)
def test_spellings_of_an_entity_are_one_entity(spelling: str) -> None:
    assert entity_key(spelling) == "new york city"
    assert check_entity(spelling, "subject") == (spelling.strip(), "new york city")


def test_entity_keys_fold_unicode_compatibility_forms() -> None:
    assert entity_key("ＮＹＣ") == entity_key("nyc") == "nyc"  # full-width letters


def test_seed_and_free_predicates_are_accepted() -> None:
    for predicate in SEED_PREDICATES:
        assert check_predicate(predicate)[1] == predicate
    assert check_predicate("Works At")[1] == "works_at"
    assert check_predicate("capital-of")[1] == "capital_of"
    assert check_predicate("depends_on:v2")[1] == "depends_on:v2"


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("", "empty"),
        ("   \u00a0 ", "empty"),
        ("x" * (MAX_ENTITY_CHARS + 1), f"at most {MAX_ENTITY_CHARS}"),
        ("New\nYork", "control character"),
        ("New\tYork", "control character"),
        ("nul\x00byte", "control character"),
        ("Ber\ud800lin", "not Unicode text"),  # JSON "\ud800" decodes to a lone surrogate
        ("...", "no letters or digits"),
        (42, "must be text"),
        (None, "must be text"),
    ],
)
def test_bad_entity_names_are_refused_naming_the_part(name: object, words: str) -> None:
    with pytest.raises(BadName, match=words) as caught:
        check_entity(name, "object")
    assert "object" in str(caught.value)


def test_the_longest_entity_name_is_accepted() -> None:
    assert check_entity("x" * MAX_ENTITY_CHARS, "subject")[1] == "x" * MAX_ENTITY_CHARS


@pytest.mark.parametrize(
    "name", ["", "  ", "p" * (MAX_PREDICATE_CHARS + 1), "lives\nin", "a;b", "(calls)", "?!", 7]
)
def test_bad_predicates_are_refused(name: object) -> None:
    with pytest.raises(BadName, match="predicate"):
        check_predicate(name)
