"""``common``: candidates containing the query's common words, in the seeds' order."""

from chitta.recall.lanes.common import CommonWordLane, written_as_names


def test_keeps_the_seeds_with_a_common_word_in_seed_order(store, stock, context) -> None:
    ids = stock(["Caroline: I paint", "Melanie: I paint too", "Melanie: and Caroline runs"])
    asked = "What does Melanie paint?"
    ranked = CommonWordLane().run(context(seeds=ids, common=("melanie",), query=asked))
    assert ranked == [(ids[1], 1.0), (ids[2], 1.0)]
    both = CommonWordLane().run(
        context(seeds=ids, common=("melanie", "caroline"), query="Did Melanie meet Caroline's")
    )
    assert both == [(ids[0], 1.0), (ids[1], 1.0), (ids[2], 2.0)]


def test_nothing_without_common_words_or_seeds(store, stock, context) -> None:
    ids = stock(["Melanie: I paint"])
    assert CommonWordLane().run(context(seeds=ids, query="Melanie?")) == []
    assert CommonWordLane().run(context(common=("melanie",), query="Melanie?")) == []


def test_only_common_words_written_as_names_count(store, stock, context) -> None:
    ids = stock(["I can recommend a good tent", "Postgres is what we run", "recommend it"])
    lowered = context(seeds=ids, common=("recommend",), query="what did you recommend?")
    assert CommonWordLane().run(lowered) == []
    named = context(seeds=ids, common=("postgres", "recommend"), query="why Postgres, recommend?")
    assert CommonWordLane().run(named) == [(ids[1], 1.0)]


def test_names_are_the_capitalised_words() -> None:
    assert written_as_names("Did Caroline's dog meet melanie in Rome?") == {
        "did",
        "caroline",
        "rome",
    }
