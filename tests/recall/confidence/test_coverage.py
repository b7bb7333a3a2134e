"""The coverage ledger (seed 002 §1.5): normalization, the parts, coverage, no text, errors."""

import json
import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chitta.recall.confidence.coverage import (
    IDENTIFIER_KIND,
    KANJI,
    KATAKANA,
    KINDS,
    MAX_PARTS,
    NORMALIZATION,
    Part,
    ledger,
    normalize,
    parts,
    safe_ledger,
)


def _parts(question: str) -> list[tuple[str, str]]:
    """(text, kind) of each part of ``question``, as a caller holding it recovers them."""
    normalized = normalize(question)
    found, _ = parts(normalized)
    return [(normalized[p.span[0] : p.span[1]], p.kind) for p in found]


def _texts(question: str) -> list[str]:
    return [text for text, _ in _parts(question)]


# --- normalization ---------------------------------------------------------------------------


def test_normalize_is_nfkc_then_lower_case() -> None:
    assert NORMALIZATION == "nfkc-lower"
    assert normalize("Kafka API") == "kafka api"
    assert normalize("ＡＰＩ．ｐｙ　＃３５４") == "api.py #354"  # full-width ASCII and space
    assert normalize("ｶﾞｲﾄﾞﾌﾞｯｸ") == "ガイドブック"  # half-width katakana, voiced marks composed
    assert normalize("ｰ") == "ー"
    assert normalize("㌔") == "キロ"  # a squared katakana word


# --- the parts: Japanese ---------------------------------------------------------------------


def test_tokyo_tower() -> None:
    # 高 is a lone kanji, の and は are hiragana, ？ is punctuation: none is a part.
    assert _parts("東京タワーの高さは？") == [("東京", KANJI), ("タワー", KATAKANA)]


def test_mixed_japanese_and_identifiers() -> None:
    assert _parts("バグ bug-218 を #354 で直した") == [
        ("バグ", KATAKANA),
        ("bug-218", IDENTIFIER_KIND),
        ("#354", IDENTIFIER_KIND),
    ]


def test_identifiers_may_touch_japanese_without_spaces() -> None:
    assert _parts("Kafkaの設定はbug-218で2026年に直した") == [
        ("kafka", IDENTIFIER_KIND),
        ("設定", KANJI),
        ("bug-218", IDENTIFIER_KIND),
        ("2026", IDENTIFIER_KIND),
    ]


def test_kanji_and_katakana_runs_are_cut_by_script() -> None:
    assert _parts("東京タワー") == [("東京", KANJI), ("タワー", KATAKANA)]
    assert _parts("データベース設計") == [("データベース", KATAKANA), ("設計", KANJI)]


@pytest.mark.parametrize("question", ["高い", "食べ物", "ひらがなだけ", "カ", "のカの", "ア・イ"])
def test_hiragana_and_lone_characters_are_not_parts(question: str) -> None:
    assert _parts(question) == []


def test_the_prolonged_sound_mark_belongs_to_katakana() -> None:
    assert _parts("コーヒーとサーバー") == [("コーヒー", KATAKANA), ("サーバー", KATAKANA)]


def test_the_middle_dot_separates_katakana_words() -> None:
    assert _texts("ジョン・スミスさん") == ["ジョン", "スミス"]


def test_kanji_marks_belong_to_kanji_runs() -> None:
    assert _parts("佐々木さんと人々") == [("佐々木", KANJI), ("人々", KANJI)]
    assert _texts("二〇二六年に〆切") == ["二〇二六年", "〆切"]


def test_half_width_katakana_become_parts_through_nfkc() -> None:
    question = "ｻｰﾊﾞｰのﾃﾞｰﾀﾍﾞｰｽ"
    assert _parts(question) == [("サーバー", KATAKANA), ("データベース", KATAKANA)]


