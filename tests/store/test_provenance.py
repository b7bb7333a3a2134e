"""The provenance spine's vocabulary: source kinds, source names, replication keys."""

from __future__ import annotations

import json

import pytest

from chitta.store.provenance import (
    SOURCE_KINDS,
    drawn_from,
    replication_key,
    source_kind,
    source_name,
)
from chitta.store.records import Source


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        (Source(session="s1", role="user"), "user"),
        (Source(session="s1", role="assistant"), "assistant"),
        (Source(session="s1", role="tool"), "tool"),
        # A verbatim fragment keeps its turn's speaker; the distiller only cut it out.
        (Source(session="s1", role="user", via="distiller:rules/1", turns=("t1",)), "user"),
        (Source(session="s1", via="distiller:model/openai:m/prompt-1", turns=("t1",)),
         "distiller"),
        (Source(url="https://example.org/a"), "url"),
        (Source(file="/src/app.py"), "file"),
        (Source(via="import"), "import"),
        (Source(session="s1"), "stated"),
        (Source(), "stated"),
    ],
)  # fmt: skip
def test_each_source_has_the_kind_the_table_gives(source: Source, kind: str) -> None:
    assert source_kind(source) == kind
    assert kind in SOURCE_KINDS


def test_a_source_names_the_one_thing_it_came_from() -> None:
    assert source_name(Source(url="https://x.org/", session="s")) == "url:https://x.org/"
    assert source_name(Source(file="/a.py")) == "file:/a.py"
    via = "distiller:model/ollama:llama/prompt-1"
    assert source_name(Source(session="s", via=via)) == via
    assert source_name(Source(session="s", role="user")) == "session:s"
    assert source_name(Source()) is None


def test_replication_counts_a_session_by_its_bare_id_and_a_file_or_url_by_name() -> None:
    # Bare session ids: replications recorded before files and URLs counted still match.
    assert replication_key(Source(session="s1", file="/a")) == "s1"
    assert replication_key(Source(url="https://x.org/")) == "url:https://x.org/"
    assert replication_key(Source(file="/a")) == "file:/a"
    assert replication_key(Source()) is None


def test_a_source_round_trips_through_its_json_form_turns_included() -> None:
    source = Source(session="s", role="user", via="distiller:rules/1", turns=("a", "b"))
    assert Source.from_dict(json.loads(json.dumps(source.as_dict()))) == source
    assert Source().as_dict() == {}


def test_a_stored_source_with_keys_from_a_newer_chitta_still_reads() -> None:
    raw = {"session": "s", "confidence_of_origin": 0.3, "turns": ["a", 7], "role": 3}
    assert Source.from_dict(raw) == Source(session="s", turns=("a",))


def test_the_turns_of_a_fragment_are_read_from_turns_or_from_an_older_ref() -> None:
    assert drawn_from(Source(turns=("a", "b"))) == ("a", "b")
    assert drawn_from(Source(ref="turn:0190abc")) == ("0190abc",)
    assert drawn_from(Source(ref="turn:")) == drawn_from(Source(ref="issue-7")) == ()
