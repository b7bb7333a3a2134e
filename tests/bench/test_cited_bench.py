"""The cited recall benchmark on a small LoCoMo-format file the test writes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from chitta.bench import cited as cb
from chitta.bench.locomo import load
from chitta.bench.runner import realm_for
from chitta.bench.systems.chitta import ChittaStore
from chitta.cited.abstain import EXTRACTIVE_NO_MATCH, NO_RESULTS
from chitta.cli import main
from chitta.embed.cache import CachedEmbedder

# Four conversations that share no content word, so a question about one names nothing the
# others hold: asked of another store it is unanswerable.
QUESTIONS = {
    "conv-a": [
        ("What greyhound did {a} adopt?", 4),
        ("When does {b}'s pottery class meet?", 2),
        ("Where did {a} hike in August?", 4),
        ("What is {b}'s new job?", 1),
    ],
    "conv-b": [
        ("What instrument is {a} learning at the conservatory?", 4),
        ("What chess tournament did {b}'s team win?", 2),
        ("What did {a} plant on the balcony?", 4),
        ("What does {b}'s vintage motorcycle need?", 3),
    ],
    "conv-c": [
        ("What marathon did {a} finish?", 4),
        ("What bakery closed near {b}?", 3),
        ("What is {a} knitting?", 4),
        ("What novel is {b}'s book club reading?", 1),
    ],
}


def _probe(
    answerable: bool,
    *,
    category: int = 4,
    abstained: bool = False,
    reason: str | None = None,
    cited: bool = False,
    band: str = "KNOWN",
    ms: float = 10.0,
) -> cb.CitedProbe:
    return cb.CitedProbe(
        realm="locomo-conv-a", conversation="conv-a", index=0, category=category,
        answerable=answerable, abstained=abstained, reason=reason, band=band,
        citations=3 if cited else 0, gold_recalled=cited, gold_returned=cited,
        gold_cited=cited, gold_quoted=cited and not abstained, errors=0, ms=ms,
        stage_ms={"sources": ms - 1, "total": ms},
    )  # fmt: skip


def test_an_abstention_counts_as_a_miss_even_when_it_cites_the_gold_turn() -> None:
    probes = [
        _probe(True, cited=True, ms=10),  # answered, cites gold: a hit
        _probe(True, cited=True, abstained=True, reason="insufficient_evidence", ms=20),
        _probe(True, cited=False, category=2, ms=30),  # answered, no gold cited: a miss
        _probe(True, cited=True, category=2, ms=40),
        _probe(False, abstained=True, reason="no_results", band="UNKNOWN", ms=50),
        _probe(False, abstained=True, reason="no_results", band="UNKNOWN", ms=60),
        _probe(False, abstained=False, band="UNKNOWN", ms=70),
        _probe(False, abstained=True, reason="extractive_no_match", ms=80),
    ]
    f = cb.figures(probes)
    assert f["questions"] == {"answerable": 4, "unanswerable": 4}
    ans = f["answerable"]
    assert ans["gold_cited"] == 0.5  # 2 of 4: the abstention that cites gold is a miss
    assert ans["gold_cited_answered"] == round(2 / 3, 4) and ans["answered"] == 3
    assert ans["funnel"]["cited"] == 0.75  # cited, abstention aside
    assert ans["abstained"]["rate"] == 0.25
    assert ans["abstained"]["by_reason"] == {"insufficient_evidence": 1}
    un = f["unanswerable"]
    assert un["rate"] == 0.75 and un["count"] == 3
    assert un["by_reason"] == {"no_results": 2, "extractive_no_match": 1}
    assert un["by_band"] == {"KNOWN": {"n": 1, "abstained": 1},
                             "UNKNOWN": {"n": 3, "abstained": 2}}  # fmt: skip
    assert f["by_category"]["single-hop"]["gold_cited"] == 0.5  # the hit and the abstention
    assert f["by_category"]["temporal"]["gold_cited"] == 0.5
    assert f["latency_ms"]["all"]["p50"] == 45.0 and f["latency_ms"]["answerable"]["p50"] == 25.0
    assert f["latency_ms"]["all"]["stages_p50"] == {"sources": 44.0, "total": 45.0}


def test_reasons_are_classed_and_quoted_ids_read() -> None:
    assert cb.reason_code(None) is None
    assert cb.reason_code(NO_RESULTS) == "no_results"
    assert cb.reason_code("Insufficient evidence (1 < 2 chunks).") == "insufficient_evidence"
    assert cb.reason_code("Insufficient sources (0 < 1). ...") == "insufficient_sources"
    assert cb.reason_code("Low relevance scores (top RRF score: 0.00 < 0.3).") == "low_relevance"
    assert cb.reason_code(EXTRACTIVE_NO_MATCH) == "extractive_no_match"
    assert cb.reason_code("the context names nobody called Cosimo") == "model"
    assert cb.quoted_ids("He adopted Pepper [2]. It was spring [1, 3].") == {1, 2, 3}
    assert cb.quoted_ids(None) == set()


def test_on_a_real_store_gold_is_cited_and_the_unanswerable_set_abstains(
    tiny_locomo, tmp_path: Path, embedder: CachedEmbedder
) -> None:
    dataset = load(tiny_locomo.write(tmp_path / "tiny.json", QUESTIONS))
    store = ChittaStore(tmp_path / "store", embedder)
    try:
        for conversation in dataset.conversations:
            store.load(realm_for(conversation.sample_id), conversation)
        chitta = store.open()
        items = cb.question_set(dataset, ["conv-a", "conv-b"], chitta.store.term_stats().df)
        # Only the stores asked; each gets its own 4 questions and the other two
        # conversations' 8 (none names anything it holds).
        assert {i.realm for i in items} == {"locomo-conv-a", "locomo-conv-b"}
        assert sum(i.answerable for i in items) == 8 and len(items) == 24
        probes = [cb.probe(chitta, item, store.turn_of) for item in items]
    finally:
        store.close()
    answerable = [p for p in probes if p.answerable]
    unanswerable = [p for p in probes if not p.answerable]
    # One source configured: the min_sources rule is capped at it, so answers are possible.
    assert sum(not p.abstained for p in answerable) >= 6
    assert sum(p.gold_cited and not p.abstained for p in answerable) >= 6
    hit = next(p for p in answerable if p.conversation == "conv-a" and p.index == 0)
    assert hit.gold_recalled and hit.gold_returned and hit.gold_cited and hit.gold_quoted
    assert all(p.abstained and p.reason is not None for p in unanswerable)
    assert all(not (p.gold_cited or p.gold_recalled) for p in unanswerable)  # no gold to find
    assert all(p.ms > 0 and p.stage_ms["total"] > 0 and p.errors == 0 for p in probes)
    f = cb.figures(probes)
    assert f["unanswerable"]["rate"] == 1.0
    assert f["answerable"]["gold_cited"] == round(
        sum(p.gold_cited and not p.abstained for p in answerable) / 8, 4
    )


def test_the_command_writes_ids_codes_and_numbers_only(tiny_locomo, tmp_path: Path) -> None:
    data = tiny_locomo.write(tmp_path / "tiny.json", QUESTIONS)
    out = tmp_path / "results" / "cited.json"
    docs = tmp_path / "benchmarks.md"
    docs.write_text("# Benchmarks\n", encoding="utf-8")
    result = CliRunner().invoke(
        main,
        ["bench", "cited", "--data", str(data), "--conversations", "conv-a,conv-c",
         "--per-store", "3", "--out", str(out), "--append-docs", str(docs)],
        env={"CHITTA_HOME": str(tmp_path / "home")},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    record = json.loads(text)
    assert record["benchmark"] == "cited"
    assert record["command"].startswith("chitta bench cited --data")
    assert record["settings"]["conversations"] == ["conv-a", "conv-c"]
    assert record["settings"]["limit"] == 5 and record["settings"]["model"] is None
    assert record["figures"]["questions"] == {"answerable": 8, "unanswerable": 6}
    assert len(record["probes"]) == 14
    assert {p["realm"] for p in record["probes"]} == {"locomo-conv-a", "locomo-conv-c"}
    assert record["figures"]["latency_ms"]["all"]["p50"] > 0
    # No stored text, no question text: ids, codes and numbers only.
    for _, _, lines in tiny_locomo.people.values():
        for line in lines:
            assert line not in text
    assert "greyhound" not in text.lower()
    table = out.with_suffix(".md").read_text(encoding="utf-8")
    assert "| answerable | 8 |" in table and "| unanswerable | 6 |" in table
    assert table in docs.read_text(encoding="utf-8")
    bad = CliRunner().invoke(main, ["bench", "cited", "--data", str(data), "--limit", "0",
                                    "--out", str(tmp_path / "x.json")])  # fmt: skip
    assert bad.exit_code != 0 and "--limit" in bad.output
