"""The resonance learner in a real store (learn/learner.py), on both backends: a fresh store
recalls exactly as the preset does, feedback turns sampling on and is credited to the recall
that surfaced the memory, the state survives a restart, and it can be turned off and reset."""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest

from chitta.api import Chitta
from chitta.config import RecallSwitches, Settings
from chitta.learn.context import query_context
from chitta.learn.learner import META_PREFIX, Learner
from chitta.learn.params import BALANCE, spec

TEXTS = (
    "Deploys go through ops/deploy.sh with AWS_PROFILE=staging",
    "The billing service runs on port 8443",
    "Alice prefers tabs over spaces in Python files",
    "Our CI runs on GitHub Actions with a 90 minute limit",
    "The cache TTL for sessions is 300 seconds",
    "parse_tags splits on commas and trims whitespace",
    "Bob moved to the payments team in March",
    "The staging database is refreshed from production every Sunday",
)
QUERIES = ("how do deploys work", "which port does billing use", "what is the cache ttl",
           "where does CI run", "who moved to payments")  # fmt: skip


def fill(chitta: Chitta, realm: str = "work") -> list[str]:
    return [chitta.remember(t, realm=realm).id for t in TEXTS]


def ranking(chitta: Chitta, query: str, **options: object) -> list[tuple[str, float]]:
    result = chitta.recall(query, realm="work", limit=5, **options)
    return [(h.memory.id, round(h.final if h.final is not None else h.score, 9))
            for h in result.hits]  # fmt: skip


def test_a_fresh_store_recalls_exactly_as_the_preset(chitta: Chitta) -> None:
    fill(chitta)
    learned = [ranking(chitta, q) for q in QUERIES]
    chitta.learner = Learner(chitta.store, enabled=False)
    assert [ranking(chitta, q) for q in QUERIES] == learned
    result = chitta.recall(QUERIES[0], realm="work", trace=True)
    assert result.trace["policy"]["learner"] is None  # off


def test_the_trace_says_nothing_was_learned_yet(chitta: Chitta) -> None:
    fill(chitta)
    policy = chitta.recall(QUERIES[0], realm="work", trace=True).trace["policy"]["learner"]
    assert policy["params"] == {} and policy["sampled"] is False and policy["feedback"] == 0


def test_feedback_turns_sampling_on_within_range(chitta: Chitta) -> None:
    fill(chitta)
    first = chitta.recall(QUERIES[0], realm="work")
    chitta.strengthen(first.hits[0].memory.id)
    assert chitta.learner.status("work")["events"] == 1
    policy = chitta.recall(QUERIES[1], realm="work", trace=True).trace["policy"]["learner"]
    assert policy["sampled"] is True and policy["feedback"] == 1
    assert set(policy["params"]) == {"balance", "tag", "lane:ctx", "lane:common", "lane:code",
                                     "lane:when"}  # fmt: skip
    for name, value in policy["params"].items():
        assert spec(name).lo <= value <= spec(name).hi
    assert policy["weights"]["sem"] != policy["weights"]["kw"]  # the draw is in the weights


def test_the_same_question_with_nothing_learned_between_gets_the_same_answer(
    chitta: Chitta,
) -> None:
    fill(chitta)
    chitta.weaken(chitta.recall(QUERIES[0], realm="work").hits[-1].memory.id)
    again = [ranking(chitta, QUERIES[1]) for _ in range(3)]
    assert again[0] == again[1] == again[2]


def test_feedback_on_a_memory_no_recall_returned_credits_nothing(chitta: Chitta) -> None:
    ids = fill(chitta)
    chitta.strengthen(ids[0])
    assert chitta.learner.status("work")["events"] == 0
    assert chitta.store.meta(META_PREFIX + "work") is None


def test_weaken_and_an_answer_that_draws_on_a_memory_are_credited(chitta: Chitta) -> None:
    fill(chitta)
    hits = chitta.recall(QUERIES[0], realm="work", session="s1").hits
    chitta.weaken(hits[-1].memory.id)
    chitta.session_shown("s1", add=[hits[0].memory.id])
    usage = chitta.session_used("s1", "Run ops/deploy.sh with the staging AWS profile.",
                                prompt="How do I deploy?")  # fmt: skip
    assert usage.used == (hits[0].memory.id,)
    assert chitta.learner.status("work")["events"] == 2


