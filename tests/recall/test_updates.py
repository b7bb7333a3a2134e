"""Knowledge updates: a newer memory on the same subject goes first and the older one names it;
unrelated or other-scope memories are untouched; a recorded supersession is named."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from chitta.api import Chitta
from chitta.recall.config import preset
from chitta.recall.pipeline import recall
from chitta.recall.result import RecallResult
from chitta.recall.updates import SIMILARITY, Item, find_updates, rare
from chitta.store.records import Scope
from chitta.store.terms import TermStats

SCOPE = ("work", "", "")


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def item(id_: str, time: int, vector: np.ndarray, names: str = "atlas", **fields) -> Item:
    return Item(id=id_, scope=fields.pop("scope", SCOPE), time=time,
                entities=frozenset(names.split()), vector=vector, **fields)  # fmt: skip


CLOSE = unit(1, 0.75, 0)  # cosine 0.8 to unit(1, 0, 0): close, not a copy


def test_a_newer_memory_on_the_same_subject_moves_above_the_older() -> None:
    old, other, new = item("old", 1, unit(1, 0, 0)), item("x", 5, unit(0, 1, 0), "y"), \
        item("new", 9, CLOSE)  # fmt: skip
    found = find_updates([old, other, new])
    assert found.order == (2, 0, 1)
    assert dict(found.newer) == {"old": "new"}


def test_an_older_memory_ranked_below_keeps_its_place_and_the_note() -> None:
    found = find_updates([item("new", 9, CLOSE), item("x", 5, unit(0, 0, 1), "y"),
                          item("old", 1, unit(1, 0, 0))])  # fmt: skip
    assert found.order == (0, 1, 2)
    assert dict(found.newer) == {"old": "new"}


def test_unrelated_memories_are_untouched() -> None:
    dissimilar = [item("a", 1, unit(1, 0, 0)), item("b", 9, unit(0, 1, 0))]
    no_entity = [item("a", 1, unit(1, 0, 0), "atlas"), item("b", 9, CLOSE, "zeus")]
    same_time = [item("a", 5, unit(1, 0, 0)), item("b", 5, CLOSE)]
    no_vector = [item("a", 1, unit(1, 0, 0)), item("b", 9, None)]
    copy = unit(1, 0.2, 0)  # cosine 0.98
    restated = [item("a", 1, unit(1, 0, 0), "atlas vpn"), item("b", 9, copy, "vpn")]
    for items in (dissimilar, no_entity, same_time, no_vector, restated):
        found = find_updates(items)
        assert found.order == (0, 1) and not found.newer


def test_another_scope_never_updates() -> None:
    found = find_updates([item("a", 1, unit(1, 0, 0)),
                          item("b", 9, CLOSE, scope=("home", "", ""))])  # fmt: skip
    assert found.order == (0, 1) and not found.newer


def test_a_near_copy_that_names_something_new_is_an_update() -> None:
    found = find_updates([item("a", 1, unit(1, 0, 0), "atlas friday"),
                          item("b", 9, unit(1, 0.2, 0), "atlas tuesday")])  # fmt: skip
    assert dict(found.newer) == {"a": "b"}


def test_only_entities_rare_in_the_realm_make_a_subject() -> None:
    stats = TermStats()
    for i in range(300):  # a speaker named in every other turn
        stats.add("chat", f"Nate: turn {i}" if i % 2 else f"turn {i} about the weather")
    stats.add("chat", "my United Airlines status")
    stats.add("chat", "United Airlines again")
    # Nate is in 150 of 302 memories; "united airlines" (by its rarest word) in 2, and at
    # most max(2, 1 % of 302) may name a rare one.
    assert rare(["nate", "united airlines"], "chat", stats) == {"united airlines"}
    stats.add("small", "Nate and Atlas")
    assert rare(["nate", "atlas"], "small", stats) == {"nate", "atlas"}  # the floor


def test_a_recorded_supersession_is_named_whatever_the_similarity() -> None:
    old = item("old", 9, unit(1, 0, 0), "atlas", superseded_by="new")
    found = find_updates(
        [old, item("x", 5, unit(0, 0, 1), "y"), item("new", 1, unit(0, 1, 0), "z")]
    )
    assert found.order == (2, 0, 1)
    assert dict(found.newer) == {"old": "new"}
    alone = find_updates([item("old", 9, unit(1, 0, 0), superseded_by="elsewhere")])
    assert dict(alone.newer) == {"old": "elsewhere"}  # named, though not among the hits


def test_the_note_names_the_newest_of_several_updates() -> None:
    found = find_updates([item("v1", 1, unit(1, 0, 0)), item("v3", 3, CLOSE, "atlas x3"),
                          item("v2", 2, unit(1, 0.7, 0), "atlas x2")])  # fmt: skip
    assert found.order == (1, 2, 0)
    assert found.newer["v1"] == "v3" and found.newer["v2"] == "v3"


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.sampled_from(["a", "b", "a b"])),
                max_size=10))  # fmt: skip
def test_the_order_is_a_permutation_and_each_update_comes_first(spec) -> None:
    items = [item(str(i), t, unit(1, d / 2, 0.0), names) for i, (t, d, names) in enumerate(spec)]
    found = find_updates(items)
    assert sorted(found.order) == list(range(len(items)))
    place = {items[i].id: p for p, i in enumerate(found.order)}
    for old, new in found.newer.items():
        assert place[new] < place[old]
        assert items[int(new)].time > items[int(old)].time


# --- through recall, on both backends ---------------------------------------------------------

OLD = "My frequent flyer status on United Airlines is Premier Silver"
NEW = "I just reached Premier Gold status on United Airlines"
FILLER = (
    "The Atlas deploy runs every Friday at 5pm",
    "We keep the Atlas backups in the Frankfurt region",
    "Lunch with the design team is on Thursday",
)


def _stock(chitta: Chitta, realm: str = "me") -> tuple[str, str]:
    for text in FILLER:
        chitta.remember(text, realm=realm, event_time="2023-03-01T10:00:00Z")
    old = chitta.remember(OLD, realm=realm, event_time="2023-01-05T10:00:00Z").id
    new = chitta.remember(NEW, realm=realm, event_time="2023-06-01T10:00:00Z").id
    return old, new


def _recall(chitta: Chitta, query: str, realm: str, **config: object) -> RecallResult:
    """The pipeline's recall under hybrid with ``config`` changed (no reranker, no cue)."""
    return recall(chitta.store, chitta.embedder, query, Scope(realm), limit=10,
                  config=replace(preset("hybrid"), **config))  # fmt: skip


