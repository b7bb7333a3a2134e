"""The answer's JSON both ways: as_dict gives the seed's structure, from_dict reads it back
(as the CLI does with a daemon's reply)."""

from __future__ import annotations

import json
import re

import pytest

from chitta.cited.base import Chunk, Citation, CitedAnswer, SourceStats
from chitta.errors import BadArgument

SEED_KEYS = {"query", "synthesized_answer", "abstained", "abstention_reason", "citations",
             "sources", "chunks", "errors", "timestamp"}  # fmt: skip


def answer(**changes: object) -> CitedAnswer:
    chunks = (
        Chunk("notes", "## Database\nWe chose Postgres for billing.", 1, 3.25,
              "MEMORY.md#Database", {"file": "/tmp/MEMORY.md", "line": 3}),
        Chunk("memory", "Billing runs on one host.", 1, 0.61, "01JQ4Z8X2M7V",
              {"realm": "demo", "band": "KNOWN", "lanes": "sem+kw"}),
        Chunk("memory", "We chose Postgres for billing.", 2, 0.5),
    )  # fmt: skip
    citations = (
        Citation(1, "notes", "markdown", chunks[0].text, 1.0, 1 / 61 + 1 / 62, 3.25, 1,
                 "MEMORY.md#Database", "0123456789ab"),
        Citation(2, "memory", "chitta", chunks[1].text, 0.49, 1 / 61, 0.61, 1,
                 "01JQ4Z8X2M7V", "ba9876543210"),
    )  # fmt: skip
    base = CitedAnswer(
        query="Why Postgres?",
        synthesized_answer="Postgres was chosen for billing [1]; it runs on one host [2].",
        abstained=False,
        abstention_reason=None,
        citations=citations,
        sources={
            "notes": SourceStats(1, 3.25, 3.25),
            "memory": SourceStats(2, 0.61, 0.555),
            "web": SourceStats(0, 0.0, 0.0),
        },  # fmt: skip
        chunks=chunks,
        errors=("web: timed out after 5s",),
        timestamp="2026-06-22T22:04:16Z",
        answer_mode="model",
        model="openai:chat-1",
        timing_ms={"sources": 12.5, "merge": 0.1, "synth": 830.0, "total": 842.6},
    )
    return CitedAnswer(**{**{f: getattr(base, f) for f in base.__slots__}, **changes})


def over_the_wire(value: CitedAnswer) -> dict:
    """as_dict through JSON text, as a daemon's reply arrives."""
    return json.loads(json.dumps(value.as_dict()))


def test_as_dict_has_the_seeds_keys_and_ours() -> None:
    data = over_the_wire(answer())
    assert set(data) == SEED_KEYS | {"answer_mode", "model", "timing_ms"}
    assert data["sources"]["memory"] == {"count": 2, "max_score": 0.61, "avg_score": 0.555}
    assert data["citations"][0]["citation_id"] == 1
    assert data["errors"] == ["web: timed out after 5s"]
    # The seed names a citation's source source_type: there, beside ours.
    for citation in data["citations"]:
        assert citation["source_type"] == citation["source"]
    assert list(data["citations"][0])[:4] == ["citation_id", "source", "source_kind", "source_type"]


@pytest.mark.parametrize(
    "changes",
    [
        {},
        # An abstention keeps its citations; an answer before synthesis has no model.
        {
            "synthesized_answer": None,
            "abstained": True,
            "answer_mode": "none",
            "model": None,
            "abstention_reason": "Insufficient sources (1 < 2). Only one source returned results.",
        },
        {"citations": (), "chunks": (), "sources": {}, "errors": (), "timing_ms": {}},
    ],  # fmt: skip
)
def test_from_dict_reads_back_what_as_dict_gave(changes: dict) -> None:
    original = answer(**changes)
    again = CitedAnswer.from_dict(over_the_wire(original))
    assert again == original
    assert isinstance(again.citations, tuple) and isinstance(again.chunks, tuple)
    assert all(isinstance(s, SourceStats) for s in again.sources.values())
    assert list(again.sources) == list(original.sources)  # the sources' order is kept


def test_from_dict_ignores_the_replys_ok_and_unknown_keys() -> None:
    data = {"ok": True, **over_the_wire(answer()), "added_later": [1, 2]}
    data["citations"][0]["new_field"] = "x"
    assert CitedAnswer.from_dict(data) == answer()


def test_from_dict_fills_fields_that_have_defaults() -> None:
    data = over_the_wire(answer())
    del data["model"], data["timing_ms"], data["chunks"][0]["meta"], data["chunks"][0]["ref"]
    again = CitedAnswer.from_dict(data)
    assert again.model is None and again.timing_ms == {}
    assert again.chunks[0].ref is None and again.chunks[0].meta == {}


@pytest.mark.parametrize(
    ("damage", "named"),
    [
        (lambda d: d.pop("query"), "'query'"),
        (lambda d: d["citations"][1].pop("content_hash"), "citations[1] has no 'content_hash'"),
        (lambda d: d.__setitem__("citations", "none"), "citations must be a list"),
        (lambda d: d.__setitem__("sources", []), "sources must be an object"),
        (lambda d: d["sources"].__setitem__("web", 3), "sources['web'] must be an object"),
        (lambda d: d["chunks"].__setitem__(0, None), "chunks[0] must be an object"),
    ],
)
def test_from_dict_names_what_is_missing_or_malformed(damage, named: str) -> None:
    data = over_the_wire(answer())
    damage(data)
    with pytest.raises(BadArgument, match=re.escape(named)):
        CitedAnswer.from_dict(data)


def test_from_dict_refuses_what_is_not_an_object() -> None:
    with pytest.raises(BadArgument, match="the answer must be an object"):
        CitedAnswer.from_dict(["not", "an", "answer"])  # type: ignore[arg-type]
