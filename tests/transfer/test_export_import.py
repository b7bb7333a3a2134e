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


def _relations(c: Chitta) -> dict[str, str]:
    """Edges (one invalidated) and aliases in realm 'geo'; the edges' ids by name."""
    rel = c.relations
    src = c.remember("Paris has been the capital of France for centuries", realm="geo").id
    ids = {
        "france": rel.add("France", "Capital Of", "Paris", realm="geo", source_memory=src,
                          valid_from="2000-01-01").triplet.id,
        "italy": rel.add("Italy", "capital-of", "Rome", weight=0.9, realm="geo",
                         valid_from="2000-01-01").triplet.id,
        "bonn": rel.add("Germany", "capital_of", "Bonn", realm="geo",
                        valid_from="1949-05-23").triplet.id,
        "src": src,
    }  # fmt: skip
    rel.invalidate(ids["bonn"], at="1990-10-03")
    rel.alias("The French Republic", "France", realm="geo")
    rel.alias("BRD", "germany", realm="geo")
    return ids


def test_triplets_and_aliases_round_trip_with_invalidated_edges(
    chitta: Chitta, embedder, tmp_path: Path
) -> None:
    ids = _relations(chitta)
    text = _export(chitta, realm="geo")
    lines = [json.loads(x) for x in text.splitlines()]
    assert [x["type"] for x in lines] == ["chitta-export", "memory"] + ["triplet"] * 3 + [
        "alias"
    ] * 2
    assert lines[-2] == {"type": "alias", "realm": "geo", "alias": "BRD", "alias_key": "brd",
                         "canonical_key": "germany",
                         "created_at": lines[-2]["created_at"]}  # fmt: skip
    with Chitta.open(Settings(home=tmp_path / "copy"), embedder=embedder) as copy:
        report = import_jsonl(copy, io.StringIO(text))
        assert report.errors == []
        assert (report.memories, report.triplets, report.aliases) == (1, 3, 2)
        assert copy.store.triplets() == chitta.store.triplets()
        assert copy.store.aliases() == chitta.store.aliases()
        assert _export(copy, realm="geo").splitlines()[1:] == text.splitlines()[1:]
        # Keyed on the way in: odd casing and the aliases find the imported edges.
        found = copy.relations.find(subject="the FRENCH republic", predicate="CAPITAL OF",
                                    realm="geo")  # fmt: skip
        assert [t.id for t in found] == [ids["france"]]
        assert found[0].source_memory == ids["src"]
        # The invalidated edge is history: not current, but there as of a time it held.
        assert copy.relations.find(subject="brd", realm="geo") == []
        past = copy.relations.find(subject="brd", realm="geo", as_of="1980-01-01")
        assert [t.id for t in past] == [ids["bonn"]]
        answer = copy.recall_analogy("the french republic", "paris", "italy", realm="geo")
        assert [x.entity for x in answer.answers] == ["Rome"]
        again = import_jsonl(copy, io.StringIO(text))
        assert (again.triplets, again.aliases, again.skipped_existing) == (0, 0, 6)


def test_import_into_another_realm_moves_the_aliases_too(chitta: Chitta) -> None:
    ids = _relations(chitta)
    report = import_jsonl(chitta, io.StringIO(_export(chitta, realm="geo")), into="atlas")
    assert (report.triplets, report.aliases, report.errors) == (3, 2, [])
    assert {a.alias_key: a.canonical_key for a in chitta.store.aliases("atlas")} == {
        "brd": "germany", "the french republic": "france"}  # fmt: skip
    moved = chitta.relations.find(subject="The French Republic", realm="atlas")
    assert len(moved) == 1 and moved[0].id != ids["france"]
    assert moved[0].source_memory not in (None, ids["src"])  # the copy of the memory
    assert chitta.store.get(moved[0].source_memory).realm == "atlas"


def test_bad_triplet_and_alias_lines_are_reported(chitta: Chitta) -> None:
    chitta.relations.alias("NYC", "New York City", realm="geo")
    edge = {"type": "triplet", "realm": "geo", "subject": "a", "predicate": "calls",
            "object": "b"}  # fmt: skip
    alias = {"type": "alias", "realm": "geo", "alias": "Big Apple",
             "canonical_key": "new york city"}  # fmt: skip
    lines = [
        {**edge, "subject": "Ann Arbor", "predicate": "Lives In"},
        {**edge, "subject": "   "},
        {**edge, "predicate": "part (of)"},
        {**edge, "weight": 0},
        alias,
        {**alias, "alias": ""},
        {**alias, "alias": "Gotham", "colour": "blue"},
        {**alias, "alias": "new york city", "canonical_key": "nyc"},  # itself, through NYC
        {**alias, "alias": "nyc", "canonical_key": "somewhere else"},  # NYC is kept
        {**alias, "alias": "The Apple", "alias_key": "stale key"},  # keys are made again
    ]
    report = import_jsonl(chitta, io.StringIO("\n".join(json.dumps(x) for x in lines)))
    assert (report.triplets, report.aliases, report.skipped_existing) == (1, 2, 1)
    messages = dict(report.errors)
    assert sorted(messages) == [2, 3, 4, 6, 7, 8]
    assert "subject" in messages[2] and "not a predicate" in messages[3]
    assert "weight" in messages[4] and "alias" in messages[6]
    assert "unknown field 'colour'" in messages[7] and "itself" in messages[8]
    assert {a.alias_key: a.canonical_key for a in chitta.store.aliases("geo")} == {
        "nyc": "new york city",
        "big apple": "new york city",
        "the apple": "new york city",
    }
    assert [
        t.predicate
        for t in chitta.relations.find(subject="ANN ARBOR", realm="geo", predicate="lives_in")
    ] == ["Lives In"]


def test_bytes_that_are_not_utf8_make_a_bad_line_and_nothing_is_rewritten(
    chitta: Chitta,
) -> None:
    good = json.dumps({"kind": "wisdom", "content": "Déjà vu is valid UTF-8 here"},
                      ensure_ascii=False).encode()  # fmt: skip
    latin1 = good.decode().replace("valid UTF-8", "Latin-1").encode("latin-1")
    read: list[int] = []
    report = import_jsonl(chitta, [b"\xef\xbb\xbf" + good + b"\r\n", latin1 + b"\n"],
                          progress=read.append)  # fmt: skip
    assert report.memories == 1 and [n for n, _ in report.errors] == [2]
    assert report.errors[0][1].startswith("not valid UTF-8 (byte 0xe9 at byte ")
    assert read == [len(good) + 5, len(latin1) + 1]  # bytes as read, the BOM included
    (m,) = chitta.store.iter_memories()
    assert m.content == "Déjà vu is valid UTF-8 here"


def test_an_imported_memory_gets_its_sentences_vectors(
    chitta: Chitta, embedder, tmp_path: Path
) -> None:
    """The file holds whole vectors only; the import embeds the pieces (embed/pieces.py),
    with or without the file's vectors."""
    two = chitta.remember("The ferry leaves at seven. It sails from pier four.", realm="demo").id
    one = chitta.remember("Alice prefers tabs over spaces in Python", realm="demo").id
    for embeddings in (True, False):
        with Chitta.open(Settings(home=tmp_path / f"copy-{embeddings}"), embedder=embedder) as c:
            import_jsonl(c, io.StringIO(_export(chitta, embeddings=embeddings)))
            assert list(c.store.pieces_for([two, one])) == [two]
