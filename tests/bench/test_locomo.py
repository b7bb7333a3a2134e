"""Loading LoCoMo: dates, the nine malformed evidence ids, turns as memories."""

import json
from pathlib import Path

import pytest

from chitta.bench.environment import default_locomo
from chitta.bench.locomo import (
    LOCOMO,
    LONGMEMEVAL,
    LONGMEMEVAL_TYPES,
    TUNE_SPLIT,
    Categories,
    load,
    parse_question_date,
    parse_selection,
    parse_session_time,
    repair_evidence,
)
from chitta.errors import BadArgument, BadDate
from chitta.validate import parse_time

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


def _longmemeval_file(tmp_path: Path, dates: dict[str, object]) -> Path:
    """One question a conversation, as ../shared/data/README.md writes LongMemEval."""
    codes = {kind: code for code, kind in LONGMEMEVAL_TYPES.items()}
    items = []
    for sid, (kind, date) in enumerate(dates.items()):
        items.append({
            "sample_id": f"q{sid}",
            "conversation": {"speaker_a": "user", "speaker_b": "assistant",
                             "session_1_date_time": "3:08 pm on 20 May, 2023",
                             "session_1": [{"speaker": "user", "dia_id": "D1:1",
                                            "text": "I bought a red bicycle yesterday."}]},
            "qa": [{"question": "What did I buy?", "answer": "a bicycle", "evidence": ["D1:1"],
                    "category": codes[kind], "question_type": kind, "question_date": date}],
        })  # fmt: skip
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(items))
    return path


def test_longmemeval_questions_carry_their_type_and_date(tmp_path: Path) -> None:
    path = _longmemeval_file(tmp_path, {"knowledge-update": "2023/05/30 (Tue) 03:16",
                                        "temporal-reasoning": "2023-06-01T10:00"})  # fmt: skip
    data = load(path)
    first, second = data.questions
    assert first.question_type == "knowledge-update" and first.category == 5
    assert first.now_ms == parse_time("2023-05-30T03:16:00Z")
    assert second.now_ms == parse_time("2023-06-01T10:00")  # ISO 8601 is read too
    assert data.categories is LONGMEMEVAL
    assert data.categories.keys() == ("1", "2", "3", "4", "5", "6", "all")  # no "1-4"
    assert data.categories.label("5") == "knowledge-update (5)"
    assert parse_question_date("2023/01/08 (Sun) 23:59") == parse_time("2023-01-08T23:59")


@pytest.mark.parametrize("bad", ["2023/13/30 (Tue) 03:16", "30 May 2023", "2023/05/30", 17])
def test_a_bad_question_date_names_the_question(tmp_path: Path, bad: object) -> None:
    path = _longmemeval_file(tmp_path, {"multi-session": "2023/05/30 (Tue) 03:16",
                                        "knowledge-update": bad})  # fmt: skip
    with pytest.raises(BadDate, match=r"question 0 of q1: .*not a .*date"):
        load(path)


def test_a_locomo_file_keeps_locomos_categories(tiny_locomo, tmp_path: Path) -> None:
    data = load(tiny_locomo.write(tmp_path / "t.json", {"conv-a": ["x"]}))
    assert data.categories is LOCOMO and data.questions[0].now_ms is None
    assert LOCOMO.keys() == ("1", "2", "3", "4", "5", "1-4", "all")
    assert Categories.from_record(LONGMEMEVAL.as_record()) == LONGMEMEVAL
    assert Categories.from_record(None) is LOCOMO  # a results file from before


def test_another_files_types_name_its_categories_and_must_agree(tmp_path: Path) -> None:
    items = [{"sample_id": f"s{i}", "conversation": {"session_1": []},
              "qa": [{"question": "q", "evidence": [], "category": 1, "question_type": kind}]}
             for i, kind in enumerate(["gossip", "gossip"])]  # fmt: skip
    (tmp_path / "chats.json").write_text(json.dumps(items))
    mine = load(tmp_path / "chats.json").categories
    assert mine.dataset == "chats" and dict(mine.names) == {1: "gossip"}
    items[1]["qa"][0]["question_type"] = "rumour"
    (tmp_path / "chats.json").write_text(json.dumps(items))
    with pytest.raises(BadArgument, match="category 1 is both 'gossip' and 'rumour'"):
        load(tmp_path / "chats.json")


LONGMEMEVAL_DEV = default_locomo().with_name("longmemeval_s_dev60.json")


@pytest.mark.skipif(not LONGMEMEVAL_DEV.is_file(), reason="needs longmemeval_s_dev60.json")
def test_the_shared_longmemeval_sample() -> None:
    data = load(LONGMEMEVAL_DEV, select=parse_selection("tune"))
    assert data.categories is LONGMEMEVAL
    assert len(data.questions) == 30 and all(q.now_ms for q in data.questions)
    kinds = [q.question_type for q in data.questions]
    assert {kinds.count(k) for k in LONGMEMEVAL_TYPES.values()} == {5}
