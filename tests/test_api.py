"""The Python API: the quality gate, the lifecycle, and refusal that changes nothing.

The tests that take ``api`` run twice: on a store opened in this process, and through a real
daemon serving the same home (``Chitta.open`` returns a DaemonChitta then), with the same
assertions."""

import logging
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from tests.embed.test_http import ServerState, server  # noqa: F401, F811 (the fixture)

from chitta.api import MS_PER_DAY, Chitta
from chitta.config import MAX_CONTENT_CHARS, EmbedSettings, Settings
from chitta.embed.loader import build_embedder, default_model_files
from chitta.errors import (
    BadArgument,
    BadDate,
    BadScope,
    BadTags,
    ContentTooLong,
    ContentTooShort,
    MemoryNotFound,
    ModelMismatch,
    TripletNotFound,
    UnknownKind,
)
from chitta.recall.confidence import calibration as calib
from chitta.recall.fusion import LaneHit
from chitta.recall.reconstruct import Item, Reconstruction
from chitta.recall.result import Hit, RecallResult
from chitta.relations.analogy import Analogy
from chitta.relations.service import Added, Invalidated
from chitta.remote import DaemonChitta
from chitta.store.kinds import Kind
from chitta.store.records import Source, Triplet

WAL = "We chose SQLite WAL over a custom log because crash recovery comes free"
COUNTS = ("memories", "per_realm", "per_kind", "forgotten", "triplets", "episodes")


@pytest.fixture(params=["in-process", "daemon"])
def api(request, settings: Settings, embedder, launch) -> Iterator[Chitta | DaemonChitta]:
    """The API on a fresh store: opened here, or through a daemon started on its home."""
    if request.param == "daemon":
        launch(settings.home)
        with Chitta.open(settings, through_daemon=True) as c:
            assert isinstance(c, DaemonChitta)
            yield c
    else:
        with Chitta.open(settings, embedder=embedder, through_daemon=False) as c:
            assert isinstance(c, Chitta)
            yield c


def counts(c: Chitta | DaemonChitta) -> dict[str, object]:
    """What the store holds, as status says it (the same both ways)."""
    status = c.status()
    return {key: status[key] for key in COUNTS}


def test_remember_stores_every_given_field(api: Chitta | DaemonChitta) -> None:
    r = api.remember(
        WAL, kind="wisdom", realm="demo", agent_id="a1", channel="c1", tags="storage,decision",
        source=Source(session="s1", file="db.py"), event_time="2026-01-02T03:04:05Z",
    )  # fmt: skip
    m = api.get(r.id)
    assert (m.kind, m.realm, m.agent_id, m.channel) == (Kind.WISDOM, "demo", "a1", "c1")
    assert m.tags == ("storage", "decision")
    assert m.source == Source(session="s1", file="db.py")
    assert m.event_time == 1767323045000
    assert m.confidence.tau == 0.005 and m.tier == "hot"
    assert not r.deduplicated


def test_default_kind_is_insight(api: Chitta | DaemonChitta) -> None:
    assert api.get(api.remember(WAL).id).kind is Kind.INSIGHT


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"content": "too short"}, ContentTooShort),
        ({"content": ""}, ContentTooShort),
        ({"content": "x" * (MAX_CONTENT_CHARS + 1)}, ContentTooLong),
        ({"kind": "fact"}, UnknownKind),
        ({"tags": "bad tag"}, BadTags),
        ({"event_time": "last tuesday"}, BadDate),
        ({"realm": "no spaces allowed"}, BadScope),
        ({"confidence": 1.5}, BadArgument),
        ({"supersedes": "01NOSUCHMEMORY0000000000000"}, MemoryNotFound),
    ],
)
def test_bad_input_is_refused_and_nothing_is_written(
    api: Chitta | DaemonChitta, kwargs, error
) -> None:
    api.remember(WAL, realm="demo")
    before = counts(api)
    args = {"content": "A perfectly fine memory about storage engines", **kwargs}
    with pytest.raises(error):
        api.remember(args.pop("content"), **args)
    assert counts(api) == before


def test_near_duplicate_reinforces_instead_of_storing(api: Chitta | DaemonChitta) -> None:
    first = api.remember(WAL, realm="demo", tags="storage")
    again = api.remember(WAL.replace("because", "since"), realm="demo", tags="decision")
    assert again.deduplicated and again.id == first.id and again.similarity >= 0.95
    m = api.get(first.id)
    assert m.confidence.n == 1 and m.strength > 0.7
    assert m.tags == ("storage", "decision")
    assert counts(api)["memories"] == 1


