"""Synthesis against real HTTP servers on 127.0.0.1 (OpenAI-compatible chat and Ollama
generate), the fallback chain, and the extractive answer."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import pytest

from chitta.cited.abstain import EXTRACTIVE_NO_MATCH
from chitta.cited.base import Citation
from chitta.cited.extractive import content_words, extractive_answer, sentences
from chitta.cited.merge import content_hash
from chitta.cited.settings import ModelEndpoint, SynthSettings
from chitta.cited.synth import (
    CONTEXT_CHARS,
    build_prompt,
    check_citations,
    context_line,
    synthesize,
)

QUERY = "Why did we choose Postgres for the billing service?"


def citation(n: int, text: str, source: str = "notes", score: float = 1.0) -> Citation:
    return Citation(
        n, source, "markdown", text, score, score / 61, 0.5, n, None, content_hash(text)
    )


CITATIONS = (
    citation(1, "We chose Postgres for billing because of its JSON support. Lunch was late."),
    citation(2, "The billing service runs on a single host.", source="store", score=0.8),
    citation(3, "Redis caches sessions.", source="store", score=0.5),
)


# --- the servers ---------------------------------------------------------------------------


#: The state of tests/conftest.py's chat server (a conftest's class cannot be imported here).
ServerState = Any


@pytest.fixture
def server(chat_server):
    """The chat model on loopback (tests/conftest.py ``chat_server``)."""
    return chat_server


def openai(state: ServerState, **kw) -> ModelEndpoint:
    return ModelEndpoint(
        "openai", state.url + "/v1", "chat-1", timeout_s=kw.pop("timeout_s", 5), **kw
    )


def ollama(state: ServerState, **kw) -> ModelEndpoint:
    return ModelEndpoint("ollama", state.url, "qwen2.5:7b", timeout_s=kw.pop("timeout_s", 5), **kw)


def run(*models: ModelEndpoint, citations=CITATIONS, env=None):
    return synthesize(QUERY, citations, SynthSettings(models=models), env=env or {})


# --- the prompt ----------------------------------------------------------------------------


def test_prompt_keeps_the_rules_query_and_numbered_context() -> None:
    prompt = build_prompt(QUERY, CITATIONS)
    assert '"NO_ANSWER_AVAILABLE: <reason>"' in prompt
    for rule in ("1. Be concise", "2. Cite sources", "3. Abstain if unsure", "4. Do not hallu"):
        assert rule in prompt
    assert f"Query: {QUERY}" in prompt
    assert "[1] (notes, score 1.00) We chose Postgres" in prompt
    assert "[2] (store, score 0.80) The billing service" in prompt
    assert prompt.rstrip().endswith("Answer:")


def test_context_line_is_one_line_and_truncated() -> None:
    long = citation(4, "word\n" * 1000)
    line = context_line(long)
    assert "\n" not in line
    assert line.startswith("[4] (notes, score 1.00) word word")
    assert len(line) <= len("[4] (notes, score 1.00) ") + CONTEXT_CHARS
    assert line.endswith("…")


# --- the OpenAI-compatible step --------------------------------------------------------------


def test_openai_answer_with_citations(server: ServerState) -> None:
    server.chat("We chose Postgres for its JSON support [1]. It runs on one host [2].")
    result = run(openai(server))
    assert result.mode == "model"
    assert result.model == "openai:chat-1"
    assert result.answer == "We chose Postgres for its JSON support [1]. It runs on one host [2]."
    assert result.abstention_reason is None
    assert result.errors == ()
    path, auth, body = server.requests[0]
    assert path == "/v1/chat/completions"
    assert auth is None
    assert body["model"] == "chat-1"
    assert body["temperature"] == 0
    assert body["messages"] == [{"role": "user", "content": build_prompt(QUERY, CITATIONS)}]


def test_openai_url_may_name_the_full_endpoint(server: ServerState) -> None:
    server.chat("Postgres [1].")
    endpoint = ModelEndpoint("openai", server.url + "/v1/chat/completions/", "chat-1")
    assert run(endpoint).answer == "Postgres [1]."
    assert server.requests[0][0] == "/v1/chat/completions"


def test_bearer_token_from_the_named_environment_variable(
    server: ServerState, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.chat("Postgres [1].")
    monkeypatch.setenv("CITED_TEST_API_KEY", "sk-test-123")
    endpoint = openai(server, api_key_env="CITED_TEST_API_KEY")
    result = synthesize(QUERY, CITATIONS, SynthSettings(models=(endpoint,)))
    assert result.answer == "Postgres [1]."
    assert server.requests[0][1] == "Bearer sk-test-123"


def test_unset_api_key_variable_skips_the_step(
    server: ServerState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CITED_TEST_API_KEY", raising=False)
    endpoint = openai(server, api_key_env="CITED_TEST_API_KEY")
    result = synthesize(QUERY, CITATIONS, SynthSettings(models=(endpoint,)))
    assert result.errors == (
        "model openai:chat-1: environment variable CITED_TEST_API_KEY is not set",
    )
    assert result.mode == "extractive"
    assert server.requests == []


def test_openai_abstains_with_its_reason(server: ServerState) -> None:
    server.chat("NO_ANSWER_AVAILABLE: the notes do not say why Postgres was chosen")
    result = run(openai(server), ollama(server))
    assert result.answer is None
    assert result.abstention_reason == "the notes do not say why Postgres was chosen"
    assert (result.mode, result.model) == ("model", "openai:chat-1")
    assert len(server.requests) == 1  # an abstention is an answer: the chain stops


def test_openai_abstains_without_a_reason(server: ServerState) -> None:
    server.chat("NO_ANSWER_AVAILABLE:")
    assert run(openai(server)).abstention_reason == "no reason given"


def test_http_500_falls_back_to_extractive(server: ServerState) -> None:
    server.raw("/v1/chat/completions", b'{"error": "model overloaded"}', status=500)
    result = run(openai(server))
    assert len(result.errors) == 1
    assert result.errors[0].startswith("model openai:chat-1: ")
    assert "answered HTTP 500" in result.errors[0]
    assert "model overloaded" in result.errors[0]
    assert result.mode == "extractive"
    assert result.model is None
    assert result.answer is not None and "[1]" in result.answer


def test_error_excerpt_never_quotes_the_memories(server: ServerState) -> None:
    echo = json.dumps({"error": f"bad input: {CITATIONS[0].content}"}).encode()
    server.raw("/v1/chat/completions", echo, status=400)
    [error] = run(openai(server)).errors
    assert "HTTP 400" in error
    assert "JSON support" not in error
    assert "<input text>" in error


def test_timeout_falls_back_quickly(server: ServerState) -> None:
    server.chat("too late [1].")
    server.replies["/v1/chat/completions"].delay_s = 10
    started = time.monotonic()
    result = run(openai(server, timeout_s=0.3))
    assert time.monotonic() - started < 3
    [error] = result.errors
    assert error.startswith("model openai:chat-1: ")
    assert "timeout" in error
    assert result.mode == "extractive"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"<html>Bad gateway</html>", "answered invalid JSON: <html>Bad gateway</html>"),
        (b"", "answered invalid JSON: (empty body)"),
        (b'{"id": "x", "object": "chat.completion"}', "answered JSON without 'choices'"),
        (b'{"choices": []}', "answered JSON without 'choices'"),
        (b'{"choices": [{"text": "legacy"}]}', "without a message content text"),
        (b"[1, 2]", "answered JSON without 'choices' (a JSON list)"),
        (b'{"choices": [{"message": {"content": "  "}}]}', "answered an empty text"),
        (b'{"choices": [{"message": {"content": null}}]}', "without a message content text"),
    ],
)
def test_garbage_is_an_error_and_the_chain_goes_on(
    server: ServerState, body: bytes, expected: str
) -> None:
    server.raw("/v1/chat/completions", body)
    server.generate("Postgres was chosen for JSON support [1].")
    result = run(openai(server), ollama(server))
    [error] = result.errors
    assert error.startswith("model openai:chat-1: ")
    assert expected in error
    assert (result.mode, result.model) == ("model", "ollama:qwen2.5:7b")
    assert result.answer == "Postgres was chosen for JSON support [1]."


def test_a_trickling_model_is_cut_off_at_its_timeout(server: ServerState) -> None:
    """timeout_s bounds the whole exchange: a model sending a byte now and then would
    otherwise hold the call (and the daemon's worker) for as long as it likes."""
    server.chat("Postgres [1].")
    server.replies["/v1/chat/completions"].trickle = True
    started = time.monotonic()
    result = run(openai(server, timeout_s=0.5))
    assert time.monotonic() - started < 2.0  # the trickle lasts 5 s
    [error] = result.errors
    endpoint = f"{server.url}/v1/chat/completions"
    assert error == f"model openai:chat-1: {endpoint}: no answer within 0.5 s (timeout)"
    assert result.mode == "extractive"


@pytest.mark.parametrize("token", ["sk-secret\r\nX-Evil: 1", "sk-secret\nmore", "sk-sécret"])
def test_an_api_key_that_cannot_be_sent_skips_the_step_unquoted(
    server: ServerState, token: str
) -> None:
    """http.client refuses such a value with an error quoting it (out of the whole call, into
    the daemon's log): the step fails instead, naming the variable, never the value."""
    server.chat("Postgres [1].")
    result = run(openai(server, api_key_env="CITED_TEST_API_KEY"),
                 env={"CITED_TEST_API_KEY": token})  # fmt: skip
    [error] = result.errors
    assert error.startswith("model openai:chat-1: environment variable CITED_TEST_API_KEY holds")
    assert "secret" not in error and "sécret" not in error
    assert result.mode == "extractive" and server.requests == []


def test_a_model_on_loopback_is_never_asked_through_a_proxy(
    server: ServerState, chat_servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A proxy in the environment must not receive the prompt (memories) meant for a model
    on this machine, nor its bearer token."""
    seen = chat_servers()  # answers 404 to everything, and records it
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    for name in ("http_proxy", "HTTP_PROXY"):
        monkeypatch.setenv(name, seen.url)
    server.chat("Postgres [1].")
    result = run(openai(server))
    assert seen.requests == []
    assert (result.mode, result.answer, result.errors) == ("model", "Postgres [1].", ())


def test_connection_refused_is_an_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = ModelEndpoint("openai", f"http://127.0.0.1:{port}/v1", "chat-1", timeout_s=2)
    [error] = run(endpoint).errors
    assert error.startswith("model openai:chat-1: ")
    assert "connection refused" in error


# --- the Ollama step and the chain ---------------------------------------------------------


def test_ollama_generate(server: ServerState) -> None:
    server.generate("Postgres, for its JSON support [1].")
    result = run(ollama(server))
    assert (result.mode, result.model) == ("model", "ollama:qwen2.5:7b")
    assert result.answer == "Postgres, for its JSON support [1]."
    path, _, body = server.requests[0]
    assert path == "/api/generate"
    assert body == {
        "model": "qwen2.5:7b",
        "prompt": build_prompt(QUERY, CITATIONS),
        "stream": False,
    }


def test_ollama_garbage_is_an_error(server: ServerState) -> None:
    server.raw("/api/generate", b'{"model": "qwen2.5:7b", "done": true}')
    [error] = run(ollama(server)).errors
    assert error.startswith("model ollama:qwen2.5:7b: answered JSON without a 'response' text")


def test_chain_falls_from_openai_to_ollama_to_extractive(server: ServerState) -> None:
    server.raw("/v1/chat/completions", b"{}", status=500)
    server.raw("/api/generate", b"not json")
    result = run(openai(server), ollama(server))
    assert [e.split(": ")[0] for e in result.errors] == [
        "model openai:chat-1",
        "model ollama:qwen2.5:7b",
    ]
    assert "HTTP 500" in result.errors[0]
    assert "invalid JSON" in result.errors[1]
    assert [p for p, _, _ in server.requests] == ["/v1/chat/completions", "/api/generate"]
    assert result.mode == "extractive"
    assert (
        result.answer == "We chose Postgres for billing because of its JSON support. [1] "
        "The billing service runs on a single host. [2]"
    )


def test_chain_stops_at_ollama_when_it_answers(server: ServerState) -> None:
    server.raw("/v1/chat/completions", b"{}", status=503)
    server.generate("Postgres [1].")
    result = run(openai(server), ollama(server))
    assert (result.model, result.answer) == ("ollama:qwen2.5:7b", "Postgres [1].")
    assert len(result.errors) == 1 and "HTTP 503" in result.errors[0]


def test_unknown_model_kind_is_an_error() -> None:
    result = run(ModelEndpoint("claude", "http://127.0.0.1:9", "x"))
    assert result.errors == ("model claude:x: unknown model kind 'claude' (openai or ollama)",)
    assert result.mode == "extractive"


# --- answers citing missing ids ------------------------------------------------------------


def test_citations_of_missing_ids_are_removed_with_a_note(server: ServerState) -> None:
    server.chat("Postgres for JSON [1][9]. It runs on one host [2, 7]. Also [8].")
    result = run(openai(server))
    assert result.answer == "Postgres for JSON [1]. It runs on one host [2]. Also."
    assert result.errors == (
        "model openai:chat-1: cited [9], [7], [8], not among the 3 citations; removed",
    )
    assert result.mode == "model"


def test_an_answer_citing_nothing_is_kept_with_a_note(server: ServerState) -> None:
    server.chat("Postgres was chosen for JSON support.")
    result = run(openai(server))
    assert result.answer == "Postgres was chosen for JSON support."
    assert result.errors == ("model openai:chat-1: the answer cites none of the citations",)


def test_an_answer_of_only_missing_citations_is_unusable(server: ServerState) -> None:
    server.chat("[12]")
    server.generate("Postgres [1].")
    result = run(openai(server), ollama(server))
    assert result.model == "ollama:qwen2.5:7b"
    assert result.errors == (
        "model openai:chat-1: answered only citations of ids not in the context",
    )


def test_a_marker_of_thousands_of_digits_is_text_not_a_crash(server: ServerState) -> None:
    """int() of over 4,300 digits raises ValueError: a garbage reply must not fail the call."""
    huge = "[" + "9" * 5000 + "]"
    server.chat(f"Postgres [1]. {huge}")
    result = run(openai(server))
    assert (result.mode, result.answer) == ("model", f"Postgres [1]. {huge}")


def test_check_citations_on_known_ids() -> None:
    assert check_citations("A [1], B [2, 3].", {1, 2, 3}) == ("A [1], B [2, 3].", [])


# --- the extractive answer -----------------------------------------------------------------


def test_sentences_split_lines_marks_and_sentence_ends() -> None:
    text = "# Decisions\n- We chose Postgres. It has JSON!\n* Redis? Maybe.\n\n1. Ship it\n---"
    assert sentences(text) == [
        "Decisions",
        "We chose Postgres.",
        "It has JSON!",
        "Redis?",
        "Maybe.",
        "Ship it",
    ]


def test_content_words_drop_stop_words_and_fold_plurals() -> None:
    assert content_words("Why did we choose the databases?") == {"choose", "database"}
    assert content_words("the class of glass") == {"class", "glass"}


def test_extractive_answer_takes_matching_sentences_with_ids() -> None:
    answer = extractive_answer(QUERY, CITATIONS, 3)
    # "Lunch was late." and the Redis chunk share no content word with the question.
    assert answer == (
        "We chose Postgres for billing because of its JSON support. [1] "
        "The billing service runs on a single host. [2]"
    )


def test_extractive_prefers_rare_words_and_keeps_citation_order() -> None:
    cites = (
        citation(1, "Billing runs nightly. Billing is slow."),
        citation(2, "Billing moved to Postgres last spring."),
        citation(3, "Billing owners rotate weekly."),
    )
    # "postgres" is in one citation only: its sentence scores highest; one more slot is a tie
    # among "billing" sentences, which goes to the best citation's first sentence.
    answer = extractive_answer("postgres billing", cites, 2)
    assert answer == "Billing runs nightly. [1] Billing moved to Postgres last spring. [2]"


def test_extractive_takes_at_most_two_sentences_per_citation() -> None:
    cites = (citation(1, "Postgres one. Postgres two. Postgres three. Postgres four."),)
    answer = extractive_answer("postgres", cites, 5)
    assert answer == "Postgres one. [1] Postgres two. [1]"


def test_extractive_skips_repeated_sentences_and_clips_long_ones() -> None:
    cites = (
        citation(1, "Postgres is the store."),
        citation(2, "Postgres is the store. " + "postgres " * 200),
    )
    answer = extractive_answer("postgres", cites, 3)
    assert answer is not None
    assert answer.count("Postgres is the store.") == 1
    assert answer.endswith("… [2]")


def test_extractive_only_reads_the_top_five_citations() -> None:
    cites = tuple(citation(i, f"Filler {i}.") for i in range(1, 6)) + (
        citation(6, "Postgres is here."),
    )
    assert extractive_answer("postgres", cites, 3) is None


def test_extractive_abstains_when_nothing_matches() -> None:
    result = run(citations=(citation(1, "Redis caches sessions."), citation(2, "Lunch at noon.")))
    assert result == type(result)(None, EXTRACTIVE_NO_MATCH, "extractive", None, ())
    assert EXTRACTIVE_NO_MATCH == "No cited sentence shares a word with the question."
    # A question of stop words only has nothing to match either.
    assert extractive_answer("what is it?", CITATIONS, 3) is None
