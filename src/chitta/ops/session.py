"""Operations on agent sessions: what the hooks put into a session's context."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta.config import MAX_CONTENT_CHARS
from chitta.ops.spec import Context, Operation, Param, Params
from chitta.recall.shown import MAX_IDS
from chitta.validate import MAX_ID_CHARS, MAX_SESSION_CHARS

if TYPE_CHECKING:
    from chitta.api import Chitta


#: The agent session an operation of this module is about.
SESSION_ID = Param("session", "text", "The agent session (Claude Code's session_id).",
                   required=True, positional=True, max_length=MAX_SESSION_CHARS)  # fmt: skip


def _session_shown(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    shown = chitta.session_shown(p["session"], add=p.get("add") or (),
                                 forget=p.get("forget", False))  # fmt: skip
    return {"session": p["session"], "shown": list(shown)}


SESSION_SHOWN = Operation(
    "session_shown",
    "The memory ids the hooks put into SESSION's context; --add records more, --forget "
    "starts the set afresh (first).",
    (
        SESSION_ID,
        Param(
            "add",
            "list",
            "Memory ids just put into the session's context.",
            max_length=MAX_ID_CHARS,
            max_items=MAX_IDS,
        ),
        Param(
            "forget",
            "flag",
            "Forget the session's set before adding (after /compact, /clear).",
            default=False,
        ),
    ),  # fmt: skip
    _session_shown,
    detail="The prompt hook injects a memory into a session once (docs/hooks.md). The sets are "
    "kept in the store, bounded: the newest 256 sessions, 512 ids each.",
)


def _session_used(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    usage = chitta.session_used(p["session"], p["answer"], prompt=p.get("prompt") or "")
    return {"session": usage.session, "given": usage.given, "used": list(usage.used),
            "linked": usage.linked}  # fmt: skip


SESSION_USED = Operation(
    "session_used",
    "Which memories SESSION's last prompt was given that ANSWER draws on; those used "
    "together are linked (Hebbian co-access).",
    (
        SESSION_ID,
        Param(
            "answer",
            "text",
            "The assistant's answer to the session's last prompt.",
            required=True,
            max_length=MAX_CONTENT_CHARS,
        ),
        Param(
            "prompt",
            "text",
            "The prompt it answered: its words do not count as drawn from a memory.",
            max_length=MAX_CONTENT_CHARS,
        ),
    ),  # fmt: skip
    _session_used,
    detail="The Stop hook asks this after each answer (docs/hooks.md). A memory is drawn on "
    "when the answer repeats enough of its own words, the prompt's aside (docs/recall.md, "
    "Hebbian co-access); every pair of those used, when two or more, gains 0.03 of "
    "co-access weight, which the graph lane spreads over. The last prompt's memories are "
    "taken once: asking again for the same answer finds none.",
)

OPERATIONS = (SESSION_SHOWN, SESSION_USED)
