"""The default calibration holds at a user's first steps: a store of one to five memories asked
in other words than the memory's knows it, and still knows nothing of what it never heard
(issue 19, part 5; recall/confidence/calibration.py)."""

import pytest

from chitta.api import Chitta
from chitta.recall.confidence import calibration as calib

#: (realm, its memories, questions it answers in other words, questions off its topic)
STORES = [
    (
        "readme",  # the README's own example: one wisdom memory
        ["We chose SQLite WAL over a custom log because crash recovery comes free"],
        ["why not our own write-ahead log?"],
        ["what is the capital of France?", "how do I bake sourdough bread?"],
    ),
    (
        "lint",
        ["We use ruff for linting and formatting instead of black and flake8"],
        ["which linter do we use?"],
        ["how tall is Mount Everest?"],
    ),
    (
        "api",
        [
            "The API rate limit is 100 requests per minute per token",
            "Deploys to production need two approvals in the release channel",
        ],
        ["how many calls can a client make each minute?", "who has to sign off a deploy?"],
        ["what is the weather like in Paris in spring?"],
    ),
    (
        "home",
        [
            "Maria prefers tea over coffee and takes it without sugar",
            "The spare house key is under the blue flower pot by the back door",
            "Our dog Biscuit is allergic to chicken, so we buy salmon kibble",
        ],
        ["what does Maria like to drink?", "where did we hide the extra key?"],
        ["who won the football world cup in 2018?"],
    ),
    (
        "infra",
        [
            "The staging Postgres listens on port 6543 behind pgbouncer",
            "Kafka retention on the events topic is seven days",
            "Backups run nightly at 2am and are kept for thirty days",
            "The CI runners are arm64 machines, so images must be multi-arch",
            "Alice prefers tabs over spaces in Python code",
        ],
        [
            "how long do we keep events in kafka?",
            "when do the backups happen?",
            "why do our docker images have to support several architectures?",
        ],
        ["what is a good recipe for lasagna?", "how many moons does Jupiter have?"],
    ),
]


@pytest.fixture
def stores(chitta: Chitta) -> Chitta:
    for realm, memories, _, _ in STORES:
        for text in memories:
            chitta.remember(text, realm=realm, kind="wisdom" if realm == "readme" else None)
    return chitta


def _band(chitta: Chitta, query: str, realm: str) -> calib.Confidence:
    result = chitta.recall(query, realm=realm, record=False)
    assert result.confidence is not None
    return result.confidence


@pytest.mark.parametrize(
    ("realm", "query"), [(realm, q) for realm, _, asked, _ in STORES for q in asked]
)
def test_a_small_store_asked_in_other_words_knows(stores: Chitta, realm: str, query: str) -> None:
    sure = _band(stores, query, realm)
    assert sure.band == calib.KNOWN, (query, sure)
    assert sure.source == "default"


@pytest.mark.parametrize(
    ("realm", "query"), [(realm, q) for realm, _, _, off in STORES for q in off]
)
def test_the_same_store_asked_off_its_topic_does_not(
    stores: Chitta, realm: str, query: str
) -> None:
    sure = _band(stores, query, realm)
    assert sure.band == calib.UNKNOWN, (query, sure)


def test_the_same_cosine_means_less_in_a_bigger_store() -> None:
    fit = calib.DEFAULT
    assert fit.spread > 0
    one, many = calib.confidence(0.4, fit, 1), calib.confidence(0.4, fit, 600)
    assert one.calibrated > many.calibrated
    assert calib.confidence(0.4, fit, 0).calibrated == one.calibrated  # no store: no lending