def test_full_width_ascii_becomes_identifiers_through_nfkc() -> None:
    assert _parts("ＢＵＧ－２１８と＃３５４とａｐｉ．ｐｙ") == [
        ("bug-218", IDENTIFIER_KIND),
        ("#354", IDENTIFIER_KIND),
        ("api.py", IDENTIFIER_KIND),
    ]


# --- the parts: identifiers ------------------------------------------------------------------


def test_english_words_of_two_letters_or_more_are_parts() -> None:
    assert _texts("Where is the Kafka broker, I wonder?") == [
        "where",
        "is",
        "the",
        "kafka",
        "broker",
        "wonder",
    ]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Is 2.5.5a1 out?", ["is", "2.5.5a1", "out"]),
        ("Released in 2.5.5a1.", ["released", "in", "2.5.5a1"]),
        ("fixed by bug-218, right", ["fixed", "by", "bug-218", "right"]),
        ("see #354: the fix", ["see", "#354", "the", "fix"]),
        ("what is in api.py?", ["what", "is", "in", "api.py"]),
        ("open src/chitta/api.py.", ["open", "src/chitta/api.py"]),
        ("edit /etc/hosts now", ["edit", "/etc/hosts", "now"]),
        ("~/.bashrc and ../lib/x.py", ["~/.bashrc", "and", "../lib/x.py"]),
        ("the .env file", ["the", ".env", "file"]),
        ("C:\\Temp\\x.txt", ["c:\\temp\\x.txt"]),
        ("localhost:8080 or user@example.com", ["localhost:8080", "or", "user@example.com"]),
        ("@types/node in __init__.py", ["@types/node", "in", "__init__.py"]),
        ("c++ and c# and f#.", ["c++", "and", "c#", "f#"]),
        ("kafka: down; (redis) [pg] 'lru' \"ttl\"", ["kafka", "down", "redis", "pg", "lru", "ttl"]),
        ("...kafka --verbose", ["kafka", "verbose"]),
        ("don't", ["don"]),
        ("3.14 and v2", ["3.14", "and", "v2"]),
    ],
)
def test_identifiers(question: str, expected: list[str]) -> None:
    assert _texts(question) == expected
    assert {kind for _, kind in _parts(question)} <= {IDENTIFIER_KIND}


@pytest.mark.parametrize("question", ["a", "7", "I", "a b c 1 2 3", "x. y? z,", "#", "/", "-"])
def test_single_characters_are_not_parts(question: str) -> None:
    assert _parts(question) == []


def test_short_identifiers_of_two_characters_are_parts() -> None:
    assert _texts("#3 go 42 x1") == ["#3", "go", "42", "x1"]


def test_words_of_other_latin_letters_are_not_ascii_identifiers() -> None:
    # A word is taken whole or not at all: no "caf" from café.
    assert _texts("café naïve kafka") == ["kafka"]


def test_parts_are_in_order_of_first_appearance_each_once() -> None:
    normalized = normalize("Kafka 東京 kafka KAFKA 東京 タワー kafka")
    found, omitted = parts(normalized)
    assert [(normalized[p.span[0] : p.span[1]], p.kind) for p in found] == [
        ("kafka", IDENTIFIER_KIND),
        ("東京", KANJI),
        ("タワー", KATAKANA),
    ]
    assert found[0].span == (0, 5)  # the first appearance
    assert omitted == 0


def test_spans_recover_the_parts_from_the_normalized_question() -> None:
    question = "ＡＰＩ．ｐｙの東京タワーは#354?"
    normalized = normalize(question)
    found, _ = parts(normalized)
    assert [normalized[a:b] for a, b in (p.span for p in found)] == [
        "api.py",
        "東京",
        "タワー",
        "#354",
    ]
    assert [p.span for p in found] == [(0, 6), (7, 9), (9, 12), (13, 17)]
    assert found[0].text(normalized) == "api.py"


