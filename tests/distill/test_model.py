"""Model distillation's prompt and the strict reading of a reply (distill/model.py)."""

from __future__ import annotations

import json

import pytest

from chitta.distill.model import (
    KINDS,
    MAX_MEMORIES,
    PROMPT_VERSION,
    WITHHELD,
    build_prompt,
    read_reply,
)
from chitta.store.kinds import Kind
from chitta.store.records import Source

TURNS = ["No, use pnpm, not npm for this repository.",
         "Understood: I will use pnpm from now on.",
         "I prefer tabs over spaces in every Python file."]  # fmt: skip


@pytest.fixture
def turns(make_memory):
    roles = ["user", "assistant", "user"]
    return [make_memory(text, kind=Kind.EPISODE, source=Source("s1", role=role))
            for text, role in zip(TURNS, roles, strict=True)]  # fmt: skip


def reply(*memories: dict) -> str:
    return json.dumps({"memories": list(memories)})


def entry(**fields) -> dict:
    return {"kind": "preference", "content": "The user prefers tabs over spaces in Python.",
            "turns": [3], "confidence": 0.9, **fields}  # fmt: skip


def test_the_prompt_numbers_the_turns_with_their_speaker_and_names_every_kind(turns) -> None:
    prompt = build_prompt(turns)
    assert "[1] user: No, use pnpm, not npm for this repository." in prompt
    assert "[2] assistant: Understood" in prompt
    assert all(f"- {kind}:" in prompt for kind in KINDS)
    assert '{"memories": []}' in prompt and PROMPT_VERSION == "prompt-1"


def test_a_turn_that_looks_like_it_holds_a_credential_is_withheld(make_memory) -> None:
    secret = make_memory("Use the token ghp_1234567890abcdefghijABCDEFGHIJ for the bot.",
                         kind=Kind.EPISODE, source=Source("s1", role="user"))  # fmt: skip
    prompt = build_prompt([secret])
    assert "ghp_" not in prompt and f"[1] user: {WITHHELD}" in prompt


def test_a_good_reply_gives_its_memories_with_the_turn_ids_they_cite(turns) -> None:
    text = reply(entry(), entry(kind="correction", content="Use pnpm, not npm, here.",
                                turns=[2, 1, 1]))  # fmt: skip
    reading = read_reply(text, turns, 0.5)
    assert not reading.rejected and not reading.abstained
    assert [(c.kind, c.turns) for c in reading.kept] == [
        (Kind.PREFERENCE, (turns[2].id,)),
        (Kind.CORRECTION, (turns[0].id, turns[1].id)),
    ]


@pytest.mark.parametrize(
    "text",
    ["Sure! Here is what I found.", "", '{"memory": []}', "[1, 2]", '{"memories": {}}',
     '{"memories": [' * 5000],
)  # fmt: skip
def test_a_reply_that_is_not_the_json_asked_for_is_rejected_whole(text: str, turns) -> None:
    reading = read_reply(text, turns, 0.5)
    assert reading.kept == () and reading.rejected == {"malformed": 1}


def test_json_in_a_fence_or_in_prose_is_read(turns) -> None:
    assert len(read_reply(f"```json\n{reply(entry())}\n```", turns, 0.5).kept) == 1
    assert len(read_reply(f"Here you go: {reply(entry())} Hope it helps.", turns, 0.5).kept) == 1


def test_an_empty_list_is_an_abstention(turns) -> None:
    reading = read_reply(reply(), turns, 0.5)
    assert reading.abstained and reading.kept == () and not reading.rejected


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ({"kind": "fact"}, "unknown_kind"),
        ({"kind": "episode"}, "unknown_kind"),
        ({"kind": None}, "unknown_kind"),
        ({"turns": [4]}, "unknown_turn"),
        ({"turns": [0]}, "unknown_turn"),
        ({"turns": []}, "unknown_turn"),
        ({"turns": ["3"]}, "unknown_turn"),
        ({"turns": [True]}, "unknown_turn"),
        ({"turns": "3"}, "invalid"),
        ({"content": ""}, "invalid"),
        ({"content": 7}, "invalid"),
        ({"content": "x" * 100_000}, "invalid"),
        ({"confidence": 1.5}, "invalid"),
        ({"confidence": "high"}, "invalid"),
        ({"confidence": True}, "invalid"),
        ({"confidence": 0.2}, "unsure"),
        ({"content": "The deploy password is hunter2-Xy9!kQ for staging."}, "secret"),
    ],
)  # fmt: skip
def test_each_bad_entry_is_rejected_and_counted_by_why(bad: dict, why: str, turns) -> None:
    reading = read_reply(reply(entry(**bad), entry()), turns, 0.5)
    assert reading.rejected == {why: 1}
    assert len(reading.kept) == 1  # the good one beside it is kept


def test_entries_past_the_most_read_are_counted_invalid(turns) -> None:
    reading = read_reply(reply(*[entry()] * (MAX_MEMORIES + 3)), turns, 0.5)
    assert len(reading.kept) == MAX_MEMORIES and reading.rejected == {"invalid": 3}
