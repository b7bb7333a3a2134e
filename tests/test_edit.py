"""Correcting a memory by hand: its kind and its tags (Chitta.edit, the edit_memory operation)."""

from __future__ import annotations

import pytest

from chitta.api import Chitta
from chitta.errors import MemoryNotFound, UnknownKind
from chitta.store.kinds import DECAY_RATE, Kind


def test_edit_replaces_the_tags_and_changes_the_kind_with_its_decay(chitta: Chitta) -> None:
    done = chitta.remember("Deploys go out on Tuesdays after the release review.", realm="w",
                           tags=["ops"])  # fmt: skip
    edited = chitta.edit(done.id, kind="wisdom", tags=["release", "deploy"])
    assert (edited.kind.value, edited.tags) == ("wisdom", ("release", "deploy"))
    assert edited.confidence.tau == DECAY_RATE[Kind.WISDOM] != DECAY_RATE[Kind.INSIGHT]
    stored = chitta.get(done.id)
    assert stored == edited and stored.content.startswith("Deploys")
    found = chitta.recall("release", realm="w", strategy="keyword").hits
    assert [h.memory.id for h in found] == [done.id]  # the new tag is searchable
    assert chitta.edit(done.id, tags=[]).tags == ()


def test_a_bad_kind_or_a_missing_memory_changes_nothing(chitta: Chitta) -> None:
    done = chitta.remember("The cache TTL for sessions is 300 seconds.", realm="w")
    with pytest.raises(UnknownKind):
        chitta.edit(done.id, kind="fact")
    assert chitta.get(done.id).kind is Kind.INSIGHT
    with pytest.raises(MemoryNotFound):
        chitta.edit("01NOSUCHMEMORY0000000000000", tags=["x"])
