"""The Python API: the quality gate, the lifecycle, and refusal that changes nothing."""

from dataclasses import replace

import pytest

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
    UnknownKind,
)
from chitta.recall import calibration as calib
from chitta.store.kinds import Kind
from chitta.store.records import Source

WAL = "We chose SQLite WAL over a custom log because crash recovery comes free"


def test_remember_stores_every_given_field(chitta: Chitta) -> None:
    r = chitta.remember(
        WAL, kind="wisdom", realm="demo", agent_id="a1", channel="c1", tags="storage,decision",
        source=Source(session="s1", file="db.py"), event_time="2026-01-02T03:04:05Z",
    )  # fmt: skip
    m = chitta.get(r.id)
    assert (m.kind, m.realm, m.agent_id, m.channel) == (Kind.WISDOM, "demo", "a1", "c1")
    assert m.tags == ("storage", "decision")
    assert m.source == Source(session="s1", file="db.py")
    assert m.event_time == 1767323045000
    assert m.confidence.tau == 0.005 and m.tier == "hot"
    assert not r.deduplicated


def test_default_kind_is_insight(chitta: Chitta) -> None:
    assert chitta.get(chitta.remember(WAL).id).kind is Kind.INSIGHT


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
def test_bad_input_is_refused_and_nothing_is_written(chitta: Chitta, kwargs, error) -> None:
    chitta.remember(WAL, realm="demo")
    before = chitta.store.counts()
    args = {"content": "A perfectly fine memory about storage engines", **kwargs}
    with pytest.raises(error):
        chitta.remember(args.pop("content"), **args)
    assert chitta.store.counts() == before


def test_near_duplicate_reinforces_instead_of_storing(chitta: Chitta) -> None:
    first = chitta.remember(WAL, realm="demo", tags="storage")
    again = chitta.remember(WAL.replace("because", "since"), realm="demo", tags="decision")
    assert again.deduplicated and again.id == first.id and again.similarity >= 0.95
    m = chitta.get(first.id)
    assert m.confidence.n == 1 and m.strength > 0.7
    assert m.tags == ("storage", "decision")
    assert chitta.store.counts()["memories"] == 1


def test_duplicates_in_other_scopes_are_kept_apart(chitta: Chitta) -> None:
    a = chitta.remember(WAL, realm="demo")
    b = chitta.remember(WAL, realm="other")
    c = chitta.remember(WAL, realm="demo", agent_id="bot")
    assert len({a.id, b.id, c.id}) == 3 and not (b.deduplicated or c.deduplicated)


def test_strengthen_and_weaken_move_confidence(chitta: Chitta) -> None:
    mid = chitta.remember(WAL).id
    mu0 = chitta.get(mid).confidence.mu
    up = chitta.strengthen(mid)
    assert up.confidence.mu > mu0 and up.confidence.n == 1
    down = chitta.weaken(mid)
    assert down.confidence.mu < up.confidence.mu and down.strength < up.strength


def test_decay_applies_each_kinds_rate(settings: Settings, embedder) -> None:
    clock = [1_800_000_000_000]
    with Chitta.open(settings, embedder=embedder) as c:
        c.clock = lambda: clock[0]
        belief = c.remember("The team values honest answers over fast ones", kind="belief").id
        episode = c.remember("We shipped version two on a rainy Tuesday", kind="episode").id
        clock[0] += 30 * MS_PER_DAY
        assert c.decay() == 2
        assert c.get(belief).strength == pytest.approx(0.7)
        assert c.get(episode).strength == pytest.approx(0.7 * 2.718281828 ** (-0.03 * 30))
        assert c.get(episode).confidence.mu < c.get(belief).confidence.mu
        assert c.decay() == 0  # nothing more until time passes


def test_forget_restore_purge(chitta: Chitta) -> None:
    mid = chitta.remember(WAL).id
    chitta.forget(mid)
    with pytest.raises(MemoryNotFound, match="restore"):
        chitta.get(mid)
    assert chitta.restore(mid).deleted_at is None
    chitta.purge(mid)
    with pytest.raises(MemoryNotFound, match="does not exist"):
        chitta.get(mid, include_deleted=True)
    with pytest.raises(MemoryNotFound):
        chitta.forget(mid)


def test_supersede_links_both_ways(chitta: Chitta) -> None:
    old = chitta.remember(WAL).id
    new = chitta.remember("We later moved the store to PostgreSQL for team sharing").id
    chitta.supersede(old, new)
    assert chitta.get(old).superseded_by == new and chitta.get(new).supersedes == old
    with pytest.raises(BadArgument):
        chitta.supersede(new, new)


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


def test_status_has_figures_but_no_text(chitta: Chitta) -> None:
    chitta.remember(WAL, realm="demo")
    status = chitta.status()
    assert status["memories"] == 1 and status["per_realm"] == {"demo": 1}
    assert status["calibration"]["source"] == "default"
    assert "SQLite" not in repr(status)
