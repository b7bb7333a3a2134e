"""JSONL export and import: every field round-trips; bad lines are counted, good ones land."""

import io
import json
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from chitta.api import Chitta
from chitta.config import Settings
from chitta.errors import ImportFormatError
from chitta.store.records import Episode, Source, Triplet
from chitta.transfer import export_jsonl, import_jsonl


def _stock(c: Chitta) -> list[str]:
    c.store.add_episodes(
        [Episode(id="01EPISODE0000000000000000A", realm="demo", title="kickoff",
                 started_at=1_700_000_000_000, ended_at=1_700_000_360_000,
                 source=Source(session="s1"), created_at=1_700_000_000_001)]
    )  # fmt: skip
    a = c.remember("We chose SQLite WAL over a custom log", kind="wisdom", realm="demo",
                   tags="storage,decision", agent_id="bot", channel="dev",
                   source=Source(session="s1", url="https://example.org/x"),
                   event_time="2023-05-08T13:56:00Z").id  # fmt: skip
    b = c.remember("Alice prefers tabs over spaces in Python", kind="preference", realm="demo",
                   supersedes=None).id  # fmt: skip
    c.strengthen(a)
    c.weaken(b)
    m = c.get(a)
    c.store.update(replace(m, episode_id="01EPISODE0000000000000000A", access_count=3,
                           last_accessed=1_700_000_100_000))  # fmt: skip
    d = c.remember("Alice switched to spaces after the style guide vote", realm="demo",
                   supersedes=b).id  # fmt: skip
    c.forget(d)
    c.store.add_triplets(
        [Triplet(id="01TRIPLET0000000000000000A", realm="demo", subject="alice",
                 predicate="prefers", object="tabs", weight=0.8, valid_from=1_700_000_000_000,
                 invalidated_at=1_700_100_000_000, source_memory=b, created_at=1_700_000_000_000)]
    )  # fmt: skip
    return [a, b, d]


def _export(c: Chitta, **kwargs) -> str:
    out = io.StringIO()
    export_jsonl(c, out, **kwargs)
    return out.getvalue()


def test_round_trip_keeps_every_field(chitta: Chitta, embedder, tmp_path: Path) -> None:
    ids = _stock(chitta)
    text = _export(chitta, embeddings=True, include_deleted=True)
    with Chitta.open(Settings(home=tmp_path / "copy"), embedder=embedder) as copy:
        report = import_jsonl(copy, io.StringIO(text))
        assert report.errors == [] and report.memories == 3 and report.reembedded == 0
        assert (report.episodes, report.triplets) == (1, 1)
        for mid in ids:
            assert copy.get(mid, include_deleted=True) == chitta.get(mid, include_deleted=True)
        assert copy.store.triplets() == chitta.store.triplets()
        assert copy.store.episodes() == chitta.store.episodes()
        ours, theirs = chitta.store.vectors_for(ids), copy.store.vectors_for(ids)
        assert all(np.array_equal(ours[i], theirs[i]) for i in ids)
        assert _export(copy, embeddings=True, include_deleted=True).splitlines()[1:] == \
            text.splitlines()[1:]  # fmt: skip


def test_without_vectors_import_embeds(chitta: Chitta, embedder, tmp_path: Path) -> None:
    _stock(chitta)
    with Chitta.open(Settings(home=tmp_path / "copy"), embedder=embedder) as copy:
        report = import_jsonl(copy, io.StringIO(_export(chitta)))
        assert report.memories == 2 and report.reembedded == 2  # the forgotten one stays home
        assert copy.recall("write-ahead log SQLite", realm="demo").hits


def test_import_into_another_realm_gets_new_ids_and_keeps_links(chitta: Chitta) -> None:
    ids = _stock(chitta)
    report = import_jsonl(chitta, io.StringIO(_export(chitta, include_deleted=True)), into="copy")
    assert report.memories == 3 and report.errors == []
    copied = list(chitta.store.iter_memories(realm="copy", include_deleted=True))
    assert {m.id for m in copied}.isdisjoint(ids)
    by_text = {m.content: m for m in copied}
    new = by_text["Alice switched to spaces after the style guide vote"]
    old = by_text["Alice prefers tabs over spaces in Python"]
    assert new.supersedes == old.id and old.superseded_by == new.id
    assert chitta.store.counts()["per_realm"]["demo"] == 2  # the source realm is untouched


