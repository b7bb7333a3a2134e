"""``chitta hook session-start`` (SessionStart): the realm's standing corrections and
preferences, bounded, as context for the new session.

There is no daemon method that lists a realm's memories by kind, so this is a recall: a
hybrid query that names corrections and preferences, keeping the rows of those kinds (their
kind prior ranks them up), plus the corrections the keyed lookup returns for the query.
"""

from __future__ import annotations

from chitta.hooks.calls import Call, run_calls
from chitta.hooks.render import TAG, clip, memory_line
from chitta.hooks.run import HookRun

#: At most this many standing memories are shown.
MAX_STANDING = 20
STANDING_KINDS = ("correction", "preference")
#: Words that corrections and preferences tend to use; the realm's name is added.
STANDING_QUERY = "correction preference always never prefer instead avoid must should don't use"


def session_start_hook(run: HookRun) -> str:
    """The standing corrections and preferences of the realm, one per line, and a summary."""
    query = f"{STANDING_QUERY} {run.realm}"
    call = Call("standing", "recall", {"query": query, "realm": run.realm,
                                       "strategy": "hybrid", "limit": 100})  # fmt: skip
    (outcome,) = run_calls(run.socket, [call], run.deadline)
    if outcome.result is None:
        reason = "timeout" if outcome.failure == "timeout" else clip(outcome.message, 200)
        return f"{TAG} session-start: standing memories of realm {run.realm} not read ({reason})"
    rows = [("corr", c) for c in outcome.result.get("corrections", [])]
    rows += [("hyb", h) for h in outcome.result.get("hits", []) if h.get("kind") in STANDING_KINDS]
    lines: list[str] = []
    seen: set[str] = set()
    for lane, row in rows:
        if row.get("id") not in seen and len(lines) < MAX_STANDING:
            seen.add(row.get("id"))
            lines.append(memory_line(lane, row, run.hook.clip_chars))
    lines.append(
        f"{TAG} realm {run.realm}: {len(lines)} standing corrections and preferences "
        f"(at most {MAX_STANDING}); {run.elapsed_ms():.0f} ms of {run.hook.budget_ms} ms"
    )
    return "\n".join(lines)
