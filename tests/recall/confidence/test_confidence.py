"""Every recall reports how sure the store is that it knows the answer
(recall/confidence/calibration.py)."""

import json

import pytest

from chitta.api import CALIBRATION_KEY, Chitta
from chitta.recall.confidence import calibration as calib
from chitta.wire import result_to_dict

FACTS = [
    "The staging Postgres listens on port 6543 behind pgbouncer",
    "Kafka retention on the events topic is seven days",
    "Alice prefers tabs over spaces in Python code",
    "We chose SQLite WAL over a custom log because crash recovery comes free",
]


@pytest.fixture
def filled(chitta: Chitta) -> Chitta:
    for fact in FACTS:
        chitta.remember(fact, realm="infra")
    return chitta


def test_an_on_topic_query_is_known_and_an_off_topic_one_unknown(filled: Chitta) -> None:
    known = filled.recall("which port does the staging postgres use?", realm="infra")
    unknown = filled.recall("what is the capital of Mongolia?", realm="infra")
    assert known.confidence is not None and unknown.confidence is not None
    assert known.confidence.band == calib.KNOWN
    assert unknown.confidence.band == calib.UNKNOWN
    assert known.confidence.raw > unknown.confidence.raw
    assert known.confidence.source == "default"


def test_the_maximum_relevance_is_the_whole_querys_best_cosine(filled: Chitta) -> None:
    query = "which port does the staging postgres use?"
    result = filled.recall(query, realm="infra", limit=2)
    q = filled.embedder.embed([query]).vectors[0]
    vectors = filled.store.vectors_for([m.id for m in filled.store.iter_memories(realm="infra")])
    assert result.confidence is not None
    assert result.confidence.raw == pytest.approx(max(float(v @ q) for v in vectors.values()))


def test_keyword_recall_has_no_confidence_and_an_empty_realm_is_unknown(filled: Chitta) -> None:
    assert filled.recall("kafka retention", realm="infra", strategy="keyword").confidence is None
    empty = filled.recall("kafka retention", realm="nowhere")
    assert empty.confidence is not None and empty.confidence.raw == -1.0
    assert empty.confidence.band == calib.UNKNOWN


def test_the_reply_carries_the_band_the_turn_and_each_hits_shared_words(filled: Chitta) -> None:
    data = result_to_dict(filled.recall("kafka retention days?", realm="infra", limit=2))
    assert data["confidence"]["band"] == "KNOWN" and data["confidence"]["words"]
    assert data["turn"] == {"distinctive": ["kafka", "retention", "days"], "terse_negation": False}
    top = data["hits"][0]
    assert top["content"] == FACTS[1] and top["shared"] == ["kafka", "retention", "days"]
    assert 0 < top["kw_norm"] <= 100


def test_a_stored_fit_is_used_and_survives_reopening(filled: Chitta, settings) -> None:
    fit = calib.Calibration(a=1.0, b=-10.0, threshold=0.5, source="golden file g.jsonl")
    filled.set_calibration(fit)
    result = filled.recall("which port does the staging postgres use?", realm="infra")
    assert result.confidence is not None and result.confidence.band == calib.UNKNOWN
    assert result.confidence.source == "golden file g.jsonl"
    filled.close()
    with Chitta.open(settings, embedder=filled.embedder) as again:
        assert again.calibration == fit
        again.set_calibration(None)
        assert again.calibration == calib.DEFAULT


def test_an_unreadable_stored_fit_falls_back_to_the_default_and_says_why(filled: Chitta) -> None:
    filled.store.set_meta(CALIBRATION_KEY, json.dumps({"a": "many"}))
    fit = filled.calibration
    assert (fit.a, fit.b, fit.threshold) == (
        calib.DEFAULT.a,
        calib.DEFAULT.b,
        calib.DEFAULT.threshold,
    )
    assert fit.source.startswith("default (stored fit unusable:")
    assert filled.recall("kafka", realm="infra").confidence is not None
    assert filled.store.meta(CALIBRATION_KEY) == json.dumps({"a": "many"})  # left as it was


