"""Input checks: each bad value gets a specific error naming it."""

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chitta.config import MAX_CONTENT_CHARS
from chitta.errors import BadArgument, BadDate, BadScope, BadTags, ContentTooLong, ContentTooShort
from chitta.validate import check_content, check_scope_name, format_time, parse_tags, parse_time


def test_content_is_stripped_and_length_checked() -> None:
    assert check_content("  a memory worth keeping \n") == "a memory worth keeping"
    with pytest.raises(ContentTooShort, match="empty"):
        check_content("   ")
    with pytest.raises(ContentTooShort, match="4 characters"):
        check_content("tiny")
    with pytest.raises(ContentTooLong, match="limit"):
        check_content("x" * (MAX_CONTENT_CHARS + 1))
    with pytest.raises(BadArgument, match="text"):
        check_content(42)


def test_tags_from_string_or_list() -> None:
    assert parse_tags("Storage, decision,storage") == ("storage", "decision")
    assert parse_tags(["a", "b"]) == ("a", "b")
    assert parse_tags("") == ()
    assert parse_tags(None) == ()


@pytest.mark.parametrize(
    "bad", ["a,,b", "has space", "-lead", "x" * 70, ",".join(f"t{i}" for i in range(40))]
)
def test_malformed_tags_are_refused(bad: str) -> None:
    with pytest.raises(BadTags):
        parse_tags(bad)


def test_tags_of_wrong_type() -> None:
    with pytest.raises(BadTags):
        parse_tags([1, 2])  # type: ignore[list-item]


def test_times_parse_to_utc_milliseconds() -> None:
    assert parse_time("2026-11-29") == int(datetime(2026, 11, 29, tzinfo=UTC).timestamp() * 1000)
    assert parse_time("2026-11-29T13:45:00+01:00") == int(
        datetime(2026, 11, 29, 12, 45, tzinfo=UTC).timestamp() * 1000
    )
    assert parse_time(None) is None and parse_time("") is None
    assert parse_time(1_700_000_000_000) == 1_700_000_000_000


@pytest.mark.parametrize("bad", ["yesterday", "2026-13-01", "29/11/2026", True, [2026]])
def test_bad_dates_are_refused(bad: object) -> None:
    with pytest.raises(BadDate):
        parse_time(bad)


def test_dates_out_of_range() -> None:
    with pytest.raises(BadDate, match="1900-2999"):
        parse_time("0999-01-01")


@given(st.integers(min_value=-2_208_988_800_000, max_value=32_503_680_000_000 - 1))
def test_format_and_parse_round_trip(ms: int) -> None:
    assert parse_time(format_time(ms)) == ms


def test_scope_names() -> None:
    assert check_scope_name("my-project", "realm") == "my-project"
    assert check_scope_name(None, "agent_id", optional=True) is None
    for bad in ("", "has space", "-x", None, 3):
        with pytest.raises(BadScope):
            check_scope_name(bad, "realm")


def test_the_name_rules_and_the_size_limits_say_the_same_lengths() -> None:
    from chitta.validate import MAX_SCOPE_CHARS, MAX_TAG_CHARS

    assert check_scope_name("r" * MAX_SCOPE_CHARS, "realm") == "r" * MAX_SCOPE_CHARS
    with pytest.raises(BadScope):
        check_scope_name("r" * (MAX_SCOPE_CHARS + 1), "realm")
    assert parse_tags(["t" * MAX_TAG_CHARS]) == ("t" * MAX_TAG_CHARS,)
    with pytest.raises(BadTags):
        parse_tags(["t" * (MAX_TAG_CHARS + 1)])


def test_scrub_text_replaces_lone_surrogates_only() -> None:
    from chitta.validate import scrub_text

    assert scrub_text("caf\udce9 \ud800x 😀") == "caf\ufffd \ufffdx 😀"
    assert scrub_text("plain") == "plain"