def test_reimport_skips_what_is_already_there(chitta: Chitta) -> None:
    _stock(chitta)
    report = import_jsonl(chitta, io.StringIO(_export(chitta, include_deleted=True)))
    assert report.memories == 0 and report.skipped_existing == 5
    assert report.reembedded == 0  # nothing already stored is embedded again


def test_bad_lines_are_reported_and_good_lines_land(chitta: Chitta) -> None:
    good = {"type": "memory", "kind": "wisdom", "content": "A good memory about backups"}
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps([1, 2]),
        json.dumps({**good, "content": "short"}),
        json.dumps({**good, "kind": "fact", "content": "Unknown kinds are refused here"}),
        json.dumps({**good, "colour": "blue", "content": "Unknown fields are refused too"}),
        json.dumps({**good, "created_at": "yesterday", "content": "Bad dates are refused"}),
        json.dumps({"type": "planet", "name": "mars"}),
        "",
        json.dumps({**good, "content": "Another good memory about restores", "tags": ["ok"]}),
    ]
    report = import_jsonl(chitta, io.StringIO("\n".join(lines) + "\n"))
    assert report.memories == 2
    assert [n for n, _ in report.errors] == [2, 3, 4, 5, 6, 7, 8]
    messages = dict(report.errors)
    assert "invalid JSON" in messages[2] and "unknown field 'colour'" in messages[6]
    assert "fact" in messages[5] and "created_at" in messages[7] and "planet" in messages[8]


def test_a_newer_format_is_refused_whole(chitta: Chitta) -> None:
    header = json.dumps({"type": "chitta-export", "version": 99})
    with pytest.raises(ImportFormatError, match="version 99"):
        import_jsonl(chitta, io.StringIO(header + "\n"))


def test_export_of_one_realm(chitta: Chitta) -> None:
    _stock(chitta)
    chitta.remember("Something that belongs to another project", realm="other")
    lines = [json.loads(x) for x in _export(chitta, realm="other").splitlines()]
    assert [x["type"] for x in lines] == ["chitta-export", "memory"]


def test_many_records_cross_batch_boundaries(chitta: Chitta, embedder, tmp_path: Path) -> None:
    rng = random.Random(7)
    words = (
        "alpha bravo cargo delta engine falcon garden harbor island jungle kettle lemon "
        "marble nectar orbit pepper quartz river saddle timber umbrella velvet walnut yonder"
    )
    vocab = words.split()
    mids = list(dict.fromkeys(
        chitta.remember(" ".join(rng.sample(vocab, 6)), realm="big").id for _ in range(300)
    ))  # fmt: skip
    assert len(mids) > 256  # more than one import batch
    chitta.store.add_triplets(
        [Triplet(id=f"01TRIPLET{i:017d}", realm="big", subject=f"service-{i}", predicate="runs_on",
                 object=f"h{i}", weight=1.0, valid_from=1_700_000_000_000, invalidated_at=None,
                 source_memory=mids[i], created_at=1_700_000_000_000) for i in range(len(mids))]
    )  # fmt: skip
    text = _export(chitta, realm="big", embeddings=True)
    with Chitta.open(Settings(home=tmp_path / "copy"), embedder=embedder) as copy:
        report = import_jsonl(copy, io.StringIO(text))
        assert (report.memories, report.triplets, report.errors) == (len(mids), len(mids), [])
        assert copy.store.triplets("big") == chitta.store.triplets("big")
    moved = import_jsonl(chitta, io.StringIO(text), into="big2")
    assert (moved.memories, moved.triplets) == (len(mids), len(mids))
    new_ids = {m.id for m in chitta.store.iter_memories(realm="big2")}
    assert all(t.source_memory in new_ids for t in chitta.store.triplets("big2"))