def test_a_near_duplicate_with_a_new_number_or_name_is_a_new_fact(
    api: Chitta | DaemonChitta,
) -> None:
    port = "The integration tests need the PostgreSQL server running on port 5432"
    first = api.remember(port, realm="demo")
    other = api.remember(port.replace("5432", "5433"), realm="demo")  # cosine 0.97
    named = api.remember(port.replace("the PostgreSQL", "the Redis"), realm="demo")
    assert not (other.deduplicated or named.deduplicated)
    assert len({first.id, other.id, named.id}) == 3 and counts(api)["memories"] == 3
    assert api.remember(port, realm="demo").id == first.id  # the same words: reinforced


LINT = "Run the linter before committing: make lint catches unused imports"
#: The same note in other words: cosine 0.93, under the store-wide duplicate rule's 0.95.
LINT_AGAIN = "Before committing, run make lint: it catches unused imports"


def test_a_burst_from_one_session_is_folded_into_its_first(api: Chitta | DaemonChitta) -> None:
    s1 = Source(session="s1", role="assistant")
    first = api.remember(LINT, realm="demo", source=s1, tags="tooling")
    again = api.remember(LINT_AGAIN, realm="demo", source=s1, tags="habit")
    assert again.deduplicated and again.burst and again.id == first.id
    assert 0.85 <= again.similarity < 0.95
    m = api.get(first.id)
    assert m.content == LINT and m.strength > 0.7 and m.tags == ("tooling", "habit")
    assert counts(api)["memories"] == 1
    # Not a burst: another session, no session, another kind, another role, a new number
    # (each beside its own first note, in a realm of its own).
    cases = [
        {"source": Source(session="s2", role="assistant")},
        {},
        {"source": s1, "kind": "approach"},
        {"source": Source(session="s1", role="user")},
        {"source": s1, "content": LINT_AGAIN + " since v2"},
    ]
    for n, case in enumerate(cases):
        realm = f"case{n}"
        api.remember(LINT, realm=realm, source=s1)
        other = api.remember(case.pop("content", LINT_AGAIN), realm=realm, **case)
        assert not (other.deduplicated or other.burst), case
    assert counts(api)["memories"] == 1 + 2 * len(cases)


def test_a_burst_ends_after_ten_minutes(settings: Settings, embedder) -> None:
    s1 = Source(session="s1")
    with Chitta.open(settings, embedder=embedder, through_daemon=False) as c:
        first = {realm: c.remember(LINT, realm=realm, source=s1).id for realm in ("a", "b")}
    for realm, minutes, folded in (("a", 9, True), ("b", 11, False)):
        later = replace(settings, clock_offset_ms=minutes * 60 * 1000)
        with Chitta.open(later, embedder=embedder, through_daemon=False) as c:
            again = c.remember(LINT_AGAIN, realm=realm, source=s1)
        assert again.burst is folded and (again.id == first[realm]) is folded


def test_duplicates_in_other_scopes_are_kept_apart(api: Chitta | DaemonChitta) -> None:
    a = api.remember(WAL, realm="demo")
    b = api.remember(WAL, realm="other")
    c = api.remember(WAL, realm="demo", agent_id="bot")
    assert len({a.id, b.id, c.id}) == 3 and not (b.deduplicated or c.deduplicated)


def test_strengthen_and_weaken_move_confidence(api: Chitta | DaemonChitta) -> None:
    mid = api.remember(WAL).id
    mu0 = api.get(mid).confidence.mu
    up = api.strengthen(mid)
    assert up.confidence.mu > mu0 and up.confidence.n == 1
    down = api.weaken(mid)
    assert down.confidence.mu < up.confidence.mu and down.strength < up.strength


def test_decay_applies_each_kinds_rate(settings: Settings, embedder) -> None:
    clock = [1_800_000_000_000]
    with Chitta.open(settings, embedder=embedder) as c:
        c.clock = lambda: clock[0]
        belief = c.remember("The team values honest answers over fast ones", kind="belief").id
        episode = c.remember("We shipped version two on a rainy Tuesday", kind="episode").id
        clock[0] += 30 * MS_PER_DAY
        assert c.decay().changed == 1  # a belief never decays: nothing to write
        assert c.get(belief).strength == pytest.approx(0.7)
        assert c.get(episode).strength == pytest.approx(0.7 * 2.718281828 ** (-0.03 * 30))
        assert c.get(episode).confidence.mu < c.get(belief).confidence.mu
        assert c.decay().changed == 0  # nothing more until time passes


def test_forget_restore_purge(api: Chitta | DaemonChitta) -> None:
    mid = api.remember(WAL).id
    api.forget(mid)
    with pytest.raises(MemoryNotFound, match="restore"):
        api.get(mid)
    assert api.restore(mid).deleted_at is None
    api.purge(mid)
    with pytest.raises(MemoryNotFound, match="does not exist"):
        api.get(mid, include_deleted=True)
    with pytest.raises(MemoryNotFound):
        api.forget(mid)


