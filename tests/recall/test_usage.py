"""The test of "draws on": which given memories an answer used (recall/usage.py)."""

from __future__ import annotations

from chitta.recall.usage import drawn_on, draws_on, own_words

DEPLOY = "Deploys go through ops/deploy.sh with AWS_PROFILE=staging"
PORT = "The staging database listens on port 5433, not the default"
TABS = "Alice prefers tabs over spaces in every Python file she reviews"


def test_an_answer_that_repeats_a_memorys_identifiers_draws_on_it() -> None:
    assert draws_on(DEPLOY, "Run ops/deploy.sh with the staging profile.", "How do I deploy?")
    assert draws_on(PORT, "Connect with psql -p 5433; the staging host is db1.", "psql fails")


def test_topic_words_alone_are_not_use() -> None:
    assert not draws_on(DEPLOY, "Deployment is usually scripted.", "How do I deploy?")
    assert not draws_on(PORT, "The database is down; check the default settings.", "db?")


def test_the_prompts_words_do_not_count_as_drawn_from_the_memory() -> None:
    prompt = "Does Alice prefer tabs or spaces in Python files?"
    assert own_words(TABS, prompt) == {"every", "file", "prefers", "reviews"}  # no stems
    assert not draws_on(TABS, "Alice prefers tabs over spaces in Python files.", prompt)
    assert draws_on(TABS, "Tabs: she reviews every Python file with that rule.", "Tabs or not?")


def test_an_answer_with_enough_of_a_memorys_own_words_draws_on_it_without_identifiers() -> None:
    memory = "We chose sqlite over postgres because the laptop install must work offline"
    answer = "Keep sqlite: the install has to work offline on a laptop, postgres cannot."
    assert draws_on(memory, answer, "Which database should the CLI use?")
    assert not draws_on(memory, "", "")
    assert not draws_on("", answer)


def test_drawn_on_keeps_the_order_given() -> None:
    given = [("d", DEPLOY), ("t", TABS), ("p", PORT)]
    answer = "Deploy with ops/deploy.sh against the staging database on port 5433."
    assert drawn_on(given, answer, "How do I deploy?") == ["d", "p"]