def test_at_most_32_parts_the_rest_counted() -> None:
    words = [f"w{i:02d}" for i in range(40)]
    question = " ".join(words + words)  # each repeated: still 40 distinct parts
    found, omitted = parts(normalize(question))
    assert len(found) == MAX_PARTS == 32
    assert omitted == 8
    assert [normalize(question)[a:b] for a, b in (p.span for p in found)] == words[:32]
    assert parts(normalize(" ".join(words[:32]))) == (parts(normalize(question))[0], 0)


def test_part_as_dict() -> None:
    assert Part((3, 7), KANJI).as_dict() == {"span": [3, 7], "kind": "kanji"}


# --- the ledger ------------------------------------------------------------------------------


def test_ledger_fields_and_coverage() -> None:
    records = [
        ("r1", "The Kafka broker was restarted."),
        ("r2", "東京タワーは333メートル"),
        ("r3", "bug-218 was fixed in 2.5.5a1"),
    ]
    out = ledger("Kafka bug-218 東京 Redis", records)
    assert out == {
        "normalization": "nfkc-lower",
        "parts": [
            {"span": [0, 5], "kind": "identifier"},
            {"span": [6, 13], "kind": "identifier"},
            {"span": [14, 16], "kind": "kanji"},
            {"span": [17, 22], "kind": "identifier"},
        ],
        "covered_by": [["r1"], ["r3"], ["r2"], []],
        "uncovered": [3],
        "records": 3,
    }
    assert list(out) == ["normalization", "parts", "covered_by", "uncovered", "records"]


def test_covered_by_lists_refs_in_record_order() -> None:
    records = [("c", "kafka"), ("a", "no"), ("b", "KAFKA again"), ("d", "Kafka")]
    assert ledger("kafka", records)["covered_by"] == [["c", "b", "d"]]
    assert ledger("kafka", list(reversed(records)))["covered_by"] == [["d", "b", "c"]]


def test_a_ref_given_twice_is_listed_once() -> None:
    records = [("a", "kafka"), ("b", "kafka"), ("a", "kafka")]
    out = ledger("kafka", records)
    assert out["covered_by"] == [["a", "b"]]
    assert out["records"] == 3


def test_coverage_is_a_substring_of_the_full_text() -> None:
    # A part inside a longer word counts: that is what a substring match means.
    records = [("r1", "Kafkaesque"), ("r2", "東京都に住んでいる"), ("r3", "see bug-2180")]
    out = ledger("kafka 東京 bug-218", records)
    assert out["covered_by"] == [["r1"], ["r2"], ["r3"]]
    assert out["uncovered"] == []


def test_a_word_split_across_lines_or_spaces_is_not_covered() -> None:
    out = ledger("bug-218 東京", [("r1", "bug - 218"), ("r2", "東\n京")])
    assert out["covered_by"] == [[], []]
    assert out["uncovered"] == [0, 1]


def test_record_text_is_normalized_like_the_question() -> None:
    records = [
        ("upper", "KAFKA"),
        ("full-width", "ｂｕｇ－２１８ is fixed"),
        ("half-width", "ﾀﾜｰに登った"),
    ]
    out = ledger("kafka BUG-218 タワー", records)
    assert out["covered_by"] == [["upper"], ["full-width"], ["half-width"]]


def test_uncovered_are_the_indices_of_parts_no_record_holds() -> None:
    out = ledger("alpha beta gamma delta", [("r1", "beta"), ("r2", "delta and beta")])
    assert out["covered_by"] == [[], ["r1", "r2"], [], ["r2"]]
    assert out["uncovered"] == [0, 2]


def test_no_records_leaves_every_part_uncovered() -> None:
    out = ledger("東京タワーの高さは？", [])
    assert out["records"] == 0
    assert out["covered_by"] == [[], []]
    assert out["uncovered"] == [0, 1]


def test_a_question_without_parts() -> None:
    out = ledger("の？", [("r1", "text")])
    assert out == {
        "normalization": "nfkc-lower",
        "parts": [],
        "covered_by": [],
        "uncovered": [],
        "records": 1,
    }