def test_supersede_links_both_ways(api: Chitta | DaemonChitta) -> None:
    old = api.remember(WAL).id
    new = api.remember("We later moved the store to PostgreSQL for team sharing").id
    api.supersede(old, new)
    assert api.get(old).superseded_by == new and api.get(new).supersedes == old
    with pytest.raises(BadArgument):
        api.supersede(new, new)


def test_another_model_is_refused_until_reembed(settings: Settings, embedder, tmp_path) -> None:
    with Chitta.open(settings, embedder=embedder) as c:
        mid = c.remember(WAL, realm="demo").id
        c.set_calibration(replace(calib.DEFAULT, source="golden file g.jsonl"))
    model, tokenizer = default_model_files()
    folder = tmp_path / "other-model"
    folder.mkdir()
    (folder / "model.onnx").symlink_to(model)
    (folder / "tokenizer.json").symlink_to(tokenizer)
    other = build_embedder(EmbedSettings(model_dir=folder))
    with pytest.raises(ModelMismatch) as err:
        Chitta.open(settings, embedder=other)
    assert "all-MiniLM-L6-v2-int8" in str(err.value) and "other-model" in str(err.value)
    assert "chitta reembed" in str(err.value)
    with Chitta.open(settings, embedder=other, check_model=False) as c:
        # That fit calibrated the other model's cosines: not used, and it says so.
        assert c.calibration.source.startswith("default (stored fit unusable: it was fitted")
        assert c.reembed() == 1
    with Chitta.open(settings, embedder=other) as c:
        assert c.recall("write-ahead log", realm="demo").hits[0].memory.id == mid
        # The old model's fit is dropped; the default says it was fitted on another model.
        assert c.store.meta("calibration") is None
        assert c.calibration.source.startswith("default (fitted on all-MiniLM-L6-v2-int8")


def test_status_has_figures_but_no_text(api: Chitta | DaemonChitta) -> None:
    api.remember(WAL, realm="demo")
    status = api.status()
    assert status["memories"] == 1 and status["per_realm"] == {"demo": 1}
    assert status["calibration"]["source"] == "default"
    assert "SQLite" not in repr(status)


def test_recall_and_reconstruct_give_the_result_types(api, tmp_path) -> None:
    wal = api.remember(WAL, realm="demo", tags="storage").id
    api.remember("Alice prefers tabs over spaces in every Python file", realm="demo")
    result = api.recall("write-ahead log crash recovery", realm="demo", trace=True)
    assert isinstance(result, RecallResult) and isinstance(result.hits[0], Hit)
    top = result.hits[0]
    assert top.memory == api.get(wal) and top.memory.tags == ("storage",)
    assert all(isinstance(lane, LaneHit) for lane in top.lanes.values()) and "sem" in top.lanes
    assert top.final is not None and top.factors and result.trace is not None
    assert result.confidence.band in ("KNOWN", "UNKNOWN") and result.scope.realm == "demo"
    rec = api.reconstruct("write-ahead log crash recovery", realm="demo", budget=100)
    assert isinstance(rec, Reconstruction) and isinstance(rec.items[0], Item)
    assert rec.items[0].ref == wal and rec.items[0].quote == WAL
    assert rec.recall.hits[0].memory.id == wal and rec.omitted
    with pytest.raises(BadArgument):
        api.reconstruct("anything", budget=5)


def test_relations_and_analogy_give_the_service_types(api) -> None:
    rel = api.relations
    first = rel.add("Alice", "lives in", "Paris", realm="demo")
    assert isinstance(first, Added) and not first.existing
    assert rel.add("alice", "Lives In", "paris", realm="demo").existing
    rel.add("Bob", "lives in", "Rome", realm="demo")
    assert [t.object for t in rel.find(subject="Bob", realm="demo")] == ["Rome"]
    assert rel.alias("Bobby", "Bob", realm="demo") == ("bobby", "bob")
    assert [a["alias"] for a in rel.aliases("demo")] == ["Bobby"]
    found = api.recall_analogy("Alice", "Paris", "Bobby", realm="demo")
    assert isinstance(found, Analogy) and [x.entity for x in found.answers] == ["Rome"]
    assert isinstance(found.answers[0].supports[0].cd, Triplet)
    gone = rel.invalidate(first.triplet.id)
    assert isinstance(gone, Invalidated) and not gone.already
    assert gone.triplet.invalidated_at is not None and rel.invalidate(first.triplet.id).already
    assert rel.unalias("Bobby", realm="demo") and not rel.unalias("Bobby", realm="demo")
    with pytest.raises(TripletNotFound):
        rel.invalidate("01NOSUCHTRIPLET000000000000")


