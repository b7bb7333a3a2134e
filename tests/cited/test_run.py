"""The orchestrator with real in-test sources (listing, failing, slow) and a real chat server."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from chitta.cited.base import Chunk, SourceError
from chitta.cited.run import MAX_QUERY_CHARS, cited_recall
from chitta.cited.settings import CitedSettings, ModelEndpoint, SynthSettings
from chitta.errors import BadArgument

QUERY = "Which database did we choose for billing?"


@dataclass
class ListSource:
    """Returns its texts, best first, as chunks; records what it was asked."""

    name: str
    texts: list[str]
    kind: str = "markdown"
    priority: float = 1.0
    asked: list[tuple[str, int]] = field(default_factory=list)

    def search(self, query: str, limit: int) -> list[Chunk]:
        self.asked.append((query, limit))
        return [
            Chunk(self.name, text, rank, 1.0 / rank, ref=f"{self.name}#{rank}")
            for rank, text in enumerate(self.texts[:limit], start=1)
        ]


@dataclass
class FailingSource:
    name: str = "broken"
    kind: str = "http"
    priority: float = 0.8
    error: Exception = field(default_factory=lambda: SourceError("HTTP Error 404: Not Found"))

    def search(self, query: str, limit: int) -> list[Chunk]:
        raise self.error


@dataclass
class SlowSource:
    """Answers only after ``delay_s`` (or when released), long past the call's timeout."""

    name: str = "slow"
    kind: str = "sqlite_fts"
    priority: float = 0.7
    delay_s: float = 10.0
    release: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)

    def search(self, query: str, limit: int) -> list[Chunk]:
        self.release.wait(self.delay_s)
        self.finished.set()
        return [Chunk(self.name, "We chose Oracle for billing.", 1, 9.0)]


@pytest.fixture
def slow() -> Iterator[SlowSource]:
    source = SlowSource()
    yield source
    source.release.set()


def good_sources() -> list[ListSource]:
    return [
        ListSource(
            "memory", ["We chose Postgres for billing. The team agreed.", "Lunch is at noon."]
        ),
        ListSource(
            "store",
            ["Billing runs on one host.", "We chose Postgres for billing. The team agreed."],
            kind="chitta",
            priority=0.9,
        ),
    ]


def test_answers_from_all_sources_with_the_seeds_structure() -> None:
    moment = datetime(2026, 6, 22, 22, 4, 16, 500000, tzinfo=UTC)
    sources = good_sources()
    result = cited_recall(sources, f"  {QUERY}\n", CitedSettings(), now=lambda: moment)
    assert result.query == QUERY
    assert [s.asked for s in sources] == [[(QUERY, 5)], [(QUERY, 5)]]
    assert not result.abstained and result.abstention_reason is None
    assert result.answer_mode == "extractive" and result.model is None
    assert result.synthesized_answer == (
        "We chose Postgres for billing. [1] Billing runs on one host. [3]"
    )
    # The shared passage is fused (1/61 + 0.9/62); memory's rank 2 (1/62) beats store's
    # rank 1 (0.9/61) by priority.
    assert [(c.citation_id, c.source, c.rank) for c in result.citations] == [
        (1, "memory", 1),
        (2, "memory", 2),
        (3, "store", 1),
    ]
    assert result.citations[0].raw_rrf == pytest.approx(1 / 61 + 0.9 / 62)
    assert {name: s.count for name, s in result.sources.items()} == {"memory": 2, "store": 2}
    assert len(result.chunks) == 4
    assert result.errors == ()
    assert result.timestamp == "2026-06-22T22:04:16Z"
    assert set(result.timing_ms) == {"sources", "merge", "synth", "total"}
    assert result.timing_ms["total"] >= result.timing_ms["sources"] >= 0
    out = json.loads(json.dumps(result.as_dict()))
    for key in (
        "query",
        "synthesized_answer",
        "abstained",
        "abstention_reason",
        "citations",
        "sources",
        "chunks",
        "errors",
        "timestamp",
    ):
        assert key in out
    assert out["sources"]["memory"] == {"count": 2, "max_score": 1.0, "avg_score": 0.75}


def test_default_timestamp_is_utc_with_z() -> None:
    result = cited_recall(good_sources(), QUERY, CitedSettings())
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", result.timestamp)


def test_limit_is_passed_to_every_source() -> None:
    sources = good_sources()
    result = cited_recall(sources, QUERY, CitedSettings(limit=7), limit=1)
    assert [s.asked[0][1] for s in sources] == [1, 1]
    assert len(result.chunks) == 2


def test_failing_and_slow_sources_are_errors_not_failures(slow: SlowSource) -> None:
    sources = [*good_sources(), FailingSource(), slow]
    settings = CitedSettings(source_timeout_s=0.5)
    started = time.monotonic()
    result = cited_recall(sources, QUERY, settings)
    elapsed = time.monotonic() - started
    assert elapsed < 2.0  # about the timeout, not the slow source's 10 s
    assert not slow.finished.is_set()  # the straggler was not waited for
    assert result.errors == (
        "broken: HTTP Error 404: Not Found",
        "slow: timed out after 0.5s",
    )
    assert {c.source for c in result.citations} == {"memory", "store"}
    assert "Oracle" not in (result.synthesized_answer or "")
    assert result.sources["broken"].count == 0 and result.sources["slow"].count == 0
    assert not result.abstained
    # Its late answer is ignored, and it does not disturb a later call.
    slow.release.set()
    assert slow.finished.wait(2)
    again = cited_recall(good_sources(), QUERY, settings)
    assert again.errors == ()


