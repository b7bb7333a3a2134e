"""The hooks' context lines: ages in words, facts in order, Claude Code's JSON shape."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from chitta.hooks.output import MAX_CONTEXT_CHARS, hook_output
from chitta.hooks.render import age, memory_line, own_answer

NOW = 1_800_000_000.0
DAY = 86_400


def _iso(seconds_ago: float) -> str:
    return datetime.fromtimestamp(NOW - seconds_ago, tz=UTC).isoformat()


def test_an_age_is_said_in_the_largest_whole_unit() -> None:
    assert age(_iso(-60), NOW) == "just now"  # a clock a little ahead
    assert age(_iso(30), NOW) == "just now"
    assert age(_iso(61), NOW) == "1 minute ago"
    assert age(_iso(3 * 3600 + 5), NOW) == "3 hours ago"
    assert age(_iso(DAY), NOW) == "1 day ago"
    assert age(_iso(3 * DAY), NOW) == "3 days ago"
    assert age(_iso(15 * DAY), NOW) == "2 weeks ago"
    assert age(_iso(400 * DAY), NOW) == "1 year ago"
    assert age("2027-01-15T08:00:00.000Z", NOW) != ""  # chitta's own ISO form
    assert age("not a time", NOW) == ""


def test_a_memory_line_states_kind_realm_speaker_and_id() -> None:
    row = {
        "id": "01ABC",
        "kind": "episode",
        "realm": "ops",
        "content": "a  b\nc",
        "source": {"session": "s1", "role": "assistant"},
        "created_at": "2020-01-01T00:00:00Z",
    }
    line = memory_line(row, 200, "demo")
    assert line.startswith("- episode, from realm ops, the assistant's earlier answer, ")
    assert line.endswith(" ago, id 01ABC: a b c")
    assert "realm" not in memory_line(row, 200, "ops")
    assert own_answer(row, "s1") and not own_answer(row, "s2") and not own_answer(row, None)
    assert not own_answer({**row, "source": {"session": "s1", "role": "user"}}, "s1")


def test_hook_output_is_claude_codes_json_or_nothing() -> None:
    assert hook_output("UserPromptSubmit", []) == ""
    out = json.loads(hook_output("SessionStart", ["a", "b"]))
    assert out == {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                          "additionalContext": "a\nb"}}  # fmt: skip
    long = json.loads(hook_output("UserPromptSubmit", ["x" * 3000] * 5))
    text = long["hookSpecificOutput"]["additionalContext"]
    assert len(text) <= MAX_CONTEXT_CHARS and text.count("\n") == 2  # whole lines only


def test_a_possibly_outdated_memory_names_the_newer_one_the_model_sees() -> None:
    row = {"id": "OLD", "kind": "episode", "content": "Premier Silver", "newer": "NEW",
           "created_at": "2020-01-01T00:00:00Z"}  # fmt: skip
    assert memory_line(row, 200, newer_known=True).endswith(
        "ago, id OLD, may be outdated by id NEW: Premier Silver"
    )
    assert "outdated" not in memory_line(row, 200)  # the newer one is not in the context
    superseded = {**row, "superseded_by": "NEW"}
    assert "superseded by id NEW: " in memory_line(superseded, 200)
    assert "NEW" not in memory_line({**row, "newer": None}, 200, newer_known=True)
