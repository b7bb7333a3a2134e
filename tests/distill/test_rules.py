"""The model-free distiller's rules (distill/rules.py) on the kind of text agent sessions
hold: what each rule picks, and what it must leave alone."""

from __future__ import annotations

import pytest

from chitta.distill.rules import classify, fragments, sentences

USER_TURN = """No, use pnpm, not npm - the lockfile is pnpm-lock.yaml.
Also, I prefer tabs over spaces in every Python file.
We decided to keep SQLite over Postgres because the whole store must fit in one file.
Can you run the tests again?"""

ASSISTANT_TURN = """The build failed with ModuleNotFoundError; I fixed it by pinning numpy to 1.26.
**Avoid overposting:** Don't flood your audience with too many posts.
Always warm up with light cardio before your runs.
We switched to Python 3.11 for the CI job since 3.12 breaks the onnxruntime wheel.
Since you mentioned Hadestown, I'll suggest a few shows with similar themes."""


@pytest.mark.parametrize(
    ("sentence", "label"),
    [
        ("No, use pnpm, not npm - the lockfile is pnpm-lock.yaml.", "correction"),
        ("Actually, it's 5433 for the staging database.", "correction"),
        ("Don't use print for logging in this repository.", "correction"),
        ("Please don't rewrite the migrations that already shipped.", "correction"),
        ("Use ruff instead of flake8 for the lint step.", "correction"),
        ("That's wrong, the deploy script lives in ops/.", "correction"),
        ("Stop adding a comment to every line.", "correction"),
        ("Never commit the generated lockfile by hand.", "correction"),
        ("I prefer tabs over spaces in every Python file.", "preference"),
        ("I'd rather have short commit messages in the imperative.", "preference"),
        ("My favorite editor is Helix these days.", "preference"),
        ("I'm a big fan of property-based tests.", "preference"),
        ("I always run the linter before I commit.", "preference"),
        ("I don't like long functions with flags.", "preference"),
        ("We decided to keep SQLite because the store must fit in one file.", "decision"),
        ("We went with usearch for the vector index after the benchmark.", "decision"),
        ("I'll use Starlette rather than Flask for the small HTTP API.", "decision"),
        ("The import failed because the file was UTF-16; converting it fixed it.", "failure_fix"),
    ],
)  # fmt: skip
def test_what_the_user_says_is_picked(sentence: str, label: str) -> None:
    assert classify(sentence, "user") == label


@pytest.mark.parametrize(
    "sentence",
    [
        "Can you run the tests again?",  # a question
        "Do you prefer tabs or spaces?",
        "If you prefer a physical calendar, print the template.",  # a conditional
        "Don't worry, the tests will catch it.",  # encouragement, not a correction
        "Never give up on your dreams!",
        "I love that idea, let's do it.",  # a reaction to something at hand
        "I love them so much.",
        "I got it because it reminded me of something I love.",
        "I never realized how much work the parser was.",
        "I always feel calmer after a walk.",  # a feeling, not a habit
        "I'm thinking of switching to Postgres next year.",  # not decided
        "No, I haven't read them yet but I'll check them out.",  # an answer about oneself
        "Actually, I just took my family camping in the mountains.",
        "No, thanks, I'm good for now.",
        "Never tried it, but it's supposed to be awesome.",  # the subject left out
        "Don't let the bumps in the road bring you down.",
        "Stop for lunch at Cal Pep, a popular tapas bar.",
        "Nope, not a new game.",
        "No problem, always here to have your back.",
        "Always here to help.",
        "No, no pets right now.",
        "No wonder you're a fan!",
        "Never appears with the cursed items.",
        "Don't quit, failures lead you closer to success.",
        "Don't know what I'd do without them.",
        "No, that's all for now.",
        "The weather was lovely on the hike yesterday.",
        "My password is hunter2hunter2, please keep it safe.",  # a credential
        "I prefer the key sk-proj-abcdefghijklmnopqrstuvwx for staging.",
    ],
)  # fmt: skip
def test_what_is_not_a_fragment(sentence: str) -> None:
    assert classify(sentence, "user") is None


def test_advice_from_the_assistant_is_not_the_users_preference_or_correction() -> None:
    assert classify("Always warm up with light cardio before your runs.", "assistant") is None
    assert classify("Don't flood your audience with too many posts.", "assistant") is None
    assert classify("Always warm up with light cardio before your runs.", "user") == "preference"


def test_a_turn_gives_its_fragments_in_order_each_once() -> None:
    found = fragments(USER_TURN + "\n" + USER_TURN, "user")
    assert [(f.label, f.text[:20]) for f in found] == [
        ("correction", "No, use pnpm, not np"),
        ("preference", "Also, I prefer tabs "),
        ("decision", "We decided to keep S"),
    ]
    said = fragments(ASSISTANT_TURN, "assistant")
    assert [f.label for f in said] == ["failure_fix", "decision"]


def test_sentences_strip_list_markers_and_skip_short_or_long_ones() -> None:
    text = "- I prefer tabs over spaces.\n* ok\n2. We decided to ship on Friday because QA is done."
    assert sentences(text) == ["I prefer tabs over spaces.",
                               "We decided to ship on Friday because QA is done."]  # fmt: skip
    assert sentences("x" * 301) == []


@pytest.mark.parametrize(
    "sentence",
    [
        "I like the ideas you listed, especially the garland.",  # a reaction to a proposal
        "I like the draft, but it is a bit long.",
        "I'll also consider a spreadsheet, since it is more flexible.",  # still weighing
        "I picked up a cheap kettle at the market.",  # bought, not chose
        "I went with my friend who teaches chemistry.",  # company, not a choice
    ],
)  # fmt: skip
def test_reactions_and_plans_not_yet_made_are_not_fragments(sentence: str) -> None:
    assert classify(sentence, "user") is None
