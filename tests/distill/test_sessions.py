"""Model distillation of finished sessions against a real model server on loopback
(distill/sessions.py): answering well, garbage, timing out, failing, abstaining; the circuit
breaker; realms that opt out; credentials never sent; the fragments a memory replaces."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from chitta.api import Chitta
from chitta.cited.settings import ModelEndpoint
from chitta.distill.model import WITHHELD
from chitta.distill.sessions import (
    MAX_ATTEMPTS,
    TAG,
    Distiller,
    session_key,
    waiting,
)
from chitta.distill.settings import DistillSettings
from chitta.store.records import Source

USER, ASSISTANT = Source("s1", role="user"), Source("s1", role="assistant")
TURNS = [
    ("No, use pnpm, not npm for this repository.", USER),
    ("Understood: I will run pnpm install instead of npm install.", ASSISTANT),
    ("I prefer tabs over spaces in every Python file.", USER),
]
CORRECTION = {"kind": "correction", "content": "Use pnpm, not npm, in this repository.",
              "turns": [1, 2], "confidence": 0.9}  # fmt: skip
PREFERENCE = {"kind": "preference", "content": "The user prefers tabs over spaces in Python "
              "files.", "turns": [3], "confidence": 0.8}  # fmt: skip


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def model(chat_server):
    """The chat server answering ``{"memories": [...]}`` as a chat completion."""

    def answer(*memories: dict) -> None:
        chat_server.chat(json.dumps({"memories": list(memories)}))

    answer.server = chat_server
    return answer


def configure(chitta: Chitta, url: str, **how) -> Distiller:
    endpoint = ModelEndpoint("openai", url + "/v1", "tiny", timeout_s=how.pop("timeout_s", 5))
    clock = how.pop("clock", Clock())
    chitta.distill_settings = DistillSettings(models=(endpoint,), idle_s=0, **how)
    return Distiller(chitta.distill_settings, env={}, clock=clock)


def session(chitta: Chitta, realm: str = "w", fragments: list | None = None) -> list[str]:
    """The turns stored, their ids; ``fragments`` gets what the rules cut from them."""
    done = [chitta.remember(text, kind="episode", source=source, realm=realm)
            for text, source in TURNS]  # fmt: skip
    if fragments is not None:
        fragments.extend(i for d in done for i in d.distilled)
    return [d.id for d in done]


def prompts(server) -> list[str]:
    return [body["messages"][0]["content"] for _, _, body in server.requests]


def test_a_finished_session_becomes_curated_memories_that_replace_its_fragments(
    chitta: Chitta, model
) -> None:
    distiller = configure(chitta, model.server.url)
    cut: list[str] = []
    ids = session(chitta, fragments=cut)
    fragment = next(chitta.get(i) for i in cut if "pnpm" in chitta.get(i).content)
    assert [r.session for r in waiting(chitta)] == ["s1"]
    model(CORRECTION, PREFERENCE)

    counts = distiller.step(chitta, chitta.clock())

    assert counts["sessions"] == 1 and counts["sent_turns"] == 3 and counts["stored"] == 2
    assert "[1] user: No, use pnpm" in prompts(model.server)[0]
    stored = {m.kind.value: m for m in chitta.store.iter_memories(realm="w") if TAG in m.tags}
    assert stored["correction"].source == Source(
        session="s1", via="distiller:model/openai:tiny/prompt-1", turns=(ids[0], ids[1])
    )
    assert stored["preference"].confidence.mu == pytest.approx(0.8, abs=0.01)
    # The verbatim fragment of turn 1 says what the curated correction says: replaced.
    assert chitta.get(fragment.id).superseded_by == stored["correction"].id
    assert counts["superseded"] >= 1
    chain = chitta.provenance(stored["correction"].id)
    assert chain.source_kind == "distiller" and chain.trust == 0.9
    assert [t.id for t in chain.turns] == [ids[0], ids[1]]
    assert fragment.id in {r.id for r in chain.replaced}
    assert waiting(chitta) == []
    assert distiller.step(chitta, chitta.clock())["sessions"] == 0  # nothing sent again


def test_a_session_still_going_is_not_sent(chitta: Chitta, model) -> None:
    distiller = configure(chitta, model.server.url)
    chitta.distill_settings = replace(chitta.distill_settings, idle_s=300)
    distiller.settings = chitta.distill_settings
    session(chitta)
    model(CORRECTION)
    assert distiller.step(chitta, chitta.clock())["sessions"] == 0
    assert model.server.requests == []
    assert distiller.step(chitta, chitta.clock() + 301_000)["stored"] == 1


def test_turns_stored_later_are_sent_in_a_batch_of_their_own(chitta: Chitta, model) -> None:
    distiller = configure(chitta, model.server.url)
    session(chitta)
    model()
    assert distiller.step(chitta, chitta.clock())["abstained"] == 1
    chitta.remember("Never push straight to main; open a pull request.", kind="episode",
                    source=USER, realm="w")  # fmt: skip
    distiller.step(chitta, chitta.clock())
    later = prompts(model.server)[1]
    assert "[1] user: Never push straight to main" in later and "pnpm" not in later


def test_garbage_is_counted_and_retried_then_passed_over(chitta: Chitta, model) -> None:
    distiller = configure(chitta, model.server.url)
    session(chitta)
    model.server.chat("Sure! The user likes pnpm and tabs.")
    for attempt in range(1, MAX_ATTEMPTS + 1):
        counts = distiller.step(chitta, chitta.clock())
        assert counts["rejected_malformed"] == 1 and counts["stored"] == 0
        assert (waiting(chitta) != []) is (attempt < MAX_ATTEMPTS)
    assert counts["gave_up"] == 1
    # The breaker saw answers, not failures: it stays closed.
    assert distiller.breaker.stats()["state"] == "closed"


def test_invalid_entries_are_rejected_one_by_one(chitta: Chitta, model) -> None:
    distiller = configure(chitta, model.server.url)
    session(chitta)
    model(
        CORRECTION,
        {**PREFERENCE, "kind": "fact"},
        {**PREFERENCE, "turns": [9]},
        {**PREFERENCE, "confidence": 0.1},
        {**PREFERENCE, "content": "The CI token is ghp_1234567890abcdefghijABCDEFGHIJ."},
    )
    counts = distiller.step(chitta, chitta.clock())
    assert counts["stored"] == 1
    assert {k: v for k, v in counts.items() if k.startswith("rejected")} == {
        "rejected_unknown_kind": 1, "rejected_unknown_turn": 1, "rejected_unsure": 1,
        "rejected_secret": 1}  # fmt: skip
    assert not any("ghp_" in m.content for m in chitta.store.iter_memories(realm="w"))


def test_an_endpoint_failing_opens_the_breaker_and_the_session_waits(chitta: Chitta, model) -> None:
    clock = Clock()
    distiller = configure(chitta, model.server.url, clock=clock)
    session(chitta)
    model.server.raw("/v1/chat/completions", b'{"error": "overloaded"}', status=503)
    for _ in range(3):
        assert distiller.step(chitta, chitta.clock())["failed"] == 1
    assert distiller.breaker.stats()["state"] == "open"
    sent = len(model.server.requests)
    assert distiller.step(chitta, chitta.clock())["breaker_open"] == 1
    assert len(model.server.requests) == sent  # refused without a call
    assert [r.session for r in waiting(chitta)] == ["s1"]  # nothing lost
    clock.now += 61  # the cooldown is over: one probe, which succeeds and closes it
    model(CORRECTION)
    assert distiller.step(chitta, chitta.clock())["stored"] == 1
    assert distiller.breaker.stats()["state"] == "closed" and waiting(chitta) == []


def test_a_model_that_does_not_answer_in_time_is_a_failure(chitta: Chitta, model) -> None:
    distiller = configure(chitta, model.server.url, timeout_s=0.3)
    session(chitta)
    model.server.raw("/v1/chat/completions", b"{}", delay_s=5)
    counts = distiller.step(chitta, chitta.clock())
    assert counts["failed"] == 1 and counts["stored"] == 0
    assert "no answer within 0.3 s" in distiller.breaker.stats()["last_error"]
    assert waiting(chitta) != []


def test_the_chain_goes_on_to_the_next_model_and_ollama_answers(chitta: Chitta, model) -> None:
    distiller = configure(chitta, model.server.url)
    second = ModelEndpoint("ollama", model.server.url, "llama", timeout_s=5)
    chitta.distill_settings = replace(
        chitta.distill_settings, models=(*chitta.distill_settings.models, second)
    )
    distiller.settings = chitta.distill_settings
    session(chitta)
    model.server.raw("/v1/chat/completions", b"oops", status=500)
    model.server.generate(json.dumps({"memories": [PREFERENCE]}))
    assert distiller.step(chitta, chitta.clock())["stored"] == 1
    (memory,) = [m for m in chitta.store.iter_memories(realm="w") if TAG in m.tags]
    assert memory.source.via == "distiller:model/ollama:llama/prompt-1"


def test_a_realm_that_opted_out_is_neither_distilled_nor_sent(chitta: Chitta, model) -> None:
    distiller = configure(chitta, model.server.url, realms_off=frozenset({"private"}))
    cut: list[str] = []
    ids = session(chitta, realm="private", fragments=cut)
    assert cut == []  # the model-free rules are off for it too
    assert waiting(chitta) == [] and chitta.store.meta(session_key("private", "s1")) is None
    model(CORRECTION)
    assert distiller.step(chitta, chitta.clock())["sessions"] == 0
    assert model.server.requests == [] and len(ids) == 3


def test_a_turn_with_a_credential_is_never_sent(chitta: Chitta, model) -> None:
    distiller = configure(chitta, model.server.url)
    chitta.remember("Deploy with the key AKIAIOSFODNN7EXAMPLE and secret "
                    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY please.", kind="episode",
                    source=USER, realm="w")  # fmt: skip
    session(chitta)
    model()
    distiller.step(chitta, chitta.clock())
    (prompt,) = prompts(model.server)
    assert "AKIA" not in prompt and "wJalr" not in prompt and WITHHELD in prompt


def test_without_a_model_nothing_waits_and_nothing_is_sent(chitta: Chitta, model) -> None:
    session(chitta)
    assert waiting(chitta) == []
    assert not any(k.startswith("distill:") for k in chitta.store.meta_items())


def test_a_long_session_is_sent_in_batches_within_max_chars(chitta: Chitta, model) -> None:
    distiller = configure(chitta, model.server.url, max_chars=3000)
    for i in range(12):
        chitta.remember(f"Turn {i}: " + "we talked about the release checklist " * 8,
                        kind="episode", source=USER, realm="w")  # fmt: skip
    model()
    while distiller.step(chitta, chitta.clock())["sessions"]:
        pass
    sent = prompts(model.server)
    assert len(sent) > 1 and all(len(p) <= 3000 for p in sent)
    numbers = [int(n) for p in sent for n in re.findall(r"^\[(\d+)\]", p, re.M)]
    assert sum(1 for n in numbers if n == 1) == len(sent)  # each batch numbered from 1
    assert len(numbers) == 12  # every turn sent once


def test_an_error_reply_that_echoes_the_conversation_is_not_quoted(chitta: Chitta, model) -> None:
    distiller = configure(chitta, model.server.url)
    session(chitta)
    echo = json.dumps({"error": f"cannot parse: {TURNS[2][0]}"}).encode()
    model.server.raw("/v1/chat/completions", echo, status=400)
    assert distiller.step(chitta, chitta.clock())["failed"] == 1
    said = distiller.breaker.stats()["last_error"]
    assert "400" in said and "tabs over spaces" not in said
