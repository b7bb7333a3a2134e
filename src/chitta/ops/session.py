"""Operations on agent sessions: what the hooks put into a session's context."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta.ops.spec import Context, Operation, Param, Params
from chitta.recall.shown import MAX_IDS
from chitta.validate import MAX_ID_CHARS, MAX_SESSION_CHARS

if TYPE_CHECKING:
    from chitta.api import Chitta


def _session_shown(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    shown = chitta.session_shown(p["session"], add=p.get("add") or (),
                                 forget=p.get("forget", False))  # fmt: skip
    return {"session": p["session"], "shown": list(shown)}


SESSION_SHOWN = Operation(
    "session_shown",
    "The memory ids the hooks put into SESSION's context; --add records more, --forget "
    "starts the set afresh (first).",
    (
        Param(
            "session",
            "text",
            "The agent session (Claude Code's session_id).",
            required=True,
            positional=True,
            max_length=MAX_SESSION_CHARS,
        ),
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

OPERATIONS = (SESSION_SHOWN,)