def test_parts_omitted_only_when_over_32() -> None:
    words = [f"w{i:02d}" for i in range(35)]
    out = ledger(" ".join(words), [("r1", "w00 w34")])
    assert out["parts_omitted"] == 3
    assert len(out["parts"]) == len(out["covered_by"]) == 32
    assert out["covered_by"][0] == ["r1"]
    assert out["uncovered"] == list(range(1, 32))  # w34 was omitted, not counted
    assert "parts_omitted" not in ledger(" ".join(words[:32]), [])


@pytest.mark.parametrize(
    ("question", "records", "secrets"),
    [
        (
            "Which zookeeper quorum handled the retention rollover?",
            [("mem-0001", "The zookeeper quorum lost a follower"), ("mem-0002", "rollover ok")],
            ["which", "zookeeper", "quorum", "handled", "retention", "rollover", "follower"],
        ),
        (
            "東京タワーの高さは？ bug-218",
            [("mem-0001", "東京タワーは333メートル"), ("mem-0002", "bug-218は修正済み")],
            ["東京", "タワー", "高さ", "メートル", "bug-218", "修正", "333"],
        ),
    ],
)
def test_no_text_in_the_ledger(
    question: str, records: list[tuple[str, str]], secrets: list[str]
) -> None:
    out = ledger(question, records)
    assert out["covered_by"] and any(out["covered_by"])  # something was matched
    dumped = json.dumps(out, ensure_ascii=False)
    for secret in secrets:
        assert secret not in dumped
    # Nothing but the fixed field names, the kinds and the refs is a string.
    strings = set()

    def walk(value: object) -> None:
        if isinstance(value, str):
            strings.add(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                strings.add(key)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(out)
    fields = {"normalization", "parts", "covered_by", "uncovered", "records", "span", "kind"}
    assert strings <= fields | {NORMALIZATION} | set(KINDS) | {ref for ref, _ in records}


# --- safe_ledger: the error path and the timing ----------------------------------------------


def test_safe_ledger_returns_the_ledger_and_its_time() -> None:
    records = [("r1", "kafka")]
    out, ms = safe_ledger("kafka", records)
    assert out == ledger("kafka", records)
    assert isinstance(ms, float) and ms >= 0


@pytest.mark.parametrize(
    ("question", "records", "error"),
    [
        ("kafka", [("r1", None)], "TypeError"),  # a record without text
        ("kafka", [("r1", b"kafka")], "TypeError"),
        (None, [("r1", "kafka")], "TypeError"),
        ("kafka", [("r1", "kafka", "extra")], "ValueError"),
        ("kafka", None, "TypeError"),
    ],
)
def test_safe_ledger_reports_the_error_type_when_it_cannot_be_built(
    question: object, records: object, error: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="chitta.recall.confidence.coverage"):
        out, ms = safe_ledger(question, records)  # type: ignore[arg-type]
    assert out == {"error": error}
    assert ms >= 0
    assert caplog.messages == [f"coverage ledger not built: {error}"]  # the type, no text


def test_ledger_itself_raises() -> None:
    with pytest.raises(TypeError):
        ledger("kafka", [("r1", None)])  # type: ignore[list-item]


# --- properties ------------------------------------------------------------------------------

_ALPHABET = st.one_of(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E),  # ASCII
    st.sampled_from("あいうのはをでしたー・゠々〆〇ヶ ー"),
    st.characters(min_codepoint=0x30A1, max_codepoint=0x30FF),  # katakana
    st.characters(min_codepoint=0x4E00, max_codepoint=0x4E40),  # kanji
    st.characters(min_codepoint=0xFF01, max_codepoint=0xFF9F),  # full-width ASCII, half-width kana
    st.sampled_from("éïİß\u0301\u3099ＫΩ한"),
)
_TEXT = st.one_of(st.text(_ALPHABET, max_size=80), st.text(max_size=40))
_REFS = st.sampled_from(["r1", "r2", "r3", "r4"])
_RECORDS = st.lists(st.tuples(_REFS, _TEXT), max_size=5)


