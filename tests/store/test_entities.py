"""Entities found by surface patterns: names, identifiers, quantities."""

from chitta.store.entities import MAX_ENTITIES, entities, normalise


def test_names_inside_a_sentence_and_runs_of_capitalised_words() -> None:
    found = entities("Melanie: We drove to the Grand Canyon with John Smith and Oliver.")
    assert found == ("grand canyon", "john smith", "oliver")


def test_one_capitalised_word_opening_a_sentence_is_not_a_name_but_an_acronym_is() -> None:
    assert entities("Yesterday was long. Tomorrow too.") == ()
    assert entities("LGBTQ groups met. NASA called.") == ("lgbtq", "nasa")


def test_identifiers_issue_numbers_and_versions() -> None:
    text = "Fix bug-218 in store/sqlite.py: parse_tags fails on #354 with v1.2.3 on x86."
    assert entities(text) == (
        "bug-218", "store/sqlite.py", "parse_tags", "#354", "v1.2.3", "x86",
    )  # fmt: skip


def test_quantities_need_a_unit_or_a_currency() -> None:
    found = entities("it took 20 minutes, cost $1,200.50 and 40% of 2 of them; 218 in total")
    assert found == ("20 minutes", "$1,200.50", "40%")


def test_possessives_name_the_same_entity_and_stop_words_are_not_names() -> None:
    assert entities("We met Oliver's sister. It was about Oliver.") == ("oliver",)
    assert entities("I said The end.") == ()


def test_at_most_max_entities_in_order_of_appearance() -> None:
    text = " ".join(f"met v{i}x" for i in range(MAX_ENTITIES + 5))
    found = entities(text)
    assert len(found) == MAX_ENTITIES and found[0] == "v0x"


def test_normalise_folds_case_spaces_and_trailing_punctuation() -> None:
    assert normalise("  Grand   Canyon. ") == "grand canyon"
