"""A memory's provenance chain: source kind and trust, the turns it was drawn from, its
replications by other sources, and what it replaced (chitta/provenance.py)."""

from __future__ import annotations

import pytest

from chitta.api import Chitta
from chitta.errors import MemoryNotFound
from chitta.ops import OPERATIONS
from chitta.store.records import Source

TURN = "No, use pnpm, not npm for this repository. I prefer tabs over spaces in every Python file."


def test_a_fragment_leads_back_to_the_turn_it_was_cut_from(chitta: Chitta) -> None:
    turn = chitta.remember(TURN, kind="episode", source=Source("s1", role="user"), realm="w")
    fragment = chitta.provenance(turn.distilled[0])
    assert fragment.source_kind == "user" and fragment.trust == 1.0
    assert [t.id for t in fragment.turns] == [turn.id]
    assert fragment.turns[0].role == "user" and fragment.turns[0].excerpt.startswith("No, use")
    assert fragment.memory.source.via == "distiller:rules/1"


def test_the_assistants_words_are_trusted_less_than_the_users(chitta: Chitta) -> None:
    said = chitta.remember("The build failed with ModuleNotFoundError; I fixed it by pinning "
                           "numpy to 1.26.", kind="episode", source=Source("s1", role="assistant"),
                           realm="w")  # fmt: skip
    assert chitta.provenance(said.id).trust == 0.8
    web = chitta.remember("Python 3.13 removed the cgi module.", source=Source(url="https://x.org/"),
                          realm="w")  # fmt: skip
    chain = chitta.provenance(web.id)
    assert (chain.source_kind, chain.source_name, chain.trust) == ("url", "url:https://x.org/", 0.6)


def test_replications_count_distinct_sources_not_repeated_reads(chitta: Chitta) -> None:
    text = "The staging database runs PostgreSQL 16 on port 5433."
    first = chitta.remember(text, source=Source("s1"), realm="w")
    chitta.remember(text, source=Source("s1"), realm="w")  # the same session again
    chitta.remember(text, source=Source(file="/srv/notes.md"), realm="w")
    chitta.remember(text, source=Source(file="/srv/notes.md"), realm="w")
    chitta.remember(text, source=Source("s2"), realm="w")
    chain = chitta.provenance(first.id)
    assert sorted(key for key, _ in chain.replications) == ["file:/srv/notes.md", "s2"]
    assert chain.independent_sources == 3


def test_supersede_links_show_on_both_ends(chitta: Chitta) -> None:
    old = chitta.remember("Deploys go out on Fridays.", source=Source("s1"), realm="w")
    new = chitta.remember("Deploys go out on Tuesdays since March.", source=Source("s1"),
                          realm="w", supersedes=old.id)  # fmt: skip
    assert chitta.provenance(new.id).supersedes.id == old.id
    assert [r.id for r in chitta.provenance(new.id).replaced] == [old.id]
    assert chitta.provenance(old.id).superseded_by.id == new.id


def test_a_forgotten_memory_has_a_chain_and_an_unknown_one_is_not_found(chitta: Chitta) -> None:
    done = chitta.remember("Use ruff, not flake8.", realm="w")
    chitta.forget(done.id)
    chain = chitta.provenance(done.id)
    assert chain.memory.deleted
    # No session, file or URL: the memory's own source still counts as one; no code named.
    assert chain.independent_sources == 1 and chain.symbols == ()
    with pytest.raises(MemoryNotFound):
        chitta.provenance("01NOSUCHMEMORY0000000000000")


def test_the_operation_replies_the_chain_as_json(chitta: Chitta) -> None:
    turn = chitta.remember(TURN, kind="episode", source=Source("s1", role="user"), realm="w")
    reply = OPERATIONS["provenance"].call(chitta, {"id": turn.distilled[0]})
    assert reply["source_kind"] == "user" and reply["via"] == "distiller:rules/1"
    assert reply["turns"][0]["id"] == turn.id and reply["independent_sources"] == 1
    assert reply["source"]["turns"] == [turn.id]
