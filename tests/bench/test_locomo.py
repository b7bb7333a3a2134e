"""Loading LoCoMo: dates, the nine malformed evidence ids, turns as memories."""

import json
from pathlib import Path

import pytest

from chitta.bench.environment import default_locomo
from chitta.bench.locomo import (
    TUNE_SPLIT,
    load,
    parse_selection,
    parse_session_time,
    repair_evidence,
)
from chitta.errors import BadArgument, BadDate

KNOWN = {"D8:6", "D9:17", "D11:26", "D30:5", "D9:1", "D4:4", "D4:6", "D1:1"}


def test_session_times() -> None:
    assert parse_session_time("1:56 pm on 8 May, 2023") == 1683554160000
    assert parse_session_time("12:37 am on 31 October, 2022") == 1667176620000
    with pytest.raises(BadDate):
        parse_session_time("yesterday afternoon")


@pytest.mark.parametrize(
    ("raw", "ids", "dropped"),
    [
        ("D8:6; D9:17", ("D8:6", "D9:17"), ()),
        ("D:11:26", ("D11:26",), ()),
        ("D30:05", ("D30:5",), ()),
        ("D9:1 D4:4 D4:6", ("D9:1", "D4:4", "D4:6"), ()),
        ("D", (), ("D",)),
        ("D10:19", (), ("D10:19",)),  # well formed, but the conversation has no such turn
        ("D8:6, D77:1", ("D8:6",), ("D77:1",)),
    ],
)
def test_repair_is_exact(raw: str, ids: tuple, dropped: tuple) -> None:
    assert repair_evidence(raw, KNOWN) == (ids, dropped)


@pytest.mark.skipif(not default_locomo().is_file(), reason="needs ../shared/data/locomo10.json")
def test_the_shared_file() -> None:
    data = load(default_locomo())
    assert len(data.conversations) == 10
    assert sum(len(c.turns) for c in data.conversations) == 5882
    assert len(data.questions) == 1986
    raws = sorted(r.raw for r in data.repairs)
    nine = ["D8:6; D9:17", "D10:19", "D", "D:11:26", "D4:36", "D9:1 D4:4 D4:6",
            "D22:1 D22:2 D9:10 D9:11", "D21:18 D21:22 D11:15 D11:19", "D30:05"]  # fmt: skip
    assert raws == sorted(nine)
    dropped = sorted(d for r in data.repairs for d in r.dropped)
    assert dropped == ["D", "D10:19", "D4:36"]
    turns = {t.id: t for t in data.conversations[0].turns}
    assert all(q.gold and set(q.gold) <= turns.keys() for q in data.conversations[0].questions
               if q.gold)  # fmt: skip


def test_turn_text_carries_the_caption(tmp_path: Path) -> None:
    sample = [{
        "sample_id": "s1",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bob",
            "session_1_date_time": "9:00 am on 1 January, 2024",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "Look at this!",
                 "blip_caption": "a photo of a cat"},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Lovely cat."},
            ],
        },
        "qa": [{"question": "What did Ann show?", "evidence": ["D1:01"], "category": 4},
               {"question": "Unanswerable?", "evidence": [], "category": 5}],
    }]  # fmt: skip
    path = tmp_path / "mini.json"
    path.write_text(json.dumps(sample))
    data = load(path)
    first = data.conversations[0].turns[0]
    assert first.memory_text == "Ann: Look at this! [image: a photo of a cat]"
    assert first.event_time == 1704099600000
    assert data.questions[0].gold == ("D1:1",) and data.questions[1].gold == ()


def test_bad_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(BadArgument, match="no benchmark file"):
        load(tmp_path / "missing.json")
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(BadArgument, match="not JSON"):
        load(tmp_path / "x.json")
    (tmp_path / "y.json").write_text(json.dumps([{"conversation": {"session_1": [{}]}}]))
    with pytest.raises(BadArgument, match="malformed"):
        load(tmp_path / "y.json")


@pytest.mark.skipif(not default_locomo().is_file(), reason="needs ../shared/data/locomo10.json")
def test_conversation_selection() -> None:
    path = default_locomo()
    tune = load(path, select=parse_selection("tune"))
    held = load(path, select=parse_selection("held-out"))
    assert [c.sample_id for c in tune.conversations] == list(TUNE_SPLIT)
    assert len(held.conversations) == 5
    assert not {c.sample_id for c in held.conversations} & set(TUNE_SPLIT)
    assert [c.sample_id for c in load(path, select=parse_selection("2")).conversations] == [
        "conv-26",
        "conv-30",
    ]
    assert len(load(path, select=parse_selection("conv-41,conv-26")).conversations) == 2
    with pytest.raises(BadArgument, match="no conversation 'conv-99'"):
        load(path, select=parse_selection("conv-99"))
    with pytest.raises(BadArgument, match="at least 1"):
        parse_selection("0")


def _longmemeval_item(sid: str, kind: str) -> dict:
    return {"sample_id": sid, "conversation": {"speaker_a": "user", "speaker_b": "assistant"},
            "qa": [{"question": "q", "evidence": [], "question_type": kind}]}  # fmt: skip


def test_longmemeval_halves_split_each_type_and_ignore_the_files_order() -> None:
    from chitta.bench.locomo import tune_half

    items = [_longmemeval_item(f"{kind[:3]}{i}", kind) for kind in ("multi-session",
             "knowledge-update", "temporal-reasoning") for i in range(7)]  # fmt: skip
    tune = tune_half(items)
    for kind in ("mul", "kno", "tem"):
        assert len({sid for sid in tune if sid.startswith(kind)}) == 4  # 7 rounded up
    assert tune_half(list(reversed(items))) == tune
    assert tune_half([{"sample_id": "conv-26", "qa": [{"category": 1}]}]) == set(TUNE_SPLIT)
