"""Claude Code's structured hook output: one JSON object on stdout.

Followed: Claude Code's hooks reference (code.claude.com/docs/en/hooks, "JSON output" and the
UserPromptSubmit and SessionStart sections; docs/hooks.md names the version). On exit code 0
Claude Code parses a JSON object on stdout; ``hookSpecificOutput.additionalContext`` (with
``hookEventName``, which it requires) goes into the model's context, ``systemMessage`` is
shown to the user only. Claude Code refuses the whole object if it holds a key it does not
know, so nothing else is written. Context beyond 10,000 characters would reach the model
only as a preview, so it is cut at whole lines below that.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

#: Claude Code puts at most this much additional context in full before the model.
MAX_CONTEXT_CHARS = 10_000


def within_limit(lines: Sequence[str], limit: int = MAX_CONTEXT_CHARS) -> list[str]:
    """The first of ``lines`` that fit in ``limit`` characters joined by newlines."""
    kept: list[str] = []
    used = 0
    for line in lines:
        used += len(line) + (1 if kept else 0)
        if used > limit:
            break
        kept.append(line)
    return kept


def hook_output(event: str, context: Sequence[str], system_message: str | None = None) -> str:
    """The JSON object for ``event`` (``UserPromptSubmit``, ``SessionStart``) carrying
    ``context`` lines for the model and ``system_message`` for the user; ``""`` (print
    nothing) when there is neither, so that no empty context reaches the model."""
    out: dict[str, object] = {}
    kept = within_limit(context)
    if kept:
        out["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": "\n".join(kept)}
    if system_message:
        out["systemMessage"] = system_message
    return json.dumps(out, ensure_ascii=False) if out else ""
