"""Reading a query: common words leave the keyword terms and the embedded text; a question
about the agent's own words is recognized."""

import pytest

from chitta.recall.query import MIN_REALM_SIZE, asks_for_agent_words, plan_query

DF = {"caroline": 90, "support": 3, "group": 5, "melanie": 60}


def _df(word: str) -> int:
    return DF.get(word, 0)


def test_common_words_leave_both_lanes() -> None:
    plan = plan_query("When did Caroline's support group meet?", _df, 100, 0.1)
    assert plan.common == ("caroline",)
    assert plan.terms == ("support", "group", "meet")
    assert plan.embed_text == "When did support group meet?"


def test_a_query_of_only_common_words_is_left_whole() -> None:
    plan = plan_query("Caroline and Melanie", _df, 100, 0.1)
    assert plan.common == () and plan.embed_text == "Caroline and Melanie"
    assert plan.terms == ("caroline", "melanie")


def test_small_realms_and_switched_off() -> None:
    small = plan_query("When did Caroline go?", _df, MIN_REALM_SIZE - 1, 0.1)
    assert small.common == () and "caroline" in small.terms
    off = plan_query("When did Caroline go to the group?", _df, 100, None)
    assert off.common == () and off.embed_text == "When did Caroline go to the group?"


def test_the_threshold_is_a_fraction_of_the_realm() -> None:
    assert plan_query("Melanie support", _df, 1000, 0.1).common == ()  # 60 of 1000
    assert plan_query("Melanie support", _df, 500, 0.1).common == ("melanie",)  # 60 of 500


@pytest.mark.parametrize(
    "question",
    [
        "Can you remind me what sealant you recommended for the pallet table?",
        "You mentioned that companies use two-factor authentication; which ones?",
        "What was the move you made after 27. Kg2?",
        "Which sealant did you recommend for my pallet wood table?",
        "what the assistant suggested for the flaky retry test",  # an agent's own query
        "I remember you provided a list of prompt parameters. What was the 27th?",
        "What did your answer say about the retry limit?",
        "Back to our previous chat about the rotation sheet: who works Sunday?",
        "Which dessert shop did we talk about? The one we discussed for Orlando.",
    ],
)
def test_a_question_about_the_agents_own_words_is_recognized(question: str) -> None:
    assert asks_for_agent_words(question)


@pytest.mark.parametrize(
    "question",
    [
        "Can you suggest some activities for my commute?",  # asks for something new
        "Can you recommend cultural events around me this weekend?",
        "Where did I complete my bachelor's degree?",
        "What did Caroline say about the adoption agency?",
        "Did I tell you about my trip to Japan?",  # the user's words, not the agent's
        "Did you know that the museum is closed on Mondays?",
    ],
)
def test_other_questions_are_not(question: str) -> None:
    assert not asks_for_agent_words(question)