def test_shared_words_match_as_the_keyword_lane_matches(chitta: Chitta) -> None:
    chitta.remember("We deployed the database migrations on Tuesday night", realm="ops")
    chitta.remember("Le café du coin ouvre à sept heures du matin", realm="ops")
    for query, want in (("deploying migration", ["deploying", "migration"]), ("cafe", ["cafe"])):
        data = result_to_dict(chitta.recall(query, realm="ops", limit=1, strategy="keyword"))
        assert data["hits"][0]["shared"] == want, query  # stems and accents, as FTS5 does
        assert data["hits"][0]["kw_norm"] > 20


def test_another_realms_memories_never_make_this_one_look_knowing(filled: Chitta) -> None:
    filled.remember("Apple pie: two teaspoons of cinnamon per kilo of apples", realm="kitchen")
    query = "how much cinnamon goes in the apple pie recipe"
    alone = filled.recall(query, realm="infra")
    across = filled.recall(query, realm="infra", cross_realm=True)
    assert any(h.memory.realm == "kitchen" for h in across.hits)
    assert alone.confidence is not None and across.confidence is not None
    assert across.confidence.raw == pytest.approx(alone.confidence.raw)
    assert across.confidence.band == calib.UNKNOWN


def test_the_maximum_relevance_does_not_depend_on_the_limit(filled: Chitta) -> None:
    query = "which port does the staging postgres use?"
    raws = {filled.recall(query, realm="infra", limit=n).confidence.raw for n in (1, 2, 10)}
    assert len(raws) == 1


def test_a_stored_fit_of_another_model_or_wrong_types_is_not_used(filled: Chitta, settings) -> None:
    other = calib.Calibration(a=1.0, b=-10.0, threshold=0.5, source="golden file g.jsonl",
                              model="some-other-model")  # fmt: skip
    filled.set_calibration(other)
    assert filled.calibration.source.startswith("default (stored fit unusable: it was fitted")
    bad = json.loads(calib.DEFAULT.to_json()) | {"source": None}
    filled.store.set_meta(CALIBRATION_KEY, json.dumps(bad))
    filled.close()
    with Chitta.open(settings, embedder=filled.embedder) as again:
        assert "must be text" in again.calibration.source
        assert again.recall("kafka", realm="infra").confidence is not None


def test_forgotten_rows_still_in_the_index_do_not_break_the_bm25_scale(chitta: Chitta) -> None:
    texts = ["Kafka brokers restarted cleanly after the patch",
             "The kafka consumer lag alert fired twice on Sunday",
             "Billing moved its kafka topics to the new cluster"]  # fmt: skip
    ids = [chitta.remember(text, realm="k").id for text in texts]  # fmt: skip
    for mid in ids[1:]:
        chitta.forget(mid)
    data = result_to_dict(chitta.recall("kafka", realm="k"))
    assert [h["id"] for h in data["hits"]] == ids[:1] and 0 <= data["hits"][0]["kw_norm"] <= 100


def test_the_confidence_reads_how_much_of_the_question_the_first_hits_hold(filled: Chitta) -> None:
    whole = filled.recall("kafka retention days?", realm="infra")
    part = filled.recall("kafka retention on the zookeeper cluster?", realm="infra")
    for result in (whole, part):
        assert result.confidence is not None and result.turn is not None
        held = [result.shared[h.memory.id] for h in result.hits]
        assert result.confidence.found == calib.found_share(result.turn.distinctive, held)
        assert result.confidence.held == calib.words_held(result.turn.distinctive, held)
        size = filled.store.term_stats().size("infra")
        conf = result.confidence
        again = calib.confidence(conf.raw, calib.DEFAULT, size, conf.found, conf.held)
        assert result.confidence.calibrated == again.calibrated
    assert whole.confidence.found == 0.8  # all three words: (3 + 1) / (3 + 2)
    assert whole.confidence.held == 3  # all three in the first hit
    assert "zookeeper" in part.turn.distinctive and part.confidence.found < 0.8
    # It travels with the reply, and an older daemon's reply (none) reads as no evidence.
    data = result_to_dict(part)
    assert data["confidence"]["found"] == round(part.confidence.found, 4)
    from chitta.wire import confidence_from_dict

    assert confidence_from_dict(data["confidence"]).found == data["confidence"]["found"]
    assert confidence_from_dict(data["confidence"]).held == part.confidence.held
    data["confidence"].pop("found")
    data["confidence"].pop("held")
    assert confidence_from_dict(data["confidence"]).found == 0.5
    assert confidence_from_dict(data["confidence"]).held == 0