def test_the_older_memory_names_the_newer_and_keeps_its_rank_by_default(chitta: Chitta) -> None:
    old, new = _stock(chitta)
    result = chitta.recall("what is my United Airlines frequent flyer status?", realm="me")
    assert {old, new} <= {h.memory.id for h in result.hits}
    assert dict(result.newer) == {old: new}
    finals = [h.final for h in result.hits]
    assert finals == sorted(finals, reverse=True)  # the ranked order, untouched


def test_newer_first_shows_the_newer_above_the_older(chitta: Chitta) -> None:
    old, new = _stock(chitta)
    query = "what is my United Airlines frequent flyer status?"
    result = _recall(chitta, query, "me", newer_first=True)
    ids = [h.memory.id for h in result.hits]
    assert ids.index(new) < ids.index(old)
    assert dict(result.newer) == {old: new}
    # Everything else is in its ranked order, unmarked.
    rest = [h.final for h in result.hits if h.memory.id not in (old, new)]
    assert rest == sorted(rest, reverse=True)
    # Which way the two were ranked, newer_first puts them newer first.
    plain = _recall(chitta, query, "me")
    assert [i for i in ids if i not in (old, new)] == [
        h.memory.id for h in plain.hits if h.memory.id not in (old, new)
    ]


def test_the_stage_switches_off_like_the_others(chitta: Chitta) -> None:
    _stock(chitta)
    off = chitta.recall("what is my United Airlines frequent flyer status?", realm="me",
                        ablate=["updates"])  # fmt: skip
    assert not off.newer
    finals = [h.final for h in off.hits]
    assert finals == sorted(finals, reverse=True)  # the ranked order, untouched


def test_an_unrelated_older_memory_is_untouched(chitta: Chitta) -> None:
    _stock(chitta)
    result = chitta.recall("when is the Atlas deploy?", realm="me")
    deploy = next(h for h in result.hits if "deploy" in h.memory.content)
    assert deploy.memory.id not in result.newer


def test_a_recorded_supersession_is_named(chitta: Chitta) -> None:
    old = chitta.remember("The Atlas staging host is atlas-stg-1", realm="ops").id
    new = chitta.remember("Staging moved to a new box, see the runbook", realm="ops",
                          supersedes=old).id  # fmt: skip
    hidden = chitta.recall("Atlas staging host", realm="ops")
    assert old not in [h.memory.id for h in hidden.hits] and not hidden.newer
    shown = chitta.recall("Atlas staging host", realm="ops", include_superseded=True)
    assert shown.newer[old] == new
    moved = recall(chitta.store, chitta.embedder, "Atlas staging host", Scope("ops"), limit=10,
                   config=replace(preset("hybrid"), newer_first=True),
                   include_superseded=True)  # fmt: skip
    ids = [h.memory.id for h in moved.hits]
    assert ids.index(new) < ids.index(old) and moved.newer[old] == new


def test_a_newer_memory_of_another_realm_marks_nothing(chitta: Chitta) -> None:
    chitta.remember(FILLER[0], realm="me", event_time="2023-03-01T10:00:00Z")
    old = chitta.remember(OLD, realm="me", event_time="2023-01-05T10:00:00Z").id
    new = chitta.remember(NEW, realm="other", event_time="2023-06-01T10:00:00Z").id
    result = chitta.recall("United Airlines status", realm="me", cross_realm=True)
    assert new in [h.memory.id for h in result.hits]  # the xr lane brought it
    assert old not in result.newer and not result.newer


def test_the_similarity_threshold_separates_the_test_pair(chitta: Chitta) -> None:
    # The fixtures above rest on this: the pair is close enough, the fillers are not.
    vectors = chitta.embedder.embed([OLD, NEW, FILLER[1]]).vectors
    assert float(vectors[0] @ vectors[1]) >= SIMILARITY > float(vectors[0] @ vectors[2])
