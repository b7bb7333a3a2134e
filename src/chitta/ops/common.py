"""Parameters several operations share, described once."""

from __future__ import annotations

from pathlib import Path

from chitta.errors import BadArgument
from chitta.ops.spec import Context, Param
from chitta.recall.config import MAX_LIMIT, PRESETS

REALM = Param("realm", "text", "The realm (project). Default: the workspace's (CHITTA_REALM, "
              "else the git root's name, else default).", short="-r", realm=True)  # fmt: skip
AGENT = Param("agent_id", "text", "Agent id: only this agent's memories.", flag="--agent",
              aliases=("--agent-id",))  # fmt: skip
CHANNEL = Param("channel", "text", "Channel: only this channel's memories.")
SESSION = Param("session", "text", "The asking agent session: what it stored and was shown "
                "lately primes recall (the ctx lane).")  # fmt: skip
LIMIT = Param("limit", "int", "At most this many memories.", default=10, minimum=1,
              maximum=MAX_LIMIT, short="-n")  # fmt: skip
STRATEGY = Param("strategy", "text", "hybrid (keyword + semantic + more lanes), semantic, "
                 "keyword, or field (every lane).", default="hybrid", choices=tuple(PRESETS),
                 short="-s")  # fmt: skip
TRACE = Param("trace", "flag", "Add the recall trace: every lane's candidates, fusion, gate, "
              "order (ids and scores, no text).", default=False)  # fmt: skip
TIME_CUE = Param(
    "time_cue", "object",
    "Only when the request names a time: roughly when it happened, e.g. "
    '{"after": "2026-08-01", "before": "2026-08-31", "confidence": "likely"} or '
    '{"ago": {"unit": "weeks", "value": 3}, "confidence": "sure"} (sure, likely, vague). '
    "Moves rows from that period up a few places and adds up to 3; never removes one.",
)  # fmt: skip
MEMORY_ID = Param("id", "text", "A memory id, as remember or recall returned it.",
                  required=True, positional=True)  # fmt: skip
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
