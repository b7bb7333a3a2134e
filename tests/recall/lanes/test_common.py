"""``common``: candidates containing the query's common words, in the seeds' order."""

from chitta.recall.lanes.common import CommonWordLane


def test_keeps_the_seeds_with_a_common_word_in_seed_order(store, stock, context) -> None:
    ids = stock(["Caroline: I paint", "Melanie: I paint too", "Melanie: and Caroline runs"])
    ranked = CommonWordLane().run(context(seeds=ids, common=("melanie",)))
    assert ranked == [(ids[1], 1.0), (ids[2], 1.0)]
    both = CommonWordLane().run(context(seeds=ids, common=("melanie", "caroline")))
    assert both == [(ids[0], 1.0), (ids[1], 1.0), (ids[2], 2.0)]


def test_nothing_without_common_words_or_seeds(store, stock, context) -> None:
    ids = stock(["Melanie: I paint"])
    assert CommonWordLane().run(context(seeds=ids)) == []
    assert CommonWordLane().run(context(common=("melanie",))) == []