def test_calibration_backup_restore_and_reembed(api, tmp_path) -> None:
    assert isinstance(api.calibration, calib.Calibration) and api.calibration.is_default
    api.set_calibration(None)
    assert api.calibration.source == "default"
    mid = api.remember(WAL, realm="demo").id
    api.backup(tmp_path / "copy.db")
    api.purge(mid)
    saved = api.restore_backup(tmp_path / "copy.db")
    assert isinstance(saved, Path) and saved.exists()
    assert api.get(mid).content == WAL
    seen: list[tuple[int, int]] = []
    assert api.reembed(progress=lambda done, total: seen.append((done, total))) == 1
    assert seen[-1] == (1, 1)
    assert api.recall("write-ahead log", realm="demo").hits[0].memory.id == mid


FERRY_NOTE = ("Packing list is done. The ferry to the island leaves at seven from pier four. "
              "Remember the sunscreen.")  # fmt: skip


def test_a_memory_of_sentences_is_stored_with_their_vectors(chitta: Chitta, embedder) -> None:
    """remember embeds the sentences of a memory of several beside its whole (embed/pieces.py;
    what the sem lane does with them: tests/recall/lanes/test_sem.py); a memory of one
    sentence has none. reembed makes them again with the model it installs."""
    many = chitta.remember(FERRY_NOTE, realm="trip").id
    one = chitta.remember(WAL, realm="trip").id
    stored = chitta.store.pieces_for([many, one])
    assert list(stored) == [many] and len(stored[many]) == 3 * (embedder.identity().dim + 4)
    assert chitta.reembed() == 2
    assert chitta.store.pieces_for([many, one]) == stored


POTTERY = [("s1", "Caroline: How was the pottery workshop you took the kids to last weekend?"),
           ("s1", "Melanie: It went fine, they were busy all afternoon."),
           ("s2", "Caroline: How was the dentist appointment for the kids on Monday?"),
           ("s2", "Melanie: They loved it and enjoyed every minute of it.")]  # fmt: skip


def test_a_reply_is_found_by_the_turn_it_answers(chitta: Chitta, embedder) -> None:
    """A conversation's turn (kind episode, in a session or episode) that follows another
    has one more piece: the turn before it and itself together (embed/pieces.py). By its
    own words the dentist reply is nearer the question; read after the turn it answers, the
    pottery reply is."""
    ids = [chitta.remember(text, kind="episode", realm="chat", source=Source(session=s)).id
           for s, text in POTTERY]  # fmt: skip
    fact = chitta.remember("The kids have swimming lessons on Thursdays", realm="chat",
                           source=Source(session="s2")).id  # fmt: skip
    stored = chitta.store.pieces_for([*ids, fact])
    # First turns and a fact of the session (not a turn) have nothing before them to read.
    assert sorted(stored) == sorted([ids[1], ids[3]])
    assert len(stored[ids[1]]) == embedder.identity().dim + 4  # one piece
    question = "did the kids enjoy the pottery workshop?"
    order = [h.memory.id for h in chitta.recall(question, realm="chat", strategy="semantic").hits]
    assert order.index(ids[1]) < order.index(ids[3])
    chitta.store.drop_pieces(ids)  # as a store made before turns had their context
    order = [h.memory.id for h in chitta.recall(question, realm="chat", strategy="semantic").hits]
    assert order.index(ids[3]) < order.index(ids[1])
    assert chitta.reembed() == 5 and sorted(chitta.store.pieces_for(ids)) == [ids[1], ids[3]]


def test_a_model_failing_on_the_sentences_keeps_the_memory_with_its_whole_vector(
    server: ServerState,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The remote model answers the whole text and fails on its sentences: the memory is
    stored, found by its meaning, without pieces, and the warning holds no memory text."""
    model = build_embedder(EmbedSettings(backend="ollama", url=server.url, model="m"))
    with Chitta.open(Settings(home=tmp_path / "home"), embedder=model) as c:
        server.fail_after = server.requests + 1  # the whole text's call, not its sentences'
        with caplog.at_level(logging.WARNING, logger="chitta.api"):
            done = c.remember(FERRY_NOTE, realm="trip")
        assert done.embedded and c.store.vectors_for([done.id])
        assert c.store.pieces_for([done.id]) == {}
        assert server.requests >= 2  # the sentences were asked for, and refused
    warned = [r.getMessage() for r in caplog.records if r.name == "chitta.api"]
    assert warned and "without their sentences' vectors" in warned[0]
    said = " ".join(warned).lower()
    assert not any(word in said for word in ("packing", "ferry", "sunscreen"))