def test_an_adapter_bug_is_reported_as_an_error() -> None:
    sources = [*good_sources(), FailingSource("buggy", error=KeyError("score"))]
    result = cited_recall(sources, QUERY, CitedSettings())
    assert result.errors == ("buggy: KeyError: 'score'",)
    assert not result.abstained


def test_an_adapter_bugs_message_is_in_the_answer_but_never_logged_above_debug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An unexpected exception may quote anything (a memory, a header value)."""
    secret = RuntimeError("could not parse 'We chose Postgres because Bob said so'")
    sources = [*good_sources(), FailingSource("buggy", error=secret)]
    with caplog.at_level(logging.INFO, logger="chitta.cited.run"):
        result = cited_recall(sources, QUERY, CitedSettings())
    assert result.errors == (f"buggy: RuntimeError: {secret}",)
    infos = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert "cited recall: source buggy raised RuntimeError" in infos
    assert not any("Bob said so" in message for message in infos)


def test_abstains_before_synthesis_with_citations_filled(chat: ChatState) -> None:
    sources = [
        ListSource("memory", ["We chose Postgres for billing.", "Billing runs daily."]),
        FailingSource(),
    ]
    settings = CitedSettings(synth=SynthSettings(models=(endpoint(chat),)))
    result = cited_recall(sources, QUERY, settings)
    assert result.abstained
    assert result.abstention_reason == (
        "Insufficient sources (1 < 2). Only one source returned results."
    )
    assert result.answer_mode == "none"
    assert result.synthesized_answer is None and result.model is None
    assert [c.citation_id for c in result.citations] == [1, 2]
    assert result.errors == ("broken: HTTP Error 404: Not Found",)
    assert chat.requests == []  # the model was never asked


def test_no_sources_or_no_results_abstain() -> None:
    result = cited_recall([], QUERY, CitedSettings())
    assert result.abstention_reason == "No results from any memory store."
    assert result.citations == () and result.sources == {}
    result = cited_recall([ListSource("a", []), ListSource("b", [])], QUERY, CitedSettings())
    assert result.abstention_reason == "No results from any memory store."
    assert {n: s.count for n, s in result.sources.items()} == {"a": 0, "b": 0}


def test_extractive_abstention_keeps_the_citations() -> None:
    sources = [ListSource("a", ["Lunch is at noon."]), ListSource("b", ["Tea at four."])]
    result = cited_recall(sources, QUERY, CitedSettings())
    assert result.abstained and result.answer_mode == "extractive"
    assert result.abstention_reason == "No cited sentence shares a word with the question."
    assert len(result.citations) == 2


@pytest.mark.parametrize("query", ["", "   \n\t", "x" * (MAX_QUERY_CHARS + 1)])
def test_bad_queries_are_refused(query: str) -> None:
    with pytest.raises(BadArgument):
        cited_recall(good_sources(), query, CitedSettings())


def test_longest_query_is_accepted() -> None:
    result = cited_recall(good_sources(), "billing " + "x" * (MAX_QUERY_CHARS - 8), CitedSettings())
    assert result.query.startswith("billing")


@pytest.mark.parametrize("limit", [0, -1, 101, 2.5, True])
def test_bad_limits_are_refused(limit) -> None:
    with pytest.raises(BadArgument):
        cited_recall(good_sources(), QUERY, CitedSettings(), limit=limit)


def test_repeated_source_names_are_refused() -> None:
    with pytest.raises(BadArgument, match="repeated: a"):
        cited_recall([ListSource("a", ["x"]), ListSource("a", ["y"])], QUERY, CitedSettings())


# --- with a model --------------------------------------------------------------------------


#: The state of tests/conftest.py's chat server (a conftest's class cannot be imported here).
ChatState = Any


@pytest.fixture
def chat(chat_server):
    """The chat model on loopback (tests/conftest.py ``chat_server``)."""
    return chat_server


def endpoint(chat: ChatState) -> ModelEndpoint:
    return ModelEndpoint("openai", chat.url + "/v1", "local-chat", timeout_s=5)


def test_model_answer_and_model_abstention(chat: ChatState) -> None:
    settings = CitedSettings(synth=SynthSettings(models=(endpoint(chat),)))
    chat.chat("Postgres [1], on one host [2].")
    result = cited_recall(good_sources(), QUERY, settings)
    assert (result.answer_mode, result.model) == ("model", "openai:local-chat")
    assert result.synthesized_answer == "Postgres [1], on one host [2]."
    assert (
        "[1] (memory, score 1.00) We chose Postgres"
        in chat.requests[0][2]["messages"][0]["content"]
    )
    chat.chat("NO_ANSWER_AVAILABLE: the notes disagree")
    result = cited_recall(good_sources(), QUERY, settings)
    assert result.abstained and result.abstention_reason == "the notes disagree"
    assert (result.answer_mode, result.model, result.synthesized_answer) == (
        "model",
        "openai:local-chat",
        None,
    )
    assert len(result.citations) == 3