def test_the_state_survives_a_restart(settings: Settings, embedder) -> None:
    with Chitta.open(settings, embedder=embedder) as chitta:
        fill(chitta)
        for query in QUERIES * 2:
            hits = chitta.recall(query, realm="work").hits
            chitta.strengthen(hits[0].memory.id)
            chitta.weaken(hits[-1].memory.id)
        before = chitta.learner.status("work")
        answers = [ranking(chitta, q, record=False) for q in QUERIES]
    assert before["events"] == 20
    with Chitta.open(settings, embedder=embedder) as chitta:
        assert chitta.learner.status("work") == before
        assert [ranking(chitta, q, record=False) for q in QUERIES] == answers


def test_learning_off_for_the_process(settings: Settings, embedder) -> None:
    off = replace(settings, recall=RecallSwitches(learn=False))
    with Chitta.open(off, embedder=embedder) as chitta:
        fill(chitta)
        hits = chitta.recall(QUERIES[0], realm="work").hits
        chitta.strengthen(hits[0].memory.id)
        assert chitta.learner.status("work")["learning"] == "off (CHITTA_LEARN=0)"
        assert chitta.learner.status("work")["events"] == 0
        assert chitta.store.meta(META_PREFIX + "work") is None
        assert chitta.recall(QUERIES[0], realm="work").tuning is None


def test_reset_returns_a_realm_to_the_preset(chitta: Chitta) -> None:
    fill(chitta)
    for query in QUERIES:
        chitta.weaken(chitta.recall(query, realm="work").hits[0].memory.id)
    assert chitta.learner.reset("work") == 5
    assert chitta.store.meta(META_PREFIX + "work") is None
    assert chitta.learner.status("work")["events"] == 0
    # The weakened memories score a little lower now; the weights are the preset's again.
    assert chitta.recall(QUERIES[0], realm="work").tuning.values == {}


def test_a_realm_switched_off_stays_off_and_others_learn(settings: Settings, embedder) -> None:
    with Chitta.open(settings, embedder=embedder) as chitta:
        fill(chitta)
        fill(chitta, realm="other")
        chitta.learner.switch("work", on=False)
        chitta.strengthen(chitta.recall(QUERIES[0], realm="work").hits[0].memory.id)
        chitta.strengthen(chitta.recall(QUERIES[0], realm="other").hits[0].memory.id)
    with Chitta.open(settings, embedder=embedder) as chitta:
        assert chitta.learner.status("work")["learning"] == "off (this realm)"
        assert chitta.learner.status("work")["events"] == 0
        assert chitta.learner.status("other")["events"] == 1
        assert chitta.recall(QUERIES[0], realm="work").tuning is None
        chitta.learner.switch("work", on=True)
        assert chitta.recall(QUERIES[0], realm="work").tuning is not None


def test_a_damaged_state_starts_again_from_the_preset(
    chitta: Chitta, caplog: pytest.LogCaptureFixture
) -> None:
    fill(chitta)
    fresh = ranking(chitta, QUERIES[0], record=False)
    chitta.store.set_meta(META_PREFIX + "work", '{"version": 1, "events": "many"')
    chitta.learner = Learner(chitta.store)
    with caplog.at_level(logging.WARNING):
        assert ranking(chitta, QUERIES[0], record=False) == fresh
    assert "unreadable" in caplog.text
    assert TEXTS[0] not in caplog.text


@pytest.mark.parametrize(("good_when_above", "direction"), [(True, 1), (False, -1)])
def test_the_balance_learns_what_the_feedback_rewards(
    chitta: Chitta, good_when_above: bool, direction: int
) -> None:
    """Feedback that rewards recalls drawn with more semantic weight (or less) moves the
    balance's posterior that way: the whole loop of draw, note and credit."""
    fill(chitta)
    template = chitta.recall(QUERIES[0], realm="work")
    learner = Learner(chitta.store)
    # One event first, so that draws start (a fresh realm runs the preset as it is).
    record = replace(template, tuning=learner.tune(
        "work", "hybrid", _config(), "q0", _context(), explore=True)[1])  # fmt: skip
    learner.note("work", "hybrid", record, None, 0)
    learner.credit([template.hits[0].memory.id], 1.0, now=0)
    for i in range(300):
        _, tuning = learner.tune("work", "hybrid", _config(), f"q{i}", _context(), explore=True)
        assert tuning is not None and tuning.sampled
        learner.note("work", "hybrid", replace(template, tuning=tuning), None, i)
        above = tuning.values["balance"] > BALANCE.prior
        good = above if good_when_above else not above
        learner.credit([template.hits[0].memory.id], 1.0 if good else -1.0, now=i)
    mean = learner.status("work")["strategies"]["hybrid"]["params"]["balance"]["mean"]
    assert (mean - BALANCE.prior) * direction > 0.03


def _config():
    from chitta.recall.config import preset

    return preset("hybrid")


def _context():
    return query_context("how do deploys work", ("deploys", "work"), lambda _: 1, 8)
