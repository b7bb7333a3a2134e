"""reconstruct: items quoting the recalled records within a character budget."""

import json

import pytest

from chitta.api import Chitta
from chitta.errors import BadArgument
from chitta.recall.reconstruct import ELLIPSIS, MIN_QUOTE, check_budget
from chitta.wire import reconstruction_to_dict

FACTS = [
    "Kafka retention on the events topic is seven days, set after the March outage review",
    "Kafka retention on the audit topic is thirty days because compliance asked for it",
    "The staging Postgres listens on port 6543 behind pgbouncer in the ops cluster",
]


@pytest.fixture
def ids(chitta: Chitta) -> dict[str, str]:
    return {text: chitta.remember(text, realm="ops", kind="wisdom").id for text in FACTS}


def test_items_quote_whole_records_in_rank_order(chitta: Chitta, ids) -> None:
    rec = chitta.reconstruct("kafka retention", realm="ops", budget=5000)
    recall = chitta.recall("kafka retention", realm="ops")
    assert [item.ref for item in rec.items] == [h.memory.id for h in recall.hits]
    top = rec.items[0]
    assert top.quote in FACTS and not top.truncated and top.kind == "wisdom"
    assert top.realm == "ops" and top.when and "kw" in top.reason
    assert rec.omitted == ()


def test_the_budget_cuts_at_a_word_and_lists_what_is_left_out(chitta: Chitta, ids) -> None:
    first = len(chitta.recall("kafka retention", realm="ops").hits[0].memory.content)
    rec = chitta.reconstruct("kafka retention", realm="ops", budget=first + MIN_QUOTE + 5)
    assert not rec.items[0].truncated
    cut = rec.items[1]
    assert cut.truncated and cut.quote.endswith(ELLIPSIS)
    stored = chitta.store.get(cut.ref).content
    assert stored.startswith(cut.quote.removesuffix(ELLIPSIS))  # the record's own words
    # Cut at a word: the next character of the record is a space (or punctuation before one).
    assert stored[len(cut.quote.removesuffix(ELLIPSIS))] in " ,;:.-"
    assert sum(len(i.quote) for i in rec.items) <= first + MIN_QUOTE + 5
    assert len(rec.omitted) == len(FACTS) - 2
    data = reconstruction_to_dict(rec)
    assert data["used"] <= data["budget"] and data["omitted"] == list(rec.omitted)


def test_a_budget_too_small_for_the_first_record_still_quotes_part_of_it(chitta, ids) -> None:
    rec = chitta.reconstruct("kafka retention", realm="ops", budget=100)
    assert rec.items and sum(len(i.quote) for i in rec.items) <= 100


@pytest.mark.parametrize("budget", [99, 100_001, 1.5, "2000", True])
def test_a_bad_budget_is_refused(chitta: Chitta, budget) -> None:
    with pytest.raises(BadArgument, match="budget"):
        chitta.reconstruct("kafka", realm="ops", budget=budget)
    with pytest.raises(BadArgument):
        check_budget(budget)


def test_a_traced_reconstruct_carries_the_recall_trace_and_its_own_coverage(
    chitta: Chitta, ids
) -> None:
    data = reconstruction_to_dict(
        chitta.reconstruct("kafka retention policy", realm="ops", budget=5000, trace=True)
    )
    assert data["trace"]["recall"]["trace_version"] == 1
    coverage = data["trace"]["coverage"]
    assert coverage["records"] == len(data["items"])
    refs = {ref for refs in coverage["covered_by"] for ref in refs}
    assert refs <= {item["ref"] for item in data["items"]}
    assert "Kafka" not in json.dumps(data["trace"])  # no stored text in the trace
    plain = reconstruction_to_dict(chitta.reconstruct("kafka retention policy", realm="ops"))
    assert "trace" not in plain


def test_a_time_cue_reaches_the_recall_behind_the_items(chitta: Chitta, ids) -> None:
    cue = {"after": "2020-01-01", "before": "2020-01-31", "confidence": "sure"}
    data = reconstruction_to_dict(chitta.reconstruct("kafka retention", realm="ops",
                                                     time_cue=cue))  # fmt: skip
    assert data["time_cue"]["policy"] == "cued-v0.3"
    assert "time_cue" not in reconstruction_to_dict(chitta.reconstruct("kafka", realm="ops"))
    with pytest.raises(BadArgument, match="time_cue.confidence"):
        chitta.reconstruct("kafka", realm="ops", time_cue={"after": "2020-01-01"})
