"""Checks and parsers for everything a caller hands chitta: content, tags, times, scopes.

Each raises a specific :class:`~chitta.errors.InputError` naming the bad value and what
would be accepted, before anything is written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from chitta.config import MAX_CONTENT_CHARS, MIN_CONTENT_CHARS
from chitta.errors import BadArgument, BadDate, BadScope, BadTags, ContentTooLong, ContentTooShort

# The size limits of what a caller sends, in characters. Each operation's parameters declare
# theirs (ops/), and the checks every edge runs (ops/spec.py check_params) enforce them, so
# the daemon never spends time or memory on a value no use needs.
#: A query: the embedder reads 256 tokens, and keyword terms beyond this say little more.
#: The prompt hook sends at most this much of a prompt (hooks/prompt.py).
MAX_QUERY_CHARS = 2_000
#: A realm, agent id or channel (check_scope_name's names).
MAX_SCOPE_CHARS = 128
#: A memory's or an edge's id (chitta's are 26-character ULIDs; imported ones may be longer).
MAX_ID_CHARS = 128
#: An agent session's id (Claude Code's are 36-character UUIDs).
MAX_SESSION_CHARS = 256
#: A file path or a URL (Linux's PATH_MAX).
MAX_PATH_CHARS = 4_096
#: One word: a kind, a lane, a choice, a tag, a date or time.
MAX_WORD_CHARS = 64
#: Any other short text.
MAX_TEXT_CHARS = 1_024
MAX_TAGS = 32
MAX_TAG_CHARS = MAX_WORD_CHARS
_TAG = re.compile(rf"^[\w][\w.:/+#-]{{0,{MAX_TAG_CHARS - 1}}}$", re.UNICODE)
#: A lone surrogate: a code point JSON's "\\ud800" or a command line's undecodable bytes
#: give, which no UTF-8 (and so no SQLite text) can hold.
SURROGATE = re.compile("[\ud800-\udfff]")
_SCOPE_NAME = re.compile(rf"^[\w][\w.:/@+-]{{0,{MAX_SCOPE_CHARS - 1}}}$", re.UNICODE)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MIN_MS = int(datetime(1900, 1, 1, tzinfo=UTC).timestamp() * 1000)
_MAX_MS = int(datetime(3000, 1, 1, tzinfo=UTC).timestamp() * 1000)


def check_content(content: object) -> str:
    """``content`` without surrounding whitespace, if the quality gate's length rules pass."""
    if not isinstance(content, str):
        raise BadArgument(f"content must be text, got {type(content).__name__}")
    text = content.strip()
    if not text:
        raise ContentTooShort("content is empty")
    if len(text) < MIN_CONTENT_CHARS:
        raise ContentTooShort(
            f"content is {len(text)} characters; a memory needs at least {MIN_CONTENT_CHARS} "
            "to say something recallable"
        )
    if len(text) > MAX_CONTENT_CHARS:
        message = too_long("content", len(text), MAX_CONTENT_CHARS)
        raise ContentTooLong(message + ContentTooLong.hint)
    return text


def scrub_text(text: str) -> str:
    """``text`` with each lone surrogate (text no UTF-8 can hold) replaced by U+FFFD."""
    return SURROGATE.sub("\ufffd", text)


def too_long(name: str, size: int, limit: int, unit: str = "characters") -> str:
    """The message of a :class:`~chitta.errors.TooLarge`: the value's size and the limit."""
    return f"{name} is {size:,} {unit}; the limit is {limit:,}"


def parse_tags(tags: str | Sequence[str] | None) -> tuple[str, ...]:
    """Tags from a comma-separated string or a list: lower-cased, de-duplicated, in order."""
    if tags is None:
        return ()
    if isinstance(tags, str):
        items = [t.strip() for t in tags.split(",")] if tags.strip() else []
        if "" in items:
            raise BadTags(f"tags {tags!r} has an empty item; separate tags with single commas")
    elif isinstance(tags, Sequence) and all(isinstance(t, str) for t in tags):
        items = [t.strip() for t in tags]
    else:
        raise BadTags("tags must be a comma-separated string or a list of strings")
    out = list(dict.fromkeys(t.lower() for t in items))
    bad = [t for t in out if not _TAG.match(t)]
    if bad:
        raise BadTags(
            f"bad tag {bad[0]!r}: a tag is 1-64 letters, digits or _ . : / + # -, "
            "starting with a letter or digit, no spaces"
        )
    if len(out) > MAX_TAGS:
        raise BadTags(f"{len(out)} tags; at most {MAX_TAGS} are allowed")
    return tuple(out)


def parse_time(value: object, what: str = "time") -> int | None:
    """Milliseconds since the epoch from ISO 8601 text, a datetime, or epoch ms.

    Text without a zone is read as UTC. ``None`` and ``""`` mean "not given".
    """
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise BadDate(f"{what} must be a date, got a boolean")
    if isinstance(value, int | float):
        if not math.isfinite(value):  # int() of NaN or infinity raises a bare ValueError
            raise BadDate(f"{what} {value!r} is not a date")
        ms = int(value)
    elif isinstance(value, datetime):
        ms = _datetime_ms(value)
    elif isinstance(value, str):
        try:
            ms = _datetime_ms(datetime.fromisoformat(value.strip()))
        except ValueError:
            raise BadDate(
                f"{what} {value!r} is not a date; use ISO 8601, e.g. 2026-11-29, "
                "2026-11-29T13:45 or 2026-11-29T13:45:00+01:00"
            ) from None
    else:
        raise BadDate(f"{what} must be ISO 8601 text or epoch milliseconds")
    if not _MIN_MS <= ms < _MAX_MS:
        raise BadDate(f"{what} {value!r} is outside the years 1900-2999")
    return ms


def _datetime_ms(value: datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    # Integer arithmetic: float timestamps lose a millisecond now and then.
    return (value - _EPOCH) // timedelta(milliseconds=1)


def format_time(ms: int | None) -> str | None:
    """ISO 8601 in UTC with milliseconds (exact for chitta's ms timestamps), or ``None``."""
    if ms is None:
        return None
    moment = _EPOCH + timedelta(milliseconds=ms)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def check_scope_name(value: object, axis: str, *, optional: bool = False) -> str | None:
    """A realm, agent id or channel name, or :class:`BadScope`."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or not _SCOPE_NAME.match(value):
        raise BadScope(
            f"bad {axis} {value!r}: use 1-128 letters, digits or _ . : / @ + -, "
            "starting with a letter or digit"
        )
    return value
