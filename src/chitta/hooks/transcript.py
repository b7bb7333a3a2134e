"""The last turn of a Claude Code transcript (JSONL), read from the end within a byte bound.

Each line is an event; ``{"type": "user", "message": {"content": …}}`` and
``{"type": "assistant", "message": {"content": [{"type": "text", "text": …}, …]}}`` carry the
conversation. A user line whose content is only tool results is not a prompt. Claude Code
stamps each line with an ISO 8601 ``timestamp``; the prompt's is when the turn happened.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: How much of the transcript's end is read: a turn's prompt and reply, with tool traffic.
TAIL_BYTES = 512 * 1024


@dataclass(frozen=True, slots=True)
class Turn:
    prompt: str
    reply: str
    at: str | None = None  # the prompt line's timestamp, as the transcript gives it


def _tail_lines(path: Path, limit: int) -> list[str]:
    with path.open("rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        fh.seek(max(0, size - limit))
        data = fh.read(limit)
    lines = data.decode("utf-8", errors="replace").splitlines()
    return lines[1:] if size > limit else lines  # the first line may be cut


def _text(content: Any) -> str:
    """The text of a message's content (a string, or blocks of which the text ones count)."""
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        parts = [b.get("text", "") for b in content
                 if isinstance(b, dict) and b.get("type") == "text"]  # fmt: skip
        return "\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip())
    return ""


def _message(line: str) -> tuple[str, str, str | None] | None:
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if not isinstance(event, dict) or event.get("type") not in ("user", "assistant"):
        return None
    message = event.get("message")
    if not isinstance(message, dict) or event.get("isMeta"):
        return None
    stamp = event.get("timestamp")
    return event["type"], _text(message.get("content")), stamp if isinstance(stamp, str) else None


def last_turn(path: Path, limit: int = TAIL_BYTES) -> Turn | None:
    """The last user prompt and the assistant text after it, or None if the tail has none."""
    reply: list[str] = []
    for line in reversed(_tail_lines(path, limit)):
        found = _message(line)
        if found is None or not found[1]:
            continue
        role, text, stamp = found
        if role == "assistant":
            reply.append(text)
        else:
            return Turn(prompt=text, reply="\n".join(reversed(reply)), at=stamp)
    return None