def _is_kanji(c: str) -> bool:
    o = ord(c)
    return (
        0x3005 <= o <= 0x3007
        or 0x3400 <= o <= 0x4DBF
        or 0x4E00 <= o <= 0x9FFF
        or c in "\ufa0e\ufa0f\ufa11\ufa13\ufa14\ufa1f\ufa21\ufa23\ufa24\ufa27\ufa28\ufa29"
        or 0x20000 <= o <= 0x2A6DF
        or 0x2A700 <= o <= 0x2EE5F
        or 0x30000 <= o <= 0x323AF
    )


def _is_katakana(c: str) -> bool:
    o = ord(c)
    return 0x30A1 <= o <= 0x30FA or 0x30FC <= o <= 0x30FF or 0x31F0 <= o <= 0x31FF


def _is_word(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c == "_")


@settings(max_examples=150, deadline=None)
@given(_TEXT)
def test_every_span_recovers_a_part_of_its_kind(question: str) -> None:
    normalized = normalize(question)
    found, omitted = parts(normalized)
    assert len(found) <= MAX_PARTS
    assert omitted == 0 or len(found) == MAX_PARTS
    texts = [normalized[p.span[0] : p.span[1]] for p in found]
    assert len(set(texts)) == len(texts)  # each part once
    ends = [0] + [b for _, b in (p.span for p in found)]
    for part, text, previous_end in zip(found, texts, ends, strict=False):
        start, end = part.span
        assert start >= previous_end  # in order, never overlapping
        assert len(text) >= 2
        before = normalized[start - 1] if start else ""
        after = normalized[end] if end < len(normalized) else ""
        if part.kind == KANJI:
            assert all(_is_kanji(c) for c in text)
            assert not (before and _is_kanji(before)) and not (after and _is_kanji(after))
        elif part.kind == KATAKANA:
            assert all(_is_katakana(c) for c in text)
            assert not (before and _is_katakana(before))
            assert not (after and _is_katakana(after))
        else:
            assert part.kind == IDENTIFIER_KIND
            assert text.isascii()
            assert any(_is_word(c) for c in text)
            assert _is_word(text[-1]) or text[-1] in "+#"
            assert not (before and _is_word(before)) and not (after and _is_word(after))


@settings(max_examples=150, deadline=None)
@given(_TEXT, _RECORDS)
def test_ledger_invariants(question: str, records: list[tuple[str, str]]) -> None:
    out = ledger(question, records)
    normalized = normalize(question)
    assert out["normalization"] == NORMALIZATION
    assert out["records"] == len(records)
    assert len(out["parts"]) <= MAX_PARTS
    assert len(out["covered_by"]) == len(out["parts"])
    given_refs = [ref for ref, _ in records]

    def needle_of(part: dict) -> str:
        return normalized[part["span"][0] : part["span"][1]]

    for part, refs in zip(out["parts"], out["covered_by"], strict=True):
        assert set(refs) <= set(given_refs)
        # In the order the records are listed (a ref given twice: at its first covering).
        first = [ref for ref, text in records if needle_of(part) in normalize(text)]
        assert refs == list(dict.fromkeys(first))
        assert len(set(refs)) == len(refs)
        needle = normalized[part["span"][0] : part["span"][1]]
        holders = {ref for ref, text in records if needle in normalize(text)}
        assert set(refs) == holders
    assert out["uncovered"] == [i for i, refs in enumerate(out["covered_by"]) if not refs]
    assert ("parts_omitted" in out) == (parts(normalized)[1] > 0)
    assert safe_ledger(question, records)[0] == out
    json.dumps(out)  # plain JSON
