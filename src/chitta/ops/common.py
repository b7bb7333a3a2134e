"""Parameters several operations share, described once."""

from __future__ import annotations

from pathlib import Path

from chitta.errors import BadArgument
from chitta.ops.spec import Context, Param
from chitta.recall.config import MAX_LIMIT, PRESETS
from chitta.recall.timecue.cue import CONFIDENCES, LONG_AGO, UNIT_MS
from chitta.validate import (
    MAX_ID_CHARS,
    MAX_QUERY_CHARS,
    MAX_SCOPE_CHARS,
    MAX_SESSION_CHARS,
    MAX_WORD_CHARS,
)

REALM = Param("realm", "text", "Realm; default: the workspace's.", short="-r",
              realm=True, max_length=MAX_SCOPE_CHARS,
              cli_help="The realm (project). Default: the workspace's "
              "(CHITTA_REALM, else the git root's name, else default).")  # fmt: skip
# Isolation axes for deployments of several agents; left out of MCP, whose tool list goes
# with every request of a single agent (the daemon and the CLI take them).
AGENT = Param("agent_id", "text", "Only this agent's memories.", flag="--agent",
              aliases=("--agent-id",), mcp=False, max_length=MAX_SCOPE_CHARS)  # fmt: skip
CHANNEL = Param("channel", "text", "Only this channel's memories.", mcp=False,
                max_length=MAX_SCOPE_CHARS)  # fmt: skip
# MCP leaves it out: an MCP client does not tell its model a session id to pass.
SESSION = Param("session", "text", "The asking session: its recent memories prime recall.",
                mcp=False, max_length=MAX_SESSION_CHARS,
                cli_help="The asking agent session: what it stored and was shown lately "
                "primes recall (the ctx lane).")  # fmt: skip
LIMIT = Param("limit", "int", "At most this many memories.", default=10, minimum=1,
              maximum=MAX_LIMIT, short="-n")  # fmt: skip
STRATEGY = Param("strategy", "text", "Lanes: hybrid (main), one, or field (all but xr).",
                 default="hybrid", choices=tuple(PRESETS), max_length=MAX_WORD_CHARS,
                 short="-s")  # fmt: skip
TRACE = Param("trace", "flag", "Add the recall trace (no text).",
              default=False, cli_help="Add the recall trace: every lane's candidates, fusion, "
              "gate, order (ids and scores, no text).")  # fmt: skip
#: MCP only: the reply's details for an agent that wants them (mcp/reply.py).
VERBOSE = Param("verbose", "flag", "Full reply: lane ranks, scores, gate drops.",
                default=False, cli=False)  # fmt: skip
#: The time cue's fields as recall/timecue/cue.py reads them.
TIME_CUE_SHAPE = {
    "type": "object",
    "properties": {
        "after": {"type": "string"},
        "before": {"type": "string"},
        "ago": {"anyOf": [{"const": LONG_AGO},
                          {"type": "object", "properties": {
                              "unit": {"enum": list(UNIT_MS)},
                              "value": {"type": "integer", "minimum": 1}},
                           "required": ["unit", "value"]}]},
        "confidence": {"enum": list(CONFIDENCES)},
    },
    "required": ["confidence"],
}  # fmt: skip
TIME_CUE = Param(
    "time_cue", "object",
    "Only if the query names a time.",
    shape=TIME_CUE_SHAPE,
)  # fmt: skip
MEMORY_ID = Param("id", "text", "Its id, from remember or recall.",
                  required=True, positional=True, max_length=MAX_ID_CHARS)  # fmt: skip
QUERY = Param("query", "text", "What you want to know.", required=True,
              positional=True, max_length=MAX_QUERY_CHARS)  # fmt: skip
DATE_HELP = "ISO 8601, e.g. 2026-11-29 or 2026-11-29T13:45+01:00 (UTC when no zone is given)"


def file_path(ctx: Context, raw: object, name: str) -> Path:
    """A file parameter as a path: absolute inside the daemon, whose working folder is not
    the caller's (the CLI makes its paths absolute before it sends them)."""
    if not isinstance(raw, str) or not raw:
        raise BadArgument(f"{name} must be a file path")
    path = Path(raw).expanduser()
    if ctx.in_daemon and not path.is_absolute():
        raise BadArgument(f"{name} must be an absolute path, got {raw!r}")
    return path
