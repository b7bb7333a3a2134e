"""``dated``: for a question that asks when, the seeds whose text says when, in seed order."""

import pytest

from chitta.api import Chitta
from chitta.recall.config import PRESETS
from chitta.recall.lanes.dated import DatedLane, asks_when, says_when


@pytest.mark.parametrize(
    "question",
    [
        "When did Melanie paint a sunrise?",
        "when was the release cut",
        "Caroline, when did you move?",
        "What date is the team offsite?",
        "How long ago did we switch to Postgres?",
        "How many days passed between my visit to MoMA and the exhibit?",
        "Which did I buy first, the necklace or the album?",
        "Which three events happened in the order from first to last?",
    ],
)
def test_questions_that_ask_when(question: str) -> None:
    assert asks_when(question)


@pytest.mark.parametrize(
    "question",
    [
        "What did Melanie paint?",
        "Why did we choose SQLite?",
        "How many books has Caroline read?",
        "Where does the ferry leave from?",
        "Say when you are ready to deploy",
    ],
)
def test_questions_that_do_not(question: str) -> None:
    assert not asks_when(question)


@pytest.mark.parametrize(
    "text",
    [
        "I went to the support group yesterday",
        "We painted it last Friday",
        "I started two weeks ago",
        "The launch is on Monday",
        "We moved in May",
        "That was back in 2019",
        "Deadline 12/03",
        "Tonight we celebrate",
    ],
)
def test_texts_that_say_when(text: str) -> None:
    assert says_when(text)


@pytest.mark.parametrize(
    "text", ["I painted a lake sunrise", "may I bring a friend?", "We march on", "Port 5432"]
)
def test_texts_that_do_not(text: str) -> None:
    assert not says_when(text)


def test_keeps_the_dated_seeds_in_seed_order_only_when_asked_when(store, stock, context) -> None:
    ids = stock(["Melanie: I painted a sunrise", "Melanie: I painted it last year",
                 "Melanie: yesterday I painted again"])  # fmt: skip
    asked = DatedLane().run(context(seeds=ids, query="When did Melanie paint a sunrise?"))
    assert asked == [(ids[1], 1.0), (ids[2], 1.0)]
    assert DatedLane().run(context(seeds=ids, query="What did Melanie paint?")) == []
    assert DatedLane().run(context(query="When did Melanie paint?")) == []  # no seeds


def test_in_hybrid_a_boost_for_the_memory_that_says_when(chitta: Chitta) -> None:
    assert PRESETS["hybrid"].rsf_boosts["dated"] == 0.05
    assert "dated" in PRESETS["field"].lane_weights
    said = chitta.remember("Melanie painted a lake sunrise last year", realm="art").id
    plain = chitta.remember("Melanie painted a lake sunrise in watercolour", realm="art").id
    asked = {h.memory.id: h for h in chitta.recall("When did Melanie paint a sunrise?",
                                                   realm="art").hits}  # fmt: skip
    assert "dated" in asked[said].lanes and "dated" not in asked[plain].lanes
    assert asked[said].lanes["dated"].contribution == pytest.approx(0.05, abs=0.03)
    other = chitta.recall("What did Melanie paint?", realm="art").hits
    assert all("dated" not in h.lanes for h in other)
